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


def test_a_machine_that_timed_nothing_yet_is_priced_from_the_bundled_timing_of_the_same_configuration(
        tmp_path, monkeypatch):
    # make_baseline's "time left" on a fresh machine: training's seed was priced at 60 s of work per worker (27 min)
    # where the bundled records took under a second; an interleaved round only from every arm's whole-round wall
    import json

    from rnnlab.core import baseline
    from tests.factories import record

    plan = api.plan("training", preset="seed", variants=["keras"])
    point = dict(plan.points[0], device="cpu")
    ref = api.experiments.get("training").reference  # priced too: a run measures its reference beside
    recs = [record("training", v, point, source="baseline", details={"worker_wall_s": w}, step_ms=1.0)
            for v, w in (("keras", 2.0), (ref, 3.0))]
    folder = tmp_path / "bundle"
    folder.mkdir()
    (folder / "m.json").write_text(json.dumps([r.to_dict(with_transient=False) for r in recs]))
    monkeypatch.setenv("RNNLAB_BASELINE", str(folder))
    baseline._load.cache_clear()
    store = Store(tmp_path / "s.sqlite")
    monkeypatch.setattr(estimates, "known_env", lambda store, device: {"device": "CPU"})  # probed: cpu
    monkeypatch.setattr(estimates, "needs_probe", lambda store, device: False)
    est = api.estimate(plan, store=store)
    rounds = int(point.get("rounds", 1))
    assert est.seconds == pytest.approx(rounds * (2 * estimates.WORKER_START_S + 2.0 + 3.0))
    assert not est.from_timings  # another machine's timing: still said to be rough
    monkeypatch.setenv("RNNLAB_BASELINE", str(tmp_path / "none"))
    bare = api.estimate(plan, store=store)
    assert bare.seconds == pytest.approx(2 * rounds * (estimates.WORKER_START_S + api.experiments.get("training").work_s))
