"""PowerPoint, 16:9: a title slide, the takeaways, one native (editable) table per table slide, one picture per chart
slide.

Two layouts. The appendix (a report without ``pairs``): every table, then every chart. A talk (``pairs`` set, as
``rnnlab.present.deck.talk`` makes it): per table its slide, with its first chart beside it when the table fits in
half the width on one slide at 12 pt or more, then its other charts. A report with ``takeaways`` gets one slide of
them after the title (bullets at the largest of 20..14 pt that fits; continued when even 14 pt does not).

- Tables hold exactly the formatted strings of ``TableView.rows`` under ``columns``; numbers are right-aligned.
  The font is the largest of 14..9 pt (normal, then narrow cell margins) at which every column gets its longest
  number or word: numbers never wrap, headers and text wrap at spaces, a very long cell wraps inside a column
  capped at 45% of the width; only a table too wide even then is squeezed. Rows that do not fit the slide's height continue on
  further slides titled "<title> (cont.)", with the header repeated and the rows spread evenly; the font may drop
  to 12 pt when that saves a continuation slide. Sizes are estimated from Arial's advance widths (Arial is set on
  every run; LibreOffice renders it with the metric-equal Liberation Sans), with some air, since PowerPoint and
  LibreOffice grow a row to fit its text rather than clip it.
- Charts are PNGs from vl_convert (``scale=2``), fitted to the slide without being enlarged past 2x their CSS size;
  a single view that sets no size (or ``"container"``) is drawn at a slide-shaped 680 x 300 px.
- Every slide has a footer with the provenance (machine, device, versions, commit, measured/exported times) and a
  page number; the speaker notes hold the full ``key: value`` provenance, the file's core properties a summary.
"""

from __future__ import annotations

import io
import math
import re
import struct
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Sequence

from rnnlab.core.format import clip
from rnnlab.core.views import ChartView, Report, TableView, without_bounds
from rnnlab.exporters.base import (Artifact, Exporter, chart_png, label, merged, numeric_columns,
                                   provenance_lines, provenance_summary, slug)

# Geometry in inches (16:9 slide).
SLIDE_W, SLIDE_H = 13.333, 7.5
SLIDE_MARGIN = 0.5
BODY_W = SLIDE_W - 2 * SLIDE_MARGIN
TITLE_TOP, TITLE_H, TITLE_PT = 0.3, 0.7, 28
CAPTION_PT = 14
FOOTER_TOP, FOOTER_H, FOOTER_PT = SLIDE_H - 0.45, 0.35, 9
BODY_BOTTOM = FOOTER_TOP - 0.1

# Tables.
FONTS = (14, 13, 12, 11, 10, 9)  # largest first
ROW_FONT_MIN = 12  # shrink for height only down to this; below it only to fit the width
PAD_X, PAD_Y = 0.2, 0.1  # python-pptx's default cell margins: 0.1" left/right, 0.05" top/bottom (halved if cramped)
LINE = 1.2  # line height / font size
HEADROOM = 1.08  # renderers draw rows a little taller than the estimate
MAX_COL = 0.45 * BODY_W
MAX_UPSCALE = 2.0  # charts: the PNG has 2x pixels, so up to 2x its CSS size stays sharp
CHART_SIZE = (680, 300)  # CSS px for a single view that sets no size: slide-shaped, and its fonts stay readable
BESIDE, GUTTER = 0.5, 0.3  # a talk's table takes at most this share of the width when its chart sits beside it
TAKEAWAY_FONTS = (20, 18, 16, 14)

_DARK, _GREY, _LIGHT = (0x1F, 0x2A, 0x44), (0x59, 0x59, 0x59), (0x8C, 0x8C, 0x8C)


# ---------------------------------------------------------------------------------------------------- text metrics

FONT = "Arial"  # set on every run: its metrics are known here, and LibreOffice maps it to metric-equal Liberation Sans
_EM = {**dict.fromkeys(" .,:;'!|/ijlI", 0.278), **dict.fromkeys("()-[]rtf", 0.333), **dict.fromkeys("mM%", 0.86),
       **dict.fromkeys("wW—", 0.96), "×": 0.584, "–": 0.556, "µ": 0.576, "Δ": 0.668, "…": 1.0}
