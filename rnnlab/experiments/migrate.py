"""Experiment ``migrate``: TF1 RNN cells to Keras 3 layers, checked live on this install.

Variants:

* ``convert_verify`` -- the converter end to end: a TF1 ``cell`` x ``layers`` stack with random weights is saved by
  ``tf.compat.v1.train.Saver``, read back with ``rnnlab.tf.convert.read_tf1_checkpoint``, converted, written as
  a ``.keras`` file, loaded with ``keras.models.load_model``, and run against the original TF1 graph on the same
  inputs, with full lengths and with ``sequence_length`` (``lengths``).
* ``seed004_construct`` -- seed 004's ``RNN(tf.compat.v1.nn.rnn_cell.LSTMCell(n))`` (which the seed calls
  "cuDNN-based") tried in fresh interpreters under Keras 3 and under the seed's own imports; errors captured
  verbatim, plus what Keras 3's cuDNN rules say (``rnnlab.tf.cudnn``).
* ``check_<row>`` -- one per row of ``rnnlab.tf.mapping``: the TF1 construct against its Keras 3 replacement.

Tolerance: ``rnnlab.core.rules.ATOL`` (1e-5, float32). No reference variant: every variant compares against TF1 itself.
"""

from __future__ import annotations

import time

from rnnlab.tf.mapping import BY_KEY, CHECK_NAMES
from rnnlab.core.params import param_set
from rnnlab.core.rules import ATOL
from rnnlab.experiments.base import Experiment

CHECK_VARIANTS = tuple(f"check_{n}" for n in CHECK_NAMES)
VARIANTS = ("convert_verify", "seed004_construct") + CHECK_VARIANTS
LABELS = {"convert_verify": "TF1 checkpoint -> converter -> .keras, vs the TF1 graph",
          "seed004_construct": "seed 004: keras.layers.RNN(tf.compat.v1 LSTMCell) under Keras 3",
          **{f"check_{k}": f"{BY_KEY[k].tf1.split('(')[0]} -> Keras 3" for k in CHECK_NAMES}}

METRICS_DOC = {
    "max_abs_diff": "max abs difference between the TF1 construct and its Keras 3 replacement, outputs and final "
                    "states, all cases (here, not against a reference variant)",
    "max_abs_diff_outputs": "convert_verify: max abs difference of the output sequences, absolute",
    "max_abs_diff_states": "convert_verify: max abs difference of the final states (h, and c for LSTMs), absolute",
    "passed": f"1 when every difference is <= {ATOL:g} (float32) and the row's trap checks hold, else 0",
    "convert_s": "convert_verify: reading the checkpoint and building the Keras 3 model, s",
    "run_s": "wall time of the variant's work in the worker, s",
    "keras3_call_ok": "seed004_construct: 1 if keras.layers.RNN(TF1 LSTMCell)(x) ran under Keras 3, else 0",
    "keras3_with_initial_state_ok": "seed004_construct: 1 if it ran when given initial_state explicitly",
    "keras3_trainable_weights": "seed004_construct: trainable weights Keras 3 sees in that layer (the cell has 2)",
    "cudnn_eligible": "seed004_construct: 1 if Keras 3's rules would run the construct on cuDNN (they never do)",
}

_DEFAULTS = {"cell": "lstm", "units": 16, "layers": 2, "batch": 4, "seq_len": 12, "input_dim": 8,
             "lengths": "uniform:1-12", "seed": 0, "timeout_s": 300}

