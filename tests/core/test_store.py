import json
import multiprocessing as mp
import sqlite3

import pytest

from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record, make_key, parse_records
from rnnlab.core.store import STORE_SCHEMA, Store


def rec(i: int, **kw) -> Record:
    return Record(key=make_key({"i": i}, {"tf": "x"}), experiment="unroll", variant=f"v{i % 3}",
                  params={"seq_len": i}, metrics={"fwd_ms": float(i)}, env={"device": "CPU", "machine": "m"},
                  created_at="2026-12-02T15:00:00Z", **kw)


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


def test_two_concurrent_writers_lose_nothing(tmp_path):
    path = str(tmp_path / "r.sqlite")
    Store(path)
    ctx = mp.get_context("spawn")
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
