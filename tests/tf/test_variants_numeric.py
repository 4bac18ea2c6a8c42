"""Every variant (incl. +xla) computes the same thing as the float64 NumPy reference and as tf1_dynamic.

Tiny sizes, in-process, one config's variants after another. The configs pair cells with layer counts, lengths and
layouts so each cell is seen with 1 and 2 layers, and every cell, layer count and layout with ragged lengths. The first
config runs every variant through the whole measuring protocol (``run_variant``: builds, timings, the train step),
with the XLA forms: XLA is one ``jit_compile`` switch in the TF2 and Keras runners whatever the cell, and compiling it
(the train step most) is most of this file's time. The other configs check what agreement needs: each variant's
outputs after one build and one forward call, the path ``run_variant`` takes to its outputs.
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import math  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rnnlab.core.errors import VariantUnsupported  # noqa: E402
from rnnlab.worker.context import WorkerContext  # noqa: E402
from rnnlab.core.params import PARAMS  # noqa: E402
from rnnlab.tf.variants import BASE_VARIANTS, XLA_VARIANTS, split_xla  # noqa: E402
from rnnlab.tf import measure  # noqa: E402
from rnnlab.tf.measure import METRICS, run_variant  # noqa: E402
from rnnlab.tf.numpy_ref import as_outputs, forward  # noqa: E402
from rnnlab.tf.weights import Problem  # noqa: E402
from tests.factories import once_per_run  # noqa: E402

pytestmark = pytest.mark.slow  # Streamlit pages, a browser or TensorFlow

TOL = 1e-5
SIZES = dict(batch=3, seq_len=5, units=4, input_dim=3, repeats=2, warmup=0)
XLA_FORMS = tuple(v + "+xla" for v in XLA_VARIANTS)

# (cell, layers, lengths, time_major, with XLA forms and the whole protocol)
CONFIGS = [
    ("rnn", 1, "rows:5/3/1", False, True),
    ("rnn", 2, "full", False, False),
    ("lstm", 1, "rows:5/3/1", True, False),
    ("lstm", 2, "rows:5/3/1", False, False),
    ("gru", 1, "full", False, False),
    ("gru", 2, "rows:5/3/1", True, False),
]


def _params(cell, layers, lengths, time_major, **extra):
    p = {k: v.default for k, v in PARAMS.items()}
    p.update(SIZES, cell=cell, layers=layers, lengths=lengths, time_major=time_major, **extra)
    return p


_cache: dict = {}


def _forward_outputs(params, variant):
    """A variant's outputs as ``run_variant`` gets them (build, start, first call), without the timing around them."""
    import tensorflow as tf

    base, xla = split_xla(variant)
    ctx = WorkerContext()
    runner = measure._make_runner(Problem(params), base, xla, ctx)
    try:
        with tf.device(ctx.tf_device):
            runner.build_forward()
            runner.start()
            return runner.result(runner.forward())
    finally:
        runner.close()


def _measured(params):
    """Every variant and XLA form through ``run_variant`` (one warm build: this file checks no build time)."""
    out = {}
    saved, measure.BUILD_REPEATS = measure.BUILD_REPEATS, 1
    try:
        for v in list(BASE_VARIANTS) + list(XLA_FORMS):
            ctx = WorkerContext()
            res = run_variant(params, v, ctx)
            out[v] = (res["outputs"], res, ctx.phases)
    finally:
        measure.BUILD_REPEATS = saved
    return out


@pytest.fixture(scope="session")
def _results(tmp_path_factory):
    """All variants of one config, run once per test run (whichever test process asks first: the whole config's
    variants and XLA forms take 15 CPU-seconds): config -> {variant: (outputs, run_variant's result, its phases)},
    the last two None for a config whose outputs alone are checked."""
    def results(config):
        if config not in _cache:
            cell, layers, lengths, time_major, whole = config

            def make():
                params = _params(cell, layers, lengths, time_major)
                return (params, _measured(params) if whole else
                        {v: (_forward_outputs(params, v), None, None) for v in BASE_VARIANTS})
            _cache[config] = once_per_run(tmp_path_factory, "numeric-" + _ids(config), make)
        return _cache[config]
    return results


def _ids(c):
    return f"{c[0]}-L{c[1]}-{c[2].replace(':', '').replace('/', '_')}" + ("-tm" if c[3] else "") + ("-xla" if c[4] else "")


@pytest.mark.parametrize("config", CONFIGS, ids=[_ids(c) for c in CONFIGS])
def test_variants_agree_with_reference_and_tf1_dynamic(config, _results):
    params, results = _results(config)
    pb = Problem(params)
    ref = as_outputs(*forward(pb.cell, pb.weights, pb.x, pb.lengths))
    base = results["tf1_dynamic"][0]
    assert set(base) == set(ref)
    assert set(results) == set(BASE_VARIANTS) | (set(XLA_FORMS) if config[4] else set())
    bad = []
    for variant, (outs, res, _) in results.items():
        assert set(outs) == set(ref), variant
        for k in ref:
            assert outs[k].dtype == np.float32 and outs[k].shape == ref[k].shape, (variant, k, outs[k].shape)
            d_ref = float(np.max(np.abs(outs[k] - ref[k])))
            d_tf1 = float(np.max(np.abs(outs[k] - base[k])))
            if d_ref > TOL or d_tf1 > TOL:
                bad.append(f"{variant} {k}: vs numpy {d_ref:.2e}, vs tf1_dynamic {d_tf1:.2e}")
        assert res is None or res["metrics"]["ref_abs_diff"] <= TOL, variant
    assert not bad, "\n".join(bad)
    if pb.masked:  # padded steps are zero in every variant's outputs
        pad = ~pb.mask()
        for variant, (outs, _, _) in results.items():
            assert not np.any(outs["outputs"][pad]), variant


