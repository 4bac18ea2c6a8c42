"""Which unrolling variant to use, from stored ``unroll`` records for one configuration, device and machine (pure).

Three goals, each answered with the measured margin over the runner-up:

- ``build_plus_n``: the least wall time to build and then run ``n_steps`` steps. Training (``mode="train"``):
  ``build_s + train_build_s + train_first_call_s + n_steps * train_ms``; forward only (``mode="forward"``):
  ``build_s + first_call_s + n_steps * fwd_ms``. (A record without ``train_build_s``/``train_first_call_s`` uses
  ``first_call_s`` in their place.) The break-even step count against the steady-state winner is given when they
  differ: below it the cheaper build wins, above it the faster step.
- ``steady_train``: the fastest training step once warm (``train_ms``; ``fwd_ms`` in forward mode).
- ``memory``: the lowest ``peak_mem_mb``.

Records: those of ``experiment`` ("unroll") whose params include ``config`` (a subset: ``{"cell": "lstm",
"seq_len": 100}``) on ``device`` ("CPU"/"GPU"; None: the device of this machine's newest record), of the
``variants`` asked for. They are grouped by ``rnnlab.judge.select.groups`` (one configuration, device and machine
each: two machines' records are never ranked against each other) and the group ``select.headline`` picks is used
(the most measured variants, then the best source, then the newest); ``notes`` says when others matched. One record
per variant: ``select.best``. Failed variants are listed with their reasons in ``failed``, variants never measured
in ``missing``; neither stops a recommendation. The winner is said to win only when ``core.wording`` decides it
(the interval of winner/runner-up clears ``rules.MARGIN``); anything else is a tie,
as every page says it; so is a margin whose interval includes equality. The interval of the runner-up's cost over
the winner's is ``core.stats.ratio_interval``'s: across rounds when both records have two or more, else the timed
steps' quartiles (the step time and the memory goals; build + N steps is a sum, so one round gives no interval).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from rnnlab.core import condition, wording
from rnnlab.core import format as fmt
from rnnlab.core import rules, stats
from rnnlab.core.record import Record
from rnnlab.core.stats import Interval
from rnnlab.judge import select

GOALS = ("build_plus_n", "steady_train", "memory")


@dataclass(frozen=True)
class Pick:
    goal: str
    variant: str | None  # None: nothing measured for this goal
    value: float | None
    unit: str
    runner_up: str | None = None
    runner_up_value: float | None = None
    margin: float | None = None  # runner_up_value / value - 1 (0.25: the runner-up needs 25% more)
    ranking: tuple[tuple[str, float], ...] = ()
    break_even_steps: float | None = None  # build_plus_n: steps beyond which the steady-state winner wins
    text: str = ""
    tie: bool = False  # the runner-up is within rules.MARGIN, or the interval includes equality: about the same
    interval: Interval | None = None  # runner-up / winner with its interval (core.stats.ratio_interval)

    @property
    def margin_lo(self) -> float | None:
        """The low end of the margin's interval (``interval.lo - 1``)."""
        return None if self.interval is None else self.interval.lo - 1

    @property
    def margin_hi(self) -> float | None:
        return None if self.interval is None else self.interval.hi - 1


@dataclass(frozen=True)
class Recommendation:
    config: dict
    device: str | None
    n_steps: int
    mode: str
    picks: dict[str, Pick]
    failed: dict[str, str] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    source: str = ""  # select.source_note of the records ranked: whose machine

    @property
    def text(self) -> str:
        lines = [self.picks[g].text for g in GOALS if g in self.picks]
        if self.failed:
            lines.append("Failed here: " + "; ".join(f"{v} ({why})" for v, why in self.failed.items()) + ".")
        if self.missing:
            lines.append("Not measured: " + ", ".join(self.missing) + ".")
        lines += list(self.notes)
        return "\n".join(lines)


def measure_plan(config: Mapping[str, Any], variants: Sequence[str] = (), *, experiment: str = "unroll"):
    """The run that makes the records a recommendation at ``config`` needs, as an ``api.Plan`` (``.command()``).
    The memory check is the run's own (not applied here). Raises ``RnnlabError`` for a value the run refuses."""
    from rnnlab.engine import api

    return api.plan(experiment, overrides=dict(config), variants=list(variants) or None, available_mb=math.inf)


