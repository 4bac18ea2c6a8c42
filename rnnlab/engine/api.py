"""The package's verbs: plan a run (``engine.plan``), estimate it (``engine.estimates``), run it (here: served from
the store where possible, else by workers, folded into records), read the environment (``engine.probes``), import
results (``engine.importing``).

The CLI and the app are two faces of these keyword-only functions, all importable from here; tests call them directly.
"""

from __future__ import annotations

import io
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from rnnlab.core import condition, envinfo, rules, stats
from rnnlab import experiments
from rnnlab.engine import runner as _runner
from rnnlab.core.record import Record, make_key, utc_now
from rnnlab.core.store import Store
# the package's verbs, one module per concern; importers use them from here
from rnnlab.engine.estimates import (MAX_RUN_S, MAX_WORKERS, PROBE_S, QUICK_WORK_S, WORKER_START_S, Estimate,  # noqa: F401
                                     check_cost, estimate)
from rnnlab.engine.importing import MAX_IMPORT_BYTES, ImportCount, import_file, read_import  # noqa: F401
from rnnlab.engine.plan import NOT_KEYED, Plan, first_run_command, own_run_words, plan, spec_of  # noqa: F401
from rnnlab.engine.probes import _probe_key, cached_probe, copy_probes, environment, known_env, needs_probe  # noqa: F401


# -- running ----------------------------------------------------------------------------------------------------

def _diff(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray]) -> float | None:
    keys = set(a) & set(b)
    if not keys or any(a[k].shape != b[k].shape for k in keys):
        return None
    return float(max(np.max(np.abs(a[k].astype(np.float64) - b[k].astype(np.float64))) if a[k].size else 0.0
                     for k in keys))


def _load_npz(data: bytes | None) -> dict | None:
    if not data:
        return None
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _loadavg() -> float | None:
    """The 1-minute load average, or None where the platform has none."""
    try:
        return round(float(os.getloadavg()[0]), 2)
    except (AttributeError, OSError):
        return None


def others_now() -> float:
    """The cores other processes keep busy right now (``core.condition.others_now``): an estimate's condition."""
    return condition.others_now()


def busy_warning(cores: int | None = None, *, others: Callable[[], float] | None = None) -> str | None:
    """A warning when other processes keep the machine busy right now (``rules.busy_cores`` of their CPU time, read
    over half a second before any worker starts, so rnnlab's own never count), else None. Never a refusal: the run
    goes on, every window's own reading stands in its record (``details.condition``)."""
    cores = int(cores or envinfo.static_env()["cores"] or 1)
    try:
        other = (others or condition.others_now)()
    except Exception:  # a platform without CPU counters: nothing to warn about
        return None
    if not rules.busy_cores(other):
        return None
    return (f"warning: machine busy: other processes use {other:.1f} of {cores} core{'s' if cores != 1 else ''};"
            " each comparison is decided only from windows timed under one load, or said to be too busy to decide")


@dataclass
class _Rounds:
    """One variant's rounds at one point, while they run."""

    metrics: list = field(default_factory=list)  # each successful round's metrics
    details: dict | None = None  # the first successful round's
    raw: bytes | None = None  # the first successful round's outputs (npz)
    failures: list = field(default_factory=list)  # (round, message) of each failed round
    loads: list = field(default_factory=list)  # [before, after]: the 1-minute load around each round's worker
    windows: list = field(default_factory=list)  # interleaved: each round's {metric: window values}
    own: list = field(default_factory=list)  # cores the worker kept busy while timed, every window or series
    stops: list = field(default_factory=list)  # interleaved: each round's {metric: why its windows stopped}
    loads_read: list = field(default_factory=list)  # sequential: each round's readings of other processes' cores
    final: bool = False  # its record is made (all rounds seen, or the first failed deterministically)
    seen: int = 0  # rounds finished


