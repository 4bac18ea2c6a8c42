"""A point of a run while its rounds run: its keys and what the store already has (``open_point``), each round of a
variant folded in and its record made and stored as soon as its last round ends (``take_round``), the records in plan
order with ``max_abs_diff`` against the experiment's reference (``close_point``); the worker task of a variant
(``variant_task``) and one task in one worker under the limits (``measure``). ``engine.api.run`` and the cluster
runner (``engine.cluster``) drive these alike."""

from __future__ import annotations

import io
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from rnnlab import experiments
from rnnlab.core import condition, envinfo, rules, stats
from rnnlab.core.params import INTERLEAVED
from rnnlab.core.record import Record, make_key, utc_now
from rnnlab.core.store import Store
from rnnlab.engine import runner as _runner
from rnnlab.engine.plan import Plan, spec_of


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


def loadavg() -> float | None:
    """The 1-minute load average, or None where the platform has none."""
    try:
        return round(float(os.getloadavg()[0]), 2)
    except (AttributeError, OSError):
        return None


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
    costs: list = field(default_factory=list)  # each round's costs (``engine.estimates`` learns from them)
    final: bool = False  # its record is made (all rounds seen, or the first failed deterministically)
    seen: int = 0  # rounds finished


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
    ref = p.reference
    keys = {v: make_key(spec_of(exp.name, exp.version, v, params), fp)
            for v in ([p.companion] if p.companion else []) + variants}
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
        if rec.ok and v == exp.reference:  # max_abs_diff is against the experiment's reference, whatever ``--ref``
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


def reference_records(p: Plan, records: Sequence[Record], store: Store | None = None) -> list[Record]:
    """The stored record of the reference each point of ``records`` was timed beside, where the plan's variants lack
    it (``Plan.companion``): the row every ratio of those records is against."""
    if p.companion is None:
        return []
    exp = experiments.get(p.experiment)
    store = store or Store(readonly=True)
    out: dict[str, Record] = {}
    for r in records:
        key = make_key(spec_of(exp.name, exp.version, p.companion, r.params), envinfo.fingerprint(dict(r.env)))
        got = store.get(key) if key not in out else None
        if got is not None:
            out[key] = got
    return list(out.values())


def close_point(store: Store, exp, pt: OpenPoint) -> list[Record]:
    """The point's records in plan order, each fresh one with its ``max_abs_diff`` against the reference."""
    if exp.reference is not None:
        _attach_diffs(store, exp.name, exp.version, exp.reference, pt.params, pt.fp, pt.records, pt.outputs)
    return [pt.records[v] for v in pt.variants]


def variant_task(exp, v: str, params: Mapping, run_env: Mapping, *, matmul: bool = True) -> dict:
    """What a worker is given to measure ``v`` at ``params`` (JSON: it may travel to another machine); ``matmul``:
    it probes the machine's matmul rate right after the variant (the roofline's denominator; an interleaved round
    asks one worker, and its rate stands for the round)."""
    return {"kind": "variant", "worker": exp.worker, "variant": v, "params": dict(params),
            "device": run_env["device"], "preload": list(exp.preload), "matmul": matmul}


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
    if st.costs:  # its rounds' start (an import, forks), its time alone, its windows: what estimates learn from
        details["cost"] = {k: [round(c[k], 3) if isinstance(c.get(k), float) else c.get(k) for c in st.costs]
                           for k in st.costs[0]}
    if session:
        details["protocol"] = INTERLEAVED
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
    ref_rec = recs.get(ref) or store.get(make_key(spec_of(name, version, ref, params), fp))  # ``--ref``: stored
    ref_out = outputs.get(ref)
    if ref_out is None and ref_rec is not None and ref_rec.ok:
        ref_out = _load_npz(store.get_outputs(ref_rec.key))
    for v, rec in list(recs.items()):
        if rec.cached or v == ref or not rec.ok:
            continue
        metrics = dict(rec.metrics)
        details = dict(rec.details)
        if ref_out is None and ref not in recs:
            details["max_abs_diff_note"] = (f"{ref}, the reference of max_abs_diff, was not run here (--ref "
                                            "compares with another); ref_abs_diff compares with float64 NumPy")
        elif ref_out is None:
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


def _by_metric(rounds: list) -> dict:
    """[{metric: windows} per round] -> {metric: [windows per round]} (a round without a metric: [])."""
    names = dict.fromkeys(m for r in rounds for m in r)
    return {m: [list(r.get(m, [])) for r in rounds] for m in names}
