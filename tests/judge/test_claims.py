"""The claims engine: every verdict changes when the records change (pure, no TensorFlow)."""

import functools
import subprocess
import sys

import pytest

from rnnlab.judge import claims
from rnnlab.judge.claims import CLAIMS, evaluate, verdict
from rnnlab.core.rules import STATUSES
from rnnlab.experiments.seeds import SEED_000, SEED_003, SEED_FILES
from tests.factories import BARE_CPU_ENV, BARE_GPU_ENV, record

CPU, GPU = BARE_CPU_ENV, BARE_GPU_ENV
rec = functools.partial(record, env=CPU)  # a record of the test CPU unless env= says otherwise


def unroll(variant, env=CPU, **m):
    return rec("unroll", variant, SEED_000, env=env, **m)


# -- the table itself ----------------------------------------------------------------------------------------------

def test_every_claim_is_complete():
    assert len(CLAIMS) >= 20
    assert len({c.id for c in CLAIMS}) == len(CLAIMS)
    seeds = {c.seed for c in CLAIMS}
    assert seeds == set(SEED_FILES.values())  # all four seeds have claims
    for c in CLAIMS:
        assert c.command.startswith("python -m rnnlab run ")
        assert c.experiment in c.command
        assert c.variants and c.preset in ("quick", "seed", "full")
        assert c.device in ("any", "CPU", "GPU")


def test_no_records_means_not_measured_everywhere():
    for c, v in evaluate([]):
        assert v.status == "not measured", c.id
        assert c.command in v.why


def test_verdict_rejects_unknown_status():
    with pytest.raises(ValueError):
        claims.Verdict("maybe", "", "")


# -- speed / memory (unroll) ---------------------------------------------------------------------------------------

def test_cpu_speed_holds_and_does_not_hold():
    holds = [unroll("tf1_static", fwd_ms=482.0, train_ms=1400.0), unroll("tf1_dynamic", fwd_ms=387.0, train_ms=1100.0)]
    v = verdict("s000_cpu_speed", holds)
    assert v.status == "holds"
    assert "482" in v.measured and "387" in v.measured and "1.25x faster" in v.measured
    assert "seed's configuration" in v.measured
    not_ = [unroll("tf1_static", fwd_ms=300.0, train_ms=900.0), unroll("tf1_dynamic", fwd_ms=387.0, train_ms=1100.0)]
    assert verdict("s000_cpu_speed", not_).status == "does not hold"
    mixed = [unroll("tf1_static", fwd_ms=482.0, train_ms=900.0), unroll("tf1_dynamic", fwd_ms=387.0, train_ms=1100.0)]
    assert verdict("s000_cpu_speed", mixed).status == "depends"


def test_overlapping_quartiles_are_no_win_and_no_loss():
    def q(v, m, lo, hi):
        return {m: v, f"{m}_p25": lo, f"{m}_p75": hi}

    wide = [unroll("tf1_static", **q(482.0, "fwd_ms", 300.0, 600.0), **q(1400.0, "train_ms", 1300.0, 1500.0)),
            unroll("tf1_dynamic", **q(387.0, "fwd_ms", 350.0, 450.0), **q(1100.0, "train_ms", 1000.0, 1200.0))]
    v = verdict("s000_cpu_speed", wide)
    # the quartile intervals (rules.call on stats.ratio_interval): forward 0.58-1.50, train step 0.67-0.92; both
    # reach across 0.90 (a 10% saving): neither a win nor a loss (was "depends", when the train step's
    # non-overlapping quartiles counted as a win)
    assert v.status == "too noisy to call" and "too noisy to call" in v.measured
    assert "reaches across the 10% margin" in v.why
    slower = [unroll("tf1_static", **q(100.0, "fwd_ms", 80.0, 130.0), **q(100.0, "train_ms", 80.0, 130.0)),
              unroll("tf1_dynamic", **q(125.0, "fwd_ms", 110.0, 140.0), **q(125.0, "train_ms", 110.0, 140.0))]
    # 25% slower, but the interval (0.85-1.75) reaches both sides of 1.10: never a loss (was "holds")
    assert verdict("s001_dynamic_not_slower", slower).status == "too noisy to call"