def run(p: Plan, *, store: Store | None = None, fresh: bool = False,
        on_progress: Callable[[_runner.Progress], None] | None = None, cancel: threading.Event | None = None,
        launcher: Callable[[dict], _runner.Worker] = _runner.launch_subprocess,
        clock: Callable[[], float] = time.monotonic, mem_limit_mb: float | None = None,
        env: Mapping[str, Any] | None = None, cluster=None) -> list[Record]:
    """Measure every (point, variant) of the plan not yet stored; return the records in plan order.

    Each point is measured in ``rounds`` rounds (a parameter, 1 by default): in every round each variant not served
    from the store runs in its own fresh worker, in an order that rotates from round to round (round r starts at
    the r-th variant), so a burst of load falls on different variants in different rounds. A variant's record keeps
    every round's metrics (``Record.rounds``); its ``metrics`` are their medians. The reference variant, when the
    plan needs it for ``max_abs_diff``, runs in every round too.

    Served records carry ``cached=True``. Each fresh one is stored as soon as its last round ends, so a cancelled or
    interrupted run loses only the variants whose rounds had not all finished.

    ``cluster`` (an ``engine.cluster.Cluster``): the same tasks run as Ray tasks on the cluster's nodes instead of
    one after the other here (``Cluster.run``: ``engine.cluster.run``); everything else is this function's.
    """
    store = store or Store()
    if cluster is not None:  # (its own method: the run path does not import the cluster module, which imports it)
        return cluster.run(p, store=store, fresh=fresh, on_progress=on_progress, cancel=cancel, clock=clock,
                           mem_limit_mb=mem_limit_mb, env=env)
    exp = experiments.get(p.experiment)
    count = Counter(p, on_progress, clock)
    warning = busy_warning((env or {}).get("cores"))
    if warning:
        count.say_run(warning)
    out: list[Record] = []
    limit = mem_limit_mb if mem_limit_mb is not None else envinfo.available_mb() * 0.9
    for pi, point in enumerate(p.points):
        if env is None and needs_probe(store, point.get("device", "auto")):
            count.say_run("measuring this machine once (TensorFlow's import, a matmul probe)", pi)
        run_env = dict(env) if env is not None else environment(point.get("device", "auto"), store=store,
                                                                   launcher=launcher)
        pt = open_point(store, exp, p, pi, point, run_env, fresh=fresh, count=count)
        if pt.params.get("protocol") == "interleaved" and pt.todo:
            for group in live_groups(pt):
                _run_interleaved(store, exp, pt, group, count=count, launcher=launcher, limit=limit, cancel=cancel,
                                 clock=clock)
            out.extend(close_point(store, exp, pt))
            continue
        for r, v in pt.schedule():
            if pt.state[v].final:
                continue  # its record stands since round 1 (and its rounds were counted then)
            prog = count.phase_reporter(pt, v, r)
            prog("queued")
            before = _loadavg()
            msg, raw = measure(variant_task(exp, v, pt.params, run_env), want_outputs=pt.state[v].raw is None,
                               timeout_s=pt.params.get("timeout_s", 900), launcher=launcher, limit=limit,
                               on_phase=prog, cancel=cancel, clock=clock)
            take_round(store, exp, pt, v, r, msg, raw, (before, _loadavg()), count=count)
        out.extend(close_point(store, exp, pt))
    return out


def live_groups(pt: "OpenPoint") -> list[list[str]]:
    """The variants to measure in groups of at most ``live`` workers alive at once, the reference in the first (the
    later groups measure it again beside theirs, so each of their pairs with it is timed side by side)."""
    live = max(2, int(pt.params.get("live", 16)))
    first = [pt.ref] if pt.ref in pt.todo else []
    others = [v for v in pt.todo if v not in first]
    size = live - 1  # the reference takes one place in every group
    chunks = [others[i:i + size] for i in range(0, len(others), size)] or [[]]
    return [first + chunks[0], *chunks[1:]] if first or chunks[0] else []


