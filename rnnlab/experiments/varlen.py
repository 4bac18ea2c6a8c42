"""Experiment ``varlen``: what each implementation does with a padded batch of variable-length sequences.

One layer of the chosen cell, the canonical weights of ``rnnlab.tf.weights``, inputs uniform in [-1, 1) with
every step past a row's length set to zero (a real step is never all-zero, so ``Masking(mask_value=0.0)`` sees
exactly the padding). Per variant, measured live and checked by the pure functions of ``rnnlab.tf.varlen_checks``:

(a) outputs past a row's length are zero, (b) the state is carried through unchanged past the length, (c) the final
state equals the state at step length-1; the final state's and the real steps' outputs' distance from the float64
NumPy reference with lengths (for a variant told no lengths, ``final_state_err`` is how far it drifts); and a heatmap
(time x batch row) of output norms in ``details["heatmap"]``.

Keras layers run with their defaults (GRU with ``reset_after=False``, which is TF1's GRUCell, so the canonical weights
apply). Keras' default ``zero_output_for_mask=False`` repeats the last real output past the length instead of zeros,
so (a) fails for it by design of Keras, not by a bug; the param ``zero_output_for_mask`` flips it, and every masked
Keras record also reports, in ``details["zero_output_for_mask_true"]``, the checks with it set.

``outputs`` (compared with the reference variant ``tf1_dynamic`` as ``max_abs_diff``) hold the real steps' outputs
(padding zeroed) and the final state, so ``max_abs_diff`` is the final-state drift for the ``*_nolen`` variants and
~1e-7 for the others.
"""

from __future__ import annotations

import os
import time

import numpy as np

from rnnlab.core.errors import RnnlabError
from rnnlab.core.params import Param, param_set
from rnnlab.experiments.base import Experiment
from rnnlab.tf import cudnn

VARIANTS = ("tf1_static", "tf1_dynamic", "keras_masking", "keras_mask_arg",
            "tf1_static_nolen", "tf1_dynamic_nolen", "keras_nolen")
LABELS = {
    "tf1_static": "static_rnn with sequence_length",
    "tf1_dynamic": "dynamic_rnn with sequence_length",
    "keras_masking": "Keras 3 layer after Masking(mask_value=0)",
    "keras_mask_arg": "Keras 3 layer called with mask=",
    "tf1_static_nolen": "static_rnn, no sequence_length",
    "tf1_dynamic_nolen": "dynamic_rnn, no sequence_length",
    "keras_nolen": "Keras 3 layer, no mask",
}
MAX_SEQ_LEN = 200
MAX_OBSERVED = 24  # padded steps observed per run besides each row's last real step (see observed_steps)

METRICS_DOC = {
    "check_outputs_zero": "(a) outputs past every row's length are zero: 1 pass, 0 fail",
    "check_state_carried": "(b) the state past every row's length equals the state at step length-1: 1 pass, 0 fail",
    "check_final_state": "(c) the final state equals the state at step length-1 of each row: 1 pass, 0 fail",
    "checks_passed": "how many of (a), (b), (c) passed, 0-3",
    "pad_output_max": "largest |output| at a step past a row's length (0 when zeroed), absolute",
    "pad_state_change_max": "largest |state - state at length-1| at an observed step past a row's length, absolute",
    "final_state_err": "max abs difference of the final state from the float64 NumPy reference with lengths; for "
                       "a variant without lengths this is how far it drifts, absolute",
    "valid_output_err": "max abs difference of the outputs at real steps from the reference, absolute",
    "run_s": "wall time to build and run the variant over every observed prefix, s",
}


def observed_steps(lengths, seq_len: int, limit: int = MAX_OBSERVED) -> list[int]:
    """Steps whose state is recorded: all of them when ``seq_len <= limit``; otherwise each row's last real step,
    the one after it, the last step, and ``limit`` evenly spaced steps."""
    if seq_len <= limit:
        return list(range(seq_len))
    s = {seq_len - 1}
    for L in lengths:
        if L >= 1:  # an empty row has no last real step
            s.add(int(L) - 1)
        if L < seq_len:
            s.add(int(L))
    s |= {int(v) for v in np.linspace(0, seq_len - 1, limit).round()}
    return sorted(s)


def check(p: dict, variants: tuple, **_kw) -> None:
    if p["seq_len"] > MAX_SEQ_LEN:
        raise RnnlabError(f"varlen: seq_len={p['seq_len']} is more than {MAX_SEQ_LEN}; this experiment records the "
                          f"state after each step (a static graph per observed prefix): use seq_len <= {MAX_SEQ_LEN}")