SAFETY = 1.06  # widths are estimates: better a little air than a wrapped number
MONO = "Courier New"  # code (``TableView.code``): LibreOffice maps it to metric-equal Liberation Mono, 0.6 em a character


def text_width(text: str, pt: float, bold: bool = False, mono: bool = False) -> float:
    """Estimated width in inches of one line of ``text`` at ``pt`` points in ``FONT`` (Arial's advance widths), or
    in :data:`MONO` (``mono``)."""
    if mono:
        return 0.6 * len(text) * pt / 72 * SAFETY
    em = sum(_EM.get(c) or (0.72 if c.isupper() else 0.556) for c in text)
    return em * pt / 72 * SAFETY * (1.08 if bold else 1.0)


def line_count(text: str, width: float, pt: float, bold: bool = False, mono: bool = False) -> int:
    """Lines ``text`` needs in a box ``width`` inches wide, wrapping at spaces (a long word takes its own lines)."""
    width = max(width, 0.0) + 1e-6  # a column sized to its widest cell must not wrap it by a rounding error
    total = 0
    for para in str(text).split("\n"):
        lines, current = 1, 0.0
        for word in para.split(" "):
            w = text_width(word, pt, bold, mono)
            space = text_width(" ", pt, bold, mono) if current else 0.0
            if current and current + space + w > width:
                lines, current = lines + 1, 0.0
                space = 0.0
            if w > width:  # the word alone overflows: it breaks across lines
                extra = math.ceil(w / width) - 1
                lines, current = lines + extra, w - extra * width
            else:
                current += space + w
        total += lines
    return total


def _row_height(lines: int, pt: float) -> float:
    return (lines * pt * LINE / 72 + PAD_Y) * HEADROOM


# ---------------------------------------------------------------------------------------------------- table plan

@dataclass(frozen=True)
class TablePlan:
    font: int  # pt, for header and cells
    pad: float  # cell margin left + right, inches
    widths: tuple[float, ...]  # column widths, inches
    header_h: float
    row_h: tuple[float, ...]  # per data row, inches
    pages: tuple[tuple[int, int], ...]  # [start, stop) row ranges, one per slide
    fits: bool = True  # every column got its unbreakable width (False: squeezed, numbers may wrap)

    @property
    def width(self) -> float:
        return sum(self.widths)


def _words(text: str) -> list[str]:
    return text.split() or [""]


_WORDS = re.compile(r"[A-Za-z]{3,}")  # a word of prose, not a unit or a flag


