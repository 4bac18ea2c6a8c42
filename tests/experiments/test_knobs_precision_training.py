"""knobs, precision and training: each worker run in-process at tiny sizes (TensorFlow in this process)."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # TF1 cells: before any TensorFlow import

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rnnlab.engine import api
from rnnlab import experiments  # noqa: E402
from rnnlab.core.errors import RnnlabError, VariantUnsupported  # noqa: E402
from rnnlab.worker.context import WorkerContext  # noqa: E402

TINY = {"cell": "rnn", "units": 8, "layers": 2, "batch": 3, "seq_len": 6, "input_dim": 5, "repeats": 2, "warmup": 0}


def params(exp, **kw):
    return experiments.get(exp).params.fill(kw)


def as_record(exp, variant, p, out, source="local"):
    """A worker's output as the store would hold it (for the words ``rnnlab.present.claims`` writes over it)."""
    from tests.factories import record

    return record(exp, variant, p, env={"device": "CPU", "machine": "Test CPU, 2 cores"}, key="0" * 64,
                  created_at="2024-01-01T00:00:00Z", details=out.get("details", {}), source=source,
                  **out.get("metrics", {}))


PROSE = ("dtype_note", "policy_finding", "note")  # sentences a worker once stored: the page composes its own


# -- knobs -------------------------------------------------------------------------------------------------------

def test_knobs_registered_and_planned():
    exp = experiments.get("knobs")
    assert exp.reference == "dynamic_default" and exp.page == "claims"
    assert set(exp.presets) == {"quick", "seed", "full"} and len(exp.presets["quick"]["variants"]) <= 4
    assert api.plan("knobs", preset="quick", available_mb=10_000).n_tasks == 3
    with pytest.raises(RnnlabError, match="first_n"):
        api.plan("knobs", overrides={"seq_len": 10, "first_n": 20}, variants=["static_first_n"], available_mb=10_000)


@pytest.mark.slow  # TensorFlow workers or a heavy run
def test_knobs_dynamic_variants_carry_their_knob():
    from rnnlab.experiments import knobs

    p = params("knobs", **TINY, first_n=4)
    ref = knobs.run_variant(p, "dynamic_default", WorkerContext())
    for v, key, val in (("dynamic_pi1", "parallel_iterations", 1), ("dynamic_time_major", "time_major", True),
                        ("dynamic_swap", "swap_memory", True)):
        out = knobs.run_variant(p, v, WorkerContext())
        assert out["details"][key] == val
        assert out["metrics"]["ref_abs_diff"] < 1e-5
        for k in ref["outputs"]:
            np.testing.assert_allclose(out["outputs"][k], ref["outputs"][k], atol=1e-5)
    assert ref["details"]["parallel_iterations"] == 32 and ref["details"]["swap_memory"] is False
    for m in ("build_s", "fwd_ms", "train_ms", "graph_nodes"):
        assert ref["metrics"][m] > 0


@pytest.mark.slow  # TensorFlow workers or a heavy run
def test_knobs_static_first_n():
    from rnnlab.experiments import knobs

    p = params("knobs", **TINY, first_n=4)
    out = knobs.run_variant(p, "static_first_n", WorkerContext())
    m, d = out["metrics"], out["details"]
    assert m["seed_code_runs"] == 0.0  # tf.unstack(x, num=4) on 6 steps refuses
    assert "Dimension must be 4 but is 6" in d["seed_code_error"]
    assert d["seed_code_error_unknown_time"]  # and fails at run time when the time axis is unknown
    assert m["ref_abs_diff"] < 1e-5 and m["outputs_first_n_vs_full"] < 1e-5  # the first 4 steps: same numbers
    assert m["final_state_vs_full"] > 1e-3  # the final state is not the full sequence's
    assert m["steps_unrolled"] == 4 and "outputs" not in out
    full = knobs.run_variant(p, "static_full", WorkerContext())
    assert full["metrics"]["graph_nodes"] > m["graph_nodes"]
    # first_n == seq_len: the seed's line runs
    same = knobs.run_variant(params("knobs", **TINY, first_n=6), "static_first_n", WorkerContext())
    assert same["metrics"]["seed_code_runs"] == 1.0 and same["metrics"]["final_state_vs_full"] < 1e-5
    with pytest.raises(VariantUnsupported):
        knobs.run_variant(p, "nope", WorkerContext())


