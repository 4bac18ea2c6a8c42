"""Verdicts, findings and the recommendation from records with ``rounds`` (hand-made, no TensorFlow): every ratio
judged on its interval (``rules.call(stats.ratio_interval(...))``), "too noisy to call" when the interval reaches
across the margin, the intervals quoted in the words."""

import functools
import math
import statistics

import pytest

from rnnlab.core import format as fmt, stats
from rnnlab.core.store import Store
from rnnlab.experiments import seeds
from rnnlab.judge import claims, findings
from rnnlab.judge.claims import verdict
from rnnlab.judge.recommend import recommend
from rnnlab.present import claims as CV
from rnnlab.present import varlen as vv
from tests.factories import record


rec = functools.partial(record, day="2025-02-01")


def pi95(ratios):
    """The 95% prediction interval of three per-round ratios, worked out here by hand: the log ratios' mean
    +- t(0.975, 2 df) * s * sqrt(2 / 3)."""
    logs = [math.log(r) for r in ratios]
    mean, s = sum(logs) / 3, statistics.stdev(logs)
    return math.exp(mean - 4.303 * s * math.sqrt(2 / 3)), math.exp(mean + 4.303 * s * math.sqrt(2 / 3))


def unroll(variant, fwd, train):
    """An unroll record at seed 000's configuration, one round per (fwd, train) value."""
    return rec("unroll", variant, seeds.SEED_000, [{"fwd_ms": f, "train_ms": t} for f, t in zip(fwd, train)])


# -- claims --------------------------------------------------------------------------------------------------------
def test_a_speed_claim_is_judged_on_the_interval_across_rounds():
    static = unroll("tf1_static", [100.0, 100.0, 100.0], [300.0, 300.0, 300.0])
    clear = unroll("tf1_dynamic", [78.0, 80.0, 82.0], [240.0, 245.0, 250.0])  # 95% prediction 0.73-0.87: past 0.90
    v = verdict("s000_cpu_speed", [static, clear])
    assert v.status == "holds", v.measured
    assert "dynamic_rnn 1.22x faster than static_rnn (1.14–1.32x) across 3 rounds" in v.measured
    # the same median, but the rounds 0.70-0.95: the interval (0.47-1.39) reaches across 0.90
    wide = unroll("tf1_dynamic", [70.0, 80.0, 95.0], [240.0, 245.0, 250.0])
    v = verdict("s000_cpu_speed", [static, wide])
    assert v.status == "too noisy to call", v.measured
    assert "dynamic_rnn at 0.80x static_rnn's time (0.47–1.39x), too noisy to call across 3 rounds" in v.measured
    assert "It holds for the train step; the forward is too noisy to call." in v.why
    # clearly slower in one measure, too noisy in the other: the claim asserts both, so the decided loss refutes it
    # (judge.claim.status_of; it read "too noisy to call" while its forward step was decided against it)
    slow = unroll("tf1_dynamic", [120.0, 125.0, 130.0], [240.0, 290.0, 310.0])
    assert verdict("s000_cpu_speed", [static, slow]).status == "does not hold"
    # a win in one measure and a loss in the other decide "depends" whatever the noise
    split = unroll("tf1_dynamic", [120.0, 125.0, 130.0], [200.0, 210.0, 220.0])
    assert verdict("s000_cpu_speed", [static, split]).status == "depends"


def test_not_slower_is_too_noisy_when_the_interval_straddles_the_allowance():
    static = unroll("tf1_static", [100.0, 100.0, 100.0], [100.0, 100.0, 100.0])
    dyn = unroll("tf1_dynamic", [95.0, 105.0, 125.0], [95.0, 100.0, 105.0])  # forward 0.66-1.75 reaches past 1.10
    v = verdict("s001_dynamic_not_slower", [static, dyn])
    assert v.status == "too noisy to call" and "at 1.05x static_rnn's time (0.66–1.75x), too noisy to call across 3 rounds" in v.measured


def test_one_round_quartiles_still_decide_when_they_are_clear():
    def q(v, x, lo, hi, y, ylo, yhi):
        return rec("unroll", v, seeds.SEED_000, fwd_ms=x, fwd_ms_p25=lo, fwd_ms_p75=hi, train_ms=y,
                   train_ms_p25=ylo, train_ms_p75=yhi)

    recs = [q("tf1_static", 100.0, 98.0, 102.0, 300.0, 295.0, 305.0),
            q("tf1_dynamic", 80.0, 79.0, 81.0, 240.0, 238.0, 242.0)]
    v = verdict("s000_cpu_speed", recs)
    assert v.status == "holds" and "from the timed steps' quartiles" in v.measured


