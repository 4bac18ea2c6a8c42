"""Claims and the recommendation over several machines: records of two machines are never judged against each
other (``select.machine_key``), and ``export --experiment claims`` writes the Claims page's own table (pure, fast)."""

import re

import pytest

from rnnlab.core import stats
from rnnlab.core.store import Store
from rnnlab.experiments.seeds import SEED_000, SEED_003
from rnnlab.judge import claims, select
from rnnlab.judge.claims import evaluate, verdict
from rnnlab.judge.recommend import recommend
from rnnlab.present import claims as CV
from tests.factories import XEON_ENV, XEON_FAST_ENV, record
from tests.factories import md_table as _md_table

SLOW, FAST = XEON_ENV, XEON_FAST_ENV  # one CPU name, two machines
BASE_ENV = {k: v for k, v in XEON_ENV.items() if k not in ("machine", "matmul_gflops")}  # no rate measured
OTHER = {**BASE_ENV, "cpu": "AMD EPYC", "device_name": "AMD EPYC", "machine": "AMD EPYC, 2 cores"}  # fingerprint


def rec(experiment, variant, params, env, source="local", **kw):
    return record(experiment, variant, params, env=env, source=source, day="2024-02-01", **kw)


def test_the_fixtures_are_two_machines():
    a, b, c = (rec("unroll", "tf1_static", SEED_000, e) for e in (SLOW, FAST, OTHER))
    assert a.machine == b.machine  # the same name...
    assert len({select.machine_key(r) for r in (a, b, c)}) == 3  # ...but three machines


@pytest.mark.parametrize("a_env,b_env", [(SLOW, FAST), (BASE_ENV, OTHER)])
def test_a_pair_needs_both_records_from_one_machine(a_env, b_env):
    # each machine has one of the two variants: nothing to compare
    half = [rec("unroll", "tf1_static", SEED_000, a_env, fwd_ms=100.0, train_ms=100.0),
            rec("unroll", "tf1_dynamic", SEED_000, b_env, fwd_ms=10.0, train_ms=10.0)]
    assert verdict("s000_cpu_speed", half).status == "not measured"
    # each machine has both: judged per machine; across them dynamic would win, on each it loses
    full = half + [rec("unroll", "tf1_dynamic", SEED_000, a_env, fwd_ms=200.0, train_ms=200.0),
                   rec("unroll", "tf1_static", SEED_000, b_env, fwd_ms=5.0, train_ms=5.0)]
    v = verdict("s000_cpu_speed", full)
    assert v.status == "does not hold", v.measured
    assert "100 ms vs dynamic_rnn 200 ms" in v.measured and "5.00 ms vs dynamic_rnn 10.0 ms" in v.measured


def _two_machines() -> list:
    """Every comparison the claims make, at the seed configurations, measured on two machines (SLOW local, FAST
    bundled) with opposite outcomes, plus records that only exist on one of them."""
    out = []
    for env, src, k in ((SLOW, "local", 1.0), (FAST, "baseline", 3.0)):
        u = lambda v, **m: out.append(rec("unroll", v, SEED_000, env, src, **m))  # noqa: E731
        u("tf1_static", fwd_ms=10.0 * k, train_ms=30.0 * k, peak_mem_mb=200.0 / k, build_s=1.0 * k,
          graph_nodes=1500.0)
        u("tf1_dynamic", fwd_ms=12.0 / k, train_ms=36.0 / k, peak_mem_mb=90.0 * k, build_s=0.1 / k, graph_nodes=100.0)
        u("keras", fwd_ms=11.0, train_ms=33.0)
        kn = lambda v, **m: out.append(rec("knobs", v, {**SEED_000, "first_n": 50}, env, src, **m))  # noqa: E731
        kn("dynamic_default", fwd_ms=10.0 * k, train_ms=30.0 * k, peak_mem_mb=100.0)
        kn("dynamic_pi1", fwd_ms=10.0 / k, train_ms=30.0 / k)
        kn("dynamic_time_major", fwd_ms=10.0 / k, train_ms=30.0 / k)
        s3 = lambda v, **m: out.append(rec("seed003", v, SEED_003, env, src, **m))  # noqa: E731
        s3("static", steps_per_s=10.0 * k, build_s=5.0 / k, cell_steps_run=20.0, loop_steps_max=20.0)
        s3("dynamic", steps_per_s=10.0 / k, build_s=1.0, cell_steps_run=20.0, loop_steps_max=20.0)
        out.append(rec("training", "keras" if k == 1.0 else "keras_eager", {"cell": "lstm"}, env, src,
                       epoch_s=1.0))
    # one-sided records: the seed's unstack line here, the full static unroll there; the policy here, the cast there
    out.append(rec("knobs", "static_first_n", {**SEED_000, "first_n": 50}, SLOW, seed_code_runs=1.0, peak_mem_mb=50.0))
    out.append(rec("knobs", "static_full", {**SEED_000, "first_n": 50}, FAST, "baseline", peak_mem_mb=400.0))
    out.append(rec("precision", "tf1_dynamic_policy", {"cell": "lstm"}, SLOW, policy_runs=1.0,
                   policy_float16_matmuls=0.0, policy_float32_matmuls=1.0))
    out.append(rec("precision", "tf1_dynamic_mixed_float16", {"cell": "lstm"}, FAST, "baseline", fwd_ms=77.0))
    return out


