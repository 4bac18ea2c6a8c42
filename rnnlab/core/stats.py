"""Timing statistics. The clock is injected so tests pin time without really timing anything."""

from __future__ import annotations

import dataclasses
import functools
import math
import statistics
import time
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True, slots=True)
class Timing:
    """Per-call times in milliseconds after warm-up: median and quartiles (inclusive method)."""

    median_ms: float
    p25_ms: float
    p75_ms: float
    n: int

    @classmethod
    def of(cls, samples_ms: list[float]) -> "Timing":
        if not samples_ms:
            raise ValueError("no samples")
        if len(samples_ms) == 1:
            v = samples_ms[0]
            return cls(v, v, v, 1)
        q = statistics.quantiles(samples_ms, n=4, method="inclusive")
        return cls(statistics.median(samples_ms), q[0], q[2], len(samples_ms))


def time_once(fn: Callable[[], object], clock: Callable[[], float] = time.perf_counter) -> tuple[float, object]:
    """Seconds one call of ``fn`` took, and what it returned."""
    t0 = clock()
    out = fn()
    return clock() - t0, out


def time_steps(fn: Callable[[], object], repeats: int, warmup: int,
               clock: Callable[[], float] = time.perf_counter) -> Timing:
    """Call ``fn`` ``warmup`` times untimed, then ``repeats`` times timed one by one.

    ``fn`` must block until its result is computed (``Session.run`` does; eager code returns numpy).
    """
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        samples.append((clock() - t0) * 1000.0)
    return Timing.of(samples)


# -- rounds --------------------------------------------------------------------------------------------------------
# A measurement is R rounds, each a fresh worker process; a record keeps every round's metrics. The headline figure
# is the median of the rounds; the spread is across rounds, beside the within-window quartiles of each round.

def combine_rounds(rounds: list[dict[str, float]]) -> dict[str, float]:
    """The record's metrics from its rounds: per metric, the median over the rounds that have it."""
    names = dict.fromkeys(k for r in rounds for k in r)
    return {k: float(statistics.median([r[k] for r in rounds if k in r])) for k in names}


def round_values(rounds, metric: str) -> list[float]:
    """``metric`` in each round that has it (``rounds``: a record's ``round_metrics``)."""
    return [float(r[metric]) for r in rounds if metric in r]


def spread(values: list[float]) -> float | None:
    """How much the rounds disagree: (max - min) / median (None with fewer than two values or a zero median)."""
    if len(values) < 2:
        return None
    mid = statistics.median(values)
    return (max(values) - min(values)) / mid if mid else None


# Metrics that are counts, the same in every build of one graph: one round's ratio of them is exact.
EXACT = ("graph_nodes",)

# How each kind of interval is said in captions and the glossary (``Interval.how`` -> words).
HOW_WORDS = {"paired": "the 95% confidence interval of the ratio from windows timed seconds apart, interleaved in a"
                       " random order (a bootstrap over rounds of fresh processes and the windows within them)",
             "rounds": "the 95% prediction interval of the per-round ratios (where another run's ratio should fall)",
             "quartiles": "the interval from the timed steps' quartiles (one round)",
             "exact": "exact: a count of graph nodes, the same in every build (one round)"}


@dataclass(frozen=True, slots=True)
class Interval:
    """A ratio A/B with its interval: ``lo <= mid <= hi``. ``how`` says where the interval came from:
    "paired" (an interleaved point: windows of A and B timed seconds apart, ``paired_interval``), "rounds" (two rounds or more: the 95% prediction interval of the per-round ratios, rounds paired by index: both
    ran in the same round), "quartiles" (one round: the timed steps' quartiles), "exact" (one round of a count the
    same in every build: lo == mid == hi), or "none" (no spread known: lo == mid == hi; it decides nothing)."""

    lo: float
    mid: float
    hi: float
    how: str
    n: int  # rounds (or 1); paired: the windows paired
    unsettled: str = ""  # why it decides nothing though narrow: its rounds were timed under different conditions

    @property
    def known(self) -> bool:
        return self.how != "none"

    def inverse(self) -> "Interval":
        """B/A of the same measurements: every bound inverted."""
        return Interval(1 / self.hi, 1 / self.mid, 1 / self.lo, self.how, self.n, self.unsettled)


# t quantiles (0.975) for 1..9 degrees of freedom: a prediction interval from few rounds is wide, on purpose
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262)
_Z975 = 1.96  # ten rounds or more