def make_inputs(p: dict) -> tuple[np.ndarray, list[int]]:
    """The padded batch (zeros past each length; no real step all-zero) and the lengths."""
    from rnnlab.core.params import lengths_for
    from rnnlab.tf.weights import make_inputs as _mk

    lengths = lengths_for(p["lengths"], p["batch"], p["seq_len"], p["seed"])
    x = _mk(p["batch"], p["seq_len"], p["input_dim"], p["seed"])
    real = np.arange(p["seq_len"])[None, :] < np.asarray(lengths)[:, None]
    allzero = real & (np.abs(x).max(axis=2) == 0)
    x[allzero, 0] = 0.5  # never happens with uniform floats, but Masking would drop such a step
    return x * real[:, :, None].astype(np.float32), lengths


def run_variant(params: dict, variant: str, ctx) -> dict:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    from rnnlab.core.errors import VariantUnsupported
    from rnnlab.tf import numpy_ref
    from rnnlab.tf.weights import make_weights
    from rnnlab.tf import varlen_checks as checks

    if variant not in VARIANTS:
        raise VariantUnsupported(f"unknown varlen variant {variant!r}")
    p = params
    cell, units, t = p["cell"], p["units"], p["seq_len"]
    x, lengths = make_inputs(p)
    layer = make_weights(cell, 1, units, p["input_dim"], p["seed"])[0]
    observe = observed_steps(lengths, t)

    ctx.phase("build")
    t0 = time.perf_counter()
    res = _run_model(variant, p, layer, x, lengths, ctx, observe)
    run_s = time.perf_counter() - t0

    ctx.phase("check")
    result = checks.run_checks(res["outputs"], res["states"], res["final"], lengths)
    real = checks.valid_mask(lengths, t)
    metrics = _metrics(cell, layer, x, lengths, res, result, real, run_s)
    details = _details(variant, res, lengths, observe, t, result, real)
    _keras_extras(details, variant, p, layer, x, lengths, real, ctx, observe)
    outputs = numpy_ref.as_outputs(np.where(real[:, :, None], res["outputs"], 0.0).astype(np.float32),
                                   [{k: v.astype(np.float32) for k, v in res["final_parts"].items()}])
    return {"metrics": metrics, "details": details, "outputs": outputs}


def _run_model(variant: str, p: dict, layer: dict, x, lengths, ctx, observe) -> dict:
    """The variant's forward pass (``rnnlab.tf.varlen_models``): outputs, states, final state, what ran."""
    from rnnlab.tf import varlen_models as models

    cell, units = p["cell"], p["units"]
    base = variant.replace("_nolen", "")
    if base in ("tf1_static", "tf1_dynamic"):
        return models.run_tf1(cell, layer, x, lengths, units, static=base == "tf1_static",
                              use_lengths=not variant.endswith("_nolen"), device=ctx.tf_device, observe=observe)
    how = {"keras_masking": "masking", "keras_mask_arg": "mask_arg", "keras": "none"}[base]
    return models.run_keras(cell, layer, x, lengths, units, how,
                            zero_output_for_mask=bool(p.get("zero_output_for_mask", False)),
                            device=ctx.tf_device, observe=observe)


def _metrics(cell: str, layer: dict, x, lengths, res: dict, result: dict, real, run_s: float) -> dict:
    """The three checks' outcomes, and the outputs and final state against the float64 reference."""
    from rnnlab.tf import numpy_ref
    from rnnlab.tf import varlen_checks as checks

    out, final = res["outputs"], res["final"]
    ref_out, ref_fin = numpy_ref.forward(cell, [layer], x, lengths)
    ref_flat = np.concatenate([ref_fin[0]["c"], ref_fin[0]["h"]], axis=1) if cell == "lstm" else ref_fin[0]["h"]
    metrics = {
        "check_outputs_zero": float(result["outputs_zero"]["ok"]),
        "check_state_carried": float(result["state_carried"]["ok"]),
        "check_final_state": float(result["final_state"]["ok"]),
        "checks_passed": float(sum(r["ok"] for r in result.values())),
        "final_state_err": checks.max_abs_diff(final, ref_flat),
        "valid_output_err": checks.max_abs_diff(out, ref_out, real[:, :, None] & np.ones_like(out, dtype=bool)),
        "run_s": run_s,
    }
    if result["outputs_zero"]["checked"]:
        metrics["pad_output_max"] = result["outputs_zero"]["worst"]
        metrics["pad_state_change_max"] = result["state_carried"]["worst"]
    return metrics


