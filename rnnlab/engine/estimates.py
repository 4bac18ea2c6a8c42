"""What a run is about to cost before it starts: worker processes and seconds, learned from this machine's own runs.

A round of an interleaved point takes its start (a zygote's import of TensorFlow and the forks, ``engine.launch``),
then, one after the other, each arm's time alone (its untimed parts and one-shot timings) and the windows: every
compared arm's, each with the reference's window after it. The engine keeps these in every record (``details.cost``:
``start_s``, ``alone_s``, ``windows_s`` and ``windows_n`` per round), and ``Past`` learns from this machine's own:

- an arm's time alone and the length of its windows: the medians of its records of the same configuration here;
  else its own figures modelled (``_model``: one-shot timings, warm-up steps, a first round's windows) from a record
  of the configuration, this machine's or a bundled one (then scaled by how this machine compares with the bundled
  one on the configurations both ran), times this machine's ratio of real to modelled seconds; else rough
  (``Experiment.work_s``);
- how many windows a compared arm times a round, a round's start, and the rounds a point takes: as this machine's
  runs of the configuration and run shape did (else the bundled records' rounds), else a first round's least, the
  import's ``WORKER_START_S`` and ``interleave.MIN_ROUNDS``; never a round past the deadline.

A sequential point is its rounds' starts and its workers' own times, one after the other. ``Estimate.from_timings``
says when every arm's figures came from this machine's own runs of the configuration.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Mapping

from rnnlab import experiments
from rnnlab.core import envinfo
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record, canonical_json, make_key
from rnnlab.core.store import Store
from rnnlab.engine.plan import NOT_KEYED, Plan, spec_of
from rnnlab.engine.environment import known_env, needs_probe

WORKER_START_S = 6.0  # a round's start before this machine has started one: importing TensorFlow and Keras once
PROBE_S = 3.0  # the environment probe, once per machine and TensorFlow version (a fork of the first round's zygote)
QUICK_WORK_S = 1.0  # a quick preset's variant, when nothing says more
# What one run may start without being asked to go further (``check_cost``): the largest preset (unroll full: 315
# workers; seed003 full: about 3 h) passes; a typo'd sweep (``seq_len=1,2,...,500``: 6,000 workers, 45 h) does not.
MAX_WORKERS = 1000
MAX_RUN_S = 6 * 3600.0
SHAPE = ("rounds", "budget_s", "deadline_s")  # how a point is run: the same configuration may take other rounds


@dataclass(frozen=True)
class Estimate:
    """What a run of a plan is about to do: worker processes and seconds (both before anything runs)."""

    workers: int  # worker processes it starts (rounds and the reference included; stored results left out)
    seconds: float
    stored: int  # (point, variant) records it will serve from the store
    known: bool  # the store could be consulted (False: the environment is not probed yet, nothing counted as stored)
    from_timings: bool  # every arm's seconds come from this machine's own runs of the configuration (else rough)
    slowdown: float = 1.0  # ``seconds`` already multiplied by this: the cores other processes take right now
    others: float | None = None  # those cores (``core.condition.others_now``), when read


def slowdown(others: float | None, cores: int) -> float:
    """How much longer a run takes while other processes keep ``others`` of the ``cores`` busy: the run gets the
    rest (at least half a core), so its CPU-bound parts stretch by cores / free."""
    if not others or others <= 0:
        return 1.0
    return cores / max(0.5, cores - others)


def timing_key(variant: str, params: Mapping[str, Any]) -> str:
    """A variant at a configuration, whatever the run's shape (rounds, budget, deadline, limits)."""
    return variant + canonical_json({k: v for k, v in params.items() if k not in NOT_KEYED + ("rounds",)})


def _config_key(params: Mapping[str, Any]) -> str:
    return canonical_json({k: v for k, v in params.items() if k not in ("timeout_s", "live")})


def _model(rec: Record) -> tuple[float, float] | None:
    """A record's seconds alone a round and the mean length of its windows, from its own figures (for a record
    without ``details.cost``): its one-shot timings and warm-up steps; a first round's build windows and step windows
    (each at least ``MIN_WINDOW_S``, with the untimed step before it). A sequential record: its worker's
    own time (``details.worker_wall_s``) alone, no windows."""
    from rnnlab.engine import interleave as il

    m = rec.metrics
    if rec.details.get("protocol") != "interleaved" or "fwd_ms" not in m:
        wall = rec.details.get("worker_wall_s")
        return (float(wall), 0.0) if isinstance(wall, (int, float)) and wall > 0 else None
    once = sum(float(m.get(k, 0.0)) for k in ("first_build_s", "first_call_s", "train_build_s", "train_first_call_s"))
    warmup = int(rec.params.get("warmup", 3))
    steps = [float(m.get(k, 0.0)) / 1000.0 for k in ("fwd_ms", "train_ms")]
    alone = once + warmup * sum(steps)
    windows = il.MIN_BUILDS * float(m.get("build_s", 0.0)) + sum(
        il.MIN_CYCLES * (step + max(il.WINDOW_STEPS * step, il.MIN_WINDOW_S)) for step in steps)
    return alone, windows / (il.MIN_BUILDS + 2 * il.MIN_CYCLES)


