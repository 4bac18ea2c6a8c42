"""The judging rules: margins, tolerances and "A beats B", the same for every claim, finding, page and export (pure).

- A speed or memory difference counts at ``MARGIN`` (10%) or more: A beats B when ``1 - A/B >= MARGIN`` (the seeds'
  own percentages are of this kind: 482 -> 387 ms is "about 20% faster"), judged on the whole interval of A/B
  (``core.stats.ratio_interval``: across rounds, else from one round's quartiles) by :func:`call`: the interval
  clears the margin (holds), misses it (does not hold), or straddles it ("too noisy to call").
- Rounds whose spread exceeds ``NOISE`` flag their figure as noisy; :func:`impossible` names what cannot be true.
- A measurement taken while the machine's load exceeded ``BUSY`` of its cores says so.
- Numbers that should agree (a float32 variant against a float64 reference, a converted model against the TF1
  graph) agree when they differ by at most ``ATOL``.
- A ratio within ``MARGIN`` of 1 reads "about the same" in every sentence rnnlab writes; an interval across one side
  of the margin only says the side it rules out (:func:`bound`: "about the same or higher").
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Mapping, Sequence

class Status(StrEnum):
    """A verdict's status. Its value is its words, what every table, sentence and export says (a ``str``: it
    compares, sorts, hashes and serialises as those words); ``icon`` and ``colour`` are its badge on a page, ``cell``
    how a table cell in that status is shaded. A new status is one member here and one row of ``_LOOK``."""

    HOLDS = "holds"
    DOES_NOT_HOLD = "does not hold"
    DEPENDS = "depends"
    NOISY = "too noisy to call"  # a claim whose interval straddles the margin
    NOT_MEASURED = "not measured"
    NOT_MEASURABLE = "not measurable here"

    @property
    def words(self) -> str:
        return self.value

    @property
    def icon(self) -> str:  # a Material icon name, as ":material/<name>:"
        return _LOOK[self][0]

    @property
    def colour(self) -> str:  # a named colour (green, red, orange, violet, gray)
        return _LOOK[self][1]

    @property
    def cell(self) -> str:  # CSS for a table cell in this status
        return _LOOK[self][2]


_LOOK = {  # status -> (icon, colour, table cell's CSS)
    Status.HOLDS: (":material/check_circle:", "green", "background-color: #d9f2e3"),
    Status.DOES_NOT_HOLD: (":material/cancel:", "red", "background-color: #fbdada"),
    Status.DEPENDS: (":material/contrast:", "orange", "background-color: #fdeccc"),
    Status.NOISY: (":material/blur_on:", "violet", "background-color: #ebe3f7"),
    Status.NOT_MEASURED: (":material/radio_button_unchecked:", "gray", "color: #6b6b6b"),
    Status.NOT_MEASURABLE: (":material/block:", "gray", "color: #6b6b6b"),
}

NOISY = Status.NOISY  # also what :func:`direction` says of an interval across the margin
STATUSES = tuple(Status)
MARGIN = 0.10  # a speed or memory difference below 10% is not a difference
NOISE = 0.10  # rounds that disagree by more than 10% of their median: the figure is flagged as noisy
ATOL = 1e-5  # float32 against a float64 reference or a converted model: "computes the same"
BUSY = 0.5  # a 1-minute load above this share of the cores: "measured on a busy machine" (records before conditions)
BUSY_CORES = 0.5  # other processes taking more than this many cores while timed (or just before a run): busy
SAME_LOAD = 0.35  # two readings of other processes' cores within this are one condition: windows timed under
#                  readings further apart are never paired, rounds further apart are not pooled into one call


def busy(load: float | None, cores: float | None) -> bool:
    """Whether a 1-minute load average means a busy machine: above ``BUSY`` of its cores (the run's warning and
    every figure's "measured on a busy machine" ask this one rule)."""
    return load is not None and bool(cores) and cores > 0 and load > BUSY * cores


def busy_cores(other: float | None) -> bool:
    """Whether other processes took enough of the machine to call it busy (``BUSY_CORES`` cores or more): the run's
    warning and every figure's busy note, from CPU time (``core.condition``), never counting rnnlab's own workers."""
    return other is not None and other > BUSY_CORES


def same_load(*readings: float | None) -> bool:
    """Readings of other processes' cores (``core.condition``) close enough to be one condition (``SAME_LOAD``);
    a missing reading (older records, a platform without counters) does not tell them apart."""
    known = [x for x in readings if x is not None]
    return not known or max(known) - min(known) <= SAME_LOAD


def busy_run(loads: Sequence[float], cores: float | None) -> float | None:
    """The reading that makes a run's figures "measured on a busy machine", or None: ``loads`` are the 1-minute
    load averages noted before and after each round of one record (records from before rnnlab read its condition).
    Every one of them, the first included, can count rnnlab's own workers: the first was read before this record's
    worker started, but after those of the variants before it in the run, and after the previous step's when
    ``python -m scripts.make_baseline`` runs its steps back to back (each keeps up to one core busy per thread, and an
    interleaved round imports TensorFlow in all of them at once). So a reading means a busy machine only above what
    the run itself can explain: ``BUSY`` of the cores plus every core. Checked against the CPU counters: 76 records
    of one make_baseline run on a quiet 2-core VM, whose workers read 0.00-0.06 cores taken by other processes, had
    first readings of 1.01-1.27; judged alone by :func:`busy`, 45 of them read "busy"."""
    if not loads or not cores or cores <= 0:
        return None
    above = [x for x in loads if x > (BUSY + 1.0) * cores]
    return max(above) if above else None


def gain(win: float, lose: float) -> float:
    """The share of ``lose`` saved by ``win`` (negative: ``win`` is bigger)."""
    return 1.0 - win / lose if lose > 0 else 0.0


def agrees(diff: float | None, atol: float = ATOL) -> bool:
    """A max |difference| within the tolerance (None or NaN: not shown to agree)."""
    return diff is not None and math.isfinite(diff) and diff <= atol


def spread_known(interval) -> bool:
    """Whether ``interval`` has a spread to call from (``Interval.known``: not one round of a figure timed once)."""
    return getattr(interval, "known", True)


def call(interval, at_least: float = MARGIN) -> Status:
    """Judge "A saves at least ``at_least`` of B" from the interval of A/B (``core.stats.Interval``):
    "holds" when the whole interval clears it, "does not hold" when none of it does, else "too noisy to call" (also
    for an interval whose rounds' conditions differ: no claim is decided from mixed windows, and for one with no
    spread known, ``Interval.known``: one round of a figure timed once, a ratio with nothing to call it from)."""
    if getattr(interval, "unsettled", "") or not spread_known(interval):
        return NOISY
    bound = 1.0 - at_least
    if interval.hi <= bound:
        return Status.HOLDS
    if interval.lo > bound:
        return Status.DOES_NOT_HOLD
    return NOISY


LOWER, HIGHER, SAME = "lower", "higher", "about the same"  # what :func:`direction` decides, besides NOISY
TOO_BUSY = "too busy to decide"  # an interval from rounds timed under different conditions (``Interval.unsettled``)
DECIDED = (LOWER, HIGHER, SAME)
# what :func:`bound` says of an interval that reaches across one side of the margin only: the side it rules out
NOT_LOWER, NOT_HIGHER = "about the same or higher", "about the same or lower"
BOUNDED = (NOT_LOWER, NOT_HIGHER)
# the zones of the true ratio each statement allows (below the margin, inside it, above it); NOISY allows all three
ZONES = {LOWER: frozenset({LOWER}), SAME: frozenset({SAME}), HIGHER: frozenset({HIGHER}),
         NOT_LOWER: frozenset({SAME, HIGHER}), NOT_HIGHER: frozenset({LOWER, SAME})}


def decided(status: str | None) -> bool:
    """Whether a :func:`direction` is a call (a sentence may state it, bold), not "too noisy" or "too busy"."""
    return status in DECIDED


def bounded(status: str | None) -> bool:
    """Whether a statement (:func:`bound`) rules out one side of the margin only (``BOUNDED``)."""
    return status in BOUNDED


def answered(status: str | None) -> bool:
    """Whether a statement (:func:`bound`) rules something out: a call, or one side of the margin (``BOUNDED``);
    not "too noisy to call" (an interval across both sides) or "too busy to decide"."""
    return status in ZONES


def excludes(status: str | None, truth: frozenset | set) -> bool:
    """Whether ``status`` rules out every zone in ``truth`` (a wrong statement when the true ratio lies there):
    ``calibrate``'s wrong calls, ``bench-stability``'s contradictions (two runs' statements that share no zone)."""
    return answered(status) and ZONES[status].isdisjoint(truth)


def contradict(a: str | None, b: str | None) -> bool:
    """Two statements of one ratio that cannot both be true: each rules something out and they share no zone."""
    return answered(a) and answered(b) and ZONES[a].isdisjoint(ZONES[b])


def edges(margin: float = MARGIN) -> tuple[float, float]:
    """The margin's two edges for a ratio A/B, symmetric on a log scale: ``1 - margin`` below, its inverse above."""
    return 1.0 - margin, 1.0 / (1.0 - margin)


def direction(interval, margin: float = MARGIN) -> str:
    """The one rule every sentence about a difference follows, from the interval of A/B: ``LOWER`` when the whole
    interval clears the margin below 1 (A at most ``1 - margin`` of B: :func:`call` "holds"), ``HIGHER`` when it clears
    it above (B at most ``1 - margin`` of A), ``SAME`` when the whole interval lies inside the margin, else ``NOISY``.
    The margin is symmetric on a log scale: 0.9 below, 1/0.9 = 1.11 above. An interval whose rounds were timed under
    different conditions (``unsettled``) decides nothing: ``TOO_BUSY``; one with no spread known (``Interval.known``:
    one round of a figure timed once) nothing either: ``NOISY``, said as "no interval (one round)"."""
    if getattr(interval, "unsettled", ""):
        return TOO_BUSY
    if not spread_known(interval):  # one round and no spread: a ratio, but nothing to call it from
        return NOISY
    low, high = edges(margin)
    if interval.hi <= low:
        return LOWER
    if interval.lo >= high:
        return HIGHER
    if interval.lo > low and interval.hi < high:
        return SAME
    return NOISY


def within_reach(interval, least: float, margin: float = MARGIN) -> bool:
    """Whether more data could still decide ``interval``: its ratio lies further than ``least`` (the narrowest
    half-width an interval can have, on a log scale: ``stats.least_halfwidth``) from both edges of the margin. A ratio
    closer to an edge than that stays "too noisy to call" (or one side ruled out) however many rounds are added."""
    mid = math.log(interval.mid)
    return all(abs(mid - math.log(e)) >= least for e in edges(margin))


def bound(interval, margin: float = MARGIN) -> str:
    """What a sentence may say of the interval of A/B: :func:`direction`'s call when it decides; else, when the
    interval reaches across one side of the margin only, the side it rules out: ``NOT_LOWER`` (nowhere below
    ``1 - margin``: about the same or higher) or ``NOT_HIGHER`` (nowhere above ``1 / (1 - margin)``); else what
    :func:`direction` said (too noisy to call: across both sides; too busy to decide). :func:`direction` stays the
    protocol's stop rule and the calibrated call: a bound is said, never bold, and a run keeps timing while it holds
    one."""
    said = direction(interval, margin)
    if said != NOISY or not spread_known(interval):
        return said
    low, high = edges(margin)
    if interval.lo > low:
        return NOT_LOWER
    if interval.hi < high:
        return NOT_HIGHER
    return NOISY


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


def aggregate(outcomes: Sequence[bool]) -> Status:
    """Outcomes of one claim over configurations or measures -> holds / does not hold / depends / not measured."""
    if not outcomes:
        return Status.NOT_MEASURED
    if all(outcomes):
        return Status.HOLDS
    if not any(outcomes):
        return Status.DOES_NOT_HOLD
    return Status.DEPENDS


def combine(statuses: Sequence[str]) -> Status:
    """Several calls of one claim (:func:`call`'s, or whole verdicts) -> one status: all alike, that; a "holds"
    beside a "does not hold" (or a "depends"), "depends"; else some are too noisy: "too noisy to call". None: "not
    measured" (:func:`aggregate` for the calls that are only holds / does not hold)."""
    s = set(statuses)
    if NOISY not in s and Status.DEPENDS not in s:
        return aggregate([x == Status.HOLDS for x in statuses])
    if Status.DEPENDS in s or {Status.HOLDS, Status.DOES_NOT_HOLD} <= s:
        return Status.DEPENDS
    return NOISY


def about_same(ratio: float) -> bool:
    """A ratio within ``MARGIN`` of 1 (either way)."""
    return math.isfinite(ratio) and ratio > 0 and max(ratio, 1 / ratio) < 1 + MARGIN
