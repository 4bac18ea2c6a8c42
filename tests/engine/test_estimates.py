"""What a run is about to cost: learned from this machine's own rounds (their start, each arm's time alone, its
windows), modelled from a record's figures where it has none, stretched by what other processes take."""

import json
import statistics

import pytest

from rnnlab import experiments
from rnnlab.core import baseline
from rnnlab.core.store import Store
from rnnlab.engine import api, estimates, interleave, launch
from tests.factories import record, stored

FIRST = interleave.MIN_BUILDS + 2 * interleave.MIN_CYCLES  # windows a compared arm times in a first round


def point(plan) -> dict:
    return dict(plan.points[0], device="cpu")  # as a run records it


def cost(start, alone, windows_s, n, ref, rounds=2) -> dict:
    return {"cost": {"start_s": [start] * rounds, "alone_s": [alone] * rounds, "windows_s": [windows_s] * rounds,
                     "windows_n": [n] * rounds, "ref": [ref] * rounds, "ahead": [i == 1 for i in range(rounds)]},
            "protocol": "interleaved"}


@pytest.fixture
def here(monkeypatch):
    """This machine's environment known without a probe (a CPU)."""
    monkeypatch.setattr(estimates, "needs_probe", lambda store, device: False)


def test_a_machine_that_ran_nothing_prices_a_point_from_the_rough_figures(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    plan = api.plan("unroll", overrides={"units": 8, "seq_len": 10}, variants=["keras", "keras_unroll"])
    est = api.estimate(plan, store=store, fresh=True)
    work = experiments.get("unroll").work_s
    # keras, unroll, the reference alone; the windows: each arm's, and the reference's after their pair
    per_round = 3 * work + FIRST * (2 * 0.1 + interleave.brackets(2) * 0.1)
    assert est.workers == 3 * plan.points[0]["rounds"]
    # the first round starts with an import, the second in a fork's time (its import ran beside the first's)
    starts = estimates.WORKER_START_S + (interleave.MIN_ROUNDS - 1) * estimates.FORK_START_S
    assert est.seconds == pytest.approx(estimates.PROBE_S + starts + interleave.MIN_ROUNDS * per_round)
    assert not est.from_timings


def test_a_run_is_priced_from_this_machines_own_rounds_of_it(tmp_path, here):
    store = Store(tmp_path / "s.sqlite")
    plan = api.plan("unroll", overrides={"layers": 3}, variants=["keras", "keras_unroll"], ref="keras")
    p = point(plan)
    store.put(stored("unroll", "keras", p, metrics={"fwd_ms": 20.0}, details=cost(5.0, 3.0, 4.0, 20, True)))
    store.put(stored("unroll", "keras_unroll", p, metrics={"fwd_ms": 15.0}, details=cost(5.0, 8.0, 6.0, 10, False)))
    est = api.estimate(plan, store=store, fresh=True)
    # per round: the start, both alone, each window of keras_unroll (0.6 s) with the reference's after it (0.2 s)
    assert est.seconds == pytest.approx(2 * (5.0 + 3.0 + 8.0 + 10 * (0.6 + 0.2)))
    assert est.from_timings and est.workers == 6


def test_an_arm_this_machine_never_ran_is_modelled_from_a_record_and_this_machines_ratio(tmp_path, here):
    store = Store(tmp_path / "s.sqlite")
    p = point(api.plan("unroll", overrides={"layers": 3}, variants=["keras"]))
    figures = {"first_build_s": 1.0, "first_call_s": 0.5, "train_build_s": 1.0, "train_first_call_s": 0.5,
               "build_s": 0.5, "fwd_ms": 20.0, "train_ms": 40.0}
    alone, window = estimates._model(stored("unroll", "keras", p, metrics=figures,
                                            details={"protocol": "interleaved"}))
    # this machine ran keras (with its costs) at twice the modelled seconds alone and 1.5x its windows
    store.put(stored("unroll", "keras", p, metrics=figures, details=cost(4.0, 2 * alone, 1.5 * window * 10, 10, False)))
    past = estimates.Past.of(store.records("unroll"), [])
    assert past.k == pytest.approx((2.0, 1.5))
    other = dict(p, units=64)  # a configuration it never ran: a bundled record of it, modelled, times the ratio
    bundled = stored("unroll", "tf2_while", other, metrics=figures, details={"protocol": "interleaved"})
    past = estimates.Past.of(store.records("unroll"), [bundled.with_(source="baseline")])
    a, w, own = past.arm(estimates.timing_key("tf2_while", other), rough=99.0)
    assert (a, w, own) == (pytest.approx(2 * alone), pytest.approx(1.5 * window), False)
    assert past.arm(estimates.timing_key("keras_cell", other), rough=99.0)[:2] == (pytest.approx(2 * 99.0), 0.1)


def test_an_arm_never_run_here_is_priced_from_a_bundled_records_own_rounds_at_this_machines_pace(here):
    from tests.factories import XEON_ENV

    p = point(api.plan("unroll", overrides={"layers": 3}, variants=["keras"]))
    figures = {"first_build_s": 1.0, "first_call_s": 0.5, "train_build_s": 1.0, "train_first_call_s": 0.5,
               "build_s": 0.5, "fwd_ms": 20.0, "train_ms": 40.0}
    other = dict(p, units=64)
    theirs = cost(3.0, 7.0, 2.0, 10, False) | {"cost": {**cost(3.0, 7.0, 2.0, 10, False)["cost"],
                                                         "alone_s": [6.0, 8.0], "windows_n": [10, 14]}}
    # the bundled machine of this CPU, and another machine's record of the same arm (no costs: modelled)
    bundled = [stored("unroll", "tf2_while", other, metrics=figures, details=theirs).with_(source="baseline"),
               stored("unroll", "tf2_while", other, metrics=figures, env=XEON_ENV,
                      details={"protocol": "interleaved"}).with_(source="baseline")]
    for recs in (bundled, bundled[::-1]):  # whichever file loads first
        past = estimates.Past.of([], recs)
        a, w, own = past.arm(estimates.timing_key("tf2_while", other), rough=99.0)
        # its rounds' medians: 7 s alone, windows of 2.0 / 10 and 2.0 / 14 s; the bundled machine's windows a round
        assert (a, w, own) == (pytest.approx(7.0), pytest.approx(statistics.median([0.2, 2.0 / 14])), False)
        assert past.windows_of(other) == 12 and past.start_s() == 3.0 and past.start_s(ahead=True) == 3.0
        # beside other work: its quiet rounds stretched
        assert past.arm(estimates.timing_key("tf2_while", other), rough=99.0, loaded=True)[0] == pytest.approx(
            7.0 * past.stretch)
    # this machine ran one configuration at twice the bundled machine's modelled seconds: the bundled seconds scale
    mine = stored("unroll", "keras", p, metrics={k: 2 * v for k, v in figures.items()},
                  details=cost(4.0, 5.0, 10.0, 10, False))
    past = estimates.Past.of([mine], bundled + [stored("unroll", "keras", p, metrics=figures, details={
        "protocol": "interleaved"}).with_(source="baseline")])
    assert past.speed == pytest.approx((2.0, 2.0))
    assert past.arm(estimates.timing_key("tf2_while", other), rough=99.0)[0] == pytest.approx(2 * 7.0)
    # a bundled record without costs: modelled, as before
    alone, _ = estimates._model(bundled[1])
    past = estimates.Past.of([], bundled[1:])
    assert past.arm(estimates.timing_key("tf2_while", other), rough=99.0)[0] == pytest.approx(alone)


def test_the_rounds_a_configuration_took_here_are_the_rounds_it_is_priced_at(tmp_path, here):
    store = Store(tmp_path / "s.sqlite")
    plan = api.plan("unroll", preset="seed", variants=["tf1_dynamic", "keras"])
    p = point(plan)
    three = [{"fwd_ms": 10.0}] * 3
    for v in ("tf1_dynamic", "keras"):
        store.put(stored("unroll", v, p, metrics={"fwd_ms": 10.0}, details=cost(5.0, 1.0, 1.0, 10, v == "tf1_dynamic",
                                                                               rounds=3)).with_(rounds=tuple(three)))
    est = api.estimate(plan, store=store, fresh=True)
    assert est.seconds == pytest.approx(3 * (5.0 + 2 * 1.0 + 10 * (0.1 + 0.1)))
    short = dict(p, deadline_s=20)  # a deadline leaves the rounds that fit it, never fewer than MIN_ROUNDS
    assert estimates._interleaved_s(short, 3, 9.0, 5.0, 0.5, 5.0) == pytest.approx(5.0 + 0.5 + 2 * 9.0)
    # a third round imports its own: it fits 33 s, not 32
    assert estimates._interleaved_s(dict(p, deadline_s=33), 3, 9.0, 1.0, 0.0, 5.0) == pytest.approx(6.0 + 3 * 9.0)
    assert estimates._interleaved_s(dict(p, deadline_s=32), 3, 9.0, 1.0, 0.0, 5.0) == pytest.approx(1.0 + 2 * 9.0)


def test_a_later_round_is_priced_at_the_start_its_import_ahead_left_it(tmp_path, here):
    store = Store(tmp_path / "s.sqlite")
    plan = api.plan("unroll", overrides={"layers": 3}, variants=["keras", "keras_unroll"], ref="keras")
    p = point(plan)
    for v, alone in (("keras", 3.0), ("keras_unroll", 8.0)):
        details = cost(0.0, alone, 4.0, 10, v == "keras")
        details["cost"].update(start_s=[7.0, 0.1], ahead=[False, True])  # the second's import ran beside the first's
        store.put(stored("unroll", v, p, metrics={"fwd_ms": 15.0}, details=details))
    est = api.estimate(plan, store=store, fresh=True)
    assert est.seconds == pytest.approx(7.0 + 0.1 + 2 * (3.0 + 8.0 + 10 * (0.4 + 0.4)))


def test_other_processes_stretch_the_estimate_and_say_so():
    assert estimates.slowdown(None) == estimates.slowdown(0.2) == 1.0
    assert estimates.slowdown(1.0) == estimates.STRETCH  # no busy round here yet: the prior
    plan = api.plan("unroll", overrides={"units": 8, "seq_len": 10}, variants=["keras"])
    quiet = api.estimate(plan, fresh=True)
    loaded = api.estimate(plan, fresh=True, others=1.0)
    assert loaded.seconds == pytest.approx(quiet.seconds * estimates.STRETCH, rel=0.05)
    assert (loaded.others, quiet.slowdown, loaded.slowdown) == (1.0, 1.0, estimates.STRETCH)


def test_a_run_beside_other_work_is_priced_from_rounds_timed_beside_it(tmp_path, here):
    store = Store(tmp_path / "s.sqlite")
    plan = api.plan("unroll", overrides={"layers": 3}, variants=["keras", "keras_unroll"], ref="keras")
    p = point(plan)

    def rounds(quiet, loaded, ref):
        c = {"start_s": [5.0, 5.0, 6.0, 6.0], "alone_s": [quiet, quiet, loaded, loaded],
             "windows_s": [2.0, 2.0, 3.0, 3.0], "windows_n": [10] * 4, "ref": [ref] * 4, "other": [0.0, 0.1, 1.0, 1.1],
             "ahead": [False, True] * 2}
        return {"cost": c, "protocol": "interleaved", "rounds": 2}  # four rounds of two runs of two rounds
    store.put(stored("unroll", "keras", p, metrics={"fwd_ms": 20.0}, details=rounds(2.0, 3.0, True)))
    store.put(stored("unroll", "keras_unroll", p, metrics={"fwd_ms": 15.0}, details=rounds(8.0, 10.0, False)))
    past = estimates.Past.of(store.records("unroll"), [])
    assert past.stretch == pytest.approx(statistics.median([(3.0 + 3.0) / (2.0 + 2.0), (10.0 + 3.0) / (8.0 + 2.0)]))
    quiet = api.estimate(plan, store=store, fresh=True)
    loaded = api.estimate(plan, store=store, fresh=True, others=1.0)
    assert quiet.seconds == pytest.approx(2 * (5.0 + 2.0 + 8.0 + 10 * (0.2 + 0.2)))  # the quiet rounds
    assert loaded.seconds == pytest.approx(2 * (6.0 + 3.0 + 10.0 + 10 * (0.3 + 0.3)))  # the busy ones


def test_a_machine_that_timed_nothing_yet_is_priced_from_the_bundled_timing_of_the_same_configuration(
        tmp_path, monkeypatch):
    # make_baseline's "time left" on a fresh machine: a sequential experiment's bundled worker times, one worker after
    # another
    plan = api.plan("training", preset="seed", variants=["keras"])
    p = point(plan)
    ref = experiments.get("training").reference  # priced too: a run measures its reference beside
    recs = [record("training", v, p, source="baseline", details={"worker_wall_s": w}, step_ms=1.0)
            for v, w in (("keras", 2.0), (ref, 3.0))]
    folder = tmp_path / "bundle"
    folder.mkdir()
    (folder / "m.json").write_text(json.dumps([r.to_dict(with_transient=False) for r in recs]))
    monkeypatch.setenv("RNNLAB_BASELINE", str(folder))
    baseline._load.cache_clear()
    store = Store(tmp_path / "s.sqlite")
    monkeypatch.setattr(estimates, "known_env", lambda store, device: {"device": "CPU"})  # probed: cpu
    monkeypatch.setattr(estimates, "needs_probe", lambda store, device: False)
    monkeypatch.setattr(launch, "can_fork", lambda: True)
    est = api.estimate(plan, store=store)
    rounds = int(p.get("rounds", 1))
    # the first worker's import, then every other worker forked from an import made ahead
    starts = estimates.WORKER_START_S + (2 * rounds - 1) * estimates.FORK_START_S
    assert est.seconds == pytest.approx(starts + rounds * (2.0 + 3.0))
    assert not est.from_timings  # another machine's timing: still said to be rough
    monkeypatch.setenv("RNNLAB_BASELINE", str(tmp_path / "none"))
    baseline._load.cache_clear()
    bare = api.estimate(plan, store=store)
    assert bare.seconds == pytest.approx(starts + rounds * 2 * experiments.get("training").work_s)


def test_a_sequential_point_pays_one_import_then_forks_where_workers_fork_else_an_import_each(tmp_path, monkeypatch):
    plan = api.plan("padding", preset="quick", overrides={"rounds": 3}, variants=["bucket"])
    p = point(plan)
    n = 3 * len(plan.variants)  # workers, its reference among them when the plan adds one
    store = Store(tmp_path / "s.sqlite")
    for v in plan.variants:  # this machine's own rounds: the first worker imported, the others forked
        first = v == plan.variants[0]
        store.put(stored("padding", v, p, details={"worker_wall_s": 2.0, "cost": {
            "start_s": [5.0 if first else 0.2, 0.2, 0.2], "alone_s": [2.0] * 3, "ahead": [not first, True, True]}}))
        store.put(stored("padding", v, dict(p, device="gpu"), details={"worker_wall_s": 2.0, "cost": {
            "start_s": [5.0] * 3, "alone_s": [2.0] * 3, "ahead": [False] * 3}}))  # spawned: an import each
    monkeypatch.setattr(estimates, "needs_probe", lambda store, device: False)
    monkeypatch.setattr(estimates, "known_env", lambda store, device: {"device": "CPU"})
    monkeypatch.setattr(launch, "can_fork", lambda: True)
    assert api.estimate(plan, store=store, fresh=True).seconds == pytest.approx(5.0 + (n - 1) * 0.2 + n * 2.0)
    # a first run here: the import runs beside the machine probe's, which waits for it (the probe's own fork and
    # matmul are PROBE_S)
    monkeypatch.setattr(estimates, "needs_probe", lambda store, device: True)
    assert api.estimate(plan, store=store, fresh=True).seconds == pytest.approx(
        estimates.PROBE_S + 5.0 + (n - 1) * 0.2 + n * 2.0)
    # a GPU (or no fork here): every worker is spawned and imports
    monkeypatch.setattr(estimates, "needs_probe", lambda store, device: False)
    monkeypatch.setattr(estimates, "known_env", lambda store, device: {"device": "GPU"})
    assert api.estimate(plan, store=store, fresh=True).seconds == pytest.approx(n * 5.0 + n * 2.0)