def _t975(n: int) -> float:
    """The 0.975 quantile of Student's t for the mean of ``n`` values (``n - 1`` degrees of freedom)."""
    return _T975[n - 2] if 2 <= n <= len(_T975) + 1 else _Z975


def _pairs(a_rounds, b_rounds, metric: str) -> list[tuple[float, float]]:
    """(A, B) of ``metric`` per round, round i of A against round i of B (the order of variants rotates between
    rounds, so each pair ran under the same conditions); rounds where either is missing or not positive left out."""
    return [(float(a[metric]), float(b[metric])) for a, b in zip(a_rounds, b_rounds)
            if a.get(metric, 0) > 0 and b.get(metric, 0) > 0]


def prediction(a_rounds, b_rounds, metric: str) -> tuple[float, float] | None:
    """Where another run's ratio (the mean of as many rounds, on a log scale) should fall, 95%: the per-round log
    ratios' mean +- t * s * sqrt(2 / n). Needs two rounds or more.

    Chosen over the range of the per-round ratios by ``bench-stability`` on this project's own records: two quiet
    windows on a 2-core machine, 66 ratios with 3 rounds each; run 2's ratio fell inside run 1's range 39 times,
    inside this interval 62 times (about the 95% it promises)."""
    logs = [math.log(x / y) for x, y in _pairs(a_rounds, b_rounds, metric)]
    n = len(logs)
    if n < 2:
        return None
    mean = sum(logs) / n
    t = _T975[n - 2] if n - 1 <= len(_T975) else _Z975
    half = t * statistics.stdev(logs) * math.sqrt(2 / n)
    return math.exp(mean - half), math.exp(mean + half)


def ratio_interval(a_rounds, b_rounds, metric: str) -> Interval | None:
    """A/B of ``metric`` with an interval, from two records' ``round_metrics``.

    With two rounds or more on both sides: the median of the per-round ratios, and the 95% prediction interval
    (``prediction``: where the next run's ratio should fall, not only where these rounds fell).
    With one round: the quartiles of the timed steps, ``A.p25 / B.p75`` .. ``A.p75 / B.p25``, when both have them;
    a count the same in every build (``EXACT``) is its own interval; anything else has no spread known ("none":
    ``rules.direction`` calls nothing from it).
    """
    pairs = _pairs(a_rounds, b_rounds, metric)
    if not pairs:
        return None
    if len(pairs) >= 2:
        ratios = [x / y for x, y in pairs]
        mid = float(statistics.median(ratios))
        lo, hi = prediction(a_rounds, b_rounds, metric)
        return Interval(min(lo, mid), mid, max(hi, mid), "rounds", len(ratios))
    (x, y), a, b = pairs[0], a_rounds[0], b_rounds[0]
    q = [m.get(f"{metric}_{k}") for m in (a, b) for k in ("p25", "p75")]
    if None not in q and q[2] > 0 and q[3] > 0:
        a25, a75, b25, b75 = q
        return Interval(min(a25 / b75, x / y), x / y, max(a75 / b25, x / y), "quartiles", 1)
    return Interval(x / y, x / y, x / y, "exact" if metric in EXACT else "none", 1)


# -- other interval rules, scored by ``bench-stability`` beside ``ratio_interval`` (not shown on screen) ---------------

def round_range(a_rounds, b_rounds, metric: str) -> tuple[float, float] | None:
    """The lowest and highest per-round ratio (this project's rule before the prediction interval)."""
    ratios = [x / y for x, y in _pairs(a_rounds, b_rounds, metric)]
    return (min(ratios), max(ratios)) if len(ratios) >= 2 else None


def quartile_union(a_rounds, b_rounds, metric: str) -> tuple[float, float] | None:
    """The widest of each round's ratio and quartile ratio (``A.p25 / B.p75 .. A.p75 / B.p25``): the rounds' spread
    plus the spread of the timed steps inside each round."""
    lo, hi = [], []
    for a, b in zip(a_rounds, b_rounds):
        if a.get(metric, 0) <= 0 or b.get(metric, 0) <= 0:
            continue
        lo.append(a[metric] / b[metric])
        hi.append(a[metric] / b[metric])
        q = [m.get(f"{metric}_{k}") for m in (a, b) for k in ("p25", "p75")]
        if None not in q and q[2] > 0 and q[3] > 0:
            lo.append(q[0] / q[3])
            hi.append(q[1] / q[2])
    return (min(lo), max(hi)) if lo else None


CANDIDATES = {"range of rounds": round_range, "quartile union": quartile_union}


