"""The app's pure helpers: findings from records, the URL of a view, what is stored for a configuration."""

import hashlib

import pytest

from rnnlab.core import envinfo, urlstate
from rnnlab import experiments
from rnnlab.judge import findings, select
from rnnlab.core.stats import Interval
from tests.factories import SEED, TEST_CPU_ENV, record

ENV = TEST_CPU_ENV


def rec(variant, *, source="local", env=None, when="2026-01-01T00:00:00Z", error=None, **metrics):
    params = experiments.get("unroll").params.fill({**SEED, **metrics.pop("params", {})})
    params["device"] = "cpu"
    key = hashlib.sha256(f"{variant}{sorted(params.items())}{source}{when}".encode()).hexdigest()
    return record("unroll", variant, params, env=env or ENV, key=key, created_at=when, error=error, source=source,
                  **metrics)


def pair(static_build=6.5, dyn_build=1.0, static_fwd=10.0, dyn_fwd=15.0, **kw):
    return [rec("tf1_static", build_s=static_build, fwd_ms=static_fwd, train_ms=20.0, graph_nodes=1500.0, **kw),
            rec("tf1_dynamic", build_s=dyn_build, fwd_ms=dyn_fwd, train_ms=30.0, graph_nodes=100.0, **kw)]


# -- findings --------------------------------------------------------------------------------------------------------
def test_static_vs_dynamic_headline_quotes_the_ratios():
    (f,) = findings.pair_finding(pair(), "tf1_static", "tf1_dynamic", "static_rnn", "dynamic_rnn")
    assert f.headline == ("On this CPU, static_rnn builds 6.50x slower than dynamic_rnn (6.50–6.50x) and runs a "
                          "forward step 1.50x faster (1.50–1.50x) at 100 steps.")  # the other side named once where each call is decided
    assert f.numbers["build_ratio"] == pytest.approx(6.5)
    assert f.numbers["fwd_ratio"] == pytest.approx(10 / 15)
    assert "training step 1.50x faster than dynamic_rnn" in f.detail and "graph 1,500 vs 100 nodes" in f.detail
    assert "measured here" in f.detail
    assert f.page == "unrolling"
    assert f.query["variants"] == "tf1_static,tf1_dynamic" and f.query["layers"] == "3" and f.query["ref"] == \
        "tf1_dynamic"


def point(r):
    """A ratio two rounds agree on exactly: an interval of no width, which decides (one with no spread known, "none",
    decides nothing: see test_a_ratio_without_an_interval_is_never_called)."""
    return Interval(r, r, r, "rounds", 2)


def test_wording_of_faster_slower_and_equal():
    assert findings.compare(point(2.0), "B") == "2.00x slower than B (2.00–2.00x)"
    assert findings.compare(point(0.5), "B") == "2.00x faster than B (2.00–2.00x)"
    assert findings.compare(point(1.02), "B") == "about as fast as B (1.02–1.02x)"
    assert findings.compare(Interval(0.6, 1.05, 1.7, "rounds", 3), "B") == \
        "at 1.05x B's time (0.60–1.70x), too noisy to call"


def test_about_as_fast_is_the_judging_margin():
    from rnnlab.core import rules

    inside, outside = 1 + rules.MARGIN * 0.8, 1 + rules.MARGIN * 1.2
    assert findings.compare(point(inside), "B").startswith("about as fast as B (")
    assert findings.compare(point(1 / inside), "B").startswith("about as fast as B (")
    assert findings.compare(point(outside), "B").startswith(f"{outside:.2f}x slower than B (")
    (f,) = findings.pair_finding(pair(static_fwd=15.5), "tf1_static", "tf1_dynamic", "static_rnn", "dynamic_rnn")
    assert "runs a forward step about as fast as dynamic_rnn" in f.headline


