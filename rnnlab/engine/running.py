"""Running a plan here: served from the store where possible, else by workers (``engine.launch``), one after the
other (sequential) or interleaved (``engine.interleave``), folded into records and stored as they finish
(``engine.points``)."""

from __future__ import annotations

import os
import random
import statistics
import tempfile
import threading
import time
import uuid
from typing import Any, Callable, Mapping

from rnnlab import experiments
from rnnlab.core import condition, envinfo, rules
from rnnlab.core.params import IMPLIED, device_asked, is_interleaved
from rnnlab.core.record import Record
from rnnlab.core.store import Store
from rnnlab.engine import interleave, launch, runner as _runner
from rnnlab.engine.environment import environment, needs_probe, probe_task
from rnnlab.engine.plan import Plan
from rnnlab.engine.points import (Counter, OpenPoint, _by_metric, loadavg, close_point, measure, open_point,
                                  take_round, variant_task)


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




def run(p: Plan, *, store: Store | None = None, fresh: bool = False,
        on_progress: Callable[[_runner.Progress], None] | None = None, cancel: threading.Event | None = None,
        launcher: Callable[[dict], _runner.Worker] | None = None,
        clock: Callable[[], float] = time.monotonic, mem_limit_mb: float | None = None,
        env: Mapping[str, Any] | None = None, cluster=None, others: float | None = None) -> list[Record]:
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
    ``others``: the cores other processes took just before (the caller read them for its estimate: not read again).
    """
    store = store or Store()
    if cluster is not None:  # (its own method: the run path does not import the cluster module, which imports it)
        return cluster.run(p, store=store, fresh=fresh, on_progress=on_progress, cancel=cancel, clock=clock,
                           mem_limit_mb=mem_limit_mb, env=env)
    with launch.own(launcher) as launcher:
        return _run(p, store=store, fresh=fresh, on_progress=on_progress, cancel=cancel, launcher=launcher, clock=clock,
                    mem_limit_mb=mem_limit_mb, env=env, others=others)


def _run(p: Plan, *, store: Store, fresh: bool, on_progress, cancel, launcher, clock, mem_limit_mb, env, others
         ) -> list[Record]:
    exp = experiments.get(p.experiment)
    count = Counter(p, on_progress, clock)
    warning = busy_warning((env or {}).get("cores"), others=None if others is None else lambda: others)
    if warning:
        count.say_run(warning)
    out: list[Record] = []
    limit = mem_limit_mb if mem_limit_mb is not None else envinfo.available_mb() * 0.9
    for pi, point in enumerate(p.points):
        if env is None and needs_probe(store, device_asked(point)):
            count.say_run("measuring this machine once (TensorFlow's import, a matmul probe)", pi)
            _import_beside_probe(launcher, exp, point)
        run_env = dict(env) if env is not None else environment(device_asked(point), store=store,
                                                                   launcher=launcher)
        pt = open_point(store, exp, p, pi, point, run_env, fresh=fresh, count=count)
        if is_interleaved(pt.params) and pt.todo:
            for group in live_groups(pt):
                _run_interleaved(store, exp, pt, group, count=count, launcher=launcher, limit=limit, cancel=cancel,
                                 clock=clock)
            out.extend(close_point(store, exp, pt))
            continue
        _run_sequential(store, exp, pt, run_env, count=count, launcher=launcher, limit=limit, cancel=cancel,
                        clock=clock)
        out.extend(close_point(store, exp, pt))
    return out


def _import_beside_probe(launcher, exp, point: Mapping) -> None:
    """A first run here probes the machine first (``environment``) in a worker of the zygote the point's first round
    forks from, when the two are alike (this CPU, TensorFlow's own thread count, the same modules): the imports of
    the rounds the point runs for sure then start beside the probe's, and are done (``launch.settle``) before the
    probe times its matmul, so the first round starts in a fork's time, not an import's."""
    if device_asked(point) not in ("auto", "cpu") or envinfo.static_env()["gpu_hint"]:
        return  # which device it runs on is the probe's to say
    task = variant_task(exp, "", point, {"device": "CPU"})
    spec = launch.zygote_spec(task)
    if spec is None or spec != launch.zygote_spec(probe_task("CPU")):
        return
    n = _rounds_ahead(point)
    if n > 0:  # (a point of one round forks from the probe's own zygote anyway)
        launch.ahead(launcher, [task], n)
        launch.settle(launcher)


def _rounds_ahead(params: Mapping) -> int:
    """The rounds whose imports a point's first round starts beside its own (``engine.launch.ahead``): every later
    round of a sequential point; of an interleaved one, those it runs for sure (``interleave.imports_ahead``)."""
    rounds = int(params.get("rounds", 1))
    return interleave.imports_ahead(rounds) if is_interleaved(params) else rounds - 1


def _run_sequential(store: Store, exp, pt: "OpenPoint", run_env, *, count: "Counter", launcher, limit, cancel,
                    clock) -> None:
    """A point's rounds one worker after another: every round's import started with the first's, side by side, and
    done before the first worker times anything (``engine.launch.ahead``); each round's workers from its own."""
    last_round, waited, ahead = None, 0.0, _rounds_ahead(pt.params)
    for r, v in pt.schedule():
        if pt.state[v].final:
            continue  # its record stands since round 1 (and its rounds were counted then)
        task = variant_task(exp, v, pt.params, run_env)
        if r != last_round:  # each round's workers from a new import (``engine.launch``)
            launch.new_round(launcher)
        imported = launch.imported(launcher, [task])  # its import done before it starts: it forks at once
        if last_round is None and ahead > 0:
            t = clock()
            launch.ahead(launcher, [task], ahead)
            launch.settle(launcher)
            waited = clock() - t  # the first round's start: its import and those ahead
        last_round = r
        prog = count.phase_reporter(pt, v, r)
        prog("queued")
        before, t0 = loadavg(), clock() - waited
        waited = 0.0
        msg, raw = measure(task, want_outputs=pt.state[v].raw is None, timeout_s=pt.params.get("timeout_s", 900),
                           launcher=launcher, limit=limit, on_phase=prog, cancel=cancel, clock=clock)
        held = (msg.get("details") or {}).get("worker_wall_s") if msg.get("type") == "result" else None
        if held is not None:  # its start (an import, or a fork) and the variant's own time
            read = [x["other"] for x in msg["details"].get("readings") or [] if x.get("other") is not None]
            pt.state[v].costs.append({"start_s": max(0.0, clock() - t0 - held), "alone_s": held,
                                      "other": round(statistics.median(read), 2) if read else None,
                                      "ahead": imported})
        take_round(store, exp, pt, v, r, msg, raw, (before, loadavg()), count=count)


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
        progs["_load"] = loadavg()
        return {a: {**variant_task(exp, a, pt.params, pt.run_env, matmul=i == 0),  # one matmul probe a round
                    "outputs_path": os.path.join(tmp.name, f"{r}-{i}.npz")
                    if a in todo and pt.state[a].raw is None else None} for i, a in enumerate(arms)}

    def fold(r: int, got, last: bool) -> None:
        if last:
            pt.n_rounds = r + 1  # every comparison decided: the rounds left are not needed
        loads = (progs["_load"], loadavg())
        if companion:
            companion_windows.append(got.windows.get(companion, {}))
        rate = _round_rate(got)
        for v in todo:
            msg, raw = _round_output(got, v, rate)
            pt.state[v].windows.append(got.windows.get(v, {}))
            pt.state[v].own.extend(got.own.get(v, []))
            pt.state[v].stops.append(dict(got.stops))
            if v in got.alone:
                pt.state[v].costs.append(got.cost(v, pt.ref))
            take_round(store, exp, pt, v, r, msg, raw, loads, count=count)
        count.say_run(f"round {r + 1} of {planned}: " + interleave.round_words(got, pt.ref, not last), pt.index)
        if last and pt.n_rounds < planned:
            count.index += (planned - pt.n_rounds) * sum(v in pt.variants for v in todo)
            count.say_run(_ended_words(got.ended, pt, planned), pt.index)

    with tmp:
        interleave.run_point(make_tasks, ref=pt.ref, rounds=planned, budget_s=float(pt.params.get("budget_s", IMPLIED["budget_s"])),
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
    if ended == "out of reach":
        return (f"after {pt.n_rounds} rounds what is not decided lies too near the {rules.MARGIN:.0%} margin for more "
                f"rounds to decide it: the other {planned - pt.n_rounds} not run")
    return (f"{pt.n_rounds} rounds in the {pt.params.get('deadline_s')} s this point may take (deadline_s): what is "
            "still undecided says so below")


def _round_rate(got) -> dict:
    """The round's matmul rate and the load it was probed under (``details.matmul_gflops`` / ``matmul_other``), from
    the one worker that measured it right after its variant (``variant_task(matmul=True)``); {} when none did."""
    for msg in got.messages.values():
        d = msg.get("details") or {} if msg.get("type") == "result" else {}
        if d.get("matmul_gflops") is not None:
            return {k: d[k] for k in ("matmul_gflops", "matmul_other") if k in d}
    return {}


def _round_output(got, v: str, rate: Mapping | None = None) -> tuple[dict, bytes | None]:
    """A variant's message from an interleaved round (with the round's matmul ``rate`` where its worker probed
    none), and its outputs (npz bytes) where it wrote them."""
    msg = got.messages.get(v) or {"type": "error", "transient": True, "reason": "the worker said nothing"}
    if rate and msg.get("type") == "result" and (msg.get("details") or {}).get("fwd_flops"):
        msg = {**msg, "details": {**rate, **msg["details"]}}
    raw = None
    path = msg.get("outputs_path") if msg.get("type") == "result" else None
    if path and os.path.exists(path):
        with open(path, "rb") as f:
            raw = f.read()
    return msg, raw


def run_arms(tasks: Mapping[str, dict], *, ref: str, rounds: int, budget_s: float, rng: random.Random,
             timeout_s: float, mem_limit_mb: float | None, deadline_s: float = 0.0, launcher=None,
             clock: Callable[[], float] = time.monotonic) -> dict:
    """One interleaved point of the given arms (arm -> worker task), timed exactly as a run's are and stored nowhere:
    every arm's windows per round (``interleave.run_point``). ``calibrate``'s trials: copies of one variant, some
    given extra work."""
    with launch.own(launcher) as launcher:
        return interleave.run_point(lambda r: tasks, ref=ref, rounds=rounds, budget_s=budget_s, deadline_s=deadline_s,
                                    on_round=lambda r, got, last: None, on_phase=lambda r, a, ph: None, rng=rng,
                                    launcher=launcher, timeout_s=timeout_s, mem_limit_mb=mem_limit_mb, cancel=None,
                                    clock=clock)