def plan_table(table: TableView, body_h: float, body_w: float = BODY_W) -> TablePlan:
    """Choose font, cell margins, column widths and the rows of each slide to fit ``body_w`` x ``body_h`` inches.

    A number never wraps; headers and text cells wrap at spaces only. The largest font (then the normal margins
    before narrow ones) at which every column gets its unbreakable width wins; room to spare goes to the columns
    that would otherwise wrap. Only a table too wide even at 9 pt with narrow margins is squeezed (and wraps).
    """
    cols = range(len(table.columns))
    numeric = numeric_columns(table)
    mono = [c in table.code for c in table.columns]
    # Widths at 1 pt; everything scales linearly with the font size. Code: its longest line.
    cell = [max([max(text_width(x, 1, mono=True) for x in r[j].split("\n")) if mono[j] else text_width(r[j], 1)
                 for r in table.rows] or [0.0]) for j in cols]
    cell_word = [max([text_width(w, 1, mono=mono[j]) for r in table.rows for w in _words(r[j])] or [0.0])
                 for j in cols]
    # a number never wraps ("4.92 (! 14%)" neither); a cell of words in a column of numbers ("pass (6.0e-07) (at
    # lstm, ...)") may
    cell_num = [max([max(text_width(w, 1) for w in _words(r[j])) if _WORDS.search(r[j]) else text_width(r[j], 1)
                     for r in table.rows] or [0.0]) for j in cols]
    head = [text_width(table.columns[j], 1, True) for j in cols]
    head_word = [max(text_width(w, 1, True) for w in _words(table.columns[j])) for j in cols]
    least = [max(head_word[j], cell_num[j] if numeric[j] else cell_word[j]) for j in cols]
    most = [max(head[j], cell[j]) for j in cols]

    def widths_at(pt: int, pad: float) -> tuple[list[float], bool]:
        need = [min(least[j] * pt + pad, MAX_COL) for j in cols]
        natural = [min(max(most[j] * pt + pad, need[j]), MAX_COL) for j in cols]
        if sum(need) > body_w:  # squeeze proportionally: numbers may wrap, the table stays on the slide
            return [w * body_w / sum(need) for w in need], False
        # Room to spare unwraps text cells first (every row gets shorter), then headers (one row does).
        for goal in ([max(cell[j] * pt + pad, need[j]) for j in cols], natural):
            slack = body_w - sum(need)
            want = [max(0.0, min(g, MAX_COL) - m) for g, m in zip(goal, need)]
            if sum(want) > 0 and slack > 0:
                share = min(1.0, slack / sum(want))
                need = [m + share * d for m, d in zip(need, want)]
        slack = body_w - sum(need)
        if slack > 0:  # then let the table breathe a little, not stretch across the slide
            grow = min(slack, 0.25 * sum(need))
            need = [w + grow * w / sum(need) for w in need]
        return need, True

    options = [(pt, pad) for pt in FONTS for pad in (PAD_X, PAD_X / 2)]
    fitting = [o for o in options if widths_at(*o)[1]]
    fits = bool(fitting)
    fitting = fitting or [options[-1]]
    width_font = fitting[0][0]
    best, tried = None, set()
    for pt, pad in fitting:
        if pt < min(ROW_FONT_MIN, width_font) or pt in tried:  # per font: normal margins if they fit
            continue
        tried.add(pt)
        widths, _ = widths_at(pt, pad)
        header_h = _row_height(max([line_count(table.columns[j], widths[j] - pad, pt, True) for j in cols] or [1]),
                               pt)
        row_h = [_row_height(max([line_count(r[j], widths[j] - pad, pt, mono=mono[j]) for j in cols] or [1]), pt)
                 for r in table.rows]
        pages = paginate(row_h, max(body_h - header_h, max(row_h or [0.0])))
        plan = TablePlan(pt, pad, tuple(widths), header_h, tuple(row_h), tuple(pages), fits)
        if best is None or len(plan.pages) < len(best.pages):
            best = plan
    return best


def column_groups(table: TableView, body_w: float = BODY_W) -> list[list[int]]:
    """Column indices in consecutive groups whose unbreakable widths (longest number, longest word, at
    :data:`ROW_FONT_MIN` pt with narrow margins) fit ``body_w``; each group after the first starts with column 0
    again. One group when the table fits as it is."""
    if plan_table(table, SLIDE_H).fits or len(table.columns) < 3:
        return [list(range(len(table.columns)))]
    numeric = numeric_columns(table)
    mono = [c in table.code for c in table.columns]

    def least(j: int) -> float:
        words = [text_width(w, ROW_FONT_MIN, True) for w in _words(table.columns[j])]
        for r in table.rows:
            words += ([text_width(r[j], ROW_FONT_MIN)] if numeric[j] and not _WORDS.search(r[j]) else
                      [text_width(w, ROW_FONT_MIN, mono=mono[j]) for w in _words(r[j])])
        return min(max(words) + PAD_X / 2, MAX_COL)

    first = least(0)
    groups, current, used = [], [0], first
    for j in range(1, len(table.columns)):
        w = least(j)
        if len(current) > 1 and used + w > body_w:
            groups.append(current)
            current, used = [0], first
        current.append(j)
        used += w
    groups.append(current)
    return groups


def _columns(table: TableView, idx: Sequence[int], suffix: str) -> TableView:
    take = lambda row: tuple(row[j] for j in idx)  # noqa: E731
    return replace(table, title=table.title + suffix, columns=take(table.columns), rows=tuple(map(take, table.rows)),
                   raw=tuple(map(take, table.raw)) if table.raw else ())