def _median(xs) -> float | None:
    xs = [float(x) for x in xs if isinstance(x, (int, float)) and x >= 0]
    return statistics.median(xs) if xs else None


def _mine(r: Record, static: Mapping[str, Any]) -> bool:
    return r.ok and r.source == "local" and r.env.get("cpu") == static["cpu"] and r.env.get("cores") == static["cores"]


@dataclass
class Past:
    """What this machine's stored records say of a round's costs, and the bundled records for what it never ran."""

    alone: dict = field(default_factory=dict)  # timing_key -> seconds alone a round, this machine's
    window: dict = field(default_factory=dict)  # timing_key -> seconds a window of it took here
    mine: dict = field(default_factory=dict)  # timing_key -> a record of this machine's (no cost kept: modelled)
    bundled: dict = field(default_factory=dict)  # timing_key -> a bundled record
    starts: list = field(default_factory=list)  # every round's start here
    windows: dict = field(default_factory=dict)  # configuration and shape -> windows a compared arm timed a round
    rounds: dict = field(default_factory=dict)  # configuration and shape -> rounds its points took here
    bundled_rounds: dict = field(default_factory=dict)
    k: tuple = (1.0, 1.0)  # this machine's seconds alone, and a window's, over the modelled ones
    speed: tuple = (1.0, 1.0)  # this machine's modelled seconds over the bundled machine's, same configurations

    @classmethod
    def of(cls, records, bundled) -> "Past":
        static = envinfo.static_env()
        past = cls()
        ka, kw = [], []
        for r in records:
            if not _mine(r, static):
                continue
            key, cfg = timing_key(r.variant, r.params), _config_key(r.params)
            cost = r.details.get("cost") or {}
            alone = [x for x in cost.get("alone_s") or [] if isinstance(x, (int, float))]
            spans = [s / n for s, n in zip(cost.get("windows_s") or [], cost.get("windows_n") or []) if n]
            past.starts += [x for x in cost.get("start_s") or [] if isinstance(x, (int, float))]
            past.windows.setdefault(cfg, []).extend(
                n for n, ref in zip(cost.get("windows_n") or [], cost.get("ref") or []) if not ref)
            model = _model(r)
            if alone:
                past.alone.setdefault(key, []).extend(alone)
                if model and model[0]:
                    ka.append(statistics.median(alone) / model[0])
            if spans:
                past.window.setdefault(key, []).extend(spans)
                if model and model[1]:
                    kw.append(statistics.median(spans) / model[1])
            past.mine.setdefault(key, r)
            past.rounds.setdefault(cfg, []).append(r.details.get("rounds") or len(r.rounds) or len(alone) or 1)
        for r in bundled:
            if r.ok:
                past.bundled.setdefault(timing_key(r.variant, r.params), r)
                past.bundled_rounds.setdefault(_config_key(r.params), []).append(r.details.get("rounds") or len(r.rounds) or 1)
        past.k = (_median(ka) or 1.0, _median(kw) or 1.0)
        both = [(_model(past.mine[key]), _model(rec)) for key, rec in past.bundled.items() if key in past.mine]
        both = [(a, b) for a, b in both if a and b]
        past.speed = tuple(_median(a[i] / b[i] for a, b in both if b[i]) or 1.0 for i in (0, 1))
        return past

    def arm(self, key: str, rough: float) -> tuple[float, float, bool]:
        """An arm's seconds alone a round, a window's seconds, and whether both are this machine's own of this
        configuration (else modelled from a bundled record, or rough)."""
        model = _model(self.mine[key]) if key in self.mine else None
        if key in self.alone:
            alone = statistics.median(self.alone[key])
        elif model:
            alone = self.k[0] * model[0]
        else:
            alone = None
        if key in self.window:
            window = statistics.median(self.window[key])
        elif model:
            window = self.k[1] * model[1]
        else:
            window = None
        if alone is not None and window is not None:
            return alone, window, True
        other = _model(self.bundled[key]) if key in self.bundled else None
        if other:
            return (self.k[0] * self.speed[0] * other[0] if alone is None else alone,
                    self.k[1] * self.speed[1] * other[1] if window is None else window, False)
        return (self.k[0] * rough if alone is None else alone, 0.1 if window is None else window, False)

    def start_s(self) -> float:
        return _median(self.starts) or WORKER_START_S

    def windows_of(self, point: Mapping[str, Any]) -> float:
        """Windows a compared arm times a round at this configuration and shape here, else a first round's least."""
        from rnnlab.engine import interleave as il

        return _median(self.windows.get(_config_key(point), [])) or (il.MIN_BUILDS + 2 * il.MIN_CYCLES)

    def rounds_of(self, point: Mapping[str, Any]) -> int:
        """The rounds a point is expected to take: as its configuration and shape took here (else bundled), else
        ``MIN_ROUNDS``; never more than planned."""
        from rnnlab.engine.interleave import MIN_ROUNDS

        planned = int(point.get("rounds", 1))
        if point.get("protocol") != "interleaved":
            return planned
        key = _config_key(point)
        seen = _median(self.rounds.get(key, [])) or _median(self.bundled_rounds.get(key, []))
        return max(1, min(planned, round(seen) if seen else MIN_ROUNDS))


