"""The condition while timed: other processes' cores from CPU counters (injected here), its words, its rules."""

import pytest

from rnnlab.core import condition, rules, stats, wording
from rnnlab.core.condition import Condition
from rnnlab.core.stats import Interval
from tests.factories import record


def test_a_meter_reads_other_processes_cores_and_its_own():
    t = {"busy": 100.0, "own": 5.0, "clock": 10.0}
    m = condition.Meter(busy=lambda: t["busy"], own=lambda: t["own"], clock=lambda: t["clock"])
    t.update(busy=101.9, own=5.95, clock=11.0)  # 1.9 core-seconds busy in 1 s, 0.95 of them this process's
    assert m.read() == {"other": 0.95, "own": 0.95, "wall": 1.0}
    t.update(busy=100.5)  # counters that tick coarsely never read below zero
    assert m.read()["other"] == 0.0


def test_condition_words_say_threads_and_free_cores():
    assert condition.words(Condition(2, 2, 0.1, 1.0)) == "2 threads; 1.9 of 2 cores free while timed"
    assert condition.words(Condition(1, 2, 1.0)) == "1 thread; 1 of 2 cores free while timed"
    assert condition.words(Condition(2, 2, 2.4)) == "2 threads; 0 of 2 cores free while timed"
    assert condition.words(Condition(4, 4, None)) == "4 threads"
    assert condition.words(Condition(2, 2, 0.0, changed=True)).endswith("(the load changed between rounds)")
    assert condition.words(None) == ""
    c = Condition(2, 2, 0.3, 1.4, True)
    assert Condition.of(c.to_json()) == c and Condition.of({"threads": "x"}) is None and Condition.of(None) is None
    assert condition.threads_used(0, 8) == 8 and condition.threads_used(1, 8) == 1


def test_summarize_pools_readings_and_notes_a_change_between_rounds():
    c = condition.summarize(2, 2, [[0.1, 0.2, 0.1], [0.1, 0.1]], [1.0, 1.2], rules.SAME_LOAD)
    assert (c.other, c.own, c.changed) == (0.1, 1.1, False)
    assert condition.summarize(2, 2, [[0.1, 0.1], [1.1, 1.0]], [], rules.SAME_LOAD).changed


def _rec(other, threads=2):
    return record("unroll", "keras", details={"condition": Condition(threads, 2, other).to_json()}, fwd_ms=1.0)


def test_words_of_records_never_join_two_conditions_in_one_figure():
    assert condition.words_of([_rec(0.1), _rec(0.2)]) == "2 threads; 1.9 of 2 cores free while timed"
    assert condition.words_of([_rec(0.1), _rec(1.1)]) == \
        "2 threads; 0.9-1.9 of 2 cores free while timed (measured under different loads)"
    assert condition.words_of([_rec(0.1, 1), _rec(0.1)]) == \
        "1 thread; 1.9 of 2 cores free while timed / 2 threads; 1.9 of 2 cores free while timed"
    assert condition.words_of([record("unroll", "keras", fwd_ms=1.0)]) == ""


@pytest.mark.parametrize("readings,same", [((0.1, 0.4), True), ((0.1, 0.5), False), ((None, 1.5), True),
                                           ((), True)])
def test_same_load_is_one_tolerance(readings, same):
    assert rules.same_load(*readings) is same


def test_an_unsettled_interval_is_too_busy_to_decide_in_every_sentence():
    iv = Interval(1.5, 1.6, 1.7, "paired", 40, "the load changed")
    assert rules.direction(iv) == rules.TOO_BUSY and not rules.decided(rules.direction(iv))
    assert rules.call(iv) == rules.NOISY  # no claim is decided from mixed windows
    phrase = wording.difference(iv)
    assert not phrase.bold and phrase.text() == "too busy to decide (1.60x, 1.50–1.70x)"
    assert phrase.against("B") == "at 1.60x B's time (1.50–1.70x), too busy to decide"
    assert iv.inverse().unsettled == "the load changed"


def test_session_windows_from_rounds_under_different_loads_are_unsettled():
    a = {"fwd_ms": [[2.0] * 6, [2.0] * 6], "fwd_ms@ref": [[1.0] * 6, [1.0] * 6],
         "fwd_ms@other": [[0.0] * 6, [1.0] * 6]}
    b = {"fwd_ms": [[1.0] * 13, [1.0] * 13]}
    iv = stats.session_interval(a, b, "fwd_ms")
    assert iv.unsettled and "0.0, then 1.0" in iv.unsettled
    a["fwd_ms@other"] = [[0.0] * 6, [0.2] * 6]
    assert not stats.session_interval(a, b, "fwd_ms").unsettled
