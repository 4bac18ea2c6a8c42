"""The Results page's views (no Streamlit): every record as one filterable row, its source in words, and the CSV and
JSON the page offers for the rows the filters show."""

from __future__ import annotations

import csv
import io
import json
from typing import Sequence

import pandas as pd

from rnnlab.core import format as fmt
from rnnlab.core import rules
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record
from rnnlab.core.store import Store
from rnnlab.core.views import TableView
from rnnlab.engine import api
from rnnlab.judge import select
from rnnlab.present import tables
from rnnlab.present.pages import Page

PAGE = Page("results", "Results", ":material/table_view:", order=6)

# source -> its words in the table and the source filter (only this machine's own records say "this machine")
SOURCES = {**select.ORIGIN_WORDS, "baseline": "bundled (read-only)"}
# what the grid's "check" column holds (``tables.check_flag``; its sentences: ``tables.check``, ``rules.impossible``,
# ``rules.NOISE``)
CHECK_HELP = ("failed: the variant did not run; impossible: figures that cannot be true (a training step faster "
              "than the forward step, a roofline above 1); noisy: rounds that disagree by more than "
              f"{fmt.fmt_percent(rules.NOISE)} of their median (! the largest spread). Each flagged row's full check "
              "is listed under the table.")


def record_id(r: Record) -> str:
    """A row's identity: the key alone is not unique (a bundled record may share a local one's key)."""
    return r.key + "|" + r.source


def by_id(records: Sequence[Record]) -> dict[str, Record]:
    """``record_id`` -> record: what a row of ``frame`` stands for."""
    return {record_id(r): r for r in records}


def frame(records: Sequence[Record]) -> pd.DataFrame:
    """One row per record (``tables.results_rows``), the source in words, the date in UTC minutes, ``_id``; and
    for the screen's grid (``GRID``): ``flag`` (``tables.check_flag``), ``detail`` (the failure's reason or the check's
    sentence, whole), ``on`` (``machine_names``' short label) and ``on_about`` (that machine in full)."""
    df = pd.DataFrame(tables.results_rows(records))
    df["source"] = df["source"].map(lambda s: SOURCES.get(s, s))
    df["date"] = df["created_at"].str.replace("T", " ").str.slice(0, 16)  # "2026-12-02 15:38" (UTC)
    df["_id"] = [record_id(r) for r in records]
    df["flag"] = [tables.check_flag(r) for r in records]
    df["detail"] = [row["status"] if not r.ok else row[tables.CHECK] for r, row in zip(records, df.to_dict("records"))]
    names = machine_names(records)
    df["on"] = [names[select.machine_key(r)][0] for r in records]
    df["on_about"] = [names[select.machine_key(r)][1] for r in records]
    return df


# The grid on screen: a row per record on one page width at 1400 px. The date, device, source and status stay in the
# frame (the filters, the CSV and JSON): the machine's short label says where a row comes from, the flag says what
# the check found (its sentence under the grid), and the machines are named in full once, in the caption.
GRID = ("experiment", "variant", "config", "fwd_ms", "train_ms", "flag", "on")
GRID_WHOLE = ("variant", "flag", "on")  # never narrowed: a variant's name, a flag and a label are short
SHORT_MACHINE = 16  # characters: a longer machine label is numbered in the grid ("bundled #2")


def machine_names(records: Sequence[Record]) -> dict[str, tuple[str, str]]:
    """``select.machine_key`` -> (its short label for the grid, that machine in full: name, device, TensorFlow).
    The label is ``select.machine_labels``' when every one is short, else its origin ("this machine", "bundled"),
    numbered when that origin has more than one machine."""
    labels = select.machine_labels(records)
    first: dict[str, Record] = {}
    for r in records:
        first.setdefault(select.machine_key(r), r)
    about = {k: f"{r.machine}, {select.device_of(r)}, TF {r.env.get('tf') or '?'}" for k, r in first.items()}
    if all(len(v) <= SHORT_MACHINE for v in labels.values()):
        return {k: (labels[k], about[k]) for k in labels}
    by_origin: dict[str, list[str]] = {}
    for k in sorted(first, key=lambda k: labels[k]):
        by_origin.setdefault(select.ORIGIN_WORDS.get(first[k].source, first[k].source), []).append(k)
    return {k: (word if len(keys) == 1 else f"{word} #{i}", about[k])
            for word, keys in by_origin.items() for i, k in enumerate(keys, 1)}


def machines_caption(df: pd.DataFrame) -> str:
    """The machines of ``df``'s rows (a ``frame``), each once: its short label and what it is."""
    return _machines_words(sorted(set(zip(df["on"], df["on_about"]))))


def _machines_words(pairs) -> str:
    """(short label, that machine in full) pairs in words: "machine: bundled #1 is AMD EPYC, 2 cores, CPU, TF ..."."""
    return "machine: " + "; ".join(f"{label} is {about}" for label, about in pairs)


def details(df: pd.DataFrame) -> list[tuple[str, str]]:
    """(the row named: experiment, variant, config, machine; its ``detail`` whole) for each flagged row of ``df``."""
    return [(f"{r['experiment']} · {r['variant']} · {r['config']} · {r['on']}", r["detail"])
            for r in df.to_dict("records") if r["detail"]]


