"""The environment a run records: GPU names and the matmul rate need TensorFlow, so a worker measures them once per
machine and TensorFlow version and the store's ``meta`` table keeps them (``environment``, ``known_env``,
``needs_probe``)."""

from __future__ import annotations

import hashlib
import json
import threading

from rnnlab.core import envinfo
from rnnlab.core.errors import RnnlabError
from rnnlab.engine import runner as _runner
from rnnlab.core.record import canonical_json
from rnnlab.core.store import Store


_probe_lock = threading.Lock()


def probe_key(device: str) -> str:
    """The store's meta key of this machine's probe for ``device`` ("CPU"/"GPU")."""
    static = {k: v for k, v in envinfo.static_env().items() if k != "gpu_hint"}
    return "probe:" + device + ":" + hashlib.sha256(canonical_json(static).encode()).hexdigest()[:16]


def cached_probe(store: Store, device: str) -> dict | None:
    """The probe cached for this machine and ``device``, or None (never starts a worker)."""
    raw = store.meta_get(probe_key(device))
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


def probe_task(device: str) -> dict:
    """The worker task that probes this machine's ``device`` (what TensorFlow sees, the matmul rate)."""
    return {"kind": "probe", "device": device}


def _probe(store: Store, device: str, *, launcher=_runner.launch_subprocess) -> dict:
    key = probe_key(device)
    with _probe_lock:
        cached = store.meta_get(key)
        if cached:
            return json.loads(cached)
        msg = _runner.run_task(probe_task(device), launcher=launcher, timeout_s=300, mem_limit_mb=None)
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


def copy_probes(src: Store, dst: Store) -> int:
    """Copy this machine's cached probes from ``src`` to ``dst`` (a scratch store then needs no probe worker)."""
    n = 0
    for device in ("CPU", "GPU"):
        raw = src.meta_get(probe_key(device))
        if raw:
            dst.meta_set(probe_key(device), raw)
            n += 1
    return n


def needs_probe(store: Store, requested: str = "auto") -> bool:
    """A run on ``requested`` would start the environment probe first (a worker that imports TensorFlow): nothing is
    cached for this machine yet. Never starts a worker."""
    if envinfo.static_env()["gpu_hint"] and cached_probe(store, "GPU") is None:
        return True
    known = known_env(store, requested)
    if known is None:  # device=gpu without a GPU: the run refuses it before any probe
        return False
    return known["device"] == "CPU" and not known.get("matmul_gflops")
