"""View objects: already-formatted tables and Altair charts, as the app shows them and the exporters save them.

The rest of the package turns records into these (number formatting lives there, so slides match the screen);
the exporters in ``rnnlab.exporters`` only lay them out. Views are frozen: lists passed in are stored as tuples and
mappings are copied (values as strings), so changing what was passed in does not change the view.

Provenance keys used across rnnlab (all optional strings): ``machine``, ``device``, ``tf``, ``keras``, ``python``,
``rnnlab`` (version), ``commit``, ``created_at`` (when the numbers were measured, ISO-8601 UTC); the exporters add
``exported_at``. A view's own provenance (e.g. a baseline measured on another machine) overrides the report's.

A table's columns carry their meaning as data (:class:`Column`): its key, label, kind (:data:`KINDS`: a number, a
ratio, yes/no, short text, prose, code), unit and role (:data:`ROLES`: the row's name, a metric, a ratio to a
reference or one bound of its interval, the machine, the "check" or "error" column, the measured figures), and for
a ratio or a bound the metric it divides (``of``) and the reference (``against``). A ``TableView`` is built with
``columns`` of labels or ``Column`` objects; it keeps ``columns``, the labels (what every header shows), and
``cols``, one ``Column`` each. A plain label's kind comes from the raw values' Python types (all ``bool``: yes/no,
all numbers: number, else text), never from the formatted cells. Decks, exporters and pages read ``cols``
(``numeric``, ``code``, :func:`without_bounds`), never a header or a cell, to learn what a column is.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from rnnlab.core.wording import Sentence

__all__ = ["Column", "TableView", "ChartView", "Report", "to_frame", "select", "without_bounds", "KINDS", "ROLES",
           "NUMERIC", "WORDY"]


def _str_map(value) -> dict[str, str]:
    # A plain dict copy, not a MappingProxyType: views must stay picklable (st.cache_data pickles them).
    return {str(k): "" if v is None else str(v) for k, v in dict(value or {}).items()}


# What a column holds: "number" and "ratio" (right-aligned; a ratio's cell "0.63x (0.60–0.66)"), "yesno" (a raw
# bool, said yes/no), "text" (names, short words), "prose" (sentences), "code" (set monospaced, indentation kept)
KINDS = ("number", "ratio", "yesno", "text", "prose", "code")
NUMERIC = ("number", "ratio")  # the kinds whose cells are figures
WORDY = ("prose", "code")  # the kinds whose cells are sentences or code: clipped, wrapped, kept few
# What a column is for: "" (nothing special), the row's "name", a "metric", a "ratio" to a reference (``of`` the
# metric), a "bound" of a ratio's interval (raw, CSV/JSON only), the "machine" that measured a row ("measured on"),
# the "check" sentences (``rules.impossible``), the "error" that ended a run, the measured "figures" (Claims)
ROLES = ("", "name", "metric", "ratio", "bound", "machine", "check", "error", "figures")


@dataclass(frozen=True)
class Column:
    """One column of a table: what it is, as data. ``key`` defaults to the label (a metric column's key is the
    metric, "fwd_ms"; a ratio's its name against any reference, "forward vs ref"); ``kind`` "" is derived from the
    raw values when the ``TableView`` is built."""
    label: str  # the header, with its unit: "forward (ms)"
    kind: str = ""  # one of KINDS
    role: str = ""  # one of ROLES
    key: str = ""
    unit: str = ""  # "ms", "MB", "x"
    of: str = ""  # a ratio or a bound: the key of the metric it divides
    against: str = ""  # a ratio or a bound: the reference it divides by ("tf1_dynamic")

    def __post_init__(self):
        object.__setattr__(self, "label", str(self.label))
        object.__setattr__(self, "key", str(self.key or self.label))
        if self.kind not in KINDS + ("",):
            raise ValueError(f"Column {self.label!r}: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if self.role not in ROLES:
            raise ValueError(f"Column {self.label!r}: role {self.role!r} is not one of "
                             f"{', '.join(filter(None, ROLES))}")

    def bounds(self) -> tuple["Column", "Column"]:
        """A ratio's raw interval columns, "<label> (low)" and "<label> (high)": CSV and JSON keep them."""
        return tuple(Column(f"{self.label} ({side})", "ratio", "bound", key=f"{self.key} ({side})", unit=self.unit,
                            of=self.of, against=self.against) for side in ("low", "high"))


def _kind_of(values: Sequence[object]) -> str:
    """A column's kind from its raw values' Python types: all bool, yes/no; all numbers, number; else text."""
    seen = [v for v in values if v is not None]
    if seen and all(isinstance(v, bool) for v in seen):
        return "yesno"
    if seen and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in seen):
        return "number"
    return "text"


