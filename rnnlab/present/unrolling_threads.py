"""How a configuration's ratios move with the threads a worker's TensorFlow may use: 1 thread against every core,
from stored records (``--set threads=1`` beside the default). Pure: records in, a table and sentences out.

A ratio holds for its thread count, as torch.utils.benchmark's ``Compare`` groups by ``num_threads``: each figure
here names its own, never one ratio across two. Why they move is measured too: the cores each variant's worker
kept busy while timed at every core (``details.condition.own_cores``, its CPU time over its wall time). A variant
whose step spreads over several cores gains more from the second core than one that keeps to one, and loses more
when another process takes a core: so on a busy machine its ratio lies between the two rows here.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from rnnlab.core import condition, format as fmt, wording
from rnnlab.core.record import Record
from rnnlab.core.views import Column, TableView
from rnnlab.core.wording import Sentence
from rnnlab.judge import select
from rnnlab.present import tables

ONE, ALL = 1, 0  # the ``threads`` values compared: one thread, and every core (the default)
METRICS = (("fwd_ms", "forward"), ("train_ms", "training step"))
SPREADS = 1.3  # a worker keeping at least this many cores busy spreads its step over several


def by_threads(records: Sequence[Record], point: Mapping, variants: Sequence[str]) -> dict[int, dict[str, Record]]:
    """threads -> variant -> the record that stands for ``point`` at that thread count (``select.pick``), each
    thread count's records from the machine of its reference's (or first) record only."""
    out = {}
    for t in (ONE, ALL):
        shown = dict(select.pick(records, {**point, "threads": t}, variants, experiment="unroll").shown)
        if shown:
            out[t] = shown
    keys = {select.machine_key(r) for g in out.values() for r in g.values()}
    if len(keys) > 1:  # two machines: keep the machine both thread counts have, never a ratio across machines
        both = set.intersection(*({select.machine_key(r) for r in g.values()} for g in out.values())) or keys
        key = sorted(both)[0]
        out = {t: {v: r for v, r in g.items() if select.machine_key(r) == key} for t, g in out.items()}
    return out


def _threads(group: Mapping[str, Record]) -> str:
    return condition.threads_words(list(group.values())) or "every core"


def _cores(rec: Record) -> float | None:
    c = condition.Condition.of(rec.details.get("condition"))
    return c.own if c else None


def threads_view(records: Sequence[Record], point: Mapping, variants: Sequence[str], reference: str
                 ) -> tuple[TableView | None, list[Sentence]]:
    """The table (per variant: each ratio to ``reference`` at 1 thread and at every core, and the cores its worker
    kept busy at every core) and the sentences saying what moved and why; (None, []) unless both thread counts are
    stored with their reference."""
    groups = by_threads(records, point, variants)
    if set(groups) != {ONE, ALL} or any(reference not in g for g in groups.values()):
        return None, []
    one, every = groups[ONE], groups[ALL]
    names = [v for v in variants if v in one and v in every]
    cols = [tables.VARIANT]
    for m, label in METRICS:
        for t, g in ((ONE, one), (ALL, every)):
            cols.append(Column(f"{label} vs {reference}, {_threads(g)}", "ratio", "ratio", key=f"{m}@{t}", unit="x",
                               of=m, against=reference))
    cols.append(Column(f"cores kept busy, {_threads(every)}", "number", "metric", key="own_cores", unit="cores"))
    rows, raw = [], []
    for v in names:
        ivs = [tables.interval(g[v], g[reference], m) for m, _ in METRICS for g in (one, every)]
        rows.append([v, *(fmt.fmt_ratio_cell(iv) if iv else fmt.MISSING for iv in ivs),
                     fmt.MISSING if _cores(every[v]) is None else f"{_cores(every[v]):.1f}"])
        raw.append([v, *(iv.mid if iv else None for iv in ivs), _cores(every[v])])
    recs = [*one.values(), *every.values()]
    table = TableView(title=f"Unrolling: 1 thread against {_threads(every)}",
                      caption=f"{fmt_config(point)}; each ratio at its own thread count, never across two; "
                              f"{select.source_note(recs)}",
                      columns=tuple(cols), rows=rows, raw=raw)
    return table, sentences(one, every, names, reference)


def fmt_config(point: Mapping) -> str:
    return fmt.fmt_params(dict(point))


def sentences(one: Mapping[str, Record], every: Mapping[str, Record], names: Sequence[str], reference: str
              ) -> list[Sentence]:
    """Per variant whose ratio moved between the thread counts (the two intervals do not overlap): both figures,
    each with its thread count, and the cores it and the reference kept busy (why it moved)."""
    out = []
    for v in names:
        if v == reference:
            continue
        for m, label in METRICS:
            a, b = (tables.interval(g[v], g[reference], m) for g in (one, every))
            if a is None or b is None or not (a.mid > 0 and b.mid > 0):
                continue
            if not (a.hi < b.lo or b.hi < a.lo):  # the intervals overlap: nothing said to move
                continue
            pa, pb = wording.difference(a), wording.difference(b)
            body = (f"{v}'s {label} is {pa.against(reference)} at 1 thread and {pb.against(reference)} at "
                    f"{_threads(every)}{_why(every[v], every[reference], v, reference)}.")
            out.append(Sentence(body, select.where([one[v], one[reference]], with_condition=False), pb.status))
            break
    return out


def _why(rec: Record, ref: Record, v: str, reference: str) -> str:
    """": keras kept 1.6 cores busy, tf1_dynamic 1.0: ..." from the workers' own CPU time, or "" unread."""
    cv, cr = _cores(rec), _cores(ref)
    if cv is None or cr is None:
        return ""
    more, less = (v, reference) if cv >= cr else (reference, v)
    if max(cv, cr) < SPREADS:
        return f" ({v} kept {cv:.1f} cores busy, {reference} {cr:.1f}: neither spread its step over the cores)"
    if abs(cv - cr) < SPREADS - 1:  # both spread alike: how many cores each used does not explain the move
        return (f" ({v} kept {cv:.1f} cores busy, {reference} {cr:.1f}: both spread their step alike, so the move is "
                "in how well each uses the second core, not in how many cores each keeps busy)")
    return (f" ({v} kept {cv:.1f} cores busy, {reference} {cr:.1f}: {more} spreads its step over more cores, so "
            f"it gains more from a second core than {less}, and loses more when another process takes one)")


def threads_missing(command_one: str) -> str:
    """What to run when the two thread counts are not both stored for this configuration."""
    return ("Not stored at 1 thread and at every core for this configuration. A ratio holds for its thread count: "
            f"measure the other with `{command_one}` (or set threads above and Run).")
