"""One round of an interleaved point: every arm's worker alive at once, timed in short windows in a random order.

Randomized multiple interleaved trials (Abedi & Brecht, ICPE 2017) with pyperf's process isolation: per round, a
fresh worker per arm (an arm is a variant; ``calibrate`` also makes copies of one variant, some with injected work).
The workers import TensorFlow side by side, then wait on their pipes (no CPU). The manager lets one worker at a time
through each untimed or one-shot part (the cold build, the first call, building the training step, the matmul probe
after the variant), so nothing it times competes with another worker, and at each timed series (``build_s``,
``fwd_ms``, ``train_ms``: ``WorkerContext.series``) it asks the waiting workers for one window each, in a fresh random
order per cycle, many cycles, with the reference timed before, between and after the others, two of theirs
between two of its (``BETWEEN``: R A B R C D R, the next cycle going on from that last R, so no window follows one of
its own process: a reference timed twice in a row would find its caches warm, its first window of a cycle fast and
the ratio of the arm it brackets high): each window of an arm is paired with the geometric mean of the reference's
windows just before and just after its pair (its bracket, ``<metric>@ref``), timed a second or two apart under the
same load, which a linear drift of the load cancels out of (an ABA design; the arm first or second in a pair by the
random order, so the half window it sits off the bracket's middle is noise, not bias). A pair, not a single arm,
between two of the reference's windows halves the reference's share: one after every arm made it time as many
windows as all the others together (a third of the seed preset's windows' seconds). Their ratio is one paired
sample (``core.stats.paired_interval``); two arms compare through their brackets, cycle by cycle.

Under what load: every window reports how many cores other processes took while it ran (``core.condition``). A window
is paired only when its reading and its two reference windows' agree within ``rules.SAME_LOAD``: two windows timed
while other work took very different shares of the cores are never paired as if their conditions were equal; the
window is dropped (``RoundOutcome.dropped``) and its cycle retaken within the budget. Rounds whose loads differ are
not pooled into a call either (``stats.unsettled``: "too busy to decide").

How many cycles: at least ``MIN_CYCLES`` (``MIN_BUILDS`` for a build in a point's first round, ``MIN_BUILDS_LATER``
after it); then more, ``BATCH`` at a time, of the arms whose comparison with the reference is undecided
(``rules.direction`` on the paired interval over this and earlier rounds is "too noisy to call"; an arm already
decided times no more windows of that series in the round; the others' stay bracketed by the reference), until
every one is decided or the series' share of the round's budget is spent: what the round has not yet spent on
windows, split evenly over the per-step series still to come (a series that needed less leaves its time to the
next), and never more than ``EXTEND`` times its minimum cycles, so the cheap forward series cannot starve the
training step's. A build series is held to ``EXTEND`` times its minimum cycles only (builds differ by 2-12x; their
time is not the budget's), and in a round that cannot be the point's last (the first of at least ``MIN_ROUNDS``) to
its minimum: a build window takes seconds, and its call pools with the next round's windows anyway. Step windows
are cheap, and a round's median of few of them is what widens a two-round interval (calibrated: with the first round
held to its minimum step windows too, +20% was called slower in 9 of 16 pairs on a 2-core Xeon). The budget a round
leaves goes to the rounds after it. ``stops`` says why each series stopped.

Where the time is better spent: the spread between rounds of fresh processes is as large as the spread of the windows
within a round (measured on the seed configuration), so a round times few short windows and a point spends its time
on rounds. A point ends after ``MIN_ROUNDS`` when every comparison is decided, or when what is not decided lies so near
an edge of the margin that no further round could decide it (``reachable``), or when another round would end past its
deadline.
"""

from __future__ import annotations

import math
import random
import statistics
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Mapping

from rnnlab.core import rules, stats
from rnnlab.engine import launch, runner as _runner
from rnnlab.worker.context import MIN_WINDOW_S, START  # the protocol's worker side: its gate, its shortest window

