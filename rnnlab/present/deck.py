"""A talk deck of a page's view: which columns, which charts and which sentences a short slide deck shows.

Records-free and Streamlit-free: a page's ``Report`` (what the page shows, from ``rnnlab.present.<topic>.view``) in,
a talk ``Report`` out, which ``rnnlab.exporters`` lays out (``pptx``: a title slide, one takeaway slide, per table
one slide with its first chart beside it when there is room, then its other charts). The page's download button and
``python -m rnnlab export --format pptx --view PAGE?QUERY`` both go through :func:`talk`, so the deck shows the
page's own cells:

- per table at most :data:`MAX_COLUMNS` of the page's columns, the user's choice or :func:`default_columns` (the
  row's name, the metric, its ratio to the reference, whose cell carries the interval: "0.63x (0.60–0.66)");
- which column is which comes from the table's ``Column``s (``core.views``): the ratio, its metric, the machine, the
  "check" and "error" columns by role, prose and code by kind, never from a header or a cell;
- columns with nothing in them are dropped (an "error" column when nothing failed); yes/no columns read yes/no, the
  way ``core.format`` writes them; the raw interval columns stay in CSV/JSON (``views.without_bounds``);
- each table keeps the charts that belong to it (``Report.pairs``); the takeaways are the page's findings.

:func:`page_view` reads a ``--view`` spec ("unrolling?cell=lstm&ref=keras") and asks the page's module for its view.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import replace
from typing import Any, Mapping, Sequence
from urllib.parse import parse_qsl

from rnnlab.core import format as fmt
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip
from rnnlab.core.views import WORDY, Column, Report, TableView, select, without_bounds
from rnnlab.core.wording import Sentence, shared_opening
from rnnlab.present import pages

MAX_COLUMNS = 6
_BLANK = {"", fmt.MISSING}  # nothing in the cell, or nothing measured
MAX_PROSE = 2  # columns of sentences or code a slide's table shows at most

# page -> what the page is, for every page whose module (rnnlab.present.<page>) defines ``view(records, query, env)``
PAGES = pages.viewed()


# ---------------------------------------------------------------------------------------------------- columns

def _empty(table: TableView, j: int) -> bool:
    return all(row[j].strip() in _BLANK for row in table.rows)


def _not_run(row: Sequence[str]) -> bool:
    """A row that only says nothing was run for it: its name, then nothing but "not run yet" and blanks."""
    rest = [c.strip() for c in row[1:]]
    return fmt.NOT_RUN in rest and all(c in _BLANK or c == fmt.NOT_RUN for c in rest)


def screen(table: TableView) -> TableView:
    """What a slide may show of ``table``: its screen columns (no raw interval columns), yes/no columns in
    ``core.format``'s words, no column with nothing in it; no row that only says it was not run yet, and a "not run
    yet" cell (beside a row's own text: a mapping not checked live) as ``MISSING``, which the caption explains."""
    table = without_bounds(table)
    drop = [i for i, row in enumerate(table.rows) if _not_run(row)]
    kept = [i for i in range(len(table.rows)) if i not in drop]
    blanked = any(c.strip() == fmt.NOT_RUN for i in kept for c in table.rows[i])
    if drop or blanked:
        notes = ([f"{len(drop)} of {len(table.rows)} rows not measured yet are left out"] if drop else []) + \
                ([f"{fmt.MISSING}: not measured yet"] if blanked else [])
        rows = tuple(tuple(fmt.MISSING if c.strip() == fmt.NOT_RUN else c for c in table.rows[i]) for i in kept)
        table = replace(table, rows=rows, raw=tuple(table.raw[i] for i in kept) if table.raw else (),
                        caption="; ".join([table.caption] * bool(table.caption) + notes))
    keep = [j for j in range(len(table.columns)) if not _empty(table, j)]
    yes_no = {j for j in keep if table.cols[j].kind == "yesno"} if table.raw else set()
    rows = tuple(tuple(fmt.fmt_value(raw[j]) if j in yes_no else row[j] for j in keep)
                 for row, raw in zip(table.rows, table.raw or [()] * len(table.rows)))
    return select(table, keep, rows=rows)


def _generic(column: Column) -> str:
    """A column's name whatever its reference: a ratio's key ("forward vs ref"), else its label."""
    return (column.key if column.role == "ratio" else column.label).strip().lower()


def _asked(name: str) -> tuple[str, ...]:
    """What a user's column name may match (:func:`_generic`): the name, and a ratio's name against any reference
    ("forward vs keras" picks "forward vs ref" too)."""
    text = name.strip().lower()
    return tuple(dict.fromkeys((text, re.sub(r" vs \S+$", " vs ref", text))))