EXPERIMENT = Experiment(
    name="migrate",
    version=1,
    title="Migrating TF1 RNN cells to Keras 3 layers",
    summary="Each TF1 RNN construct (cells, MultiRNNCell, dynamic/static/bidirectional RNN, wrappers) against its "
            "Keras 3 replacement on identical weights and inputs; a TF1 checkpoint converted to a .keras file and "
            f"verified to {ATOL:g}; what seed 004's 'cuDNN-based' construct does under Keras 3.",
    params=param_set(["cell", "units", "layers", "batch", "seq_len", "input_dim", "lengths", "seed", "timeout_s"],
                     defaults=_DEFAULTS),
    variants=VARIANTS,
    default_variants=("convert_verify", "seed004_construct") + CHECK_VARIANTS,
    worker="rnnlab.experiments.migrate:run_variant",
    reference=None,
    presets={
        "quick": {"cell": "lstm", "units": 8, "layers": 2, "batch": 3, "seq_len": 6, "input_dim": 4,
                  "lengths": "uniform:1-6", "variants": ["convert_verify", "check_dynamic_rnn"]},
        # seed 004: LSTMCell(rnn_units=32) over MNIST rows (28 steps of 28 features), batch 32
        "seed": {"cell": "lstm", "units": 32, "layers": 1, "batch": 32, "seq_len": 28, "input_dim": 28,
                 "lengths": "full", "variants": ["seed004_construct", "convert_verify", "check_lstm_cell"]},
        "full": {"cell": ["rnn", "lstm", "gru"], "layers": [1, 2, 3],
                 "variants": ["convert_verify", *CHECK_VARIANTS]},
    },
    metrics_doc=METRICS_DOC,
    page="migrate",
    work_s=20.0,
)


def run_variant(params: dict, variant: str, ctx) -> dict:
    """Worker entry point (imports TensorFlow through rnnlab.tf.migrate_checks, inside the worker only)."""
    from rnnlab.core.errors import VariantUnsupported
    from rnnlab.tf import migrate_checks as checks, cudnn

    t0 = time.perf_counter()
    if variant == "convert_verify":
        res = checks.convert_roundtrip(params, on_phase=ctx.phase)
        metrics = {"max_abs_diff": res["max_abs_diff"], "max_abs_diff_outputs": res["max_abs_diff_outputs"],
                   "max_abs_diff_states": res["max_abs_diff_states"], "passed": float(res["pass"]),
                   "convert_s": res["convert_s"]}
        details = {"diffs": res["diffs"], "atol": res["atol"], **res["details"]}
    elif variant == "seed004_construct":
        ctx.phase("seed004")
        scen = checks.seed004_construct(units=params["units"], timeout_s=max(60, params["timeout_s"] - 30))
        ok, reasons = cudnn.cudnn_eligibility("RNN", cell="tf.compat.v1.nn.rnn_cell.LSTMCell(n)")
        k3 = scen.get("keras3_RNN_of_tf1_LSTMCell", {})
        k3i = scen.get("keras3_RNN_of_tf1_LSTMCell_initial_state", {})
        metrics = {"keras3_call_ok": float(k3.get("result") == "ok"),
                   "keras3_with_initial_state_ok": float(k3i.get("result") == "ok"),
                   "cudnn_eligible": float(ok)}
        tw = (k3i.get("notes") or {}).get("keras3_layer_trainable_weights")
        if tw is not None:
            metrics["keras3_trainable_weights"] = float(tw)
        details = {"summary": checks.summarize_seed004(scen), "scenarios": scen,
                   "cudnn_rules": {"eligible": ok, "reasons": reasons}, "cpu_path": cudnn.CPU_PATH,
                   "correction": "Seed 004 wraps tf.compat.v1.nn.rnn_cell.LSTMCell in RNN and calls it "
                                 "cuDNN-based. It is not: RNN(cell) always runs the generic loop, a TF1 cell is no "
                                 "Keras 3 cell at all, and on CPU Keras 3 has no fused kernel. The Keras 3 "
                                 "construct that can use cuDNN (on a GPU) is keras.layers.LSTM(32, "
                                 "return_sequences=True) with default activations, recurrent_dropout=0, "
                                 "unroll=False, use_bias=True."}
    elif variant in CHECK_VARIANTS:
        name = variant[len("check_"):]
        ctx.phase("check")
        res = checks.run_check(name, params)
        row = BY_KEY[name]
        metrics = {"max_abs_diff": res["max_abs_diff"], "passed": float(res["pass"])}
        details = {"diffs": res["diffs"], "atol": res["atol"], **res["details"], "tf1": row.tf1,
                   "keras3_code": row.keras3_code, "no_equivalent": list(row.no_equivalent),
                   "not_checked": list(row.not_checked)}
    else:
        raise VariantUnsupported(f"unknown migrate variant {variant!r}")
    metrics["run_s"] = time.perf_counter() - t0
    return {"metrics": metrics, "details": details}