def paginate(heights: list[float], capacity: float) -> list[tuple[int, int]]:
    """Split rows into as few pages as fit ``capacity``, then even out the pages (no lone rows on the last)."""
    def pack(limit: float) -> list[tuple[int, int]]:
        pages, start, used = [], 0, 0.0
        for i, h in enumerate(heights):
            if i > start and used + h > limit + 1e-9:
                pages.append((start, i))
                start, used = i, 0.0
            used += h
        pages.append((start, len(heights)))
        return pages

    if not heights:
        return [(0, 0)]
    fewest = pack(capacity)
    n = len(fewest)
    # Cut where the running height is closest to an even share, as long as every page still fits.
    cumulative = [0.0]
    for h in heights:
        cumulative.append(cumulative[-1] + h)
    cuts = [0]
    for k in range(1, n):
        goal = cumulative[-1] * k / n
        cut = min(range(cuts[-1] + 1, len(heights)), key=lambda i: abs(cumulative[i] - goal), default=len(heights))
        cuts.append(cut)
    cuts.append(len(heights))
    pages = [(a, b) for a, b in zip(cuts, cuts[1:])]
    if all(b > a and cumulative[b] - cumulative[a] <= capacity + 1e-9 for a, b in pages):
        return pages
    return fewest


# ---------------------------------------------------------------------------------------------------- the deck

def _slide_sized(chart: ChartView, size: tuple[int, int] = CHART_SIZE, *, box: bool = False) -> ChartView:
    """A single or layered view without its own size gets a slide-shaped one (Altair's default is 300 x 300,
    or a band per category, which leaves a narrow strip in the middle of a 16:9 slide). The app stretches charts
    to its container, so this is closer to what the screen shows. Explicit sizes, facets and concats are kept,
    except a single view's width drawn into a ``box`` beside a table (a page's 520 px chart shrunk into half a
    slide would set its labels at 7 pt)."""
    spec = dict(chart.spec)
    if not any(k in spec for k in ("mark", "layer")) or any(k in spec for k in ("facet", "repeat")):
        return chart
    for key, px in zip(("width", "height"), size):
        if spec.get(key, "container") == "container" or (box and key == "width"):  # "container": no browser here
            spec[key] = px
    return replace(chart, spec=spec)


# A slide's chart fonts (CSS px): Vega-Lite's defaults (10-11 px) read as 7 pt once a chart is fitted to its box.
SLIDE_FONTS = {"axis": {"labelFontSize": 13, "titleFontSize": 14}, "legend": {"labelFontSize": 13, "titleFontSize": 13},
               "header": {"labelFontSize": 14, "titleFontSize": 14}, "title": {"fontSize": 16}}


def _slide_fonts(chart: ChartView) -> ChartView:
    """``chart`` with :data:`SLIDE_FONTS` over its own config (a size the chart sets on one axis or mark stays)."""
    spec = dict(chart.spec)
    config = dict(spec.get("config") or {})
    for key, sizes in SLIDE_FONTS.items():
        config[key] = {**(config.get(key) or {}), **sizes}
    spec["config"] = config
    return replace(chart, spec=spec)


def _png_size(png: bytes) -> tuple[int, int]:
    return struct.unpack(">II", png[16:24])


def _clip(text: str, limit: int = 255) -> str:
    """python-pptx refuses a core property longer than 255 characters: cut (the slides keep the full text)."""
    return clip(text, limit)


