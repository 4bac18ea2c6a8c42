"""Experiment ``knobs``: seed 000's tuning tips (section 5.3) for dynamic_rnn and static_rnn, measured.

Variants (one knob changed at a time from ``dynamic_default``, which is ``tf1_dynamic`` with dynamic_rnn's own
defaults: ``parallel_iterations=32``, ``swap_memory=False``, ``time_major=False``):

- ``dynamic_pi1`` / ``dynamic_pi128``: ``parallel_iterations`` 1 and 128;
- ``dynamic_swap``: ``swap_memory=True`` (only means anything on a GPU: activations may be swapped to host memory);
- ``dynamic_time_major``: ``time_major=True`` (inputs fed [time, batch, features]);
- ``static_full``: ``tf1_static``, every step unrolled;
- ``static_first_n``: seed 000's "only unroll the first 50 steps" trick, ``first_n`` steps. The seed's own line,
  ``tf.unstack(inputs, num=N, axis=1)`` on a longer sequence, is tried first (``seed_code_runs``; its error is kept
  verbatim in ``details["seed_code_error"]``); then what does work is measured: ``static_rnn`` over
  ``tf.unstack(inputs[:, :N], num=N, axis=1)``. It computes a different function: the steps after N are never seen
  (``final_state_vs_full``), while the first N outputs are the same (``outputs_first_n_vs_full``).

The dynamic variants and ``static_full`` are measured by ``rnnlab.tf.measure.run_variant`` (variants
``tf1_dynamic`` / ``tf1_static`` with the knob set in their params), so their metrics are the unroll experiment's;
``static_first_n`` is the same TF1 runner with its ``first_n`` hook (``rnnlab.tf.tf1.TF1Runner``), timed the
same way. The reference for ``max_abs_diff`` is
``dynamic_default``; ``static_first_n`` returns no outputs to compare (its own metrics say how it differs).

Records hold numbers and facts (the knob, ``what_runs``: the code measured, TensorFlow's own error text); the
sentences the Claims page shows about them are written by ``rnnlab.present.claims`` (``knobs_notes``).
"""

from __future__ import annotations

import os

from rnnlab.core.errors import RnnlabError
from rnnlab.core.params import PRESET_RUN, TIMED, USER_RUN, Param, param_set
from rnnlab.experiments import seeds
from rnnlab.experiments.base import Experiment
from rnnlab.experiments.unroll import check as _unroll_check

KNOBS: dict[str, dict] = {
    "dynamic_default": {},
    "dynamic_pi1": {"parallel_iterations": 1},
    "dynamic_pi128": {"parallel_iterations": 128},
    "dynamic_swap": {"swap_memory": True},
    "dynamic_time_major": {"time_major": True},
}
VARIANTS = tuple(KNOBS) + ("static_full", "static_first_n")
LABELS = {
    "dynamic_default": "dynamic_rnn, defaults (parallel_iterations=32, swap_memory=False, time_major=False)",
    "dynamic_pi1": "dynamic_rnn, parallel_iterations=1",
    "dynamic_pi128": "dynamic_rnn, parallel_iterations=128",
    "dynamic_swap": "dynamic_rnn, swap_memory=True",
    "dynamic_time_major": "dynamic_rnn, time_major=True",
    "static_full": "static_rnn, every step unrolled",
    "static_first_n": "static_rnn over tf.unstack(x[:, :N], num=N): only the first N steps",
}

METRICS_DOC = {
    "build_s": "building the forward graph (no run): the median of the warm builds after the first, s",
    "first_build_s": "the first (cold) build in the worker, s (rnnlab.tf.measure.BUILD_REPEATS warm ones follow)",
    "graph_nodes": "nodes of the forward graph plus its function library (a while_loop body counts once), count",
    "first_call_s": "first forward run after building, s",
    "fwd_ms": "median forward pass after warm-up, ms (fwd_ms_p25 / fwd_ms_p75: quartiles)",
    "train_build_s": "building the training graph: loss = mean(outputs**2), gradients, Adam, s",
    "train_first_call_s": "first training step, s",
    "train_ms": "median training step (forward, backward, Adam), ms (train_ms_p25 / train_ms_p75: quartiles)",
    "peak_mem_mb": "peak memory of the worker (CPU: RSS high-water mark above the TensorFlow baseline; GPU: "
                   "TensorFlow's allocator peak), MB",
    "ref_abs_diff": "max abs difference against the float64 NumPy reference: outputs and final states (for "
                    "static_first_n: its first N outputs and final states against the reference run over those N "
                    "steps)",
    "max_abs_diff": "outputs and final states against dynamic_default (absent for static_first_n)",
    "seed_code_runs": "static_first_n: 1 if the seed's tf.unstack(inputs, num=N, axis=1) on the full-length input "
                      "builds and runs, else 0",
    "final_state_vs_full": "static_first_n: max abs difference of its final states from the full sequence's final "
                           "states (what dropping the steps after N changes)",
    "outputs_first_n_vs_full": "static_first_n: max abs difference of its N outputs from the full run's first N "
                               "outputs (about 0: those steps are computed the same)",
    "steps_unrolled": "static variants: time steps in the unrolled graph, count",
}


