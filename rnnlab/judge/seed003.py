"""Seed 003's conclusion ("static_rnn builds slower but runs faster") judged on the records one view shows.

The two claims it is made of are the Claims table's (``rnnlab.judge.claims.verdict`` on exactly these records, so the
Variable lengths page never disagrees with that table); the conclusion holds only when both hold (:func:`conclusion`).
Beside the statuses: the static/dynamic ratios the words quote (``findings.interval``, with their intervals) and
whether static_rnn shows the seed's slow start (its first interval's rate at least the margin below its warm rate,
round by round: ``rules.call``). The words are ``rnnlab.present.seed003``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from rnnlab.core.rules import Status
from rnnlab.core import rules, stats
from rnnlab.core.record import Record
from rnnlab.core.stats import Interval
from rnnlab.judge import claims, findings

# the two claims of seed 003's conclusion, as the Claims table judges them
CLAIM_IDS = ("s003_static_runs_faster", "s003_static_builds_slower")


def conclusion(statuses: Sequence[str]) -> str:
    """The status of a conclusion made of several claims, all of which it asserts: not measured when one is not,
    does not hold when one does not, depends when one depends, too noisy to call when one is, holds when all
    hold."""
    for st in (Status.NOT_MEASURED, Status.NOT_MEASURABLE, Status.DOES_NOT_HOLD, Status.DEPENDS, Status.NOISY):
        if st in statuses:
            return st
    return Status.HOLDS if statuses else Status.NOT_MEASURED


@dataclass(frozen=True)
class Judgement:
    """Seed 003's conclusion on one view's records (one configuration on one machine)."""
    status: str  # one of rules.STATUSES: "holds" only when both claims hold
    verdicts: tuple[claims.Verdict, ...]  # the Claims table's verdicts, in CLAIM_IDS order
    static: Record | None  # the static record, when it has steps/s and a build time
    dynamic: Record | None  # the same for dynamic
    steady: Interval | None = None  # static/dynamic of the steps per second once warm
    build: Interval | None = None  # static/dynamic of the build time
    slow_start: bool | None = None  # static_rnn's first interval is slower than its warm rate (None: not measured)

    @property
    def judgeable(self) -> bool:
        """Both records stand and both claims are measured: the words may quote the numbers."""
        return (self.status not in (Status.NOT_MEASURED, Status.NOT_MEASURABLE) and self.static is not None
                and self.dynamic is not None)


def _usable(r: Record | None) -> Record | None:
    return r if r is not None and r.ok and "steps_per_s" in r.metrics and "build_s" in r.metrics else None


def _call(iv) -> str:
    """``rules.call`` on an interval; no ratio does not hold."""
    return rules.call(iv) if iv is not None else Status.DOES_NOT_HOLD


def slow_start(rec: Record) -> bool | None:
    """Whether ``rec``'s first interval ran at least the margin slower than once warm, round by round (None: it has
    no first-interval rate)."""
    if "first_interval_steps_per_s" not in rec.metrics:
        return None
    both = [m for m in rec.round_metrics if "first_interval_steps_per_s" in m and "steps_per_s" in m]
    return _call(stats.ratio_interval([{"rate": m["first_interval_steps_per_s"]} for m in both],
                                      [{"rate": m["steps_per_s"]} for m in both], "rate")) == Status.HOLDS


def judge(recs: Sequence[Record], static: Record | None, dynamic: Record | None) -> Judgement:
    """Seed 003's conclusion on ``recs`` (the records one view shows) with their ``static`` and ``dynamic`` records."""
    verdicts = tuple(claims.verdict(cid, recs) for cid in CLAIM_IDS)
    status = conclusion([v.status for v in verdicts])
    s, d = _usable(static), _usable(dynamic)
    if status in (Status.NOT_MEASURED, Status.NOT_MEASURABLE) or s is None or d is None:
        return Judgement(status, verdicts, s, d)
    return Judgement(status, verdicts, s, d, steady=findings.interval(s, d, "steps_per_s"),
                     build=findings.interval(s, d, "build_s"),
                     slow_start=slow_start(s) if "first_interval_steps_per_s" in d.metrics else None)
