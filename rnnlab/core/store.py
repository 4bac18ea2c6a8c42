"""The persistent result store: one SQLite file (standard library), keyed by the record key.

- Default ``data/cache/results.sqlite``; ``RNNLAB_STORE`` overrides.
- WAL mode and a busy timeout, one connection per operation: two processes (or app threads) writing at once lose
  nothing.
- A file that is not SQLite, or SQLite that is not ours, is moved aside with a one-line warning and a new store is
  started; a store written by a newer schema is refused with a message that says what to do.
- Reading a row that does not parse skips it with a warning (browsing); importing refuses bad records (all or
  nothing), see ``import_records``.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Callable, Iterable

from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record

STORE_SCHEMA = 1
APPLICATION_ID = 0x726E6E6C  # "rnnl": marks the file as ours
_ROOT = Path(__file__).resolve().parents[2]

_DDL = """
CREATE TABLE IF NOT EXISTS records (
    key TEXT PRIMARY KEY, experiment TEXT NOT NULL, variant TEXT NOT NULL, created_at TEXT NOT NULL,
    source TEXT NOT NULL, body TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS records_experiment ON records(experiment);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS outputs (key TEXT PRIMARY KEY, data BLOB NOT NULL);
"""


def default_path() -> Path:
    env = os.environ.get("RNNLAB_STORE")
    return Path(env).expanduser() if env else _ROOT / "data" / "cache" / "results.sqlite"


def _warn_stderr(msg: str) -> None:
    print(f"rnnlab: warning: {msg}", file=sys.stderr)


class Store:
    def __init__(self, path: str | os.PathLike | None = None, *, warn: Callable[[str], None] = _warn_stderr):
        self.path = Path(path) if path is not None else default_path()
        self.warn = warn
        self.warnings: list[str] = []
        self._open()

    # -- opening -----------------------------------------------------------------------------------------------
    def _say(self, msg: str) -> None:
        self.warnings.append(msg)
        self.warn(msg)

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        con.execute("PRAGMA busy_timeout=30000")
        return con

    def _open(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RnnlabError(f"cannot create the store's folder {self.path.parent}: {e.strerror}; "
                              "set RNNLAB_STORE to a writable path") from None
        problem = self._inspect()
        if problem:
            aside = self.path.with_name(f"{self.path.name}.bad-{time.strftime('%Y%m%dT%H%M%S')}")
            os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                side = Path(str(self.path) + suffix)
                if side.exists():
                    os.replace(side, Path(str(aside) + suffix))
            self._say(f"{self.path} {problem}; moved it to {aside.name} and started a new store")
        with closing(self._connect()) as con:
            try:
                con.execute("PRAGMA journal_mode=WAL")
            except sqlite3.OperationalError:
                pass  # another process is switching it right now; WAL is persistent once set
            con.execute("BEGIN IMMEDIATE")
            for stmt in _DDL.strip().split(";"):
                if stmt.strip():
                    con.execute(stmt)
            if con.execute("PRAGMA application_id").fetchone()[0] == 0:
                con.execute(f"PRAGMA application_id={APPLICATION_ID}")
                con.execute(f"PRAGMA user_version={STORE_SCHEMA}")
            con.execute("COMMIT")

    def _inspect(self) -> str | None:
        """Why the existing file cannot be used (None: it can, or there is none). Raises for a newer schema."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return None
        try:
            with closing(sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=30.0)) as con:
                app_id = con.execute("PRAGMA application_id").fetchone()[0]
                version = con.execute("PRAGMA user_version").fetchone()[0]
                tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                if app_id == APPLICATION_ID:
                    con.execute("SELECT count(*) FROM records").fetchone()
        except sqlite3.DatabaseError as e:
            return f"is not a readable rnnlab store ({e})"
        if app_id == APPLICATION_ID:
            if version > STORE_SCHEMA:
                raise RnnlabError(f"{self.path} was written by a newer rnnlab (store schema {version}, this one reads"
                                  f" up to {STORE_SCHEMA}); upgrade rnnlab, or set RNNLAB_STORE to another file")
            return None
        if not tables:
            return None  # an empty SQLite file: adopt it
        return "is an SQLite file of another program"

    @contextmanager
    def _tx(self):
        con = self._connect()
        try:
            con.execute("BEGIN IMMEDIATE")
            yield con
            con.execute("COMMIT")
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        finally:
            con.close()

    def _read(self, sql: str, args: tuple = ()) -> list[tuple]:
        try:
            with closing(self._connect()) as con:
                return con.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as e:
            raise RnnlabError(f"cannot read the store {self.path}: {e}; move the file aside to start afresh") from None

    # -- records -----------------------------------------------------------------------------------------------
    def _row_to_record(self, key: str, body: str) -> Record | None:
        try:
            return Record.from_dict(json.loads(body), where=f"stored record {key[:12]}")
        except (json.JSONDecodeError, RnnlabError) as e:
            self._say(f"skipped an unreadable stored record ({e})")
            return None

    def get(self, key: str) -> Record | None:
        rows = self._read("SELECT key, body FROM records WHERE key=?", (key,))
        return self._row_to_record(*rows[0]) if rows else None

    def put(self, record: Record) -> None:
        self.put_many([record])

    def put_many(self, records: Iterable[Record]) -> int:
        rows = [(r.key, r.experiment, r.variant, r.created_at, r.source,
                 json.dumps(r.to_dict(with_transient=False) | {"source": r.source}, allow_nan=False))
                for r in records]
        with self._tx() as con:
            con.executemany("INSERT OR REPLACE INTO records(key, experiment, variant, created_at, source, body)"
                            " VALUES (?,?,?,?,?,?)", rows)
        return len(rows)

    def records(self, experiment: str | None = None) -> list[Record]:
        if experiment:
            rows = self._read("SELECT key, body FROM records WHERE experiment=? ORDER BY created_at", (experiment,))
        else:
            rows = self._read("SELECT key, body FROM records ORDER BY created_at")
        return [r for r in (self._row_to_record(k, b) for k, b in rows) if r is not None]

    def delete(self, keys: Iterable[str]) -> int:
        keys = list(keys)
        with self._tx() as con:
            n = 0
            for k in keys:
                n += con.execute("DELETE FROM records WHERE key=?", (k,)).rowcount
                con.execute("DELETE FROM outputs WHERE key=?", (k,))
        return n

    def count(self) -> int:
        return self._read("SELECT count(*) FROM records")[0][0]

    # -- side data: reference outputs and cached probes --------------------------------------------------------
    def put_outputs(self, key: str, data: bytes) -> None:
        with self._tx() as con:
            con.execute("INSERT OR REPLACE INTO outputs(key, data) VALUES (?, ?)", (key, sqlite3.Binary(data)))

    def get_outputs(self, key: str) -> bytes | None:
        rows = self._read("SELECT data FROM outputs WHERE key=?", (key,))
        return bytes(rows[0][0]) if rows else None

    def meta_get(self, k: str) -> str | None:
        rows = self._read("SELECT v FROM meta WHERE k=?", (k,))
        return rows[0][0] if rows else None

    def meta_set(self, k: str, v: str) -> None:
        with self._tx() as con:
            con.execute("INSERT OR REPLACE INTO meta(k, v) VALUES (?, ?)", (k, v))