def test_a_part_decided_against_a_claim_refutes_it_whatever_its_noisy_parts_show():
    def q(v, m, lo, hi):
        return {m: v, f"{m}_p25": lo, f"{m}_p75": hi}

    # forward: static 1.5x faster, decided (intervals apart); training step: quartiles reach across the margin
    recs = [unroll("tf1_static", **q(100.0, "fwd_ms", 98.0, 102.0), **q(100.0, "train_ms", 60.0, 140.0)),
            unroll("tf1_dynamic", **q(150.0, "fwd_ms", 148.0, 152.0), **q(100.0, "train_ms", 60.0, 140.0))]
    v = verdict("s001_dynamic_not_slower", recs)
    assert v.status == "does not hold"  # was "too noisy to call"
    assert "does not hold for the forward;" in v.why and "too noisy to call" in v.why
    assert "static_rnn is faster here" in v.why
    # the same noisy part beside a decided part *for* the claim stays too noisy to call
    fine = [unroll("tf1_static", **q(150.0, "fwd_ms", 148.0, 152.0), **q(100.0, "train_ms", 60.0, 140.0)),
            unroll("tf1_dynamic", **q(100.0, "fwd_ms", 98.0, 102.0), **q(100.0, "train_ms", 60.0, 140.0))]
    assert verdict("s001_dynamic_not_slower", fine).status == "too noisy to call"


@pytest.mark.parametrize("parts, status", [
    (["does not hold", "too noisy to call"], "does not hold"),
    (["does not hold", "does not hold"], "does not hold"),
    (["holds", "too noisy to call"], "too noisy to call"),
    (["holds", "does not hold"], "depends"),
    (["holds", "does not hold", "too noisy to call"], "depends"),
    (["depends", "does not hold"], "depends"),
    (["holds", "holds"], "holds"),
    ([], "not measured"),
])
def test_status_of_a_claims_parts(parts, status):
    from rnnlab.judge.claim import status_of

    assert status_of(parts) == status


def test_seed_configuration_preferred_over_other_configurations():
    small = {**SEED_000, "layers": 1, "seq_len": 20}
    recs = [unroll("tf1_static", fwd_ms=482.0, train_ms=1400.0), unroll("tf1_dynamic", fwd_ms=387.0, train_ms=1100.0),
            rec("unroll", "tf1_static", small, fwd_ms=1.0, train_ms=2.0),
            rec("unroll", "tf1_dynamic", small, fwd_ms=5.0, train_ms=9.0)]
    v = verdict("s000_cpu_speed", recs)
    assert v.status == "holds"
    assert "holds in 0 of 1" in v.measured
    # without the seed's configuration, the other one is judged and said to be another configuration
    v2 = verdict("s000_cpu_speed", recs[2:])
    assert v2.status == "does not hold" and "not the seed configuration" in v2.measured


def test_gpu_claim_not_measurable_on_cpu_only_and_judged_with_gpu_records():
    cpu = [unroll("tf1_static", fwd_ms=100.0, train_ms=300.0), unroll("tf1_dynamic", fwd_ms=120.0, train_ms=330.0)]
    assert verdict("s000_gpu_speed", cpu).status == "not measurable here"
    assert verdict("s000_gpu_speed", []).status == "not measured"
    gpu_holds = [unroll("tf1_static", GPU, fwd_ms=156.0, train_ms=400.0),
                 unroll("tf1_dynamic", GPU, fwd_ms=112.0, train_ms=300.0)]
    v = verdict("s000_gpu_speed", cpu + gpu_holds)
    assert v.status == "holds" and "GPU" in v.measured and "1.39x faster" in v.measured
    gpu_not = [rec("unroll", "tf1_static", SEED_000, env=GPU, source="baseline", fwd_ms=100.0, train_ms=300.0),
               rec("unroll", "tf1_dynamic", SEED_000, env=GPU, source="baseline", fwd_ms=112.0, train_ms=330.0)]
    v = verdict("s000_gpu_speed", cpu + gpu_not)
    assert v.status == "does not hold" and "[bundled from Test GPU]" in v.measured  # select.origin's words
    # the CPU claim ignores GPU records
    assert verdict("s000_cpu_speed", gpu_holds).status == "not measured"


