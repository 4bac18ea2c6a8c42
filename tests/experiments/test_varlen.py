"""Issue 4: variable-length sequences -- the checks really check, the padding arithmetic, the experiments run (at
their smallest sizes, the runs their page's tests read too)."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # before anything imports TensorFlow

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rnnlab.tf import numpy_ref  # noqa: E402
from rnnlab.tf.weights import make_inputs, make_weights  # noqa: E402
from rnnlab.tf import cudnn  # noqa: E402
from rnnlab.tf import varlen_checks as checks, batching as padding  # noqa: E402
from tests.factories import BOX_ENV, record, varlen_runs  # noqa: E402

CELLS = ("rnn", "lstm", "gru")
B, T, D, H = 4, 7, 3, 5
LENGTHS = [7, 4, 1, 2]


def _padded_x():
    return make_inputs(B, T, D, 0) * checks.valid_mask(LENGTHS, T)[:, :, None]


def _flat(cell, fin):
    return np.concatenate([fin[0]["c"], fin[0]["h"]], axis=1) if cell == "lstm" else fin[0]["h"]


def _numpy_impl(cell, x, lengths):
    """A NumPy implementation: ``lengths=None`` ignores them (runs the padding through the cell)."""
    w = make_weights(cell, 1, H, D, 0)
    out, fin = numpy_ref.forward(cell, w, x, lengths)
    states = np.stack([_flat(cell, numpy_ref.forward(cell, w, x[:, :k + 1], lengths)[1]) for k in range(T)], axis=1)
    return out, states, _flat(cell, fin)


# -- the pure checks ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cell", CELLS)
def test_checks_fail_an_implementation_that_ignores_lengths(cell):
    out, states, fin = _numpy_impl(cell, _padded_x(), None)
    res = checks.run_checks(out, states, fin, LENGTHS)
    assert not res["outputs_zero"]["ok"] and res["outputs_zero"]["worst"] > 1e-3
    assert not res["state_carried"]["ok"] and res["state_carried"]["row"] in (1, 2, 3)
    assert not res["final_state"]["ok"]
    assert checks.past_length_pattern(out, LENGTHS) == "other"


@pytest.mark.parametrize("cell", CELLS)
def test_checks_pass_an_implementation_that_honours_lengths(cell):
    out, states, fin = _numpy_impl(cell, _padded_x(), LENGTHS)
    res = checks.run_checks(out, states, fin, LENGTHS)
    assert all(r["ok"] for r in res.values()), res
    assert res["outputs_zero"]["checked"] == sum(T - L for L in LENGTHS)
    assert checks.past_length_pattern(out, LENGTHS) == "zero"


@pytest.mark.parametrize("cell", CELLS)
def test_each_check_catches_its_own_fault(cell):
    out, states, fin = _numpy_impl(cell, _padded_x(), LENGTHS)
    real = checks.valid_mask(LENGTHS, T)
    # outputs carried (Keras' default with a mask): only (a) fails
    last = out[np.arange(B), np.asarray(LENGTHS) - 1]
    carried = np.where(real[:, :, None], out, last[:, None, :])
    res = checks.run_checks(carried, states, fin, LENGTHS)
    assert [res[k]["ok"] for k in ("outputs_zero", "state_carried", "final_state")] == [False, True, True]
    assert checks.past_length_pattern(carried, LENGTHS) == "carried"
    # state reset to zero past the length, final state right: (b) fails
    reset = np.where(real[:, :, None], states, 0.0)
    res = checks.run_checks(out, reset, fin, LENGTHS)
    assert [res[k]["ok"] for k in ("outputs_zero", "state_carried", "final_state")] == [True, False, True]
    # final state taken at the padded end of a run that did not carry the state: (c) fails
    res = checks.run_checks(out, states, fin + 0.01 * (np.asarray(LENGTHS) < T)[:, None], LENGTHS)
    assert [res[k]["ok"] for k in ("outputs_zero", "state_carried", "final_state")] == [True, True, False]
    assert res["final_state"]["row"] in (1, 2, 3)


def test_checks_with_no_padding_pass_and_say_so():
    out, states, fin = _numpy_impl("rnn", make_inputs(B, T, D, 0), None)
    res = checks.run_checks(out, states, fin, [T] * B)
    assert all(r["ok"] for r in res.values())
    assert res["outputs_zero"]["checked"] == 0 and res["state_carried"]["checked"] == 0
    assert checks.past_length_pattern(out, [T] * B) == "none"


def test_unobserved_steps_are_skipped_but_last_real_step_is_required():
    out, states, fin = _numpy_impl("gru", _padded_x(), None)
    partial = states.copy()
    partial[:, [2, 4, 5]] = np.nan  # not observed
    assert not checks.check_state_carried(partial, LENGTHS)["ok"]
    partial[:, 0] = np.nan  # row 2's last real step (length 1)
    with pytest.raises(ValueError):
        checks.check_state_carried(partial, LENGTHS)


def test_heatmap_is_time_by_row_and_downsamples():
    out = np.ones((3, 10, 4))
    hm = checks.norm_heatmap(out, [10, 5, 1])
    assert len(hm["z"]) == 10 and len(hm["z"][0]) == 3 and hm["z"][0][0] == 2.0 and hm["lengths"] == [10, 5, 1]
    small = checks.norm_heatmap(np.ones((40, 100, 2)), max_steps=20, max_rows=8)
    assert len(small["z"]) == 20 and len(small["z"][0]) == 8 and small["steps"][:2] == [0, 5]


def test_cudnn_mask_ok():
    right = checks.valid_mask([3, 1, 2], 4)
    assert cudnn.mask_ok(right)[0]
    ok, why = cudnn.mask_ok(checks.pre_padded(right))
    assert not ok and "not right-padded" in why and "row 0" in why
    hole = np.array([[True, False, True, False]])
    ok, why = cudnn.mask_ok(hole)
    assert not ok and "masked step at 1 before a real step at 2" in why
    ok, why = cudnn.mask_ok(np.array([[True, True], [False, False]]))
    assert not ok and "fully masked" in why
    assert cudnn.mask_ok(np.ones((2, 3), bool))[0]


# -- the real implementations -------------------------------------------------------------------------------------
def _ok(res):
    return [res[k]["ok"] for k in ("outputs_zero", "state_carried", "final_state")]


@pytest.mark.slow  # TensorFlow workers or a heavy run
@pytest.mark.parametrize("cell", CELLS)
def test_tf1_and_keras_with_lengths_pass_and_without_fail(cell):
    from rnnlab.tf import varlen_models as models

    x = _padded_x()
    layer = make_weights(cell, 1, H, D, 0)[0]
    ref = _flat(cell, numpy_ref.forward(cell, [layer], x, LENGTHS)[1])
    for static in (True, False):
        r = models.run_tf1(cell, layer, x, LENGTHS, H, static=static, use_lengths=True)
        assert _ok(checks.run_checks(r["outputs"], r["states"], r["final"], LENGTHS)) == [True] * 3, (cell, static)
        assert checks.max_abs_diff(r["final"], ref) < 1e-5
        w = models.run_tf1(cell, layer, x, LENGTHS, H, static=static, use_lengths=False)
        assert _ok(checks.run_checks(w["outputs"], w["states"], w["final"], LENGTHS)) == [False] * 3, (cell, static)
        assert checks.max_abs_diff(w["final"], ref) > 1e-3
    for how in ("mask_arg", "masking"):
        r = models.run_keras(cell, layer, x, LENGTHS, H, how)
        # Keras' default zero_output_for_mask=False repeats the last real output past the length: (a) fails by design
        assert _ok(checks.run_checks(r["outputs"], r["states"], r["final"], LENGTHS)) == [False, True, True]
        assert checks.past_length_pattern(r["outputs"], LENGTHS) == "carried"
        assert checks.max_abs_diff(r["final"], ref) < 1e-5
    z = models.run_keras(cell, layer, x, LENGTHS, H, "mask_arg", zero_output_for_mask=True)
    assert _ok(checks.run_checks(z["outputs"], z["states"], z["final"], LENGTHS)) == [True] * 3
    n = models.run_keras(cell, layer, x, LENGTHS, H, "none")
    assert _ok(checks.run_checks(n["outputs"], n["states"], n["final"], LENGTHS)) == [False] * 3


# -- padding arithmetic ---------------------------------------------------------------------------------------------
PAD_LENGTHS = [1, 2, 3, 10, 4, 4, 9, 1]  # real steps: 34


def test_pad_global_and_pad_batch():
    g = padding.pad_global(PAD_LENGTHS, 3)
    assert [b.indices for b in g.batches] == [(0, 1, 2), (3, 4, 5), (6, 7)]
    assert (g.real_steps, g.padded_steps) == (34, 80) and g.wasted_pct == pytest.approx(100 * 46 / 80)
    assert g.loop_steps == 3 * 3 + 3 * 10 + 2 * 9 and g.shapes == [(3, 10), (2, 10)]
    p = padding.pad_batch(PAD_LENGTHS, 3)
    assert p.padded_steps == 57 and p.wasted_pct == pytest.approx(100 * 23 / 57) and p.loop_steps == 57
    assert p.shapes == [(3, 3), (3, 10), (2, 9)]


def test_sort_and_bucket():
    s = padding.sort(PAD_LENGTHS, 3, seed=1)
    assert sorted(b.indices for b in s.batches) == [(0, 7, 1), (2, 4, 5), (6, 3)]
    assert s.padded_steps == 6 + 12 + 20 and s.wasted_pct == pytest.approx(100 * 4 / 38)
    assert padding.bucket_boundaries(PAD_LENGTHS, 2) == [3, 10]
    k = padding.bucket(PAD_LENGTHS, 3, 2)
    assert [(b.indices, b.padded_len) for b in k.batches] == [((0, 1, 2), 3), ((7,), 3), ((3, 4, 5), 10), ((6,), 10)]
    assert (k.padded_steps, k.loop_steps) == (52, 49) and len(k.shapes) == 4
    assert k.loop_wasted_pct == pytest.approx(100 * 15 / 49)
    one = padding.bucket(PAD_LENGTHS, 3, 1)
    assert one.padded_steps == padding.pad_global(PAD_LENGTHS, 3).padded_steps
    for name in padding.STRATEGIES:
        plan = padding.make_plan(name, PAD_LENGTHS, 3, buckets=2)
        assert sorted(i for b in plan.batches for i in b.indices) == list(range(8))
        assert plan.summary()["sequences"] == 8


def test_padding_never_wastes_with_equal_lengths():
    for name in padding.STRATEGIES:
        assert padding.make_plan(name, [5] * 10, 4).wasted_pct == 0.0


# -- the experiments, in process ------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    """Every variant of varlen, padding and seed003 run in this process at their smallest sizes (varlen's quick
    preset; the page's tests read the same runs as records): experiment -> (params, variant -> result)."""
    return varlen_runs(tmp_path_factory)


def _run(runs, name):
    """The experiment, its params and its results, each result checked as the harness would take it: phases
    reported, every metric documented and a finite float."""
    from rnnlab import experiments

    exp = experiments.get(name)
    params, res = runs[name]
    assert set(res) == set(exp.variants)
    for v, r in res.items():
        assert r["phases"], v
        undocumented = set(r["metrics"]) - set(exp.metrics_doc)
        assert not undocumented, (v, undocumented)
        assert all(isinstance(x, float) and np.isfinite(x) for x in r["metrics"].values()), v
    return exp, params, res


@pytest.mark.slow  # TensorFlow workers or a heavy run
def test_varlen_quick_preset(runs):
    import json

    exp, params, res = _run(runs, "varlen")
    assert exp.reference in res and exp.page == "varlen"
    for v in ("tf1_static", "tf1_dynamic"):
        assert res[v]["metrics"]["checks_passed"] == 3.0 and res[v]["metrics"]["final_state_err"] < 1e-5
    for v in ("keras_masking", "keras_mask_arg"):
        m = res[v]["metrics"]
        assert (m["check_outputs_zero"], m["check_state_carried"], m["check_final_state"]) == (0.0, 1.0, 1.0)
        assert res[v]["details"]["zero_output_for_mask_true"] == {"outputs_zero": True, "state_carried": True,
                                                                 "final_state": True}
    for v in ("tf1_static_nolen", "tf1_dynamic_nolen", "keras_nolen"):
        assert res[v]["metrics"]["checks_passed"] == 0.0 and res[v]["metrics"]["final_state_err"] > 1e-3
    d = res["tf1_static"]["details"]
    assert len(d["heatmap"]["z"]) == params["seq_len"] and len(d["heatmap"]["z"][0]) == params["batch"]
    assert d["cudnn_mask"]["right_padded"]["ok"] and not d["cudnn_mask"]["pre_padded"]["ok"]
    assert d["implementation"]["state_per_step_from"].startswith("the state outputs")
    json.dumps([r["details"] for r in res.values()])  # details are JSON
    # outputs for the harness's max_abs_diff: the nolen drift shows there, the others agree with the reference
    ref = res["tf1_dynamic"]["outputs"]
    diff = lambda v: max(np.abs(res[v]["outputs"][k] - ref[k]).max() for k in ref)  # noqa: E731
    assert diff("keras_mask_arg") < 1e-5 and diff("tf1_static") < 1e-5 and diff("keras_nolen") > 1e-3


def test_varlen_observes_a_subset_of_long_sequences():
    from rnnlab.experiments.varlen import observed_steps

    steps = observed_steps([40, 10, 3], 40, limit=8)
    assert {2, 3, 9, 10, 39, 0} <= set(steps) and len(steps) < 40
    assert observed_steps([5, 1], 6) == list(range(6))


@pytest.mark.slow  # TensorFlow workers or a heavy run
def test_padding_smallest_sizes(runs):
    _, params, res = _run(runs, "padding")
    m = {v: r["metrics"] for v, r in res.items()}
    assert m["pad_global"]["n_shapes"] <= 2 and m["pad_global"]["builds"] == 2 * m["pad_global"]["n_shapes"]
    assert m["sort"]["builds"] == 2 * m["sort"]["n_shapes"]  # one trace per shape, none during the epochs
    assert m["static_fixed"]["builds"] == 1.0 and m["dynamic_bucket"]["builds"] == 1.0
    assert m["sort"]["wasted_pct"] <= m["pad_batch"]["wasted_pct"] <= m["pad_global"]["wasted_pct"]
    assert m["bucket"]["wasted_pct"] < m["pad_global"]["wasted_pct"]
    assert m["static_fixed"]["wasted_pct"] == m["pad_global"]["wasted_pct"]
    assert m["dynamic_bucket"]["padded_steps"] == m["bucket"]["padded_steps"]
    for r in m.values():
        assert r["fwd_seq_per_s"] > 0 and r["train_seq_per_s"] > 0
        assert r["real_steps"] == m["pad_global"]["real_steps"]


@pytest.mark.slow  # TensorFlow workers or a heavy run
def test_seed003_smallest_sizes_and_verdict(runs):
    from rnnlab.experiments.seeds import SEED_003_FIGURES
    from rnnlab.present.varlen import seed003_verdict

    exp, params, res = _run(runs, "seed003")
    longest = float(params["lengths"].split(":")[1])  # fixed:N
    recs = [record("seed003", v, params, env=BOX_ENV, key=v, created_at="2024-01-01T00:00:00Z", **r["metrics"])
            for v, r in res.items()]
    for r in res.values():
        m = r["metrics"]
        assert m["cell_steps_run"] == m["loop_steps_max"] == longest  # both stop at max(sequence_length)
        assert m["together_s"] > m["build_s"] and m["steps_per_s"] > 0
        assert r["details"]["seed_claims"] in (SEED_003_FIGURES["static"], SEED_003_FIGURES["dynamic"])
    assert res["static"]["metrics"]["graph_nodes"] > res["dynamic"]["metrics"]["graph_nodes"]
    text = seed003_verdict(recs).text
    assert "Verdict:" in text and "smaller configuration" in text and f"max(sequence_length) = {longest:g}" in text
    assert SEED_003_FIGURES["static"]["steps_per_s"] == pytest.approx(20.3, abs=0.01)
    assert SEED_003_FIGURES["dynamic"]["first_interval_steps_per_s"] == pytest.approx(5.27, abs=0.01)
    assert exp.presets["seed"]["seq_len"] == 300 and exp.presets["seed"]["lengths"] == "fixed:20"


_SEED_PARAMS = {"units": 200, "batch": 200, "seq_len": 300, "input_dim": 16, "lengths": "fixed:20"}


def _rec(variant, sps, build, *, error=None, source="local", **extra):
    """A seed003 record at the seed's size, its steps per second and build seconds given."""
    m = {"steps_per_s": sps, "build_s": build, "together_s": build + 10, "first_step_s": 1.0,
         "cell_steps_run": 20.0, "loop_steps_max": 20.0, "graph_nodes": 5000.0, **extra}
    return record("seed003", variant, _SEED_PARAMS, env=BOX_ENV, key=f"{source}-{variant}",
                  created_at="2024-01-01T00:00:00Z", error=error, source=source, **m)


def test_seed003_verdict_follows_the_numbers():
    from rnnlab.present.varlen import seed003_verdict

    holds = seed003_verdict([_rec("static", 20.0, 30.0), _rec("dynamic", 5.0, 1.0)]).text
    assert "the conclusion holds here" in holds and "the seed's exact configuration" in holds
    assert "static_rnn does run faster here: it runs 4.00x faster than dynamic_rnn" in holds
    reversed_ = seed003_verdict([_rec("static", 2.0, 30.0), _rec("dynamic", 5.0, 1.0)]).text
    assert "does not hold" in reversed_ and "it runs 2.50x slower than dynamic_rnn" in reversed_
    same = seed003_verdict([_rec("static", 5.2, 1.1), _rec("dynamic", 5.0, 1.0)]).text
    assert "does not hold" in same and "does not run faster by the 10% margin here: it runs about as fast" in same
    assert "not slower to build by the 10% margin: it builds about as fast as dynamic_rnn" in same
    failed = _rec("dynamic", 0, 0, error="timed out")
    assert "Cannot judge" in seed003_verdict([_rec("static", 2.0, 3.0), failed]).text


# static faster and slower to build / dynamic faster / within the margin / static faster, builds as fast / no dynamic
VERDICT_CASES = {
    "static faster": ((20.0, 30.0), (5.0, 1.0)),
    "dynamic faster": ((2.0, 30.0), (5.0, 1.0)),
    "within the margin": ((5.2, 1.05), (5.0, 1.0)),
    "static faster, builds as fast": ((20.0, 1.0), (5.0, 1.0)),
    "just past the margin": ((5.6, 1.2), (5.0, 1.0)),
}


@pytest.mark.parametrize("case", list(VERDICT_CASES))
@pytest.mark.parametrize("source", ["local", "baseline"])
def test_seed003_verdict_is_the_claims_tables(case, source):
    """The page's verdict and the Claims table (claims.evaluate, as ``python -m rnnlab claims``) on the same
    records: each claim's status, and the conclusion holds only when both hold."""
    from rnnlab.judge import claims
    from rnnlab.present.varlen import SEED003_CLAIMS, seed003_verdict

    (ss, sb), (ds, db) = VERDICT_CASES[case]
    recs = [_rec("static", ss, sb, source=source), _rec("dynamic", ds, db, source=source)]
    table = {c.id: v.status for c, v in claims.evaluate(recs)}
    v = seed003_verdict(recs)
    assert [(cid, verdict.status) for cid, _, verdict in v.claims] == [(cid, table[cid]) for cid, _ in SEED003_CLAIMS]
    both = [table[cid] for cid, _ in SEED003_CLAIMS]
    assert v.status == ("holds" if both == ["holds", "holds"] else "does not hold" if "does not hold" in both
                        else both[0])
    assert v.headline.startswith(f"Verdict: the conclusion {v.status} ")
    for (_, words, verdict) in v.claims:
        assert f"\u201c{words}\u201d {verdict.status}" in v.text
    if source == "baseline":  # bundled: whose machine, never "here"
        assert "here" not in v.headline.replace("not measurable here", "")
        assert "On the bundled results' CPU (test box)" in v.text and "measured here" not in v.text


@pytest.mark.slow  # a Python process of its own
def test_declaring_the_experiments_imports_no_tensorflow():
    import subprocess
    import sys

    code = ("import sys, importlib\n"
            "for m in ('varlen', 'padding', 'seed003'):\n"
            "    e = importlib.import_module('rnnlab.experiments.' + m).EXPERIMENT\n"
            "    assert e.name == m and e.worker.startswith('rnnlab.experiments.' + m + ':')\n"
            "    assert set(e.presets) == {'quick', 'seed', 'full'} and e.metrics_doc\n"
            "import rnnlab.tf.varlen_checks, rnnlab.tf.batching, rnnlab.tf.varlen_models\n"
            "assert 'tensorflow' not in sys.modules\n")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)
