"""Rounds: each (round, variant) a fresh worker, the order rotating; one record per variant with every round's
metrics and their medians. A fake launcher (tests/workers.py): no process, no TensorFlow."""

import os

import pytest

from rnnlab import experiments
from rnnlab.core import condition
from rnnlab.core.store import Store
from rnnlab.engine import api, launch
from rnnlab.judge import select
from rnnlab.engine.runner import Progress
from tests.factories import ENV, FAKE_R, use_fakes
from tests.workers import FakeLauncher

@pytest.fixture
def fake(monkeypatch):
    use_fakes(monkeypatch, FAKE_R, quiet=True)
    return FAKE_R


def by_round(per_round):
    """Metrics: ``per_round[variant][round]`` is the fwd_ms of that variant's n-th launch."""
    seen = {}

    def metrics(task, n):
        v = task["variant"]
        k = seen[v] = seen.get(v, -1) + 1
        got = per_round[v][k]
        return got if isinstance(got, str) else {"fwd_ms": got, "fwd_ms_p25": got * 0.9, "fwd_ms_p75": got * 1.1}
    return metrics


def go(rounds, per_round, variants, tmp_path, **kw):
    launcher = FakeLauncher(by_round(per_round))
    seen = []
    p = api.plan("fake_r", variants=variants, overrides={"rounds": rounds})
    recs = api.run(p, store=Store(tmp_path / "s.sqlite"), env=ENV, launcher=launcher, on_progress=seen.append,
                   mem_limit_mb=None, **kw)
    return recs, launcher, seen


def test_three_rounds_give_one_record_per_variant_with_every_round_and_the_medians(fake, tmp_path):
    recs, launcher, seen = go(3, {"ok": [1.0, 5.0, 2.0], "a": [4.0, 3.0, 9.0]}, ["ok", "a"], tmp_path)
    assert [r.variant for r in recs] == ["ok", "a"]
    ok, a = recs
    assert [m["fwd_ms"] for m in ok.rounds] == [1.0, 5.0, 2.0] and ok.metrics["fwd_ms"] == 2.0
    assert [m["fwd_ms"] for m in a.rounds] == [4.0, 3.0, 9.0] and a.metrics["fwd_ms"] == 4.0
    assert a.metrics["fwd_ms_p25"] == pytest.approx(3.6)  # the median of the rounds' quartiles
    # derived per round, then combined: 4e6 flops / 4 ms = 1 GFLOP/s
    assert [m["gflops"] for m in a.rounds] == pytest.approx([1.0, 4 / 3, 4 / 9]) and a.metrics["gflops"] == 1.0
    assert a.round_metrics == a.rounds and len(a.round_metrics) == 3
    assert ok.metrics["max_abs_diff"] == 0.0 and a.metrics["max_abs_diff"] == 0.0
    assert a.details["rounds"] == 3 and a.details["kernel"] == "test" and "failed_rounds" not in a.details
    assert a.details["loadavg"] == [[0.25, 0.25]] * 3
    # the store holds these records, rounds included
    stored = Store(tmp_path / "s.sqlite").get(a.key)
    assert stored.rounds == a.rounds and stored.metrics == a.metrics
    # progress: (point, variant, round) tasks
    done = [(pr.variant, pr.round) for pr in seen if pr.phase == "done"]
    assert done == [("ok", 0), ("a", 0), ("a", 1), ("ok", 1), ("ok", 2), ("a", 2)]
    assert {pr.total for pr in seen} == {6} and {pr.n_rounds for pr in seen} == {3}
    assert seen[-1].fraction == 1.0
    assert ("a", 1, "importing TensorFlow") in {(pr.variant, pr.round, pr.phase) for pr in seen}


def test_the_order_rotates_per_round_and_the_reference_takes_part_in_every_round(fake, tmp_path):
    per = {v: [1.0] * 4 for v in ("ok", "a", "b", "ok_off")}
    recs, launcher, _ = go(4, per, ["a", "b", "ok_off"], tmp_path)
    assert [r.variant for r in recs] == ["a", "b", "ok_off"]  # the reference ran but is not returned
    assert launcher.order == ["ok", "a", "b", "ok_off",
                              "a", "b", "ok_off", "ok",
                              "b", "ok_off", "ok", "a",
                              "ok_off", "ok", "a", "b"]
    # outputs are asked for until a variant has returned them (the first round), never again
    assert [bool(t["outputs_path"]) for t in launcher.tasks] == [True] * 4 + [False] * 12
    assert recs[2].metrics["max_abs_diff"] == pytest.approx(0.5)  # from the first round's outputs
    assert recs[0].metrics["max_abs_diff"] == 0.0


