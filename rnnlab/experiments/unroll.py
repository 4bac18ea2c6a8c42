"""Experiment ``unroll``: static versus dynamic unrolling at one configuration, every variant of DESIGN.md."""

from __future__ import annotations

from rnnlab.core.errors import RnnlabError
from rnnlab.core.params import PRESET_RUN, TIMED, USER_RUN, param_set
from rnnlab.tf.variants import BASE_VARIANTS, REFERENCE, VARIANTS
from rnnlab.experiments import seeds
from rnnlab.experiments.base import Experiment

_GATES = {"rnn": 1, "lstm": 4, "gru": 3}
_TF_BASELINE_MB = 700  # an idle worker with TensorFlow and Keras imported, measured here (RSS)


def estimate_mb(p: dict) -> float:
    """A generous upper estimate of one worker's memory for a training step, in MB.

    Per layer and step the backward pass keeps the gate pre-activations and states (G+3 tensors of batch x units);
    a statically unrolled graph can hold about as much again in per-step temporaries, hence the factor 2. Adam
    keeps two slots per weight.
    """
    g = _GATES[p["cell"]]
    acts = p["batch"] * p["seq_len"] * p["layers"] * p["units"] * (g + 3) * 4 * 2
    inputs = p["batch"] * p["seq_len"] * p["input_dim"] * 4 * 3
    weights = sum(((p["input_dim"] if i == 0 else p["units"]) + p["units"] + 1) * g * p["units"] * 4 * 4
                  for i in range(p["layers"]))
    return _TF_BASELINE_MB + (acts + inputs + weights) / 2**20


def check(p: dict, variants: tuple, *, available_mb: float | None = None) -> None:
    if available_mb is None:
        from rnnlab.core.envinfo import available_mb as avail

        available_mb = avail()
    need = estimate_mb(p)
    if need > available_mb:
        raise RnnlabError(
            f"cell={p['cell']} units={p['units']} layers={p['layers']} batch={p['batch']} seq_len={p['seq_len']}"
            f" input_dim={p['input_dim']} needs an estimated {need:,.0f} MB per variant, more than the"
            f" {available_mb:,.0f} MB available here; reduce batch, seq_len, units or layers")



PARAMS = param_set(["cell", "units", "layers", "batch", "seq_len", "input_dim", "dtype", "lengths", "time_major",
                    "parallel_iterations", "swap_memory", *TIMED], defaults=USER_RUN)
SEED = seeds.for_params(seeds.SEED_000, PARAMS.names(), **PRESET_RUN)  # every variant, as the report was measured

EXPERIMENT = Experiment(
    name="unroll",
    version=2,  # 2: build_s is the median of warm builds; the cold one is first_build_s
    title="Static vs dynamic unrolling",
    summary="Every way TensorFlow can unroll an RNN, at one configuration: build time, graph size, first call, "
            "forward and training step, peak memory, numeric agreement.",
    params=PARAMS,
    variants=tuple(VARIANTS),
    default_variants=tuple(BASE_VARIANTS),  # a user's own run, here and on the page: the seven without XLA
    worker="rnnlab.tf.measure:run_variant",
    reference=REFERENCE,
    presets={
        "quick": {"cell": "rnn", "units": 32, "layers": 1, "batch": 8, "seq_len": 20, "input_dim": 16, "repeats": 5,
                  "warmup": 1, "rounds": 1, "budget_s": 20, "variants": ["tf1_static", "tf1_dynamic", "tf2_while", "keras"]},
        "seed": {**SEED, "variants": list(VARIANTS)},
        "full": {**SEED, "cell": ["rnn", "lstm", "gru"], "seq_len": [25, 50, 100, 200, 400], "repeats": 20,
                 "variants": ["tf1_static", "tf1_dynamic", "tf2_unrolled", "tf2_while", "keras", "keras_unroll",
                              "keras_cell"]},
    },
    check=check,
    metrics_doc={
        "first_build_s": "the first (cold) build of the forward graph in the worker, s; build_s is the median of "
                         "the warm builds after it (rnnlab.tf.measure.BUILD_REPEATS)",
        "train_build_s": "building the training step (gradients + Adam) on top of the forward pass, s",
        "train_first_call_s": "first training step after building it, s",
        "ref_abs_diff": "max abs difference of outputs and final states against a float64 NumPy reference",
    },
    page="unrolling",
    work_s=20.0,
)
