"""Hosted mode: caps on what a visitor of a shared demo may run, so a 2-core, 2.7 GB host stays up.

On when ``RNNLAB_HOSTED`` is set to 1/true (or the app passes ``hosted=true`` from ``st.secrets``). Every integer
parameter of every experiment has a cap here (``Limits``, one field per parameter name; a test enumerates the
registry), and so do a run's sweep points and worker processes, a conversion's memory and time, and a visitor's
session import. The limits can be tightened or relaxed with ``RNNLAB_HOSTED_MAX_<NAME>`` variables. A refused plan
gets an ``RnnlabError`` saying which limit and how to run it anyway (locally, or with the CLI).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

from rnnlab.core.errors import RnnlabError

# params a hosted run lowers to their cap instead of refusing them: the per-variant time limit, and the rounds
# (a hosted run measures one round unless RNNLAB_HOSTED_MAX_ROUNDS raises it)
CLAMPED = ("timeout_s", "rounds", "budget_s", "live")


@dataclass(frozen=True)
class Limits:
    # -- every int parameter of every experiment (by name) -----------------------------------------------------
    units: int = 128
    layers: int = 3
    batch: int = 64
    seq_len: int = 200
    input_dim: int = 128
    repeats: int = 30
    warmup: int = 5
    rounds: int = 1  # hosted runs measure one round unless raised (CLAMPED)
    parallel_iterations: int = 256
    buckets: int = 16
    n_sequences: int = 4096
    n_classes: int = 1000
    epochs: int = 20
    n_train: int = 10000  # the training seed preset trains on 10,000
    n_data: int = 2000
    steps: int = 200
    interval: int = 1000
    first_n: int = 200
    seed: int = 2**31 - 1  # any seed: it changes the numbers, not the cost
    timeout_s: int = 120  # per variant: lowered to this on every hosted run (CLAMPED), not refused
    budget_s: int = 30  # interleaved: seconds of timed windows per point (CLAMPED)
    live: int = 3  # interleaved: workers alive at once, the reference and two others (CLAMPED): 2.7 GB hold three
    # -- per run --------------------------------------------------------------------------------------------------
    points: int = 5  # sweep points per run
    tasks: int = 24  # variant workers per run
    runs_at_once: int = 1  # heavy processes (a run, a checkpoint conversion) at once, process-wide
    # -- a checkpoint conversion (the Migrate page's upload) -----------------------------------------------------
    convert_mb: int = 1500  # memory of the converter subprocess (RSS, MB)
    convert_timeout_s: int = 180
    # -- a visitor's results import (kept in that session, never stored) -----------------------------------------
    import_records: int = 2000  # per session
    import_mb: int = 5  # per session


# the fields above that are not parameters of an experiment
NOT_PARAMS = frozenset({"points", "tasks", "runs_at_once", "convert_mb", "convert_timeout_s", "import_records",
                        "import_mb"})


def enabled(flag: object = None) -> bool:
    value = flag if flag is not None else os.environ.get("RNNLAB_HOSTED", "")
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def limits() -> Limits:
    kw = {}
    for f in fields(Limits):
        raw = os.environ.get(f"RNNLAB_HOSTED_MAX_{f.name.upper()}")
        if raw:
            try:
                kw[f.name] = int(raw)
            except ValueError:
                raise RnnlabError(f"RNNLAB_HOSTED_MAX_{f.name.upper()}={raw!r}: expected an integer") from None
    return Limits(**kw)


def param_caps(lim: Limits | None = None) -> dict[str, int]:
    """Parameter name -> its hosted cap."""
    lim = lim or limits()
    return {f.name: getattr(lim, f.name) for f in fields(Limits) if f.name not in NOT_PARAMS}


def clamp(plan, lim: Limits | None = None):
    """The plan with its ``CLAMPED`` params lowered to their caps (a hosted run's time limit and rounds)."""
    from rnnlab.engine.api import Plan

    lim = lim or limits()
    caps = param_caps(lim)
    points = tuple({**p, **{n: min(p[n], caps[n]) for n in CLAMPED if isinstance(p.get(n), int)}}
                   for p in plan.points)
    return Plan(plan.experiment, points, plan.variants)


def check(plan, lim: Limits | None = None):
    """The plan a hosted visitor may run (``clamp``-ed); ``RnnlabError`` naming every limit it passes.

    An int parameter without a cap here is refused too: a new parameter is capped before strangers can set it."""
    lim = lim or limits()
    caps = param_caps(lim)
    plan = clamp(plan, lim)
    why = []
    for p in plan.points:
        for name, value in p.items():
            if isinstance(value, bool) or not isinstance(value, int):
                continue
            cap = caps.get(name)
            if cap is None:
                why.append(f"{name}={value} (no hosted limit for {name})")
            elif value > cap:
                why.append(f"{name}={value} (at most {cap})")
    if len(plan.points) > lim.points:
        why.append(f"{len(plan.points)} sweep points (at most {lim.points})")
    if plan.n_runs > lim.tasks:  # worker processes: (point, variant, round), after the rounds are clamped
        why.append(f"{plan.n_runs} worker runs (at most {lim.tasks})")
    if why:
        raise RnnlabError("this hosted demo caps what a visitor may run: " + ", ".join(dict.fromkeys(why)) +
                          "; run rnnlab on your own machine for larger configurations"
                          " (pip install -r requirements.txt && streamlit run streamlit_app.py)")
    return plan


def refusal(plan, lim: Limits | None = None) -> str | None:
    """Why ``check`` refuses this plan (its message), or None when it may run: for disabling a Run button."""
    try:
        check(plan, lim)
    except RnnlabError as e:
        return str(e)
    return None
