"""Planning a run: ``plan`` validates an experiment, preset, overrides and variants into a ``Plan`` (every point
of the sweep filled in) before anything runs; ``Plan.command()`` is the CLI line that makes it again; ``spec_of``
what a record is keyed by."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from rnnlab.core import envinfo
from rnnlab.core import format as fmt
from rnnlab import experiments
from rnnlab.core.errors import RnnlabError
from rnnlab.core.params import is_interleaved


_PRESET_ONLY = ("variants",)


@dataclass(frozen=True)
class Plan:
    """A validated run: the experiment, every point of the sweep (params filled in), the variants."""

    experiment: str
    points: tuple[Mapping[str, Any], ...]
    variants: tuple[str, ...]
    preset: str | None = None
    ref: str | None = None  # the reference its ratios are timed against (None: the experiment's, ``reference``)

    @property
    def reference(self) -> str | None:
        """The variant every other is timed beside and compared with: ``ref`` when given (``run --ref``), else the
        experiment's (``Experiment.reference``); a plan that lacks it runs it too."""
        return self.ref or experiments.get(self.experiment).reference

    @property
    def companion(self) -> str | None:
        """The reference when the plan's variants lack it (it runs beside them, and is not one of the plan's)."""
        ref = self.reference
        return ref if ref is not None and ref not in self.variants else None

    @property
    def n_tasks(self) -> int:
        """(point, variant) pairs: the records the run returns."""
        return len(self.points) * len(self.variants)

    @property
    def n_runs(self) -> int:
        """(point, variant, round) triples: the worker processes the run starts at most (the reference variant,
        when the plan lacks it but needs it for ``max_abs_diff``, comes on top; see :func:`estimate`)."""
        return sum(int(pt.get("rounds", 1)) for pt in self.points) * len(self.variants)

    def argv(self, *, json: bool = False, fresh: bool = False) -> list[str]:
        """The words after ``python -m rnnlab`` that make this plan again: ``run EXP [--preset P] [--set K=V,...]
        [--variants A,B]``. A parameter is set only where it differs from the preset's (or the default) value, in
        the experiment's parameter order; a swept parameter lists its values."""
        exp = experiments.get(self.experiment)
        base = dict(exp.presets.get(self.preset, {})) if self.preset else {}
        words = ["run", self.experiment] + (["--preset", self.preset] if self.preset else [])
        for name in exp.params.names():
            vals = list(dict.fromkeys(p[name] for p in self.points if name in p))
            if not vals:
                continue
            ref = base.get(name, exp.params[name].default)
            ref = list(ref) if isinstance(ref, (list, tuple)) else [ref]
            if vals != ref:
                words += ["--set", f"{name}=" + ",".join(_word(v) for v in vals)]
        default = base.get("variants") or exp.default_variants
        if list(self.variants) != list(default):
            words += ["--variants", ",".join(self.variants)]
        if self.ref is not None and self.ref != exp.reference:
            words += ["--ref", self.ref]
        return words + (["--fresh"] if fresh else []) + (["--json"] if json else [])

    def command(self, **kw) -> str:
        """The shell command that makes this plan again (see :meth:`argv`)."""
        import shlex

        return " ".join(["python", "-m", "rnnlab"] + [shlex.quote(w) for w in self.argv(**kw)])


def first_run_command(experiment: str | None = None) -> str:
    """The command a newcomer runs first: ``experiment``'s quick preset (``unroll`` when None or unknown)."""
    name = experiment if experiment in experiments.names() else "unroll"
    exp = experiments.get(name)
    return plan(name, preset="quick" if "quick" in exp.presets else None, available_mb=float("inf")).command()