def test_seed003_with_noisy_rounds_is_too_noisy_on_the_page_and_in_the_table():
    def s3(variant, rates, builds):
        return rec("seed003", variant, seeds.SEED_003,
                   [{"steps_per_s": r, "build_s": b, "cell_steps_run": 20.0, "loop_steps_max": 20.0}
                    for r, b in zip(rates, builds)])

    recs = [s3("static", [10.0, 14.0, 18.0], [30.0, 30.0, 30.0]), s3("dynamic", [12.0, 12.0, 12.0], [1.0, 1.0, 1.0])]
    table = {c.id: v for c, v in claims.evaluate(recs)}
    assert table["s003_static_runs_faster"].status == "too noisy to call"
    assert table["s003_static_builds_slower"].status == "holds"
    v = vv.seed003_verdict(recs)
    assert v.status == "too noisy to call" == vv.conclusion(["holds", "too noisy to call"])
    assert ("whether static_rnn runs faster here is too noisy to call: it runs at 1.17x dynamic_rnn's rate "
            "(0.40–3.20x), too noisy to call") in v.headline
    assert "static/dynamic = 1.17x (0.40–3.20)" in v.text


# -- findings and the recommendation ----------------------------------------------------------------------------------
def test_findings_quote_the_interval_and_carry_its_bounds():
    static = unroll("tf1_static", [10.0, 10.0, 10.0], [30.0, 30.0, 30.0])
    dyn = unroll("tf1_dynamic", [15.2, 15.9, 16.6], [30.0, 30.0, 30.0])
    (f,) = findings.pair_finding([static, dyn], "tf1_static", "tf1_dynamic", "static_rnn", "dynamic_rnn")
    assert "runs a forward step 1.59x faster than dynamic_rnn (1.36–1.85x)" in f.headline
    assert f.numbers["fwd_ratio"] == pytest.approx(10 / 15.9)
    lo, hi = pi95([10 / 15.2, 10 / 15.9, 10 / 16.6])
    assert f.numbers["fwd_ratio_lo"] == pytest.approx(lo) and f.numbers["fwd_ratio_hi"] == pytest.approx(hi)
    assert f.numbers["train_ratio_lo"] == f.numbers["train_ratio_hi"] == pytest.approx(1.0)
    assert "training step about as fast as dynamic_rnn (1.00–1.00x)" in f.detail
    assert findings.compare(stats.Interval(1.9, 2.0, 2.1, "rounds", 3), "B") == "2.00x slower than B (1.90–2.10x)"
    assert fmt.fmt_ratio_cell(None) == "–" and fmt.fmt_span(stats.Interval(1, 1, 1, "none", 1)) == ""


def test_the_recommendation_margin_has_its_interval_and_a_tie_when_it_includes_equality():
    def full(v, trains):
        return rec("unroll", v, {"cell": "rnn", "seq_len": 20},
                   [{"build_s": 0.5, "first_call_s": 0.1, "fwd_ms": t / 3, "train_build_s": 0.5,
                     "train_first_call_s": 0.1, "train_ms": t, "peak_mem_mb": 100.0} for t in trains])

    clear = recommend([full("tf1_static", [10.0, 10.0, 10.0]), full("keras", [14.0, 15.0, 16.0])])
    st = clear.picks["steady_train"]
    assert st.variant == "tf1_static" and not st.tie
    lo, hi = pi95([1.4, 1.5, 1.6])
    assert st.interval.lo == pytest.approx(lo) and st.margin_hi == pytest.approx(hi - 1)
    assert "tf1_static is 1.50x faster than keras (1.18–1.89x) across 3 rounds" in st.text
    assert CV.ahead_text(st) == "1.50x faster than keras (1.18–1.89x)"
    tied = recommend([full("tf1_static", [10.0, 10.0, 10.0]), full("keras", [9.5, 12.0, 13.0])])
    st = tied.picks["steady_train"]
    assert st.margin == pytest.approx(0.2) and st.tie and "too noisy to call" in st.text
    assert CV.ahead_text(st).startswith("at 0.83x keras's time (")


# -- the claims page's views and the CLI ------------------------------------------------------------------------------
def test_too_noisy_to_call_is_a_status_of_the_page_and_the_cli():
    from rnnlab.commands import claims as claims_cmd

    static = unroll("tf1_static", [100.0, 100.0, 100.0], [300.0, 300.0, 300.0])
    wide = unroll("tf1_dynamic", [70.0, 80.0, 95.0], [240.0, 245.0, 250.0])
    results = CV.evaluate([static, wide])
    n = CV.counts(results)
    assert "too noisy to call" in CV.STATUSES and n["too noisy to call"] >= 1
    assert CV.STATUS_HELP["too noisy to call"]
    assert CV.parse_status("too-noisy-to-call") == CV.parse_status("too noisy to call") == "too noisy to call"
    only = CV.select(results, statuses=["too noisy to call"])
    assert only and all(v.status == "too noisy to call" for _, v in only)
    assert "too noisy to call: " in CV.claims_view(results, records=[static, wide]).caption
    Store().put_many([static, wide])
    text = claims_cmd.run(status="too noisy to call")
    assert "with verdict too noisy to call" in text and "too noisy to call    seed 000 §3.2" in text
