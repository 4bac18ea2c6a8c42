"""Builds measured honestly: first_build_s is the cold build, build_s the median of BUILD_REPEATS warm ones.

The timings are pinned without relying on real ones: each build_forward advances a fake clock by a scripted number of
seconds on top of the real time it took, so the median of the warm builds is known up to the real build time.
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import time  # noqa: E402
import weakref  # noqa: E402

import pytest  # noqa: E402

from rnnlab.core.params import PARAMS  # noqa: E402
from rnnlab.worker.context import WorkerContext  # noqa: E402
from rnnlab.tf import measure  # noqa: E402

pytestmark = pytest.mark.slow  # TensorFlow

SIZES = dict(cell="rnn", layers=1, batch=3, seq_len=5, units=4, input_dim=3, repeats=2, warmup=0,
             lengths="full", time_major=False)
# Scripted seconds added to each build: the cold one, then the warm ones (median 20; not the first warm one, 50,
# the last, 10, nor the mean, 26.7).
EXTRA_S = [100.0, 50.0, 20.0, 10.0]
REAL_SLACK_S = 5.0  # far more than a real build of this size takes


def _params():
    p = {k: v.default for k, v in PARAMS.items()}
    p.update(SIZES)
    return p


class _ScriptedBuilds:
    """A clock = perf_counter + offset; build_forward adds the next scripted amount to the offset and checks that
    the previous build's graph was released before it started."""

    def __init__(self, monkeypatch, extra):
        from rnnlab.tf.tf1 import TF1Runner

        self.extra, self.offset, self.graphs, self.started_on = list(extra), 0.0, [], None
        orig_build, orig_start = TF1Runner.build_forward, TF1Runner.start

        def build_forward(runner):
            # measure.time_builds dropped the previous build and collected it: no graph of an earlier build lives
            assert all(g() is None for g in self.graphs), "an earlier forward graph is alive as the next build begins"
            orig_build(runner)
            self.graphs.append(weakref.ref(runner.fg["graph"]))
            self.offset += self.extra[len(self.graphs) - 1]

        def start(runner):
            self.started_on = runner.fg["graph"]
            orig_start(runner)

        monkeypatch.setattr(TF1Runner, "build_forward", build_forward)
        monkeypatch.setattr(TF1Runner, "start", start)

    def clock(self):
        return time.perf_counter() + self.offset


@pytest.mark.parametrize("variant", ["tf1_static", "tf1_dynamic"])
def test_build_s_is_the_median_of_the_warm_builds(variant, monkeypatch):
    assert measure.BUILD_REPEATS == 3 and len(EXTRA_S) == 1 + measure.BUILD_REPEATS
    script = _ScriptedBuilds(monkeypatch, EXTRA_S)
    ctx = WorkerContext(clock=script.clock)
    res = measure.run_variant(_params(), variant, ctx)
    m = res["metrics"]

    assert len(script.graphs) == 1 + measure.BUILD_REPEATS  # one cold build, BUILD_REPEATS warm ones
    assert script.started_on is not None and script.graphs[-1]() is script.started_on  # runs on the last build
    assert all(m[k] > 0 for k in ("build_s", "first_build_s", "train_build_s")), m
    assert 100.0 <= m["first_build_s"] < 100.0 + REAL_SLACK_S
    assert 20.0 <= m["build_s"] < 20.0 + REAL_SLACK_S  # the median of the warm builds
    assert m["train_build_s"] < REAL_SLACK_S  # untouched: one real build of the train graph
    assert ctx.phases == ["build", "first_call", "forward", "train"]
    assert m["graph_nodes"] > 0 and m["ref_abs_diff"] <= 1e-5


def test_build_repeats_constant_is_read_at_call_time(monkeypatch):
    """BUILD_REPEATS=4: median of 4 warm builds is the mean of the middle two (not the last one, not the first)."""
    monkeypatch.setattr(measure, "BUILD_REPEATS", 4)
    script = _ScriptedBuilds(monkeypatch, [100.0, 40.0, 10.0, 30.0, 1.0])  # warm sorted: 1, 10, 30, 40 -> 20
    res = measure.run_variant(_params(), "tf1_dynamic", WorkerContext(clock=script.clock))
    assert len(script.graphs) == 5
    assert 20.0 <= res["metrics"]["build_s"] < 20.0 + REAL_SLACK_S
    assert 100.0 <= res["metrics"]["first_build_s"] < 100.0 + REAL_SLACK_S


def test_time_builds_without_tensorflow():
    """The protocol itself: drop before every warm build, the median of the warm ones, none: the cold one."""
    calls, t = [], [0.0]
    durations = iter([7.0, 3.0, 9.0, 1.0])

    class Runner:
        def build_forward(self):
            calls.append("build")
            t[0] += next(durations)

        def drop_forward(self):
            calls.append("drop")

    from rnnlab.worker.context import WorkerContext

    ctx = WorkerContext(clock=lambda: t[0])
    assert measure.time_builds(Runner(), ctx, 3) == (7.0, 3.0)
    assert calls == ["build", "drop", "build", "drop", "build", "drop", "build"]
    calls.clear()
    durations = iter([2.0])
    assert measure.time_builds(Runner(), ctx, 0) == (2.0, 2.0)
    assert calls == ["build"]
