"""Timing statistics. The clock is injected so tests pin time without really timing anything."""

from __future__ import annotations

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
