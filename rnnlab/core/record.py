"""Records: one variant measured under one set of params, as DESIGN.md defines them.

Schema history (bump ``SCHEMA`` and add an ``_upgrade_to_N`` step when the format changes):
  1 -- DESIGN.md's record, plus ``details`` (non-numeric facts: kernel that ran, captured errors, small arrays).
  2 -- ``rounds``: each round's metrics (a round is one fresh worker); ``metrics`` then holds the median of the
       rounds. A schema-1 record reads as one round (``rounds`` empty, ``round_metrics`` == ``(metrics,)``).

Records are immutable. ``from_dict`` validates everything it reads and refuses what it cannot read with an
``RnnlabError`` that says what is wrong; it never evaluates or unpickles anything.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Mapping

from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip

SCHEMA = 2

# Metrics of DESIGN.md's record (experiments may add their own; see each Experiment.metrics_doc).
CORE_METRICS = ("build_s", "graph_nodes", "first_call_s", "fwd_ms", "fwd_ms_p25", "fwd_ms_p75", "train_ms",
                "train_ms_p25", "train_ms_p75", "peak_mem_mb", "max_abs_diff", "gflops", "roofline_frac")
_REQUIRED = ("schema", "key", "experiment", "variant", "params", "metrics", "env", "created_at", "error")


def canonical_json(obj: Any) -> str:
    """Key-sorted, compact JSON: the text a key is hashed from (never Python's ``hash()``)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def make_key(spec: Mapping[str, Any], env_fingerprint: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json({"spec": spec, "env": env_fingerprint}).encode()).hexdigest()


def utc_now() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Record:
    key: str
    experiment: str
    variant: str
    params: Mapping[str, Any]
    metrics: Mapping[str, float]
    env: Mapping[str, Any]
    created_at: str
    error: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    schema: int = SCHEMA
    cached: bool = False  # served from the store in this call; not stored
    source: str = "local"  # "local" (this machine's store), "baseline" (bundled), "imported"
    rounds: tuple[Mapping[str, float], ...] = ()  # each round's metrics; () for a one-round (schema 1) record

    @property
    def round_metrics(self) -> tuple[Mapping[str, float], ...]:
        """The metrics of every round: ``rounds``, or ``(metrics,)`` for a one-round record."""
        return tuple(self.rounds) if self.rounds else (self.metrics,)

    def to_dict(self, *, with_transient: bool = True) -> dict[str, Any]:
        d = {"schema": self.schema, "key": self.key, "experiment": self.experiment, "variant": self.variant,
             "params": dict(self.params), "metrics": dict(self.metrics), "env": dict(self.env),
             "created_at": self.created_at, "error": self.error, "details": dict(self.details),
             "rounds": [dict(r) for r in self.rounds]}
        if with_transient:
            d["cached"] = self.cached
            d["source"] = self.source
        return d

    def with_(self, **changes) -> "Record":
        return replace(self, **changes)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def machine(self) -> str:
        return str(self.env.get("machine") or self.env.get("device_name") or "unknown machine")

    @classmethod
    def from_dict(cls, d: Any, *, where: str = "record") -> "Record":
        """Validate and build. ``where`` names the place in a file for the error message."""
        if not isinstance(d, dict):
            raise RnnlabError(f"{where}: expected a JSON object, got {type(d).__name__}")
        d = upgrade(d, where=where)
        missing = [k for k in _REQUIRED if k not in d]
        if missing:
            raise RnnlabError(f"{where}: missing field(s) {', '.join(missing)}; is this an rnnlab results file?")
        for k, typ in (("key", str), ("experiment", str), ("variant", str), ("created_at", str)):
            if not isinstance(d[k], typ) or not d[k]:
                raise RnnlabError(f"{where}: field {k!r} must be a non-empty string")
        if len(d["key"]) != 64 or any(c not in "0123456789abcdef" for c in d["key"]):
            raise RnnlabError(f"{where}: field 'key' must be a sha256 hex digest")
        for k in ("params", "metrics", "env"):
            if not isinstance(d[k], dict):
                raise RnnlabError(f"{where}: field {k!r} must be an object")
        if d["error"] is not None and not isinstance(d["error"], str):
            raise RnnlabError(f"{where}: field 'error' must be null or a string")
        metrics = _numbers(d["metrics"], f"{where}: metric")
        rounds = d.get("rounds", [])  # false, 0, "" or {} are not an empty list: refused
        if not isinstance(rounds, list) or not all(isinstance(r, dict) for r in rounds):
            raise RnnlabError(f"{where}: field 'rounds' must be a list of objects (one per round), got"
                              f" {_kind(rounds)}")
        rounds = tuple(_numbers(r, f"{where}: round {i + 1}'s metric") for i, r in enumerate(rounds))
        details = d.get("details", {})
        if not isinstance(details, dict):
            raise RnnlabError(f"{where}: field 'details' must be an object, got {_kind(details)}")
        try:
            datetime.fromisoformat(d["created_at"].replace("Z", "+00:00"))
        except ValueError:
            raise RnnlabError(f"{where}: created_at {_short(d['created_at'])} is not an ISO-8601 time") from None
        source = d.get("source", "local")
        return cls(key=d["key"], experiment=d["experiment"], variant=d["variant"], params=dict(d["params"]),
                   metrics=metrics, env=dict(d["env"]), created_at=d["created_at"], error=d["error"],
                   details=dict(details), schema=SCHEMA, cached=bool(d.get("cached", False)),
                   source=source if source in ("local", "baseline", "imported") else "local", rounds=rounds)


def finite_number(v: Any) -> float | None:
    """``v`` as a float when it is a finite JSON number (not a bool), else None (``10**400`` included)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


def _short(v: Any) -> str:
    """A value quoted in an error: at most 40 characters (a 1 MB field is never echoed whole)."""
    return clip(repr(v), 40) if not isinstance(v, int) or abs(v) < 10**30 else "a number too large"


def _kind(v: Any) -> str:
    """A JSON value's type in words, quoting a short scalar: "a list", "false", "0", "''"."""
    if isinstance(v, (list, dict)):
        return f"{'a list' if isinstance(v, list) else 'an object'} ({_short(v)})"
    return _short(v) if v is not None else "null"


def _numbers(values: dict, what: str) -> dict[str, float]:
    out = {}
    for name, v in values.items():
        f = finite_number(v)
        if f is None:
            raise RnnlabError(f"{what} {_short(name)} must be a finite number, got {_short(v)}")
        out[str(name)] = f
    return out


def upgrade(d: dict, *, where: str = "record") -> dict:
    """Bring an older record up to ``SCHEMA`` step by step; refuse a newer one."""
    v = d.get("schema")
    if not isinstance(v, int) or isinstance(v, bool):
        raise RnnlabError(f"{where}: no integer 'schema' field; is this an rnnlab results file?")
    if v > SCHEMA:
        raise RnnlabError(f"{where}: written by a newer rnnlab (record schema {_short(v)}, this one reads up to {SCHEMA});"
                          " upgrade rnnlab to read it")
    if v < 1:
        raise RnnlabError(f"{where}: unknown record schema {_short(v)}")
    if v == 1:
        d = _upgrade_to_2(d)
    return d


def _upgrade_to_2(d: dict) -> dict:
    """Schema 1 -> 2: one round, so no ``rounds`` list (``Record.round_metrics`` is ``(metrics,)``)."""
    return {**d, "schema": 2, "rounds": []}


def _refuse_constant(word: str) -> Any:
    raise ValueError(f"{word} is not a number rnnlab stores")


def _finite_float(text: str) -> float:
    f = float(text)
    if not math.isfinite(f):
        raise ValueError(f"the number {text[:20]} is too large")
    return f


def _loads(text: str) -> Any:
    """``json.loads`` without NaN/Infinity or numbers that overflow a float; JSONDecodeError for text that is not
    JSON, RnnlabError for JSON rnnlab cannot hold (nested too deeply, numbers too large)."""
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise RnnlabError("nested too deeply to be an rnnlab record") from None
    except ValueError as e:  # NaN/Infinity, 1e400, an integer of more than 4300 digits
        raise RnnlabError("an integer too long to read" if "digits" in str(e) else str(e)) from None


def parse_records(text: str, *, name: str = "file") -> list[Record]:
    """Records from JSON (an array, or an object with a "records" array) or JSONL. All or nothing."""
    try:
        return _parse_records(text, name)
    except RecursionError:
        raise RnnlabError(f"{name}: nested too deeply to be an rnnlab results file") from None


def _parse_records(text: str, name: str) -> list[Record]:
    text = text.strip()
    if not text:
        raise RnnlabError(f"{name}: empty file; expected a JSON array or JSONL of rnnlab records")
    items: list[Any]
    try:
        try:
            obj = _loads(text)
        except RnnlabError as e:
            raise RnnlabError(f"{name}: {e}") from None
        if isinstance(obj, dict) and isinstance(obj.get("records"), list):
            items = obj["records"]
        elif isinstance(obj, list):
            items = obj
        elif isinstance(obj, dict):
            items = [obj]
        else:
            raise RnnlabError(f"{name}: expected a JSON array of records, got {type(obj).__name__}")
    except json.JSONDecodeError:
        items = []
        for i, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append(_loads(line))
            except json.JSONDecodeError as e:
                raise RnnlabError(f"{name}: line {i} is not JSON ({e.msg}); expected a JSON array or JSONL of"
                                  " rnnlab records") from None
            except RnnlabError as e:
                raise RnnlabError(f"{name}: line {i}: {e}") from None
    if not items:
        raise RnnlabError(f"{name}: holds no records")
    return [Record.from_dict(item, where=f"{name}: record {i + 1}") for i, item in enumerate(items)]
