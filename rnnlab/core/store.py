"""The persistent result store: one SQLite file (standard library), keyed by the record key.

- Default ``data/cache/results.sqlite``; ``RNNLAB_STORE`` overrides.
- WAL mode and a busy timeout, one connection per operation: two processes (or app threads) writing at once lose
  nothing.
- A file that is not SQLite, or SQLite that is not ours, is moved aside with a one-line warning and a new store is
  started; a store written by a newer schema is refused with a message that says what to do.
- Reading a row that does not parse skips it with a warning (browsing); importing refuses bad records (all or
  nothing), see ``engine.api.import_file``; an import never replaces a stored record (``put_many(replace=False)``).
- Opening (inspecting, moving a bad file aside, creating the tables) holds an ``fcntl.flock`` on ``<store>.lock``:
  many processes opening one corrupt store move it aside once, by an atomic rename that keeps its bytes.
- A path that is a directory is refused; a store that cannot be written (read-only file or folder) is read
  read-only, and a write says so (it is never mistaken for a corrupt file).
- A write waits for another writer's lock up to ``RNNLAB_STORE_WAIT_S`` seconds (default 120; ``store_lock``), retrying
  with backoff; records that still cannot be written go to ``<store>.unsaved-<time>.jsonl`` beside it, and the error
  says how to import them.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import time
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Callable, Iterable

from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip
from rnnlab.core.record import Record
from rnnlab.core.store_lock import DEFAULT_WAIT_S, StoreLocked, wait_s, warn_stderr  # noqa: F401 - importers
from rnnlab.core.store_lock import file_lock, is_locked, is_read_only

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


_ATTEMPT_S = 5.0  # SQLite's own busy wait per attempt; attempts repeat with backoff until the total wait is spent
_FIRST_S = 0.5  # the first attempt's: "waiting for the store lock" is said within a second

FULL_BELOW = 1 << 20  # bytes free under which SQLite's "disk I/O error" means the disk is full (ENOSPC)


def _disk_full(path: Path, e: Exception) -> bool:
    text = str(e).lower()
    if "disk is full" in text or getattr(e, "errno", None) == errno.ENOSPC:
        return True
    if "disk i/o" not in text:
        return False
    try:
        st = os.statvfs(path.parent if path.parent.exists() else ".")
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < FULL_BELOW



class Store:
    def __init__(self, path: str | os.PathLike | None = None, *, warn: Callable[[str], None] = warn_stderr,
                 readonly: bool = False, keep_stored: bool = False):
        """``readonly``: a reading command's store (results, claims, export, list, env): opened ``mode=ro``, never
        created, moved aside or given tables; a store not there yet reads as empty. ``keep_stored``: this object
        never replaces a record it did not write itself (a hosted visitor's run: a record stored before it, of any
        origin, stands; the run's own records may still be updated)."""
        self.path = Path(path) if path is not None else default_path()
        self.warn = warn
        self.keep_stored = keep_stored
        self._written: set[str] = set()  # keys this object stored (``keep_stored`` may replace only these)
        self.warnings: list[str] = []
        self.read_only = False
        self.read_only_reason: str | None = None
        self.absent = False  # readonly and no store yet: every read is empty
        self._waited = False
        if readonly:
            self._open_readonly()
        else:
            self._open()

    # -- opening -----------------------------------------------------------------------------------------------
    def _say(self, msg: str) -> None:
        self.warnings.append(msg)
        self.warn(msg)

    def _uri(self, query: str) -> str:
        return f"{self.path.absolute().as_uri()}?{query}"

    def _connect(self, timeout: float = _ATTEMPT_S) -> sqlite3.Connection:
        if self.read_only:
            try:
                con = sqlite3.connect(self._uri("mode=ro"), uri=True, timeout=timeout,
                                      isolation_level=None)
                con.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError as e:  # a WAL store in a read-only folder: read it as a snapshot
                con.close()
                if is_locked(e):
                    raise  # another program writes it right now: wait (_locked_retry), never read half a write
                con = sqlite3.connect(self._uri("immutable=1"), uri=True, isolation_level=None)
        else:
            con = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
        con.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        return con

    def _why_read_only(self) -> str | None:
        """Why this store cannot be written (None: it can, as far as the file system says)."""
        folder = self.path.parent
        if self.path.exists() and not os.access(self.path, os.W_OK):
            return "the file is not writable"
        if not os.access(folder, os.W_OK):
            return f"its folder {folder} is not writable"
        return None

    def _open(self) -> None:
        if self.path.is_dir():
            raise RnnlabError(f"RNNLAB_STORE={self.path} is a directory; give a file path "
                              f"(e.g. {self.path / 'results.sqlite'})")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RnnlabError(f"cannot create the store's folder {self.path.parent}: {e.strerror}; "
                              "set RNNLAB_STORE to a writable path") from None
        self.read_only_reason = self._why_read_only()
        self.read_only = self.read_only_reason is not None
        if self.read_only:
            if not self.path.exists():
                raise RnnlabError(f"cannot create the store {self.path}: {self.read_only_reason}; "
                                  "set RNNLAB_STORE to a writable path")
            if not os.access(self.path, os.R_OK):
                raise RnnlabError(f"cannot read the store {self.path}: permission denied; "
                                  "set RNNLAB_STORE to a readable file")
            problem = self._inspect()
            if problem:  # never moved aside: it may be fine, only not ours to touch
                raise RnnlabError(f"{self.path} {problem}, and it is read-only ({self.read_only_reason}); "
                                  "set RNNLAB_STORE to a writable path")
            return
        with file_lock(Path(str(self.path) + ".lock")):
            problem = self._inspect()  # under the lock: another opener may have moved it aside a moment ago
            if problem:
                self._move_aside(problem)
            if self._ready():
                return
            try:
                with self._tx() as con:
                    for stmt in _DDL.strip().split(";"):
                        if stmt.strip():
                            con.execute(stmt)
                    if con.execute("PRAGMA application_id").fetchone()[0] == 0:
                        con.execute(f"PRAGMA application_id={APPLICATION_ID}")
                        con.execute(f"PRAGMA user_version={STORE_SCHEMA}")
                with closing(self._connect(timeout=_FIRST_S)) as con:
                    try:
                        con.execute("PRAGMA journal_mode=WAL")
                    except sqlite3.OperationalError:
                        pass  # another process is switching it right now; WAL is persistent once set
            except sqlite3.OperationalError as e:
                raise RnnlabError(f"cannot create the store {self.path}: {self._why(e)}; "
                                  "set RNNLAB_STORE to a writable path") from None

    def _open_readonly(self) -> None:
        if self.path.is_dir():
            raise RnnlabError(f"RNNLAB_STORE={self.path} is a directory; give a file path "
                              f"(e.g. {self.path / 'results.sqlite'})")
        self.read_only, self.read_only_reason = True, "opened read-only to read"
        if not self.path.exists() or self.path.stat().st_size == 0:
            self.absent = True
            return
        if not os.access(self.path, os.R_OK):
            raise RnnlabError(f"cannot read the store {self.path}: permission denied; "
                              "set RNNLAB_STORE to a readable file")
        problem = self._inspect()
        if problem or not self._locked_retry(lambda t: self._has_tables(t)):
            self._say(f"{self.path} {problem or 'has no rnnlab tables yet'}; read as empty (a command that writes,"
                      " such as import or run, moves a bad file aside)")
            self.absent = True

    def _has_tables(self, timeout: float) -> bool:
        with closing(self._connect(timeout=timeout)) as con:
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        return {"records", "meta", "outputs"} <= tables

    def _locked_retry(self, attempt: Callable[[float], object]):
        """``attempt(timeout)`` while another program holds the store's lock, up to ``RNNLAB_STORE_WAIT_S``; says
        "waiting for the store lock" on stderr after the first short attempt (well within a second), then one
        ``StoreLocked`` line when the wait is spent."""
        total = wait_s()
        deadline = time.monotonic() + total
        timeout, delay = min(_FIRST_S, total), 0.05
        while True:
            try:
                return attempt(timeout)
            except sqlite3.OperationalError as e:
                if not is_locked(e):
                    raise
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self._locked(total) from None
                self._say_waiting(total)
                time.sleep(min(delay, left))
                delay = min(delay * 2, 1.0)
                timeout = max(0.0, min(_ATTEMPT_S, deadline - time.monotonic()))

    def _say_waiting(self, total: float) -> None:
        if not self._waited:
            self._waited = True
            self.warn(f"waiting for the store lock ({self.path} is locked by another program; up to {total:g} s,"
                      " RNNLAB_STORE_WAIT_S)")

    def _locked(self, total: float) -> "StoreLocked":
        return StoreLocked(f"the store {self.path} stayed locked by another program for {total:g} s"
                           " (RNNLAB_STORE_WAIT_S); try again when it is done")

    def _move_aside(self, problem: str) -> None:
        """Rename the unusable file (and its -wal/-shm) aside, atomically, bytes untouched. Under the open lock."""
        stamp = time.strftime('%Y%m%dT%H%M%S')
        aside = self.path.with_name(f"{self.path.name}.bad-{stamp}")
        n = 1
        while aside.exists():
            n += 1
            aside = self.path.with_name(f"{self.path.name}.bad-{stamp}-{n}")
        os.replace(self.path, aside)
        for suffix in ("-wal", "-shm"):
            side = Path(str(self.path) + suffix)
            if side.exists():
                os.replace(side, Path(str(aside) + suffix))
        self._say(f"{self.path} {problem}; moved it to {aside.name} and started a new store")

    def _ready(self) -> bool:
        """The file is already a store of ours with every table (opening then writes nothing)."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return False
        def ready(timeout: float) -> bool:
            with closing(self._connect(timeout=timeout)) as con:
                if con.execute("PRAGMA application_id").fetchone()[0] != APPLICATION_ID:
                    return False
            return self._has_tables(timeout)
        try:
            return self._locked_retry(ready)
        except sqlite3.DatabaseError:
            return False

    def _inspect(self) -> str | None:
        """Why the existing file cannot be used (None: it can, or there is none). Raises for a newer schema."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return None
        def look(timeout: float):
            with closing(self._connect(timeout=timeout) if self.read_only else
                         sqlite3.connect(self._uri("mode=ro"), uri=True, timeout=timeout)) as con:
                app_id = con.execute("PRAGMA application_id").fetchone()[0]
                version = con.execute("PRAGMA user_version").fetchone()[0]
                tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                if app_id == APPLICATION_ID and "records" in tables:
                    con.execute("SELECT count(*) FROM records").fetchone()
            return app_id, version, tables

        try:
            app_id, version, tables = self._locked_retry(look)
        except sqlite3.OperationalError as e:
            if is_read_only(e) or "disk i/o" in str(e).lower():
                raise RnnlabError(f"cannot open the store {self.path}: {self._why(e)}; set RNNLAB_STORE to a usable"
                                  " path") \
                    from None
            return f"is not a readable rnnlab store ({e})"
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

    def _why(self, e: sqlite3.Error) -> str:
        """SQLite's words, except a full disk, which SQLite often reports as "disk I/O error": said as such."""
        return f"the disk is full ({e}); free some space" if _disk_full(self.path, e) else str(e)

    def _refuse_write(self, why: str) -> RnnlabError:
        return RnnlabError(f"the store {self.path} is read-only: {why}; set RNNLAB_STORE to a writable path")

    @contextmanager
    def _tx(self, *, wait: float | None = None):
        """A write transaction (BEGIN IMMEDIATE), retried with backoff while another writer holds the lock, for
        ``wait`` seconds in all (``RNNLAB_STORE_WAIT_S``); then ``StoreLocked``."""
        if self.read_only:
            raise self._refuse_write(self.read_only_reason or "opened read-only")
        total = wait_s() if wait is None else wait
        deadline = time.monotonic() + total
        delay, first = 0.05, True
        while True:
            left = deadline - time.monotonic()
            con = self._connect(timeout=max(0.0, min(_FIRST_S if first else _ATTEMPT_S, left)))
            first = False
            try:
                con.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as e:
                con.close()
                if is_read_only(e):
                    raise self._refuse_write(str(e)) from None
                if not is_locked(e):
                    raise RnnlabError(f"cannot write the store {self.path}: {self._why(e)}") from None
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self._locked(total) from None
                self._say_waiting(total)
                time.sleep(min(delay, left))
                delay = min(delay * 2, 2.0)
        try:
            yield con
            con.execute("COMMIT")
        except sqlite3.OperationalError as e:
            if con.in_transaction:
                con.execute("ROLLBACK")
            if is_read_only(e):
                raise self._refuse_write(str(e)) from None
            raise RnnlabError(f"cannot write the store {self.path}: {self._why(e)}") from None
        except BaseException:
            if con.in_transaction:
                con.execute("ROLLBACK")
            raise
        finally:
            con.close()

    def _read(self, sql: str, args: tuple = ()) -> list[tuple]:
        if self.absent:
            return []

        def read(timeout: float) -> list[tuple]:
            with closing(self._connect(timeout=timeout)) as con:
                return con.execute(sql, args).fetchall()
        try:
            return self._locked_retry(read)
        except sqlite3.DatabaseError as e:
            if _disk_full(self.path, e):
                raise RnnlabError(f"cannot read the store {self.path}: {self._why(e)}") from None
            raise RnnlabError(f"cannot read the store {self.path}: {e}; move the file aside to start afresh") from None

    # -- records -----------------------------------------------------------------------------------------------
    def _row_to_record(self, key: str, body: str) -> Record | None:
        try:
            return Record.from_dict(json.loads(body), where=f"stored record {key[:12]}")
        except (ValueError, RecursionError, RnnlabError) as e:  # not JSON, nested too deeply, not a record
            self._say(f"skipped an unreadable stored record ({clip(str(e))})")
            return None

    def get(self, key: str) -> Record | None:
        rows = self._read("SELECT key, body FROM records WHERE key=?", (key,))
        return self._row_to_record(*rows[0]) if rows else None

    def put(self, record: Record) -> None:
        self.put_many([record])

    def put_many(self, records: Iterable[Record], *, replace: bool = True) -> int:
        """Store records; the number written. ``replace=False`` never replaces a stored record (an import): a key
        already stored keeps its record and is not counted.

        When another writer holds the lock past the wait, the records go to ``<store>.unsaved-<time>.jsonl`` beside
        the store and the ``StoreLocked`` error names that file and the command that imports it."""
        records = list(records)
        rows = [(r.key, r.experiment, r.variant, r.created_at, r.source,
                 json.dumps(r.to_dict(with_transient=False) | {"source": r.source}, allow_nan=False))
                for r in records]
        sql = " INTO records(key, experiment, variant, created_at, source, body) VALUES (?,?,?,?,?,?)"
        try:
            with self._tx() as con:
                before = con.total_changes
                if self.keep_stored:  # row by row: which keys this object wrote
                    for row in rows:
                        n = con.total_changes
                        verb = "INSERT OR REPLACE" if replace and row[0] in self._written else "INSERT OR IGNORE"
                        con.execute(verb + sql, row)
                        if con.total_changes > n:
                            self._written.add(row[0])
                else:
                    con.executemany(("INSERT OR REPLACE" if replace else "INSERT OR IGNORE") + sql, rows)
                written = con.total_changes - before
        except StoreLocked as e:
            side = self._save_aside(rows)
            raise StoreLocked(f"{e}; the {len(rows)} record(s) were written to {side} instead; import them with:"
                              f" python -m rnnlab import {side}") from None
        return written

    def _save_aside(self, rows: list[tuple]) -> Path:
        side = self.path.with_name(f"{self.path.name}.unsaved-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.jsonl")
        with open(side, "a", encoding="utf-8") as f:
            for row in rows:
                f.write(row[-1] + "\n")
        return side

    def sources(self, keys: Iterable[str]) -> dict[str, str]:
        """key -> source ("local", "imported", ...) of those of ``keys`` already stored."""
        keys = list(keys)
        out: dict[str, str] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            out.update(self._read(f"SELECT key, source FROM records WHERE key IN ({','.join('?' * len(chunk))})",
                                  tuple(chunk)))
        return out

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

    def version(self) -> tuple:
        """A token that changes whenever any process writes this store (its file and its write-ahead log, by
        modification time and size): two reads with the same token read the same records. The app keys its shared
        views on it (``core.memo``). Two stat calls, no query. An empty write-ahead log is no log: SQLite creates,
        touches and deletes it as readers come and go, and keying on its time made every reader a new version (the
        hosted app rebuilt every shared view and deck on most page views)."""
        out = []
        for suffix in ("", "-wal"):
            try:
                st = os.stat(f"{self.path}{suffix}")
                out.append((st.st_mtime_ns, st.st_size, st.st_ino) if st.st_size or not suffix else None)
            except OSError:
                out.append(None)
        return tuple(out)

    # -- side data: reference outputs and cached probes --------------------------------------------------------
    def put_outputs(self, key: str, data: bytes) -> None:
        """A record's reference outputs; with ``keep_stored``, not beside a record this object did not write."""
        with self._tx() as con:
            if (self.keep_stored and key not in self._written
                    and con.execute("SELECT 1 FROM records WHERE key=?", (key,)).fetchone()):
                return
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