def default_columns(table: TableView) -> list[str]:
    """The row's name, the metric, its ratio to the reference (the ratio's cell carries its interval, the spread; one
    column per condition when the table has the same ratio at 1 thread and at every core), the training step's ratio
    likewise when the table has one, and the machine ("measured on"), "check" or "error" when some row has one. A table without ratios: its first
    columns, up to :data:`MAX_COLUMNS`, of which at most two of prose or code (the measured figures first, then in
    order). ``table`` as :func:`screen` gives it."""
    cols = table.cols
    if not cols:
        return []
    ratios = table.role("ratio")
    if ratios:
        ratio = cols[ratios[0]]
        metric = [j for j, c in enumerate(cols) if c.role == "metric" and c.key == ratio.of]
        # one comparison under each condition it was measured in (forward at 1 thread and at every core): each of
        # its columns, then the training step's likewise (a talk shows the training step)
        same = [j for j in ratios if (cols[j].of, cols[j].against) == (ratio.of, ratio.against)]
        train = [j for j in ratios if cols[j].of == "train_ms" != ratio.of and cols[j].against == ratio.against]
        idx = [0, *table.role("machine")[:1], *metric[:1], *same, *train, *table.role("check"),
               *table.role("error")]
        return [cols[j].label for j in dict.fromkeys(idx)][:MAX_COLUMNS]
    long = {j for j, c in enumerate(cols) if c.kind in WORDY}
    figures = set(table.role("figures")) & long  # the measured figures first, then other prose in order
    prose = sorted(figures) + [j for j in sorted(long) if j not in figures]
    keep = set(prose[:MAX_PROSE]) | {0}
    return [c.label for j, c in enumerate(cols) if j not in long or j in keep][:MAX_COLUMNS]


def choices(report: Report) -> list[str]:
    """Every column a slide could show, over the report's tables (in their order; a ratio once, "vs ref")."""
    seen: dict[str, str] = {}
    for table in report.tables:
        for c in screen(table).cols:
            seen.setdefault(_generic(c), c.label)
    return list(seen.values())


def parse_columns(text: str | Sequence[str] | None) -> list[str] | None:
    """``--columns "variant,forward (ms),forward vs ref"`` -> the names; None (the defaults) when empty."""
    if text is None:
        return None
    names = [c.strip() for c in (text.split(",") if isinstance(text, str) else text) if c and c.strip()]
    if len(names) > MAX_COLUMNS:
        raise RnnlabError(f"--columns: {len(names)} columns given; a slide shows at most {MAX_COLUMNS}")
    return names or None


def pick(table: TableView, columns: Sequence[str] | None = None) -> TableView:
    """``table`` as a slide shows it: :func:`screen`, then the chosen ``columns`` (those this table has, in the order
    given), else :func:`default_columns`."""
    table = screen(table)
    have: dict[str, int] = {}
    for j, c in enumerate(table.cols):
        have.setdefault(_generic(c), j)
    idx = [next(have[n] for n in _asked(c) if n in have) for c in columns or () if have.keys() & _asked(c)]
    if not idx:
        idx = [table.columns.index(c) for c in default_columns(table)]
    return select(table, list(dict.fromkeys(idx))[:MAX_COLUMNS])


# ---------------------------------------------------------------------------------------------------- cells

CELL_MAX = 120  # characters: a slide's cell holds a value; longer sentences go to the appendix
CELL_CLIP = 80  # a long cell in a column of short ones: its start, cut at a word, stays in the table


def head_column(table: TableView) -> int:
    """The column that names a row in an appendix bullet: its first column of sentences (the claim, the pitfall),
    else the "name" role."""
    wordy = [j for j, c in enumerate(table.cols) if c.kind == "prose" and c.role != "figures"]
    return next(iter(wordy or table.role("name") or [0]))