# -- precision ---------------------------------------------------------------------------------------------------

@pytest.mark.slow  # TensorFlow workers or a heavy run
def test_precision_keras_and_tf1_cast():
    from rnnlab.experiments import precision
    from rnnlab.present.claims import dtype_note

    p = params("precision", **{**TINY, "cell": "lstm", "layers": 1})
    f32 = precision.run_variant(p, "keras_float32", WorkerContext())
    assert f32["metrics"]["ref_abs_diff"] < 1e-5 and f32["metrics"]["matmul_vs_float32"] == pytest.approx(1.0)
    assert "native" in dtype_note(as_record("precision", "keras_float32", p, f32))
    assert not set(PROSE) & set(f32["details"])  # numbers and facts only
    for v in ("keras_bfloat16", "tf1_dynamic_mixed_float16", "tf1_dynamic_bfloat16"):
        out = precision.run_variant(p, v, WorkerContext())
        m = out["metrics"]
        drift = max(np.max(np.abs(out["outputs"][k] - f32["outputs"][k])) for k in f32["outputs"])
        assert 1e-5 < drift < 0.1, v  # reduced precision: visible drift, still the same function
        assert 1e-5 < m["ref_abs_diff"] < 0.1
        assert m["train_ms"] > 0 and m["matmul_gflops"] > 0
        assert m["fwd_vs_float32"] == pytest.approx(m["fwd_ms"] / m["fwd_ms_float32"])
        note = dtype_note(as_record("precision", v, p, out))
        assert f"{precision.split(v)[0]} in {precision.split(v)[1]}" in note
        assert out["details"]["compute_dtype"] in ("float16", "bfloat16") and "dtype_note" not in out["details"]
        assert isinstance(out["details"]["cpu_flags_checked"], list) and "cpu_flags_read" in out["details"]
    assert precision.split("keras_cell_mixed_float16") == ("keras_cell", "mixed_float16")


@pytest.mark.slow  # TensorFlow workers or a heavy run
def test_precision_policy_is_ignored_by_dynamic_rnn():
    import tensorflow as tf

    from rnnlab.experiments import precision
    from rnnlab.present.claims import dtype_note

    p = params("precision", **{**TINY, "cell": "gru", "layers": 1})
    out = precision.run_variant(p, "tf1_dynamic_policy", WorkerContext())
    m, d = out["metrics"], out["details"]
    assert m["policy_runs"] == 1.0
    assert m["policy_float16_matmuls"] == 0 and m["policy_float32_matmuls"] > 0
    assert d["policy_output_dtype"] == "float32" and not set(PROSE) & set(d)
    assert "ignored" in dtype_note(as_record("precision", "tf1_dynamic_policy", p, out))
    assert m["ref_abs_diff"] < 1e-5
    assert tf.keras.mixed_precision.global_policy().name == "float32"  # restored


def test_dtype_note_says_slow():
    from rnnlab.present.claims import dtype_note

    def note(variant, ratio, flags, device="CPU", source="local", **m):
        r = as_record("precision", variant, {}, {"metrics": {"matmul_vs_float32": ratio, **m},
                                                 "details": {"cpu_flags_checked": sorted(flags)}}, source)
        return dtype_note(r.with_(env={**r.env, "device": device}))

    assert "SLOW" in note("keras_bfloat16", 0.2, set()) and "no native bfloat16" in note("keras_bfloat16", 0.2, set())
    assert "FASTER" in note("keras_bfloat16", 2.5, {"amx_bf16"})
    assert "avx512_bf16" in note("keras_bfloat16", 1.5, {"avx512_bf16"})
    assert "GPU" in note("keras_mixed_float16", 4.0, set(), device="GPU")
    assert "keras in bfloat16 runs its forward pass 3.00x slower than float32" in note(
        "keras_bfloat16", 0.5, set(), fwd_vs_float32=3.0)
    # whose CPU: "this CPU" only for this machine's records
    assert "this CPU has no native" in note("keras_bfloat16", 0.2, set())
    bundled = note("keras_bfloat16", 0.2, set(), source="baseline") + note("tf1_dynamic_policy", 0.7, set(),
                                                                            source="baseline", policy_runs=1.0,
                                                                            policy_float16_matmuls=0.0)
    assert "this CPU" not in bundled and "here" not in bundled and "the measuring CPU" in bundled


# -- training ----------------------------------------------------------------------------------------------------