# -- paired windows (the interleaved protocol) ------------------------------------------------------------------------
# Two fresh processes of the same code differ a little in speed (where their memory lands, which core they start on):
# the SD of the log ratio of an A/A pair's round medians was 0.018 here (`calibrate --shape user`, quiet, 16 pairs of
# 2-3 rounds), of which the windows' own noise explains about 0.01. A bootstrap over two or three rounds cannot see
# that spread (it resamples what it has), so every paired interval also carries this much between-process variance,
# shrinking with the rounds: 1.96 * PROCESS_SD / sqrt(rounds), added in quadrature to the bootstrap's half-widths.
PROCESS_SD = 0.015
# And a ratio drifts between runs minutes apart by more than the rounds of one run show (rounds seconds apart agree):
# on the 2-core EPYC VM, six runs of one configuration (`bench-stability --preset none --runs 6 --contend 0,1`) put
# keras_unroll's forward ratio at 1.34x, 1.36x and 1.51x in three quiet runs whose own rounds agreed within 2%. Without
# this term one quiet run's ratio fell inside another's interval in 22 of 36 pairs (61%); with 0.02, 29 of 36 (81%),
# at no cost to the calibration's detections (+20% called slower in 16 of 16 quiet, 13 of 16 beside one process).
DRIFT_SD = 0.02


def drift_floor() -> float:
    """The least half-width a paired interval has however many rounds it pools, as a fraction of the ratio
    (``DRIFT_SD`` at 95%: about 4%): a ratio nearer than this to the margin cannot be decided by more rounds."""
    return math.exp(_Z975 * DRIFT_SD) - 1


def least_halfwidth(rounds: int) -> float:
    """The half-width (log scale) below which no paired interval of ``rounds`` rounds narrows, however many windows
    they hold: the between-process and between-run terms :func:`paired_interval` adds."""
    return _Z975 * math.hypot(PROCESS_SD / math.sqrt(max(1, rounds)), DRIFT_SD)


BOOTSTRAP = 1000  # resamples (the 2.5% and 97.5% points move by under 1% of the ratio between seeds)
_BOOT_SEED = 20170422  # fixed: the same records give the same interval on every page and every run


def paired_logs(a_rounds, b_rounds) -> list:
    """Per round, the log ratios of A's window over B's window of the same cycle (both timed seconds apart),
    as NumPy arrays; windows that are missing or not positive left out, empty rounds dropped."""
    import numpy as np

    out = []
    for a, b in zip(a_rounds, b_rounds):
        n = min(len(a), len(b))
        x, y = np.asarray(a[:n], dtype=float), np.asarray(b[:n], dtype=float)
        ok = (x > 0) & (y > 0) & np.isfinite(x) & np.isfinite(y)
        if ok.any():
            out.append(np.log(x[ok] / y[ok]))
    return out


def paired_interval(a_rounds, b_rounds, *, level: float = 0.95, resamples: int = BOOTSTRAP) -> Interval | None:
    """See :func:`_paired`; cached on the windows' values (pages ask for the same pairs on every render)."""
    key = lambda rounds: tuple(tuple(float(v) for v in r) for r in rounds)  # noqa: E731
    return _paired(key(a_rounds), key(b_rounds), level, resamples)


