"""Which unrolling variant to use, from stored ``unroll`` records for one configuration and device (pure).

Three goals, each answered with the measured margin over the runner-up:

- ``build_plus_n``: the least wall time to build and then run ``n_steps`` steps. Training (``mode="train"``):
  ``build_s + train_build_s + train_first_call_s + n_steps * train_ms``; forward only (``mode="forward"``):
  ``build_s + first_call_s + n_steps * fwd_ms``. (A record without ``train_build_s``/``train_first_call_s`` uses
  ``first_call_s`` in their place.) The break-even step count against the steady-state winner is given when they
  differ: below it the cheaper build wins, above it the faster step.
- ``steady_train``: the fastest training step once warm (``train_ms``; ``fwd_ms`` in forward mode).
- ``memory``: the lowest ``peak_mem_mb``.

Records: those of ``experiment`` ("unroll") whose params include ``config`` (a subset: ``{"cell": "lstm",
"seq_len": 100}``) on ``device`` ("CPU"/"GPU"; None: the device of this machine's newest record). When several
configurations match, the one with the most measured variants is used (newest on ties) and ``notes`` says so. One
record per variant: this machine's over an imported one over a bundled one, then the newest. Failed variants are
listed with their reasons in ``failed``, variants never measured in ``missing``; neither stops a recommendation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from rnnlab.core.record import Record

GOALS = ("build_plus_n", "steady_train", "memory")
_IGNORE = ("repeats", "warmup", "timeout_s", "device")
_RANK = {"local": 0, "imported": 1, "baseline": 2}


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

    @property
    def text(self) -> str:
        lines = [self.picks[g].text for g in GOALS if g in self.picks]
        if self.failed:
            lines.append("Failed here: " + "; ".join(f"{v} ({why})" for v, why in self.failed.items()) + ".")
        if self.missing:
            lines.append("Not measured: " + ", ".join(self.missing) + ".")
        lines += list(self.notes)
        return "\n".join(lines)


def _cfg(r: Record) -> dict:
    return {k: v for k, v in r.params.items() if k not in _IGNORE}


def _key(d: Mapping) -> tuple:
    return tuple(sorted((k, repr(v)) for k, v in d.items()))


def _n(v: float, unit: str = "") -> str:
    if v is None or not math.isfinite(v):
        return "–"
    a = abs(v)
    s = f"{v:,.0f}" if a >= 100 else f"{v:.1f}" if a >= 10 else f"{v:.2f}" if a >= 1 else f"{v:.3g}"
    return s + unit


def _best_per_variant(records: Iterable[Record]) -> dict[str, Record]:
    best: dict[str, Record] = {}
    for r in records:
        cur = best.get(r.variant)
        if cur is None:
            best[r.variant] = r
            continue
        # an ok record beats a failed one; then source; then newest
        a = (not r.ok, _RANK.get(r.source, 3))
        b = (not cur.ok, _RANK.get(cur.source, 3))
        if a < b or (a == b and r.created_at > cur.created_at):
            best[r.variant] = r
    return best


def cost(r: Record, goal: str, n_steps: int, mode: str) -> float | None:
    """The number a variant is ranked by for ``goal`` (None when its record lacks a metric it needs)."""
    m = r.metrics
    if goal == "memory":
        return m.get("peak_mem_mb")
    step = "train_ms" if mode == "train" else "fwd_ms"
    if goal == "steady_train":
        return m.get(step)
    fixed = _fixed(r, mode)
    if fixed is None or step not in m:
        return None
    return fixed + n_steps * m[step] / 1000.0


def _fixed(r: Record, mode: str) -> float | None:
    m = r.metrics
    if "build_s" not in m:
        return None
    if mode == "train" and "train_build_s" in m and "train_first_call_s" in m:
        return m["build_s"] + m["train_build_s"] + m["train_first_call_s"]
    if "first_call_s" not in m:
        return None
    return m["build_s"] + m["first_call_s"]


_UNIT = {"build_plus_n": " s", "steady_train": " ms", "memory": " MB"}


def recommend(records: Iterable[Record], *, config: Mapping[str, Any] | None = None, device: str | None = None,
              n_steps: int = 1000, mode: str = "train", variants: Sequence[str] | None = None,
              experiment: str = "unroll") -> Recommendation:
    """The fastest variant for build + ``n_steps`` steps, for steady-state steps, and the leanest in memory."""
    if mode not in ("train", "forward"):
        raise ValueError(f"mode={mode!r}: expected 'train' or 'forward'")
    config = dict(config or {})
    recs = [r for r in records if r.experiment == experiment
            and all(r.params.get(k) == v for k, v in config.items())]
    notes: list[str] = []
    if device is None and recs:
        local = [r for r in recs if r.source == "local"] or recs
        device = str(max(local, key=lambda r: r.created_at).env.get("device") or "CPU").upper()
    if device is not None:
        device = device.upper()
        recs = [r for r in recs if str(r.env.get("device") or "").upper() == device]
    groups: dict[tuple, list[Record]] = {}
    for r in recs:
        groups.setdefault(_key(_cfg(r)), []).append(r)
    chosen: list[Record] = []
    if groups:
        def score(g):
            per = _best_per_variant(g)
            return (sum(r.ok for r in per.values()), max(r.created_at for r in g))

        chosen = max(groups.values(), key=score)
        if len(groups) > 1:
            notes.append(f"{len(groups)} configurations match; using the one with the most measured variants "
                         f"({_describe(_cfg(chosen[0]))}). Give more of the configuration to choose another.")
    cfg = _cfg(chosen[0]) if chosen else dict(config)
    per = _best_per_variant(chosen)
    if variants is not None:
        per = {v: r for v, r in per.items() if v in variants}
    ok = {v: r for v, r in per.items() if r.ok}
    failed = {v: str(r.error) for v, r in per.items() if not r.ok}
    if variants is None:
        from rnnlab.tf.variants import BASE_VARIANTS

        expected = list(BASE_VARIANTS)
    else:
        expected = list(variants)
    missing = tuple(v for v in expected if v not in per)
    if any(r.source != "local" for r in ok.values()):
        srcs = sorted({f"{r.source} record from {r.machine}" for r in ok.values() if r.source != "local"})
        notes.append("Includes " + ", ".join(srcs) + ".")

    picks: dict[str, Pick] = {}
    for goal in GOALS:
        ranking = sorted(((v, c) for v, r in ok.items() if (c := cost(r, goal, n_steps, mode)) is not None),
                         key=lambda t: t[1])
        picks[goal] = _pick(goal, ranking, ok, n_steps, mode, device, cfg)
    return Recommendation(config=cfg, device=device, n_steps=n_steps, mode=mode, picks=picks, failed=failed,
                          missing=missing, notes=tuple(notes))


def _describe(p: Mapping) -> str:
    from rnnlab.core.format import fmt_params

    return fmt_params(dict(p))


def _pick(goal: str, ranking: list, ok: Mapping[str, Record], n_steps: int, mode: str, device: str | None,
          cfg: Mapping) -> Pick:
    unit = _UNIT[goal]
    step_word = "training steps" if mode == "train" else "forward passes"
    what = {"build_plus_n": f"building and then {n_steps:,} {step_word}",
            "steady_train": "a training step once warm" if mode == "train" else "a forward pass once warm",
            "memory": "peak memory"}[goal]
    where = f" on {device}" if device else ""
    if not ranking:
        return Pick(goal, None, None, unit.strip(),
                    text=f"{what.capitalize()}: nothing measured{where} for this configuration; run "
                         f"`python -m rnnlab run unroll` with it.")
    best, val = ranking[0]
    text = f"{what.capitalize()}{where}: {best} ({_n(val, unit)})"
    ru = ruv = margin = None
    if len(ranking) > 1:
        ru, ruv = ranking[1]
        margin = ruv / val - 1 if val > 0 else None
        text += (f", {margin * 100:.0f}% ahead of {ru} ({_n(ruv, unit)})" if margin is not None
                 else f", ahead of {ru} ({_n(ruv, unit)})")
        if margin is not None and margin < 0.05:
            text += " -- within 5%, a tie in practice"
    else:
        text += ", the only variant measured"
    be = None
    if goal == "build_plus_n":
        r = ok[best]
        fixed = _fixed(r, mode)
        text += f"; {_n(fixed, ' s')} of it is building and first call"
        step = "train_ms" if mode == "train" else "fwd_ms"
        fastest = min(ok.items(), key=lambda kv: kv[1].metrics.get(step, math.inf))
        if fastest[0] != best and step in fastest[1].metrics and _fixed(fastest[1], mode) is not None:
            f_fixed, f_step = _fixed(fastest[1], mode), fastest[1].metrics[step] / 1000.0
            b_step = r.metrics[step] / 1000.0
            if b_step > f_step:
                be = (f_fixed - fixed) / (b_step - f_step)
                text += (f". Beyond about {be:,.0f} steps {fastest[0]} (faster per step, slower to build) wins")
    return Pick(goal, best, val, unit.strip(), ru, ruv, margin, tuple(ranking), be, text + ".")