def _word(v: Any) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def plan(experiment: str, *, preset: str | None = None, overrides: Mapping[str, Sequence[Any] | Any] | None = None,
         variants: Sequence[str] | None = None, available_mb: float | None = None, ref: str | None = None) -> Plan:
    """Validate everything before anything runs. A list value is a sweep (cross product of all lists). ``ref``: the
    variant the others are timed beside and compared with, when not the experiment's own reference."""
    exp = experiments.get(experiment)
    values: dict[str, list[Any]] = {}
    preset_variants = None
    if preset is not None:
        if preset not in exp.presets:
            raise RnnlabError(f"unknown preset {preset!r} for {experiment}; known: {', '.join(exp.presets)}")
        for k, v in exp.presets[preset].items():
            if k == "variants":
                preset_variants = list(v)
            else:
                values[k] = list(v) if isinstance(v, (list, tuple)) else [v]
    for k, v in (overrides or {}).items():
        exp.params[k]  # unknown names are refused here with the list of known ones
        values[k] = list(v) if isinstance(v, (list, tuple)) else [v]
    from rnnlab.core.params import check_sweep  # issue 13: refuse a huge sweep from the lists' lengths, first

    check_sweep(values)
    names = list(values)
    points = []
    for combo in itertools.product(*(values[n] for n in names)):
        points.append(exp.params.fill(dict(zip(names, combo))))
    if not points:
        points = [exp.params.fill({})]
    chosen = list(variants) if variants else (preset_variants or list(exp.default_variants))
    for v in chosen:
        if v not in exp.variants:
            raise RnnlabError(f"unknown variant {fmt.clip(repr(v))} for {experiment}; known: {', '.join(exp.variants)}")
    chosen = list(dict.fromkeys(chosen))
    if ref is not None:
        if exp.reference is None:
            raise RnnlabError(f"--ref: {experiment} compares no variant with a reference")
        if ref not in exp.variants:
            raise RnnlabError(f"--ref: unknown variant {fmt.clip(repr(ref))} for {experiment}; known: "
                              f"{', '.join(exp.variants)}")
    if exp.check is not None:
        for p in points:
            avail = available_mb if available_mb is not None else envinfo.available_mb()
            live = min(int(p.get("live", 16)), len(chosen) + 1) if is_interleaved(p) else 1
            try:  # interleaved: every live worker of a point must fit at once
                exp.check(p, tuple(chosen), available_mb=avail / live)
            except RnnlabError as e:
                if live == 1:
                    raise
                raise RnnlabError(f"{e} (interleaved: {live} workers alive at once share {avail:,.0f} MB; "
                                  "--set live=2 or --set protocol=sequential needs less)") from None
    return Plan(exp.name, tuple(points), tuple(chosen), preset, None if ref == exp.reference else ref)


# limits on effort, not part of what is measured (the cache key leaves them out): a preset's run and a user's own run
# of one configuration share their records whatever time each was allowed
NOT_KEYED = ("timeout_s", "live", "deadline_s", "budget_s")


def spec_of(experiment: str, version: int, variant: str, params: Mapping[str, Any]) -> dict:
    return {"experiment": experiment, "version": version, "variant": variant,
            "params": {k: v for k, v in params.items() if k not in NOT_KEYED}}


def own_run_words(experiment: str) -> str:
    """How a user's own run (no preset) of ``experiment`` is timed, the same in the app and on the command line:
    its default variants, rounds, budget, deadline and threads (``core.params.USER_RUN``); "" for an experiment that
    times nothing in windows."""
    from rnnlab.engine.interleave import MIN_ROUNDS

    exp = experiments.get(experiment)
    if "protocol" not in exp.params.names():
        return ""
    d = exp.params.defaults()
    return (f"A run of {experiment} without a preset, in the app or on the command line: "
            f"{', '.join(exp.default_variants)}; up to {d['rounds']} rounds of fresh processes (ending after "
            f"{MIN_ROUNDS} once every comparison is decided), at most {d['budget_s']} s of timed windows, no round "
            f"after the second once {d['deadline_s']} s have passed; threads 0: every core (1: the question on one "
            "core, whatever else the machine does).")
