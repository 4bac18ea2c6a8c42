"""What a run is about to cost before it starts: worker processes and seconds, from this machine's stored timings
of the same configuration, else rough per-experiment constants (``estimate`` -> ``Estimate``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from rnnlab.core import envinfo
from rnnlab.core.errors import RnnlabError
from rnnlab import experiments
from rnnlab.core.record import canonical_json, make_key
from rnnlab.core.store import Store
from rnnlab.engine.plan import NOT_KEYED, Plan, spec_of
from rnnlab.engine.probes import known_env, needs_probe


# What a run costs, from the 2-core machine these were measured on: ``run unroll --preset quick`` took 8 s per worker,
# of which the variant itself (``details.worker_wall_s``) about 1 s; the rest is starting the interpreter, importing
# TensorFlow and Keras (5 s) and the matmul rate measured after the variant.
WORKER_START_S = 7.0  # a worker's time besides its variant's own
PROBE_S = 9.0  # the environment probe, once per machine and TensorFlow version
QUICK_WORK_S = 1.0  # a quick preset's variant, when this machine has no stored timing of it
# What one run may start without being asked to go further (``check_cost``): the largest preset (unroll full: 315
# workers; seed003 full: about 3 h) passes; a typo'd sweep (``seq_len=1,2,...,500``: 6,000 workers, 45 h) does not.
MAX_WORKERS = 1000
MAX_RUN_S = 6 * 3600.0


@dataclass(frozen=True)
class Estimate:
    """What a run of a plan is about to do: worker processes and seconds (both before anything runs)."""

    workers: int  # worker processes it starts (rounds and the reference included; stored results left out)
    seconds: float
    stored: int  # (point, variant) records it will serve from the store
    known: bool  # the store could be consulted (False: the environment is not probed yet, nothing counted as stored)
    from_timings: bool  # every variant's time comes from this machine's stored records (else rough constants)


def _timing_key(variant: str, params: Mapping[str, Any]) -> str:
    return variant + canonical_json({k: v for k, v in params.items() if k not in NOT_KEYED + ("rounds",)})


def estimate(p: Plan, *, store: Store | None = None, fresh: bool = False) -> Estimate:
    """How many workers a run of ``p`` starts and about how long it takes here, without starting any: per variant,
    the worker time a stored record of the same configuration took on this machine (``details.worker_wall_s``,
    plus starting the worker), else the experiment's own rough figure (``Experiment.work_s``)."""
    store = store or Store()
    exp = experiments.get(p.experiment)
    static = envinfo.static_env()
    walls: dict[str, list[float]] = {}
    stored_recs = store.records(exp.name)
    by_key = {r.key: r for r in stored_recs}  # one read, not one per (point, variant): a 6,000-worker sweep in 0.1 s
    envs: dict[str, dict | None] = {}
    for r in stored_recs:
        wall = r.details.get("worker_wall_s")
        if (r.ok and r.source == "local" and isinstance(wall, (int, float)) and r.env.get("cpu") == static["cpu"]
                and r.env.get("cores") == static["cores"]):
            walls.setdefault(_timing_key(r.variant, r.params), []).append(float(wall))
    workers, seconds, stored, known, timed = 0, 0.0, 0, True, True
    if p.points and needs_probe(store, p.points[0].get("device", "auto")):
        seconds += PROBE_S
    ref = exp.reference
    everyone = ([ref] if ref is not None and ref not in p.variants else []) + list(p.variants)
    for point in p.points:
        n_rounds = int(point.get("rounds", 1))
        device = point.get("device", "auto")
        if not fresh and device not in envs:
            envs[device] = known_env(store, device)
        env = None if fresh else envs[device]
        known = known and (fresh or env is not None)
        params = dict(point)
        if env is not None and "device" in params:
            params["device"] = env["device"].lower()
        for v in everyone:
            if env is not None:
                rec = by_key.get(make_key(spec_of(exp.name, exp.version, v, params), envinfo.fingerprint(env)))
                if rec is not None and not rec.details.get("transient") and rec.source == "local":
                    stored += v in p.variants
                    continue
            seen = walls.get(_timing_key(v, params))
            timed = timed and bool(seen)
            work = (float(np.median(seen)) if seen else
                    QUICK_WORK_S if p.preset == "quick" else exp.work_s)
            workers += n_rounds
            seconds += n_rounds * (WORKER_START_S + work)
    return Estimate(workers, seconds, stored, known, timed and workers > 0)


def check_cost(est: Estimate, *, allow_long: bool = False, how: str = "pass --allow-long to run it anyway") -> None:
    """Refuse, before anything starts, a run past ``MAX_WORKERS`` worker processes or ``MAX_RUN_S`` of estimated
    time unless ``allow_long`` (the CLI's ``--allow-long``); ``how``: what the message says to do instead."""
    if allow_long or (est.workers <= MAX_WORKERS and est.seconds <= MAX_RUN_S):
        return
    from rnnlab.core.format import fmt_seconds

    hours = f" ({est.seconds / 3600:.0f} h)" if est.seconds >= 7200 else ""
    raise RnnlabError(f"this run would start {est.workers:,} worker processes, about {fmt_seconds(est.seconds)}{hours}"
                      f"{' (rough)' if not est.from_timings else ''} on this machine: more than a run starts unasked "
                      f"(at most {MAX_WORKERS:,} worker processes and {MAX_RUN_S / 3600:g} h); {how}, or sweep "
                      "fewer values")
