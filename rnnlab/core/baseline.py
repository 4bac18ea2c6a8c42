"""Bundled results in ``data/baseline/``: read-only, labelled with the machine that made them.

They are JSONL files written by ``python -m rnnlab results --format json`` after the project's own runs (see
README, "Bundled results"). Which bundled record a page shows beside this machine's is ``judge.select.combined``'s choice.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record, parse_records

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


def stamp(dirpath: Path | None = None) -> tuple:
    """The bundled files' names and modification times: ``load`` reads them again when this changes."""
    dirpath = Path(dirpath) if dirpath is not None else baseline_dir()
    if not dirpath.is_dir():
        return ()
    return (str(dirpath),) + tuple((f.name, f.stat().st_mtime_ns) for f in sorted(dirpath.glob("*.json*")))


def load(dirpath: Path | None = None) -> list[Record]:
    dirpath = Path(dirpath) if dirpath is not None else baseline_dir()
    if not dirpath.is_dir():
        return []
    return list(_load(str(dirpath), stamp(dirpath)))