@functools.lru_cache(maxsize=8192)
def _paired(a_rounds, b_rounds, level: float, resamples: int) -> Interval | None:
    """A/B from paired windows (``a_rounds[r][c]`` and ``b_rounds[r][c]`` timed in cycle ``c`` of round ``r``): the
    median of the paired ratios, and a 95% confidence interval for it by a two-level (nested) bootstrap: rounds drawn
    with replacement, then the windows within each drawn round. Resampling the rounds keeps what differs between
    fresh processes in the interval (Kalibera & Jones 2013: the level with the variance must be resampled); the windows
    within a round are paired in time, so the load a machine has at the moment cancels out of each ratio. Few rounds
    under-show the processes' own difference: ``PROCESS_SD`` is added to each half-width. A percentile bootstrap of few
    windows is too narrow (three build windows in two rounds replicated in 3 of 6 pairs of runs on a 2-core Xeon), so
    no half-width is narrower than a t interval's of the pooled windows (6 of 6 then). None with fewer than three
    paired windows. Deterministic (a fixed seed): the same records, the same interval."""
    import numpy as np

    logs = paired_logs(a_rounds, b_rounds)
    total = sum(len(x) for x in logs)
    if total < 3:
        return None
    rng = np.random.default_rng(_BOOT_SEED)
    r, width = len(logs), max(len(x) for x in logs)
    padded = np.full((r, width), np.nan)
    for i, x in enumerate(logs):
        padded[i, :len(x)] = x
    sizes = np.array([len(x) for x in logs])
    pick = rng.integers(0, r, size=(resamples, r))  # which rounds each resample draws
    cols = (rng.random((resamples, r, width)) * sizes[pick][:, :, None]).astype(int)  # windows within each
    draws = padded[pick[:, :, None], cols]
    draws[np.arange(width)[None, None, :] >= sizes[pick][:, :, None]] = np.nan  # a round draws its own count
    meds = np.nanmedian(draws.reshape(resamples, -1), axis=1)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(meds, [tail, 100 - tail])
    pooled = np.concatenate(logs)
    mid = float(np.median(pooled))
    least = _t975(total) * float(np.std(pooled, ddof=1)) / math.sqrt(total)  # few windows: a t interval's width
    lo, hi = mid - max(mid - lo, least), mid + max(hi - mid, least)
    extra = _Z975 * math.hypot(PROCESS_SD / math.sqrt(r), DRIFT_SD)  # what the rounds of one run cannot show
    lo, hi = mid - math.hypot(mid - lo, extra), mid + math.hypot(hi - mid, extra)
    return Interval(float(np.exp(lo)), float(np.exp(mid)), float(np.exp(hi)), "paired", int(total))


REF = "@ref"  # an arm's reference brackets, ``fwd_ms@ref`` beside its ``fwd_ms`` windows (``engine.interleave``)
OTHER = "@other"  # each window's reading of other processes' cores (``core.condition``), ``fwd_ms@other``


def round_loads(*series, metric: str) -> list[list[float]]:
    """Per round, every reading of other processes' cores while ``metric``'s windows of these series were timed."""
    per: list[list[float]] = []
    for s in series:
        for i, r in enumerate(s.get(metric + OTHER) or []):
            while len(per) <= i:
                per.append([])
            per[i].extend(float(x) for x in r if isinstance(x, (int, float)))
    return per


def unsettled(*series, metric: str) -> str:
    """Why windows of these series must not be pooled into one call: the rounds were timed under different
    conditions (their median readings of other processes' cores further apart than ``rules.SAME_LOAD``); "" when
    they were alike or nothing was read."""
    from rnnlab.core import rules
    from rnnlab.core.condition import per_round

    rounds = per_round(round_loads(*series, metric=metric))
    if len(rounds) < 2 or rules.same_load(*rounds):
        return ""
    said = ", then ".join(f"{x:.1f}" for x in rounds)
    return f"other processes took {said} cores in its rounds: the load changed, so its windows are not pooled"


def against_ref(series, metric: str):
    """An arm's windows of ``metric`` and, aligned with them, its reference brackets (the geometric mean of the
    reference's windows just before and just after each, or its pair), per round; (None, None) without brackets."""
    own, brackets = series.get(metric), series.get(metric + REF)
    if not own or not brackets or not any(own):
        return None, None
    return own, brackets


def session_interval(a_series, b_series, metric: str) -> Interval | None:
    """A/B of ``metric`` from one interleaved session's windows (each a mapping: series -> windows per round):
    both bracketed by the reference, cycle by cycle through it ((A/R) / (B/R)); one of them the reference itself
    (it has windows, no brackets); or, windows without brackets on both sides, paired by index. ``unsettled`` when
    the rounds were timed under different conditions (:func:`unsettled`): narrow or not, it decides nothing."""
    iv = _session_interval(a_series, b_series, metric)
    why = unsettled(a_series, b_series, metric=metric) if iv is not None else ""
    return dataclasses.replace(iv, unsettled=why) if why else iv


def _session_interval(a_series, b_series, metric: str) -> Interval | None:
    (ao, ab), (bo, bb) = against_ref(a_series, metric), against_ref(b_series, metric)

    def over(own, brackets):
        return [[w / r for w, r in zip(o, b) if w > 0 and r > 0] for o, b in zip(own, brackets)]
    if ao is not None and bo is not None:
        return paired_interval(over(ao, ab), over(bo, bb))
    if ao is not None and b_series.get(metric):
        return paired_interval(ao, ab)
    if bo is not None and a_series.get(metric):
        iv = paired_interval(bo, bb)
        return iv.inverse() if iv is not None else None
    if a_series.get(metric) and b_series.get(metric) and metric + REF not in a_series and metric + REF not in b_series:
        return paired_interval(a_series[metric], b_series[metric])
    return None