class PptxExporter(Exporter):
    name = "pptx"
    order = 3
    button = "PowerPoint"
    suffix = ".pptx"
    mime = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
    description = ("PowerPoint 16:9: title slide, takeaways, native tables (continued over slides), charts, "
                   "provenance footers")

    def render(self, report: Report) -> list[Artifact]:
        from pptx import Presentation
        from pptx.util import Inches

        deck = Presentation()
        deck.slide_width, deck.slide_height = Inches(SLIDE_W), Inches(SLIDE_H)
        self._properties(deck, report)
        slides: list = []  # (slide, provenance) so footers can say "k / N"
        slides.append((self._title_slide(deck, report), dict(report.provenance)))
        slides += [(s, dict(report.provenance)) for s in self._takeaway_slides(deck, report)]
        if report.pairs:  # a talk: each table with its charts, the first beside it when there is room
            for table, idx in zip(map(without_bounds, report.tables), report.pairs):
                charts = [report.charts[i] for i in idx]
                beside = self._beside_slide(deck, table, charts[0]) if charts else None
                if beside is not None:
                    slides.append((beside, merged(report, table)))
                    charts = charts[1:]
                else:
                    slides += [(s, merged(report, table)) for s in self._table_slides(deck, table)]
                slides += [(self._chart_slide(deck, c), merged(report, c)) for c in charts]
            paired = {i for idx in report.pairs for i in idx}
            rest = [c for i, c in enumerate(report.charts) if i not in paired]
        else:  # the appendix: every table, then every chart
            for table in map(without_bounds, report.tables):
                slides += [(s, merged(report, table)) for s in self._table_slides(deck, table)]
            rest = list(report.charts)
        for chart in rest:
            slides.append((self._chart_slide(deck, chart), merged(report, chart)))
        for k, (slide, prov) in enumerate(slides, 1):
            self._footer(slide, prov, k, len(slides), summary=k > 1)  # the title slide says it in its facts
        buf = io.BytesIO()
        deck.save(buf)
        return [Artifact(slug(report.title, "report") + self.suffix, buf.getvalue())]

    # -- slides

    def _title_slide(self, deck, report: Report):
        """Title, subtitle and what/where/when, stacked by their estimated heights and centred vertically."""
        p = report.provenance
        facts = []
        where = " · ".join(v for v in (p.get("machine"), p.get("device")) if v)
        if where:
            facts.append(f"Measured on {where}")
        versions = " · ".join(f"{label(k)} {p[k]}" for k in ("tf", "keras", "python") if p.get(k))
        if versions:
            facts.append(versions)
        version = p.get("rnnlab") or p.get("rnnlab_version")
        when = [f"rnnlab {version}" + (f" ({p['commit'][:10]})" if p.get("commit") else "")] if version else []
        when += [f"{label(k)} {p[k]}" for k in ("created_at", "exported_at") if p.get(k)]
        if when:
            facts.append(" · ".join(when))
        title_pt = next((pt for pt in (40, 36, 32) if line_count(report.title, BODY_W - 0.2, pt, True) == 1), 32)
        blocks = [(report.title, title_pt, True, _DARK, 1.0, 0.25)]
        if report.subtitle:
            blocks.append((report.subtitle, 20, False, _GREY, 1.0, 0.35))
        if facts:
            blocks.append(("\n".join(facts), 16, False, _GREY, 1.3, 0.0))
        heights = [sum(line_count(line, BODY_W - 0.2, pt, bold) for line in text.split("\n")) * pt * LINE * sp / 72
                   + 0.1 for text, pt, bold, _, sp, _ in blocks]
        top = max(0.6, (FOOTER_TOP - sum(heights) - sum(b[-1] for b in blocks)) / 2)
        slide = _titled(deck, report.title, title_pt, top=top, height=heights[0], anchor="top")
        top += heights[0] + blocks[0][-1]
        for (text, pt, bold, color, sp, gap), h in zip(blocks[1:], heights[1:]):
            _text(slide, SLIDE_MARGIN, top, BODY_W, h, text, pt, bold=bold, color=color, spacing=sp if sp != 1.0 else None)
            top += h + gap
        return slide

    def _table_slides(self, deck, table: TableView) -> list:
        """The table's slides; a table too wide for one slide even at the smallest font goes on in column groups
        (each starting with the row's name), so no word or number is broken to squeeze it."""
        groups = column_groups(table)
        if len(groups) > 1:
            return [s for k, idx in enumerate(groups, 1)
                    for s in self._table_slides(deck, _columns(table, idx, f" (columns {k} of {len(groups)})"))]
        n = len(table.rows)
        longest_caption = table.caption + (f" (rows {n}–{n} of {n})" if n > 1 else "")
        body_top = self._body_top(longest_caption)
        plan = plan_table(table, BODY_BOTTOM - body_top)
        numeric = numeric_columns(table)
        slides = []
        for page, (start, stop) in enumerate(plan.pages):
            split = len(plan.pages) > 1
            title = table.title + (" (cont.)" if page else "")
            caption = table.caption + (f" (rows {start + 1}–{stop} of {n})" if split else "")
            slide, _ = self._heading(deck, title, caption)
            self._table(slide, table, plan, start, stop, numeric, body_top)
            slides.append(slide)
        return slides

    def _chart_slide(self, deck, chart: ChartView):
        slide, body_top = self._heading(deck, chart.title, chart.caption)
        _picture(slide, chart, SLIDE_MARGIN, body_top, BODY_W, BODY_BOTTOM - body_top)
        return slide

    def _takeaway_slides(self, deck, report: Report) -> list:
        """The takeaways as bullets at the largest font that fits one slide (continued over slides at 14 pt)."""
        if not report.takeaways:
            return []
        caption = ((report.takeaway_note + ": what" if report.takeaway_note else "What") +
                   " these numbers say; where a ratio has an interval, it is in brackets")
        top = self._body_top(caption)
        width, room = BODY_W - 0.4 - BULLET_INDENT, BODY_BOTTOM - top

        def height(items, pt):
            return sum(line_count(t, width, pt) * pt * LINE / 72 + pt * 0.6 / 72 for t in items) + 0.1

        items = [_keep_numbers_whole(t) for t in report.takeaways]
        pt = next((pt for pt in TAKEAWAY_FONTS if height(items, pt) <= room), None)
        chunks = [items]
        if pt is None:  # too many words for one slide even at the smallest size: continue
            pt, chunks, current = TAKEAWAY_FONTS[-1], [], []
            for t in items:
                if current and height(current + [t], pt) > room:
                    chunks.append(current)
                    current = []
                current.append(t)
            chunks.append(current)
        slides = []
        for k, chunk in enumerate(chunks):
            slide, _ = self._heading(deck, "Takeaways" + (" (cont.)" if k else ""), caption)
            box = _text(slide, SLIDE_MARGIN + 0.2, top, width + 0.2, room, "\n".join(chunk), pt)
            for para in box.text_frame.paragraphs:
                para.space_after = _pt(pt * 0.6)
                _bullet(para, BULLET_INDENT)
            slides.append(slide)
        return slides

    def _beside_slide(self, deck, table: TableView, chart: ChartView):
        """One slide: the table on the left, its chart on the right; None when the table needs more than half the
        width, more than one slide, or a small font (it then gets its own slides and the chart follows)."""
        n = len(table.rows)
        body_top = self._body_top(table.caption)
        body_h = BODY_BOTTOM - body_top
        plan = plan_table(table, body_h, BESIDE * BODY_W)
        if not plan.fits or len(plan.pages) > 1 or plan.font < ROW_FONT_MIN or not n:
            return None
        slide, _ = self._heading(deck, table.title, table.caption)
        numeric = numeric_columns(table)
        self._table(slide, table, plan, 0, n, numeric, body_top, left=SLIDE_MARGIN)
        x = SLIDE_MARGIN + plan.width + GUTTER
        w = SLIDE_W - SLIDE_MARGIN - x
        label_h = line_count(chart.title, w - 0.2, CAPTION_PT, True) * CAPTION_PT * LINE / 72 + 0.1
        _text(slide, x, body_top, w, label_h, chart.title, CAPTION_PT, bold=True, color=_GREY)
        _picture(slide, chart, x, body_top + label_h, w, body_h - label_h,
                 size=(max(360, int(w / BODY_W * CHART_SIZE[0])), CHART_SIZE[1]), box=True)
        if chart.caption and chart.caption != table.caption:
            slide.notes_slide.notes_text_frame.text = f"{chart.title}: {chart.caption}"
        return slide

    # -- pieces

    @staticmethod
    def _caption_h(caption: str) -> float:
        return line_count(caption, BODY_W - 0.2, CAPTION_PT) * CAPTION_PT * LINE / 72 + 0.12 if caption else 0.0

    def _body_top(self, caption: str) -> float:
        return TITLE_TOP + TITLE_H + self._caption_h(caption) + 0.2

    def _heading(self, deck, title: str, caption: str):
        """A new slide with its title (in the title placeholder) and caption; returns it and where the body starts
        (inches from the top)."""
        pt = TITLE_PT if line_count(title, BODY_W - 0.2, TITLE_PT, True) == 1 else 22
        slide = _titled(deck, title, pt)
        if caption:
            _text(slide, SLIDE_MARGIN, TITLE_TOP + TITLE_H, BODY_W, self._caption_h(caption), caption, CAPTION_PT,
                  color=_GREY)
        return slide, self._body_top(caption)

    @staticmethod
    def _table(slide, table: TableView, plan: TablePlan, start: int, stop: int, numeric: list[bool], top: float,
               left: float | None = None):
        from pptx.enum.text import MSO_ANCHOR, PP_ALIGN
        from pptx.util import Inches, Pt

        rows = table.rows[start:stop]
        heights = (plan.header_h,) + plan.row_h[start:stop]
        left = SLIDE_MARGIN + (BODY_W - plan.width) / 2 if left is None else left
        shape = slide.shapes.add_table(len(rows) + 1, len(table.columns), Inches(left), Inches(top),
                                       Inches(plan.width), Inches(sum(heights)))
        grid = shape.table
        grid.first_row, grid.horz_banding = True, True
        for j, w in enumerate(plan.widths):
            grid.columns[j].width = Inches(w)
        for i, h in enumerate(heights):
            grid.rows[i].height = Inches(h)
        for i, values in enumerate((table.columns,) + tuple(rows)):
            for j, value in enumerate(values):
                cell = grid.cell(i, j)
                cell.margin_left = cell.margin_right = Inches(plan.pad / 2)
                cell.text = value
                cell.vertical_anchor = MSO_ANCHOR.MIDDLE if i else MSO_ANCHOR.BOTTOM
                for para in cell.text_frame.paragraphs:
                    para.alignment = PP_ALIGN.RIGHT if numeric[j] else PP_ALIGN.LEFT
                    for run in para.runs:
                        run.font.name = MONO if i and table.columns[j] in table.code else FONT
                        run.font.size, run.font.bold = Pt(plan.font), i == 0

    @staticmethod
    def _footer(slide, prov: dict, k: int, n: int, summary: bool = True):
        if summary:
            _text(slide, SLIDE_MARGIN, FOOTER_TOP, BODY_W - 0.9, FOOTER_H, provenance_summary(prov), FOOTER_PT,
                  color=_LIGHT, anchor="bottom")
        _text(slide, SLIDE_W - SLIDE_MARGIN - 0.8, FOOTER_TOP, 0.8, FOOTER_H, f"{k} / {n}", FOOTER_PT, color=_LIGHT,
              align="right", anchor="bottom")
        slide.notes_slide.notes_text_frame.text = "\n".join(["Provenance"] + provenance_lines(prov))

    @staticmethod
    def _properties(deck, report: Report):
        props = deck.core_properties
        props.title = _clip(report.title)
        props.subject = _clip(" ".join(report.subtitle.split()))
        props.author = props.last_modified_by = "rnnlab"
        props.keywords = "rnnlab; RNN unrolling; benchmark"
        props.comments = _clip("; ".join(provenance_lines(report.provenance)))  # the full text is in the notes
        props.revision = 1
        try:
            when = datetime.strptime(report.provenance.get("exported_at", ""), "%Y-%m-%dT%H:%M:%SZ")
            props.created = props.modified = when
        except ValueError:
            pass


