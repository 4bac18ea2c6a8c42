"""calibrate: four arms of one variant per trial, A/A and injected slowdowns, judged as a run judges (scripted
workers: no process, no TensorFlow)."""

import random

import pytest

from rnnlab.commands import calibrate
from rnnlab.core import outpath, rules
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
