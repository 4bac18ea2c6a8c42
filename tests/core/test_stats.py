import pytest

from rnnlab.core.stats import Timing, time_once, time_steps


class FakeClock:
    """Each call of the timed function advances time by the next duration; the clock never really runs."""

    def __init__(self, durations_s):
        self.t = 0.0
        self.durations = list(durations_s)

    def __call__(self):
        return self.t

    def step(self):
        self.t += self.durations.pop(0)


def test_time_steps_skips_warmup_and_reports_median_and_quartiles():
    clock = FakeClock([9.0, 9.0] + [0.001, 0.002, 0.003, 0.004, 0.100])
    t = time_steps(clock.step, repeats=5, warmup=2, clock=clock)
    assert t.n == 5
    assert t.median_ms == pytest.approx(3.0)
    assert t.p25_ms == pytest.approx(2.0)
    assert t.p75_ms == pytest.approx(4.0)  # the 100 ms outlier moves neither the median nor p75 much


def test_single_sample_and_empty():
    assert Timing.of([5.0]) == Timing(5.0, 5.0, 5.0, 1)
    with pytest.raises(ValueError):
        Timing.of([])


def test_time_once_returns_seconds_and_value():
    clock = FakeClock([1.25])
    dt, out = time_once(lambda: (clock.step(), "x")[1], clock=clock)
    assert dt == pytest.approx(1.25) and out == "x"


def test_candidate_interval_rules():
    from rnnlab.core.stats import prediction, quartile_union

    a = [{"t": 2.0, "t_p25": 1.9, "t_p75": 2.2}, {"t": 2.2}, {"t": 1.8}]
    b = [{"t": 1.0, "t_p25": 0.95, "t_p75": 1.1}, {"t": 1.0}, {"t": 1.0}]
    lo, hi = quartile_union(a, b, "t")
    assert lo == pytest.approx(1.9 / 1.1) and hi == pytest.approx(2.2 / 0.95)  # round 1's quartiles widen both ends
    lo, hi = prediction(a, b, "t")
    assert lo < 1.8 and hi > 2.2 and lo * hi == pytest.approx((2.0 * 2.2 * 1.8) ** (2 / 3))  # symmetric in logs
    assert prediction(a[:1], b[:1], "t") is None  # one round: no spread to predict from
    assert prediction([{"t": 1.0}] * 3, [{"t": 1.0}] * 3, "t") == (1.0, 1.0)
    assert quartile_union([{"x": 1.0}], [{"x": 1.0}], "t") is None


def test_session_intervals_pair_through_the_reference_brackets():
    """Two arms of one interleaved session compare cycle by cycle through their reference brackets; an arm against
    the reference uses its own brackets; the reference against an arm is the inverse."""
    from rnnlab.core.stats import session_interval

    load = [[1.0, 1.5, 1.0, 2.0, 1.2, 1.1]]  # the machine's load at each cycle: it cancels out
    a = {"fwd_ms": [[2.0 * x for x in load[0]]], "fwd_ms@ref": [[1.0 * x for x in load[0]]]}
    b = {"fwd_ms": [[3.0 * x for x in load[0]]], "fwd_ms@ref": [[1.0 * x for x in load[0]]]}
    ref = {"fwd_ms": [[1.0] * 13]}  # its own windows: not aligned with anything
    ab = session_interval(a, b, "fwd_ms")
    import math

    from rnnlab.core import stats as S

    floor = 1.96 * math.hypot(S.PROCESS_SD, S.DRIFT_SD)  # one round: what it cannot show of processes and runs
    assert ab.how == "paired" and ab.mid == pytest.approx(2 / 3)
    assert math.log(ab.hi / ab.mid) == pytest.approx(floor) and math.log(ab.mid / ab.lo) == pytest.approx(floor)
    assert session_interval(a, ref, "fwd_ms").mid == pytest.approx(2.0)
    assert session_interval(ref, b, "fwd_ms").mid == pytest.approx(1 / 3)
    assert session_interval(ref, ref, "build_s") is None
