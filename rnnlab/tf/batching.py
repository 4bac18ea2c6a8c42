"""Batching strategies for a data set of variable-length sequences: pure arithmetic, no TensorFlow.

Given every sequence's true length and a batch size, a strategy decides which sequences go together and how long
each batch is padded:

- ``pad_global``: data-set order; every batch padded to the longest sequence in the whole data set (one shape).
- ``pad_batch``:  data-set order; each batch padded to its own longest sequence.
- ``bucket``:     sequences grouped into ``buckets`` length ranges holding about the same number of sequences each;
                  batches drawn within a bucket (data-set order) and padded to the bucket's upper boundary, so there
                  are at most ``buckets`` lengths (x2 with the last, partial batch of each bucket).
- ``sort``:       sequences sorted by length (ties by index), cut into consecutive batches, each padded to its longest.
                  Batches are then visited in a seeded shuffled order (what training would do; the arithmetic is the
                  same in any order).

The counts (``Plan``):

- ``real_steps``: the sum of true lengths -- the work that is needed.
- ``padded_steps``: rows x padded length over all batches -- the time steps fed to the model.
- ``wasted_pct``: ``100 * (padded_steps - real_steps) / padded_steps`` -- the share of fed steps that is padding.
- ``loop_steps``: rows x (the longest row of the batch) -- what a length-aware loop still computes when it stops at the
  batch's longest row (TF's ``dynamic_rnn`` while_loop, ``static_rnn``'s skip-cond); ``loop_wasted_pct`` likewise.
- ``shapes``: the distinct (rows, padded length) batch shapes -- each one a trace for a shape-specialised function.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

STRATEGIES = ("pad_global", "pad_batch", "bucket", "sort")


@dataclass(frozen=True)
class Batch:
    indices: tuple[int, ...]  # which sequences (data-set indices)
    padded_len: int           # the time steps fed
    max_len: int              # the longest true length among them

    @property
    def rows(self) -> int:
        return len(self.indices)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.rows, self.padded_len)


@dataclass(frozen=True)
class Plan:
    strategy: str
    batches: tuple[Batch, ...]
    real_steps: int
    padded_steps: int
    loop_steps: int

    @property
    def wasted_steps(self) -> int:
        return self.padded_steps - self.real_steps

    @property
    def wasted_pct(self) -> float:
        return 100.0 * self.wasted_steps / self.padded_steps if self.padded_steps else 0.0

    @property
    def loop_wasted_pct(self) -> float:
        return 100.0 * (self.loop_steps - self.real_steps) / self.loop_steps if self.loop_steps else 0.0

    @property
    def shapes(self) -> list[tuple[int, int]]:
        """Distinct batch shapes (rows, padded length), in first-seen order."""
        seen: dict[tuple[int, int], None] = {}
        for b in self.batches:
            seen.setdefault(b.shape, None)
        return list(seen)

    @property
    def n_sequences(self) -> int:
        return sum(b.rows for b in self.batches)

    def summary(self) -> dict:
        """JSON-able counts for a record's details."""
        return {"strategy": self.strategy, "batches": len(self.batches), "sequences": self.n_sequences,
                "real_steps": self.real_steps, "padded_steps": self.padded_steps, "loop_steps": self.loop_steps,
                "wasted_pct": round(self.wasted_pct, 3), "loop_wasted_pct": round(self.loop_wasted_pct, 3),
                "shapes": [list(s) for s in self.shapes]}


def _check(lengths, batch: int) -> list[int]:
    lens = [int(x) for x in lengths]
    if not lens:
        raise ValueError("no sequences")
    if any(x < 1 for x in lens):
        raise ValueError("lengths start at 1")
    if batch < 1:
        raise ValueError("batch must be >= 1")
    return lens


def _plan(strategy: str, lens: list[int], groups: list[tuple[list[int], int | None]], batch: int) -> Plan:
    """Cut each (indices, pad_to) group into batches; pad_to None = pad to the batch's longest."""
    batches = []
    for idx, pad_to in groups:
        for s in range(0, len(idx), batch):
            chunk = tuple(idx[s:s + batch])
            mx = max(lens[i] for i in chunk)
            batches.append(Batch(chunk, mx if pad_to is None else int(pad_to), mx))
    real = sum(lens)
    padded = sum(b.rows * b.padded_len for b in batches)
    loop = sum(b.rows * b.max_len for b in batches)
    return Plan(strategy, tuple(batches), real, padded, loop)


def pad_global(lengths, batch: int) -> Plan:
    lens = _check(lengths, batch)
    return _plan("pad_global", lens, [(list(range(len(lens))), max(lens))], batch)


def pad_batch(lengths, batch: int) -> Plan:
    lens = _check(lengths, batch)
    return _plan("pad_batch", lens, [(list(range(len(lens))), None)], batch)


def bucket_boundaries(lengths, buckets: int) -> list[int]:
    """Upper length of each bucket: the lengths at the 1/n, 2/n, ... quantiles (equal-count buckets), deduplicated;
    the last is the longest length."""
    lens = sorted(int(x) for x in lengths)
    if buckets < 1:
        raise ValueError("buckets must be >= 1")
    n = len(lens)
    bounds = sorted({lens[max(0, math.ceil(k * n / buckets) - 1)] for k in range(1, buckets + 1)})
    return bounds


def bucket(lengths, batch: int, buckets: int) -> Plan:
    lens = _check(lengths, batch)
    bounds = bucket_boundaries(lens, buckets)
    groups: list[list[int]] = [[] for _ in bounds]
    for i, L in enumerate(lens):
        groups[next(k for k, b in enumerate(bounds) if L <= b)].append(i)
    return _plan("bucket", lens, [(g, bounds[k]) for k, g in enumerate(groups) if g], batch)


def sort(lengths, batch: int, seed: int = 0) -> Plan:
    lens = _check(lengths, batch)
    order = sorted(range(len(lens)), key=lambda i: (lens[i], i))
    plan = _plan("sort", lens, [(order, None)], batch)
    batches = list(plan.batches)
    random.Random(seed).shuffle(batches)
    return Plan("sort", tuple(batches), plan.real_steps, plan.padded_steps, plan.loop_steps)


def make_plan(strategy: str, lengths, batch: int, buckets: int = 4, seed: int = 0) -> Plan:
    """Dispatch by name (one of ``STRATEGIES``)."""
    if strategy == "pad_global":
        return pad_global(lengths, batch)
    if strategy == "pad_batch":
        return pad_batch(lengths, batch)
    if strategy == "bucket":
        return bucket(lengths, batch, buckets)
    if strategy == "sort":
        return sort(lengths, batch, seed)
    raise ValueError(f"strategy={strategy!r}: expected one of {', '.join(STRATEGIES)}")
