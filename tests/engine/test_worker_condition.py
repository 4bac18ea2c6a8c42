"""A sequential variant that times no series of its own (training's epochs, padding's, seed003's steps, the checks)
still records the cores other processes took while it ran: the worker meters its whole call. Run in this process
with ``worker.run_task`` (no TensorFlow: ``preload=()``)."""

import pytest
import time

from rnnlab.core import condition
from rnnlab.worker import main as worker


def busy_for(params, variant, ctx):
    end = time.perf_counter() + params["seconds"]
    while time.perf_counter() < end:
        pass
    return {"metrics": {"epoch_s": params["seconds"]}}


def timed_series(params, variant, ctx):
    ctx.series("fwd_ms", lambda: sum(range(20_000)), repeats=5, warmup=1)
    return {"metrics": {"fwd_ms": 1.0}}


def _details(fn: str, **params) -> dict:
    sent = []
    worker.run_task({"kind": "variant", "worker": f"tests.engine.test_worker_condition:{fn}", "params": params,
                     "variant": "v", "preload": ()}, sent.append)
    (result,) = [m for m in sent if m["type"] == "result"]
    return result["details"]


@pytest.mark.slow  # waits on a clock
def test_a_variant_with_its_own_clock_records_the_whole_calls_condition():
    (reading,) = _details("busy_for", seconds=0.3)["readings"]
    assert reading["metric"] == "run" and reading["wall"] >= 0.3
    # it kept a core busy (how much of one depends on what else this machine runs: pytest -n 2 beside it)
    assert 0.0 < reading["own"] <= 1.5 and reading["other"] >= 0.0


def test_a_timed_series_keeps_its_own_reading_and_a_call_too_short_to_read_has_none():
    assert [r["metric"] for r in _details("timed_series")["readings"]] == ["fwd_ms"]  # not the whole call's too
    # 10 ms counter ticks over a call of under MIN_WINDOW_S would read a fraction of a core as whole cores
    assert "readings" not in _details("busy_for", seconds=0.0)
    assert condition.Condition.of({"threads": 2, "cores": 2, "other_cores": 0.0}).free == 2.0


@pytest.mark.slow  # a Python process of its own
def test_a_variant_that_runs_a_program_in_a_subprocess_counts_its_cpu_as_its_own_not_another_processes():
    # seed004_construct runs the seed's script in a child: a quiet machine read "1.1 cores taken by others" before.
    # CPU seconds of a fixed amount of work, not a share of the wall time: the same whatever else the machine runs
    import subprocess
    import sys

    from rnnlab.core.condition import own_cpu_s

    t0 = time.process_time()
    c0 = own_cpu_s()
    done = subprocess.run([sys.executable, "-c", "import time\nt = time.process_time()\n"
                           "while time.process_time() - t < 0.3: pass"], check=True)
    assert done.returncode == 0
    assert own_cpu_s() - c0 >= 0.3  # the child's 0.3 s of CPU (and its start-up) count as this process's own
    assert time.process_time() - t0 < 0.1  # which this process alone, waiting, did not spend