def _cut(text: str, limit: int = CELL_CLIP) -> str:
    """``text`` cut at a word to at most ``limit`` characters, with an ellipsis."""
    cut = text[:limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:(")
    return (cut or text[:limit - 1]) + "…"


def paragraphs(table: TableView) -> tuple[TableView, tuple[str, tuple[str, ...]]]:
    """``table`` with its cells of sentences (kinds prose and text, not the row's name, not code: a program is
    one value) of at most :data:`CELL_MAX` characters, and the bullets of what it left out ("<row's name>: <the
    whole cell>", under a title that names the columns). A column most of whose cells are longer leaves the table
    whole (the Claims deck's "measured"); in a column of short cells a long one keeps its start, cut at a word."""
    head = head_column(table)
    long = [j for j, c in enumerate(table.cols) if c.kind in ("prose", "text") and j != head and c.role != "name"
            and any(len(r[j]) > CELL_MAX for r in table.rows)]
    if not long:
        return table, ("", ())
    moved = [j for j in long if 2 * sum(len(r[j]) > CELL_MAX for r in table.rows) > len(table.rows)]
    bullets = [f"{r[head]}: {r[j]}" if len(long) == 1 else f"{r[head]}: {table.cols[j].label}: {r[j]}"
               for j in long for r in table.rows if r[j].strip() not in _BLANK
               and (j in moved or len(r[j]) > CELL_MAX)]
    rows = tuple(tuple(_cut(c) if j in long and len(c) > CELL_MAX else c for j, c in enumerate(r))
                 for r in table.rows)
    keep = [j for j in range(len(table.columns)) if j not in moved]
    title = f"Appendix: {', '.join(table.cols[j].label for j in long)}, in full ({table.title})"
    return select(table, keep, rows=tuple(tuple(r[j] for j in keep) for r in rows)), (title, tuple(bullets))


# ---------------------------------------------------------------------------------------------------- bullets

MIN_GROUP = 3  # this many bullets that differ only in their subject and figures are said as one
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def _merged_numbers(texts: Sequence[str]) -> str:
    """One text of ``texts`` (which differ only in their numbers): a number that differs as its range."""
    numbers = [_NUMBER.findall(t) for t in texts]
    parts = _NUMBER.split(texts[0])
    out = [parts[0]]
    for k, part in enumerate(parts[1:]):
        seen = [n[k] for n in numbers]
        low, high = min(seen, key=float), max(seen, key=float)
        out += [low if float(low) == float(high) else f"{low}–{high}", part]
    return "".join(out)


def grouped(sentences: Sequence[Sentence]) -> list[Sentence]:
    """``sentences`` with those that say the same thing of different subjects ("<subject>: <the same words, other
    figures>", at least :data:`MIN_GROUP` of them; the subject is what comes before a colon outside brackets) said
    once: the words, a figure that differs as its range, then how many and which subjects. In the order of each group's first sentence."""
    keys = []
    for s in sentences:
        subject, sep, rest = s.body.partition(": ")
        whole = subject.count("(") == subject.count(")")  # a colon inside brackets ends no subject
        keys.append((s.where, _NUMBER.sub("#", rest)) if sep and subject and rest and whole else None)
    counts: dict = {}
    for k in keys:
        counts[k] = counts.get(k, 0) + 1
    out, done = [], set()
    for s, k in zip(sentences, keys):
        if k is None or counts[k] < MIN_GROUP:
            out.append(s)
        elif k not in done:
            done.add(k)
            same = [t for t, kk in zip(sentences, keys) if kk == k]
            subjects = [t.body.partition(": ")[0] for t in same]
            body = (_merged_numbers([t.body.partition(": ")[2] for t in same]).rstrip(".")
                    + f"; the same for all {len(same)}: {', '.join(subjects)}.")
            statuses = {t.status for t in same}
            out.append(Sentence(body, s.where, statuses.pop() if len(statuses) == 1 else None))
    return out


# ---------------------------------------------------------------------------------------------------- the deck

def pairs(report: Report) -> tuple[tuple[int, ...], ...]:
    """The charts of each table: the report's own ``pairs``; else all charts with a single table, one chart per
    table when they are as many, otherwise every chart after the last table."""
    n, k = len(report.tables), len(report.charts)
    if report.pairs or not n:
        return report.pairs
    if n == 1:
        return (tuple(range(k)),)
    if n == k:
        return tuple((i,) for i in range(n))
    return tuple(() for _ in range(n - 1)) + (tuple(range(k)),)


def talk(report: Report, columns: Sequence[str] | None = None) -> Report:
    """The talk deck of a page's view: every table cut to at most :data:`MAX_COLUMNS` of its screen columns (the
    user's ``columns`` or :func:`default_columns`), each paired with its charts, the page's takeaways kept.

    Refuses (``RnnlabError``) column names that no table has, naming those it has."""
    columns = parse_columns(columns)
    if columns:
        known = {_generic(c) for t in report.tables for c in screen(t).cols}
        unknown = [c for c in columns if not known & set(_asked(c))]
        if unknown:
            raise RnnlabError(f"--columns: no table has {', '.join(repr(clip(c, 40)) for c in unknown)}; "
                              f"choose from {clip(', '.join(choices(report)), 300)}")
    said = grouped([replace(t, body=plain(t.body), where=plain(t.where)) for t in report.takeaways])
    opener, lines = shared_opening(said)  # whose machine (each sentence's ``where``), said once
    tables, appendix = [], []
    for table in report.tables:
        table, notes = paragraphs(pick(table, columns))
        tables.append(table)
        appendix += [notes] if notes[1] else []
    return replace(report, subtitle=short_subtitle(report), tables=tuple(tables), pairs=pairs(report),
                   takeaways=tuple(lines), takeaway_note=opener, appendix=tuple(appendix))


# what a title slide's facts already say (machine, source, versions, dates) or what belongs on a table's slide
_SAID_ELSEWHERE = re.compile(r"\b(bundled|measured here|imported|TensorFlow \d|Keras \d|exported|\d{4}-\d\d-\d\d|"
                             r"median of|warm-up|interval|rounds?\b|busy machine)", re.I)


SUBTITLE_MAX = 160  # characters: two lines of a title slide


def short_subtitle(report: Report) -> str:
    """The title slide's subtitle: what the page measured, said once. The page's subtitle without the
    configuration the title already names, the machine, versions and dates the title slide's facts give, and the
    method, which the table's slide carries in its caption."""
    title = report.title.lower()
    kept = []
    for sentence in re.split(r"(?<=\.)\s+", report.subtitle or ""):  # a sentence about the source goes whole
        if _SAID_ELSEWHERE.search(sentence) and not re.search(r";\s", sentence):
            continue
        kept += [c.strip() for c in re.split(r";\s+", sentence)
                 if c.strip() and c.strip().rstrip(".").lower() not in title and not _SAID_ELSEWHERE.search(c)]
    text = "; ".join(kept)
    numbers = re.findall(r"\d+", text)
    if numbers and any(all(n in t.text for n in numbers) for t in report.takeaways):
        return ""  # the takeaways say it
    return text if len(text) <= SUBTITLE_MAX else ""  # longer: a method, which the table's caption says


def plain(text: str) -> str:
    """A page's sentence without its Markdown emphasis and code marks, for a slide."""
    return re.sub(r"\*\*|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)|`", "", str(text))


# ---------------------------------------------------------------------------------------------------- --view

def parse_view(spec: str) -> tuple[str, dict[str, str]]:
    """``"unrolling?cell=lstm&ref=keras"`` -> ``("unrolling", {"cell": "lstm", "ref": "keras"})``: a page name and
    its URL query (a pasted URL's path works too: ".../unrolling?cell=lstm")."""
    text = str(spec).strip()
    name, _, query = text.partition("?")
    name = name.rstrip("/").rsplit("/", 1)[-1].strip().lower()
    if name not in PAGES:
        raise RnnlabError(f"--view: unknown page {clip(repr(name or text))}; choose one of {', '.join(PAGES)} "
                          "(with the page's URL settings after '?')")
    try:
        pairs_ = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise RnnlabError(f"--view: cannot read the settings {clip(repr(query))}: write them as a URL query, "
                          "key=value&key=value") from None
    return name, dict(pairs_)


def page_view(spec: str, records: Sequence[Any], env: Mapping[str, Any] | None = None) -> Report:
    """The Report the page named in ``spec`` shows for its URL settings (``rnnlab.present.<page>.view``): what
    ``export --view`` and the page's download build from. Bad settings raise ``RnnlabError`` (one line)."""
    name, query = parse_view(spec)
    module = importlib.import_module(f"rnnlab.present.{name}")
    return module.view(records, query, env=env)


def known(query: Mapping[str, str], keys: Sequence[str], page: str) -> None:
    """Refuse a setting the page does not have (a typo would otherwise be ignored in silence)."""
    unknown = [k for k in query if k not in keys]
    if unknown:
        raise RnnlabError(f"--view {page}: unknown setting {clip(repr(unknown[0]))}; the page's settings are "
                          f"{', '.join(keys) or 'none'}")


def refused(page: str, problem: str) -> RnnlabError:
    """A page's URL problem (``urlstate.decode``: "URL: ...; using the default") as the one-line error of ``--view``,
    where nothing falls back."""
    text = re.sub(r"; (using|ignored|showing)\b.*$", "", str(problem).removeprefix("URL: "))
    return RnnlabError(f"--view {page}: {text}")
