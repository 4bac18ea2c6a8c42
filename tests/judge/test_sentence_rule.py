"""The one sentence rule (``core.wording``): generated intervals fed to every sentence builder; a sentence's
direction, "about as fast", a side ruled out ("about as fast as B or slower") and bold must agree with
``rules.bound`` on its interval (bold only where ``rules.direction`` decides), and no ratio is ever said as a
percentage."""

import functools
import random
import re

import pytest

from rnnlab.core import format as fmt
from rnnlab.core import rules, wording
from rnnlab.core.stats import Interval
from rnnlab.experiments import seeds
from rnnlab.judge import claims, findings
from rnnlab.judge.recommend import recommend
from rnnlab.present import claims as CV
from rnnlab.present import varlen as vv
from tests.factories import record


rec = functools.partial(record, day="2025-02-01")

DIRECTION = re.compile(r"(\d[\d,.]*)x (faster|slower|smaller|larger|less memory|more memory)")
SAME = re.compile(r"about (as fast|the same)")
BOUND = re.compile(r"about (?:as fast|the same(?: size| memory)?)(?: as (?:(?!,|;| \((?:\d|at )).)*?)? or "
                   r"(slower|faster|larger|smaller|more|less)\b")
PERCENT = re.compile(r"\d+(?:\.\d+)?% (?:\([^)]*\) )?(?:faster|slower|lower|higher|smaller|larger|ahead|less|more)")


