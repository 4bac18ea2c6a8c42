"""A run's progress line: elapsed time and, from the run's estimate, the time left, live, said as an estimate
("about"), never negative (``ui.jobs.describe``, ``core.format.fmt_left``)."""

from __future__ import annotations

import pytest

from rnnlab.core.format import fmt_left
from rnnlab.engine import api
from rnnlab.engine.jobs import Job
from rnnlab.engine.runner import Progress
from ui import jobs


def _job(expected_s):
    plan = api.plan("unroll", preset="quick", variants=["tf1_static"], available_mb=float("inf"))
    job = Job(key="k", plan=plan, started=100.0, expected_s=expected_s)
    job.progress = Progress("unroll", "tf1_static", "build", 1, 4, 12.0)
    return job


@pytest.mark.parametrize("expected,now,words", [
    (60.0, 112.3, "12.3 s elapsed, about 48 s left"),
    (400.0, 130.0, "30.0 s elapsed, about 6.2 min left"),
    (60.0, 160.0, "60.0 s elapsed, taking longer than estimated"),
    (60.0, 175.0, "75.0 s elapsed, taking longer than estimated"),
])
def test_the_progress_line_says_the_time_left_from_the_estimate(expected, now, words):
    text = jobs.describe(_job(expected), now=now)
    assert text.endswith(words) and "variant 2/4: tf1_static" in text
    assert "-" not in words  # never a negative time


def test_no_estimate_no_time_left_and_it_moves_with_the_clock():
    assert jobs.describe(_job(None), now=110.0).endswith("; 10.0 s elapsed")
    job = _job(60.0)
    assert jobs.describe(job, now=110.0) != jobs.describe(job, now=120.0)  # live: from the clock, not the start
    assert fmt_left(None, 5.0) == "" and fmt_left(10.0, 9.8) == "about 1 s left"
