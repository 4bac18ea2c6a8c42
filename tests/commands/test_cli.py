"""The command line: exit codes, one-line errors, JSON on stdout only, served-from-store runs."""

import json
import subprocess
import sys
import time

import pytest

from rnnlab import experiments
from rnnlab.cli import main
from rnnlab.core.errors import RnnlabError
from rnnlab.core.store import Store
from tests.factories import ENV, FAKE, use_fakes


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "rnnlab", *args], capture_output=True, text=True, timeout=120,
                          env=env)


BAD_INPUT = [
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
]


@pytest.mark.slow  # a Python process per case
@pytest.mark.parametrize("args,fragment", BAD_INPUT)
def test_bad_input_exits_2_with_one_line_and_changes_nothing(args, fragment, tmp_path):
    import os

    env = dict(os.environ, RNNLAB_STORE=str(tmp_path / "s.sqlite"))
    r = cli(*args, env=env)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rnnlab: error: ") and fragment in lines[0], r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    assert not (tmp_path / "s.sqlite").exists()


@pytest.mark.parametrize("args,fragment", BAD_INPUT)
def test_bad_input_exits_2_with_one_line_in_process(args, fragment, tmp_path, monkeypatch, capsys):
    """The same cases through ``main`` in this process (the quick loop's copy; the one above starts the command)."""
    monkeypatch.setenv("RNNLAB_STORE", str(tmp_path / "s.sqlite"))
    try:
        code = main(args)
    except SystemExit as e:  # argparse's own refusals
        code = e.code
    out, err = capsys.readouterr()
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rnnlab: error: ") and fragment in lines[0], err
    assert "Traceback" not in err and out == ""
    assert not (tmp_path / "s.sqlite").exists()


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
    use_fakes(monkeypatch, FAKE)
    monkeypatch.setattr("rnnlab.engine.running.environment", lambda *a, **k: dict(ENV))  # no machine probe
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
    from tests.factories import record

    Store().put(record("unroll", "tf1_static", experiments.get("unroll").params.fill({"seq_len": 5}), env=ENV,
                       key="a" * 64, created_at="2026-01-01T00:00:00Z", fwd_ms=1.0))
    out = tmp_path / "charts"
    paths = cmd.run(fmt="md", out=str(out) + "/", experiment="unroll")
    assert out.is_dir() and all(p.parent == out for p in paths), paths
    with pytest.raises(RnnlabError, match="unknown experiment or page 'nosuch'"):
        cmd.run(fmt="md", out=str(tmp_path / "x.md"), experiment="nosuch")


def test_the_run_command_says_what_is_about_to_happen_before_anything_slow(monkeypatch, capsys):
    """The first stderr line comes before the environment probe (api.run), and nothing slow is imported for it."""
    from rnnlab.commands import run as cmd
    from rnnlab.engine import api

    def fake_run(plan, **kw):
        err = capsys.readouterr().err
        assert err.startswith("rnnlab: unroll: 12 variants x 1 point x 3 rounds = 36 worker processes, about ")
        assert "on this machine" in err and len(err.splitlines()) == 1
        return []

    monkeypatch.setattr(api, "run", fake_run)
    variants = ",".join(experiments.get("unroll").variants[:12])
    assert "tf1_dynamic" in variants
    assert main(["run", "unroll", "--preset", "seed", "--variants", variants]) == 0
    assert "0 records" in capsys.readouterr().err
    plan = api.plan("unroll", preset="seed", variants=["tf1_static"])
    line = cmd.announce(plan, api.Estimate(3, 90.0, 0, True, True))
    assert line == ("unroll: 1 variant (+ the reference tf1_dynamic) x 1 point x 3 rounds = 3 worker processes, "
                    "about 90.0 s on this machine")


