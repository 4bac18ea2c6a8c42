"""The package's verbs: plan a run, run it (served from the store where possible), read the environment.

The CLI and the app are two faces of these keyword-only functions; tests call them directly.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from rnnlab.core import envinfo
from rnnlab import experiments
from rnnlab.core.errors import RnnlabError
from rnnlab.engine import runner as _runner
from rnnlab.core.record import Record, canonical_json, make_key, utc_now
from rnnlab.core.store import Store

_PRESET_ONLY = ("variants",)


@dataclass(frozen=True)
class Plan:
    """A validated run: the experiment, every point of the sweep (params filled in), the variants."""

    experiment: str
    points: tuple[Mapping[str, Any], ...]
    variants: tuple[str, ...]
    preset: str | None = None

    @property
    def n_tasks(self) -> int:
        return len(self.points) * len(self.variants)

    def argv(self, *, json: bool = False, fresh: bool = False) -> list[str]:
        """The words after ``python -m rnnlab`` that make this plan again: ``run EXP [--preset P] [--set K=V,...]
        [--variants A,B]``. A parameter is set only where it differs from the preset's (or the default) value, in
        the experiment's parameter order; a swept parameter lists its values."""
        exp = experiments.get(self.experiment)
        base = dict(exp.presets.get(self.preset, {})) if self.preset else {}
        words = ["run", self.experiment] + (["--preset", self.preset] if self.preset else [])
        for name in exp.params.names():
            vals = list(dict.fromkeys(p[name] for p in self.points if name in p))
            if not vals:
                continue
            ref = base.get(name, exp.params[name].default)
            ref = list(ref) if isinstance(ref, (list, tuple)) else [ref]
            if vals != ref:
                words += ["--set", f"{name}=" + ",".join(_word(v) for v in vals)]
        default = base.get("variants") or exp.default_variants
        if list(self.variants) != list(default):
            words += ["--variants", ",".join(self.variants)]
        return words + (["--fresh"] if fresh else []) + (["--json"] if json else [])

    def command(self, **kw) -> str:
        """The shell command that makes this plan again (see :meth:`argv`)."""
        import shlex

        return " ".join(["python", "-m", "rnnlab"] + [shlex.quote(w) for w in self.argv(**kw)])


def first_run_command(experiment: str | None = None) -> str:
    """The command a newcomer runs first: ``experiment``'s quick preset (``unroll`` when None or unknown)."""
    name = experiment if experiment in experiments.names() else "unroll"
    exp = experiments.get(name)
    return plan(name, preset="quick" if "quick" in exp.presets else None, available_mb=float("inf")).command()


def _word(v: Any) -> str:
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def plan(experiment: str, *, preset: str | None = None, overrides: Mapping[str, Sequence[Any] | Any] | None = None,
         variants: Sequence[str] | None = None, available_mb: float | None = None) -> Plan:
    """Validate everything before anything runs. A list value is a sweep (cross product of all lists)."""
    exp = experiments.get(experiment)
    values: dict[str, list[Any]] = {}
    preset_variants = None
    if preset is not None:
        if preset not in exp.presets:
            raise RnnlabError(f"unknown preset {preset!r} for {experiment}; known: {', '.join(exp.presets)}")
        for k, v in exp.presets[preset].items():
            if k == "variants":
                preset_variants = list(v)
            else:
                values[k] = list(v) if isinstance(v, (list, tuple)) else [v]
    for k, v in (overrides or {}).items():
        exp.params[k]  # unknown names are refused here with the list of known ones
        values[k] = list(v) if isinstance(v, (list, tuple)) else [v]
    names = list(values)
    points = []
    for combo in itertools.product(*(values[n] for n in names)):
        points.append(exp.params.fill(dict(zip(names, combo))))
    if not points:
        points = [exp.params.fill({})]
    chosen = list(variants) if variants else (preset_variants or list(exp.default_variants))
    for v in chosen:
        if v not in exp.variants:
            raise RnnlabError(f"unknown variant {v!r} for {experiment}; known: {', '.join(exp.variants)}")
    chosen = list(dict.fromkeys(chosen))
    if exp.check is not None:
        for p in points:
            if available_mb is None:
                exp.check(p, tuple(chosen))
            else:
                exp.check(p, tuple(chosen), available_mb=available_mb)
    return Plan(exp.name, tuple(points), tuple(chosen), preset)


