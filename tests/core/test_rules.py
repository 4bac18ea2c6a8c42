"""``core.rules``: the three-way call, the one side an interval rules out, and which statements contradict."""

import random

from rnnlab.core import rules
from rnnlab.core.stats import Interval


def iv(lo, hi):
    return Interval(lo, (lo * hi) ** 0.5, hi, "paired", 3)


def test_a_bound_is_said_only_where_the_call_cannot_be():
    assert rules.bound(iv(0.5, 0.8)) == rules.direction(iv(0.5, 0.8)) == rules.LOWER
    assert rules.bound(iv(1.2, 1.5)) == rules.HIGHER
    assert rules.bound(iv(0.95, 1.05)) == rules.SAME
    assert rules.bound(iv(1.01, 1.12)) == rules.NOT_LOWER  # slower perhaps, faster by the margin never
    assert rules.bound(iv(0.88, 0.99)) == rules.NOT_HIGHER
    assert rules.bound(iv(0.85, 1.2)) == rules.NOISY  # across both sides: nothing ruled out
    busy = Interval(1.01, 1.05, 1.12, "paired", 3, unsettled="timed under different loads")
    assert rules.bound(busy) == rules.direction(busy) == rules.TOO_BUSY
    for s in (rules.NOT_LOWER, rules.NOT_HIGHER):  # a bound is never a call: the protocol keeps timing
        assert rules.bounded(s) and rules.answered(s) and not rules.decided(s)
    assert not rules.answered(rules.NOISY) and not rules.answered(rules.TOO_BUSY)


def test_every_statement_holds_the_ratio_its_interval_holds():
    """Whatever the interval, the true ratio anywhere inside it lies in a zone its statement allows."""
    low, high = 1 - rules.MARGIN, 1 / (1 - rules.MARGIN)
    rng = random.Random(3)
    for _ in range(2000):
        a, b = sorted(10 ** rng.uniform(-0.2, 0.2) for _ in range(2))
        said = rules.bound(iv(a, b))
        for x in (a, (a + b) / 2, b):
            zone = rules.LOWER if x <= low else rules.HIGHER if x >= high else rules.SAME
            assert not rules.excludes(said, {zone}), (a, b, said, x)


def test_contradictions_are_statements_that_share_no_zone():
    assert rules.contradict(rules.LOWER, rules.HIGHER) and rules.contradict(rules.SAME, rules.HIGHER)
    assert rules.contradict(rules.NOT_LOWER, rules.LOWER) and rules.contradict(rules.NOT_HIGHER, rules.HIGHER)
    assert not rules.contradict(rules.NOT_LOWER, rules.SAME) and not rules.contradict(rules.NOT_LOWER, rules.HIGHER)
    assert not rules.contradict(rules.NOT_LOWER, rules.NOT_HIGHER)  # both allow about the same
    assert not rules.contradict(rules.NOISY, rules.LOWER) and not rules.contradict(rules.TOO_BUSY, rules.HIGHER)