WINDOW_STEPS = 5  # steps per window of a per-step metric (ms); the window's value is their median
BUILD_WINDOW = 1  # a build is long enough to be its own window
MIN_CYCLES = 4  # windows per arm and per-step series in a round before the call may stop it (20 steps a round, 40-60 in
#                the seed preset's 2-3 rounds, beside the sequential protocol's 30 repeats a round)
MIN_BUILDS = 2  # a build series' windows in a point's first round before the call may stop it (builds differ by 2-12x)
MIN_BUILDS_LATER = 1  # ... in a later round: 3 paired windows after two rounds, the fewest an interval is made from
BATCH = 2  # cycles added between two looks at the calls
PER_STEP_SERIES = 2  # fwd_ms, train_ms: the series that share a round's budget
EXTEND = 2  # a series times at most this many times its minimum cycles in a round
MIN_ROUNDS = 2  # rounds of fresh processes before a point whose comparisons are all decided may end early
BETWEEN = 2  # compared arms' windows between two of the reference's (R A B R C D R): both bracketed by the same two


def brackets(arms: int) -> int:
    """The reference's windows a cycle of ``arms`` compared arms times (one after each of their pairs)."""
    return -(-arms // BETWEEN)


@dataclass
class RoundOutcome:
    """What one round gave: each arm's last message (``result`` with its metrics, or ``error``), its windows per
    series, and why each series stopped adding windows ("decided", "budget", "no reference")."""

    messages: dict = field(default_factory=dict)
    windows: dict = field(default_factory=dict)  # arm -> metric -> [window values]
    stops: dict = field(default_factory=dict)  # metric -> why it stopped
    spent: float = 0.0  # seconds of windows so far
    own: dict = field(default_factory=dict)  # arm -> cores the worker kept busy in each window (threads at work)
    dropped: dict = field(default_factory=dict)  # metric -> arm windows left unpaired: the load moved around them
    ended: str = ""  # why the point ends before its planned rounds: "decided", "out of reach" or "deadline"
    open: dict = field(default_factory=dict)  # metric -> arms still too noisy to call over this and earlier rounds
    start_s: float = 0.0  # from the round's start until every worker waited at its start gate (import and forks)
    ahead: bool = False  # its workers' import was done ahead (beside the round before's, or the machine probe's): its
    #                     start is their forks
    alone: dict = field(default_factory=dict)  # arm -> seconds it held the machine alone: its untimed and one-shot parts
    windowed: dict = field(default_factory=dict)  # arm -> [seconds, count] of its windows

    def cost(self, arm: str, ref: str | None) -> dict:
        """What the arm's round cost (``engine.estimates`` learns from it): the round's start, the arm's time alone,
        its windows' seconds and count, whether it was the reference (its windows bracket every other's), the
        cores other processes took meanwhile (the median of its windows' readings; None when none was read), and
        whether its import was started ahead."""
        secs, n = self.windowed.get(arm, (0.0, 0))
        read = [x for k, xs in self.windows.get(arm, {}).items() if k.endswith(OTHER) for x in xs]
        return {"start_s": self.start_s, "alone_s": self.alone.get(arm, 0.0), "windows_s": secs, "windows_n": n,
                "ref": arm == ref, "other": round(statistics.median(read), 2) if read else None, "ahead": self.ahead}


def round_words(got: "RoundOutcome", ref: str | None, more: bool) -> str:
    """What a round leaves decided, over the rounds so far: "every comparison with keras decided", or which arms are
    still too noisy to call in which series; ``more``: another round follows (its windows pool with these)."""
    if not got.stops:
        return "nothing timed in windows"
    if ref is None or all(why == "no reference" for why in got.stops.values()):
        return "no reference to compare with"
    still = {m: arms for m, arms in got.open.items() if arms}
    said = ("every comparison with " + ref + " decided" if not still else
            f"not yet decided against {ref}: " + "; ".join(f"{m} of {', '.join(a)}" for m, a in still.items()))
    if any(why == "busy" for why in got.stops.values()):
        said += " (the load kept changing while windows were timed: too busy to decide)"
    return said + ("; the next round's windows pool with these" if still and more else "")


def is_build(metric: str) -> bool:
    """A series of seconds (a build), not of a step's milliseconds."""
    return metric.endswith("_s")


def window_steps(metric: str) -> int:
    return BUILD_WINDOW if is_build(metric) else WINDOW_STEPS


def min_cycles(metric: str, later: bool = False) -> int:
    """Windows per arm a round times of ``metric`` before its call may stop it; ``later``: earlier rounds of the
    point hold a build series' minimum already (a build's windows are seconds long and its differences large: one
    more window a round is enough to look again)."""
    if is_build(metric):
        return MIN_BUILDS_LATER if later else MIN_BUILDS
    return MIN_CYCLES


REF, OTHER, against_ref = stats.REF, stats.OTHER, stats.against_ref


def undecided(rounds: Mapping[str, Mapping[str, list]], metric: str, ref: str | None, arms) -> list[str]:
    """The arms whose ``metric`` against ``ref`` is still "too noisy to call" (``rules.direction`` on
    ``stats.paired_interval`` of each window over its reference bracket) over ``rounds`` (arm -> series -> windows
    per round)."""
    if ref is None:
        return []
    out = []
    for a in arms:
        if a == ref:
            continue
        own, brackets = against_ref(rounds.get(a, {}), metric)
        if own is None:
            continue
        iv = stats.paired_interval(own, brackets)
        if iv is None or rules.direction(iv) == rules.NOISY:
            out.append(a)
    return out


def reachable(rounds: Mapping[str, Mapping[str, list]], metric: str, ref: str | None, arms) -> list[str]:
    """The arms of :func:`undecided` that another round could still decide (``rules.within_reach`` at one round
    more): the others' ratios lie so near an edge of the margin that no number of rounds would call them."""
    out = []
    for a in undecided(rounds, metric, ref, arms):
        own, brackets = against_ref(rounds.get(a, {}), metric)
        iv = stats.paired_interval(own, brackets) if own is not None else None
        n = sum(1 for w in own or [] if w)
        if iv is None or rules.within_reach(iv, stats.least_halfwidth(n + 1)):
            out.append(a)
    return out


def with_round(history: Mapping[str, Mapping[str, list]], now: Mapping[str, Mapping[str, list]]) -> dict:
    """Earlier rounds (arm -> metric -> windows per round) plus this round's windows (arm -> metric -> windows)."""
    n = max((len(r) for h in history.values() for r in h.values()), default=0)
    out: dict = {}
    for a in set(history) | set(now):
        names = set(history.get(a, {})) | set(now.get(a, {}))
        out[a] = {m: [*pad(history.get(a, {}).get(m, []), n), list(now.get(a, {}).get(m, []))] for m in names}
    return out


def pad(rounds: list, n: int) -> list:
    """``rounds`` with empty rounds appended up to ``n`` (an arm that had no windows of a metric in a round)."""
    return [*rounds, *([[]] * (n - len(rounds)))]


class _Live:
    """The live workers of one round and how to wait on them (time, memory and crash limits as ``runner._watch``)."""

    def __init__(self, tasks: Mapping[str, dict], *, launcher, timeout_s: float, mem_limit_mb: float | None,
                 on_phase: Callable[[str, str], None], cancel: threading.Event | None, clock, poll_s: float):
        self.timeout_s, self.on_phase, self.cancel, self.clock, self.poll_s = timeout_s, on_phase, cancel, clock, poll_s
        self.limit = mem_limit_mb / max(1, len(tasks)) if mem_limit_mb is not None else None
        self.workers: dict = {}
        for a, task in tasks.items():
            self.workers[a] = launcher(task)

    def kill_all(self) -> None:
        for w in self.workers.values():
            w.kill()

    def send(self, arm: str, msg: dict) -> None:
        self.workers[arm].send(msg)

    def next(self, arm: str) -> dict:
        """The arm's next ready / window / result / error message (phases passed on), or an error of its own."""
        w, t0 = self.workers[arm], self.clock()
        while True:
            msg = w.read(self.poll_s)
            if self.cancel is not None and self.cancel.is_set():
                raise _runner.Cancelled("run cancelled")
            if msg is not None:
                if msg.get("type") == "phase":
                    self.on_phase(arm, msg["phase"])
                    continue
                return msg
            code = w.poll()
            if code is not None:
                tail = w.read(0.5)
                if tail is not None:
                    if tail.get("type") == "phase":
                        continue
                    return tail
                return _runner.exit_error(code, w.stderr_tail())
            if self.clock() - t0 > self.timeout_s:
                w.kill()
                return {"type": "error", "transient": True, "reason": f"timed out after {self.timeout_s:g} s (timeout_s)"}
            if self.limit is not None:
                rss = w.rss_mb()
                if rss is not None and rss > self.limit:
                    w.kill()
                    return {"type": "error", "transient": True,
                            "reason": f"out of memory: worker used {rss:.0f} MB, over its share of {self.limit:.0f} MB"
                                      " (every variant of the point is alive at once)"}


def run_round(tasks: Mapping[str, dict], *, ref: str | None, history: Mapping[str, Mapping[str, list]],
              budget_s: float, launcher=_runner.launch_subprocess, timeout_s: float,
              mem_limit_mb: float | None, on_phase: Callable[[str, str], None] = lambda a, p: None,
              cancel: threading.Event | None = None, clock: Callable[[], float] = time.monotonic,
              rng: random.Random | None = None, poll_s: float = 0.2, extend: bool = True, ahead: int = 0
              ) -> RoundOutcome:
    """One round: ``tasks`` (arm -> worker task; each is given ``serve``) in fresh workers, driven as the module
    says; ``budget_s``: the round's seconds of windows; ``extend``: whether a build series may add windows past its
    minimum while a comparison is undecided (not in a round that cannot be the point's last: its call waits for the
    next round's windows anyway, and a build window takes seconds); ``ahead``: rounds to follow whose imports start
    now, beside this round's (``engine.launch.ahead``), all done before anything is timed. Every worker is gone when
    it returns, whatever happens."""
    rng = rng or random.Random()
    t_start = clock()
    launch.new_round(launcher)  # this round's workers from a new import (``engine.launch``)
    imported = launch.imported(launcher, tasks.values())  # done before: beside the probe's, or the round before's
    live = _Live({a: {**t, "serve": True} for a, t in tasks.items()}, launcher=launcher, timeout_s=timeout_s,
                 mem_limit_mb=mem_limit_mb, on_phase=on_phase, cancel=cancel, clock=clock, poll_s=poll_s)
    out = RoundOutcome(windows={a: {} for a in tasks}, ahead=imported)
    waiting: dict[str, str] = {}
    try:
        def settle(a: str, msg: dict) -> None:
            if msg.get("type") == "ready":
                waiting[a] = str(msg.get("op"))
            else:
                waiting.pop(a, None)
                out.messages[a] = msg
                if msg.get("type") != "result":
                    live.workers[a].kill()

        launch.ahead(launcher, tasks.values(), ahead)
        for a in tasks:  # they import side by side; each stops at the start gate
            settle(a, live.next(a))
        launch.settle(launcher)  # no import ahead goes on beside what is timed
        out.start_s = clock() - t_start
        while waiting:
            op = Counter(waiting.values()).most_common(1)[0][0]
            group = [a for a in tasks if waiting.get(a) == op]
            if op != START:
                build = is_build(op)
                to_come = PER_STEP_SERIES - sum(1 for m in out.stops if not is_build(m))
                share = math.inf if build else max(0.0, budget_s - out.spent) / max(1, to_come)
                t0 = clock()
                out.stops[op] = _windows(live, op, group, out, settle, ref=ref, history=history,
                                         budget_s=share, rng=rng, clock=clock, extend=extend or not build)
                if not build:
                    out.spent += clock() - t0
            for a in group:  # one at a time through the next untimed part
                if waiting.get(a) == op:
                    on_phase(a, "working alone")
                    t = clock()
                    live.send(a, {"cmd": "next"})
                    settle(a, live.next(a))
                    out.alone[a] = out.alone.get(a, 0.0) + clock() - t
        for w in live.workers.values():
            _runner.reap(w)
    except BaseException:
        live.kill_all()
        raise
    return out


def _windows(live: _Live, op: str, group: list, out: RoundOutcome, settle, *, ref, history, budget_s, rng,
             clock, extend: bool = True) -> str:
    n, t0, cycles, timed = window_steps(op), clock(), 0, 0
    min_s = 0.0 if is_build(op) else MIN_WINDOW_S
    least = min_cycles(op, later=any(any(w) for series in history.values() for w in series.get(op, [])))
    for a in group:
        live.on_phase(a, f"timing {op} windows")

    def window(a: str) -> tuple[float | None, float | None]:
        return _window(live, out, op, a, {"cmd": "window", "n": n, "min_s": min_s}, settle, clock)

    before: tuple | None = None  # the reference's last window: the next arm's bracket opens with it
    still: set | None = None  # past the minimum: the arms a look left undecided (or short of paired windows)
    while True:
        for _ in range(least - cycles if cycles < least else BATCH):  # the minimum, then BATCH cycles a look
            order = [a for a in group if a not in out.messages and a != ref and (still is None or a in still)]
            rng.shuffle(order)
            timed += len(order)
            if ref not in group or ref in out.messages:
                for a in order:
                    window(a)
            else:  # the reference before, between and after the others' pairs: each window bracketed seconds apart
                if before is None:  # the series' first window (a cycle goes on from the last one's reference
                    before = window(ref)  # window: the reference never runs twice in a row, warm from itself)
                for i in range(0, len(order), BETWEEN):
                    got = [(a, *window(a)) for a in order[i:i + BETWEEN]]
                    after = window(ref) if ref not in out.messages else (None, None)
                    for a, value, other in got:
                        if value is not None:
                            _pair(out, op, a, before, other, after)
                    before = after
            cycles += 1
        if cycles < least:
            continue
        if ref not in group or ref in out.messages:
            return "no reference"
        arms = [a for a in group if a not in out.messages and a != ref]
        retakes = min(out.dropped.get(op, 0), EXTEND * least)  # cycles whose pairs the load spoiled
        spent = clock() - t0 >= budget_s or cycles >= EXTEND * least + retakes
        short = [a for a in arms if len(out.windows[a].get(op + REF, [])) < least]
        if short and not spent:
            still = set(short)
            continue  # a spoiled pair is retaken before anything is decided
        open_ = undecided(with_round(history, out.windows), op, ref, arms + [ref])
        if not open_:
            return "decided"
        still = set(open_)  # an arm already decided times no more windows of this series this round
        if not extend:
            return "next round"
        if spent:
            return "busy" if out.dropped.get(op, 0) >= max(1, timed) // 2 else "budget"


def _window(live: _Live, out: RoundOutcome, op: str, a: str, cmd: dict, settle, clock
            ) -> tuple[float | None, float | None]:
    """One window of ``op`` from arm ``a`` (``cmd``: its steps and least seconds), kept in ``out`` with its seconds
    and its reading: (value, cores other processes took), or (None, None) when the arm ended instead."""
    t = clock()
    live.send(a, cmd)
    msg = live.next(a)
    spent = out.windowed.setdefault(a, [0.0, 0])
    spent[0] += clock() - t
    spent[1] += 1
    if msg.get("type") == "window":
        value, other = float(msg["value"]), msg.get("other")
        out.windows[a].setdefault(op, []).append(value)
        if msg.get("own") is not None:
            out.own.setdefault(a, []).append(float(msg["own"]))
        if other is not None:
            out.windows[a].setdefault(op + OTHER, []).append(float(other))
        return value, other
    settle(a, msg)
    return None, None


def _pair(out: RoundOutcome, op: str, a: str, before: tuple, other: float | None, after: tuple) -> None:
    """Pair the arm's last window with the reference's windows just before and after its pair (``before``/``after``:
    (value, reading)): its bracket is their geometric mean. Unpaired when a reference window is missing, or when
    the three were timed under different loads (``rules.same_load`` of their readings): that window is dropped and
    counted (``RoundOutcome.dropped``), and the cycle is retaken."""
    if rules.same_load(before[1], other, after[1]) and (before[0] or 0) > 0 and (after[0] or 0) > 0:
        out.windows[a].setdefault(op + REF, []).append(math.sqrt(before[0] * after[0]))
        return
    if not rules.same_load(before[1], other, after[1]):  # the load moved: not one condition
        out.dropped[op] = out.dropped.get(op, 0) + 1
    out.windows[a][op].pop()
    if other is not None:
        out.windows[a][op + OTHER].pop()


def imports_ahead(rounds: int) -> int:
    """The rounds whose imports a point's first round starts beside its own: those every point of ``rounds`` runs
    (``MIN_ROUNDS``; a round after them may not be needed)."""
    return min(rounds, MIN_ROUNDS) - 1


def run_point(make_tasks: Callable[[int], Mapping[str, dict]], *, ref: str | None, rounds: int, budget_s: float,
              on_round: Callable[[int, RoundOutcome, bool], None], on_phase: Callable[[int, str, str], None],
              rng: random.Random, deadline_s: float = 0.0, **limits) -> dict:
    """A point's rounds: round ``r`` runs ``make_tasks(r)`` (arm -> task) with :func:`run_round`, given what the
    earlier rounds left of ``budget_s`` over the rounds to come (seconds of windows, shared by its per-step series).
    After ``MIN_ROUNDS`` rounds the point ends early when no comparison with ``ref`` is still too noisy to call, or
    none that is could be decided by more rounds (:func:`reachable`), or (``deadline_s``, wall clock) when another
    round, as long as the rounds so far took on average, would end past the deadline. ``on_round(r, outcome, last)``
    folds each round as it ends (``last``: no round follows; ``outcome.ended`` says why: "decided", "out of reach",
    "deadline", or "" after the planned rounds). Returns every arm's windows: arm -> metric -> windows per round."""
    clock = limits.get("clock", time.monotonic)
    history: dict = {}
    t0, spent, ahead = clock(), 0.0, 0
    for r in range(rounds):
        tasks = make_tasks(r)
        # what the earlier rounds left of the budget, shared by the rounds to come (the first times its minimum only);
        # the first starts the imports of the rounds every point runs beside its own (a later one may not be needed)
        imports = imports_ahead(rounds) if r == 0 else 0
        got = run_round(tasks, ref=ref, history=history, budget_s=max(0.0, budget_s - spent) / (rounds - r),
                        on_phase=lambda a, ph, r=r: on_phase(r, a, ph), rng=rng,
                        extend=r + 1 >= min(MIN_ROUNDS, rounds), ahead=imports, **limits)
        got.ahead, ahead = got.ahead or ahead > 0, imports
        spent += got.spent
        history = with_round(history, got.windows)
        early = r + 1 >= MIN_ROUNDS and r + 1 < rounds
        elapsed = clock() - t0
        got.open = {m: undecided(history, m, ref, list(tasks)) for m in got.stops}
        if early and not any(got.open.values()):
            got.ended = "decided"
        elif early and not any(reachable(history, m, ref, list(tasks)) for m in got.stops):
            got.ended = "out of reach"
        elif early and deadline_s and elapsed * (r + 2) / (r + 1) > deadline_s:
            got.ended = "deadline"
        last = bool(got.ended) or r + 1 == rounds
        on_round(r, got, last)
        if last:
            break
    return history