def estimate(p: Plan, *, store: Store | None = None, fresh: bool = False, others: float | None = None) -> Estimate:
    """How many workers a run of ``p`` starts and about how long it takes here, without starting any (see the
    module's docstring). ``others``: the cores other processes take now; the seconds stretch by :func:`slowdown`."""
    from rnnlab.core import baseline

    store = store or Store()
    exp = experiments.get(p.experiment)
    stored_recs = store.records(exp.name)
    by_key = {r.key: r for r in stored_recs}  # one read, not one per (point, variant): a 6,000-worker sweep in 0.1 s
    past = Past.of(stored_recs, [r for r in baseline.load() if r.experiment == exp.name])
    envs: dict[str, dict | None] = {}
    workers, seconds, stored, known, timed = 0, 0.0, 0, True, True
    if p.points and needs_probe(store, p.points[0].get("device", "auto")):
        seconds += PROBE_S
    ref = p.reference
    everyone = ([p.companion] if p.companion else []) + list(p.variants)
    rough = QUICK_WORK_S if p.preset == "quick" else exp.work_s
    for point in p.points:
        n_rounds = int(point.get("rounds", 1))
        device = point.get("device", "auto")
        if device not in envs:
            envs[device] = known_env(store, device)
        env = envs[device]
        known = known and (fresh or env is not None)
        params = dict(point)
        if env is not None and "device" in params:
            params["device"] = env["device"].lower()  # as records hold it
        arms = {}
        for v in everyone:
            if env is not None and not fresh:
                rec = by_key.get(make_key(spec_of(exp.name, exp.version, v, params), envinfo.fingerprint(env)))
                if rec is not None and not rec.details.get("transient") and rec.source == "local":
                    stored += v in p.variants
                    continue
            arms[v] = past.arm(timing_key(v, params), rough)
            timed = timed and arms[v][2]
            workers += n_rounds
        if not arms:
            continue
        alone = sum(a for a, _, _ in arms.values())
        if point.get("protocol") == "interleaved":
            if ref in everyone and ref not in arms:  # served from the store, it is timed again beside them
                arms[ref] = past.arm(timing_key(ref, params), rough)
                alone += arms[ref][0]
            bracket = arms[ref][1] if ref in arms else 0.0
            windows = past.windows_of(params) * sum(w + bracket for v, (_, w, _) in arms.items() if v != ref)
            seconds += _interleaved_s(params, past.rounds_of(params), past.start_s() + alone + windows)
        else:  # one worker after another, forked from one import a round
            seconds += n_rounds * (past.start_s() + alone)
    factor = slowdown(others, int(envinfo.static_env()["cores"] or 1))
    return Estimate(workers, seconds * factor, stored, known, timed and workers > 0, factor, others)


def _interleaved_s(point: Mapping[str, Any], rounds: int, per_round: float) -> float:
    """An interleaved point: ``rounds`` rounds of ``per_round`` seconds; never a round past the deadline but the
    first ``MIN_ROUNDS``."""
    from rnnlab.engine.interleave import MIN_ROUNDS

    deadline = float(point.get("deadline_s") or 0)
    if deadline and rounds > MIN_ROUNDS:
        rounds = max(MIN_ROUNDS, min(rounds, int(deadline // per_round)))
    return rounds * per_round


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