def _run_interleaved(store: Store, exp, pt: "OpenPoint", todo: list, *, count: "Counter", launcher, limit, cancel,
                     clock) -> None:
    """A point's rounds under the interleaved protocol (``engine.interleave.run_point``): per round every variant to
    measure, and the reference (measured again when it was served from the store, so every pair is timed side by
    side), in fresh workers alive at once. Each round is folded and stored as a sequential run's is (``take_round``);
    a point whose comparisons are all decided ends early, and progress says why each series stopped."""
    import random
    import uuid

    from rnnlab.engine import interleave

    ref_rec = pt.records.get(pt.ref) if pt.ref is not None and pt.ref not in todo else None
    companion = pt.ref if ref_rec is not None and ref_rec.ok else None
    arms = ([companion] if companion else []) + list(todo)
    pt.session = uuid.uuid4().hex[:12]
    planned = pt.n_rounds = int(pt.params.get("rounds", 1))  # an earlier group may have ended early
    progs: dict = {}
    companion_windows: list = []
    tmp = tempfile.TemporaryDirectory(prefix="rnnlab-")

    def make_tasks(r: int) -> dict:
        progs.update({a: count.phase_reporter(pt, a, r) for a in arms})
        progs["_load"] = _loadavg()
        return {a: {**variant_task(exp, a, pt.params, pt.run_env),
                    "outputs_path": os.path.join(tmp.name, f"{r}-{i}.npz")
                    if a in todo and pt.state[a].raw is None else None} for i, a in enumerate(arms)}

    def fold(r: int, got, last: bool) -> None:
        if last:
            pt.n_rounds = r + 1  # every comparison decided: the rounds left are not needed
        loads = (progs["_load"], _loadavg())
        if companion:
            companion_windows.append(got.windows.get(companion, {}))
        for v in todo:
            msg, raw = _round_output(got, v)
            pt.state[v].windows.append(got.windows.get(v, {}))
            pt.state[v].own.extend(got.own.get(v, []))
            pt.state[v].stops.append(dict(got.stops))
            take_round(store, exp, pt, v, r, msg, raw, loads, count=count)
        count.say_run(f"round {r + 1} of {planned}: " + interleave.stop_words(got.stops), pt.index)
        if last and pt.n_rounds < planned:
            count.index += (planned - pt.n_rounds) * sum(v in pt.variants for v in todo)
            count.say_run(_ended_words(got.ended, pt, planned), pt.index)

    with tmp:
        interleave.run_point(make_tasks, ref=pt.ref, rounds=planned, budget_s=float(pt.params.get("budget_s", 120)),
                             deadline_s=float(pt.params.get("deadline_s") or 0),
                             on_round=fold, on_phase=lambda r, a, ph: progs[a](ph), rng=random.Random(pt.session),
                             launcher=launcher, timeout_s=pt.params.get("timeout_s", 900), mem_limit_mb=limit,
                             cancel=cancel, clock=clock)
    if companion and companion_windows:
        rec = pt.records[companion]
        paired = dict(rec.details.get("paired") or {})
        paired[pt.session] = _by_metric(companion_windows)
        rec = rec.with_(details={**rec.details, "paired": paired})
        store.put(rec.with_(cached=False))
        pt.records[companion] = rec



def _ended_words(ended: str, pt: "OpenPoint", planned: int) -> str:
    """Why a point ran fewer rounds than planned (``RoundOutcome.ended``)."""
    if ended == "decided":
        return (f"every comparison with {pt.ref} decided after {pt.n_rounds} rounds: the other "
                f"{planned - pt.n_rounds} not needed")
    return (f"{pt.n_rounds} rounds in the {pt.params.get('deadline_s')} s this point may take (deadline_s): what is "
            "still undecided says so")


def _round_output(got, v: str) -> tuple[dict, bytes | None]:
    """A variant's message from an interleaved round, and its outputs (npz bytes) where it wrote them."""
    msg = got.messages.get(v) or {"type": "error", "transient": True, "reason": "the worker said nothing"}
    raw = None
    path = msg.get("outputs_path") if msg.get("type") == "result" else None
    if path and os.path.exists(path):
        with open(path, "rb") as f:
            raw = f.read()
    return msg, raw

def _by_metric(rounds: list) -> dict:
    """[{metric: windows} per round] -> {metric: [windows per round]} (a round without a metric: [])."""
    names = dict.fromkeys(m for r in rounds for m in r)
    return {m: [list(r.get(m, [])) for r in rounds] for m in names}


