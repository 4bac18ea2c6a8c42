"""Tables that fit their column: widths from the text they hold, long cells wrapped or cut with an ellipsis."""

from __future__ import annotations

import copy
import functools
import math
import pickle

import streamlit as st

from rnnlab.core.format import MISSING
from rnnlab.core.memo import Memo
from rnnlab.core.views import TableView, to_frame

# -- tables that fit their column ----------------------------------------------------------------------------------
# The main column is 938 px wide at a 1400 px window with the sidebar open; a table wider than its column hides its
# last columns behind a horizontal scroll (tests/pages/test_reading_browser.py), so every table's columns get widths
# that add up to at most ``FULL`` px: long text wraps over up to ``max_lines`` lines instead.
FULL = 925
_PAD, _HEAD, _MIN = 20, 22, 52  # px: a cell's padding; a header's; the narrowest column
_FIRST = 160  # px: the pinned first column wraps down to this before another column's header is cut
_LINE, _ROW, _WRAP = 20, 35, 65  # px per wrapped line; the grid's one-line row; the least row that wraps
# px per character of the grid's 14 px sans-serif, by kind (measured in Chromium, then checked against the
# screenshots: the grid's cells draw about 12% wider than a canvas measures, its headers do not): narrow, wide,
# capitals, digits, the rest
_NARROW, _WIDE = set("iljtfr.,:;|'!()[]/ -"), set("mwMW@%–—")


@functools.lru_cache(maxsize=65536)  # every rerun measures the same cells again
def _chars_px(line: str) -> float:
    return sum(3.6 if ch in _NARROW else 9.6 if ch in _WIDE else 7.6 if ch.isupper() else 7.0 if ch.isdigit()
               else 6.6 for ch in line)


_CELL_SCALE, _HEAD_SCALE = 1.12, 1.16  # measured with the grid's own font (tests/pages/test_reading_browser.py)


def _text_px(text: object, pad: float = _PAD) -> float:
    """The px a cell (or, with ``pad=_HEAD``, a header) needs for ``text`` on one line (its longest line)."""
    scale = _HEAD_SCALE if pad == _HEAD else _CELL_SCALE
    return max(_chars_px(x) for x in str(text).split("\n")) * scale + pad


ELLIPSIS = "…"


def _lines(text: str, room: float) -> int:
    """Lines the grid wraps ``text`` into in ``room`` px (at spaces; a word longer than a line takes more)."""
    space = _chars_px(" ") * _CELL_SCALE
    total = 0
    for para in str(text).split("\n"):
        n, cur = 1, 0.0
        for word in para.split(" "):
            w = _chars_px(word) * _CELL_SCALE
            if cur and cur + space + w > room:
                n, cur = n + 1, w
            else:
                cur += (space if cur else 0.0) + w
            if w > room:
                n += math.ceil(w / max(room, 1.0)) - 1
        total += n
    return total


def shorten(text: object, width: float, lines: int) -> str:
    """``text`` as a cell ``width`` px wide and ``lines`` high shows it: whole when it fits, else cut at a word with
    an ellipsis, so a reader sees that there is more (a click on the cell opens all of it; the CSV has it)."""
    text = str(text)
    room = width - _PAD + 2  # fit_config rounds a column's width down and wraps only past 2 px over
    if lines > 1 and any(len(w) > 25 for w in text.split()):  # the grid breaks a long word where it likes
        room *= 0.9
    if _lines(text, room) <= lines:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # the longest prefix that fits with its ellipsis
        mid = (lo + hi + 1) // 2
        if _lines(text[:mid].rstrip() + ELLIPSIS, room) <= lines:
            lo = mid
        else:
            hi = mid - 1
    cut = text[:lo]
    if " " in cut.strip() and lo < len(text) and text[lo:lo + 1] != " ":
        cut = cut[:cut.rstrip().rfind(" ")]  # at a word
    return cut.rstrip(" ,;:(–-") + ELLIPSIS


