import json
import multiprocessing as mp
import sqlite3

import pytest

from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record, make_key, parse_records
from rnnlab.core.store import STORE_SCHEMA, Store
from tests.factories import record


def rec(i: int, **kw) -> Record:
    """The store tests' record ``i``: the same key at every call."""
    return record("unroll", f"v{i % 3}", {"seq_len": i}, env={"device": "CPU", "machine": "m"},
                  key=make_key({"i": i}, {"tf": "x"}), created_at="2026-12-02T15:00:00Z", fwd_ms=float(i), **kw)


def _processes():
    """Fresh processes that open the store themselves: forked from a server that imported this module once (a
    spawned interpreter each imported it again, about half a CPU-second apiece), never from this test process and
    its threads."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def _writer(path, start, n):
    s = Store(path)
    for i in range(start, start + n):
        s.put(rec(i))


def test_round_trip_and_delete(tmp_path):
    s = Store(tmp_path / "r.sqlite")
    s.put_many([rec(1), rec(2, error="timed out after 5 s (timeout_s)")])
    got = {r.key: r for r in s.records("unroll")}
    assert got[rec(1).key].metrics == {"fwd_ms": 1.0}
    assert got[rec(2).key].error.startswith("timed out")
    assert s.delete([rec(1).key]) == 1 and s.count() == 1


@pytest.mark.slow  # spawns processes
def test_two_concurrent_writers_lose_nothing(tmp_path):
    path = str(tmp_path / "r.sqlite")
    Store(path)
    ctx = _processes()
    procs = [ctx.Process(target=_writer, args=(path, k * 1000, 150)) for k in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert Store(path).count() == 300


def test_corrupt_file_is_moved_aside_with_a_warning(tmp_path):
    path = tmp_path / "r.sqlite"
    path.write_bytes(b"this is not sqlite at all" * 100)
    warnings = []
    s = Store(path, warn=warnings.append)
    assert len(warnings) == 1 and "moved it to" in warnings[0] and "started a new store" in warnings[0]
    assert list(tmp_path.glob("r.sqlite.bad-*"))[0].read_bytes().startswith(b"this is not")
    s.put(rec(1))
    assert s.count() == 1


def test_foreign_sqlite_is_moved_aside(tmp_path):
    path = tmp_path / "r.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE users (name TEXT)")
    con.commit()
    con.close()
    warnings = []
    Store(path, warn=warnings.append)
    assert "another program" in warnings[0]


def test_newer_schema_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "r.sqlite"
    Store(path).put(rec(1))
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version={STORE_SCHEMA + 1}")
    con.commit()
    con.close()
    before = path.read_bytes()
    with pytest.raises(RnnlabError, match="newer rnnlab .* upgrade rnnlab, or set RNNLAB_STORE"):
        Store(path)
    assert path.read_bytes() == before


def test_unreadable_row_is_skipped_when_browsing(tmp_path):
    path = tmp_path / "r.sqlite"
    s = Store(path, warn=lambda m: None)
    s.put(rec(1))
    con = sqlite3.connect(path)
    con.execute("INSERT INTO records VALUES ('k', 'unroll', 'v', 't', 'local', '{not json')")
    con.commit()
    con.close()
    assert [r.key for r in s.records()] == [rec(1).key]
    assert any("skipped" in w for w in s.warnings)


def test_parse_records_validates_everything():
    good = rec(1).to_dict()
    assert parse_records(json.dumps([good]))[0].key == good["key"]
    assert len(parse_records(json.dumps(good) + "\n" + json.dumps(rec(2).to_dict()))) == 2  # JSONL
    with pytest.raises(RnnlabError, match="record 1: missing field"):
        parse_records(json.dumps([{"schema": 1}]))
    with pytest.raises(RnnlabError, match="newer rnnlab"):
        parse_records(json.dumps([good | {"schema": 99}]))
    with pytest.raises(RnnlabError, match="must be a finite number"):
        parse_records(json.dumps([good | {"metrics": {"fwd_ms": "fast"}}]))
    with pytest.raises(RnnlabError, match="line 1 is not JSON"):
        parse_records("\x80garbage")


# -- robustness (issue 13) ---------------------------------------------------------------------------------------------
def test_a_directory_is_refused_and_nothing_is_moved(tmp_path):
    folder = tmp_path / "store"
    folder.mkdir()
    (folder / "results.sqlite").write_bytes(b"keep me")
    with pytest.raises(RnnlabError, match=f"RNNLAB_STORE={folder} is a directory; give a file path"):
        Store(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]
    assert (folder / "results.sqlite").read_bytes() == b"keep me"


def _open_and_write(path, i, barrier, results):
    barrier.wait(60)  # all at once
    try:
        s = Store(path, warn=lambda m: None)
        s.put(rec(1000 + i))
        results.put((i, s.count()))
    except BaseException as e:
        results.put((i, repr(e)))


@pytest.mark.slow  # spawns processes
def test_many_processes_opening_one_corrupt_store_move_it_aside_once(tmp_path):
    path = tmp_path / "r.sqlite"
    original = b"this is not sqlite at all" * 1000
    path.write_bytes(original)
    ctx = _processes()
    barrier, results = ctx.Barrier(8), ctx.Queue()
    procs = [ctx.Process(target=_open_and_write, args=(str(path), i, barrier, results)) for i in range(8)]
    for p in procs:
        p.start()
    got = dict(results.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(60)
    assert all(isinstance(c, int) and c >= 1 for c in got.values()), got
    bad = list(tmp_path.glob("r.sqlite.bad-*"))
    assert len(bad) == 1 and bad[0].read_bytes() == original
    assert Store(path).count() == 8


@pytest.mark.slow  # waits for a lock
def test_an_opener_waits_for_the_lock_and_does_not_move_a_file_another_one_moved(tmp_path):
    import fcntl
    import os
    import threading

    path = tmp_path / "r.sqlite"
    path.write_bytes(b"garbage" * 100)
    fd = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another process is opening the store
    opened, errors = [], []

    def open_it():
        try:
            opened.append(Store(path, warn=lambda m: None))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=open_it)
    t.start()
    t.join(0.5)
    assert path.read_bytes() == b"garbage" * 100 and not opened  # nothing moved while the other holds the lock
    os.replace(path, tmp_path / "r.sqlite.bad-other")  # the other process moves it aside, then lets go
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    t.join(30)
    assert not errors and opened and opened[0].count() == 0
    assert [p.name for p in tmp_path.glob("r.sqlite.bad-*")] == ["r.sqlite.bad-other"]


def test_a_read_only_store_is_read_and_refuses_writes_without_being_moved(tmp_path, monkeypatch):
    path = tmp_path / "r.sqlite"
    Store(path).put(rec(1))
    before = path.read_bytes()
    real_access = __import__("os").access
    # tests run as root, whom chmod does not stop: the file system's answer is simulated
    monkeypatch.setattr("os.access", lambda p, mode, **kw: False if mode & 2 else real_access(p, mode, **kw))
    warnings = []
    s = Store(path, warn=warnings.append)
    assert [r.key for r in s.records()] == [rec(1).key] and s.get(rec(1).key) is not None and not warnings
    with pytest.raises(RnnlabError, match=r"the store .*r.sqlite is read-only: .*; set RNNLAB_STORE to a writable"):
        s.put(rec(2))
    with pytest.raises(RnnlabError, match="read-only"):
        s.meta_set("k", "v")
    assert path.read_bytes() == before and not list(tmp_path.glob("*.bad-*"))


def test_a_read_only_corrupt_store_is_refused_not_moved(tmp_path, monkeypatch):
    path = tmp_path / "r.sqlite"
    path.write_bytes(b"garbage" * 100)
    monkeypatch.setattr("os.access", lambda p, mode, **kw: not mode & 2)
    with pytest.raises(RnnlabError, match="read-only"):
        Store(path)
    assert path.read_bytes() == b"garbage" * 100 and not list(tmp_path.glob("*.bad-*"))


def test_a_missing_store_in_a_read_only_folder_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr("os.access", lambda p, mode, **kw: not mode & 2)
    with pytest.raises(RnnlabError, match="cannot create the store .* set RNNLAB_STORE to a writable path"):
        Store(tmp_path / "r.sqlite")


def _hold_lock(path):
    con = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    con.execute("BEGIN IMMEDIATE")
    return con


@pytest.mark.slow  # waits for a lock
def test_a_write_waits_for_a_brief_lock_and_then_succeeds(tmp_path, monkeypatch):
    import threading

    path = tmp_path / "r.sqlite"
    s = Store(path)
    monkeypatch.setenv("RNNLAB_STORE_WAIT_S", "20")
    monkeypatch.setattr("rnnlab.core.store._ATTEMPT_S", 0.2)  # several attempts while the lock is held
    con = _hold_lock(path)
    release = threading.Timer(1.0, lambda: con.execute("COMMIT"))
    release.start()
    s.put(rec(1))
    release.join()
    con.close()
    assert s.count() == 1


@pytest.mark.slow  # waits out a lock
def test_a_write_locked_past_the_wait_goes_to_a_side_file_that_imports(tmp_path, monkeypatch):
    path = tmp_path / "r.sqlite"
    s = Store(path)
    monkeypatch.setenv("RNNLAB_STORE_WAIT_S", "0.5")
    con = _hold_lock(path)
    try:
        with pytest.raises(RnnlabError, match=r"stayed locked .* written to .*unsaved-.*\.jsonl instead; import "
                                              r"them with: python -m rnnlab import ") as e:
            s.put_many([rec(1), rec(2)])
    finally:
        con.execute("ROLLBACK")
        con.close()
    side = list(tmp_path.glob("r.sqlite.unsaved-*.jsonl"))
    assert len(side) == 1 and str(side[0]) in str(e.value)
    assert [r.key for r in parse_records(side[0].read_text())] == [rec(1).key, rec(2).key]


def test_put_many_without_replace_keeps_what_is_stored(tmp_path):
    s = Store(tmp_path / "r.sqlite")
    s.put(rec(1))
    assert s.put_many([rec(1, error="x"), rec(2)], replace=False) == 1
    assert s.get(rec(1).key).error is None and s.sources([rec(1).key, rec(3).key]) == {rec(1).key: "local"}


def test_keep_stored_never_replaces_a_record_of_any_origin_but_updates_its_own(tmp_path):
    """A hosted visitor's run (``Store(keep_stored=True)``): an imported record under this machine's key stays
    (imported fwd 2.0 is not replaced by a local 999.0), and so do its outputs; the run's own records update."""
    path = tmp_path / "r.sqlite"
    imported = rec(1).with_(metrics={"fwd_ms": 2.0}, source="imported")
    Store(path).put(imported)
    run = Store(path, keep_stored=True)
    run.put_outputs(imported.key, b"theirs")
    run.put_many([rec(1).with_(metrics={"fwd_ms": 999.0}), rec(2)])
    got = Store(path).get(imported.key)
    assert got.source == "imported" and got.metrics == {"fwd_ms": 2.0}
    assert Store(path).get_outputs(imported.key) is None
    run.put(rec(2).with_(metrics={"fwd_ms": 5.0}))  # its own record: the diff against the reference lands
    run.put_outputs(rec(2).key, b"mine")
    assert Store(path).get(rec(2).key).metrics == {"fwd_ms": 5.0} and Store(path).get_outputs(rec(2).key) == b"mine"
    assert Store(path, keep_stored=True).put(rec(2).with_(metrics={"fwd_ms": 7.0})) is None
    assert Store(path).get(rec(2).key).metrics == {"fwd_ms": 5.0}  # another run's object: it did not write it