class Counter:
    """The progress of a run: tasks done so far (``index``) out of ``p.n_runs``, said through ``on_progress``."""

    def __init__(self, p: Plan, on_progress, clock):
        self.exp, self.total, self.n_points = p.experiment, p.n_runs, len(p.points)
        self.say = on_progress or (lambda pr: None)
        self.clock, self.t0, self.index = clock, clock(), 0

    def say_run(self, phase: str, pi: int = 0) -> None:
        """A line about the whole run (a warning, the environment probe)."""
        self.say(_runner.Progress(self.exp, "", phase, self.index, self.total, self.clock() - self.t0, pi,
                                  self.n_points))

    def phase_reporter(self, pt: "OpenPoint", v: str, r: int, where: str = "") -> Callable[[str], None]:
        i = self.index
        return lambda phase: self.say(_runner.Progress(self.exp, v, phase, i, self.total, self.clock() - self.t0,
                                                       pt.index, self.n_points, r, pt.n_rounds, where))

    def finished(self, pt: "OpenPoint", v: str, r: int, phase: str, skipped: int = 0) -> None:
        """A task of a plan variant ended (``skipped``: its later rounds that will not run count as done too)."""
        self.say(_runner.Progress(self.exp, v, phase, self.index + skipped, self.total, self.clock() - self.t0,
                                  pt.index, self.n_points, r, pt.n_rounds, pt.where))
        self.index += 1 + skipped


@dataclass
class OpenPoint:
    """One point of a plan while its rounds run: its keys, the records it has, each fresh variant's rounds."""

    index: int
    params: dict
    run_env: dict
    fp: dict
    keys: dict  # variant -> key (the reference first when the plan needs it)
    variants: list  # the plan's variants, in plan order
    ref: str | None
    n_rounds: int
    todo: list  # variants to measure (not served from the store)
    records: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict)
    where: str = ""  # the node it runs on (a cluster run)
    session: str = ""  # interleaved: the id every record of this point run pairs its windows under

    def schedule(self) -> list[tuple[int, str]]:
        """(round, variant) in the order they run: every round each variant once, the order rotated per round."""
        out = []
        for r in range(self.n_rounds):
            k = r % len(self.todo) if self.todo else 0
            out += [(r, v) for v in self.todo[k:] + self.todo[:k]]
        return out


def open_point(store: Store, exp, p: Plan, pi: int, point: Mapping, run_env: Mapping, *, fresh: bool,
               count: Counter, where: str = "") -> OpenPoint:
    """A point's keys on the machine ``run_env`` describes, with what the store already has served (said as
    "cached"): a crash, time-out or memory kill is worth another try, a deterministic error is not; an imported
    record is another machine's word, never served as this machine's measurement."""
    params = dict(point)
    if "device" in params:
        params["device"] = run_env["device"].lower()
    fp = envinfo.fingerprint(dict(run_env))
    variants = list(p.variants)
    ref = exp.reference
    need_ref = ref is not None and ref not in variants
    keys = {v: make_key(spec_of(exp.name, exp.version, v, params), fp)
            for v in ([ref] if need_ref else []) + variants}
    pt = OpenPoint(pi, params, dict(run_env), fp, keys, variants, ref, int(point.get("rounds", 1)), [], where=where)
    for v in keys:  # the reference first, then the plan's order
        stored = None if fresh else store.get(keys[v])
        if stored is not None and (stored.details.get("transient") or stored.source != "local"):
            stored = None
        if stored is None:
            pt.todo.append(v)
            pt.state[v] = _Rounds()
            continue
        pt.records[v] = stored.with_(cached=True)
        if v in variants:
            count.index += pt.n_rounds - 1
            count.finished(pt, v, pt.n_rounds - 1, "cached")
    return pt