def check(p: dict, variants: tuple, *, available_mb: float | None = None) -> None:
    if "static_first_n" in variants and p["first_n"] > p["seq_len"]:
        raise RnnlabError(f"first_n={p['first_n']} is more than seq_len={p['seq_len']}: static_first_n unrolls the "
                          "first first_n steps of the sequence; use first_n <= seq_len")
    _unroll_check(p, variants, available_mb=available_mb)



PARAMS = param_set(["cell", "units", "layers", "batch", "seq_len", "input_dim", *TIMED],
                   defaults={"cell": "rnn", "layers": 3, "units": 128, "batch": 32, "seq_len": 100,
                             "input_dim": 64, "repeats": 20, **USER_RUN},
                   extra=[Param("first_n", "int", 50, "static_first_n: time steps unrolled (seed 000: 50 of 100)",
                                1, 2000)])
SEED = seeds.for_params(seeds.SEED_000, PARAMS.names(), first_n=seeds.SEED_000_FIGURES["unstack_num"],
                        **PRESET_RUN)

EXPERIMENT = Experiment(
    name="knobs",
    version=2,  # 2: build_s is the median of warm builds; the cold one is first_build_s
    title="Tuning knobs: parallel_iterations, swap_memory, time_major, unrolling only the first N steps",
    summary="Seed 000's performance tips, one knob at a time against dynamic_rnn's defaults: parallel_iterations "
            "1 / 32 / 128, swap_memory on/off, time_major on/off, and static_rnn unrolled over every step versus "
            "only the first N (the seed's tf.unstack(inputs, num=50) trick, which computes something else): "
            "speed and peak memory of each.",
    params=PARAMS,
    variants=VARIANTS,
    worker="rnnlab.experiments.knobs:run_variant",
    reference="dynamic_default",
    presets={
        "quick": {"cell": "rnn", "units": 32, "layers": 1, "batch": 8, "seq_len": 20, "input_dim": 16,
                  "first_n": 10, "repeats": 5, "warmup": 1, "rounds": 1, "budget_s": 20,
                  "variants": ["dynamic_default", "dynamic_pi1", "static_first_n"]},
        "seed": SEED,
        "full": {**SEED, "cell": ["rnn", "lstm"], "seq_len": [50, 100, 200], "first_n": 50},
    },
    check=check,
    metrics_doc=METRICS_DOC,
    page="claims",
    work_s=20.0,
    hosted={"first_n": 200},
)


# ---------------------------------------------------------------------------------------------------------------------
# worker (its TensorFlow code is rnnlab.tf.measure's and rnnlab.tf.knobs', imported inside the worker)

def _measure_params(params: dict, **knob) -> dict:
    """The unroll variants' params: float32, full lengths, dynamic_rnn defaults, then the knob."""
    p = {k: v for k, v in params.items() if k != "first_n"}
    p.update(dtype="float32", lengths="full", time_major=False, parallel_iterations=32, swap_memory=False)
    p.update(knob)
    return p


def run_variant(params: dict, variant: str, ctx) -> dict:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    from rnnlab.core.errors import VariantUnsupported
    from rnnlab.tf import measure

    if variant in KNOBS:
        out = measure.run_variant(_measure_params(params, **KNOBS[variant]), "tf1_dynamic", ctx)
        out["details"].update(knob=KNOBS[variant] or "defaults", label=LABELS[variant])
        return out
    if variant == "static_full":
        out = measure.run_variant(_measure_params(params), "tf1_static", ctx)
        out["metrics"]["steps_unrolled"] = float(params["seq_len"])
        out["details"].update(label=LABELS[variant])
        return out
    if variant == "static_first_n":
        from rnnlab.tf import knobs

        return knobs.run_first_n(params, _measure_params(params), ctx, LABELS[variant])
    raise VariantUnsupported(f"unknown knobs variant {variant!r}; known: {', '.join(VARIANTS)}")
