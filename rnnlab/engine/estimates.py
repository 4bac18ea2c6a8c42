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
    slowdown: float = 1.0  # ``seconds`` already multiplied by this: the cores other processes take right now
    others: float | None = None  # those cores (``core.condition.others_now``), when read


def slowdown(others: float | None, cores: int) -> float:
    """How much longer a run takes while other processes keep ``others`` of the ``cores`` busy: the run gets the
    rest (at least half a core), so its CPU-bound parts stretch by cores / free."""
    if not others or others <= 0:
        return 1.0
    return cores / max(0.5, cores - others)


def _timing_key(variant: str, params: Mapping[str, Any]) -> str:
    return variant + canonical_json({k: v for k, v in params.items() if k not in NOT_KEYED + ("rounds",)})


def estimate(p: Plan, *, store: Store | None = None, fresh: bool = False, others: float | None = None) -> Estimate:
    """How many workers a run of ``p`` starts and about how long it takes here, without starting any: per variant,
    the worker time a stored record of the same configuration took on this machine (``details.worker_wall_s``,
    plus starting the worker), else the experiment's own rough figure (``Experiment.work_s``). An interleaved point
    runs its workers side by side: a round takes one start, every arm's own work (its longest stored round when all
    are known) and its share of the windows' budget, and a point the rounds it needs on a quiet machine
    (``interleave.MIN_ROUNDS``, up to its deadline). ``others``: the cores other processes take now; the seconds
    stretch by :func:`slowdown`."""
    store = store or Store()
    exp = experiments.get(p.experiment)
    static = envinfo.static_env()
    stored_recs = store.records(exp.name)
    by_key = {r.key: r for r in stored_recs}  # one read, not one per (point, variant): a 6,000-worker sweep in 0.1 s
    envs: dict[str, dict | None] = {}
    walls = _walls(r for r in stored_recs if r.source == "local" and r.env.get("cpu") == static["cpu"]
                   and r.env.get("cores") == static["cores"])  # this machine's own
    bundled = _bundled_walls(exp.name)
    workers, seconds, stored, known, timed = 0, 0.0, 0, True, True
    if p.points and needs_probe(store, p.points[0].get("device", "auto")):
        seconds += PROBE_S
    everyone = ([p.companion] if p.companion else []) + list(p.variants)
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
        works, fallback, seen_all, bundled_all = [], [], True, True
        for v in everyone:
            if env is not None:
                rec = by_key.get(make_key(spec_of(exp.name, exp.version, v, params), envinfo.fingerprint(env)))
                if rec is not None and not rec.details.get("transient") and rec.source == "local":
                    stored += v in p.variants
                    continue
            seen = walls.get(_timing_key(v, params))
            timed, seen_all = timed and bool(seen), seen_all and bool(seen)
            # else the bundled records' timing of this configuration (another machine: still rough), else constants
            other = bundled.get(_timing_key(v, params))
            bundled_all = bundled_all and bool(seen or other)
            rough = QUICK_WORK_S if p.preset == "quick" else exp.work_s
            works.append(float(np.median(seen)) if seen else float(np.median(other)) if other else rough)
            fallback.append(float(np.median(seen)) if seen else rough)
            workers += n_rounds
        if works and point.get("protocol") == "interleaved":
            # a stored interleaved wall is a whole round (every arm's windows): priced as one only when every arm
            # has one; a round of some known and some unknown arms is priced from the constants, as before
            seconds += (_interleaved_s(point, n_rounds, works, True) if bundled_all
                        else _interleaved_s(point, n_rounds, fallback, seen_all))
        else:
            seconds += sum(n_rounds * (WORKER_START_S + w) for w in works)
    cores = int(static["cores"] or 1)
    factor = slowdown(others, cores)
    return Estimate(workers, seconds * factor, stored, known, timed and workers > 0, factor, others)


def _walls(records) -> dict[str, list[float]]:
    """The worker times (``details.worker_wall_s``) of ``records`` that succeeded, per (variant, configuration)."""
    out: dict[str, list[float]] = {}
    for r in records:
        wall = r.details.get("worker_wall_s")
        if r.ok and isinstance(wall, (int, float)):
            out.setdefault(_timing_key(r.variant, r.params), []).append(float(wall))
    return out


def _bundled_walls(experiment: str) -> dict[str, list[float]]:
    """The bundled records' worker times per (variant, configuration): what a fresh machine's first run of a
    configuration is priced at (make_baseline's "time left"), before it has timed one itself. Rough: another machine
    (the 2-core Xeon here took about 1.6x the EPYC's on TensorFlow work)."""
    from rnnlab.core import baseline

    return _walls(r for r in baseline.load() if r.experiment == experiment)


def _interleaved_s(point: Mapping[str, Any], n_rounds: int, works: list[float], seen_all: bool) -> float:
    """One interleaved point: its arms side by side (a stored worker's wall already holds the whole round)."""
    from rnnlab.engine.interleave import MIN_ROUNDS

    budget = float(point.get("budget_s") or 0)
    per_round = WORKER_START_S + (max(works) if seen_all else sum(works) + budget / n_rounds)
    rounds = min(n_rounds, MIN_ROUNDS)
    deadline = float(point.get("deadline_s") or 0)
    return min(rounds * per_round, max(deadline, MIN_ROUNDS * per_round)) if deadline else rounds * per_round


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
