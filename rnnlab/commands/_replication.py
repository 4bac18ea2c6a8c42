"""Replication across runs of one plan (``bench-stability --runs N --contend ...``): within each stated condition,
how often one run's ratio to the reference falls inside another run's interval (both ways, every pair of runs), and
whether their calls contradict; across conditions, each ratio per condition side by side, a difference of condition
said as such and never pooled into one figure. Pure: records in, lines out."""

from __future__ import annotations

import itertools
import statistics
from typing import Sequence

from rnnlab.commands._output import wrap
from rnnlab.core import condition, format as fmt, rules
from rnnlab.core.record import Record
from rnnlab.judge import findings

TARGET = 0.80  # an honest 95% interval holds another run's estimate about 83% of the time


def ratios(plan, recs: Sequence[Record], reference: str, metrics: Sequence[str]) -> dict:
    """(point, variant, metric) -> Interval of the variant over the reference, for one run's records."""
    nv, out = len(plan.variants), {}
    for pi in range(len(plan.points)):
        by = {r.variant: r for r in recs[pi * nv:(pi + 1) * nv]}
        ref = by.get(reference)
        for v, r in by.items():
            if v == reference or ref is None or not r.ok or not ref.ok:
                continue
            for m in metrics:
                iv = findings.interval(r, ref, m)
                if iv is not None:
                    out[(pi, v, m)] = iv
    return out


def replication(plan, runs: Sequence[Sequence[Record]], loads: Sequence[int], groups: Sequence[Sequence[int]],
                reference: str, metrics: Sequence[str], width: int | None) -> list[str]:
    """The lines: each run's condition, per condition group the replication figure and contradictions, and the
    ratios that differ between conditions."""
    ivs = [ratios(plan, recs, reference, metrics) for recs in runs]
    lines = []
    for i, recs in enumerate(runs):
        n = loads[i] if i < len(loads) else None
        beside = "" if n is None else f"{n} competing process{'es' if n != 1 else ''}; "
        lines += wrap(f"run {i + 1}: {beside}{condition.words_of(recs) or 'condition not read'}", width)
    for gi, g in enumerate(groups):
        held = total = same = contra = calls = 0
        for i, j in itertools.combinations(g, 2):
            for key in set(ivs[i]) & set(ivs[j]):
                a, b = ivs[i][key], ivs[j][key]
                held += (a.lo <= b.mid <= a.hi) + (b.lo <= a.mid <= b.hi)
                total += 2
                ca, cb = rules.bound(a), rules.bound(b)
                calls += 1
                same += ca == cb
                contra += rules.contradict(ca, cb)
        runs_said = ", ".join(str(i + 1) for i in g)
        if len(g) < 2:
            lines += wrap(f"condition {gi + 1} (run {runs_said}): one run, nothing to replicate", width)
            continue
        share = held / total if total else 0.0
        lines += wrap(f"condition {gi + 1} (runs {runs_said}; {condition.words_of(runs[g[0]])}): replication "
                      f"{held} of {total} ({share:.0%}; target {TARGET:.0%}): one run's ratio inside the other's "
                      f"interval; calls the same in {same} of {calls}, contradicting {contra}", width)
    if len(groups) > 1:
        lines += _across(ivs, groups, runs, width)
    return lines


def _free(recs: Sequence[Record]) -> float | None:
    cs = [c for c in (condition.Condition.of(r.details.get("condition")) for r in recs) if c and c.free is not None]
    return statistics.median(c.free for c in cs) if cs else None


def _across(ivs: list, groups: Sequence[Sequence[int]], runs, width: int | None) -> list[str]:
    """Each ratio's median per condition: where they differ by more than the margin, a difference of condition."""
    lines = wrap("warning: the runs' conditions differ; their ratios are said per condition, never pooled", width)
    keys = sorted(set().union(*ivs), key=str)
    for key in keys:
        per = []
        for g in groups:
            mids = [ivs[i][key].mid for i in g if key in ivs[i]]
            if mids:
                per.append((statistics.median(mids), _free(runs[g[0]])))
        if len(per) < 2:
            continue
        lo, hi = min(m for m, _ in per), max(m for m, _ in per)
        if hi / lo >= 1 + rules.MARGIN:
            said = "; ".join(f"{fmt.fmt_ratio(m)} with {f:.1f} cores free" for m, f in per if f is not None)
            lines += wrap(f"  {key[1]} {key[2]}: {said}: a difference of condition", width)
    return lines