def _typed(given: Sequence, raw: Sequence[Sequence[object]], known: Sequence[Column]) -> tuple[Column, ...]:
    """A Column per label: the one given, else the one ``known`` had for that label (``dataclasses.replace`` passes
    the labels back with the old ``cols``), else a plain one; a kind not given comes from the raw values."""
    labels = [c.label if isinstance(c, Column) else str(c) for c in given]
    same = [c.label for c in known] == labels
    by_label: dict[str, Column] = {}
    for c in known:
        by_label.setdefault(c.label, c)
    out = []
    for j, (c, label) in enumerate(zip(given, labels)):
        if not isinstance(c, Column):
            c = known[j] if same else by_label.get(label, Column(label))
        if not c.kind:
            c = Column(c.label, _kind_of([row[j] for row in raw]), c.role, c.key, c.unit, c.of, c.against)
        out.append(c)
    return tuple(out)


@dataclass(frozen=True)
class TableView:
    title: str  # "Unrolling: rnn, 3x128, batch 32, 100 steps"
    caption: str  # configuration, device, where the numbers came from
    columns: tuple[str, ...]  # given: labels or Columns; kept: the header labels with units, e.g. "forward (ms)"
    rows: tuple[tuple[str, ...], ...]  # cells ALREADY formatted as on screen (strings)
    raw: tuple[tuple[object, ...], ...] = ()  # same shape as rows: unformatted values (numbers / None) for CSV/JSON
    provenance: Mapping[str, str] = field(default_factory=dict)  # machine, device, tf, keras, rnnlab, commit...
    cols: tuple[Column, ...] = ()  # filled in: one Column per label (from ``columns``; ``replace`` carries it)

    def __post_init__(self):
        given = tuple(self.columns)
        columns = tuple(c.label if isinstance(c, Column) else str(c) for c in given)
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
        object.__setattr__(self, "cols", _typed(given, raw, tuple(self.cols)))

    @property
    def numeric(self) -> tuple[bool, ...]:
        """Per column: does it hold figures (:data:`NUMERIC`, right-aligned)?"""
        return tuple(c.kind in NUMERIC for c in self.cols)

    @property
    def code(self) -> tuple[str, ...]:
        """The labels of the columns whose cells are code: set monospaced, their indentation kept."""
        return tuple(c.label for c in self.cols if c.kind == "code")

    def role(self, role: str) -> list[int]:
        """The indices of the columns with ``role`` (:data:`ROLES`), in order."""
        return [j for j, c in enumerate(self.cols) if c.role == role]


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
    # A talk deck's appendix: (title, bullets) per list, what left the tables because a slide's cell holds a value,
    # not a paragraph (``rnnlab.present.deck``); shown after the tables and charts
    appendix: tuple[tuple[str, tuple[str, ...]], ...] = ()

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
        object.__setattr__(self, "appendix", tuple((str(t), tuple(map(str, b))) for t, b in self.appendix))


def to_frame(table: TableView):
    """The formatted rows as a ``pandas.DataFrame`` of strings, headed by ``table.columns``."""
    import pandas as pd

    return pd.DataFrame(list(table.rows), columns=list(table.columns), dtype=object)


def select(view: TableView, keep: Sequence[int], **changes) -> TableView:
    """``view`` with only the columns ``keep`` (indices, in that order), each with its ``Column``; ``changes``:
    other fields to replace (a title, rows already cut to ``keep``)."""
    pick = lambda row: tuple(row[i] for i in keep)  # noqa: E731
    fields = dict(title=view.title, caption=view.caption, columns=pick(view.cols), rows=tuple(map(pick, view.rows)),
                  raw=tuple(map(pick, view.raw)), provenance=view.provenance)
    return TableView(**(fields | changes))


def without_bounds(view: TableView) -> TableView:
    """``view`` without its interval columns (role "bound"): what a screen, a terminal and a document (Markdown,
    LaTeX, slides) show, the ratio cells carrying the interval in their text; CSV and JSON keep them."""
    keep = [i for i, c in enumerate(view.cols) if c.role != "bound"]
    return view if len(keep) == len(view.columns) else select(view, keep)
