"""What a run is about to cost before it starts: worker processes and seconds, learned from this machine's own runs.

A round of an interleaved point takes its start (a zygote's import of TensorFlow and the forks, ``engine.launch``),
then, one after the other, each arm's time alone (its untimed parts and one-shot timings) and the windows: every
compared arm's, and the reference's after each pair of them (``interleave.brackets``). The engine keeps these in every
record (``details.cost``: ``start_s``, ``alone_s``, ``windows_s`` and ``windows_n`` per round), and ``Past`` learns
from this machine's own:

- an arm's time alone and the length of its windows: the medians of its records of the same configuration here;
  else its own figures modelled (``_model``: one-shot timings, warm-up steps, a first round's windows) from a record
  of the configuration here, times this machine's ratio of real to modelled seconds; else a bundled record's own
  rounds (its ``details.cost``; the bundled machine of this CPU first), or, a bundled record without them, its
  figures modelled; either scaled by how this machine compares with the bundled one on the configurations both ran;
  else rough (``Experiment.work_s``);
- how many windows a compared arm times a round, a round's start, and the rounds a point takes: as this machine's
  runs of the configuration and run shape did (else the bundled records' rounds), else a first round's least, the
  import's ``WORKER_START_S`` and ``interleave.MIN_ROUNDS``; never a round past the deadline. An interleaved point's
  second round starts apart from the others: its import ran beside the first's (``engine.launch.ahead``), so it
  starts in a fork's time (``details.cost.ahead``; ``FORK_START_S`` until this machine has timed one).

A sequential point is its workers' starts and own times, one after the other: an import first (a first run's ran
beside the machine probe's), then every worker in a fork's time (its import made ahead, or its round's zygote
already forking), where workers fork; else each imports. ``Estimate.from_timings`` says when every
arm's figures came from this machine's own runs of the configuration.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Mapping

from rnnlab import experiments
from rnnlab.core import envinfo
from rnnlab.core.params import device_asked, is_interleaved
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record, canonical_json, make_key
from rnnlab.core.store import Store
from rnnlab.engine import launch
from rnnlab.engine.plan import NOT_KEYED, Plan, spec_of
from rnnlab.engine.environment import known_env, needs_probe

WORKER_START_S = 6.0  # a round's start before this machine has started one: importing TensorFlow and Keras once
FORK_START_S = 0.2  # an interleaved point's second round's start, its import done ahead: its workers' forks
PROBE_S = 3.0  # the environment probe, once per machine and TensorFlow version: a fork of the first round's zygote, its
#               import beside the rounds' own (``engine.running``), then its matmul
QUICK_WORK_S = 1.0  # a quick preset's variant, when nothing says more
# What one run may start without being asked to go further (``check_cost``): the largest preset (unroll full: 315
# workers; seed003 full: about 3 h) passes; a typo'd sweep (``seq_len=1,2,...,500``: 6,000 workers, 45 h) does not.
MAX_WORKERS = 1000
MAX_RUN_S = 6 * 3600.0
BUSY_FROM = 0.5  # cores other processes take from which a round counts as timed beside other work
# A run beside one busy process on 2 cores took 1.25x a quiet one's seconds for a user's question (2 arms) and 1.47x
# for the seed preset (12 arms: more of it one worker at a time, compiling) on a 2-core Xeon (af29b51): the stretch
# until this machine's own busy and quiet rounds say theirs (1.2 said 2.9 min for the seed preset's 4.5)
STRETCH = 1.35


@dataclass(frozen=True)
class Estimate:
    """What a run of a plan is about to do: worker processes and seconds (both before anything runs)."""

    workers: int  # worker processes it starts (rounds and the reference included; stored results left out)
    seconds: float
    stored: int  # (point, variant) records it will serve from the store
    known: bool  # the store could be consulted (False: the environment is not probed yet, nothing counted as stored)
    from_timings: bool  # every arm's seconds come from this machine's own runs of the configuration (else rough)
    slowdown: float = 1.0  # how much longer other processes' load makes a run here (already in ``seconds``)
    others: float | None = None  # those cores (``core.condition.others_now``), when read


def slowdown(others: float | None, past: "Past | None" = None) -> float:
    """How much longer a run takes while other processes keep ``others`` cores busy, when this machine has timed
    no round under such a load: its own busy rounds' stretch (``Past.stretch``), else ``STRETCH``; 1 when quiet."""
    if not busy(others):
        return 1.0
    return past.stretch if past is not None else STRETCH


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
    if not is_interleaved(rec.details) or "fwd_ms" not in m:
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