def test_no_verdict_compares_records_of_two_machines(monkeypatch):
    recs = _two_machines()
    by_metrics = {id(m): r for r in recs for m in r.round_metrics}
    compared = []
    real = stats.ratio_interval  # every speed and memory comparison of the claims (rules.call on its interval)

    def watched(a_rounds, b_rounds, metric, *a, **kw):
        w, l = by_metrics[id(a_rounds[0])], by_metrics[id(b_rounds[0])]  # each record's own rounds
        compared.append((w, l))
        assert select.machine_key(w) == select.machine_key(l), (w.variant, w.env, l.variant, l.env)
        return real(a_rounds, b_rounds, metric, *a, **kw)

    monkeypatch.setattr(stats, "ratio_interval", watched)
    results = dict((c.id, v) for c, v in evaluate(recs))
    assert compared  # the speed, memory and seed003 claims did compare
    assert {w.experiment for w, _ in compared} >= {"unroll", "knobs", "seed003"}
    # this machine's pair stands where it has one; the bundled machine's pair of that configuration is left out
    assert "bundled from" not in results["s000_cpu_speed"].measured
    assert results["s003_static_runs_faster"].status == "does not hold"  # here 10 vs 10 steps/s (there: 30 vs 3.3)
    # one-sided records are never set side by side
    assert "peak memory: full" not in results["s000_unstack_num"].measured
    assert "cast-based" not in results["s000_mixed_precision"].measured
    assert results["s004_tf_function"].status == "not measured"  # keras here, keras_eager there


def test_seed003_verdicts_are_the_claims_table_verdicts():
    """The Variable-lengths page asks claims.verdict(...) for seed 003: the same answer as the Claims table."""
    recs = _two_machines()
    table = {c.id: v for c, v in evaluate(recs)}
    for cid in ("s003_static_runs_faster", "s003_static_builds_slower"):
        assert claims.verdict(cid, recs) == table[cid]
    local = [r for r in recs if r.source == "local"]
    assert claims.verdict("s003_static_runs_faster", local).status == "does not hold"  # 10 vs 10 steps/s: a tie
    fast = [r for r in recs if r.source == "baseline"]
    assert claims.verdict("s003_static_runs_faster", fast).status == "holds"  # 30 vs 3.3 steps/s
    assert claims.verdict("s003_static_builds_slower", fast).status == "holds"  # static 1.67 s vs dynamic 1 s
    assert claims.verdict("s003_static_builds_slower", local).status == "holds"  # static 5 s vs dynamic 1 s
    # quartiles of a rate: the interval of dynamic/static of steps/s (a time ratio) is 4/30 .. 12/10, reaching
    # across 0.90: too noisy to call (was "does not hold", rules.beats's "overlapping quartiles are no win")
    q = [rec("seed003", "static", SEED_003, SLOW, steps_per_s=20.0, steps_per_s_p25=10.0, steps_per_s_p75=30.0),
         rec("seed003", "dynamic", SEED_003, SLOW, steps_per_s=5.0, steps_per_s_p25=4.0, steps_per_s_p75=12.0)]
    v = claims.verdict("s003_static_runs_faster", q)
    assert v.status == "too noisy to call" and "too noisy to call" in v.measured