def _run_hint(config: Mapping[str, Any], variants: Sequence[str] | None, experiment: str) -> str:
    from rnnlab.core.errors import RnnlabError

    try:
        return f"; run `{measure_plan(config, variants or (), experiment=experiment).command()}`"
    except RnnlabError:
        return ""


def cost(r: Record, goal: str, n_steps: int, mode: str) -> float | None:
    """The number a variant is ranked by for ``goal`` (None when its record lacks a metric it needs)."""
    return _cost(r.metrics, goal, n_steps, mode)


def _cost(m: Mapping[str, float], goal: str, n_steps: int, mode: str) -> float | None:
    """:func:`cost` of one metrics mapping (a record's, or one of its rounds')."""
    if goal == "memory":
        return m.get("peak_mem_mb")
    step = "train_ms" if mode == "train" else "fwd_ms"
    if goal == "steady_train":
        return m.get(step)
    fixed = _fixed_m(m, mode)
    if fixed is None or step not in m:
        return None
    return fixed + n_steps * m[step] / 1000.0


def _fixed(r: Record, mode: str) -> float | None:
    return _fixed_m(r.metrics, mode)


def _fixed_m(m: Mapping[str, float], mode: str) -> float | None:
    if "build_s" not in m:
        return None
    if mode == "train" and "train_build_s" in m and "train_first_call_s" in m:
        return m["build_s"] + m["train_build_s"] + m["train_first_call_s"]
    if "first_call_s" not in m:
        return None
    return m["build_s"] + m["first_call_s"]


_UNIT = {"build_plus_n": " s", "steady_train": " ms", "memory": " MB"}


def interval(runner_up: Record, best: Record, goal: str, n_steps: int, mode: str) -> Interval | None:
    """The runner-up's cost over the winner's, with its interval (``stats.ratio_interval``): of the metric itself
    for the step and memory goals (rounds, or the timed steps' quartiles), of each round's build + N steps for
    ``build_plus_n``."""
    if goal == "memory":
        return stats.ratio_interval(runner_up.round_metrics, best.round_metrics, "peak_mem_mb")
    if goal == "steady_train":
        return stats.ratio_interval(runner_up.round_metrics, best.round_metrics,
                                    "train_ms" if mode == "train" else "fwd_ms")

    def per_round(r: Record) -> list[dict[str, float]]:
        return [{"cost": c} for m in r.round_metrics if (c := _cost(m, goal, n_steps, mode)) is not None]

    return stats.ratio_interval(per_round(runner_up), per_round(best), "cost")


def recommend(records: Iterable[Record], *, config: Mapping[str, Any] | None = None, device: str | None = None,
              n_steps: int = 1000, mode: str = "train", variants: Sequence[str] | None = None,
              experiment: str = "unroll") -> Recommendation:
    """The fastest variant for build + ``n_steps`` steps, for steady-state steps, and the leanest in memory, from
    one machine's records at one configuration and device."""
    if mode not in ("train", "forward"):
        raise ValueError(f"mode={mode!r}: expected 'train' or 'forward'")
    config = dict(config or {})
    recs = [r for r in records if r.experiment == experiment and (variants is None or r.variant in variants)
            and all(r.params.get(k) == v for k, v in config.items())]
    notes: list[str] = []
    if device is None and recs:
        local = [r for r in recs if r.source == "local"] or recs
        device = select.device_of(max(local, key=lambda r: r.created_at))
        device = "CPU" if device == "?" else device
    if device is not None:
        device = device.upper()
        recs = [r for r in recs if select.device_of(r) == device]
    groups = select.groups(recs)
    chosen = select.headline(groups)
    per: dict[str, Record] = dict(chosen.records) if chosen is not None else {}
    cfg = dict(chosen.config) if chosen is not None else dict(config)
    if chosen is not None:
        configs = {select.config_key(g.config) for g in groups}
        if len({_describe(g.config) for g in groups}) == 1 < len(configs):
            # they differ only in what a configuration's words leave out: the thread count (the seed point is
            # stored at 1 thread and at every core); each is ranked apart, and the one ranked says its condition
            how = condition.words_of(list(chosen.records.values()))
            notes.append(f"Measured under {len(configs)} thread counts at this configuration; ranked under the one "
                         f"with the most measured variants{f' ({how})' if how else ''}, never two in one ranking.")
        elif len(configs) > 1:
            notes.append(f"{len(configs)} configurations match; using the one with the most measured variants "
                         f"({_describe(cfg)}). Give more of the configuration to choose another.")
        others = [g for g in groups if g is not chosen and select.config_key(g.config) == select.config_key(cfg)]
        if others:
            whose = sorted({select.origin(next(iter(g.records.values()))) for g in others})
            notes.append(f"Also stored at this configuration: records from {'; '.join(whose)}. One machine's "
                         "records are never ranked against another's.")
        if chosen.source != "local":
            notes.append(f"From {chosen.note()}.")
    ok = {v: r for v, r in per.items() if r.ok}
    failed = {v: str(r.error) for v, r in per.items() if not r.ok}
    if variants is None:
        from rnnlab.tf.variants import BASE_VARIANTS

        expected = list(BASE_VARIANTS)
    else:
        expected = list(variants)
    missing = tuple(v for v in expected if v not in per)
    picks: dict[str, Pick] = {}
    for goal in GOALS:
        ranking = sorted(((v, c) for v, r in ok.items() if (c := cost(r, goal, n_steps, mode)) is not None),
                         key=lambda t: t[1])
        picks[goal] = _pick(goal, ranking, ok, n_steps, mode, device, cfg,
                            hint=_run_hint(cfg, variants, experiment) if not ranking else "")
    return Recommendation(config=cfg, device=device, n_steps=n_steps, mode=mode, picks=picks, failed=failed,
                          missing=missing, notes=tuple(notes), source=chosen.note() if chosen is not None else "")