def take_round(store: Store, exp, pt: OpenPoint, v: str, r: int, msg: dict, raw: bytes | None,
               loads: tuple, *, count: Counter) -> bool:
    """Fold one finished round of ``v`` into its point; when it was its last (or its first failed for good), its
    record is made and stored at once (a cancelled run keeps what finished). True when the record is made."""
    st = pt.state[v]
    if st.final:
        return False  # a round already under way when an earlier one decided the record
    before, after = loads
    if before is not None and after is not None:
        st.loads.append([before, after])
    if msg.get("type") == "result":
        metrics = dict(msg.get("metrics") or {})
        details = dict(msg.get("details") or {})
        readings = details.pop("readings", None) or []  # sequential: each series' condition
        st.own.extend(float(x["own"]) for x in readings if isinstance(x.get("own"), (int, float)))
        if readings:
            st.loads_read.append([float(x["other"]) for x in readings if isinstance(x.get("other"), (int, float))])
        _derived(metrics, details, pt.run_env, _round_other(st))  # per round: each round's own matmul rate
        st.metrics.append(metrics)
        if st.details is None:
            st.details = details
        if st.raw is None and raw is not None:
            st.raw = raw
    else:
        st.failures.append((r, msg))
        st.final = r == 0 and not msg.get("transient")
    st.seen += 1
    done = st.final or st.seen == pt.n_rounds
    if done:
        rec = _record(exp, v, pt.keys[v], pt.params, pt.run_env, st, pt.n_rounds, pt.session)
        if rec.ok and v == pt.ref:
            rec = rec.with_(metrics={**rec.metrics, "max_abs_diff": 0.0})
            if st.raw is not None:
                store.put_outputs(pt.keys[v], st.raw)
        if rec.ok and st.raw is not None:
            pt.outputs[v] = _load_npz(st.raw)
        pt.records[v] = rec
        store.put(rec)
        st.final = True
    if v in pt.variants:
        skipped = pt.n_rounds - st.seen if done else 0  # the rounds it will not run count as done
        count.finished(pt, v, r, "done" if msg.get("type") == "result" else "failed", skipped)
    return done


def close_point(store: Store, exp, pt: OpenPoint) -> list[Record]:
    """The point's records in plan order, each fresh one with its ``max_abs_diff`` against the reference."""
    if pt.ref is not None:
        _attach_diffs(store, exp.name, exp.version, pt.ref, pt.params, pt.fp, pt.records, pt.outputs)
    return [pt.records[v] for v in pt.variants]


def variant_task(exp, v: str, params: Mapping, run_env: Mapping) -> dict:
    """What a worker is given to measure ``v`` at ``params`` (JSON: it may travel to another machine)."""
    return {"kind": "variant", "worker": exp.worker, "variant": v, "params": dict(params),
            "device": run_env["device"], "preload": list(exp.preload)}


def measure(task: dict, *, want_outputs: bool, timeout_s: float, launcher=_runner.launch_subprocess,
            limit: float | None, on_phase=lambda p: None, cancel: threading.Event | None = None,
            clock: Callable[[], float] = time.monotonic) -> tuple[dict, bytes | None]:
    """One task in one fresh worker, under the time and memory limits: its message, and its outputs (npz bytes)
    when asked for and returned."""
    with tempfile.TemporaryDirectory(prefix="rnnlab-") as tmp:
        task = {**task, "outputs_path": os.path.join(tmp, "out.npz") if want_outputs else None}
        msg = _runner.run_task(task, launcher=launcher, timeout_s=timeout_s, mem_limit_mb=limit,
                               on_phase=on_phase, cancel=cancel, clock=clock)
        raw = None
        path = msg.get("outputs_path") if msg.get("type") == "result" else None
        if want_outputs and path and os.path.exists(path):
            with open(path, "rb") as f:
                raw = f.read()
    return msg, raw