def test_memory_graph_build_not_slower():
    a = [unroll("tf1_static", peak_mem_mb=1243.0, graph_nodes=5000.0, build_s=3.0, fwd_ms=10.0, train_ms=30.0),
         unroll("tf1_dynamic", peak_mem_mb=876.0, graph_nodes=300.0, build_s=0.5, fwd_ms=10.5, train_ms=31.0)]
    b = [unroll("tf1_static", peak_mem_mb=900.0, graph_nodes=400.0, build_s=0.5, fwd_ms=5.0, train_ms=15.0),
         unroll("tf1_dynamic", peak_mem_mb=880.0, graph_nodes=300.0, build_s=0.5, fwd_ms=10.0, train_ms=31.0)]
    for cid in ("s000_memory", "s000_graph_size", "s001_static_build_slow", "s001_dynamic_not_slower"):
        assert verdict(cid, a).status == "holds", cid
        assert verdict(cid, b).status == "does not hold", cid


def test_memory_long_needs_two_lengths():
    def pair(t, s, d):
        p = {**SEED_000, "seq_len": t}
        return [rec("unroll", "tf1_static", p, peak_mem_mb=s), rec("unroll", "tf1_dynamic", p, peak_mem_mb=d)]

    assert verdict("s000_memory_long", pair(100, 200.0, 100.0)).status == "not measured"
    assert verdict("s000_memory_long", pair(25, 110.0, 100.0) + pair(200, 400.0, 120.0)).status == "holds"
    assert verdict("s000_memory_long", pair(25, 100.0, 100.0) + pair(200, 101.0, 100.0)).status == "does not hold"


def test_short_static_and_keras():
    p = {**SEED_000, "layers": 1, "seq_len": 20}
    fast = [rec("unroll", "tf1_static", p, fwd_ms=1.0, train_ms=2.0),
            rec("unroll", "tf1_dynamic", p, fwd_ms=2.0, train_ms=4.0)]
    slow = [rec("unroll", "tf1_static", p, fwd_ms=3.0, train_ms=6.0),
            rec("unroll", "tf1_dynamic", p, fwd_ms=2.0, train_ms=4.0)]
    assert verdict("s000_short_static", fast).status == "holds"
    assert verdict("s000_short_static", slow).status == "does not hold"
    long_ = [unroll("tf1_static", fwd_ms=1.0, train_ms=2.0), unroll("tf1_dynamic", fwd_ms=2.0, train_ms=4.0)]
    assert verdict("s000_short_static", long_).status == "not measured"  # only <= 25 steps count
    k_fast = [unroll("keras", fwd_ms=0.5, train_ms=1.0)] + long_
    k_slow = [unroll("keras", fwd_ms=9.0, train_ms=9.0)] + long_
    assert verdict("s000_keras_faster", k_fast).status == "holds"
    assert verdict("s000_keras_faster", k_slow).status == "does not hold"
    assert verdict("s000_keras_faster", long_).status == "not measured"


def test_failed_records_are_not_used():
    recs = [unroll("tf1_static", error="out of memory"), unroll("tf1_dynamic", fwd_ms=1.0, train_ms=1.0)]
    assert verdict("s000_cpu_speed", recs).status == "not measured"


def test_local_record_wins_over_bundled():
    recs = [unroll("tf1_static", source="baseline", fwd_ms=100.0, train_ms=100.0),
            unroll("tf1_dynamic", source="baseline", fwd_ms=50.0, train_ms=50.0),
            unroll("tf1_static", fwd_ms=40.0, train_ms=40.0), unroll("tf1_dynamic", fwd_ms=50.0, train_ms=50.0)]
    assert verdict("s000_cpu_speed", recs).status == "does not hold"