def test_recommend_uses_one_machine():
    # the slow machine measured three variants here; the fast one only tf1_static, much faster
    def full(v, env, train, src="local"):
        return rec("unroll", v, SEED_000, env, src, build_s=0.5, first_call_s=0.1, fwd_ms=train / 3,
                   train_build_s=0.5, train_first_call_s=0.1, train_ms=train, peak_mem_mb=100.0)

    recs = [full("tf1_static", SLOW, 10.0), full("tf1_dynamic", SLOW, 20.0), full("keras", SLOW, 30.0),
            full("tf1_static", FAST, 1.0)]
    r = recommend(recs, config={"seq_len": 100})
    ranking = dict(r.picks["steady_train"].ranking)
    assert ranking == {"tf1_static": 10.0, "tf1_dynamic": 20.0, "keras": 30.0}  # the slow machine's, all of them
    assert any("Also stored at this configuration" in n for n in r.notes)
    assert "measured here" in r.source
    # bundled records of another machine are not mixed in either: their own group, ranked alone if chosen
    bundled = [full("tf1_dynamic", OTHER, 2.0, "baseline"), full("keras", OTHER, 3.0, "baseline")]
    r = recommend([recs[3]] + bundled)
    assert dict(r.picks["steady_train"].ranking) == {"tf1_dynamic": 2.0, "keras": 3.0}
    assert "not measured here" in r.source and any("bundled results" in n for n in r.notes)
    # a tie is core.wording's: a ratio within 10% reads "about as fast"
    tie = recommend([full("tf1_static", SLOW, 10.0), full("tf1_dynamic", SLOW, 10.5)])
    assert tie.picks["steady_train"].tie and "about as fast as tf1_dynamic" in tie.picks["steady_train"].text


def test_configurations_never_mix_machines():
    recs = [r for r in _two_machines() if r.experiment == "knobs"]
    configs = CV.configurations(recs, "knobs", seed_preset={**SEED_000, "first_n": 50})
    assert configs and all(len({select.machine_key(r) for r in c.records}) == 1 for c in configs)
    assert configs[0].records[0].source == "local"  # equal in all else: this machine's first
    assert "measured here" in configs[0].source and "not measured here" in configs[1].source


def test_export_claims_is_the_pages_table(tmp_path):
    from rnnlab.commands import export

    store = Store()
    store.put_many(_two_machines())
    paths = export.run(fmt="md", out=str(tmp_path / "claims.md"), experiment="claims", store=store)
    text = paths[0].read_text()
    records = select.combined(store)  # what the page reads (ui.records)
    view = CV.claims_view(CV.evaluate(records), records=records)  # what the page shows and downloads
    got = _md_table(text, view.title)
    assert got[0] == list(view.columns)
    assert len(got) - 1 == len(view.rows) == len(claims.CLAIMS)
    for row, want in zip(got[1:], view.rows):
        assert row == [" ".join(c.split()) for c in want]
    # then the page's sections: knobs, precision (the training records here are one variant per machine)
    titles = re.findall(r"^## (.+)$", text, re.M)
    assert titles[0] == view.title and any(t.startswith("Tuning knobs") for t in titles)
    assert "bundled results" in view.caption  # bundled records are said to be bundled


def test_page_title_and_columns_follow_provenance():
    here = [r for r in _two_machines() if r.source == "local"]
    assert CV.page_title(here).endswith("measured here") and CV.measured_column(here) == "measured here"
    mixed = _two_machines()
    assert "measured here" not in CV.page_title(mixed) and CV.measured_column(mixed) == "measured"
    assert "measured on this machine" not in CV.claims_title(mixed)
    assert CV.claims_view(evaluate(mixed), records=mixed).columns[4] == "measured"