def test_one_round_is_todays_record_plus_its_one_round(fake, tmp_path):
    recs, launcher, seen = go(1, {"ok": [2.0], "ok_off": [3.0]}, ["ok", "ok_off"], tmp_path)
    ok, off = recs
    assert launcher.order == ["ok", "ok_off"]
    assert off.metrics == {"fwd_ms": 3.0, "fwd_ms_p25": pytest.approx(2.7), "fwd_ms_p75": pytest.approx(3.3),
                           "gflops": pytest.approx(4e6 / 3e-3 / 1e9), "roofline_frac": pytest.approx(4 / 300),
                           "max_abs_diff": pytest.approx(0.5)}
    assert off.rounds == ({k: v for k, v in off.metrics.items() if k != "max_abs_diff"},)
    cost = off.details.pop("cost")  # what the estimate learns from: its start, its own time
    assert cost["alone_s"] == [1.0] and len(cost["start_s"]) == 1
    assert off.details == {"fwd_flops": 4e6, "kernel": "test", "worker_wall_s": 1.0,  # no rounds/loadavg keys
                           "condition": {"threads": 2, "cores": 2}}  # threads 0: every core; no load read
    assert [(pr.variant, pr.phase) for pr in seen if pr.phase in ("queued", "done")] == \
        [("ok", "queued"), ("ok", "done"), ("ok_off", "queued"), ("ok_off", "done")]
    assert {(pr.round, pr.n_rounds, pr.total) for pr in seen} == {(0, 1, 2)}
    again = api.run(api.plan("fake_r", variants=["ok", "ok_off"]), store=Store(tmp_path / "s.sqlite"), env=ENV,
                    launcher=FakeLauncher(lambda t, n: pytest.fail("served from the store")))
    assert all(r.cached for r in again) and again[1].metrics == off.metrics


def test_a_transient_failure_in_round_2_drops_that_round(fake, tmp_path):
    recs, launcher, seen = go(3, {"ok": [1.0, "crash", 3.0]}, ["ok"], tmp_path)
    (r,) = recs
    assert r.ok and [m["fwd_ms"] for m in r.rounds] == [1.0, 3.0] and r.metrics["fwd_ms"] == 2.0
    assert r.details["failed_rounds"] == [{"round": 2, "reason": "worker crashed: killed by signal 9 (likely out"
                                                                " of memory)"}]
    assert len(r.details["loadavg"]) == 3 and not r.details.get("transient")
    assert [pr.phase for pr in seen if pr.phase in ("done", "failed")] == ["done", "failed", "done"]


def test_a_deterministic_failure_in_round_1_ends_the_variant_and_every_round_failing_is_an_error(fake, tmp_path):
    recs, launcher, seen = go(3, {"ok": [1.0, 1.0, 1.0], "a": ["ValueError: bad shapes"],
                                  "b": ["crash", "crash", "crash"]}, ["ok", "a", "b"], tmp_path)
    ok, a, b = recs
    assert a.error == "ValueError: bad shapes" and a.details == {} and a.rounds == ()
    assert launcher.order.count("a") == 1 and launcher.order.count("b") == 3
    assert b.error.startswith("worker crashed") and b.details["transient"] and len(b.details["failed_rounds"]) == 3
    assert ok.ok and len(ok.rounds) == 3
    assert seen[-1].index == seen[-1].total - 1 == 8 and seen[-1].fraction == 1.0


def test_loadavg_skipped_silently_where_unavailable(fake, tmp_path, monkeypatch):
    def none():
        raise OSError("no load average here")

    monkeypatch.setattr(os, "getloadavg", none)
    recs, _, seen = go(2, {"ok": [1.0, 2.0]}, ["ok"], tmp_path)
    assert "loadavg" not in recs[0].details and recs[0].details["rounds"] == 2
    assert not any(pr.warning for pr in seen)