def test_the_version_changes_with_every_write_by_any_writer_and_not_with_reads(tmp_path):
    path = tmp_path / "r.sqlite"
    s = Store(path)
    v0 = s.version()
    s.records()
    assert s.version() == v0
    Store(path).put(rec(1))  # another writer (another process would do the same)
    v1 = s.version()
    assert v1 != v0
    s.put(rec(1).with_(metrics={"fwd_ms": 3.0}))  # a replacement keeps the count
    assert s.version() != v1 and s.count() == 1
    v2 = s.version()
    s.delete([rec(1).key])
    assert s.version() != v2


def test_readers_at_once_never_change_the_version(tmp_path):
    """SQLite creates, touches and deletes an empty write-ahead log as readers come and go: not a new version (it
    was: the hosted app rebuilt its shared views on most page views)."""
    import threading

    s = Store(tmp_path / "r.sqlite", warn=lambda m: None)
    s.put(rec(1))
    v0, seen = s.version(), set()

    def reader():
        for _ in range(30):
            s.records()
            s.meta_get("x")
            seen.add(s.version())

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {v0}
    s.put(rec(2))
    assert s.version() != v0


def test_stored_rows_that_json_cannot_hold_are_skipped_when_browsing(tmp_path):
    path = tmp_path / "r.sqlite"
    s = Store(path, warn=lambda m: None)
    s.put(rec(1))
    body = rec(2).to_dict(with_transient=False)
    huge = json.dumps(body).replace('"fwd_ms": 2.0', '"fwd_ms": 1' + "0" * 400)
    con = sqlite3.connect(path)
    con.executemany("INSERT INTO records VALUES (?, 'unroll', 'v', 't', 'local', ?)",
                    [("deep", "[" * 100000 + "]" * 100000), ("huge", huge)])
    con.commit()
    con.close()
    assert [r.key for r in s.records()] == [rec(1).key]
    assert sum("skipped" in w for w in s.warnings) == 2