def test_every_card_quotes_the_seed_configuration_not_the_newest_run():
    newer = [r.with_(params={**r.params, "units": 64}, created_at="2026-06-01T00:00:00Z") for r in
             pair(static_build=9.0) + [rec("tf2_while", fwd_ms=20.0, train_ms=40.0),
                                        rec("tf2_while+xla", fwd_ms=10.0, train_ms=20.0)]]
    recs = pair() + [rec("tf2_while", fwd_ms=20.0, train_ms=40.0), rec("tf2_while+xla", fwd_ms=5.0, train_ms=10.0)]
    found = [f for _, fs in findings.answer(newer + recs) for f in fs]
    assert found and all(f.query["units"] == "128" for f in found)
    (x,) = findings.xla(newer + recs)
    assert x.numbers["ratio"] == pytest.approx(0.25)


def test_question_commands_are_plan_commands():
    import shlex

    from rnnlab.engine import api

    for q in findings.QUESTIONS:
        words = shlex.split(q.how)[3:]
        assert words[:2] == ["run", "unroll"]
        args = dict(zip(words[2::2], words[3::2]))
        p = api.plan("unroll", preset=args.get("--preset"),
                     overrides=experiments.get("unroll").params.parse_assignments(
                         [v for k, v in zip(words[2::2], words[3::2]) if k == "--set"]),
                     variants=args["--variants"].split(",") if "--variants" in args else None)
        assert p.command() == q.how  # what the question says to run is what the plan runs


def test_bundled_results_are_labelled_with_their_machine():
    (f,) = findings.pair_finding(pair(source="baseline"), "tf1_static", "tf1_dynamic", "static_rnn", "dynamic_rnn")
    assert f.headline.startswith("On the bundled results' CPU (Test CPU, 2 cores),")
    assert f.source == "baseline"


def test_local_seed_configuration_is_preferred():
    other = [r.with_(params={**r.params, "seq_len": 20}) for r in pair(static_build=9.0, when="2026-06-01T00:00:00Z")]
    base = pair(source="baseline", static_build=3.0)
    (f,) = findings.pair_finding(other + base + pair(), "tf1_static", "tf1_dynamic", "a", "b")
    assert f.numbers["build_ratio"] == pytest.approx(6.5)  # local seed config, not the newer seq_len=20 one


def test_failed_or_missing_variants_give_no_finding():
    recs = [rec("tf1_static", build_s=1.0, fwd_ms=1.0), rec("tf1_dynamic", error="out of memory")]
    assert findings.pair_finding(recs, "tf1_static", "tf1_dynamic", "a", "b") == []
    assert findings.pair_finding([], "tf1_static", "tf1_dynamic", "a", "b") == []


def test_answer_lists_every_question_and_unanswered_ones_empty():
    answered = dict((q.key, fs) for q, fs in findings.answer(pair()))
    assert set(answered) == {q.key for q in findings.QUESTIONS}
    assert answered["tf1_static_vs_dynamic"] and not answered["xla"]
    for q in findings.QUESTIONS:
        assert q.how.startswith("python -m rnnlab run ")


def test_fastest_and_xla():
    recs = pair() + [rec("tf2_while", fwd_ms=20.0, train_ms=40.0), rec("tf2_while+xla", fwd_ms=10.0, train_ms=20.0)]
    (f,) = findings.fastest(recs)
    assert "tf1_static has the shortest median training step (20.0 ms)" in f.headline
    assert "tf1_static is 2.00x faster than tf2_while" in f.headline
    (x,) = findings.xla(recs)
    assert "tf2_while+xla's training step is 2.00x faster than tf2_while" in x.headline


def test_build_scaling_exponent_from_a_sweep():
    recs = []
    for n in (25, 50, 100, 200):
        recs.append(rec("tf1_static", build_s=0.01 * n, fwd_ms=1.0, params={"seq_len": n}))
        recs.append(rec("tf1_dynamic", build_s=0.2, fwd_ms=1.0, params={"seq_len": n}))
    (f,) = findings.build_scaling(recs)
    assert f.numbers["exponent"] == pytest.approx(1.0)
    assert "from 0.250 s at 25 steps to 2.00 s at 200 steps (about seq_len^1.00)" in f.headline
    assert "dynamic_rnn's stays between 0.200 and 0.200 s" in f.headline


# -- urlstate --------------------------------------------------------------------------------------------------------
NAMES = findings.UNROLL_CONTROLS
DEFAULTS = {**experiments.get("unroll").params.defaults(), **SEED}


