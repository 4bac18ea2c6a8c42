"""The Claims page's "Fastest for you": ``rnnlab.judge.recommend`` as a table and in the one sentence rule's words,
and the run that makes the records it needs. Pure."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from rnnlab.core import format as fmt
from rnnlab.core import wording
from rnnlab.core.record import Record
from rnnlab.core.views import TableView
from rnnlab.experiments import seeds
from rnnlab.judge import findings, recommend
from rnnlab.judge.recommend import GOALS, Recommendation
from rnnlab.present import tables
from rnnlab.present.claims_sections import describe


GOAL_TITLES = {"build_plus_n": "Build + {n:,} {steps}", "steady_train": "Steady state: one {step}",
               "memory": "Memory"}
REC_NAMES = ("cell", "layers", "units", "batch", "seq_len")  # the recommendation's configuration on the page
REC_DEFAULTS = {k: seeds.SEED_000[k] for k in REC_NAMES}  # seed 000's configuration


def unroll_variants() -> dict[str, str]:
    """Every unroll variant (with +xla forms) -> what it runs."""
    from rnnlab.tf.variants import VARIANTS

    return dict(VARIANTS)


def base_variants() -> list[str]:
    from rnnlab.tf.variants import BASE_VARIANTS

    return list(BASE_VARIANTS)


def variant_label(variant: str) -> str:
    from rnnlab.tf.variants import label

    return label(variant)


def recommendation(records: Sequence[Record], config: Mapping[str, Any], *, n_steps: int, mode: str,
                   variants: Sequence[str] | None) -> Recommendation:
    """``rnnlab.judge.recommend.recommend`` over the unroll records (one machine's, see there)."""
    return recommend.recommend([r for r in records if r.experiment == "unroll"], config=config, n_steps=n_steps,
                               mode=mode, variants=variants)


def goal_title(goal: str, n_steps: int, mode: str) -> str:
    steps, step = ("training steps", "training step") if mode == "train" else ("forward passes", "forward pass")
    return GOAL_TITLES[goal].format(n=n_steps, steps=steps, step=step)


def ahead_text(pick: recommend.Pick) -> str | None:
    """The winner against the runner-up in the one sentence rule's words (``core.wording``): "1.5x faster than keras
    (1.4–1.6x)", "at 0.99x keras's time (0.81–1.19x), too noisy to call" (None without a runner-up or an interval)."""
    iv = pick.interval
    if pick.runner_up is None or iv is None or not iv.known or iv.lo <= 0:
        return None
    kind = "memory" if pick.goal == "memory" else "time"
    return wording.difference(iv.inverse(), kind=kind).against(pick.runner_up)


def recommendation_view(rec: Recommendation) -> TableView | None:
    """Every measured variant ranked by build + N steps, with its steady-state step and its memory."""
    by_goal = {g: dict(rec.picks[g].ranking) for g in GOALS if g in rec.picks}
    order = [v for v, _ in rec.picks["build_plus_n"].ranking] if "build_plus_n" in rec.picks else []
    for g in GOALS:
        order += [v for v in by_goal.get(g, {}) if v not in order]
    if not order:
        return None
    step = tables.metric_column("train_ms" if rec.mode == "train" else "fwd_ms")
    cols = [tables.VARIANT, tables.WHAT_RUNS, f"build + {rec.n_steps:,} steps (s)", step,
            tables.metric_column("peak_mem_mb")]
    rows, raw = [], []
    for v in order:
        vals = [by_goal.get(g, {}).get(v) for g in GOALS]
        rows.append([v, variant_label(v), fmt.fmt_value(vals[0]), fmt.fmt_metric("fwd_ms", vals[1]),
                     fmt.fmt_metric("peak_mem_mb", vals[2])])
        raw.append([v, variant_label(v), *vals])
    return TableView(title=f"Fastest for you: {describe(rec.config)}",
                     caption=f"{describe(rec.config)} on {rec.device or '?'}; {rec.mode} mode; ranked by build + "
                             f"{rec.n_steps:,} steps" + (f"; {rec.source}" if rec.source else ""),
                     columns=tuple(cols), rows=tuple(map(tuple, rows)), raw=tuple(map(tuple, raw)))


def measure_command(config: Mapping[str, Any], variants: Sequence[str] = ()) -> str:
    """The run that makes the records a recommendation at ``config`` needs (``Plan.command()``)."""
    return recommend.measure_plan(config, variants).command()


def unroll_query(config: Mapping[str, Any], variants: Sequence[str]) -> dict[str, str]:
    """The Unrolling page's query for a configuration and variants."""
    return findings.unroll_query(config, variants)
