"""Waiting for the store's locks: how long a write waits for another writer (``wait_s``, ``RNNLAB_STORE_WAIT_S``),
which SQLite errors mean "locked" or "read-only", the ``flock`` held while a store is opened, and ``StoreLocked``,
the error when the wait runs out. Standard library only."""

from __future__ import annotations

import os
import sqlite3
import sys
from contextlib import contextmanager
from pathlib import Path

from rnnlab.core.errors import RnnlabError

DEFAULT_WAIT_S = 120.0  # how long a write waits for another writer (RNNLAB_STORE_WAIT_S overrides)


def warn_stderr(msg: str) -> None:
    print(f"rnnlab: warning: {msg}", file=sys.stderr)


def wait_s() -> float:
    """How long a write waits for the store's lock: ``RNNLAB_STORE_WAIT_S`` (seconds), default 120."""
    raw = os.environ.get("RNNLAB_STORE_WAIT_S", "").strip()
    if not raw:
        return DEFAULT_WAIT_S
    try:
        v = float(raw)
    except ValueError:
        raise RnnlabError(f"RNNLAB_STORE_WAIT_S={raw!r} is not a number of seconds") from None
    if not (0 <= v < 1e6):
        raise RnnlabError(f"RNNLAB_STORE_WAIT_S={raw!r}: expected seconds between 0 and 1e6")
    return v


def is_locked(e: sqlite3.OperationalError) -> bool:
    text = str(e).lower()
    return "locked" in text or "busy" in text


def is_read_only(e: sqlite3.Error) -> bool:
    text = str(e).lower()
    return "readonly" in text or "read-only" in text or "unable to open" in text


class StoreLocked(RnnlabError):
    """Another process held the store's write lock longer than the wait allows."""


@contextmanager
def file_lock(path: Path):
    """An exclusive ``flock`` on ``path`` (``<store>.lock``) for opening the store; no lock where none can be made
    (a read-only folder: nothing is moved or created there anyway)."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