@pytest.mark.parametrize("load,warned", [(1.5, True), (1.0, False)])
def test_a_busy_machine_is_warned_about_not_refused(fake, tmp_path, monkeypatch, load, warned):
    monkeypatch.setattr(os, "getloadavg", lambda: (load, 0.0, 0.0))
    monkeypatch.setattr(condition, "others_now", lambda seconds=0.5: load - 0.5)  # other processes' cores
    # the worker's meter reads what other processes took while it ran (``worker.main``: the whole call's reading)
    launcher = FakeLauncher(by_round({"ok": [1.0]}), readings=[{"metric": "run", "other": load - 0.5, "own": 1.0,
                                                                 "wall": 1.0}])
    recs = api.run(api.plan("fake_r", variants=["ok"], overrides={"rounds": 1}), store=Store(tmp_path / "s.sqlite"),
                   env=ENV, launcher=launcher, on_progress=(seen := []).append, mem_limit_mb=None)  # ENV: 2 cores
    warnings = [pr for pr in seen if pr.warning]
    assert recs[0].ok
    if warned:
        assert len(warnings) == 1 and warnings[0] is seen[0] and warnings[0].variant == ""
        assert warnings[0].phase.startswith("warning: machine busy: other processes use 1.0 of 2 cores;")
        assert warnings[0].fraction == 0.0
        # the one-round record keeps its load, and its condition: every figure of it is captioned "busy machine"
        assert recs[0].details["loadavg"] == [[1.5, 1.5]]
        assert recs[0].details["condition"]["other_cores"] == 1.0
        assert "measured on a busy machine: 2 threads; 1 of 2 cores free while timed" in select.source_note(recs)
    else:
        assert not warnings
        assert "loadavg" not in recs[0].details and "busy" not in select.source_note(recs)
        assert "2 threads; 1.5 of 2 cores free while timed" in select.source_note(recs)


def test_progress_defaults_keep_old_callers_working():
    pr = Progress("unroll", "tf1_static", "build", 1, 4, 0.5, 0, 1)
    assert (pr.round, pr.n_rounds) == (0, 1) and pr.fraction == pytest.approx(1.5 / 4)
    assert Progress("unroll", "tf1_static", "importing TensorFlow", 0, 4, 0.5).fraction > 0  # moves while importing
    assert Progress("unroll", "tf1_static", "done", 3, 4, 0.5).fraction == 1.0


def test_the_job_manager_keeps_warnings_apart_from_progress():
    from rnnlab.engine.jobs import JobManager

    def fake_run(plan, *, on_progress, **kw):
        on_progress(Progress("unroll", "", "warning: machine busy (load 3.0 on 2 cores): timings may be noisy", 0, 1,
                             0.0))
        on_progress(Progress("unroll", "", "measuring this machine once", 0, 1, 0.0))
        on_progress(Progress("unroll", "tf1_static", "build", 0, 1, 0.1))
        return []

    mgr = JobManager(runner=fake_run)
    job = mgr.submit(api.plan("unroll", preset="quick", variants=["tf1_static"], available_mb=float("inf")))
    import time

    t0 = time.monotonic()
    while job.active and time.monotonic() - t0 < 5:
        time.sleep(0.01)
    assert job.warnings == ["machine busy (load 3.0 on 2 cores): timings may be noisy"]
    assert job.progress.phase == "build" and job.note is None


def test_estimate_counts_rounds_and_the_reference(fake, tmp_path):
    p = api.plan("fake_r", variants=["a", "b"], overrides={"rounds": 3, "units": [4, 8]})
    assert p.n_tasks == 4 and p.n_runs == 12
    est = api.estimate(p, store=Store(tmp_path / "e.sqlite"), fresh=True)
    assert est.workers == 18 and est.stored == 0 and not est.from_timings  # + the reference "ok", every round
    assert est.seconds == pytest.approx(18 * (api.WORKER_START_S + experiments.get("fake_r").work_s), rel=0.5)


def test_every_rounds_import_starts_with_the_first_and_ends_before_anything_is_timed(fake, tmp_path):
    class Ahead(FakeLauncher):
        """Notes the run's asks for imports ahead, and the tasks launched meanwhile."""

        def __init__(self):
            super().__init__()
            self.log = []

        def __call__(self, task):
            self.log.append(("launch", task["variant"]))
            return super().__call__(task)

        def new_round(self):
            self.log.append(("new round",))

        def ahead(self, tasks, n):
            self.log.append(("ahead", n, [t["variant"] for t in tasks]))

        def settle(self):
            self.log.append(("settle",))

    launcher = Ahead()
    p = api.plan("fake_r", variants=["ok", "a"], overrides={"rounds": 3})
    api.run(p, store=Store(tmp_path / "s.sqlite"), env=ENV, launcher=launcher, mem_limit_mb=None)
    first = launcher.log.index(("launch", "ok"))
    # the two rounds after the first import beside it, and nothing runs until they are done; each round forks anew
    assert launcher.log[:first] == [("new round",), ("ahead", 2, ["ok"]), ("settle",)]
    assert [e[0] for e in launcher.log].count("ahead") == 1 and launcher.log.count(("new round",)) == 3


