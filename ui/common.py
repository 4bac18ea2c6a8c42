"""Small Streamlit helpers every page uses: error guard, store and records, tables, hints."""

from __future__ import annotations

import contextlib
import copy
import functools
import math
import re
from typing import Iterator

import streamlit as st

from rnnlab.judge import select
from rnnlab.core import baseline
from rnnlab.core.errors import RnnlabError
from rnnlab.core.memo import Memo
from rnnlab.core.record import Record
from rnnlab.core.store import Store, default_path
from rnnlab.core.format import MISSING
from rnnlab.core.views import ChartView, TableView, to_frame

from . import nav, uploads


def _share_altair_lock() -> None:
    """rnnlab builds chart specs under the lock Streamlit holds while it switches Altair's process-wide data
    transformer and theme (``present.report.spec_lock``): the two never interleave. Streamlit keeps that lock in a
    private module attribute; tests/present/test_chart_threads.py fails if a new Streamlit moves it."""
    from streamlit.elements import vega_charts

    from rnnlab.present import report

    lock = getattr(vega_charts, "_altair_globals_lock", None)
    if lock is not None:
        report.share_spec_lock(lock)


_share_altair_lock()

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md_escape(text: object) -> str:
    """Text from a URL, a file or an error, shown literally inside Markdown (no links, images, emphasis)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


@contextlib.contextmanager
def guard(what: str = "") -> Iterator[None]:
    """``with guard("Run"):`` -- an RnnlabError (the user's mistake) becomes st.error and the page goes on.

    Anything else is a bug and keeps its traceback; Streamlit's own control flow (st.stop, st.rerun) passes.
    """
    try:
        yield
    except RnnlabError as e:
        st.error(md_escape(f"{what}: {e}" if what else e), icon=":material/error:")


@st.cache_resource(show_spinner=False)
def _store(path: str) -> Store:
    return Store(path, warn=lambda msg: None)


def store() -> Store:
    """This machine's store (``RNNLAB_STORE`` or the default path), opened once per process and path."""
    s = _store(str(default_path()))
    for w in s.warnings:  # e.g. a corrupt file moved aside: say it once per session
        seen = st.session_state.setdefault("_store_warnings_seen", set())
        if w not in seen:
            seen.add(w)
            st.warning(w, icon=":material/warning:")
    return s


# -- views shared by every session -----------------------------------------------------------------------------------
# Every rerun of every session used to rebuild its page's views from all records (20 sessions: a 37 s p95 render).
# A page's view is a pure function of the records and the page's settings, so it is computed once per (records'
# version, settings) and shared (``core.memo``): ``records()`` is read once per version of the store and of the bundled
# files, and ``shared(records, fn, ...)`` keys a view on that version and its other arguments.
VIEWS = Memo(size=128)  # a page view with its chart data: up to a few MB each


class Records(list):
    """Records as ``records()`` read them, with the version they were read at (``shared`` keys views on it).
    Shared by every session: never change one in place."""

    version: tuple = ()


def records(experiment: str | None = None) -> Records:
    """This machine's records plus bundled ones for configurations not measured here; in hosted mode, plus the
    records this session uploaded (source "imported", for this session only). Read once per version of the store,
    the bundled files and this session's uploads, and shared."""
    s = store()
    mine, token = uploads.held()
    version = ("records", str(s.path), s.version(), baseline.stamp(), experiment, token)

    def read() -> Records:
        if not mine:
            out = Records(select.combined(s, experiment=experiment))
        else:
            local = s.records(experiment) + [r for r in mine if experiment is None or r.experiment == experiment]
            out = Records(select.combined(s, experiment=experiment, local=local))
        out.version = version
        return out

    return _memo(version).get(version, read)


def _memo(version: tuple) -> Memo:
    """Where views of records at ``version`` are kept: shared by every session, except views of a session's own
    uploads, kept for that session only and let go with it (``uploads.views``)."""
    if version and version[-1] is not None:  # the upload token of ``records()``
        return uploads.views(version[-1])
    return VIEWS


def _key(x) -> object:
    """An argument of a shared view as part of its key. Records drawn from ``records()`` at one version (the key
    holds the version) are told apart by key, source and time: their repr would cost ~0.1 ms each on every rerun."""
    if isinstance(x, Records):
        return x.version
    if isinstance(x, Record):
        return ("record", x.key, x.source, x.created_at, x.cached)
    if isinstance(x, (list, tuple)) and x and all(isinstance(r, Record) for r in x):
        return (type(x).__name__,) + tuple(_key(r) for r in x)
    return repr(x)


def shared(records, fn, /, *args, **kw):
    """``fn(*args, **kw)``, computed once per (``records``' version, ``fn``, its arguments) and shared by every
    session (``records``: what ``records()`` returned, the arguments' source). Arguments are keyed by their repr (a
    ``Records`` by its version), so everything the view depends on must be among them. Not cached when ``records``
    has no version (a list made by hand)."""
    version = getattr(records, "version", None)
    if not version:
        return fn(*args, **kw)
    key = ("view", version, fn.__module__, fn.__qualname__, tuple(_key(a) for a in args),
           tuple((k, _key(v)) for k, v in sorted(kw.items())))
    return _memo(version).get(key, lambda: fn(*args, **kw))


_SPECS = Memo(size=512)  # id(chart) -> (chart, its screen spec): the chart is held, so its id is not reused meanwhile


def _screen_spec(chart) -> dict:
    """A chart (Altair, or a ChartView's Vega-Lite dict) as Streamlit draws it: the spec with its datasets already
    in Arrow (``st.vega_lite_chart`` takes those as they are), Altair's default-theme view size left out as
    ``st.altair_chart`` does. Made once per chart object (a shared view's charts are made once)."""
    from streamlit import dataframe_util

    from rnnlab.present import report

    spec = dict(chart) if isinstance(chart, dict) else report.chart_spec(chart)
    config = dict(spec.get("config") or {})
    view = {k: v for k, v in (config.get("view") or {}).items() if k not in ("continuousWidth", "continuousHeight")}
    if view:
        config["view"] = view
    else:
        config.pop("view", None)
    if config:
        spec["config"] = config
    else:
        spec.pop("config", None)
    if isinstance(spec.get("datasets"), dict):
        import pandas as pd

        spec["datasets"] = {k: dataframe_util.convert_anything_to_arrow_bytes(pd.DataFrame(v))
                            if isinstance(v, list) else v for k, v in spec["datasets"].items()}
    return spec


def chart(obj, *, where=None, panels: int | None = None, **kw) -> None:
    """Draw a chart: an Altair chart, a ``ChartView``, or a Vega-Lite dict (``st.vega_lite_chart``'s arguments
    in ``kw``, ``where`` a column or container; ``panels``: side-by-side panels narrowed to that width,
    ``panels_to``). The spec is converted once per chart object (a shared view's), not on every rerun."""
    src = obj.spec if isinstance(obj, ChartView) else obj  # (an Altair facet chart has a ``spec`` too: its panel)

    def make():
        return src, _screen_spec(panels_to(src, panels) if panels else src)

    held, spec = _SPECS.get((id(src), panels), make)
    if held is not src:  # an id reused by another object after the first was dropped: convert it afresh
        spec = make()[1]
    (where or st).vega_lite_chart(spec=spec, **kw)


def findings_md(lines, *, lead: str = "") -> str:
    """Findings as Markdown bullets, their shared "On <machine>," said once in the lead-in
    (``present.overview.shared_opening``) instead of in every line."""
    from rnnlab.present.overview import emphasise, shared_opening

    head, rest = shared_opening(list(lines))
    intro = " ".join(x for x in (lead, f"{head}:" if head else "") if x)
    return (intro + "\n\n" if intro else "") + "\n".join(f"- {emphasise(x)}" for x in rest)


def anchor(title: str) -> str:
    """A header's anchor for an in-page link: "Measures and columns" -> "measures-and-columns"."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


# -- tables that fit their column ----------------------------------------------------------------------------------
# The main column is 938 px wide at a 1400 px window with the sidebar open; a table wider than its column hides its
# last columns behind a horizontal scroll (tests/pages/test_layout_browser.py), so every table's columns get widths
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


_CELL_SCALE, _HEAD_SCALE = 1.12, 1.16  # measured with the grid's own font (tests/pages/test_text_browser.py)


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
               pinned: bool = True) -> tuple[dict, int | None]:
    """Column widths (and a row height) so that ``frame``'s columns fit ``budget`` px: each column as wide as its
    header and longest cell, and when they do not fit, the widest ones narrowed to one common cap (their text wraps,
    so the rows grow up to ``max_lines`` lines). ``config`` keeps a caller's column settings (a label, help, a
    format); a width it sets is kept. The first column is pinned (it names the row). Returns (column_config,
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


def _shortened(frame, data, cols, column_config: dict, row_height: int | None):
    """``frame`` (a DataFrame or a Styler over ``data``) with every text cell of ``cols`` that its row cannot hold
    :func:`shorten`-ed: the grid cuts such text without an ellipsis."""
    import pandas as pd
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
    if not cut:
        return frame
    under = getattr(frame, "data", None)  # a Styler's frame, else None
    new = (frame if under is None else under).copy()
    for c, short in cut.items():
        new[c] = pd.Series(short, index=data.index, dtype=object)
    if under is None:
        return new
    styled = copy.copy(frame)  # the same styles over the shortened cells
    styled.data = new
    return styled


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


def frame_table(frame, *, key: str | None = None, config: dict | None = None, budget: int = FULL,
                max_lines: int = 3, pinned: bool = True, height=None, columns=None, **kw):
    """``st.dataframe`` of ``frame`` (or a pandas Styler over it) that fits its column (:func:`fit_config`);
    ``columns``: the ones shown, in order (the frame keeps the others);
    missing values show as ``MISSING``; every row shown (up to 40). Columns that cannot fit even with wrapped cells
    go on into a second table under the first, which starts with the same first column (:func:`column_groups`;
    not for a table whose rows are selected). Returns what the first ``st.dataframe`` returns (a selection
    event)."""
    data = getattr(frame, "data", frame)  # a Styler: the frame under it
    if columns is not None:
        data = data[list(columns)]
    groups = [list(map(str, data.columns))] if "on_select" in kw else column_groups(data, config=config,
                                                                                      budget=budget)
    first = None
    for i, cols in enumerate(groups):
        column_config, row_height = fit_config(data[cols], budget=budget, max_lines=max_lines, config=config,
                                               pinned=pinned)
        frame = _shortened(frame, data, cols, column_config, row_height)
        args = dict(hide_index=True, key=key if i == 0 or key is None else f"{key}-{i}", width="stretch",
                    column_config=column_config, row_height=row_height, placeholder=MISSING)
        if len(groups) > 1 or columns is not None:
            args["column_order"] = cols
        if height is not None:
            args["height"] = height
        elif len(data) <= 40:  # every row shown: a report, not a scroll box
            args["height"] = "content"
        out = st.dataframe(frame, **(args | kw))
        first = out if i == 0 else first
    return first


def table(view: TableView, *, key: str | None = None, caption: bool = True, config: dict | None = None,
          budget: int = FULL, max_lines: int = 3, height=None) -> None:
    """A TableView as on screen: formatted strings that fit the column, the caption (configuration, source)
    under it."""
    frame_table(to_frame(view), key=key, config=config, budget=budget, max_lines=max_lines, height=height)
    if caption and view.caption:
        st.caption(view.caption)


def comparison_frame(view: TableView):
    """A comparison table for the screen: each ratio beside its metric, the error column only when a variant
    failed (exports keep the view's own layout)."""
    frame = to_frame(view)
    cols = list(frame.columns)
    ratio_of = {"forward (ms)": "forward vs", "train step (ms)": "train vs", "build (s)": "build vs",
                "peak memory (MB)": "memory vs"}
    order = []
    for c in cols:
        if any(c.startswith(p) for p in ratio_of.values()):
            continue
        order.append(c)
        if c in ratio_of:
            order += [r for r in cols if r.startswith(ratio_of[c])]
    if "error" in order and not frame["error"].astype(str).str.strip().any():
        order.remove("error")
    elif "error" in order:  # a failure's reason right after the names, where it is seen
        order.remove("error")
        order.insert(2, "error")
    return frame[order]


def panels_to(chart, width: int):
    """A copy of an Altair chart of side-by-side panels (``hconcat``) with each panel ``width`` px wide, so the
    row fits the page (such a chart cannot stretch to its container); any other chart comes back as it is."""
    if not hasattr(chart, "hconcat"):
        return chart
    chart = chart.copy(deep=True)
    chart.hconcat = [c.properties(width=width) for c in chart.hconcat]
    return chart


# The comparison's later tables (the first: time and memory, each ratio beside its metric): build and graph; then
# agreement and throughput. A column not named here (another experiment's metric) stays in the first.
_GROUPS = (("Build and graph size", ("what runs", "first build (s)", "first call (s)", "train build (s)",
                                     "train first call (s)", "graph nodes")),
           ("Agreement and throughput", ("max |diff| vs ref", "max |diff| vs NumPy", "GFLOP/s", "of matmul peak",
                                         "check")))
_RATIO_OF = {"forward vs": "forward (ms)", "train vs": "train step (ms)", "build vs": "build (s)",
             "memory vs": "peak memory (MB)"}


def comparison_tables(view: TableView, *, key: str, caption: bool = True) -> None:
    """A comparison view (``tables.comparison``, without its raw interval columns) as tables that fit the page:
    time and memory with each ratio beside its metric (headed "vs <reference>", its metric named in the help);
    then build and graph size; then agreement and throughput (the share of the matmul peak as a bar). Each starts
    with the variant; a failed variant's reason stays in the first."""
    frame = comparison_frame(view)
    cols = list(frame.columns)
    later = {c for _, group in _GROUPS for c in group}
    first = [c for c in cols if c not in later]
    extra = [c for c in ("measured on",) if c in first]
    config = {"variant": st.column_config.TextColumn(help="stable name: what it runs is in the next table and the "
                                                          "Glossary")}
    for c in first:
        for prefix, metric in _RATIO_OF.items():
            if c.startswith(prefix):
                ref = c.removeprefix(prefix).strip()
                config[c] = st.column_config.TextColumn(
                    f"vs {ref}", help=f"{metric} over {ref}'s (above 1: takes more); in brackets its interval")
    frame_table(frame[first], key=key, config=config)
    for i, (title, group) in enumerate(_GROUPS):
        part = [c for c in group if c in cols]
        if not part:
            continue
        st.markdown(f"**{title}**")
        sub = frame[["variant"] + extra + part].copy()
        config = {}
        if "of matmul peak" in sub.columns:
            j = list(view.columns).index("of matmul peak")
            raw = {row[0]: row[j] for row in view.raw}
            sub["of matmul peak"] = [raw.get(v) for v in sub["variant"]]
            config["of matmul peak"] = st.column_config.ProgressColumn(
                "of matmul peak", format="percent", min_value=0.0, max_value=1.0, width=150,
                help="achieved GFLOP/s over this machine's matrix-multiply rate: the roofline (see the Glossary)")
        frame_table(sub, key=f"{key}-{i + 1}", config=config)
    if caption and view.caption:
        st.caption(view.caption)


def page_link(url_path: str, label: str, *, query: dict | None = None, icon: str = ":material/arrow_forward:"
              ) -> bool:
    """A link to another page (with query parameters: a configuration). False if that page does not exist yet."""
    f = nav.page_file(url_path)
    if f is None:
        return False
    st.page_link(f, label=label, icon=icon, query_params=query or None)
    return True


def how_to_get(cli: str, *, page: str | None = None, button: str = "Run", here: bool = False) -> None:
    """Where no record exists: the CLI command, and the button (``here``: on this page, above)."""
    text = f"Not measured yet. In a terminal: `{cli}`"
    if page and nav.page_file(page):
        text += f", or press **{button}**" + (" above." if here else f" on the {nav.title(page)} page.")
    st.info(text, icon=":material/info:")