# -- environment ------------------------------------------------------------------------------------------------
_probe_lock = threading.Lock()


def _probe_key(device: str) -> str:
    """The store's meta key of this machine's probe for ``device`` ("CPU"/"GPU")."""
    static = {k: v for k, v in envinfo.static_env().items() if k != "gpu_hint"}
    return "probe:" + device + ":" + hashlib.sha256(canonical_json(static).encode()).hexdigest()[:16]


def cached_probe(store: Store, device: str) -> dict | None:
    """The probe cached for this machine and ``device``, or None (never starts a worker)."""
    raw = store.meta_get(_probe_key(device))
    if not raw:
        return None
    try:
        probe = json.loads(raw)
    except json.JSONDecodeError:
        return None
    return probe if isinstance(probe, dict) else None


def known_env(store: Store, requested: str = "auto") -> dict | None:
    """The ``env`` block a run would record, when it can be known without a worker; None when it cannot
    (a GPU may be present but has never been probed here)."""
    static = envinfo.static_env()
    probe: dict = {}
    gpus: list[str] = []
    if static["gpu_hint"]:
        gpu_probe = cached_probe(store, "GPU")
        if gpu_probe is None:
            return None
        probe.update(gpu_probe)
        gpus = gpu_probe.get("gpus") or []
    try:
        device = envinfo.resolve_device(requested, gpus)
    except RnnlabError:  # device=gpu without a GPU: the run itself refuses it with a message
        return None
    if device == "CPU":
        cpu = cached_probe(store, "CPU")
        if cpu and cpu.get("matmul_gflops"):
            probe["matmul_gflops"] = cpu["matmul_gflops"]
    return envinfo.run_env(static, probe or None, device)


def _probe(store: Store, device: str, *, launcher=_runner.launch_subprocess) -> dict:
    key = _probe_key(device)
    with _probe_lock:
        cached = store.meta_get(key)
        if cached:
            return json.loads(cached)
        msg = _runner.run_task({"kind": "probe", "device": device}, launcher=launcher, timeout_s=300,
                               mem_limit_mb=None)
        if msg.get("type") != "result":
            raise RnnlabError(f"the environment probe failed: {msg.get('reason')}")
        store.meta_set(key, json.dumps(msg["probe"]))
        return msg["probe"]


def environment(requested: str = "auto", *, store: Store | None = None, measure: bool = True,
                launcher=_runner.launch_subprocess) -> dict:
    """The env block a run on ``requested`` would record. ``measure=False`` never starts a worker (no GPU names,
    no matmul rate unless cached)."""
    store = store or Store()
    static = envinfo.static_env()
    gpus: list[str] = []
    probe = None
    if static["gpu_hint"]:
        probe = _probe(store, "GPU", launcher=launcher) if measure else None
        gpus = (probe or {}).get("gpus") or []
    device = envinfo.resolve_device(requested, gpus)
    if device == "CPU" and measure:
        cpu_probe = _probe(store, "CPU", launcher=launcher)
        probe = {**(probe or {}), "matmul_gflops": cpu_probe["matmul_gflops"]}
    return envinfo.run_env(static, probe, device)


# -- running ----------------------------------------------------------------------------------------------------
NOT_KEYED = ("timeout_s",)  # a limit, not part of what is measured (the cache key leaves it out)


def spec_of(experiment: str, version: int, variant: str, params: Mapping[str, Any]) -> dict:
    return {"experiment": experiment, "version": version, "variant": variant,
            "params": {k: v for k, v in params.items() if k not in NOT_KEYED}}


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