def fit_config(frame, *, budget: int = FULL, max_lines: int = 3, config: dict | None = None,
               pinned: bool = True, whole: tuple[str, ...] = ()) -> tuple[dict, int | None]:
    """Column widths (and a row height) so that ``frame``'s columns fit ``budget`` px: each column as wide as its
    header and longest cell, and when they do not fit, the widest ones narrowed to one common cap (their text wraps,
    so the rows grow up to ``max_lines`` lines). ``config`` keeps a caller's column settings (a label, help, a
    format); a width it sets is kept; the columns in ``whole`` are as wide as their longest cell (never narrowed nor
    cut: short names, flags). The first column is pinned (it names the row). Returns (column_config,
    row_height or None)."""
    config = dict(config or {})
    cols = [str(c) for c in frame.columns]
    cells = {c: [str(v) for v in frame[c].tolist() if v is not None] for c in frame.columns}
    fixed: dict[str, int] = {}
    for c in cols:
        w = (config.get(c) or {}).get("width") if isinstance(config.get(c), dict) else None
        if isinstance(w, int):
            fixed[c] = w
    head = {c: _text_px(_label(config, c), _HEAD) for c in cols}
    natural = {c: max([head[c]] + [_text_px(v) for v in cells[str(c)] if v]) for c in cols}
    fixed.update({c: math.ceil(natural[c]) for c in whole if c in natural and c not in fixed})
    if pinned and cols and cols[0] not in fixed:  # the row's name: never narrowed, never wrapped
        fixed[cols[0]] = int(min(natural[cols[0]] + 6, 260))
    free = [c for c in cols if c not in fixed]
    floor = {c: max(_MIN, head[c]) for c in free}  # a header is never cut (the grid draws no ellipsis)
    if pinned and cols and cols[0] in fixed and (config.get(cols[0]) or {}).get("width") is None:
        # the row's name wraps (down to _FIRST px) before the other headers would be cut
        spare = budget - sum(floor.values()) - sum(w for c, w in fixed.items() if c != cols[0])
        fixed[cols[0]] = int(max(min(fixed[cols[0]], spare), min(fixed[cols[0]], max(head[cols[0]], _FIRST))))
    room = budget - sum(fixed.values())
    width = {c: natural[c] for c in free}
    if sum(width.values()) > room:
        lo, hi = _MIN, max(natural.values())
        for _ in range(30):  # the largest cap that fits
            cap = (lo + hi) / 2
            if sum(max(floor[c], min(natural[c], cap)) for c in free) <= room:
                lo = cap
            else:
                hi = cap
        width = {c: max(floor[c], min(natural[c], lo)) for c in free}
        if sum(width.values()) > room:  # even the headers do not fit: narrow them all alike
            k = room / sum(width.values())
            width = {c: max(40, w * k) for c, w in width.items()}
    width.update(fixed)
    lines = 1
    for c in cols:
        if natural[c] > width[c] + 2:
            longest = max((_text_px(v) for v in cells[c]), default=0)
            lines = max(lines, min(max_lines, -(-int(longest - _PAD) // max(1, int(width[c] - _PAD)))))
    out = {}
    for i, c in enumerate(cols):
        base = config.get(c)
        if base is None or isinstance(base, str):
            base = st.column_config.Column(base) if isinstance(base, str) else st.column_config.Column()
        base = dict(base)
        base["width"] = fixed.get(c, int(width.get(c, 0)))
        if i == 0 and pinned:
            base["pinned"] = True
        out[c] = base
    # the grid wraps text only in rows taller than 4rem (64 px, Streamlit's frontend): a wrapping row is 65 px or more
    return out, (None if lines == 1 else max(_WRAP, _ROW + _LINE * (lines - 1)))


def _cuts(data, cols, column_config: dict, row_height: int | None) -> dict:
    """The text cells of ``cols`` that their row cannot hold, :func:`shorten`-ed (column -> its cells): the grid
    cuts such text without an ellipsis."""
    from pandas.api.types import is_object_dtype, is_string_dtype

    lines = 1 if row_height is None else max(1, (row_height - _ROW) // _LINE + 1)
    cut = {}
    for c in cols:
        conf = column_config.get(c) or {}
        if (conf.get("type_config") or {}).get("type") not in (None, "text") or \
                not (is_object_dtype(data[c]) or is_string_dtype(data[c])):
            continue
        width = conf.get("width") or FULL
        values = data[c].tolist()
        short = [v if not isinstance(v, str) else shorten(v, width, lines) for v in values]
        if short != values:
            cut[c] = short
    return cut


def _shortened(frame, data, cut: dict):
    """``frame`` (a DataFrame or a Styler over ``data``) with the cells of ``cut`` (:func:`_cuts`) in place."""
    import pandas as pd

    if not cut:
        return frame
    under = getattr(frame, "data", None) if _is_styler(frame) else None  # a Styler's frame
    new = (frame if under is None else under).copy()
    for c, short in cut.items():
        new[c] = pd.Series(short, index=data.index, dtype=object)
    if under is None:
        return new
    styled = copy.copy(frame)  # the same styles over the shortened cells
    styled.data = new
    return styled


def _is_styler(frame) -> bool:
    from pandas.io.formats.style import Styler

    return isinstance(frame, Styler)


def _label(config: dict, c: str) -> str:
    base = config.get(c)
    return (base.get("label") if isinstance(base, dict) else base if isinstance(base, str) else None) or c


def column_groups(frame, *, config: dict | None = None, budget: int = FULL) -> list[list[str]]:
    """``frame``'s columns in consecutive groups that each fit ``budget`` px with their headers whole and a little
    room for their cells (which wrap): one group when they all fit (within 5%: ``fit_config`` narrows them that
    much); else each group starts with the first column (the row's name) again."""
    config = config or {}
    cols = [str(c) for c in frame.columns]

    def need(c: str) -> float:
        w = (config.get(c) or {}).get("width") if isinstance(config.get(c), dict) else None
        if isinstance(w, int):
            return w
        longest = max((_text_px(v) for v in frame[c].tolist() if v is not None), default=0)
        return max(_text_px(_label(config, c), _HEAD), min(longest, 100))

    def need_first(c: str) -> float:  # pinned: as wide as its text, wrapping only down to _FIRST (fit_config)
        longest = max((_text_px(v) for v in frame[c].tolist() if v is not None), default=0)
        return max(_text_px(_label(config, c), _HEAD), min(longest + 6, 260, max(_FIRST, need(c))))

    if need_first(cols[0]) + sum(need(c) for c in cols[1:]) <= budget * 1.05 or len(cols) < 3:
        return [cols]
    # as few tables as fit, about equally wide (not a full one and a stub)
    first, rest = need_first(cols[0]), [need(c) for c in cols[1:]]
    k = math.ceil(sum(rest) / max(budget - first, 1))
    cap = min(budget, first + sum(rest) / k * 1.15)
    groups, cur, used = [], [cols[0]], first
    for c, w in zip(cols[1:], rest):
        if used + w > cap and len(cur) > 1:
            groups.append(cur)
            cur, used = [cols[0]], first
        cur.append(c)
        used += w
    groups.append(cur)
    return groups


# A table's layout (its column groups, widths, row height and shortened cells) and, for a plain frame, its Arrow
# table: computed once per (content, settings) and shared by every session and rerun. Measuring every cell's text and
# converting the frame was most of a table's server time on every rerun of a page.
_LAYOUTS = Memo(size=1024)


_FRAMES = Memo(size=512)  # a view's frame, per view object (``Memo.of``)
_CONTENT = Memo(size=512)  # the content key of a frame view_frame made, per frame object


def view_frame(view: TableView):
    """``to_frame(view)``, made once per view object (a shared view is the same object on every rerun of every
    session) with its content key (:func:`frame_table` would pickle it again on each): shared, never changed in
    place (a table copies what it shortens)."""
    def make():
        frame = to_frame(view)
        _CONTENT.of(frame, lambda: _content_key(frame))
        return frame

    return _FRAMES.of(view, make)


def _content_key(data) -> bytes | None:
    """``data`` (a DataFrame) as a key: its pickle (equal frames, equal bytes; a NaN equals itself here), or None
    for a frame that does not pickle (then it is laid out afresh)."""
    try:
        return pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 -- any cell pickle refuses: no key, no cache
        return None


def _layout(data, *, config: dict | None, budget: int, max_lines: int, pinned: bool, selectable: bool,
            arrow: bool, whole: tuple[str, ...] = ()) -> list[tuple[list[str], dict, int | None, dict, object]]:
    """Per table the frame is drawn as: (its columns, column_config, row height, its cut cells, and with ``arrow``
    the shortened frame up to that table as an Arrow table, else None). See :func:`frame_table`."""
    from streamlit import dataframe_util

    groups = [list(map(str, data.columns))] if selectable else column_groups(data, config=config, budget=budget)
    out, shown = [], data
    for cols in groups:
        column_config, row_height = fit_config(data[cols], budget=budget, max_lines=max_lines, config=config,
                                               pinned=pinned, whole=whole)
        cut = _cuts(data, cols, column_config, row_height)
        table = None
        if arrow:
            shown = _shortened(shown, data, cut)
            table = dataframe_util.convert_pandas_df_to_arrow_table(shown)
        out.append((cols, column_config, row_height, cut, table))
    return out


def frame_table(frame, *, key: str | None = None, config: dict | None = None, budget: int = FULL,
                max_lines: int = 3, pinned: bool = True, height=None, columns=None, whole=(), **kw):
    """``st.dataframe`` of ``frame`` (or a pandas Styler over it) that fits its column (:func:`fit_config`);
    ``columns``: the ones shown, in order (the frame keeps the others); ``whole``: columns never narrowed
    (:func:`fit_config`);
    missing values show as ``MISSING``; every row shown (up to 40). Columns that cannot fit even with wrapped cells
    go on into a second table under the first, which starts with the same first column (:func:`column_groups`;
    not for a table whose rows are selected). Returns what the first ``st.dataframe`` returns (a selection
    event). The layout (and a plain frame's Arrow table) is computed once per content and settings."""
    styler = _is_styler(frame)
    data = frame.data if styler else frame
    if columns is not None:
        data = data[list(columns)]
    selectable = "on_select" in kw
    arrow = not styler and not selectable and columns is None
    whole = tuple(whole)
    settings = (repr(config), budget, max_lines, pinned, selectable, arrow, whole)
    content = (_CONTENT.peek_of(data) if columns is None else None) or _content_key(data)

    def make():
        return _layout(data, config=config, budget=budget, max_lines=max_lines, pinned=pinned,
                       selectable=selectable, arrow=arrow, whole=whole)

    layout = make() if content is None else _LAYOUTS.get((content, settings), make)
    first = None
    for i, (cols, column_config, row_height, cut, table) in enumerate(layout):
        if table is None:
            frame = _shortened(frame, data, cut)
        args = dict(hide_index=True, key=key if i == 0 or key is None else f"{key}-{i}", width="stretch",
                    column_config=column_config, row_height=row_height, placeholder=MISSING)
        if len(layout) > 1 or columns is not None:
            args["column_order"] = cols
        if height is not None:
            args["height"] = height
        elif len(data) <= 40:  # every row shown: a report, not a scroll box
            args["height"] = "content"
        out = st.dataframe(frame if table is None else table, **(args | kw))
        first = out if i == 0 else first
    return first


def table(view: TableView, *, key: str | None = None, caption: bool = True, config: dict | None = None,
          budget: int = FULL, max_lines: int = 3, height=None) -> None:
    """A TableView as on screen: formatted strings that fit the column, the caption (configuration, source)
    under it."""
    frame_table(view_frame(view), key=key, config=config, budget=budget, max_lines=max_lines, height=height)
    if caption and view.caption:
        st.caption(view.caption)


def comparison_frame(view: TableView):
    """A comparison table for the screen: each ratio beside its metric (their ``Column`` roles: a ratio's ``of`` is
    its metric's key), the error column only when a variant failed (exports keep the view's own layout)."""
    frame = view_frame(view)
    ratios: dict[str, list[str]] = {}
    for c in view.cols:
        if c.role == "ratio":
            ratios.setdefault(c.of, []).append(c.label)
    order = []
    for c in view.cols:
        if c.role != "ratio":
            order.append(c.label)
            order += ratios.get(c.key, []) if c.role == "metric" else []
    for j in view.role("error"):
        error = view.columns[j]
        order.remove(error)
        if frame[error].astype(str).str.strip().any():  # a failure's reason right after the names, where it is seen
            order.insert(2, error)
    return frame[order]


# the comparison's later tables, by column key (a metric's key is the metric); the "check" column closes the second
_GROUPS = (("Build and graph size", ("what runs", "first_build_s", "first_call_s", "train_build_s",
                                     "train_first_call_s", "graph_nodes")),
           ("Agreement and throughput", ("max_abs_diff", "ref_abs_diff", "gflops", "roofline_frac", "check")))


def comparison_tables(view: TableView, *, key: str, caption: bool = True) -> None:
    """A comparison view (``tables.comparison``, without its raw interval columns) as tables that fit the page:
    time and memory with each ratio beside its metric (headed "vs <reference>", its metric named in the help);
    then build and graph size; then agreement and throughput (the share of the matmul peak as a bar). Each starts
    with the variant; a failed variant's reason stays in the first."""
    frame = comparison_frame(view)
    shown = set(frame.columns)
    col = {c.label: c for c in view.cols}
    label = {c.key: c.label for c in view.cols if c.label in shown}
    later = {label[k] for _, group in _GROUPS for k in group if k in label}
    first = [c for c in frame.columns if c not in later]
    extra = [view.columns[j] for j in view.role("machine") if view.columns[j] in first]
    name = view.columns[0]
    config = {name: st.column_config.TextColumn(help="stable name: what it runs is in the next table and the "
                                                     "Glossary")}
    for c in first:
        if col[c].role == "ratio":
            metric = label.get(col[c].of, col[c].of)
            config[c] = st.column_config.TextColumn(
                f"vs {col[c].against}",
                help=f"{metric} over {col[c].against}'s (above 1: takes more); in brackets its interval")
    frame_table(frame[first], key=key, config=config)
    for i, (title, group) in enumerate(_GROUPS):
        part = [label[k] for k in group if k in label]
        if not part:
            continue
        st.markdown(f"**{title}**")
        sub = frame[[name] + extra + part].copy()
        config = {}
        peak = label.get("roofline_frac")
        if peak in sub.columns:
            j = view.columns.index(peak)
            raw = {row[0]: row[j] for row in view.raw}
            sub[peak] = [raw.get(v) for v in sub[name]]
            config[peak] = st.column_config.ProgressColumn(
                peak, format="percent", min_value=0.0, max_value=1.0, width=150,
                help="achieved GFLOP/s over this machine's matrix-multiply rate: the roofline (see the Glossary)")
        frame_table(sub, key=f"{key}-{i + 1}", config=config)
    if caption and view.caption:
        st.caption(view.caption)
