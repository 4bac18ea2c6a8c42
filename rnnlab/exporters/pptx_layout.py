"""The PowerPoint exporter's text metrics and table layout: how wide a text is in Arial (:func:`text_width`), how many
lines it takes (:func:`line_count`), and a table's font, column widths and slides (:func:`plan_table`,
:func:`column_groups`, :func:`paginate`). Estimates only, no python-pptx: ``rnnlab.exporters.pptx`` draws with them.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence

from rnnlab.core.views import TableView, select

# Geometry in inches (16:9 slide).
SLIDE_W, SLIDE_H = 13.333, 7.5
SLIDE_MARGIN = 0.5
BODY_W = SLIDE_W - 2 * SLIDE_MARGIN

# Tables.
FONTS = (14, 13, 12, 11, 10, 9)  # largest first
ROW_FONT_MIN = 12  # shrink for height only down to this; below it only to fit the width
PAD_X, PAD_Y = 0.2, 0.1  # python-pptx's default cell margins: 0.1" left/right, 0.05" top/bottom (halved if cramped)
LINE = 1.2  # line height / font size
HEADROOM = 1.08  # renderers draw rows a little taller than the estimate
MAX_COL = 0.45 * BODY_W

# ---------------------------------------------------------------------------------------------------- text metrics

FONT = "Arial"  # set on every run: its metrics are known here, and LibreOffice maps it to metric-equal Liberation Sans
_EM = {**dict.fromkeys(" .,:;'!|/ijlI", 0.278), **dict.fromkeys("()-[]rtf", 0.333), **dict.fromkeys("mM%", 0.86),
       **dict.fromkeys("wW—", 0.96), "×": 0.584, "–": 0.556, "µ": 0.576, "Δ": 0.668, "…": 1.0}
SAFETY = 1.06  # widths are estimates: better a little air than a wrapped number
MONO = "Courier New"  # code (Column kind "code"): LibreOffice maps it to metric-equal Liberation Mono, 0.6 em a character


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


@dataclass(frozen=True)
class _Measures:
    """A table's columns measured at 1 pt (everything scales linearly with the font size)."""
    mono: tuple[bool, ...]  # code columns (Courier New)
    cell: tuple[float, ...]  # the widest cell, unwrapped (code: its longest line)
    least: tuple[float, ...]  # the unbreakable width: the longest word, or a whole number
    most: tuple[float, ...]  # the width that wraps nothing, header included


def _measures(table: TableView) -> _Measures:
    cols = range(len(table.columns))
    numeric = table.numeric
    mono = [c.kind == "code" for c in table.cols]
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
    return _Measures(tuple(mono), tuple(cell), tuple(least), tuple(most))


def _widths_at(m: _Measures, pt: int, pad: float, body_w: float) -> tuple[list[float], bool]:
    """Column widths at ``pt`` with cell margins ``pad``, and whether every column got its unbreakable width."""
    cols = range(len(m.least))
    need = [min(m.least[j] * pt + pad, MAX_COL) for j in cols]
    natural = [min(max(m.most[j] * pt + pad, need[j]), MAX_COL) for j in cols]
    if sum(need) > body_w:  # squeeze proportionally: numbers may wrap, the table stays on the slide
        return [w * body_w / sum(need) for w in need], False
    # Room to spare unwraps text cells first (every row gets shorter), then headers (one row does).
    for goal in ([max(m.cell[j] * pt + pad, need[j]) for j in cols], natural):
        slack = body_w - sum(need)
        want = [max(0.0, min(g, MAX_COL) - n) for g, n in zip(goal, need)]
        if sum(want) > 0 and slack > 0:
            share = min(1.0, slack / sum(want))
            need = [n + share * d for n, d in zip(need, want)]
    slack = body_w - sum(need)
    if slack > 0:  # then let the table breathe a little, not stretch across the slide
        grow = min(slack, 0.25 * sum(need))
        need = [w + grow * w / sum(need) for w in need]
    return need, True


