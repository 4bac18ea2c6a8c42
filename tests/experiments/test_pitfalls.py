"""Issue 5: the pitfalls experiment, run in-process at tiny sizes.

The assertions are what TensorFlow 2.21 / Keras 3.15 were observed to do: a shared MultiRNNCell builds (with a third
of the variables) only when input_dim == units and otherwise fails with a MatMul shape error, and so on. If a
TensorFlow upgrade changes a behaviour, the failing assertion names the pitfall whose page text needs a look.
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # before any TensorFlow import: TF1 cells need tf-keras
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import json  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

from rnnlab.experiments.pitfalls import EXPERIMENT, PITFALLS, run_source, run_variant  # noqa: E402
from rnnlab.worker.context import WorkerContext  # noqa: E402

TINY = {"units": 8, "input_dim": 4, "batch": 3, "seq_len": 5, "seed": 1}  # batch != seq_len, input_dim != units
_cache: dict = {}


def run(variant, cell="rnn", **over):
    key = (variant, cell, tuple(sorted(over.items())))
    if key not in _cache:
        params = EXPERIMENT.params.fill({**TINY, "cell": cell, **over})
        ctx = WorkerContext()
        _cache[key] = run_variant(params, variant, ctx)
        assert ctx.phases, "the worker reports at least one phase"
    return _cache[key]


def case(res, label):
    return next(c for c in res["details"]["cases"] if c["case"] == label)


# --- contract, no TensorFlow -------------------------------------------------------------------------------------------

@pytest.mark.slow  # a Python process of its own
def test_module_imports_no_tensorflow():
    code = "import sys, rnnlab.experiments.pitfalls as m; assert m.PITFALLS; assert 'tensorflow' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def test_pitfalls_table_matches_variants():
    assert tuple(PITFALLS) == EXPERIMENT.variants
    assert EXPERIMENT.worker == "rnnlab.experiments.pitfalls:run_variant" and EXPERIMENT.reference is None
    assert EXPERIMENT.page == "pitfalls"
    for v, spec in PITFALLS.items():
        for k in ("title", "wrong_code", "right_code", "explanation"):
            assert isinstance(spec[k], str) and spec[k].strip(), (v, k)
        for src in [spec["wrong_code"], spec["right_code"], *spec.get("variations", {}).values()]:
            compile(src, f"<{v}>", "exec")
    defaults = EXPERIMENT.params.defaults()
    assert (defaults["units"], defaults["input_dim"], defaults["batch"], defaults["seq_len"]) == (16, 8, 4, 6)
    assert EXPERIMENT.presets["seed"] == {"cell": "rnn", "units": 128, "input_dim": 64, "batch": 32, "seq_len": 100}
    assert EXPERIMENT.presets["full"]["cell"] == ["rnn", "lstm", "gru"]
    assert set(EXPERIMENT.presets["quick"]["variants"]) <= set(EXPERIMENT.variants)


def test_run_source_names_the_offending_statement():
    src = "a = 1\nb = [1, 2,\n     3][a + 5]\nc = 3\n"
    ns = {}
    err = run_source(src, ns, "<t>")
    assert err["error_type"] == "IndexError" and err["error_lineno"] == 2
    assert err["error_line"] == "b = [1, 2,\n     3][a + 5]"
    assert run_source("z = 2\n", ns, "<t2>") is None and ns["z"] == 2


# --- common shape of every result -------------------------------------------------------------------------------------

@pytest.mark.slow  # TensorFlow workers or a heavy run
@pytest.mark.parametrize("variant", EXPERIMENT.variants)
def test_every_variant_reports_and_its_fix_passes(variant):
    res = run(variant)
    m, d = res["metrics"], res["details"]
    assert d["check_passed"] is True and m["check_passed"] == 1.0, d["check"]
    assert d["tf_version"].startswith("2.")
    assert all(isinstance(v, float) and math.isfinite(v) for v in m.values())
    assert set(m) <= set(EXPERIMENT.metrics_doc), set(m) - set(EXPERIMENT.metrics_doc)
    assert isinstance(d["builds"], bool) and d["result"] and d["cases"]
    json.dumps(d, allow_nan=False)  # records are JSON
    if d["builds"]:
        assert d["error"] is None and d["error_line"] is None
    else:  # verbatim error and the user's line that raised it
        assert d["error_type"] and d["error"] and d["error_line"]
        assert d["error_line"] in PITFALLS[variant]["wrong_code"]
    if "right_ref_abs_diff" in m:
        assert m["right_ref_abs_diff"] < 1e-4


# --- cell sharing, TF1 -------------------------------------------------------------------------------------------------

@pytest.mark.slow  # TensorFlow workers or a heavy run
@pytest.mark.parametrize("variant,cell", [("tf1_shared_dynamic", "rnn"), ("tf1_shared_dynamic", "lstm"),
                                          ("tf1_shared_dynamic", "gru"), ("tf1_shared_static", "rnn")])
def test_tf1_shared_cell(variant, cell):
    res = run(variant, cell)
    m, d = res["metrics"], res["details"]
    eq, ne = case(res, "input_dim == units"), case(res, "input_dim != units")
    # input_dim == units: builds silently, one layer's variables serve all three layers
    assert eq["builds"] and m["wrong_builds_same_dim"] == 1.0
    assert eq["layers_same_object"] and eq["kernels_same_tensor"]
    assert 3 * m["distinct_kernels_wrong"] == m["distinct_kernels_right"]
    assert 3 * m["distinct_vars_wrong"] == m["distinct_vars_right"]
    assert 3 * m["params_wrong"] == m["params_right"]
    assert all("cell_0/" in n for n in eq["variable_names_wrong"])
    assert m["max_abs_diff_vs_tied"] < 1e-6  # == a correct stack given the shared weights in every layer
    assert m["max_abs_diff_vs_correct"] > 1e-3  # != the correct stack with its own weights
    # input_dim != units: graph construction fails with a MatMul shape error at the rnn call
    assert not ne["builds"] and m["wrong_builds_diff_dim"] == 0.0
    assert ne["error_type"] == "ValueError" and "Dimensions must be equal" in ne["error"]
    assert "MatMul" in ne["error"] and ne["stage"] == "build"
    assert ("dynamic_rnn(cell, x" if variant.endswith("dynamic") else "static_rnn(cell, tf.unstack") in ne["error_line"]
    assert not d["builds"] and d["error"] == ne["error"]  # params as given have input_dim != units
    assert eq["check_passed"] and ne["check_passed"]


@pytest.mark.slow  # TensorFlow workers or a heavy run
def test_tf1_shared_with_equal_params_tries_units_plus_input_dim():
    res = run("tf1_shared_dynamic", input_dim=8)  # == units
    assert res["details"]["builds"] is True
    assert case(res, "input_dim != units")["input_dim"] == 16 and res["details"]["input_dim_diff_case"] == 16


# --- cell sharing, Keras 3 ---------------------------------------------------------------------------------------------

@pytest.mark.slow  # runs TensorFlow in this process
@pytest.mark.parametrize("variant", ["keras_shared_sequential", "keras_shared_stacked_cells"])
def test_keras_shared(variant):
    res = run(variant)
    m, d = res["metrics"], res["details"]
    eq, ne = case(res, "input_dim == units"), case(res, "input_dim != units")
    assert eq["builds"] and eq["positions"] == 3 and eq["positions_same_object"] and eq["weights_same_objects"]
    assert 3 * m["params_wrong"] == m["params_right"] and 3 * m["distinct_vars_wrong"] == m["distinct_vars_right"]
    assert m["max_abs_diff_vs_tied"] < 1e-6 and m["max_abs_diff_vs_correct"] > 1e-3
    assert m["others_changed_wrong"] > 0 and m["others_changed_right"] == 0.0  # training one moved the others
    # input_dim != units: the model is constructed, the first call fails
    assert ne["constructed"] and not ne["builds"] and "size-incompatible" in ne["error"]
    assert ne["error_line"] == "out = model(data)" and d["keras_version"].startswith("3.")


# --- shape mistakes ----------------------------------------------------------------------------------------------------

@pytest.mark.slow  # runs TensorFlow in this process
@pytest.mark.parametrize("variant", ["shape_time_major", "shape_batch_major"])
def test_time_major_mixups_run_silently_and_wrong(variant):
    res = run(variant)
    m, d = res["metrics"], res["details"]
    main = d["cases"][0]
    assert d["builds"] and m["wrong_builds"] == 1.0
    assert main["out_shape_wrong"] == main["out_shape_right"]  # same shape...
    assert m["max_abs_diff_vs_correct"] > 1e-2  # ...different numbers
    assert main["state_shapes_wrong"] == [[TINY["seq_len"], TINY["units"]]]  # the first axis read as the batch
    assert main["state_shapes_right"] == [[TINY["batch"], TINY["units"]]]


@pytest.mark.slow  # runs TensorFlow in this process
def test_2d_input():
    res = run("shape_2d_input")
    d = res["details"]
    assert d["error_type"] == "ValueError" and "must have rank at least 3" in d["error"]
    assert "dynamic_rnn(Cell(units), x," in d["error_line"]
    assert "must be a sequence" in case(res, "static_rnn given the 2-D tensor itself")["error"]
    assert "expected ndim=2, found ndim=1" in case(res, "static_rnn given tf.unstack of the 2-D tensor")["error"]


@pytest.mark.slow  # runs TensorFlow in this process
def test_zero_state_for_another_batch():
    res = run("shape_zero_state_batch")
    d = res["details"]
    assert d["error_type"] == "InvalidArgumentError" and d["stage"] == "run"
    assert "Dimension 0 in both shapes must be equal" in d["error"] and d["error_line"].startswith("out = sess.run(")
    static = case(res, "static batch size in the placeholder")
    assert static["error_type"] == "ValueError" and static["stage"] == "build"
    assert "Dimension 0 in both shapes must be equal, but are 3 and 6" in static["error"]


@pytest.mark.slow  # runs TensorFlow in this process
def test_state_is_tuple_confusion():
    res = run("shape_state_is_tuple", "gru")  # always an LSTM, whatever the cell param
    d = res["details"]
    assert d["cell_used"] == "lstm"
    assert d["error_type"] == "TypeError" and "Python control flow" in d["error"]
    assert "initial_state=init" in d["error_line"]
    v = case(res, "state_is_tuple=False cell given an LSTMStateTuple")
    # the tuple becomes a [2, batch, units] tensor, split in two along axis 1 (the batch): the message depends on
    # whether batch is even (observed: rank 2 vs 3 in the following concat) or odd (the split itself fails)
    assert v["error_type"] == "ValueError" and "evenly divisible by 2 but is 3" in v["error"]
    even = run("shape_state_is_tuple", "gru", batch=4)
    v = case(even, "state_is_tuple=False cell given an LSTMStateTuple")
    assert v["error_type"] == "ValueError" and "Shape must be rank 2 but is rank 3" in v["error"]


@pytest.mark.slow  # runs TensorFlow in this process
def test_lstm_state_index_0_is_c():
    res = run("shape_lstm_state_order")
    m, d = res["metrics"], res["details"]
    assert d["builds"] and m["max_abs_diff_vs_correct"] > 1e-3
    assert d["cases"][0]["max_abs_diff_vs_c"] < 1e-6
    dense = case(res, "a dense layer applied to the whole state tuple")
    assert dense["builds"] and dense["out_shape"] == [2, TINY["batch"], 3]  # silently batched over (c, h)


@pytest.mark.slow  # runs TensorFlow in this process
@pytest.mark.parametrize("cell,etype,fragment", [("rnn", "ValueError", "Expected state to be a tuple of length 3"),
                                                 ("lstm", "TypeError", "Python control flow")])
def test_initial_state_for_a_stack(cell, etype, fragment):
    res = run("shape_initial_state_stack", cell)
    d = res["details"]
    assert d["error_type"] == etype and fragment in d["error"]
    assert case(res, "a tuple of 2 layer states for 3 layers")["error_type"] == "IndexError"
    assert "Dimensions must be equal" in case(res, "3 layer states of the wrong width")["error"]


@pytest.mark.slow  # runs TensorFlow in this process
def test_sequence_length_wrong_length():
    res = run("shape_seq_len_wrong")
    d = res["details"]
    assert d["error_type"] == "InvalidArgumentError" and d["stage"] == "run"
    assert "Expected shape for Tensor rnn/sequence_length:0 is" in d["error"]
    assert "assertion failed" in d["error_summary"]
    assert case(res, "static shapes: a constant of the wrong length")["error_type"] == "ValueError"
    assert "must be a vector of length batch_size" in case(res, "a [1, batch] matrix instead of a vector")["error"]


@pytest.mark.slow  # runs TensorFlow in this process
def test_sequence_length_float_is_truncated():
    res = run("shape_seq_len_dtype")
    m, d = res["metrics"], res["details"]
    main = d["cases"][0]
    assert d["builds"] and m["rows_short"] == TINY["batch"]
    assert main["effective_lengths_wrong"] == [int(x) for x in main["frac_lengths"]]  # truncated toward zero
    assert main["effective_lengths_right"] == main["intended_lengths"]