class _Asks:
    """A launcher that notes a run's asks for imports ahead (and launches nothing)."""

    def __init__(self):
        self.log = []

    def ahead(self, tasks, n):
        self.log.append(("ahead", n, [launch.zygote_spec(t) for t in tasks]))

    def settle(self):
        self.log.append(("settle",))


PROBES_ZYGOTE = {"device": "CPU", "threads": 0, "preload": ["tensorflow", "keras"]}


@pytest.mark.parametrize("point, asked", [
    ({"protocol": "interleaved", "rounds": 3, "device": "auto", "threads": 0}, [("ahead", 1, [PROBES_ZYGOTE])]),
    ({"rounds": 3, "device": "cpu"}, [("ahead", 2, [PROBES_ZYGOTE])]),  # sequential: every round's, as it does itself
    ({"protocol": "interleaved", "rounds": 1, "device": "auto"}, []),  # its one round forks from the probe's zygote
    ({"protocol": "interleaved", "rounds": 3, "device": "gpu"}, []),  # the probe says whether there is one
    ({"protocol": "interleaved", "rounds": 3, "device": "auto", "threads": 1}, []),  # not the probe's zygote
])
@pytest.mark.skipif(not launch.can_fork(), reason="the zygote is Linux's")
def test_a_first_run_imports_its_rounds_beside_the_probe_when_they_share_its_zygote(point, asked, monkeypatch):
    from rnnlab.core import envinfo
    from rnnlab.engine import running

    monkeypatch.setattr(envinfo, "static_env", lambda: {"gpu_hint": False})
    launcher = _Asks()
    running._import_beside_probe(launcher, experiments.get("unroll"), point)
    assert launcher.log == (asked + [("settle",)] if asked else [])
    assert launch.zygote_spec(running.probe_task("CPU")) == PROBES_ZYGOTE


def test_a_machine_that_may_have_a_gpu_imports_nothing_before_its_probe(monkeypatch):
    from rnnlab.core import envinfo
    from rnnlab.engine import running

    monkeypatch.setattr(envinfo, "static_env", lambda: {"gpu_hint": True})
    launcher = _Asks()
    running._import_beside_probe(launcher, experiments.get("unroll"), {"protocol": "interleaved", "rounds": 3})
    assert launcher.log == []


def test_the_probe_runs_once_the_first_rounds_imports_are_done(fake, tmp_path, monkeypatch):
    from rnnlab.core import envinfo
    from rnnlab.engine import running

    log = []

    class Ahead(_Asks, FakeLauncher):
        def __init__(self):
            FakeLauncher.__init__(self)
            self.log = log

        def __call__(self, task):
            log.append(("launch", task["variant"]))
            return FakeLauncher.__call__(self, task)

    monkeypatch.setattr(running, "needs_probe", lambda store, device: True)
    monkeypatch.setattr(running, "environment", lambda *a, **k: log.append(("probe",)) or dict(ENV))
    monkeypatch.setattr(envinfo, "static_env", lambda real=envinfo.static_env: {**real(), "gpu_hint": False})
    beside = running._import_beside_probe  # as if the fake's workers imported TensorFlow (its zygote the probe's)
    monkeypatch.setattr(running, "_import_beside_probe", lambda launcher, exp, point: beside(
        launcher, experiments.get("unroll"), point))
    p = api.plan("fake_r", variants=["ok", "a"], overrides={"rounds": 3})
    api.run(p, store=Store(tmp_path / "s.sqlite"), launcher=Ahead(), mem_limit_mb=None)
    assert log[:3] == [("ahead", 2, [PROBES_ZYGOTE]), ("settle",), ("probe",)]  # (a sequential point: 3 rounds)
    assert log.index(("probe",)) < min(i for i, e in enumerate(log) if e[0] == "launch")