def _describe(p: Mapping) -> str:
    return fmt.fmt_params(dict(p))


def _pick(goal: str, ranking: list, ok: Mapping[str, Record], n_steps: int, mode: str, device: str | None,
          cfg: Mapping, hint: str = "") -> Pick:
    unit = _UNIT[goal]
    step_word = "training steps" if mode == "train" else "forward passes"
    what = {"build_plus_n": f"building and then {n_steps:,} {step_word}",
            "steady_train": "a training step once warm" if mode == "train" else "a forward pass once warm",
            "memory": "peak memory"}[goal]
    where = f" on {device}" if device else ""
    if not ranking:
        return Pick(goal, None, None, unit.strip(),
                    text=f"{what.capitalize()}: nothing measured{where} for this configuration{hint}.")
    best, val = ranking[0]
    text = f"{what.capitalize()}{where}: {best} ({fmt.fmt_value(val)}{unit})"
    ru = ruv = margin = iv = None
    tie = False
    if len(ranking) > 1:
        ru, ruv = ranking[1]
        margin = ruv / val - 1 if val > 0 else None
        iv = interval(ok[ru], ok[best], goal, n_steps, mode) if val > 0 else None
        kind = "memory" if goal == "memory" else "time"
        phrase = wording.difference(iv.inverse(), kind=kind) if iv is not None and iv.lo > 0 else None
        how = fmt.interval_words(iv)
        text += (f", {ru} ({fmt.fmt_value(ruv)}{unit}) next: {best} is {phrase.against(ru)}"
                 f"{' ' + how if how else ''}" if phrase is not None else
                 f", {ru} next ({fmt.fmt_value(ruv)}{unit}; no ratio known, so no call)")
        tie = phrase is None or phrase.status != rules.LOWER
    else:
        text += ", the only variant measured"
    be = None
    if goal == "build_plus_n":
        r = ok[best]
        fixed = _fixed(r, mode)
        text += f"; {fmt.fmt_value(fixed)} s of it is building and first call"
        step = "train_ms" if mode == "train" else "fwd_ms"
        fastest = min(ok.items(), key=lambda kv: kv[1].metrics.get(step, math.inf))
        if fastest[0] != best and step in fastest[1].metrics and _fixed(fastest[1], mode) is not None:
            f_fixed, f_step = _fixed(fastest[1], mode), fastest[1].metrics[step] / 1000.0
            b_step = r.metrics[step] / 1000.0
            if b_step > f_step:
                be = (f_fixed - fixed) / (b_step - f_step)
                text += (f". Beyond about {be:,.0f} steps {fastest[0]} (faster per step, slower to build) wins")
    return Pick(goal, best, val, unit.strip(), ru, ruv, margin, tuple(ranking), be, text + ".", tie, iv)