def test_pairs_never_mix_machines():
    other = {**CPU, "device_name": "another cpu"}
    recs = [unroll("tf1_static", fwd_ms=100.0, train_ms=100.0),
            rec("unroll", "tf1_dynamic", SEED_000, env=other, source="baseline", fwd_ms=10.0, train_ms=10.0)]
    assert verdict("s000_cpu_speed", recs).status == "not measured"
    recs.append(rec("unroll", "tf1_static", SEED_000, env=other, source="baseline", fwd_ms=20.0, train_ms=20.0))
    v = verdict("s000_cpu_speed", recs)
    assert v.status == "holds" and "[bundled from another cpu]" in v.measured  # select.origin's words


def test_each_configuration_measured_is_a_sentence_of_its_own():
    """Two bundled machines at the seed's configuration: two sentences, the second with its capital ("... rounds).
    At the seed's configuration ...", where it read ". at the seed's configuration")."""
    a, b = ({**CPU, "device_name": name, "machine": name} for name in ("cpu a", "cpu b"))
    recs = [rec("unroll", v, SEED_000, env=env, source="baseline", fwd_ms=ms, train_ms=ms)
            for env, pair in ((a, (100.0, 50.0)), (b, (90.0, 45.0)))
            for v, ms in zip(("tf1_static", "tf1_dynamic"), pair)]
    measured = verdict("s000_cpu_speed", recs).measured
    assert measured.count("At the seed's configuration") == 1 and ". at " not in measured, measured


def test_ref_lstm():
    p = {**SEED_000, "cell": "lstm"}
    assert verdict("s001_ref_lstm", [rec("unroll", "tf1_dynamic", p, ref_abs_diff=3e-7)]).status == "holds"
    assert verdict("s001_ref_lstm", [rec("unroll", "tf1_dynamic", p, ref_abs_diff=2e-3)]).status == "does not hold"
    v = verdict("s001_ref_lstm", [unroll("tf1_dynamic", ref_abs_diff=1e-7)])
    assert v.status == "not measured" and "cell=lstm" in v.measured


# -- seed003 / varlen ----------------------------------------------------------------------------------------------

def s003(variant, ran, **m):
    return rec("seed003", variant, SEED_003, cell_steps_run=ran, loop_steps_max=20.0, **m)


def test_loop_step_claims_flip_together():
    stops = [s003("dynamic", 20.0), s003("static", 20.0)]
    runs_all = [s003("dynamic", 300.0), s003("static", 300.0)]
    assert verdict("s000_dynamic_skips_padding", stops).status == "holds"
    assert verdict("s000_dynamic_skips_padding", runs_all).status == "does not hold"
    assert verdict("s001_seqlen_correctness", stops).status == "does not hold"
    assert verdict("s001_seqlen_correctness", runs_all).status == "holds"
    assert verdict("s003_dynamic_no_skip", stops).status == "does not hold"
    assert verdict("s003_dynamic_no_skip", runs_all).status == "holds"
    assert verdict("s001_static_seqlen_skip", stops).status == "holds"
    assert verdict("s001_static_seqlen_skip", runs_all).status == "does not hold"


def test_seed003_speed_and_build():
    fast = [s003("static", 20.0, steps_per_s=20.3, build_s=9.0), s003("dynamic", 20.0, steps_per_s=5.4, build_s=1.0)]
    slow = [s003("static", 20.0, steps_per_s=5.0, build_s=1.0), s003("dynamic", 20.0, steps_per_s=5.4, build_s=1.0)]
    assert verdict("s003_static_runs_faster", fast).status == "holds"
    assert verdict("s003_static_runs_faster", slow).status == "does not hold"
    assert verdict("s003_static_builds_slower", fast).status == "holds"
    assert verdict("s003_static_builds_slower", slow).status == "does not hold"


