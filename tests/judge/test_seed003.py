"""Seed 003's conclusion is decided here, in ``rnnlab.judge.seed003``; the Variable lengths page only words it."""

from __future__ import annotations

from rnnlab.core import rules
from rnnlab.judge import claims
from rnnlab.judge import seed003 as J


def test_conclusion_asserts_every_claim():
    assert J.conclusion(["holds", "holds"]) == "holds"
    assert J.conclusion(["holds", "too noisy to call"]) == "too noisy to call"
    assert J.conclusion(["depends", "too noisy to call"]) == "depends"
    assert J.conclusion(["not measurable here", "does not hold"]) == "not measurable here"
    assert J.conclusion([]) == "not measured"
    assert {J.conclusion([a, b]) for a in rules.STATUSES for b in rules.STATUSES} <= set(rules.STATUSES)


def test_no_records_is_not_measured_and_quotes_no_numbers():
    j = J.judge([], None, None)
    assert j.status == "not measured" and not j.judgeable
    assert [v.status for v in j.verdicts] == [claims.verdict(cid, []).status for cid in J.CLAIM_IDS]
    assert j.steady is None and j.build is None and j.slow_start is None
