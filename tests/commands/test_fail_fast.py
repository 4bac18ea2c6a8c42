"""Fail fast and say why (issue 20, CLI side): reading commands open the store read-only and never create it;
another program's exclusive lock is said within a second and ends in one line after RNNLAB_STORE_WAIT_S."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rnnlab.cli import main
from rnnlab.core.record import Record
from rnnlab.core.store import Store, StoreLocked
from tests.fuzz_records import bundled

ROOT = Path(__file__).resolve().parents[2]
HOLD = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA locking_mode=EXCLUSIVE")
con.execute("BEGIN EXCLUSIVE")
con.execute("CREATE TABLE IF NOT EXISTS holder(x)")
print("held", flush=True)
sys.stdin.read()
"""


@pytest.fixture
def store_path(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite"
    monkeypatch.setenv("RNNLAB_STORE", str(path))
    Store(path).put_many([Record.from_dict(d) for d in bundled()[:3]])
    return path


@pytest.fixture
def held(store_path):
    """Another program holding the store's exclusive lock until the test ends."""
    p = subprocess.Popen([sys.executable, "-c", HOLD, str(store_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    assert p.stdout.readline().strip() == "held"
    yield store_path
    p.stdin.close()
    p.wait(timeout=10)


@pytest.mark.parametrize("argv", [["results"], ["export", "--format", "md", "--view", "overview"]])
def test_reading_commands_never_create_the_store(argv, tmp_path, monkeypatch, capsys):
    path = tmp_path / "none" / "s.sqlite"
    monkeypatch.setenv("RNNLAB_STORE", str(path))
    if argv[0] == "export":
        argv = argv + ["--out", str(tmp_path / "o.md")]
    main(argv)
    assert "Traceback" not in capsys.readouterr().err
    assert not path.parent.exists()


def no_writes(monkeypatch):
    monkeypatch.setattr(Store, "_tx", lambda *a, **k: pytest.fail("a reading command wrote the store"))
    monkeypatch.setattr(Store, "_open", lambda *a, **k: pytest.fail("a reading command opened the store to write"))


@pytest.mark.parametrize("argv", [["results", "--format", "json"], ["claims", "--format", "json"]])
def test_reading_commands_never_write_the_store(argv, store_path, monkeypatch, capsys):
    before = store_path.read_bytes(), sorted(p.name for p in store_path.parent.iterdir())
    no_writes(monkeypatch)
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)
    after = store_path.read_bytes(), sorted(p.name for p in store_path.parent.iterdir() if not
                                            p.name.endswith(("-shm", "-wal")))  # SQLite's read-only index files
    assert after == before


def _cli(argv, store_path, wait_s: str):
    env = dict(os.environ, RNNLAB_STORE=str(store_path), RNNLAB_STORE_WAIT_S=wait_s)
    t0 = time.monotonic()
    p = subprocess.Popen([sys.executable, "-m", "rnnlab", *argv], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    first = p.stderr.readline()
    t_first = time.monotonic() - t0
    rest = p.stderr.read()
    code = p.wait(timeout=60)
    return code, first, rest, t_first, time.monotonic() - t0


@pytest.mark.slow  # a command in a subprocess waits for a lock
@pytest.mark.parametrize("argv", [["results"], ["import", "IN"]])
def test_a_held_lock_is_said_within_a_second_then_one_line_after_the_wait(argv, held, tmp_path):
    if argv[-1] == "IN":
        d = dict(bundled()[5], key="f" * 64)
        (tmp_path / "in.json").write_text(json.dumps([d]))
        argv = ["import", str(tmp_path / "in.json")]
    code, first, rest, t_first, t_all = _cli(argv, held, "1")
    assert "waiting for the store lock" in first
    assert code == 2 and rest.count("\n") == 1 and "stayed locked by another program for 1 s" in rest
    assert t_all - t_first < 1 + 1, t_all  # not SQLite's 30 s busy timeouts one after another


@pytest.mark.slow  # waits its 1 s
@pytest.mark.parametrize("readonly", [True, False])
def test_the_wait_is_said_within_a_second(readonly, held, monkeypatch):
    monkeypatch.setenv("RNNLAB_STORE_WAIT_S", "1")
    said = []
    t0 = time.monotonic()
    with pytest.raises(StoreLocked, match="stayed locked by another program for 1 s"):
        Store(held, readonly=readonly, warn=lambda m: said.append((time.monotonic() - t0, m))).records()
    assert len(said) == 1 and "waiting for the store lock" in said[0][1] and said[0][0] < 1.0
    assert time.monotonic() - t0 < 1 + 0.5


@pytest.mark.slow  # waits its 5 s
def test_import_with_a_five_second_wait_ends_within_seconds(held, tmp_path):
    (tmp_path / "in.json").write_text(json.dumps([dict(bundled()[5], key="e" * 64)]))
    code, first, rest, t_first, t_all = _cli(["import", str(tmp_path / "in.json")], held, "5")
    assert code == 2 and t_all - t_first < 5 + 2, t_all  # from the first "waiting" line: the wait and no more


# -- output paths: checked before anything is read, measured or rendered --------------------------------------
@pytest.mark.parametrize("out, words", [
    ("/dev/stdout", "is a symbolic link (to /proc/self/fd/1); pass --force"),
    ("/dev/full", "is a device or a pipe, not a file; pass --force"),
    ("/etc/hostname/x.md", "/etc/hostname is a file: Not a directory"),
    ("/etc/hostname/", "Not a directory"),
])
def test_out_refuses_links_devices_and_paths_through_files(out, words, monkeypatch, capsys):
    from rnnlab.judge import select

    monkeypatch.setattr(select, "combined", lambda *a, **k: pytest.fail("read the store before checking --out"))
    assert main(["export", "--format", "md", "--view", "overview", "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err, err


def test_force_writes_through_a_link_and_to_a_device_which_says_a_full_disk(tmp_path, capsys):
    target, link = tmp_path / "t.md", tmp_path / "l.md"
    link.symlink_to(target)
    assert main(["export", "--format", "md", "--view", "overview", "--out", str(link), "--force"]) == 0
    assert link.is_symlink() and target.read_text().startswith("<!-- rnnlab export")
    capsys.readouterr()
    assert main(["export", "--format", "md", "--view", "overview", "--out", "/dev/full", "--force"]) == 2
    assert "the disk is full (No space left on device)" in capsys.readouterr().err
    assert os.path.exists("/dev/full") and not os.path.isfile("/dev/full")


def test_bench_stability_checks_keep_before_measuring(monkeypatch, capsys):
    from rnnlab.commands import bench_stability

    monkeypatch.setattr(bench_stability, "run", lambda **k: pytest.fail("measured before checking --keep"))
    assert main(["bench-stability", "--keep", "/etc/hostname/k.json"]) == 2
    assert "--keep /etc/hostname/k.json: /etc/hostname is a file: Not a directory" in capsys.readouterr().err


def test_a_full_disk_is_said_as_such(tmp_path, monkeypatch):
    import sqlite3

    from rnnlab.core import store as store_mod

    class Stat:
        f_bavail, f_frsize = 10, 4096

    monkeypatch.setattr(store_mod.os, "statvfs", lambda p: Stat())
    s = Store(tmp_path / "s.sqlite")
    assert s._why(sqlite3.OperationalError("disk I/O error")).startswith("the disk is full (disk I/O error)")
    assert s._why(sqlite3.OperationalError("database or disk is full")).startswith("the disk is full")
    monkeypatch.setattr(store_mod, "FULL_BELOW", 0)
    assert s._why(sqlite3.OperationalError("disk I/O error")) == "disk I/O error"  # space left: SQLite's words


# -- a cluster that is not there ----------------------------------------------------------------------------------
def _closed_port() -> int:
    import socket

    with socket.socket() as s:  # a port just free on loopback: nothing listens there
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("address", ["127.0.0.1:{port}",
                                     pytest.param("ray://127.0.0.1:{port}", marks=pytest.mark.slow)])
@pytest.mark.slow  # a command in a subprocess
def test_a_cluster_nobody_runs_is_one_line_within_seconds(address, tmp_path):
    address = address.format(port=_closed_port())
    env = dict(os.environ, RNNLAB_STORE=str(tmp_path / "s.sqlite"))
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "rnnlab", "run", "unroll", "--preset", "quick", "--cluster", address],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and time.monotonic() - t0 < 30
    lines = r.stderr.strip().splitlines()
    assert lines[-1] == (f"rnnlab: error: --cluster {address}: cannot reach Ray's head: nothing answers at "
                         f"127.0.0.1:{address.rsplit(':', 1)[1]} (Connection refused); start it there (ray start "
                         "--head) or check the address")
    assert all(line.startswith("rnnlab: ") for line in lines), lines  # no Ray log lines


@pytest.mark.slow  # a Python process of its own
def test_native_logs_stay_off_stderr_unless_verbose():
    code = ("import os, sys\nfrom rnnlab.commands._output import native_logs_off\n"
            "with native_logs_off(verbose=sys.argv[1] == 'v'):\n"
            "    os.write(2, b'[C++] Failed to connect to GCS\\n')\n"
            "    print('rnnlab: progress', file=sys.stderr)\n"
            "print('rnnlab: after', file=sys.stderr)\n")
    quiet = subprocess.run([sys.executable, "-c", code, "q"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    loud = subprocess.run([sys.executable, "-c", code, "v"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert quiet.stderr.splitlines() == ["rnnlab: progress", "rnnlab: after"]
    assert "[C++] Failed to connect to GCS" in loud.stderr


def test_env_reads_a_cached_probe_without_writing(store_path, monkeypatch, capsys):
    from rnnlab.engine import api

    Store(store_path).meta_set(api.probe_key("CPU"), json.dumps({"matmul_gflops": 123.0}))
    no_writes(monkeypatch)
    assert main(["env", "--json", "--device", "cpu"]) == 0
    assert json.loads(capsys.readouterr().out)["matmul_gflops"] == 123.0


def test_import_accepts_a_utf8_byte_order_mark(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RNNLAB_STORE", str(tmp_path / "s.sqlite"))
    f = tmp_path / "bom.json"
    f.write_bytes(b"\xef\xbb\xbf" + json.dumps(bundled()[:2]).encode())
    assert main(["import", str(f)]) == 0
    assert "imported 2 records" in capsys.readouterr().out
