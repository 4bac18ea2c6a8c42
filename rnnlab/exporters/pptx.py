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
import re
import struct
from dataclasses import replace
from datetime import datetime

from rnnlab.core.format import clip
from rnnlab.core.views import ChartView, Report, TableView, without_bounds
from rnnlab.exporters.base import (Artifact, Exporter, chart_png, label, merged, own,
                                   provenance_lines, provenance_summary, slug)
# the table layout (text metrics, fonts, widths, slides): its names are this module's too
from rnnlab.exporters.pptx_layout import (BODY_W, FONT, FONTS, HEADROOM, LINE, MAX_COL, MONO, PAD_X,  # noqa: F401
                                          PAD_Y, ROW_FONT_MIN, SAFETY, SLIDE_H, SLIDE_MARGIN, SLIDE_W, TablePlan,
                                          _columns, _row_height, _words, column_groups, fit_lines, line_count,
                                          paginate, plan_table, text_width)

# Geometry in inches (16:9 slide); the table layout's (SLIDE_W, BODY_W, FONTS, ...) is pptx_layout's.
TITLE_TOP, TITLE_H, TITLE_PT = 0.3, 0.7, 28
CAPTION_PT = 14
FOOTER_TOP, FOOTER_H, FOOTER_PT = SLIDE_H - 0.45, 0.35, 9
BODY_BOTTOM = FOOTER_TOP - 0.1

MAX_UPSCALE = 2.0  # charts: the PNG has 2x pixels, so up to 2x its CSS size stays sharp
CHART_SIZE = (680, 300)  # CSS px for a single view that sets no size: slide-shaped, and its fonts stay readable
BESIDE, GUTTER = 0.5, 0.3  # a talk's table takes at most this share of the width when its chart sits beside it
TAKEAWAY_FONTS = (20, 18, 16, 14)
APPENDIX_FONTS = (16, 14, 12)  # the appendix and the closing slide: reference, not the talk
CAPTION_LINES = 2  # a slide's caption; the rest is said on the closing slide
WHOSE = ("machine", "device", "source", "tf", "keras", "python")  # a view's own provenance the closing slide says