def test_static_varlen():
    ok = [rec("varlen", "tf1_static", {"cell": "lstm"}, checks_passed=3.0, final_state_err=1e-7)]
    bad = [rec("varlen", "tf1_static", {"cell": "lstm"}, checks_passed=1.0, final_state_err=0.3)]
    assert verdict("s000_static_no_varlen", ok).status == "does not hold"
    assert verdict("s000_static_no_varlen", bad).status == "holds"
    assert verdict("s000_static_no_varlen", [rec("varlen", "tf1_static", error="no")]).status == "holds"


# -- knobs / precision / training ----------------------------------------------------------------------------------

def knob(variant, env=CPU, **m):
    return rec("knobs", variant, {**SEED_000}, env=env, **m)


def test_knob_claims():
    assert verdict("s000_parallel_iterations", [knob("dynamic_pi1", fwd_ms=20.0, train_ms=60.0),
                                                 knob("dynamic_default", fwd_ms=10.0, train_ms=30.0)]).status == "holds"
    v = verdict("s000_parallel_iterations", [knob("dynamic_pi1", fwd_ms=10.0, train_ms=30.0),
                                             knob("dynamic_default", fwd_ms=10.0, train_ms=30.0),
                                             knob("dynamic_pi128", fwd_ms=10.1, train_ms=30.0)])
    assert v.status == "does not hold" and "128" in v.measured
    assert verdict("s000_time_major", [knob("dynamic_time_major", fwd_ms=10.0, train_ms=30.0),
                                       knob("dynamic_default", fwd_ms=10.0, train_ms=30.0)]).status == "does not hold"
    assert verdict("s000_time_major", [knob("dynamic_time_major", fwd_ms=20.0, train_ms=60.0),
                                       knob("dynamic_default", fwd_ms=10.0, train_ms=30.0)]).status == "holds"


def test_swap_is_a_gpu_claim():
    cpu = [knob("dynamic_swap", peak_mem_mb=100.0, train_ms=3.0), knob("dynamic_default", peak_mem_mb=100.0,
                                                                        train_ms=3.0)]
    v = verdict("s000_swap_memory", cpu)
    assert v.status == "not measurable here" and "100 MB" in v.measured
    gpu = [knob("dynamic_swap", GPU, peak_mem_mb=50.0), knob("dynamic_default", GPU, peak_mem_mb=100.0)]
    assert verdict("s000_swap_memory", cpu + gpu).status == "holds"
    gpu2 = [knob("dynamic_swap", GPU, peak_mem_mb=100.0), knob("dynamic_default", GPU, peak_mem_mb=100.0)]
    assert verdict("s000_swap_memory", gpu2).status == "does not hold"


def test_unstack_trick():
    p = {**SEED_000}
    fails = [rec("knobs", "static_first_n", p, seed_code_runs=0.0, peak_mem_mb=50.0, final_state_vs_full=0.4,
                 details={"seed_code_error": "ValueError: Dimension must be 50 but is 100"}),
             rec("knobs", "static_full", p, peak_mem_mb=100.0)]
    v = verdict("s000_unstack_num", fails)
    assert v.status == "does not hold" and "Dimension must be 50" in v.measured and "100 MB" in v.measured
    runs = [rec("knobs", "static_first_n", p, seed_code_runs=1.0, peak_mem_mb=50.0),
            rec("knobs", "static_full", p, peak_mem_mb=100.0)]
    assert verdict("s000_unstack_num", runs).status == "depends"


def test_mixed_precision_policy():
    p = {"cell": "lstm"}
    ignored = [rec("precision", "tf1_dynamic_policy", p, policy_runs=1.0, policy_float16_matmuls=0.0,
                   policy_float32_matmuls=1.0, details={"policy_output_dtype": "float32"})]
    applied = [rec("precision", "tf1_dynamic_policy", p, policy_runs=1.0, policy_float16_matmuls=1.0,
                   policy_float32_matmuls=0.0)]
    assert verdict("s000_mixed_precision", ignored).status == "does not hold"
    assert verdict("s000_mixed_precision", applied).status == "holds"
    assert verdict("s000_mixed_precision", [rec("precision", "tf1_dynamic_policy", error="boom")]).status == \
        "does not hold"


