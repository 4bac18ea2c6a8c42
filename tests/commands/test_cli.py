"""The command line: exit codes, one-line errors, JSON on stdout only, served-from-store runs."""

import json
import subprocess
import sys
import time

import pytest

from rnnlab import experiments
from rnnlab.cli import main
from rnnlab.core.store import Store
from tests.engine.test_runner import ENV, FAKE


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "rnnlab", *args], capture_output=True, text=True, timeout=120,
                          env=env)


@pytest.mark.parametrize("args,fragment", [
    (["run", "unroll", "--set", "seq_len=0"], "seq_len=0 is out of limits: expected int in [1, 2000]"),
    (["run", "unroll", "--set", "units=-3"], "units=-3 is out of limits"),
    (["run", "unroll", "--set", "batch=abc"], "batch='abc' is not valid"),
    (["run", "unroll", "--set", "colour=red"], "unknown parameter 'colour'"),
    (["run", "unroll", "--set", "seq_len"], "expected KEY=VALUE"),
    (["run", "nope"], "unknown experiment 'nope'"),
    (["run", "unroll", "--variants", "tf3_magic"], "unknown variant 'tf3_magic'"),
    (["run", "unroll", "--preset", "huge"], "unknown preset 'huge'"),
    (["run", "unroll", "--set", "units=2048", "--set", "batch=4096", "--set", "seq_len=2000", "--set", "layers=8"],
     "needs an estimated"),
    (["frobnicate"], "invalid choice"),
    (["import", "/no/such/file.json"], "no such file"),
])
def test_bad_input_exits_2_with_one_line_and_changes_nothing(args, fragment, tmp_path):
    import os

    env = dict(os.environ, RNNLAB_STORE=str(tmp_path / "s.sqlite"))
    r = cli(*args, env=env)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rnnlab: error: ") and fragment in lines[0], r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


def test_import_refuses_a_bad_file_and_keeps_the_store(tmp_path, monkeypatch):
    store = tmp_path / "s.sqlite"
    monkeypatch.setenv("RNNLAB_STORE", str(store))
    bad = tmp_path / "bad.json"
    bad.write_text('[{"schema": 1, "key": "x"}]')
    assert main(["import", str(bad)]) == 2
    assert Store(store).count() == 0


def test_list_json_names_every_parameter_with_limits(capsys):
    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    unroll = next(e for e in data if e["name"] == "unroll")
    p = {x["name"]: x for x in unroll["params"]}
    assert p["seq_len"]["limits"] == "int in [1, 2000]" and p["seq_len"]["default"] == 100
    assert {v["name"] for v in unroll["variants"]} >= {"tf1_static", "tf1_dynamic", "keras", "keras+xla"}


@pytest.mark.slow  # TensorFlow workers or a heavy run
def test_run_json_then_cached_then_results(tmp_path, monkeypatch, capsys):
    experiments._load_all()
    monkeypatch.setitem(experiments._cache, "fake", FAKE)
    monkeypatch.setattr("rnnlab.engine.api.environment", lambda *a, **k: dict(ENV))
    assert main(["run", "fake", "--variants", "ok,ok_off", "--set", "units=4,8", "--json"]) == 0
    out, err = capsys.readouterr()
    recs = json.loads(out)  # stdout holds the JSON array and nothing else
    assert len(recs) == 4 and not any(r["cached"] for r in recs)
    assert sorted({r["params"]["units"] for r in recs}) == [4, 8]
    assert "fake/ok_off" in err  # progress went to stderr
    t0 = time.monotonic()
    assert main(["run", "fake", "--variants", "ok,ok_off", "--set", "units=4,8", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert all(r["cached"] for r in again) and time.monotonic() - t0 < 3
    assert [r["key"] for r in again] == [r["key"] for r in recs]
    assert main(["results", "--format", "json", "--no-baseline"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 4  # "ok" is also the reference: stored once per point


def test_export_out_ending_in_a_slash_is_a_folder_and_unknown_topics_are_refused(tmp_path):
    from rnnlab.commands import export as cmd
    from rnnlab.core.errors import RnnlabError
    from rnnlab.core.record import Record

    Store().put(Record(key="a" * 64, experiment="unroll", variant="tf1_static",
                       params=experiments.get("unroll").params.fill({"seq_len": 5}),
                       metrics={"fwd_ms": 1.0}, env=dict(ENV), created_at="2026-01-01T00:00:00Z", error=None))
    out = tmp_path / "charts"
    paths = cmd.run(fmt="md", out=str(out) + "/", experiment="unroll")
    assert out.is_dir() and all(p.parent == out for p in paths), paths
    with pytest.raises(RnnlabError, match="unknown experiment or page 'nosuch'"):
        cmd.run(fmt="md", out=str(tmp_path / "x.md"), experiment="nosuch")
