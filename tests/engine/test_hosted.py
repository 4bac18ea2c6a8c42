"""Hosted mode's caps (rnnlab.engine.hosted) and its one-heavy-process rule (JobManager.hold): pure, no TensorFlow."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from rnnlab import experiments
from rnnlab.core.errors import RnnlabError
from rnnlab.engine import api, hosted, jobs, runner
from rnnlab.engine.jobs import Job, JobManager


def test_every_int_param_of_every_experiment_has_a_hosted_cap():
    caps = hosted.param_caps(hosted.Limits())
    missing = sorted({f"{e.name}.{p.name}" for e in experiments.all_experiments() for p in e.params.params
                      if p.kind == "int" and p.name not in caps})
    assert missing == [], f"int params without a hosted cap (add them to hosted.Limits or the experiment's hosted caps): {missing}"


def test_an_int_param_without_a_cap_is_refused():
    plan = api.Plan("unroll", ({"units": 8, "brand_new_knob": 3},), ("tf1_static",))
    with pytest.raises(RnnlabError, match="no hosted limit for brand_new_knob"):
        hosted.check(plan, hosted.Limits())


@pytest.mark.parametrize("experiment, overrides, says", [
    ("padding", {"n_sequences": 100000, "seq_len": 10, "input_dim": 8}, "n_sequences=100000 (at most 4096)"),
    ("padding", {"n_classes": 100000}, "n_classes=100000 (at most 1000)"),
    ("training", {"epochs": 500}, "epochs=500 (at most 20)"),
    ("training", {"n_train": 60000}, "n_train=60000 (at most 10000)"),
    ("seed003", {"steps": 100000, "batch": 8, "units": 8, "seq_len": 10}, "steps=100000 (at most 200)"),
    ("seed003", {"n_data": 100000, "batch": 8, "units": 8, "seq_len": 10}, "n_data=100000 (at most 2000)"),
    ("unroll", {"warmup": 200}, "warmup=200 (at most 5)"),
    ("unroll", {"parallel_iterations": 1024}, "parallel_iterations=1024 (at most 256)"),
    ("knobs", {"first_n": 2000, "seq_len": 2000}, "first_n=2000 (at most 200)"),
    ("padding", {"buckets": 64}, "buckets=64 (at most 16)"),
])
def test_the_new_caps_refuse_with_the_limit_named(experiment, overrides, says):
    plan = api.plan(experiment, overrides=overrides, variants=[experiments.get(experiment).default_variants[0]])
    with pytest.raises(RnnlabError) as e:
        hosted.check(plan, hosted.Limits())
    assert says in str(e.value) and "hosted demo caps" in str(e.value)
    assert hosted.refusal(plan, hosted.Limits()) == str(e.value)


def test_a_small_plan_passes_with_its_time_limit_and_rounds_lowered():
    plan = api.plan("unroll", overrides={"units": 8, "seq_len": 10, "batch": 2, "timeout_s": 7200, "rounds": 5},
                    variants=["tf1_static"])
    ran = hosted.check(plan, hosted.Limits())
    assert (ran.points[0]["timeout_s"], ran.points[0]["rounds"], ran.n_runs) == (120, 2, 2)
    assert (ran.points[0]["budget_s"], ran.points[0]["live"]) == (30, 3)  # interleaved: a short budget, 3 workers
    assert {k: v for k, v in ran.points[0].items() if k not in hosted.CLAMPED} == \
        {k: v for k, v in plan.points[0].items() if k not in hosted.CLAMPED}
    assert hosted.check(plan, hosted.Limits(rounds=3)).points[0]["rounds"] == 3  # raised: RNNLAB_HOSTED_MAX_ROUNDS
    short = api.plan("unroll", overrides={"units": 8, "timeout_s": 30}, variants=["tf1_static"])
    assert hosted.check(short, hosted.Limits()).points[0]["timeout_s"] == 30  # lowered, never raised
    assert hosted.refusal(plan, hosted.Limits()) is None


def test_worker_runs_are_counted_after_the_rounds_are_lowered():
    variants = list(experiments.get("unroll").variants)[:5]
    plan = api.plan("unroll", overrides={"units": 8, "seq_len": 10, "rounds": 5}, variants=variants)
    assert plan.n_runs == 25
    hosted.check(plan, hosted.Limits())  # 10 workers once the rounds are 2
    with pytest.raises(RnnlabError, match=r"25 worker runs \(at most 24\)"):
        hosted.check(plan, hosted.Limits(rounds=5))


def test_caps_are_env_overridable(monkeypatch):
    plan = api.plan("training", overrides={"epochs": 50}, variants=[experiments.get("training").variants[0]])
    with pytest.raises(RnnlabError, match="epochs=50"):
        hosted.check(plan)
    monkeypatch.setenv("RNNLAB_HOSTED_MAX_EPOCHS", "60")
    monkeypatch.setenv("RNNLAB_HOSTED_MAX_ROUNDS", "3")
    assert hosted.param_caps()["epochs"] == 60 and hosted.limits().rounds == 3 and hosted.limits().units == 128
    hosted.check(plan)  # no longer refused
    monkeypatch.setenv("RNNLAB_HOSTED_MAX_EPOCHS", "many")
    with pytest.raises(RnnlabError, match="RNNLAB_HOSTED_MAX_EPOCHS='many': expected an integer"):
        hosted.limits()


def _blocking_manager():
    release = threading.Event()

    def runner(plan, **kw):
        release.wait(10)
        return []

    return JobManager(runner=runner, max_active=1), release


def test_a_conversion_is_refused_while_a_run_goes_and_a_run_while_a_conversion_goes():
    mgr, release = _blocking_manager()
    plan = api.plan("unroll", overrides={"units": 8}, variants=["tf1_static"])
    job = mgr.submit(plan)
    assert mgr.busy()
    with pytest.raises(RnnlabError, match=r"^1 run\(s\) already going \(at most 1 at once here\)"):
        with mgr.hold("a checkpoint conversion"):
            pass
    release.set()
    for _ in range(200):
        if not job.active:
            break
        threading.Event().wait(0.02)
    assert not job.active and not mgr.busy()
    other = api.plan("unroll", overrides={"units": 9}, variants=["tf1_static"])
    with mgr.hold("a checkpoint conversion"):
        assert mgr.busy() and mgr.held() == ["a checkpoint conversion"]
        with pytest.raises(RnnlabError, match="^a checkpoint conversion already going"):
            mgr.submit(other)
        with pytest.raises(RnnlabError, match="^a checkpoint conversion already going"):
            with mgr.hold("a checkpoint conversion"):  # a second conversion (another session)
                pass
    assert not mgr.busy() and mgr.held() == []
    mgr.submit(other)  # free again


def test_only_the_session_that_started_a_run_may_cancel_it():
    mgr, release = _blocking_manager()
    plan = api.plan("unroll", overrides={"units": 8}, variants=["tf1_static"])
    job = mgr.submit(plan, owner="visitor-a", expected_s=60.0)
    try:
        assert mgr.submit(plan, owner="visitor-b") is job  # the same plan: joined, still visitor a's
        assert job.owner == "visitor-a" and not job.owned_by("visitor-b") and not job.owned_by(None)
        assert mgr.cancel(job.key, "visitor-b") is False and mgr.cancel(job.key) is False
        assert not job.cancel.is_set()
        assert 0 < job.expected_left() <= 60.0
        assert mgr.cancel(job.key, "visitor-a") is True and job.cancel.is_set()
    finally:
        release.set()
    unowned = Job(key="k", plan=plan, started=0.0)  # a run started outside hosted mode: any tab may cancel
    assert unowned.owned_by(None) and unowned.owned_by("anyone") and unowned.expected_left() is None


def test_a_visitor_kept_waiting_is_told_why_and_when_to_try_again():
    """Five visitors press Run at once: one run starts; the others' different plans are refused saying whose run
    holds the one slot and when to come back (from its estimate), never offered its Cancel."""
    mgr, release = _blocking_manager()
    plans = [api.plan("unroll", overrides={"units": 8 + i}, variants=["tf1_static"]) for i in range(5)]
    job = mgr.submit(plans[0], owner="visitor-0", expected_s=90.0)
    try:
        for i in range(1, 5):
            with pytest.raises(RnnlabError) as refused:
                mgr.submit(plans[i], owner=f"visitor-{i}")
            said = str(refused.value)
            assert said.startswith("another visitor's run is measuring, and this demo runs one heavy process at a "
                                   "time (at most 1 at once); try again in about "), said
            assert "cancel" not in said and said.endswith(" s"), said
        assert [j.key for j in mgr.active()] == [job.key]
        job.started -= 200  # past its estimate
        assert jobs.try_again(job) == "try again in a minute or two (it is taking longer than estimated)"
        job.expected_s = None
        assert jobs.try_again(job) == "try again in a few minutes"
    finally:
        release.set()


def test_a_failed_conversion_frees_its_slot():
    mgr, _ = _blocking_manager()
    with pytest.raises(RnnlabError, match="boom"):
        with mgr.hold("a checkpoint conversion"):
            raise RnnlabError("boom")
    assert not mgr.busy()


@pytest.mark.slow  # waits for its limits
def test_run_limited_kills_past_the_time_and_memory_limits(tmp_path):

    env = dict(os.environ)
    with pytest.raises(RnnlabError, match=r"^the conversion did not finish within 0\.5 s$"):
        runner.run_limited([sys.executable, "-c", "import time; time.sleep(30)"], cwd=str(tmp_path), env=env,
                       timeout_s=0.5, what="the conversion", poll_s=0.05)
    hog = "x = bytearray(400 * 2**20); import time; time.sleep(30)"
    with pytest.raises(RnnlabError, match=r"^the conversion used \d+ MB, over the limit of 100 MB here$"):
        runner.run_limited([sys.executable, "-c", hog], cwd=str(tmp_path), env=env, timeout_s=20, mem_limit_mb=100,
                       what="the conversion", poll_s=0.05)
    code, out, err = runner.run_limited([sys.executable, "-c", "print('hi'); import sys; sys.exit(3)"],
                                    cwd=str(tmp_path), env=env, timeout_s=20, mem_limit_mb=500)
    assert (code, out.strip()) == (3, "hi")
