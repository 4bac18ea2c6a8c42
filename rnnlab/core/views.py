"""View objects: already-formatted tables and Altair charts, as the app shows them and the exporters save them.

The rest of the package turns records into these (number formatting lives there, so slides match the screen);
the exporters in ``rnnlab.exporters`` only lay them out. Views are frozen: lists passed in are stored as tuples and
mappings are copied (values as strings), so changing what was passed in does not change the view.

Provenance keys used across rnnlab (all optional strings): ``machine``, ``device``, ``tf``, ``keras``, ``python``,
``rnnlab`` (version), ``commit``, ``created_at`` (when the numbers were measured, ISO-8601 UTC); the exporters add
``exported_at``. A view's own provenance (e.g. a baseline measured on another machine) overrides the report's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from rnnlab.core.wording import Sentence

__all__ = ["TableView", "ChartView", "Report", "to_frame", "without_bounds"]


def _str_map(value) -> dict[str, str]:
    # A plain dict copy, not a MappingProxyType: views must stay picklable (st.cache_data pickles them).
    return {str(k): "" if v is None else str(v) for k, v in dict(value or {}).items()}


BOUNDS = (" (low)", " (high)")  # a ratio column's interval, as raw columns beside it: "forward vs ref (low)"


@dataclass(frozen=True)
class TableView:
    title: str  # "Unrolling: rnn, 3x128, batch 32, 100 steps"
    caption: str  # configuration, device, where the numbers came from
    columns: tuple[str, ...]  # header labels with units, e.g. "forward (ms)"
    rows: tuple[tuple[str, ...], ...]  # cells ALREADY formatted as on screen (strings)
    raw: tuple[tuple[object, ...], ...] = ()  # same shape as rows: unformatted values (numbers / None) for CSV/JSON
    provenance: Mapping[str, str] = field(default_factory=dict)  # machine, device, tf, keras, rnnlab, commit...
    code: tuple[str, ...] = ()  # the columns whose cells are code: set monospaced, their indentation kept

    def __post_init__(self):
        columns = tuple(str(c) for c in self.columns)
        rows = tuple(tuple("" if c is None else str(c) for c in row) for row in self.rows)
        raw = tuple(tuple(row) for row in self.raw)
        for i, row in enumerate(rows):
            if len(row) != len(columns):
                raise ValueError(f"TableView {self.title!r}: row {i} has {len(row)} cells, expected {len(columns)} "
                                 "(one per column)")
        if raw and (len(raw) != len(rows) or any(len(r) != len(columns) for r in raw)):
            raise ValueError(f"TableView {self.title!r}: raw must have the shape of rows "
                             f"({len(rows)} x {len(columns)}) or be empty")
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "raw", raw)
        object.__setattr__(self, "provenance", _str_map(self.provenance))
        object.__setattr__(self, "code", tuple(str(c) for c in self.code if str(c) in columns))


@dataclass(frozen=True)
class ChartView:
    title: str
    caption: str
    spec: Mapping  # a Vega-Lite JSON dict (alt.Chart.to_dict()), data inlined
    provenance: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.spec, Mapping):
            raise ValueError(f"ChartView {self.title!r}: spec must be a Vega-Lite dict (alt.Chart.to_dict()), "
                             f"got {type(self.spec).__name__}")
        object.__setattr__(self, "provenance", _str_map(self.provenance))


@dataclass(frozen=True)
class Report:
    title: str  # "rnnlab: static vs dynamic unrolling"
    subtitle: str  # what was measured, machine, TF version, date
    tables: tuple[TableView, ...]
    charts: tuple[ChartView, ...]
    provenance: Mapping[str, str]
    # the findings' sentences, with their intervals: a talk's takeaway slide. Each a ``core.wording.Sentence``, its
    # machine and call apart from its words (``.text``: the whole sentence, what exporters write); a str is a
    # sentence that names no machine first
    takeaways: tuple[Sentence, ...] = ()
    # A talk deck (``rnnlab.present.deck.talk``): ``pairs[i]`` are the indices into ``charts`` shown beside or after
    # ``tables[i]``; empty: the appendix layout (every table, then every chart).
    pairs: tuple[tuple[int, ...], ...] = ()
    takeaway_note: str = ""  # what every takeaway shares, said once ("On the bundled results' CPU (...)")

    def __post_init__(self):
        object.__setattr__(self, "tables", tuple(self.tables))
        object.__setattr__(self, "charts", tuple(self.charts))
        object.__setattr__(self, "provenance", _str_map(self.provenance))
        said = (t if isinstance(t, Sentence) else Sentence(str(t)) for t in self.takeaways)
        object.__setattr__(self, "takeaways", tuple(t for t in said if t.text.strip()))
        pairs = tuple(tuple(int(i) for i in p) for p in self.pairs)
        if pairs and (len(pairs) != len(self.tables)
                      or any(not 0 <= i < len(self.charts) for p in pairs for i in p)):
            raise ValueError(f"Report {self.title!r}: pairs must hold one tuple of chart indices per table")
        object.__setattr__(self, "pairs", pairs)


def to_frame(table: TableView):
    """The formatted rows as a ``pandas.DataFrame`` of strings, headed by ``table.columns``."""
    import pandas as pd

    return pd.DataFrame(list(table.rows), columns=list(table.columns), dtype=object)


def without_bounds(view: TableView) -> TableView:
    """``view`` without its interval columns (:data:`BOUNDS`): what a screen, a terminal and a document (Markdown,
    LaTeX, slides) show, the ratio cells carrying the interval in their text; CSV and JSON keep them."""
    keep = [i for i, c in enumerate(view.columns) if not c.endswith(BOUNDS)]
    if len(keep) == len(view.columns):
        return view
    pick = lambda row: tuple(row[i] for i in keep)  # noqa: E731
    return TableView(title=view.title, caption=view.caption, columns=pick(view.columns),
                     rows=tuple(map(pick, view.rows)), raw=tuple(map(pick, view.raw)), provenance=view.provenance,
                     code=view.code)