def _this_cpu(r: Record, static: Mapping[str, Any]) -> bool:
    return r.env.get("cpu") == static["cpu"] and r.env.get("cores") == static["cores"]


def _mine(r: Record, static: Mapping[str, Any]) -> bool:
    return r.ok and r.source == "local" and _this_cpu(r, static)


def busy(others: float | None) -> bool:
    """A round timed while other processes took half a core or more: priced from such rounds."""
    return others is not None and others >= BUSY_FROM


def _rounds(cost: Mapping[str, Any]) -> list[dict]:
    """A record's ``details.cost`` as one dict per round (a key a round lacks: None)."""
    n = max((len(v) for v in cost.values() if isinstance(v, list)), default=0)
    return [{k: (v[i] if isinstance(v, list) and i < len(v) else None) for k, v in cost.items()} for i in range(n)]


@dataclass
class Past:
    """What this machine's stored records say of a round's costs, and the bundled records for what it never ran. A
    round is priced from earlier rounds timed under the condition the machine is in now (quiet, or other processes
    taking half a core or more: ``busy``); where a variant has rounds of the other kind only, they are stretched by
    how much longer this machine's busy rounds took than its quiet ones (``stretch``)."""

    rounds: dict = field(default_factory=dict)  # timing_key -> [{start_s, alone_s, windows_s, windows_n, ref, other}]
    mine: dict = field(default_factory=dict)  # timing_key -> a record of this machine's (no cost kept: modelled)
    bundled: dict = field(default_factory=dict)  # timing_key -> a bundled record (the bundled machine of this CPU first)
    bundled_rounds: dict = field(default_factory=dict)  # timing_key -> that record's rounds (its details.cost)
    bundled_windows: dict = field(default_factory=dict)  # configuration and shape -> windows bundled arms timed a round
    windows: dict = field(default_factory=dict)  # configuration and shape -> windows a compared arm timed a round
    took: dict = field(default_factory=dict)  # configuration and shape -> rounds its points took here
    bundled_took: dict = field(default_factory=dict)
    k: tuple = (1.0, 1.0)  # this machine's seconds alone, and a window's, over the modelled ones
    speed: tuple = (1.0, 1.0)  # this machine's modelled seconds over the bundled machine's, same configurations
    stretch: float = STRETCH  # a busy round's seconds over a quiet one's, this machine's (else the prior)

    @classmethod
    def of(cls, records, bundled) -> "Past":
        static = envinfo.static_env()
        past = cls()
        ka, kw, slower = [], [], []
        for r in records:
            if not _mine(r, static):
                continue
            key = timing_key(r.variant, r.params)
            rounds = _rounds(r.details.get("cost") or {})
            past.rounds.setdefault(key, []).extend(rounds)
            model = _model(r)
            alone = [x["alone_s"] for x in rounds if isinstance(x.get("alone_s"), (int, float))]
            spans = [x["windows_s"] / x["windows_n"] for x in rounds if x.get("windows_n")]
            if model and model[0] and alone:
                ka.append(statistics.median(alone) / model[0])
            if model and model[1] and spans:
                kw.append(statistics.median(spans) / model[1])
            past.windows.setdefault(_config_key(r.params), []).extend(
                x["windows_n"] for x in rounds if x.get("windows_n") and not x.get("ref"))
            past.mine.setdefault(key, r)
            past.took.setdefault(_config_key(r.params), []).append(r.details.get("rounds") or len(r.rounds) or
                                                                   len(rounds) or 1)
        for rounds in past.rounds.values():
            quiet = [_held(x) for x in rounds if not busy(x.get("other"))]
            loaded = [_held(x) for x in rounds if busy(x.get("other"))]
            if quiet and loaded and statistics.median(quiet) > 0:
                slower.append(statistics.median(loaded) / statistics.median(quiet))
        for r in sorted((r for r in bundled if r.ok), key=lambda r: not _this_cpu(r, static)):
            key = timing_key(r.variant, r.params)
            past.bundled_took.setdefault(_config_key(r.params), []).append(r.details.get("rounds") or
                                                                           len(r.rounds) or 1)
            if key in past.bundled:
                continue
            past.bundled[key] = r
            rounds = _rounds(r.details.get("cost") or {})
            if rounds:
                past.bundled_rounds[key] = rounds
                past.bundled_windows.setdefault(_config_key(r.params), []).extend(
                    x["windows_n"] for x in rounds if x.get("windows_n") and not x.get("ref"))
        past.k = (_median(ka) or 1.0, _median(kw) or 1.0)
        past.stretch = _median(slower) or STRETCH
        both = [(_model(past.mine[key]), _model(rec)) for key, rec in past.bundled.items() if key in past.mine]
        both = [(a, b) for a, b in both if a and b]
        past.speed = tuple(_median(a[i] / b[i] for a, b in both if b[i]) or 1.0 for i in (0, 1))
        return past

    def _like(self, rounds: list[dict], loaded: bool) -> tuple[list[dict], float]:
        """The rounds timed under the condition asked for, else all of them and the factor that stretches them."""
        alike = [x for x in rounds if busy(x.get("other")) == loaded]
        if alike:
            return alike, 1.0
        return rounds, self.stretch if loaded else 1.0 / self.stretch

    def arm(self, key: str, rough: float, loaded: bool = False) -> tuple[float, float, bool]:
        """An arm's seconds alone a round, a window's seconds, and whether both are this machine's own of this
        configuration (else modelled from a bundled record, or rough); ``loaded``: other processes take cores now."""
        rounds, f = self._like(self.rounds.get(key, []), loaded)
        alone = _median(x.get("alone_s") for x in rounds)
        window = _median(x["windows_s"] / x["windows_n"] for x in rounds if x.get("windows_n"))
        model = _model(self.mine[key]) if key in self.mine else None
        f_model = self.stretch if loaded else 1.0
        if alone is None and model:
            alone, f_alone = self.k[0] * model[0], f_model
        else:
            f_alone = f
        if window is None and model:
            window, f_window = self.k[1] * model[1], f_model
        else:
            f_window = f
        if alone is not None and window is not None:
            return alone * f_alone, window * f_window, True
        theirs, f_theirs = self._like(self.bundled_rounds.get(key, []), loaded)
        timed = (_median(x.get("alone_s") for x in theirs),
                 _median(x["windows_s"] / x["windows_n"] for x in theirs if x.get("windows_n")))
        other = _model(self.bundled[key]) if key in self.bundled else None

        def pick(i: int, own: float | None, f_own: float, default: float) -> float:
            if own is not None:
                return own * f_own
            if timed[i] is not None:  # the bundled machine's own seconds, at this machine's pace
                return self.speed[i] * timed[i] * f_theirs
            if other:
                return self.k[i] * self.speed[i] * other[i] * f_model
            return default
        return (pick(0, alone, f_alone, self.k[0] * rough * f_model), pick(1, window, f_window, 0.1 * f_model),
                False)

    def start_s(self, loaded: bool = False, ahead: bool = False) -> float:
        """A round's start (a sequential point's: a worker's): an import and the forks, or (``ahead``: an
        interleaved point's second round, a sequential point's workers after its first) the forks of a zygote
        imported before (``details.cost.ahead``)."""
        rounds, f = self._like([x for rs in self.rounds.values() for x in rs if bool(x.get("ahead")) == ahead],
                               loaded)
        start = _median(x.get("start_s") for x in rounds)
        if start is not None:
            return start * f
        theirs, f = self._like([x for rs in self.bundled_rounds.values() for x in rs
                                if bool(x.get("ahead")) == ahead], loaded)
        start = _median(x.get("start_s") for x in theirs)
        if start is not None:  # the bundled machine's, at this machine's pace
            return self.speed[0] * start * f
        return (FORK_START_S if ahead else WORKER_START_S) * (self.stretch if loaded else 1.0)

    def windows_of(self, point: Mapping[str, Any]) -> float:
        """Windows a compared arm times a round at this configuration and shape here (else as the bundled records of
        it did), else a first round's least."""
        from rnnlab.engine import interleave as il

        key = _config_key(point)
        return (_median(self.windows.get(key, [])) or _median(self.bundled_windows.get(key, []))
                or (il.MIN_BUILDS + 2 * il.MIN_CYCLES))

    def rounds_of(self, point: Mapping[str, Any]) -> int:
        """The rounds a point is expected to take: as its configuration and shape took here (else bundled), else
        ``MIN_ROUNDS``; never more than planned."""
        from rnnlab.engine.interleave import MIN_ROUNDS

        planned = int(point.get("rounds", 1))
        if not is_interleaved(point):
            return planned
        key = _config_key(point)
        seen = _median(self.took.get(key, [])) or _median(self.bundled_took.get(key, []))
        return max(1, min(planned, round(seen) if seen else MIN_ROUNDS))


