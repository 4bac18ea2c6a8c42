"""What is already known for a configuration, without running anything (no worker, no TensorFlow).

The app shows stored results at once and offers to measure only what is missing. ``pick`` chooses, per variant,
the record to show (this machine's first, then imported, then bundled; newest first) and lists the variants that
a run would still measure (no record from this environment). ``known_env`` rebuilds the environment block a run
would record from ``envinfo.static_env()`` and the probes already cached in the store.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from . import envinfo
from .record import Record, canonical_json
from .store import Store

SOURCE_RANK = {"local": 0, "imported": 1, "baseline": 2}
NOT_KEYED = ("timeout_s",)  # as in api.spec_of: a limit, not part of what is measured


def cached_probe(store: Store, device: str) -> dict | None:
    """The probe ``api.environment`` cached for this machine and device ("CPU"/"GPU"), or None.

    The key mirrors ``api._probe``: ``probe:<device>:<sha256 of the static env without gpu_hint>[:16]``.
    """
    static = {k: v for k, v in envinfo.static_env().items() if k != "gpu_hint"}
    key = "probe:" + device + ":" + hashlib.sha256(canonical_json(static).encode()).hexdigest()[:16]
    raw = store.meta_get(key)
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
    except Exception:  # device=gpu without a GPU: the run itself refuses it with a message
        return None
    if device == "CPU":
        cpu = cached_probe(store, "CPU")
        if cpu and cpu.get("matmul_gflops"):
            probe["matmul_gflops"] = cpu["matmul_gflops"]
    return envinfo.run_env(static, probe or None, device)


def same_config(a: Mapping[str, Any], b: Mapping[str, Any], *, ignore: Iterable[str] = ()) -> bool:
    """Params equal, except ``ignore`` and a requested ``device`` of ``auto`` (records hold the resolved one)."""
    skip = set(ignore) | set(NOT_KEYED)
    if a.get("device") == "auto" or b.get("device") == "auto":
        skip.add("device")
    keys = (set(a) | set(b)) - skip
    return all(a.get(k) == b.get(k) for k in keys)


def _ts(r: Record) -> str:
    return r.created_at


def best(records: Iterable[Record], fingerprint: Mapping[str, Any] | None = None) -> Record | None:
    """The record to show among several of one variant and configuration."""
    recs = list(records)
    if not recs:
        return None

    def rank(r: Record):
        current = fingerprint is not None and r.source != "baseline" and envinfo.fingerprint(dict(r.env)) == dict(
            fingerprint)
        return (0 if current else 1, SOURCE_RANK.get(r.source, 3), r.ok is False)

    recs.sort(key=_ts, reverse=True)  # newest first among equals (sort is stable)
    recs.sort(key=rank)
    return recs[0]


@dataclass(frozen=True)
class Selection:
    shown: dict[str, Record]  # variant -> the record to show (in the order asked for)
    missing: tuple[str, ...]  # variants a run would measure: no record from this environment


def pick(records: Sequence[Record], params: Mapping[str, Any], variants: Sequence[str], *,
         fingerprint: Mapping[str, Any] | None = None, experiment: str | None = None) -> Selection:
    """Per variant, the best record of exactly this configuration; and what is missing.

    With ``fingerprint`` None (environment unknown), any record of this machine's store counts as present.
    """
    shown: dict[str, Record] = {}
    missing: list[str] = []
    for v in variants:
        cands = [r for r in records if r.variant == v and (experiment is None or r.experiment == experiment)
                 and same_config(r.params, params)]
        b = best(cands, fingerprint)
        if b is not None:
            shown[v] = b
        # what api.run would serve: not bundled, not a crash/time-out it would try again, this environment
        served = [r for r in cands if r.source != "baseline" and not r.details.get("transient")]
        if fingerprint is None:
            have = bool(served)
        else:
            have = any(envinfo.fingerprint(dict(r.env)) == dict(fingerprint) for r in served)
        if not have:
            missing.append(v)
    return Selection(shown=shown, missing=tuple(missing))


def sweep(records: Sequence[Record], params: Mapping[str, Any], variants: Sequence[str], *, x: str = "seq_len",
          fingerprint: Mapping[str, Any] | None = None, experiment: str | None = None) -> list[Record]:
    """The best record per (variant, value of ``x``) of this configuration with ``x`` free: a sweep's points."""
    groups: dict[tuple, list[Record]] = {}
    for r in records:
        if r.variant in variants and (experiment is None or r.experiment == experiment) and x in r.params \
                and same_config(r.params, params, ignore=(x,)):
            groups.setdefault((r.variant, r.params[x]), []).append(r)
    out = [best(g, fingerprint) for g in groups.values()]
    order = {v: i for i, v in enumerate(variants)}
    return sorted((r for r in out if r is not None), key=lambda r: (order[r.variant], r.params[x]))
