"""What a run is about to cost: interleaved points priced side by side, stretched by what other processes take."""

import pytest

from rnnlab.core.store import Store
from rnnlab.engine import api, estimates, interleave


def test_an_interleaved_point_prices_its_arms_side_by_side_and_the_rounds_it_needs(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    plan = api.plan("unroll", overrides={"units": 8, "seq_len": 10}, variants=["keras", "keras_unroll"])
    est = api.estimate(plan, store=store, fresh=True)
    work = api.experiments.get("unroll").work_s
    point = plan.points[0]
    per_round = estimates.WORKER_START_S + 3 * work + point["budget_s"] / point["rounds"]  # keras, unroll, reference
    assert est.workers == 3 * point["rounds"]
    assert est.seconds == pytest.approx(estimates.PROBE_S + interleave.MIN_ROUNDS * per_round)
    seq = api.plan("unroll", overrides={"units": 8, "seq_len": 10, "protocol": "sequential"},
                   variants=["keras", "keras_unroll"])
    assert api.estimate(seq, store=store, fresh=True).seconds > est.seconds  # one worker after another


def test_other_processes_stretch_the_estimate_and_say_so():
    assert estimates.slowdown(None, 2) == estimates.slowdown(0.0, 2) == 1.0
    assert estimates.slowdown(1.0, 2) == pytest.approx(2.0)
    assert estimates.slowdown(5.0, 2) == pytest.approx(4.0)  # never less than half a core left
    plan = api.plan("unroll", overrides={"units": 8, "seq_len": 10}, variants=["keras"])
    quiet = api.estimate(plan, fresh=True)
    busy = api.estimate(plan, fresh=True, others=1.0)
    assert busy.seconds == pytest.approx(quiet.seconds * estimates.slowdown(1.0, api.envinfo.static_env()["cores"]))
    assert (busy.others, quiet.slowdown) == (1.0, 1.0)