def test_metrics_details_and_phases(_results):
    params, results = _results(CONFIGS[0])
    assert set(results) == set(BASE_VARIANTS) | set(XLA_FORMS)
    for variant, (_, res, phases) in results.items():
        m, d = res["metrics"], res["details"]
        assert set(METRICS) <= set(m), (variant, set(METRICS) - set(m))
        assert all(isinstance(m[k], float) and math.isfinite(m[k]) and m[k] >= 0 for k in m), (variant, m)
        assert m["graph_nodes"] > 0 and m["fwd_ms_p25"] <= m["fwd_ms"] <= m["fwd_ms_p75"]
        assert m["first_build_s"] > 0 and m["build_s"] > 0 and m["train_build_s"] > 0, variant  # cold, warm, train
        assert m["train_ms_p25"] <= m["train_ms"] <= m["train_ms_p75"]
        assert d["fwd_flops"] > 0 and d["lengths"] == [5, 3, 1] and d["dtype"] == "float32"
        assert d["xla"] is variant.endswith("+xla")
        assert d["kernel"].startswith("generic"), (variant, d["kernel"])  # CPU: never cuDNN
        assert phases == ["build", "first_call", "forward", "train"], (variant, phases)
    # static unrolling shows in the graph size: the unrolled graphs hold every step, the loops one body
    nodes = {v: r["metrics"]["graph_nodes"] for v, (_, r, _) in results.items()}
    assert nodes["tf1_static"] > nodes["tf1_dynamic"] and nodes["tf2_unrolled"] > nodes["tf2_while"]


@pytest.mark.parametrize("variant", ["tf1_static", "tf1_dynamic", "tf2_unrolled", "tf2_while+xla"])
@pytest.mark.parametrize("dtype", ["mixed_float16", "bfloat16"])
def test_tf1_tf2_refuse_reduced_precision(variant, dtype):
    with pytest.raises(VariantUnsupported, match=f"dtype={dtype}"):
        run_variant(_params("lstm", 1, "full", False, dtype=dtype), variant, WorkerContext())


def test_keras_mixed_precision_runs_close_to_reference():
    res = run_variant(_params("lstm", 2, "rows:5/3/1", False, dtype="mixed_float16"), "keras", WorkerContext())
    assert res["details"]["dtype"] == "mixed_float16"
    assert res["outputs"]["outputs"].dtype == np.float32
    assert 0 < res["metrics"]["ref_abs_diff"] < 1e-2


def test_while_loop_stops_at_longest_row():
    """Rows all shorter than seq_len: loops stop early and the never-run steps are still zero."""
    params = _params("rnn", 1, "rows:4/2/1", False)
    pb = Problem(params)
    ref = as_outputs(*forward(pb.cell, pb.weights, pb.x, pb.lengths))
    for v in ("tf1_dynamic", "tf2_while"):
        res = run_variant(params, v, WorkerContext())
        for k in ref:
            np.testing.assert_allclose(res["outputs"][k], ref[k], atol=TOL, err_msg=f"{v} {k}")


def test_unknown_variant_and_xla_on_tf1_are_refused():
    with pytest.raises(VariantUnsupported):
        run_variant(_params("rnn", 1, "full", False), "tf1_static+xla", WorkerContext())
    with pytest.raises(VariantUnsupported):
        run_variant(_params("rnn", 1, "full", False), "nope", WorkerContext())


def test_keras_cudnn_eligibility_rules():
    """The Keras runners' kernel note: the layer they build, judged by the one cuDNN rule (rnnlab.tf.cudnn)."""
    from rnnlab.tf.cudnn import cudnn_eligibility, kernel_note
    from rnnlab.tf.keras3 import layer_settings

    def reason(cell, variant, device="GPU"):
        layer, settings = layer_settings(Problem(_params(cell, 1, "rows:5/3/1", False)), variant, device)
        assert cudnn_eligibility(layer, **settings)[0] is (kernel_note(layer, **settings) is None)
        return kernel_note(layer, **settings)

    assert reason("lstm", "keras") is None  # defaults, right-padded mask: Keras takes cuDNN on a GPU
    assert reason("lstm", "keras", "CPU") == "CPU: no fused kernel"
    assert "unroll" in reason("lstm", "keras_unroll")
    assert "RNN(cell)" in reason("lstm", "keras_cell")
    assert "reset_after" in reason("gru", "keras")
    assert "SimpleRNN" in reason("rnn", "keras")


def test_gpu_code_path_selected_from_ctx_device():
    """ctx.device="GPU" places ops on /GPU:0 (soft placement runs them on the CPU here) and applies the GPU rules."""
    import tensorflow as tf

    tf.config.set_soft_device_placement(True)  # an earlier test in this process may have turned it off
    ctx = WorkerContext(device="GPU")
    res = run_variant(_params("lstm", 1, "full", False), "keras", ctx)
    assert res["details"]["device"] == "GPU"
    # no GPU visible, so Keras traced no cuDNN op even though the config is eligible
    assert res["details"]["kernel"].startswith("generic (cuDNN-eligible")
    assert res["metrics"]["ref_abs_diff"] <= TOL
    res = run_variant(_params("lstm", 1, "full", False), "tf1_dynamic", ctx)
    assert res["metrics"]["ref_abs_diff"] <= TOL
