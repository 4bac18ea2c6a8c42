"""python -m scripts.make_baseline's planning and summary (rnnlab.commands._baseline), on records built here: no runs."""

import json

from rnnlab.commands import _baseline as mb
from rnnlab.core import rules
from rnnlab.judge import findings
from tests.factories import record


def test_the_plan_keeps_the_presets_rounds_and_skips_what_this_rnnlab_cannot_run():
    for s in mb.PLAN:
        assert "rounds" not in dict(s.overrides)  # never fewer rounds than the preset's
    run, skip = mb.runnable(mb.PLAN, lambda e, p: p != "threads")
    assert [s.why for s in skip] == ["the seed point at 1 thread"]
    assert len(run) == len(mb.PLAN) - 1
    assert {s.experiment for s in run} == {"unroll", "varlen", "padding", "pitfalls", "migrate", "knobs",
                                           "precision", "training", "seed003"}
    sweep = next(s for s in mb.PLAN if "sequence length" in s.why)
    assert dict(sweep.overrides)["seq_len"] == (25, 400)  # the log grid's ends; 100 is the seed point
    args = sweep.plan_args(lambda e: ["a", "b"])
    assert args["overrides"] == {"seq_len": [25, 400]} and args["variants"] == list(mb.SWEEP)
    pit = next(s for s in mb.PLAN if s.experiment == "pitfalls" and s.preset == "quick")
    assert pit.plan_args(lambda e: ["a", "b"])["variants"] == ["a", "b"]


def test_progress_says_the_step_and_the_time_left():
    s = mb.PLAN[0]
    assert mb.progress_line(3, 20, s, 600.0).startswith("step 3 of 20, about 10")
    assert "left: unroll seed" in mb.progress_line(3, 20, s, 600.0)
    assert mb.progress_line(1, 2, s, None) == f"step 1 of 2: unroll seed ({s.why})"


def test_machine_name_from_the_cpu():
    assert mb.machine_name(2, "AMD EPYC 7763 64-Core Processor") == "cpu-epyc-2core"
    assert mb.machine_name(4, "") == "cpu-4core"


def test_walls_survive_a_stop(tmp_path):
    w = mb.Walls.load(tmp_path / "w.json")
    w.add("run unroll --preset seed", 60.0)
    w.add("run unroll --preset seed", 30.0)  # resumed: the step's time adds up
    assert mb.Walls.load(tmp_path / "w.json").seconds == {"run unroll --preset seed": 90.0}
    (tmp_path / "bad.json").write_text("{not json")
    assert mb.Walls.load(tmp_path / "bad.json").seconds == {}


def _pair(ref_ms, other_ms):
    ref = record("unroll", "tf1_dynamic", {"seq_len": 100}, [{"fwd_ms": x} for x in ref_ms])
    other = record("unroll", "keras", {"seq_len": 100}, [{"fwd_ms": x} for x in other_ms])
    return [ref, other]


def test_noisy_share_counts_each_ratio_against_the_reference():
    share = lambda rs: mb.noisy_share(rs, lambda e: "tf1_dynamic", findings.interval, rules.bound)  # noqa: E731
    assert share(_pair([100, 101, 99], [50, 51, 49])) == (1, 0, 0)
    assert share(_pair([100, 101, 99], [40, 90, 140])) == (0, 0, 1)
    assert share(_pair([100, 101, 99], [101, 104, 107])) == (0, 1, 0)  # 1.01-1.07 rounds: not faster, maybe slower
    assert share([]) == (0, 0, 0)


def test_summary_has_a_row_per_experiment_with_its_page_and_wall():
    recs = _pair([100, 101, 99], [40, 90, 140])
    text = mb.summary(recs, {"run unroll --preset seed": 420.0, "run varlen --preset quick": 30.0},
                      lambda e: {"unroll": "unrolling", "varlen": "varlen"}[e], lambda rs: (3, 2, 1) if rs else (0, 0, 0),
                      {"holds": 5, "too noisy to call": 1})
    rows = {line.split()[1]: line.split() for line in text.splitlines()[1:-1]}
    assert rows["unroll"][:7] == ["unrolling", "unroll", "2", "3", "2", "1", "17%"] and rows["unroll"][7] == "7.0"
    assert rows["varlen"][2] == "0" and rows["varlen"][7] == "0.5"  # timed, nothing stored: still a row
    assert text.splitlines()[-1] == "total wall 7.5 min; claims: 5 holds, 1 too noisy to call"


def test_old_protocol_records_leave_the_bundle(tmp_path):
    old = {"experiment": "unroll", "params": {"seq_len": 25}}
    new = {"experiment": "unroll", "params": {"protocol": "interleaved"}}
    other = {"experiment": "varlen", "params": {}}
    (tmp_path / "cpu-a.json").write_text(json.dumps([old, new, other]))
    (tmp_path / "cpu-b.json").write_text(json.dumps([old]))
    (tmp_path / "cpu-new.json").write_text(json.dumps([old]))  # the file being written is not pruned
    said = mb.prune_old(tmp_path, "cpu-new.json", ["unroll", "knobs", "precision"])
    assert json.loads((tmp_path / "cpu-a.json").read_text()) == [new, other]
    assert not (tmp_path / "cpu-b.json").exists()
    assert (tmp_path / "cpu-new.json").exists()
    assert len(said) == 2 and "1 old-protocol records left" in said[0]


def test_a_partial_regeneration_replaces_what_it_measured_and_keeps_the_rest():
    import pytest

    seed = {"cell": "rnn", "units": 128, "layers": 3, "batch": 32, "seq_len": 100, "input_dim": 64}
    old = [record("unroll", v, {**seed, "protocol": "sequential"}, fwd_ms=1.0).to_dict() for v in ("keras", "tf1_static")]
    old.append(record("unroll", "keras", {**seed, "seq_len": 400, "protocol": "sequential"}, fwd_ms=4.0).to_dict())
    new = [record("unroll", "keras", {**seed, "protocol": "interleaved", "rounds": 3, "budget_s": 120,
                                      "threads": 0}, fwd_ms=2.0).to_dict(),
           record("unroll", "keras", {**seed, "protocol": "interleaved", "threads": 1}, fwd_ms=3.0).to_dict()]
    got = mb.with_rest(new, old)
    assert got[:2] == new  # the new seed point, at every core and at 1 thread
    assert [(d["variant"], d["params"]["seq_len"]) for d in got[2:]] == [("tf1_static", 100), ("keras", 400)]
    assert mb.chosen_steps("1,2") == {1, 2} and mb.chosen_steps(None) is None
    for bad in ("0", "x", f"{len(mb.PLAN) + 1}"):
        with pytest.raises(SystemExit, match="--steps"):
            mb.chosen_steps(bad)