def run(p: Plan, *, store: Store | None = None, fresh: bool = False,
        on_progress: Callable[[_runner.Progress], None] | None = None, cancel: threading.Event | None = None,
        launcher: Callable[[dict], _runner.Worker] = _runner.launch_subprocess,
        clock: Callable[[], float] = time.monotonic, mem_limit_mb: float | None = None,
        env: Mapping[str, Any] | None = None) -> list[Record]:
    """Measure every (point, variant) of the plan not yet stored; return the records in plan order.

    Served records carry ``cached=True``. Each fresh one is stored as soon as it exists, so a cancelled or
    interrupted run loses nothing that finished.
    """
    store = store or Store()
    exp = experiments.get(p.experiment)
    say = on_progress or (lambda pr: None)
    t0 = clock()
    env = dict(env) if env is not None else None
    total = p.n_tasks
    out: list[Record] = []
    index = 0
    limit = mem_limit_mb if mem_limit_mb is not None else envinfo.available_mb() * 0.9
    for pi, point in enumerate(p.points):
        run_env = env or environment(point.get("device", "auto"), store=store, launcher=launcher)
        params = dict(point)
        if "device" in params:
            params["device"] = run_env["device"].lower()
        fp = envinfo.fingerprint(run_env)
        variants = list(p.variants)
        ref = exp.reference
        need_ref = ref is not None and ref not in variants
        todo = ([ref] if need_ref else []) + variants
        point_records: dict[str, Record] = {}
        outputs: dict[str, dict] = {}
        for v in todo:
            key = make_key(spec_of(exp.name, exp.version, v, params), fp)
            counted = v in variants
            prog = lambda phase, v=v, i=index: say(_runner.Progress(exp.name, v, phase, i, total,  # noqa: E731
                                                                    clock() - t0, pi, len(p.points)))
            stored = None if fresh else store.get(key)
            if stored is not None and stored.details.get("transient"):
                stored = None  # a crash, time-out or memory kill is worth another try; a deterministic error is not
            if stored is not None:
                point_records[v] = stored.with_(cached=True)
                if counted:
                    prog("cached")
                    index += 1
                continue
            prog("queued")
            with tempfile.TemporaryDirectory(prefix="rnnlab-") as tmp:
                task = {"kind": "variant", "worker": exp.worker, "variant": v, "params": params,
                        "device": run_env["device"], "outputs_path": os.path.join(tmp, "out.npz"),
                        "preload": list(exp.preload)}
                msg = _runner.run_task(task, launcher=launcher, timeout_s=params.get("timeout_s", 900),
                                       mem_limit_mb=limit, on_phase=prog, cancel=cancel, clock=clock)
                arrays = None
                if msg.get("type") == "result" and msg.get("outputs_path") and os.path.exists(msg["outputs_path"]):
                    with open(msg["outputs_path"], "rb") as f:
                        raw = f.read()
                    arrays = _load_npz(raw)
                    if v == ref:
                        store.put_outputs(key, raw)
            if msg.get("type") == "result":
                metrics = dict(msg.get("metrics") or {})
                details = dict(msg.get("details") or {})
                _derived(metrics, details, run_env)
                rec = Record(key=key, experiment=exp.name, variant=v, params=params, metrics=metrics, env=run_env,
                             created_at=utc_now(), error=None, details=details)
                if arrays is not None:
                    outputs[v] = arrays
            else:
                rec = Record(key=key, experiment=exp.name, variant=v, params=params, metrics={}, env=run_env,
                             created_at=utc_now(), error=str(msg.get("reason") or "failed"),
                             details={"transient": True} if msg.get("transient") else {})
            if v == ref and rec.ok:
                rec = rec.with_(metrics={**rec.metrics, "max_abs_diff": 0.0})
            point_records[v] = rec
            store.put(rec)  # at once: a cancelled run keeps what finished
            if counted:
                prog("done" if rec.ok else "failed")
                index += 1
        if ref is not None:
            _attach_diffs(store, exp.name, exp.version, ref, params, fp, point_records, outputs)
        out.extend(point_records[v] for v in variants)
    return out


def _derived(metrics: dict, details: dict, env: Mapping[str, Any]) -> None:
    """GFLOP/s from the counted forward FLOPs; roofline against the matmul rate the worker measured right after
    the variant (the cached per-machine probe only when the worker had none)."""
    flops = details.get("fwd_flops")
    if flops and metrics.get("fwd_ms"):
        metrics["gflops"] = float(flops) / (metrics["fwd_ms"] / 1e3) / 1e9
        rate = details.get("matmul_gflops") or env.get("matmul_gflops")
        if rate:
            metrics["roofline_frac"] = metrics["gflops"] / float(rate)


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
def import_file(data: bytes | str, *, name: str = "file", store: Store | None = None) -> int:
    """Validate every record of a JSON/JSONL file and store them all, or none (never unpickles)."""
    from rnnlab.core.record import parse_records

    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise RnnlabError(f"{name}: not UTF-8 text; expected a JSON array or JSONL of rnnlab records") from None
    records = parse_records(data, name=name)
    store = store or Store()
    return store.put_many([r.with_(source="imported", cached=False) for r in records])
