"""Experiment ``pitfalls``: the multi-layer and shape mistakes of seed 000 (section 6), run live.

Every pitfall is a pair of small programs held as source strings in :data:`PITFALLS`
(``rnnlab.tf.pitfall_programs``): the wrong code and the right
code. The worker runs both with ``compile(source, "<pitfalls:VARIANT:wrong>", "exec")`` / ``exec`` so that an error
TensorFlow raises is captured verbatim, with the line of the program that raised it, and then checks what the right
code computes (against a float64 NumPy reference where it computes an RNN, or by counting its variables).

Importing this module imports no TensorFlow: the app shows ``PITFALLS`` (titles, code, explanations) without running
anything. ``run_variant`` runs it in ``rnnlab.tf.pitfalls`` (TensorFlow imported there, lazily).

What the programs are given (their namespace)
---------------------------------------------
TF1 programs run inside a fresh ``tf.Graph`` (graph seed = ``seed``) and get ``tf``, ``np``, ``Cell`` (the TF1 cell
class for the ``cell`` param: ``BasicRNNCell``, ``BasicLSTMCell`` or ``GRUCell``), ``units``, ``batch``, ``seq_len``,
``input_dim``, ``data`` (float32 ``[batch, seq_len, input_dim]``, uniform in [-1, 1] from ``seed``), ``data_tm`` (the
same, time-major), ``train_batch`` (``2 * batch``), ``true_lengths`` (int32 ``[batch]``, from ``seq_len`` down),
``frac_lengths`` (``true_lengths - 0.25`` as float32), ``c_init`` / ``h_init`` (float32 ``[batch, units]``).
Keras programs get ``keras``, ``np``, ``Layer`` (``SimpleRNN`` / ``LSTM`` / ``GRU``), ``Cell`` (``SimpleRNNCell`` /
``LSTMCell`` / ``GRUCell``), the sizes and ``data``. The harness, not the shown code, then compares results; where it
compares a wrong and a right program it first gives both the same weights (the right program's) and re-runs the
wrong one's ``outputs``.

Cell sharing and ``input_dim``
------------------------------
A cell object shared between layers can only work when every layer sees inputs of the same width, i.e. when
``input_dim == units``. The sharing variants therefore always try two sub-cases (``details["cases"]``): ``input_dim ==
units`` (``input_dim`` replaced by ``units``) and ``input_dim != units`` (the param's ``input_dim``, or ``units +
input_dim`` when the two params are equal). Top-level ``details["builds"]`` / ``error*`` describe the sub-case with the
params as given; the metrics that need a built stack (distinct variables, output differences) come from the
``input_dim == units`` sub-case.

Error text is TensorFlow's own, with ANSI colour codes removed and cut at 6,000 characters.
"""

from __future__ import annotations

from rnnlab.core.errors import RnnlabError
from rnnlab.core.params import param_set
from rnnlab.experiments.base import Experiment
from rnnlab.tf import pitfalls as tf_pitfalls
from rnnlab.tf.pitfall_programs import PITFALLS, VARIANTS
from rnnlab.tf.program import error_summary, run_source

__all__ = ["EXPERIMENT", "PITFALLS", "VARIANTS", "error_summary", "run_source", "run_variant"]

EXPERIMENT = Experiment(
    name="pitfalls",
    version=1,
    title="Multi-layer and shape pitfalls, run live",
    summary="Seed 000's warnings (MultiRNNCell([cell] * 3), shape mistakes) run in the installed TensorFlow: what "
            "each mistake really does (the exact error and the line that raised it, or the silently wrong result) "
            "beside the fix and a check that the fix works.",
    params=param_set(["cell", "units", "input_dim", "batch", "seq_len", "seed", "timeout_s"],
                     defaults={"units": 16, "input_dim": 8, "batch": 4, "seq_len": 6, "timeout_s": 300}),
    variants=VARIANTS,
    worker="rnnlab.experiments.pitfalls:run_variant",
    reference=None,
    presets={
        # each variant computes in < 1 s here, but every worker spends ~8 s importing TensorFlow: quick runs four
        # representative pitfalls (~35 s) so that all quick presets together stay within DESIGN's 2 minutes
        "quick": {"cell": "rnn", "units": 16, "input_dim": 8, "batch": 4, "seq_len": 6,
                  "variants": ["tf1_shared_dynamic", "keras_shared_sequential", "shape_time_major",
                               "shape_state_is_tuple"]},
        "seed": {"cell": "rnn", "units": 128, "input_dim": 64, "batch": 32, "seq_len": 100},
        "full": {"cell": ["rnn", "lstm", "gru"], "units": 128, "input_dim": 64, "batch": 32, "seq_len": 100},
    },
    metrics_doc={
        "wrong_builds": "1 when the wrong code ran to the end without an error (with the params as given), else 0",
        "check_passed": "1 when the right code passed its check, else 0",
        "wrong_builds_same_dim": "sharing variants: 1 when the shared stack builds and runs with input_dim == units",
        "wrong_builds_diff_dim": "sharing variants: 1 when the shared stack builds and runs with input_dim != units",
        "distinct_vars_wrong": "sharing variants (input_dim == units): distinct trainable variables of the shared stack",
        "distinct_vars_right": "sharing variants (input_dim == units): distinct trainable variables of the correct stack",
        "distinct_kernels_wrong": "sharing variants (input_dim == units): distinct kernel variables, shared stack",
        "distinct_kernels_right": "sharing variants (input_dim == units): distinct kernel variables, correct stack",
        "params_wrong": "sharing variants (input_dim == units): parameters of the shared stack (count_params for Keras)",
        "params_right": "sharing variants (input_dim == units): parameters of the correct stack",
        "params_right_diff_dim": "sharing variants: parameters of the correct stack with input_dim != units",
        "max_abs_diff_vs_correct": "max |wrong - right| of the outputs on the same inputs (same weights where the "
                                   "two programs have the same variables; for sharing: the correct stack with its "
                                   "own weights)",
        "max_abs_diff_vs_tied": "sharing variants: max |shared - correct stack given the shared weights in every "
                                "layer| (about 0: the shared stack is a weight-tied stack)",
        "others_changed_wrong": "Keras sharing: max |change| of the weights at positions 2 and 3 after one SGD step "
                                "on a model holding only position 1, shared objects",
        "others_changed_right": "the same with fresh objects (0: untouched)",
        "right_ref_abs_diff": "max |right code's result - float64 NumPy reference|",
        "rows_short": "seq_len dtype: batch rows whose effective length is below the intended (rounded) one",
    },
    page="pitfalls",
    work_s=30.0,
)


def run_variant(params: dict, variant: str, ctx) -> dict:
    if variant not in PITFALLS:
        raise RnnlabError(f"unknown pitfalls variant {variant!r}; known: {', '.join(VARIANTS)}")
    return tf_pitfalls.run(params, variant, ctx)