def intervals(n=160, seed=7):
    """Intervals of every kind: clearly below, clearly above, inside the margin, straddling it, huge ratios."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        mid = 10 ** rng.uniform(-1.6, 1.6) if rng.random() < 0.5 else 10 ** rng.uniform(-0.08, 0.08)
        lo, hi = mid / (1 + abs(rng.gauss(0, 0.15))), mid * (1 + abs(rng.gauss(0, 0.15)))
        out.append(Interval(lo, mid, hi, rng.choice(["paired", "rounds", "quartiles"]), 3))
    return out


def said(text: str) -> set[str]:
    """What a sentence claims about its comparisons: DIRECTION (a ratio with a direction), SAME, a bound, NOISY."""
    got = set()
    if BOUND.search(text):
        got.add("bound")
        text = BOUND.sub("", text)
    if DIRECTION.search(text):
        got.add("direction")
    if SAME.search(text):
        got.add(rules.SAME)
    if rules.NOISY in text:
        got.add(rules.NOISY)
    return got


def expected(iv: Interval) -> set[str]:
    status = rules.bound(iv)
    return {"direction"} if status in (rules.LOWER, rules.HIGHER) else {"bound"} if rules.bounded(status) else {status}


def check(text: str, iv: Interval, where: str) -> None:
    assert said(text) == expected(iv), f"{where}: {iv} -> {text!r}"
    for m in DIRECTION.finditer(text):  # the number said is the ratio or its reciprocal, never anything else
        assert m.group(1) in (fmt.fmt_ratio(iv.mid)[:-1], fmt.fmt_ratio(1 / iv.mid)[:-1]), f"{where}: {text!r}"
    for bold in re.findall(r"\*\*([^*]+)\*\*", text):  # bold only on a decided phrase
        assert rules.decided(rules.direction(iv)) and (DIRECTION.search(bold) or SAME.search(bold)), text
    assert not PERCENT.search(text), f"{where}: a ratio as a percentage: {text!r}"


@pytest.fixture
def fixed(monkeypatch):
    """Every builder's interval (``findings.interval``, which the claims' judges call too) is the one under test."""
    box = {}
    monkeypatch.setattr(findings, "interval", lambda a, b, m: box["iv"])
    return box


def test_wording_itself():
    for iv in intervals():
        for kind in wording.KINDS:
            p = wording.difference(iv, kind=kind)
            check(p.text(), iv, "text")
            check(p.against("B"), iv, "against")
            check(p.text(md=True), iv, "md")
            assert p.bold == (rules.direction(iv) != rules.NOISY)
            assert p.status == rules.bound(iv) and p.bounded == rules.bounded(rules.bound(iv))
            for other in ("B", "RNN(cell)", "the default layer"):  # a name with brackets or words in it
                assert wording.bold(p.against(other)).count("**") == (2 if p.bold else 0), p.against(other)
                check(wording.bold(p.against(other) + " and " + p.against(other)), iv, "bold, twice")


def test_findings_headlines(fixed):
    a = rec("unroll", "tf1_static", seeds.SEED_000, fwd_ms=10.0, train_ms=20.0, build_s=1.0)
    b = rec("unroll", "tf1_dynamic", seeds.SEED_000, fwd_ms=15.0, train_ms=30.0, build_s=0.5)
    x = rec("unroll", "tf1_dynamic+xla", seeds.SEED_000, fwd_ms=15.0, train_ms=30.0)
    w = rec("unroll", "tf2_while", seeds.SEED_000, fwd_ms=15.0, train_ms=40.0)
    for iv in intervals(60):
        fixed["iv"] = iv
        (f,) = findings.pair_finding([a, b], "tf1_static", "tf1_dynamic", "static_rnn", "dynamic_rnn")
        check(f.headline, iv, "pair headline")
        check(wording.bold(f.headline), iv, "pair headline, bold")
        (g,) = findings.xla([b, x])
        check(g.headline, iv, "xla")
        (h,) = findings.fastest([a, b, w])
        check(h.headline.split(": ", 1)[1], iv, "fastest")
        for one in (f, g, h):  # the call a finding carries is its interval's, the one its words say
            assert one.sentence.status == rules.bound(iv), (iv, one.headline)
            assert one.headline == f"{one.sentence.where}, {one.sentence.body}"


def test_claims_measured(fixed):
    static = rec("unroll", "tf1_static", seeds.SEED_000, fwd_ms=10.0, train_ms=20.0)
    dyn = rec("unroll", "tf1_dynamic", seeds.SEED_000, fwd_ms=12.0, train_ms=24.0)
    for iv in intervals(60):
        fixed["iv"] = iv
        v = claims.verdict("s000_cpu_speed", [static, dyn])
        for part in v.measured.split("; "):
            check(part, iv, "claims measured")


def test_seed003_verdict_and_seed001_choice(fixed):
    s3 = [rec("seed003", "static", seeds.SEED_003, steps_per_s=10.0, build_s=5.0, cell_steps_run=20.0,
              loop_steps_max=20.0),
          rec("seed003", "dynamic", seeds.SEED_003, steps_per_s=12.0, build_s=1.0, cell_steps_run=20.0,
              loop_steps_max=20.0)]
    for iv in intervals(60):
        fixed["iv"] = iv
        head = vv.seed003_verdict(s3).headline
        for part in head.split(": ", 1)[1].split(", and "):
            check(part.split(": it ", 1)[1], iv, "seed 003 verdict")


def test_recommendation_and_ahead_text():
    def full(v, trains):
        return rec("unroll", v, {"cell": "rnn", "seq_len": 20},
                   [{"build_s": 0.5, "first_call_s": 0.1, "fwd_ms": t / 3, "train_build_s": 0.5,
                     "train_first_call_s": 0.1, "train_ms": t, "peak_mem_mb": 100.0} for t in trains])
    rng = random.Random(3)
    for _ in range(40):
        base = [10.0, 10.0, 10.0]
        other = [x * rng.uniform(0.95, 3.0) for x in base]
        pick = recommend([full("tf1_static", base), full("keras", other)]).picks["steady_train"]
        iv = pick.interval.inverse() if pick.variant == "tf1_static" else pick.interval
        check(CV.ahead_text(pick), iv, "ahead")
        assert pick.tie == (rules.direction(iv) != rules.LOWER)


@pytest.mark.slow  # every page's view over every bundled record
def test_no_page_says_a_ratio_as_a_percentage():
    """Every page's view of the bundled results, every sentence: no "83% faster"."""
    from rnnlab.core import baseline
    from rnnlab.present import deck

    from pathlib import Path

    records = list(baseline.load(Path(__file__).resolve().parents[2] / "data" / "baseline"))
    assert records
    for page in ("unrolling", "varlen?tab=seed003", "varlen?tab=cost", "pitfalls", "migrate", "claims", "overview"):
        rep = deck.page_view(page, records)
        text = " ".join([*(t.text for t in rep.takeaways),
                         *(c for t in rep.tables for row in t.rows for c in row if isinstance(c, str)),
                         *(t.caption for t in rep.tables)])
        for c in claims.CLAIMS:  # the seeds' own words, quoted: "dynamic ~30% less" is theirs
            text = text.replace(c.text, "")
        assert not PERCENT.search(text), (page, PERCENT.search(text).group(0))