def _plan_at(table: TableView, m: _Measures, pt: int, pad: float, body_h: float, body_w: float,
             fits: bool) -> TablePlan:
    """The table at ``pt`` with margins ``pad``: its widths, row heights and the rows of each slide."""
    cols = range(len(table.columns))
    widths, _ = _widths_at(m, pt, pad, body_w)
    header_h = _row_height(max([line_count(table.columns[j], widths[j] - pad, pt, True) for j in cols] or [1]), pt)
    row_h = [_row_height(max([line_count(r[j], widths[j] - pad, pt, mono=m.mono[j]) for j in cols] or [1]), pt)
             for r in table.rows]
    pages = paginate(row_h, max(body_h - header_h, max(row_h or [0.0])))
    return TablePlan(pt, pad, tuple(widths), header_h, tuple(row_h), tuple(pages), fits)


def plan_table(table: TableView, body_h: float, body_w: float = BODY_W) -> TablePlan:
    """Choose font, cell margins, column widths and the rows of each slide to fit ``body_w`` x ``body_h`` inches.

    A number never wraps; headers and text cells wrap at spaces only. The largest font (then the normal margins
    before narrow ones) at which every column gets its unbreakable width wins; room to spare goes to the columns
    that would otherwise wrap. Only a table too wide even at 9 pt with narrow margins is squeezed (and wraps).
    """
    m = _measures(table)
    options = [(pt, pad) for pt in FONTS for pad in (PAD_X, PAD_X / 2)]
    fitting = [o for o in options if _widths_at(m, *o, body_w)[1]]
    fits = bool(fitting)
    fitting = fitting or [options[-1]]
    width_font = fitting[0][0]
    best, tried = None, set()
    for pt, pad in fitting:
        if pt < min(ROW_FONT_MIN, width_font) or pt in tried:  # per font: normal margins if they fit
            continue
        tried.add(pt)
        plan = _plan_at(table, m, pt, pad, body_h, body_w, fits)
        if best is None or len(plan.pages) < len(best.pages):
            best = plan
    return best


def column_groups(table: TableView, body_w: float = BODY_W) -> list[list[int]]:
    """Column indices in consecutive groups whose unbreakable widths (longest number, longest word, at
    :data:`ROW_FONT_MIN` pt with narrow margins) fit ``body_w``; each group after the first starts with column 0
    again. One group when the table fits as it is."""
    if plan_table(table, SLIDE_H).fits or len(table.columns) < 3:
        return [list(range(len(table.columns)))]
    numeric = table.numeric
    mono = [c.kind == "code" for c in table.cols]

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
    return select(table, idx, title=table.title + suffix)


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


# ---------------------------------------------------------------------------------------------------- captions

_CLAUSE = re.compile(r"(?<=[;.])\s+(?=\S)")  # a caption's clauses end at "; " or ". "


def fit_lines(text: str, width: float, pt: float, lines: int = 2, suffix: str = "") -> tuple[str, str]:
    """``text`` as a box ``width`` inches wide shows it in at most ``lines`` lines at ``pt`` (``suffix`` after it):
    its first clauses (cut after "; " or ". ") that fit, and the rest, which the deck says elsewhere. A first
    clause too long alone is cut at a word with an ellipsis, and the whole text is the rest."""
    if line_count(text + suffix, width, pt) <= lines:
        return text, ""
    clauses = _CLAUSE.split(text)
    shown = ""
    for k in range(1, len(clauses)):
        head = " ".join(clauses[:k]).rstrip(";.,: ")
        if line_count(head + suffix, width, pt) > lines:
            break
        shown = head
    if shown:
        return shown, text[len(shown):].lstrip(";.,: ")
    words = text.split(" ")
    while len(words) > 1 and line_count(" ".join(words) + "…" + suffix, width, pt) > lines:
        words.pop()
    return " ".join(words).rstrip(";.,: (") + "…", text