@pytest.mark.slow  # a Python process of its own
def test_nothing_slow_is_imported_by_the_command_line():
    code = ("import sys, time; t = time.monotonic(); from rnnlab.cli import build_parser; build_parser(); "
            "from rnnlab.commands import run, bench_stability; "
            "bad = [m for m in ('tensorflow', 'keras', 'altair', 'streamlit', 'matplotlib') if m in sys.modules]; "
            "assert not bad, bad; print(time.monotonic() - t)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout) < 1.0


def test_bench_stability_runs_twice_into_a_scratch_store_and_compares(monkeypatch, tmp_path):
    from rnnlab.commands import bench_stability as bench
    from rnnlab.core.store import default_path
    from tests.factories import FAKE_R, use_fakes
    from tests.workers import FakeLauncher

    use_fakes(monkeypatch, FAKE_R)
    figures = {  # variant -> metric -> (run 1's rounds, run 2's rounds)
        "ok": {"fwd_ms": ([2.0] * 3, [2.0] * 3), "train_ms": ([2.0] * 3, [2.0] * 3), "build_s": ([1.0] * 3, [1.0] * 3)},
        "a": {"fwd_ms": ([4.0, 4.4, 3.6], [4.2] * 3), "train_ms": ([10.0] * 3, [12.0] * 3),
              "build_s": ([1.0] * 3, [1.0] * 3)},
    }
    count: dict = {}

    def metrics(task, n):
        v = task["variant"]
        k = count[v] = count.get(v, -1) + 1
        return {m: runs[k // 3][k % 3] for m, runs in figures[v].items()}

    launcher = FakeLauncher(metrics)
    said = []
    res = bench.run(experiment="fake_r", preset=None, variants="a", rounds=3, launcher=launcher, env=ENV,
                    say=said.append)
    assert len(launcher.tasks) == 12 and not default_path().exists()  # 2 runs x 3 rounds x (a + the reference)
    assert said[0].startswith("bench-stability: fake_r, 2 runs x 2 variants x 1 point(s) x 3 rounds = 12 workers")
    assert all(len("rnnlab: " + s) <= 120 for s in said)
    text = "\n".join(res.lines)
    print(text)
    assert all(len(line) <= 120 for line in res.lines)
    assert res.held == 2 and res.intervals == 3
    assert res.max_spread == pytest.approx(2 / 11 * 100)  # train_ms of a: 10 vs 12
    rows = {tuple(line.split()[:2]) if not line.startswith(" ") else ("a", line.split()[0]): line
            for line in res.lines if line.startswith(("a ", "ok ", " "))}
    assert rows[("a", "fwd_ms")].split()[2:] == ["4", "4.2", "4.9%", "2.000", "[1.401", "-", "2.836]", "(rounds,",
                                                 "n=3)", "2.100", "yes"]
    assert rows[("a", "train_ms")].split()[-2:] == ["6.000", "NO"]
    blank = [i for i, line in enumerate(res.lines) if line == ""]
    tail = " ".join(" ".join(res.lines[blank[0] + 1:blank[1]]).split())
    assert tail == ("max spread between the runs' medians: 18.2% (a train_ms); 2 of 3 ratio intervals of run 1 held "
                    "run 2's ratio statements against ok (faster / about the same / slower / one side ruled out / "
                    "too noisy to call): the same in 3 of 3 ratios; contradicting (two that cannot both be true: "
                    "faster in one run, about the same, slower or not faster in the other) 0 other interval rules on the same rounds (held run 2's ratio; median hi/lo): "
                    "range of rounds 2 of 3 (median width 1.00x); quartile union 2 of 3 (median width 1.00x)")
    assert {len(r) for r in res.runs} == {2} and all(len(r.rounds) == 3 for r in res.runs[0])
    assert res.lines[-4:-2] == ["run 1: 0 competing processes; 2 threads", "run 2: 0 competing processes; 2 threads"]
    said = " ".join(res.lines[-2:])  # one condition: the pair's ratios inside each other's intervals, both ways
    assert said.startswith("condition 1 (runs 1, 2; 2 threads): replication 3 of 6 (50%; target 80%)")
    assert said.endswith("calls the same in 3 of 3, contradicting 0")
    # --keep: both runs' records, to study the rounds later; a path that cannot be written is one clear error
    bench.keep(res, str(tmp_path / "kept.json"))
    kept = json.loads((tmp_path / "kept.json").read_text())
    assert [k["run"] for k in kept] == [1, 1, 2, 2] and all(len(k["record"]["rounds"]) == 3 for k in kept)
    with pytest.raises(RnnlabError, match="--keep"):
        bench.keep(res, str(tmp_path / "no-such-dir" / "kept.json"))
    # --from: the same report again from the kept records, nothing measured
    plan, run1, run2 = bench.load(str(tmp_path / "kept.json"))
    assert bench.report(plan, run1, run2, reference="ok").lines == res.lines[:blank[1]] and len(launcher.tasks) == 12
    (tmp_path / "junk.json").write_text("[1]")
    with pytest.raises(RnnlabError, match="not what --keep writes"):
        bench.load(str(tmp_path / "junk.json"))


def test_bench_stability_waits_for_the_first_runs_load_to_settle(monkeypatch):
    from rnnlab.commands import bench_stability as bench
    from rnnlab.engine import api as engine_api

    busy = iter(["busy", "busy", "busy", None])  # run 1 left the 1-minute load high; it settles after 3 waits
    monkeypatch.setattr(engine_api, "busy_warning", lambda cores=None: next(busy))
    slept, said = [], []
    bench._settle(60, said.append, slept.append)
    assert slept == [5.0, 5.0, 5.0] and len(said) == 1 and said[0].startswith("bench-stability: waiting up to")
    monkeypatch.setattr(engine_api, "busy_warning", lambda cores=None: "busy")  # never settles: gives up, no error
    slept.clear()
    bench._settle(12, said.append, slept.append)
    assert sum(slept) == 15.0


def test_bench_stability_is_a_command():
    from rnnlab.cli import build_parser

    args = build_parser().parse_args(["bench-stability", "--preset", "quick", "--rounds", "2"])
    assert (args.experiment, args.preset, args.rounds) == ("unroll", "quick", 2) and callable(args.func)
