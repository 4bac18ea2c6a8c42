"""The harness: real spawned workers for crashes, limits and caching; a fake launcher and clock for the logic."""

import pytest

from rnnlab.engine import api
from rnnlab.engine.runner import Cancelled, run_task
from rnnlab.core.store import Store
from tests.factories import ENV, FAKE, use_fakes
from tests.workers import ScriptedWorker



@pytest.fixture
def fake(monkeypatch):
    use_fakes(monkeypatch, FAKE)
    return FAKE


@pytest.mark.slow  # TensorFlow workers or a heavy run
def test_failures_become_error_records_and_the_run_goes_on(fake, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    seen = []
    p = api.plan("fake", variants=["crash", "raise", "unsupported", "exit", "ok_off"])
    recs = api.run(p, store=store, env=ENV, on_progress=seen.append)
    by = {r.variant: r for r in recs}
    assert [r.variant for r in recs] == ["crash", "raise", "unsupported", "exit", "ok_off"]  # reference not returned
    assert by["crash"].error.startswith("worker crashed: killed by signal 11")
    assert by["raise"].error == "ValueError: shapes (3, 4) and (5, 6) are incompatible"
    assert by["unsupported"].error == "bfloat16 is not supported by this variant on CPU"
    assert by["exit"].error.startswith("worker exited with code 3")
    ok = by["ok_off"]
    assert ok.ok and ok.metrics["max_abs_diff"] == pytest.approx(0.5)  # against the reference's outputs
    assert ok.metrics["gflops"] == pytest.approx(2.0)  # 4e6 flops / 2 ms
    assert ok.metrics["roofline_frac"] == pytest.approx(0.02)
    assert ok.metrics["peak_mem_mb"] >= 0
    assert all(r.metrics == {} for r in recs if r.error)
    phases = {(pr.variant, pr.phase) for pr in seen}
    assert ("ok_off", "build") in phases and ("ok_off", "done") in phases and ("crash", "failed") in phases
    # stored, including the reference that was run for the diff
    assert {r.variant for r in store.records("fake")} == {"crash", "raise", "unsupported", "exit", "ok_off", "ok"}

    # Deterministic outcomes are served from the store; a crash is "transient" and would be tried again.
    assert by["crash"].details["transient"] and by["exit"].details["transient"]
    assert not by["raise"].details.get("transient")
    p2 = api.plan("fake", variants=["raise", "unsupported", "ok_off"])
    again = api.run(p2, store=store, env=ENV)
    assert all(r.cached for r in again)
    assert [r.key for r in again] == [by[v].key for v in ("raise", "unsupported", "ok_off")]
    assert again[-1].metrics["max_abs_diff"] == pytest.approx(0.5)


@pytest.mark.slow  # TensorFlow workers or a heavy run
def test_time_limit_and_memory_limit(fake, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    p = api.plan("fake", variants=["sleep"], overrides={"timeout_s": 5})  # the least timeout_s takes
    (r,) = api.run(p, store=store, env=ENV)
    assert r.error == "timed out after 5 s (timeout_s)"
    p = api.plan("fake", variants=["hog"])
    # 300 MB: ten times a fake worker's own ~30 MB, far below the ~2 GB "hog" touches
    (r,) = api.run(p, store=store, env=ENV, mem_limit_mb=300)
    assert r.error.startswith("out of memory: worker used") and "limit of 300 MB" in r.error


class FakeWorker(ScriptedWorker):
    """A scripted worker on an injected clock: each read waits out its timeout there; it never exits by itself."""

    def __init__(self, script, clock):
        super().__init__(script)
        self.clock = clock

    def read(self, timeout):
        self.clock.t += timeout
        return super().read(timeout)

    def poll(self):
        return -9 if self.killed else None


class Clock:
    t = 0.0

    def __call__(self):
        return self.t


def test_run_task_with_injected_clock_and_launcher():
    clock = Clock()
    w = FakeWorker([{"type": "phase", "phase": "build"}], clock)
    phases = []
    msg = run_task({}, launcher=lambda t: w, timeout_s=5, mem_limit_mb=None, on_phase=phases.append, clock=clock,
                   poll_s=1.0)
    assert msg == {"type": "error", "transient": True, "reason": "timed out after 5 s (timeout_s)"} and w.killed
    assert phases == ["build"] and clock.t == pytest.approx(6.0)

    import threading

    ev = threading.Event()
    ev.set()
    with pytest.raises(Cancelled):
        run_task({}, launcher=lambda t: FakeWorker([], Clock()), timeout_s=5, mem_limit_mb=None, cancel=ev,
                 clock=Clock())
    # a worker that exits after its result, as a real one does (one that did not would be waited for: runner.reap)
    done = run_task({}, launcher=lambda t: ScriptedWorker([{"type": "result", "metrics": {}}]), timeout_s=5,
                    mem_limit_mb=None, clock=Clock())
    assert done["type"] == "result"