def decode(q):
    return urlstate.decode(q, experiment=experiments.get("unroll"), names=NAMES, defaults=DEFAULTS,
                           default_variants=["tf1_static", "tf1_dynamic"], extra_keys=["ref"])


def test_url_round_trip():
    values = {**{k: DEFAULTS[k] for k in NAMES}, "cell": "lstm", "units": 64}
    q = urlstate.encode(values, variants=["tf1_dynamic", "keras"], extra={"ref": "keras"})
    d = decode(q)
    assert d.values == values and d.variants == ["tf1_dynamic", "keras"] and d.extra == {"ref": "keras"}
    assert not d.problems and d.present


def test_url_bad_values_fall_back_with_a_reason():
    d = decode({"cell": "transformer", "units": "-3", "batch": "lots", "variants": "tf1_static,bogus", "seq_len": "7"})
    assert d.values["cell"] == "rnn" and d.values["units"] == 128 and d.values["batch"] == 32
    assert d.values["seq_len"] == 7
    assert d.variants == ["tf1_static"]
    text = "\n".join(d.problems)
    assert "cell='transformer'" in text and "units" in text and "batch" in text and "bogus" in text
    assert len(d.problems) == 4


def test_url_without_known_variants_uses_defaults():
    d = decode({"variants": ",,nope"})
    assert d.variants == ["tf1_static", "tf1_dynamic"] and d.problems


# -- lookup ----------------------------------------------------------------------------------------------------------
def test_pick_prefers_this_environment_and_lists_missing():
    fp = envinfo.fingerprint(ENV)
    old_env = {**ENV, "tf": "2.15.0"}
    recs = [rec("tf1_static", fwd_ms=1.0, env=old_env, when="2026-02-01T00:00:00Z"),
            rec("tf1_static", fwd_ms=2.0, when="2026-01-01T00:00:00Z"),
            rec("tf1_dynamic", fwd_ms=3.0, source="baseline")]
    point = experiments.get("unroll").params.fill(SEED)
    sel = select.pick(recs, point, ["tf1_static", "tf1_dynamic", "keras"], fingerprint=fp)
    assert sel.shown["tf1_static"].metrics["fwd_ms"] == 2.0  # this environment beats newer from another TF
    assert sel.shown["tf1_dynamic"].source == "baseline"  # bundled shows, but is still missing here
    assert sel.missing == ("tf1_dynamic", "keras")
    other = experiments.get("unroll").params.fill({**SEED, "units": 7})
    assert select.pick(recs, other, ["tf1_static"], fingerprint=fp).shown == {}


def test_pick_treats_a_transient_failure_as_missing_and_ignores_the_time_limit():
    fp = envinfo.fingerprint(ENV)
    crashed = rec("keras", error="worker killed: out of memory").with_(details={"transient": True})
    point = experiments.get("unroll").params.fill({**SEED, "timeout_s": 60})
    sel = select.pick([crashed, rec("tf1_static", fwd_ms=1.0)], point, ["keras", "tf1_static"], fingerprint=fp)
    assert sel.shown["keras"].error and sel.missing == ("keras",)  # shown with its reason, but run again


def test_sweep_points_one_per_variant_and_length():
    recs = [rec("tf1_static", fwd_ms=float(n), params={"seq_len": n}) for n in (25, 50, 100)]
    recs.append(rec("tf1_static", fwd_ms=1.0, params={"seq_len": 25, "units": 7}))
    point = experiments.get("unroll").params.fill(SEED)
    pts = select.sweep(recs, point, ["tf1_static"])
    assert [r.params["seq_len"] for r in pts] == [25, 50, 100]


def test_url_variants_come_back_in_canonical_order():
    assert decode({"variants": "keras,tf1_static"}).variants == ["tf1_static", "keras"]