def test_tf_function_claim():
    p = {"cell": "lstm", "units": 32}
    assert verdict("s004_tf_function", [rec("training", "keras", p, epoch_s=1.0),
                                        rec("training", "keras_eager", p, epoch_s=5.0)]).status == "holds"
    assert verdict("s004_tf_function", [rec("training", "keras", p, epoch_s=1.0),
                                        rec("training", "keras_eager", p, epoch_s=1.0)]).status == "does not hold"


# -- pitfalls / migrate --------------------------------------------------------------------------------------------

def test_shared_cells():
    common = dict(distinct_kernels_wrong=1.0, distinct_kernels_right=3.0, wrong_builds_same_dim=1.0)
    dep = [rec("pitfalls", "tf1_shared_dynamic", {"cell": "rnn", "units": 16}, wrong_builds_diff_dim=0.0, **common)]
    holds = [rec("pitfalls", "tf1_shared_dynamic", {"cell": "rnn", "units": 16}, wrong_builds_diff_dim=1.0, **common)]
    no = [rec("pitfalls", "tf1_shared_dynamic", {"cell": "rnn", "units": 16}, wrong_builds_same_dim=1.0,
              wrong_builds_diff_dim=1.0, distinct_kernels_wrong=3.0, distinct_kernels_right=3.0)]
    assert verdict("s000_shared_cells", dep).status == "depends"
    assert verdict("s000_shared_cells", holds).status == "holds"
    assert verdict("s000_shared_cells", no).status == "does not hold"


def test_shape_claims():
    silent = rec("pitfalls", "shape_time_major", {}, wrong_builds=1.0, max_abs_diff_vs_correct=0.5)
    caught_tm = rec("pitfalls", "shape_time_major", {}, wrong_builds=0.0)
    caught_2d = rec("pitfalls", "shape_2d_input", {}, wrong_builds=0.0)
    assert verdict("s000_input_shape", [silent, caught_2d]).status == "depends"
    assert verdict("s000_input_shape", [caught_tm, caught_2d]).status == "holds"
    assert verdict("s000_input_shape", [silent]).status == "does not hold"
    good = rec("pitfalls", "shape_state_is_tuple", {}, wrong_builds=0.0, check_passed=1.0)
    bad = rec("pitfalls", "shape_state_is_tuple", {}, wrong_builds=1.0, check_passed=1.0)
    assert verdict("s000_state_is_tuple", [good]).status == "holds"
    assert verdict("s000_state_is_tuple", [bad]).status == "does not hold"


def test_cudnn_claim():
    no = [rec("migrate", "seed004_construct", {}, cudnn_eligible=0.0, keras3_call_ok=0.0)]
    yes = [rec("migrate", "seed004_construct", {}, cudnn_eligible=1.0, keras3_call_ok=1.0)]
    assert verdict("s004_cudnn", no).status == "does not hold"
    assert verdict("s004_cudnn", yes).status == "holds"


def test_evaluate_and_rows():
    recs = [unroll("tf1_static", fwd_ms=482.0, train_ms=1400.0), unroll("tf1_dynamic", fwd_ms=387.0, train_ms=1100.0)]
    res = evaluate(recs)
    assert [c.id for c, _ in res] == [c.id for c in CLAIMS]
    assert all(v.status in STATUSES for _, v in res)
    rows = claims.table_rows(res)
    assert rows[0].keys() >= {"id", "seed", "claim", "status", "measured", "why", "command"}
    assert {r["status"] for r in rows} >= {"holds", "not measured", "not measurable here"}


@pytest.mark.slow  # a Python process of its own
def test_imports_no_tensorflow():
    code = "import sys, rnnlab.judge.claims; assert 'tensorflow' not in sys.modules and 'streamlit' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
