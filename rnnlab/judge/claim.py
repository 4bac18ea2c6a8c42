"""What a claim and its verdict are: ``Claim`` (what a seed says, the run that tests it, its judge) and
``Verdict`` (status, what the records show, why)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Iterable, Sequence

from rnnlab.core import rules
from rnnlab.core.record import Record
from rnnlab.core.rules import Status
from rnnlab.judge import select


def status_of(parts: Sequence[str]) -> Status:
    """A claim's parts (``rules.call``'s calls, or whole verdicts of a claim made of several) -> its status. A claim
    asserts every part, so a part decided against it with none decided for it refutes it, whatever its noisy parts
    would show: "does not hold". Otherwise ``rules.combine`` (a decided "holds" beside a "does not hold": depends;
    "holds" beside noisy parts only: too noisy to call)."""
    s = set(parts)
    if Status.DOES_NOT_HOLD in s and not s & {Status.HOLDS, Status.DEPENDS}:
        return Status.DOES_NOT_HOLD
    return rules.combine(parts)


@dataclass(frozen=True)
class Verdict:
    status: Status  # (its words, as a str, are taken too)
    measured: str  # what the records show, with numbers and whose records they are
    why: str  # why that status; what to run when not measured

    def __post_init__(self):
        if self.status not in rules.STATUSES:
            raise ValueError(f"status {str(self.status)!r} is not one of {tuple(map(str, rules.STATUSES))}")
        object.__setattr__(self, "status", Status(self.status))


@dataclass(frozen=True)
class Claim:
    id: str
    seed: str  # the seed file
    section: str  # where in the seed
    text: str  # the claim in a few words, with the seed's own figure
    experiment: str
    preset: str
    variants: tuple[str, ...]  # the variants the claim is about
    judge: Callable[[Sequence[Record], "Claim"], Verdict]
    device: str = "any"  # "any", "CPU" or "GPU": the device the seed's figure is about
    overrides: tuple[tuple[str, Any], ...] = ()  # the run's parameters over the preset's (a tuple value: a sweep)
    run_variants: tuple[str, ...] | None = None  # the variants the run measures (None: the preset's)

    @property
    def plan_args(self) -> dict[str, Any]:
        """``rnnlab.engine.api.plan``'s arguments for the run that produces this claim's records."""
        return {"experiment": self.experiment, "preset": self.preset,
                "overrides": {k: list(v) if isinstance(v, tuple) else v for k, v in self.overrides},
                "variants": None if self.run_variants is None else list(self.run_variants)}

    def plan(self, **kw):
        """That run as an ``api.Plan`` (``available_mb`` etc. as ``api.plan`` takes them; no TensorFlow)."""
        from rnnlab.engine import api

        return api.plan(**self.plan_args, **kw)

    @cached_property
    def command(self) -> str:
        """The CLI command that produces the records (``Plan.command()``; the memory check is the run's own)."""
        return self.plan(available_mb=math.inf).command()

    def verdict(self, records: Iterable[Record]) -> Verdict:
        """This claim judged on ``records`` (any experiments; the judge picks what it needs)."""
        return self.judge(select.dedupe(records), self)