# -- a finding's machine and call, apart from its words ------------------------------------------------------------
def _on(machine, fwd_rounds, *, cpu=None):
    """tf1_static / tf1_dynamic of an imported machine named ``machine`` (its own CPU model: its own machine), one
    round per pair of forward times in ``fwd_rounds``."""
    from tests.factories import SEED as FSEED, TEST_CPU_ENV, UNROLL, record

    params = {**UNROLL.params.fill(FSEED), "device": "cpu"}
    env = {**TEST_CPU_ENV, "machine": machine, "cpu": cpu or machine, "device_name": cpu or machine}
    return [record("unroll", v, params, [{"build_s": b, "fwd_ms": x[i], "train_ms": 2 * x[i]} for x in fwd_rounds],
                   env=env, source="imported")
            for i, (v, b) in enumerate((("tf1_static", 6.0), ("tf1_dynamic", 1.0)))]


TRICKY = "Box, On rack 2"  # a machine name a reader of "On <machine>, ..." would cut at its comma


def test_a_finding_carries_its_machine_and_its_call_apart_from_its_words():
    from rnnlab.core import rules

    recs = _on(TRICKY, [(10.0, 15.0), (10.5, 15.2), (9.8, 14.9)])
    (f,) = findings.pair_finding(recs, "tf1_static", "tf1_dynamic", "static_rnn", "dynamic_rnn")
    assert f.sentence.where == select.where(recs) == "On Box, On rack 2 (CPU, imported)"
    assert f.headline == f"{f.sentence.where}, {f.sentence.body}" and f.sentence.body.startswith("static_rnn builds")
    iv = findings.interval(recs[0], recs[1], "fwd_ms")
    assert f.sentence.status == rules.direction(iv) == rules.LOWER  # the call of the forward step's interval
    noisy = _on(TRICKY, [(10.0, 15.0), (20.0, 12.0), (9.0, 16.0)])
    (n,) = findings.pair_finding(noisy, "tf1_static", "tf1_dynamic", "static_rnn", "dynamic_rnn")
    assert n.sentence.status == rules.NOISY and "too noisy to call" in n.headline
    sweep = [r.with_(params={**r.params, "seq_len": s}, metrics={**r.metrics, "build_s": 0.01 * s})
             for s in (25, 50, 100) for r in recs if r.variant == "tf1_static"]
    (g,) = findings.build_scaling(sweep)
    assert g.sentence.status is None and g.sentence.where == f.sentence.where  # a growth: no difference called


def test_findings_of_one_machine_say_it_once_whatever_its_name():
    from rnnlab.core.wording import shared_opening

    recs = _on(TRICKY, [(10.0, 15.0), (10.5, 15.2), (9.8, 14.9)])
    recs += [r.with_(variant="tf2_while", key=r.key[::-1]) for r in recs if r.variant == "tf1_dynamic"]
    said = [f.sentence for _, fs in findings.answer(recs) for f in fs]
    assert len(said) == 2  # static vs dynamic, and the fastest of three
    head, lines = shared_opening(said)
    assert head == "On Box, On rack 2 (CPU, imported)"
    assert [s.text for s in lines] == [said[0].body, "Of" + said[1].body[2:]]  # code keeps its case
    assert [s.status for s in lines] == [s.status for s in said] and not any(s.where for s in lines)
    # two machines whose names share "On Box, ...": each sentence keeps its own opener
    other = findings.pair_finding(_on("Box, On rack 3", [(10.0, 15.0), (10.4, 15.1)]), "tf1_static", "tf1_dynamic",
                                  "static_rnn", "dynamic_rnn")[0].sentence
    head, lines = shared_opening([said[0], other])
    assert head == "" and [s.text for s in lines] == [said[0].text, other.text]
    assert shared_opening([said[0]]) == ("", [said[0]])  # one sentence: nothing to say once


def test_a_findings_configuration_and_provenance_are_apart_and_a_busy_machine_stays_said():
    from rnnlab.present.overview import detail_without_source

    recs = _on("Box; rack 2", [(10.0, 15.0), (10.5, 15.2)])  # a "; " in the name: nothing splits the detail
    busy = [r.with_(details={"loadavg": [[3.5, 3.6]] * 2}) for r in recs]
    for rs, note in ((recs, ""), (busy, select.busy_note(busy))):
        (f,) = findings.pair_finding(rs, "tf1_static", "tf1_dynamic", "static_rnn", "dynamic_rnn")
        assert f.provenance == select.source_note(rs) and f.detail == f"{f.at}; {f.provenance}"
        assert f.busy == note and "Box; rack 2" not in f.at
        assert detail_without_source(f) == "; ".join(x for x in (f.at, note) if x)  # the machine: said above
    assert busy and "busy machine" in f.busy


