"""The machine's condition while something is timed: how much CPU *other* processes took, and how many cores the
timed process itself kept busy (its CPU time beside its wall time). Read from the operating system's CPU counters
(psutil: Linux, macOS, Windows), never from the load average, which lags by a minute and counts rnnlab's own workers.

A worker measures a :class:`Meter` around each timed window: every core's busy time minus its own process's CPU time,
over the window's wall time, is what the rest of the machine took ("other cores"). In an interleaved round the other
workers of the point wait on their pipes while one is timed, so they add nothing; the manager polls its pipes and adds
next to nothing. ``free`` is the cores minus that: "1.9 of 2 cores free while timed".

The system counters tick at 10 ms (Linux ``USER_HZ``): a window of 100 ms on 2 cores reads other processes' share to
about 0.1 core, which is why a window lasts at least ``worker.context.MIN_WINDOW_S``.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

_IDLE = ("idle", "iowait", "guest", "guest_nice")  # not busy (guest time is already inside user time on Linux)


def system_busy_s() -> float:
    """Seconds every core of the machine has been busy since boot (user, system, nice, interrupts, steal)."""
    import psutil

    t = psutil.cpu_times()
    return float(sum(getattr(t, f) for f in t._fields if f not in _IDLE))


def own_cpu_s() -> float:
    """CPU seconds this process has used, all its threads (nanosecond clock where the platform has one), and its
    children that have ended: a variant that runs a program in a subprocess (seed004's script) keeps that core busy
    itself; without them the child's CPU read as another process's, "1.1 of 2 cores taken" on a quiet machine."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


class Meter:
    """Started when made (or by ``start()``); ``read()`` after the timed work: ``{"other": cores other processes
    took, "own": cores this process kept busy, "wall": seconds}``. Clocks injected for tests."""

    def __init__(self, busy=system_busy_s, own=own_cpu_s, clock=time.perf_counter):
        self.busy, self.own, self.clock = busy, own, clock
        self.start()

    def start(self) -> None:
        self.b0, self.o0, self.t0 = self.busy(), self.own(), self.clock()

    def read(self) -> dict:
        wall = max(self.clock() - self.t0, 1e-9)
        own = max(0.0, self.own() - self.o0)
        other = max(0.0, self.busy() - self.b0 - own)
        return {"other": round(other / wall, 3), "own": round(own / wall, 3), "wall": round(wall, 4)}


def others_now(seconds: float = 0.5) -> float:
    """Cores other processes keep busy right now (this process excluded), over ``seconds``: the busy warning's reading
    before a run, when no worker of rnnlab's is alive."""
    m = Meter()
    time.sleep(seconds)
    return m.read()["other"]


# -- a record's condition, from its windows' readings -------------------------------------------------------------

@dataclass(frozen=True)
class Condition:
    """Under what a figure was measured: ``threads`` the worker's TensorFlow could use, ``cores`` the machine has,
    ``other`` the cores other processes took while it was timed (median over its windows), ``own`` the cores the
    worker itself kept busy, ``changed`` whether its rounds' conditions differed by more than ``rules.SAME_LOAD``."""

    threads: int
    cores: int
    other: float | None
    own: float | None = None
    changed: bool = False

    @property
    def free(self) -> float | None:
        return None if self.other is None else max(0.0, self.cores - self.other)

    def to_json(self) -> dict:
        out = {"threads": self.threads, "cores": self.cores}
        if self.other is not None:
            out["other_cores"] = self.other
            out["free_cores"] = round(self.free, 2)
        if self.own is not None:
            out["own_cores"] = self.own
        if self.changed:
            out["changed"] = True
        return out

    @classmethod
    def of(cls, d: Mapping | None) -> "Condition | None":
        """A record's ``details.condition`` read back; None when it has none or it is not of that shape."""
        if not isinstance(d, Mapping):
            return None
        try:
            other = d.get("other_cores")
            own = d.get("own_cores")
            return cls(int(d["threads"]), int(d["cores"]), None if other is None else float(other),
                       None if own is None else float(own), bool(d.get("changed", False)))
        except (KeyError, TypeError, ValueError):
            return None


def threads_used(threads: int, cores: int) -> int:
    """The threads a worker's TensorFlow may use: ``threads`` (the parameter), 0 meaning every core."""
    return int(threads) if threads and int(threads) > 0 else int(cores)


def per_round(readings: Sequence[Sequence[float]]) -> list[float]:
    """Each round's median reading (rounds without readings left out)."""
    return [statistics.median(r) for r in readings if r]


def changed(readings: Sequence[Sequence[float]], tolerance: float) -> bool:
    """Whether the rounds' median readings differ by more than ``tolerance`` cores."""
    rounds = per_round(readings)
    return len(rounds) >= 2 and max(rounds) - min(rounds) > tolerance


def summarize(threads: int, cores: int, other: Iterable[Sequence[float]], own: Iterable[float],
              tolerance: float) -> Condition:
    """A record's condition from its windows' readings: ``other`` per round, ``own`` every window's."""
    other = [list(r) for r in other]
    flat = [x for r in other for x in r]
    own = list(own)
    return Condition(threads, cores, round(statistics.median(flat), 2) if flat else None,
                     round(statistics.median(own), 2) if own else None, changed(other, tolerance))


def words(c: Condition | None) -> str:
    """"2 threads; 1.9 of 2 cores free while timed" (the load changing between rounds said too); "" for None."""
    if c is None:
        return ""
    t = thread_count(c.threads)
    if c.free is None:
        return t
    free = f"{c.free:.1f}".rstrip("0").rstrip(".") if c.free >= 0.05 else "0"
    out = f"{t}; {free} of {c.cores} core{'s' if c.cores != 1 else ''} free while timed"
    return out + " (the load changed between rounds)" if c.changed else out


def threads_words(records) -> str:
    """The thread counts the records were timed with, without the load: "1 thread", "2 threads"; a record from
    before conditions by its ``threads`` parameter (0, or none: every core of its machine)."""
    def threads(r) -> int | None:
        c = Condition.of(getattr(r, "details", {}).get("condition"))
        if c is not None:
            return c.threads
        cores = (getattr(r, "env", None) or {}).get("cores")
        return threads_used(int((getattr(r, "params", None) or {}).get("threads") or 0), cores) if cores else None

    counts = sorted({t for t in map(threads, records) if t is not None})
    return " / ".join(thread_count(t) for t in counts)


def thread_count(n: int) -> str:
    """"1 thread", "2 threads"."""
    return f"{n} thread{'s' if n != 1 else ''}"


def words_of(records) -> str:
    """Under what the records were timed (``details.condition``, ``core.condition.words``): "2 threads; 1.9 of 2
    cores free while timed" when they share one condition (one thread count, loads within ``rules.SAME_LOAD``);
    each thread count said apart, and loads that differ said as a range, never as one figure; "" when no record
    read its condition (records from before rnnlab read it)."""
    from rnnlab.core import rules

    conds = [c for c in (Condition.of(getattr(r, "details", {}).get("condition")) for r in records) if c is not None]
    out = []
    for threads in sorted({c.threads for c in conds}):
        group = [c for c in conds if c.threads == threads]
        others = [c.other for c in group if c.other is not None]
        if not others or rules.same_load(*others):
            mid = Condition(threads, group[0].cores, statistics.median(others) if others else None,
                            changed=any(c.changed for c in group))
            out.append(words(mid))
            continue
        lo, hi = (Condition(threads, group[0].cores, x).free for x in (max(others), min(others)))
        out.append(f"{words(Condition(threads, group[0].cores, None))}; {lo:.1f}-{hi:.1f} of "
                   f"{group[0].cores} cores free while timed (measured under different loads)")
    return " / ".join(out)


# -- records from before rnnlab read its condition: their 1-minute load averages ----------------------------------

def _loads(rec) -> list[float]:
    """The 1-minute load averages the engine noted around each round (``details.loadavg``: [before, after] per
    round); anything unreadable is skipped."""
    out: list[float] = []
    for item in rec.details.get("loadavg") or ():
        for x in (item if isinstance(item, (list, tuple)) else (item,)):
            if isinstance(x, (int, float)) and not isinstance(x, bool):
                out.append(float(x))
    return out


def busiest_load(records) -> str:
    """Records that read no condition: their 1-minute loads' busy note (``rules.busy_run``), or ""."""
    from rnnlab.core import rules

    worst: tuple[float, float, int] | None = None
    for r in records:
        cores, loads = r.env.get("cores"), _loads(r)
        if not isinstance(cores, (int, float)) or isinstance(cores, bool) or not loads:
            continue
        load = rules.busy_run(loads, cores)
        if load is not None and (worst is None or load / cores > worst[0]):
            worst = (load / cores, load, int(cores))
    if worst is None:
        return ""
    return f"measured on a busy machine: load {worst[1]:.1f} on {worst[2]} core{'s' if worst[2] != 1 else ''}"
