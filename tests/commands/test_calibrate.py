"""calibrate: four arms of one variant per trial, A/A and injected slowdowns, judged as a run judges (scripted
workers: no process, no TensorFlow)."""

import random

import pytest

from rnnlab.commands import calibrate
from rnnlab.core import outpath, rules
from rnnlab.core.stats import Interval
from rnnlab.core.errors import RnnlabError
from tests.factories import ENV
from tests.workers import ServingLauncher


def injected(sd):
    rng = random.Random(7)
    clock = [0]

    def value(task, op, n):
        clock[0] += 1
        load = 1.0 + 0.4 * abs((clock[0] % 200) - 100) / 100  # the load drifts up and down under every arm alike
        return (1.0 + task.get("inject", 0.0)) * load * (1 + rng.gauss(0, sd))
    return value


@pytest.mark.slow  # ten scripted trials of four arms
def test_a_quiet_scripted_machine_passes_every_target():
    # 10 trials: 20 pairs per arm, so one A/A interval in 20 may exclude 1 (a 95% interval does, one time in 20)
    s = calibrate.run(trials=10, rounds=2, launcher=ServingLauncher(injected(0.01)), env=ENV,
                      sets=["cell=rnn", "units=8", "layers=1", "batch=2", "seq_len=3", "input_dim=2"])
    assert all(ok for _, _, _, ok in s.checks()), s.lines()
    assert {c for _, _, c in s.pairs["A/A"]} == {rules.SAME}
    assert {c for _, _, c in s.pairs["+20%"]} == {rules.HIGHER}
    assert len(s.pairs["+10%"]) == 10 * len(calibrate.SERIES)
    text = "\n".join(s.lines())
    assert "PASS  A/A: interval excludes 1:" in text and "+20%: called slower: 20 of 20" in text


def test_a_method_that_cannot_tell_fails_its_targets():
    t = [0.0]

    def clock():
        t[0] += 0.05
        return t[0]
    s = calibrate.run(clock=clock, trials=2, rounds=2, launcher=ServingLauncher(injected(0.6)), env=ENV,
                      sets=["units=8", "layers=1", "batch=2", "seq_len=3", "input_dim=2", "budget_s=5"])
    checks = {what: ok for what, _, _, ok in s.checks()}
    assert not checks["+20%: called slower"]


def test_bad_input_is_one_line():
    with pytest.raises(RnnlabError, match="--trials 0"):
        calibrate.run(trials=0, env=ENV)
    with pytest.raises(RnnlabError, match="no interleaved protocol"):
        calibrate.run(experiment="seed003", env=ENV)
    with pytest.raises(RnnlabError, match="no such folder"):
        outpath.check("/nonexistent/dir/x.json", flag="--keep")  # calibrate --keep's check (core/outpath.py)
    for bad in ("x", "-1", "1,,2", "65"):
        with pytest.raises(RnnlabError, match="--contend"):
            calibrate.contend_levels(bad)
    assert calibrate.contend_levels("0,1,2,4") == [0, 1, 2, 4]


def test_under_competing_load_too_busy_is_allowed_and_a_wrong_call_is_not():
    iv = Interval(1.18, 1.2, 1.22, "paired", 20)
    s = calibrate.Summary(2, {"A/A": [("fwd_ms", Interval(0.97, 1.0, 1.03, "paired", 20), rules.SAME)],
                              "+10%": [("fwd_ms", iv, rules.TOO_BUSY)],
                              "+20%": [("fwd_ms", iv, rules.TOO_BUSY), ("train_ms", iv, rules.HIGHER)]},
                          contend=2, free=[0.4, 0.5])
    assert all(ok for _, _, _, ok in s.checks()), s.lines()  # at 2 competing, "too busy" is no failure
    assert not any("called slower" in what for what, *_ in s.checks())
    quiet = calibrate.Summary(2, dict(s.pairs), contend=0)
    assert not dict((w, ok) for w, _, _, ok in quiet.checks())["+20%: called slower"]  # quiet: it must decide
    key = "+20%: called faster, about the same or not slower"
    for said in (rules.SAME, rules.NOT_HIGHER):  # each rules out where +20% lies
        wrong = calibrate.Summary(1, {**s.pairs, "+20%": [("fwd_ms", iv, said)]}, contend=4)
        assert not dict((w, ok) for w, _, _, ok in wrong.checks())[key]
        assert calibrate.table([wrong])[1].split()[-2] == "1"  # one wrong call
    bound = calibrate.Summary(1, {**s.pairs, "+20%": [("fwd_ms", iv, rules.NOT_LOWER)],
                                  "A/A": [("fwd_ms", Interval(0.98, 1.05, 1.13, "paired", 20), rules.NOT_LOWER)]},
                          contend=4)
    assert all(ok for _, _, _, ok in bound.checks())  # "about the same or slower" is true of both
    rows = calibrate.table([quiet, s])
    assert len(rows) == 3 and rows[2].split()[0] == "2" and "0.4-0.5" in rows[2] and rows[2].endswith("PASS")
    assert "busy" in "\n".join(s.lines()) and "2 competing processes; 0.4-0.5 cores free while timed" in \
        "\n".join(s.lines())


def test_kept_trials_are_scored_again_without_measuring(tmp_path):
    import json

    kept: list = []
    s = calibrate.run(trials=3, rounds=2, launcher=ServingLauncher(injected(0.01)), env=ENV, keep=kept,
                      sets=["cell=rnn", "units=8", "layers=1", "batch=2", "seq_len=3", "input_dim=2"])
    path = tmp_path / "kept.json"
    path.write_text(json.dumps({"summaries": [s.to_json()], "trials": kept}))
    (again,) = calibrate.rescore(str(path))
    assert again.trials == 3 and again.checks() == s.checks() and again.lines()[1:] == s.lines()[1:]
    (tmp_path / "junk.json").write_text("[1]")
    with pytest.raises(RnnlabError, match="not what calibrate --keep writes"):
        calibrate.rescore(str(tmp_path / "junk.json"))


@pytest.mark.parametrize("shape", ["preset", "user"])
def test_each_shape_times_its_trials_as_a_run_of_that_shape_is_timed(shape):
    from rnnlab.core.params import PRESET_RUN, USER_RUN

    _, _, point = calibrate._plan_point("unroll", "seed", None, None, [], shape)
    want = PRESET_RUN if shape == "preset" else USER_RUN
    assert {k: point[k] for k in want} == want