def _record(exp, v: str, key: str, params: Mapping, run_env: Mapping, st: _Rounds, n_rounds: int,
            session: str = "") -> Record:
    """A variant's record from its rounds: the medians of the successful rounds, or an error record when none
    succeeded. A one-round record is what a run made before rounds existed, plus ``rounds`` = that one round."""
    if not st.metrics:
        _, first = st.failures[0]
        details: dict = {"transient": True} if all(m.get("transient") for _, m in st.failures) else {}
        if len(st.failures) > 1:
            details["failed_rounds"] = [{"round": r + 1, "reason": str(m.get("reason") or "failed")}
                                        for r, m in st.failures]
        return Record(key=key, experiment=exp.name, variant=v, params=params, metrics={}, env=run_env,
                      created_at=utc_now(), error=str(first.get("reason") or "failed"), details=details)
    details = dict(st.details or {})
    if session:
        details["protocol"] = "interleaved"
        details["paired"] = {session: _by_metric(st.windows)}
        details["paired_stop"] = st.stops
    cores = int(run_env.get("cores") or 1)
    cond = condition.summarize(condition.threads_used(int(params.get("threads") or 0), cores), cores,
                               _round_readings(st), st.own, rules.SAME_LOAD)
    details["condition"] = cond.to_json()
    if any("roofline_frac" in m for m in st.metrics):
        details.pop("roofline_note", None)  # a round whose probe ran under its windows' load stands
    if st.loads and (n_rounds > 1 or rules.busy(max(max(x) for x in st.loads), run_env.get("cores"))):
        details["loadavg"] = st.loads  # one round: kept only when it was busy, so its figures say so
    if n_rounds > 1:
        details["rounds"] = n_rounds
        if st.failures:
            details["failed_rounds"] = [{"round": r + 1, "reason": str(m.get("reason") or "failed")}
                                        for r, m in st.failures]
    return Record(key=key, experiment=exp.name, variant=v, params=params, metrics=stats.combine_rounds(st.metrics),
                  env=run_env, created_at=utc_now(), error=None, details=details,
                  rounds=tuple(st.metrics))


def _derived(metrics: dict, details: dict, env: Mapping[str, Any], other: float | None = None) -> None:
    """GFLOP/s from the counted forward FLOPs; roofline against the matmul rate the worker measured right after
    the variant, only when that probe ran under the load its windows were timed under (``other``: the round's
    median reading of other processes' cores; ``details.matmul_other`` the probe's): a rate probed under another
    load would make a share of it wrong, even above 1. Records from workers that read no load keep the old rule
    (the cached per-machine probe only when the worker had none)."""
    flops = details.get("fwd_flops")
    if flops and metrics.get("fwd_ms"):
        metrics["gflops"] = float(flops) / (metrics["fwd_ms"] / 1e3) / 1e9
        probed = details.get("matmul_other")
        rate = details.get("matmul_gflops") if probed is not None or other is not None else \
            details.get("matmul_gflops") or env.get("matmul_gflops")  # a worker that read no load: the old rule
        if probed is not None and not rules.same_load(probed, other):
            details["roofline_note"] = (f"not shown: the matmul rate was probed while other processes took "
                                        f"{probed:.1f} cores, the windows at {other:.1f}")
        elif rate:
            metrics["roofline_frac"] = metrics["gflops"] / float(rate)


def _round_readings(st: _Rounds) -> list[list[float]]:
    """Each round's readings of other processes' cores while it was timed (interleaved: every window's; sequential:
    every series')."""
    if st.loads_read:
        return st.loads_read
    return [[float(x) for k, xs in w.items() if k.endswith(stats.OTHER) for x in xs] for w in st.windows]


def _round_other(st: _Rounds) -> float | None:
    rounds = _round_readings(st)
    return condition.per_round(rounds[-1:])[0] if rounds and rounds[-1] else None


def _attach_diffs(store: Store, name: str, version: int, ref: str, params: Mapping, fp: Mapping,
                  recs: dict[str, Record], outputs: dict[str, dict]) -> None:
    """max_abs_diff of each fresh record against the reference's outputs (from this run or the store)."""
    ref_rec = recs.get(ref)
    ref_out = outputs.get(ref)
    if ref_out is None and ref_rec is not None and ref_rec.ok:
        ref_out = _load_npz(store.get_outputs(ref_rec.key))
    for v, rec in list(recs.items()):
        if rec.cached or v == ref or not rec.ok:
            continue
        metrics = dict(rec.metrics)
        details = dict(rec.details)
        if ref_out is None:
            details["max_abs_diff_note"] = f"the reference {ref} produced no outputs"
        elif v not in outputs:
            details["max_abs_diff_note"] = "this variant returned no outputs to compare"
        else:
            d = _diff(outputs[v], ref_out)
            if d is None:
                details["max_abs_diff_note"] = "outputs not comparable with the reference (shapes differ)"
            else:
                metrics["max_abs_diff"] = d
        recs[v] = rec.with_(metrics=metrics, details=details)
        store.put(recs[v])


# -- results ----------------------------------------------------------------------------------------------------