def _picture(slide, chart: ChartView, left: float, top: float, width: float, height: float, *,
             size: tuple[int, int] = CHART_SIZE, box: bool = False):
    """The chart as a PNG, fitted into the box (not enlarged past ``MAX_UPSCALE``), centred across it."""
    from pptx.util import Inches

    png = chart_png(_slide_fonts(_slide_sized(chart, size, box=box)), scale=2)
    px_w, px_h = _png_size(png)
    natural_w, natural_h = px_w / 2 / 96, px_h / 2 / 96  # CSS pixels at 96 per inch
    fit = min(width / natural_w, height / natural_h, MAX_UPSCALE)
    w, h = natural_w * fit, natural_h * fit
    slide.shapes.add_picture(io.BytesIO(png), Inches(left + (width - w) / 2), Inches(top), Inches(w), Inches(h))


def _pt(points: float):
    from pptx.util import Pt

    return Pt(points)


_RANGE = re.compile(r"(?<=\d)([–-])(?=\d)")
WORD_JOINER = "\u2060"  # zero width, no line break on either side


def _keep_numbers_whole(text: str) -> str:
    """A sentence whose intervals ("(1.17–1.43x)") cannot break at their dash: a renderer may break after an en
    dash, which would split a number range over two lines."""
    return _RANGE.sub(lambda m: WORD_JOINER + m.group(1) + WORD_JOINER, text)