def _held(x: Mapping[str, Any]) -> float:
    """A round's seconds of one arm: alone and its windows."""
    return float(x.get("alone_s") or 0.0) + float(x.get("windows_s") or 0.0)


def estimate(p: Plan, *, store: Store | None = None, fresh: bool = False, others: float | None = None) -> Estimate:
    """How many workers a run of ``p`` starts and about how long it takes here, without starting any (see the
    module's docstring). ``others``: the cores other processes take now: rounds timed under a like load price the
    run (``Past``), else the quiet ones stretched by :func:`slowdown`."""
    from rnnlab.core import baseline
    from rnnlab.engine.interleave import brackets

    store = store or Store()
    exp = experiments.get(p.experiment)
    stored_recs = store.records(exp.name)
    by_key = {r.key: r for r in stored_recs}  # one read, not one per (point, variant): a 6,000-worker sweep in 0.1 s
    past = Past.of(stored_recs, [r for r in baseline.load() if r.experiment == exp.name])
    envs: dict[str, dict | None] = {}
    workers, seconds, stored, known, timed = 0, 0.0, 0, True, True
    if p.points and needs_probe(store, device_asked(p.points[0])):
        seconds += PROBE_S
    ref, loaded = p.reference, busy(others)
    everyone = ([p.companion] if p.companion else []) + list(p.variants)
    rough = QUICK_WORK_S if p.preset == "quick" else exp.work_s
    for point in p.points:
        n_rounds = int(point.get("rounds", 1))
        device = device_asked(point)
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
            arms[v] = past.arm(timing_key(v, params), rough, loaded)
            timed = timed and arms[v][2]
            workers += n_rounds
        if not arms:
            continue
        alone = sum(a for a, _, _ in arms.values())
        if is_interleaved(point):
            if ref in everyone and ref not in arms:  # served from the store, it is timed again beside them
                arms[ref] = past.arm(timing_key(ref, params), rough, loaded)
                alone += arms[ref][0]
            bracket = arms[ref][1] if ref in arms else 0.0
            compared = [w for v, (_, w, _) in arms.items() if v != ref]
            windows = past.windows_of(params) * (sum(compared) + bracket * brackets(len(compared)))
            start = past.start_s(loaded)
            seconds += _interleaved_s(params, past.rounds_of(params), alone + windows, start,
                                      past.start_s(loaded, ahead=True), start)
        else:  # one worker after another: an import first (or, a first run, beside the probe's), then forks of the
            #   imports made ahead (``details.cost.ahead``), where workers fork; else an import each
            forks = launch.can_fork() and (env is None or env["device"] == "CPU")
            later = (n_rounds * len(arms) - 1) * past.start_s(loaded, ahead=forks)
            seconds += past.start_s(loaded) + later + n_rounds * alone
    return Estimate(workers, seconds, stored, known, timed and workers > 0, slowdown(others, past), others)


def _interleaved_s(point: Mapping[str, Any], rounds: int, per_round: float, first: float, second: float,
                   later: float) -> float:
    """An interleaved point: ``rounds`` rounds of ``per_round`` seconds and their starts: the first's ``first``
    seconds, the second's ``second`` (its import ran ahead, beside the first's), each after them ``later`` (an
    import of its own); never a round past the deadline but the first ``MIN_ROUNDS``."""
    from rnnlab.engine.interleave import MIN_ROUNDS

    starts = [first, second] + [later] * max(0, rounds - 2)
    deadline = float(point.get("deadline_s") or 0)
    while deadline and rounds > MIN_ROUNDS and sum(starts[:rounds]) + rounds * per_round > deadline:
        rounds -= 1
    return sum(starts[:rounds]) + rounds * per_round


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