@pytest.mark.slow  # TensorFlow workers or a heavy run
def test_training_same_start_same_path():
    from rnnlab.experiments import training

    p = params("training", cell="lstm", units=8, batch=64, epochs=2, dataset="digits", lr=0.02, target_acc=0.2)
    outs = {v: training.run_variant(p, v, WorkerContext())
            for v in ("tf1_dynamic", "tf1_static", "tf2_while", "keras", "keras_cell")}
    ref = outs["tf1_dynamic"]
    d = ref["details"]
    assert d["dataset"]["name"] == "digits" and d["dataset"]["steps"] == 8 and d["dataset"]["features"] == 8
    assert len(d["acc_curve"]) == 2 and ref["metrics"]["steps_per_epoch"] == 1437 // 64
    for v, out in outs.items():
        m = out["metrics"]
        assert m["initial_acc"] == pytest.approx(ref["metrics"]["initial_acc"]), v  # the same initial weights
        assert m["initial_loss"] == pytest.approx(ref["metrics"]["initial_loss"], abs=1e-5), v
        assert abs(m["final_acc"] - ref["metrics"]["final_acc"]) <= 0.02, v  # the same path, up to rounding
        assert np.max(np.abs(out["outputs"]["test_probs"] - ref["outputs"]["test_probs"])) < 1e-2, v
        assert m["epoch_s"] > 0 and m["build_s"] > 0
    assert ref["metrics"]["final_acc"] > ref["metrics"]["initial_acc"]
    assert "time_to_target_s" in ref["metrics"] and ref["metrics"]["epochs_to_target"] >= 1


@pytest.mark.slow  # TensorFlow workers or a heavy run
def test_training_eager_and_tf2_unrolled_gru():
    from rnnlab.experiments import training

    p = params("training", cell="gru", units=4, batch=256, epochs=1, dataset="digits", target_acc=1.0)
    a = training.run_variant(p, "keras_eager", WorkerContext())
    b = training.run_variant(p, "tf2_unrolled", WorkerContext())
    assert a["metrics"]["build_s"] == 0.0
    assert "time_to_target_s" not in a["metrics"]  # never reached: absent, not zero
    assert np.max(np.abs(a["outputs"]["test_probs"] - b["outputs"]["test_probs"])) < 1e-3


@pytest.mark.slow  # loads scikit-learn's digits
def test_training_refuses_missing_mnist(monkeypatch, tmp_path):
    from rnnlab.experiments import training
    from rnnlab.tf import training_data

    monkeypatch.setattr(training_data, "MNIST_PATH", tmp_path / "mnist.npz")  # the plan's check and load_data
    with pytest.raises(RnnlabError, match="never downloads"):
        api.plan("training", overrides={"dataset": "mnist"})
    assert training.load_data({"dataset": "auto", "seed": 0})["name"] == "digits"


def test_training_summary_is_pure_words():
    from rnnlab.present.claims import summarize
    from tests.factories import record

    def r(v, acc, epoch_s, curve, **m):
        return record("training", v, {"target_acc": 0.7}, env={}, key=str(len(v)).rjust(64, "0"),
                      created_at="2024-01-01T00:00:00Z", details={"acc_curve": curve}, final_acc=acc,
                      epoch_s=epoch_s, initial_acc=0.1, **m)

    same = [r("tf1_dynamic", 0.8, 1.0, [0.5, 0.8], time_to_target_s=3.0),
            r("keras", 0.8, 0.5, [0.5, 0.8], max_abs_diff=1e-6, time_to_target_s=2.0)]
    text = summarize(same)
    assert "same test accuracy, 80.0%" in text and "identical per-epoch curves" in text
    assert "keras in 2.00 s" in text and "2.00x" in text  # rnnlab.core.format's numbers
    diff = [r("tf1_dynamic", 0.8, 1.0, [0.5, 0.8]), r("keras", 0.75, 0.5, [0.5, 0.75])]
    assert "ranges from 75.0% (keras) to 80.0% (tf1_dynamic)" in summarize(diff)
    assert "No training records" in summarize([])
    assert "python -m rnnlab run training --preset quick" in summarize([])  # the command of a Plan
    bundled = summarize([x.with_(source="baseline", env={"device": "CPU", "machine": "Xeon, 2 cores"}) for x in same])
    assert "on the bundled results' CPU (Xeon, 2 cores)" in bundled and "this CPU" not in bundled