def source_choices(df: pd.DataFrame) -> list[str]:
    present = set(df["source"])
    return [w for w in SOURCES.values() if w in present]


def filtered(df: pd.DataFrame, *, experiments: Sequence[str] = (), variants: Sequence[str] = (),
             sources: Sequence[str] = (), text: str = "") -> pd.DataFrame:
    """The rows the filters keep, newest first; ``text``: case-insensitive, literal, in config, device, machine (its
    name and its short label) and status."""
    mask = pd.Series(True, index=df.index)
    if experiments:
        mask &= df["experiment"].isin(experiments)
    if variants:
        mask &= df["variant"].isin(variants)
    if sources:
        mask &= df["source"].isin(sources)
    if text.strip():
        t = text.strip().lower()
        hay = (df["config"].astype(str) + " " + df["device"].astype(str) + " " + df["machine"].astype(str) + " "
               + df["on"].astype(str) + " " + df["status"].astype(str)).str.lower()
        mask &= hay.str.contains(t, regex=False)
    return df[mask].sort_values("created_at", ascending=False).reset_index(drop=True)


# the metrics the "by machine" view offers (``fmt.label`` names them)
MACHINE_METRICS = ("fwd_ms", "train_ms", "build_s", "peak_mem_mb")
metric_label = fmt.label


def by_machine(records: Sequence[Record], metric: str = "fwd_ms") -> TableView:
    """One row per (experiment, configuration, variant), one column per machine (``select.machine_key``: origin,
    environment fingerprint, matmul-rate class), headed by ``machine_names``' short label so the grid's text is whole
    at 1400 px; the caption names each machine in full, once. Each cell is the record that stands there
    (``select.dedupe``), flagged when noisy (``tables.metric_cell``); nothing is divided across machines. Failed
    records and rows no machine measured are left out."""
    recs = [r for r in select.dedupe(records) if r.ok and metric in r.metrics]
    names = machine_names(recs)
    order = sorted(names, key=lambda k: (min(select.SOURCE_RANK.get(r.source, 3) for r in recs
                                             if select.machine_key(r) == k), names[k][0]))
    cells: dict[tuple, dict[str, Record]] = {}
    for r in recs:
        cells.setdefault((r.experiment, fmt.fmt_params(select.config_of(r)), r.variant), {})[select.machine_key(r)] = r
    rows, raw = [], []
    for (exp, config, variant), per in sorted(cells.items()):
        rows.append((exp, config, variant, *(tables.metric_cell(per[k], metric) if k in per else fmt.MISSING
                                              for k in order)))
        raw.append((exp, config, variant, *(per[k].metrics[metric] if k in per else None for k in order)))
    caption = ("One column per machine; a cell is that machine's own record, never a ratio across machines. "
               + _machines_words(names[k] for k in order))
    return TableView(title=f"{fmt.label(metric)} by machine", caption=caption,
                     columns=("experiment", "configuration", "variant", *(names[k][0] for k in order)),
                     rows=tuple(rows), raw=tuple(raw))


def csv_bytes(records: Sequence[Record]) -> bytes:
    """One row per record (what the table shows), as CSV; empty when there are none."""
    rows = tables.results_rows(records)
    if not rows:
        return b""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows({k: fmt.csv_safe(v) for k, v in row.items()} for row in rows)  # no cell runs as a spreadsheet formula
    return buf.getvalue().encode()


def json_bytes(records: Sequence[Record]) -> bytes:
    """The full records with their source: importable here or with ``python -m rnnlab import``."""
    return json.dumps([r.to_dict(with_transient=False) | {"source": r.source} for r in records], indent=1).encode()


def import_upload(data: bytes, *, name: str, store: Store) -> tuple[bool, str | int]:
    """Import an uploaded results file: (True, records imported) or (False, why nothing was)."""
    try:
        return True, api.import_file(data, name=name, store=store)
    except RnnlabError as e:
        return False, str(e)


def read_upload(data: bytes, *, name: str, held: Sequence[Record] = (), held_bytes: int = 0,
                max_records: int, max_mb: float) -> list[Record]:
    """A hosted visitor's upload, parsed and validated but never stored (``api.read_import``): its records, for that
    visitor's session only. Refused (``RnnlabError``, one line) when it would take the session past ``max_mb`` of
    uploads or ``max_records`` records (``held``: what the session already holds, ``held_bytes``: its uploads)."""
    if held_bytes + len(data) > max_mb * 2**20:
        raise RnnlabError(f"{name}: {len(data) / 2**20:.1f} MB; this demo keeps at most {max_mb:g} MB of uploads per "
                          "visit (import larger files into rnnlab on your own machine: `python -m rnnlab import "
                          "FILE`)")
    records = api.read_import(data, name=name)
    if len(held) + len(records) > max_records:
        raise RnnlabError(f"{name}: {len(records)} records; this demo keeps at most {max_records} uploaded records "
                          f"per visit ({len(held)} already); import it into rnnlab on your own machine instead "
                          "(`python -m rnnlab import FILE`)")
    return records


def first_command() -> str:
    """The first, small measurement, as the CLI runs it."""
    return api.first_run_command("unroll")
