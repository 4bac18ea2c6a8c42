"""The judging rules: margins, tolerances and "A beats B", the same for every claim, finding, page and export (pure).

- A speed or memory difference counts at ``MARGIN`` (10%) or more: A beats B when ``1 - A/B >= MARGIN`` (the seeds'
  own percentages are of this kind: 482 -> 387 ms is "about 20% faster"). When both records carry quartiles of their
  timed steps (``<metric>_p25`` / ``_p75``) a win also needs A's p75 below B's p25, and overlapping quartiles are
  never a loss ("within the noise").
- Numbers that should agree (a float32 variant against a float64 reference, a converted model against the TF1
  graph) agree when they differ by at most ``ATOL``.
- A ratio within ``MARGIN`` of 1 reads "about the same" in every sentence rnnlab writes.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

STATUSES = ("holds", "does not hold", "depends", "too noisy to call", "not measured", "not measurable here")
MARGIN = 0.10  # a speed or memory difference below 10% is not a difference
NOISE = 0.10  # rounds that disagree by more than 10% of their median: the figure is flagged as noisy
ATOL = 1e-5  # float32 against a float64 reference or a converted model: "computes the same"


def gain(win: float, lose: float) -> float:
    """The share of ``lose`` saved by ``win`` (negative: ``win`` is bigger)."""
    return 1.0 - win / lose if lose > 0 else 0.0


def agrees(diff: float | None, atol: float = ATOL) -> bool:
    """A max |difference| within the tolerance (None or NaN: not shown to agree)."""
    return diff is not None and math.isfinite(diff) and diff <= atol


def _quartiles(m: Mapping[str, float], metric: str) -> tuple[float, float] | None:
    lo, hi = m.get(f"{metric}_p25"), m.get(f"{metric}_p75")
    return None if lo is None or hi is None else (lo, hi)


def beats(win: Mapping[str, float], lose: Mapping[str, float], metric: str, at_least: float = MARGIN, *,
          higher: bool = False) -> tuple[bool, str]:
    """Does ``win`` save at least ``at_least`` of ``lose``'s ``metric``? (metrics mappings of two records)

    ``at_least`` < 0 means "is not more than that much worse". ``higher``: the metric is a rate (steps/s), so more
    is better. Returns (outcome, a note for the reader: "" or " (quartiles overlap: within the noise)")."""
    w, l = win[metric], lose[metric]
    if higher:
        w, l = 1.0 / w if w else math.inf, 1.0 / l if l else math.inf
    g = gain(w, l)
    qw, ql = _quartiles(win, metric), _quartiles(lose, metric)
    if qw is None or ql is None:
        return g >= at_least, ""
    if higher:  # quartiles of a rate turn around under 1/x
        qw, ql = (1 / qw[1], 1 / qw[0]), (1 / ql[1], 1 / ql[0])
    (w25, w75), (l25, l75) = qw, ql
    overlap = w25 <= l75 and l25 <= w75
    ok = (g >= at_least and w75 < l25) if at_least > 0 else (g >= at_least or overlap)
    note = " (quartiles overlap: within the noise)" if overlap and abs(g) >= MARGIN else ""
    return ok, note


def call(interval, at_least: float = MARGIN) -> str:
    """Judge "A saves at least ``at_least`` of B" from the interval of A/B (``core.stats.Interval``):
    "holds" when the whole interval clears it, "does not hold" when none of it does, else "too noisy to call"."""
    bound = 1.0 - at_least
    if interval.hi <= bound:
        return "holds"
    if interval.lo > bound:
        return "does not hold"
    return "too noisy to call"


def noisy(spread: float | None) -> bool:
    """Rounds whose spread ((max - min) / median) exceeds ``NOISE``."""
    return spread is not None and spread > NOISE


def impossible(metrics: Mapping[str, float]) -> list[str]:
    """What cannot be true of one record's metrics: a training step (forward + backward + update) faster than its
    forward step, a roofline fraction above 1. Each a sentence; an empty list when all is plausible."""
    out = []
    fwd, train = metrics.get("fwd_ms"), metrics.get("train_ms")
    if fwd is not None and train is not None and train < fwd:
        out.append(f"the training step ({train:.3g} ms) is faster than the forward step ({fwd:.3g} ms)")
    roof = metrics.get("roofline_frac")
    if roof is not None and roof > 1:
        out.append(f"{roof:.2f} of the matmul rate (above 1: the rate or the time is wrong)")
    return out


def aggregate(outcomes: Sequence[bool]) -> str:
    """Outcomes of one claim over configurations or measures -> holds / does not hold / depends / not measured."""
    if not outcomes:
        return "not measured"
    if all(outcomes):
        return "holds"
    if not any(outcomes):
        return "does not hold"
    return "depends"


def about_same(ratio: float) -> bool:
    """A ratio within ``MARGIN`` of 1 (either way)."""
    return math.isfinite(ratio) and ratio > 0 and max(ratio, 1 / ratio) < 1 + MARGIN