BULLET_INDENT = 0.35  # inches: a takeaway's text hangs this far right of its bullet


def _titled(deck, title: str, pt: float, *, top: float = TITLE_TOP, height: float = TITLE_H, anchor: str = "bottom"):
    """A slide of the default template's "Title Only" layout, ``title`` in its title placeholder (what an outline
    view and an accessibility checker read as the slide's title), placed and styled like the rest of the deck."""
    from pptx.util import Inches

    slide = deck.slides.add_slide(deck.slide_layouts[5])
    shape = slide.shapes.title
    shape.left, shape.top, shape.width, shape.height = (Inches(SLIDE_MARGIN), Inches(top), Inches(BODY_W),
                                                        Inches(height))
    _fill(shape.text_frame, title, pt, bold=True, color=_DARK, anchor=anchor)
    return slide


def _bullet(para, indent: float) -> None:
    """A real bullet: the paragraph's own bullet character with a hanging indent (text wraps under text, not under
    the bullet), which python-pptx has no API for."""
    from pptx.oxml.ns import qn
    from pptx.util import Inches

    p_pr = para._p.get_or_add_pPr()
    p_pr.set("marL", str(Inches(indent)))
    p_pr.set("indent", str(-Inches(indent)))
    for tag in ("a:buNone", "a:buAutoNum", "a:buChar", "a:buFont"):
        for old in p_pr.findall(qn(tag)):
            p_pr.remove(old)
    font = p_pr.makeelement(qn("a:buFont"), {"typeface": FONT})
    char = p_pr.makeelement(qn("a:buChar"), {"char": "•"})
    p_pr.append(font)
    p_pr.append(char)


