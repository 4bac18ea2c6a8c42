"""A run's size is said and capped before anything starts (engine/estimates.check_cost): a sweep past the caps is
one line naming its size and --allow-long, in a second or two, with nothing spawned."""

import time

import pytest

from rnnlab.cli import main
from rnnlab.core.errors import RnnlabError
from rnnlab.engine import api, estimates


def _never(*a, **k):
    raise AssertionError("a worker started before the run's size was checked")


def test_a_500_point_sweep_is_refused_before_anything_runs(monkeypatch, capsys):
    monkeypatch.setattr(api, "run", _never)
    t0 = time.monotonic()
    assert main(["run", "unroll", "--set", "seq_len=" + ",".join(map(str, range(1, 501)))]) == 2
    took = time.monotonic() - t0
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("rnnlab: unroll: 7 variants x 500 points x 3 rounds = 10500 worker processes"), err
    assert len(err) == 2 and "this run would start 10,500 worker processes" in err[1], err
    assert "at most 1,000 worker processes and 6 h" in err[1] and "pass --allow-long" in err[1], err[1]
    assert took < 10, took  # one read of the store, not one per (point, variant)


def test_allow_long_goes_past_the_caps_knowingly(monkeypatch):
    ran = []
    monkeypatch.setattr(api, "run", lambda plan, **k: ran.append(len(plan.points)) or [])
    values = ",".join(map(str, range(1, 101)))  # 100 points x 12 variants: 1,200 workers
    assert main(["run", "unroll", "--set", f"seq_len={values}"]) == 2 and ran == []
    assert main(["run", "unroll", "--set", f"seq_len={values}", "--allow-long"]) == 0 and ran == [100]


@pytest.mark.parametrize("workers,seconds,refused", [(315, 8500, False), (1000, 6 * 3600, False),
                                                     (1001, 60, True), (10, 6 * 3600 + 1, True)])
def test_the_caps_are_workers_and_estimated_time(workers, seconds, refused):
    est = api.Estimate(workers, seconds, 0, True, True)
    if refused:
        with pytest.raises(RnnlabError, match="more than a run starts unasked"):
            estimates.check_cost(est)
        estimates.check_cost(est, allow_long=True)
    else:
        estimates.check_cost(est)