def test_each_clause_after_an_undecided_call_is_set_apart_by_a_comma():
    """"..., too noisy to call, and a training step ...": the Keras answer joins the training step to the forward
    step's call as the build's call joins the forward step (`run` printed "too noisy to call and a training step")."""
    noisy = _on(TRICKY, [(10.0, 15.0), (20.0, 12.0), (9.0, 16.0)])  # forward and training both undecided
    (f,) = findings.pair_finding(noisy, "tf1_static", "tf1_dynamic", "static_rnn", "dynamic_rnn", build=False,
                                 train=True)
    assert f.sentence.body.count("too noisy to call") == 2 and "too noisy to call, and a training step" in f.headline
    decided = _on(TRICKY, [(10.0, 15.0), (10.5, 15.2), (9.8, 14.9)])
    (g,) = findings.pair_finding(decided, "tf1_static", "tf1_dynamic", "static_rnn", "dynamic_rnn", build=False,
                                 train=True)
    assert "too noisy" not in g.headline and " faster (" in g.headline and "), and" not in g.headline


def test_a_ratio_without_an_interval_is_never_called():
    """One round of a figure timed once (a build, a first call, peak memory, a build plus N steps) has no spread:
    its ratio ("none") is said with "no interval (one round)", never as a direction, bold or a verdict. A count of
    graph nodes, the same in every build, is exact. The bundled one-round sweep's recommendation once said "tf1_static
    is 1.76x faster" for building and 1,000 steps, and "1.12x less memory", from no interval at all."""
    from rnnlab.core import baseline, rules, stats, wording
    from rnnlab.judge.recommend import recommend

    for r in (0.3, 0.95, 1.0, 3.0):
        iv = Interval(r, r, r, "none", 1)
        assert rules.direction(iv) == rules.bound(iv) == rules.NOISY and rules.call(iv) == rules.NOISY
        phrase = wording.difference(iv)
        assert not phrase.decided and not phrase.bold and not phrase.bounded
        assert phrase.against("B") == f"at {r:.2f}x B's time, {wording.NO_INTERVAL}"
    nodes = stats.ratio_interval([{"graph_nodes": 1500.0}], [{"graph_nodes": 100.0}], "graph_nodes")
    assert nodes.how == "exact" and rules.direction(nodes) == rules.HIGHER
    assert stats.ratio_interval([{"build_s": 2.0}], [{"build_s": 1.0}], "build_s").how == "none"

    one = [rec(v, build_s=b, first_call_s=0.1, fwd_ms=f, train_ms=2 * f, train_build_s=b, train_first_call_s=0.2,
               peak_mem_mb=m, two=False) for v, b, f, m in (("tf1_static", 1.0, 5.0, 100.0),
                                                            ("tf1_dynamic", 0.2, 6.0, 150.0))]
    picks = recommend(one, n_steps=100).picks
    for goal in ("build_plus_n", "memory", "steady_train"):
        assert wording.NO_INTERVAL in picks[goal].text and picks[goal].tie and "**" not in picks[goal].text, goal
    from pathlib import Path

    recs = baseline.load(Path(__file__).resolve().parents[2] / "data" / "baseline")  # the bundled results
    bundled = [r for r in recs if r.experiment == "unroll" and len(r.round_metrics) == 1]
    assert bundled, "the bundle's one-round sweep"
    config = {k: bundled[0].params[k] for k in ("cell", "units", "layers", "batch", "seq_len", "input_dim", "rounds")}
    said = recommend(recs, config=config, n_steps=1000).picks
    assert wording.NO_INTERVAL in said["build_plus_n"].text and said["build_plus_n"].tie
    assert said["steady_train"].interval.how == "quartiles" and not said["steady_train"].tie  # timed steps: decided