_DARK, _GREY, _LIGHT = (0x1F, 0x2A, 0x44), (0x59, 0x59, 0x59), (0x8C, 0x8C, 0x8C)



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

        deck = _Deck(Presentation())
        deck.slide_width, deck.slide_height = Inches(SLIDE_W), Inches(SLIDE_H)
        self._properties(deck, report)
        slides: list = []  # (slide, the view it shows or None) so footers can say "k / N" and whose it is
        slides.append((self._title_slide(deck, report), None))
        slides += [(s, None) for s in self._takeaway_slides(deck, report)]
        if report.pairs:  # a talk: each table with its charts, the first beside it when there is room
            for table, idx in zip(map(without_bounds, report.tables), report.pairs):
                charts = [report.charts[i] for i in idx]
                beside = self._beside_slide(deck, table, charts[0]) if charts else None
                if beside is not None:
                    slides.append((beside, table))
                    charts = charts[1:]
                else:
                    slides += [(s, table) for s in self._table_slides(deck, table)]
                slides += [(self._chart_slide(deck, c), c) for c in charts]
            paired = {i for idx in report.pairs for i in idx}
            rest = [c for i, c in enumerate(report.charts) if i not in paired]
        else:  # the appendix: every table, then every chart
            for table in map(without_bounds, report.tables):
                slides += [(s, table) for s in self._table_slides(deck, table)]
            rest = list(report.charts)
        for chart in rest:
            slides.append((self._chart_slide(deck, chart), chart))
        for title, bullets in report.appendix:
            slides += [(s, None) for s in self._bullet_slides(deck, title, "", bullets, APPENDIX_FONTS)]
        slides += [(s, None) for s in self._closing_slides(deck, report, [v for _, v in slides if v is not None])]
        for k, (slide, view) in enumerate(slides, 1):
            self._footer(slide, report, view, k, len(slides))
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
        body_top = max(self._body_top(table.caption, f" (rows {n}–{n} of {n})" if n > 1 else ""),
                       self._body_top(table.caption))
        plan = plan_table(table, BODY_BOTTOM - body_top)
        numeric = table.numeric
        slides = []
        for page, (start, stop) in enumerate(plan.pages):
            split = len(plan.pages) > 1
            title = table.title + (" (cont.)" if page else "")
            rows = f" (rows {start + 1}–{stop} of {n})" if split else ""
            slide, _ = self._heading(deck, title, table.caption, rows)
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
        items = [_keep_numbers_whole(t.text) for t in report.takeaways]
        return self._bullet_slides(deck, "Takeaways", caption, items, TAKEAWAY_FONTS)

    def _closing_slides(self, deck, report: Report, views: list) -> list:
        """Said once, at the end: the deck's provenance (machine, device, versions, times), each view's own where
        it differs (a baseline from another machine), and what the slides' captions left out (their clauses past
        two lines), with the slides they belong to."""
        items = [f"{label(k)}: {v}" for k, v in report.provenance.items() if v != ""]
        whose: dict[str, list[str]] = {}  # a view's own provenance -> the views that have it
        for v in views:
            mine = {k: x for k, x in own(report, v).items() if k in WHOSE}
            if mine:
                whose.setdefault(provenance_summary(mine), []).append(v.title)
        items += [f"{'; '.join(dict.fromkeys(titles))}: {prov}" for prov, titles in whose.items()]
        items += [f"{'Slide' if len(ks) == 1 else 'Slides'} {', '.join(map(str, ks))}: {rest}"
                  for rest, ks in deck.cut.items()]
        return self._bullet_slides(deck, "Provenance and notes", "Where these figures come from, and what the "
                                   "captions say in full", items, APPENDIX_FONTS)

    def _bullet_slides(self, deck, title: str, caption: str, items, fonts) -> list:
        """``items`` as bullets under ``title`` at the largest of ``fonts`` that fits one slide (continued over
        slides, "(cont.)", at the smallest)."""
        if not items:
            return []
        top = self._body_top(caption)
        width, room = BODY_W - 0.4 - BULLET_INDENT, BODY_BOTTOM - top

        def height(chunk, pt):
            return sum(line_count(t, width, pt) * pt * LINE / 72 + pt * 0.6 / 72 for t in chunk) + 0.1

        items = list(items)
        pt = next((pt for pt in fonts if height(items, pt) <= room), fonts[-1])
        pages = paginate([height([t], pt) - 0.1 for t in items], room - 0.1)  # continued, evened out
        chunks = [items[a:b] for a, b in pages]
        slides = []
        for k, chunk in enumerate(chunks):
            slide, _ = self._heading(deck, title + (" (cont.)" if k else ""), caption)
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
        numeric = table.numeric
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
    def _caption_h(caption: str, suffix: str = "") -> float:
        shown = fit_lines(caption, BODY_W - 0.2, CAPTION_PT, CAPTION_LINES, suffix)[0] + suffix
        return line_count(shown, BODY_W - 0.2, CAPTION_PT) * CAPTION_PT * LINE / 72 + 0.12 if caption else 0.0

    def _body_top(self, caption: str, suffix: str = "") -> float:
        return TITLE_TOP + TITLE_H + self._caption_h(caption, suffix) + 0.2

    def _heading(self, deck, title: str, caption: str, suffix: str = ""):
        """A new slide with its title (in the title placeholder) and caption; returns it and where the body starts
        (inches from the top)."""
        pt = TITLE_PT if line_count(title, BODY_W - 0.2, TITLE_PT, True) == 1 else 22
        slide = _titled(deck, title, pt)
        shown, rest = fit_lines(caption, BODY_W - 0.2, CAPTION_PT, CAPTION_LINES, suffix)
        if rest:  # said on the closing slide, once for every slide that leaves it out
            deck.cut.setdefault(rest, []).append(len(deck.slides))
        if caption:
            _text(slide, SLIDE_MARGIN, TITLE_TOP + TITLE_H, BODY_W, self._caption_h(caption, suffix),
                  shown + suffix, CAPTION_PT, color=_GREY)
        return slide, self._body_top(caption, suffix)

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
                        run.font.name = MONO if i and table.cols[j].kind == "code" else FONT
                        run.font.size, run.font.bold = Pt(plan.font), i == 0

    @staticmethod
    def _footer(slide, report: Report, view, k: int, n: int):
        """The page number; for a view measured on other machines than the deck's, one line that says whose. The
        full provenance is on the closing slide and in every slide's notes."""
        mine = own(report, view) if view is not None else {}
        mine = {k: v for k, v in mine.items() if k in ("machine", "device")}
        if mine.get("machine"):
            line = provenance_summary(mine)
            while len(line) > 20 and line_count(line, BODY_W - 0.9, FOOTER_PT) > 1:
                line = clip(line, len(line) - 10)
            _text(slide, SLIDE_MARGIN, FOOTER_TOP, BODY_W - 0.9, FOOTER_H, line, FOOTER_PT, color=_LIGHT,
                  anchor="bottom")
        _text(slide, SLIDE_W - SLIDE_MARGIN - 0.8, FOOTER_TOP, 0.8, FOOTER_H, f"{k} / {n}", FOOTER_PT, color=_LIGHT,
              align="right", anchor="bottom")
        prov = merged(report, view) if view is not None else dict(report.provenance)
        notes = slide.notes_slide.notes_text_frame
        notes.text = "\n".join([notes.text] * bool(notes.text) + ["Provenance"] + provenance_lines(prov))

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


class _Deck:
    """A presentation being built, with what its captions left out (``cut``: the rest -> the slides' numbers)."""

    def __init__(self, prs):
        self.prs, self.cut = prs, {}

    def __getattr__(self, name):
        return getattr(self.prs, name)

    def __setattr__(self, name, value):
        if name in ("prs", "cut"):
            object.__setattr__(self, name, value)
        else:
            setattr(self.prs, name, value)


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