def _details(variant: str, res: dict, lengths, observe, t: int, result: dict, mask) -> dict:
    from rnnlab.tf import varlen_checks as checks

    out = res["outputs"]
    right_ok, right_why = cudnn.mask_ok(mask)
    pre_ok, pre_why = cudnn.mask_ok(checks.pre_padded(mask))
    return {
        "label": LABELS[variant],
        "implementation": res["info"],
        "lengths": [int(v) for v in lengths],
        "observed_steps": observe if len(observe) < t else "all",
        "checks": result,
        "past_length_outputs": checks.past_length_pattern(out, lengths),
        "heatmap": checks.norm_heatmap(out, lengths),
        "reference": "float64 NumPy forward pass with lengths (rnnlab.tf.numpy_ref)",
        "cudnn_mask": {
            "right_padded": {"ok": right_ok, "reason": right_why},
            "pre_padded": {"ok": pre_ok, "reason": pre_why,
                           "note": "the same rows padded at the front, as keras.utils.pad_sequences does by default"},
        },
    }


def _keras_extras(details: dict, variant: str, p: dict, layer: dict, x, lengths, mask, ctx, observe) -> None:
    """A Keras variant run again with zero_output_for_mask=True, and on a GPU which kernel ran."""
    from rnnlab.tf import varlen_checks as checks, varlen_models as models

    base = variant.replace("_nolen", "")
    units = p["units"]
    if base.startswith("keras") and not variant.endswith("_nolen") and not p.get("zero_output_for_mask", False):
        # The same run with zero_output_for_mask=True: only (a) can change.
        alt = models.run_keras(p["cell"], layer, x, lengths, units,
                               "masking" if base == "keras_masking" else "mask_arg",
                               zero_output_for_mask=True, device=ctx.tf_device, observe=observe)
        alt_checks = checks.run_checks(alt["outputs"], alt["states"], alt["final"], lengths)
        details["zero_output_for_mask_true"] = {k: v["ok"] for k, v in alt_checks.items()}
    if ctx.device == "GPU" and base.startswith("keras"):
        ctx.phase("gpu_kernel")
        details["gpu_kernel"] = {
            "right_padded": models.keras_lstm_kernel_probe(x, mask, units, ctx.tf_device),
            "pre_padded": models.keras_lstm_kernel_probe(x, checks.pre_padded(mask), units, ctx.tf_device),
        }
    else:
        details["gpu_kernel"] = f"not run: device is {ctx.device} (Keras uses cuDNN only on a GPU)"


EXPERIMENT = Experiment(
    name="varlen",
    version=1,
    title="Variable-length sequences: what each implementation does with padding",
    summary="A padded batch with chosen true lengths through static_rnn / dynamic_rnn with and without "
            "sequence_length and Keras 3 layers with a Masking layer, a mask= argument or nothing: are outputs past "
            "the length zero, is the state carried through, is the final state the last real step's, and how far "
            "does a run without lengths drift.",
    params=param_set(
        ["cell", "units", "batch", "seq_len", "input_dim", "lengths", "device", "seed", "timeout_s"],
        defaults={"cell": "lstm", "units": 16, "batch": 6, "seq_len": 12, "input_dim": 8,
                  "lengths": "rows:12/9/5/3/1/7", "timeout_s": 600},
        extra=[Param("zero_output_for_mask", "bool", False,
                     "Keras variants: zero_output_for_mask (Keras' default False repeats the last real output "
                     "past the length instead of zeros)")]),
    variants=VARIANTS,
    worker="rnnlab.experiments.varlen:run_variant",
    reference="tf1_dynamic",
    presets={
        # CI: one variant per behaviour (each variant is a fresh worker); the tests run all of them in process.
        "quick": {"cell": "lstm", "units": 8, "batch": 4, "seq_len": 8, "input_dim": 4, "lengths": "rows:8/5/2/1",
                  "variants": ["tf1_dynamic", "tf1_static", "keras_mask_arg", "keras_nolen"]},
        # Seed 001's example: the longest input is 50 steps and the others are shorter.
        "seed": {"cell": "lstm", "units": 32, "batch": 4, "seq_len": 50, "input_dim": 16,
                 "lengths": "rows:50/35/20/5"},
        "full": {"cell": ["rnn", "lstm", "gru"], "units": 32, "batch": 16, "seq_len": 24, "input_dim": 16,
                 "lengths": ["uniform:1-24", "rows:24/12/6/1"]},
    },
    check=check,
    metrics_doc=METRICS_DOC,
    page="varlen",
    work_s=5.0,
)