def _text(slide, left, top, width, height, text, pt, *, bold=False, color=_DARK, align="left", anchor="top",
          spacing=None):
    from pptx.util import Inches

    box = slide.shapes.add_textbox(Inches(left), Inches(top), Inches(width), Inches(height))
    _fill(box.text_frame, text, pt, bold=bold, color=color, align=align, anchor=anchor, spacing=spacing)
    return box


def _fill(frame, text, pt, *, bold=False, color=_DARK, align="left", anchor="top", spacing=None):
    from pptx.dml.color import RGBColor
    from pptx.enum.text import MSO_ANCHOR, MSO_AUTO_SIZE, PP_ALIGN
    from pptx.util import Inches, Pt

    frame.word_wrap = True
    frame.auto_size = MSO_AUTO_SIZE.NONE
    frame.margin_left = frame.margin_right = Inches(0.1)
    frame.margin_top = frame.margin_bottom = Inches(0.03)
    frame.vertical_anchor = {"top": MSO_ANCHOR.TOP, "bottom": MSO_ANCHOR.BOTTOM}[anchor]
    frame.text = text
    for para in frame.paragraphs:
        para.alignment = {"left": PP_ALIGN.LEFT, "right": PP_ALIGN.RIGHT}[align]
        if spacing:
            para.line_spacing = spacing
        for run in para.runs:
            run.font.name = FONT
            run.font.size = Pt(pt)
            run.font.bold = bold
            run.font.color.rgb = RGBColor(*color)
