"""What a worker function gets besides its params: the device it runs on, a way to report its phase, and
``series``: the one way a worker times a repeated step, so the harness can interleave it with other workers.

Two protocols (``protocol`` parameter; ``core.protocol``):

- ``sequential``: ``series`` warms up, then times ``repeats`` steps one after the other and returns them.
- ``interleaved``: ``series`` warms up, says ``ready`` to the manager and blocks on its pipe (no CPU) until the manager
  asks for a *window* (``n`` steps, timed as one) or says ``next``. The manager asks every live worker of a point for
  windows in a random order, many times, so each ratio pairs windows timed seconds apart (``engine.interleave``).
  A window's value is the median of its steps: a step the scheduler interrupted moves it little.
- Every timed window (interleaved) or series (sequential) is metered (``core.condition.Meter``): how many cores
  other processes took meanwhile, and how many this worker kept busy. A window reports both beside its value; a
  sequential series keeps them in ``readings``. A window lasts at least ``min_s`` (more steps than ``n`` when the
  steps are short), so the system's 10 ms CPU counters read its condition to about a tenth of a core.
- ``inject`` (``calibrate`` only): every timed step also does extra CPU work (a NumPy matmul loop) calibrated after
  the warm-up to take that share of the step's own median time: a slowdown of known size inside the timed step.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

from rnnlab.core import condition

START = "start"  # the gate a worker waits at once imported (the manager lets one worker through at a time)
MIN_WINDOW_S = 0.1  # a per-step window lasts at least this long (more steps when they are short): its condition
#                    reading (10 ms CPU counters) then resolves a tenth of a core


class Channel:
    """The worker's side of the manager's pipe: ``send`` a message, ``recv`` the next command (blocking)."""

    def __init__(self, send: Callable[[dict], None], recv: Callable[[], dict | None]):
        self.send, self.recv = send, recv

    def gate(self, op: str) -> dict:
        """Say ``ready`` at ``op`` and wait for the manager's next command."""
        self.send({"type": "ready", "op": op})
        cmd = self.recv()
        if cmd is None:  # the manager closed the pipe: it is gone or done with us
            raise SystemExit(0)
        return cmd


def unit_scale(metric: str) -> float:
    """A series' samples are seconds; a window is reported in its metric's unit (``*_ms``: milliseconds)."""
    return 1000.0 if metric.endswith("_ms") else 1.0


@dataclass
class WorkerContext:
    device: str = "CPU"  # "CPU" or "GPU", already resolved
    on_phase: Callable[[str], None] = lambda phase: None
    clock: Callable[[], float] = time.perf_counter
    phases: list = field(default_factory=list)
    channel: Channel | None = None  # set when the point runs interleaved
    inject: float = 0.0  # calibration: extra work per timed window of steps (0.1: one extra step in ten)
    readings: list = field(default_factory=list)  # sequential: each series' condition reading (Meter.read + metric)
    meter: Callable[[], object] = condition.Meter

    @property
    def tf_device(self) -> str:
        return f"/{self.device}:0"

    def phase(self, name: str) -> None:
        """Report progress: ``"build"``, ``"first_call"``, ``"forward"``, ``"train"``..."""
        self.phases.append(name)
        self.on_phase(name)

    def series(self, metric: str, step: Callable[[], object], *, repeats: int, warmup: int,
               self_timed: bool = False) -> list[float]:
        """Every timed step's seconds. ``step`` must block until its result is computed; with ``self_timed`` it
        returns the seconds it measured itself (a build that first lets go of the previous one, untimed)."""
        for _ in range(warmup):
            step()
        if self.inject and not self_timed:
            step = self._injected(step)
        one = step if self_timed else self._timed(step)
        if self.channel is None:
            meter = self.meter()
            out = [float(one()) for _ in range(repeats)]
            self.readings.append({"metric": metric, **meter.read()})
            return out
        samples: list[float] = []
        cmd = self.channel.gate(metric)
        while True:
            if cmd.get("cmd") != "window":
                return samples or [float(one())]
            meter = self.meter()
            if not self_timed:  # one untimed step first: a worker that waited longer on its pipe starts no colder
                step()  # (its caches and thread pool) than the reference, which waits half as long between windows
            window = self._window(one, int(cmd["n"]), float(cmd.get("min_s") or 0.0))
            samples += window
            value = statistics.median(window) * unit_scale(metric)
            got = meter.read()
            self.channel.send({"type": "window", "op": metric, "value": value, "other": got["other"],
                               "own": got["own"], "steps": len(window)})
            cmd = self.channel.recv() or {}

    def _window(self, one: Callable[[], float], n: int, min_s: float, most: int = 200) -> list[float]:
        """At least ``n`` timed steps, more (up to ``most``) until they add up to ``min_s`` seconds."""
        window = [float(one()) for _ in range(n)]
        while sum(window) < min_s and len(window) < most:
            window.append(float(one()))
        return window

    def _injected(self, step: Callable[[], object], probes: int = 9) -> Callable[[], object]:
        """``step`` followed by CPU work taking ``inject`` of its median time (measured here, after the warm-up)."""
        import numpy as np

        base = statistics.median(self._timed(step)() for _ in range(probes))
        a = np.random.default_rng(0).random((64, 64))

        def burn(k: int) -> None:
            x = a
            for _ in range(k):
                x = np.tanh(x @ a)

        per = statistics.median(self._timed(lambda: burn(50))() for _ in range(probes)) / 50
        k = max(1, round(self.inject * base / per))

        def injected() -> object:
            out = step()
            burn(k)
            return out
        return injected

    def _timed(self, step: Callable[[], object]) -> Callable[[], float]:
        def one() -> float:
            t0 = self.clock()
            step()
            return self.clock() - t0
        return one
