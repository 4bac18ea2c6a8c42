"""Bundled results in ``data/baseline/``: read-only, labelled with the machine that made them.

They are JSONL files written by ``python -m rnnlab results --format json`` after the project's own runs (see
README, "Bundled results"). When the local store lacks a configuration, the app shows the bundled record instead.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Sequence

from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record, canonical_json, parse_records
from rnnlab.core.store import Store

BASELINE_DIR = Path(__file__).resolve().parents[2] / "data" / "baseline"


def baseline_dir() -> Path:
    """``data/baseline``, or the folder ``RNNLAB_BASELINE`` names (tests point it at an empty one)."""
    env = os.environ.get("RNNLAB_BASELINE")
    return Path(env) if env else BASELINE_DIR


@functools.lru_cache(maxsize=4)
def _load(dirpath: str, stamp: tuple) -> tuple[Record, ...]:
    out: list[Record] = []
    for f in sorted(Path(dirpath).glob("*.json*")):
        try:
            out += [r.with_(source="baseline", cached=False) for r in parse_records(f.read_text(), name=f.name)]
        except (RnnlabError, OSError, UnicodeDecodeError):
            continue  # browsing: a bad bundled file is skipped, the rest still shows
    return tuple(out)


def load(dirpath: Path | None = None) -> list[Record]:
    dirpath = Path(dirpath) if dirpath is not None else baseline_dir()
    if not dirpath.is_dir():
        return []
    stamp = tuple((f.name, f.stat().st_mtime_ns) for f in sorted(dirpath.glob("*.json*")))
    return list(_load(str(dirpath), stamp))


def _spec(r: Record) -> str:
    p = {k: v for k, v in r.params.items() if k not in ("device",)}
    return canonical_json([r.experiment, r.variant, p])


def combined(store: Store | None = None, *, experiment: str | None = None, bundled_dir: Path | None = None,
             local: Sequence[Record] | None = None) -> list[Record]:
    """This machine's records, plus bundled ones for configurations measured nowhere here."""
    if local is None:
        local = (store or Store()).records(experiment)
    local = [r for r in local if experiment is None or r.experiment == experiment]
    have = {_spec(r) for r in local}
    extra = [r for r in load(bundled_dir) if (experiment is None or r.experiment == experiment)
             and _spec(r) not in have]
    return list(local) + extra
