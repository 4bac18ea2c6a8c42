"""Experiment ``precision``: float32, mixed_float16 and bfloat16 for the Keras layers and the TF1 dynamic_rnn path.

Variants are ``<path>_<dtype>``:

- ``keras_*`` / ``keras_cell_*``: the unroll experiment's ``keras`` / ``keras_cell`` runners
  (``rnnlab.tf.measure``) with the Keras 3 dtype policy ``dtype`` on every layer (float32 variables,
  computation in float16 / bfloat16; Adam wrapped in ``LossScaleOptimizer`` under mixed_float16).
- ``tf1_dynamic_float32``: the unroll experiment's ``tf1_dynamic``.
- ``tf1_dynamic_mixed_float16`` / ``tf1_dynamic_bfloat16``: the TF1 runner's cast hooks (``rnnlab.tf.tf1.TF1Runner``
  with ``compute_dtype`` and ``loss_scale``; ``tf1_dynamic`` itself measures float32 only): float32 variables behind
  a ``variable_scope`` custom getter that casts them to the compute dtype, inputs cast,
  ``dynamic_rnn(dtype=compute)``, outputs cast back to float32; training with a float32 loss, a fixed loss scale of 1024 under float16, and ``AdamOptimizer`` on the
  float32 variables (the TF1 recipe for mixed precision).
- ``tf1_dynamic_policy``: seed 000 (6.3) as written: ``tf.keras.mixed_precision.set_global_policy("mixed_float16")``
  and then an ordinary float32 ``dynamic_rnn``. Timed like ``tf1_dynamic``; the graph is searched for the dtypes its
  matmuls run in (``policy_float16_matmuls`` / ``policy_float32_matmuls``), which says whether the policy did
  anything.

Every variant gets the canonical weights and inputs of ``rnnlab.tf.weights``, so ``max_abs_diff`` (against the
reference ``keras_float32``) is the numeric drift against float32 on identical weights and inputs; ``ref_abs_diff``
is against the float64 NumPy reference. Whether a dtype is fast, slow or unsupported on the measuring device is
stored as numbers and facts, never as sentences: ``matmul_vs_float32`` (a 512 x 512 matmul in the compute dtype
against float32; ``details["matmul_error"]`` when that matmul cannot run), ``fwd_vs_float32`` (the whole forward
pass against the same path in float32), both measured in the same worker, ``details["cpu_flags_checked"]``
(the CPU's float16 / bfloat16 flags found in /proc/cpuinfo; ``cpu_flags_read`` False: none could be read) and, for
``tf1_dynamic_policy``, the ``policy_*`` metrics and details. ``rnnlab.present.claims`` writes the words, saying
whose machine measured them. A dtype a path cannot run is an error record whose reason says so.
"""

from __future__ import annotations

import os

from rnnlab.core.params import PRESET_RUN, TIMED, USER_RUN, param_set
from rnnlab.experiments import seeds
from rnnlab.experiments.base import Experiment
from rnnlab.tf.precision import COMPUTE, LOSS_SCALE  # noqa: F401 - how each dtype computes, importable here

DTYPES = ("float32", "mixed_float16", "bfloat16")
PATHS = ("keras", "keras_cell", "tf1_dynamic")
VARIANTS = tuple(f"{p}_{d}" for p in PATHS for d in DTYPES) + ("tf1_dynamic_policy",)


def split(variant: str) -> tuple[str, str]:
    """``"keras_cell_bfloat16"`` -> ``("keras_cell", "bfloat16")``; ``tf1_dynamic_policy`` -> (tf1_dynamic, policy)."""
    if variant == "tf1_dynamic_policy":
        return "tf1_dynamic", "policy"
    for d in DTYPES:
        if variant.endswith("_" + d):
            return variant[: -len(d) - 1], d
    raise ValueError(variant)


METRICS_DOC = {
    "build_s": "building (TF1) or tracing (Keras) the forward pass: the median of the warm builds after the first, s",
    "first_build_s": "the first (cold) build in the worker, s (rnnlab.tf.measure.BUILD_REPEATS warm ones follow)",
    "graph_nodes": "nodes of the forward graph and its function library, count",
    "first_call_s": "first forward run, s",
    "fwd_ms": "median forward pass after warm-up, ms (fwd_ms_p25 / fwd_ms_p75: quartiles)",
    "train_build_s": "building the training step, s",
    "train_first_call_s": "first training step, s",
    "train_ms": "median training step (forward, backward, Adam; loss scaling under float16), ms "
                "(train_ms_p25 / train_ms_p75: quartiles)",
    "peak_mem_mb": "peak memory of the worker (CPU: RSS high-water mark above the TensorFlow baseline), MB",
    "ref_abs_diff": "max abs difference of outputs and final states (cast to float32) against the float64 NumPy "
                    "reference",
    "max_abs_diff": "numeric drift: max abs difference of outputs and final states against keras_float32 on the same "
                    "weights and inputs",
    "matmul_gflops": "a 512 x 512 matmul in the variant's compute dtype on the measuring device, best of 5, GFLOP/s",
    "matmul_vs_float32": "that rate over float32's (below 1: this dtype's matmuls are slower than float32's)",
    "fwd_ms_float32": "mixed_float16 / bfloat16 variants: the same path's float32 forward pass, timed in the same "
                      "worker on the same weights and inputs, ms",
    "fwd_vs_float32": "fwd_ms over fwd_ms_float32 (above 1: this dtype is slower than float32 on this path)",
    "policy_runs": "tf1_dynamic_policy: 1 if dynamic_rnn builds and runs under the mixed_float16 global policy",
    "policy_float16_matmuls": "tf1_dynamic_policy: MatMul ops computing in float16 in that graph (with its function "
                              "library), count",
    "policy_float32_matmuls": "tf1_dynamic_policy: MatMul ops computing in float32 there, count",
}


PARAMS = param_set(["cell", "units", "layers", "batch", "seq_len", "input_dim", *TIMED],
                   defaults={"cell": "lstm", "units": 128, "layers": 1, "batch": 32, "seq_len": 100,
                             "input_dim": 64, "repeats": 20, **USER_RUN})
SEED = seeds.for_params(seeds.SEED_000, PARAMS.names(), **PRESET_RUN)

EXPERIMENT = Experiment(
    name="precision",
    version=2,  # 2: build_s is the median of warm builds; the cold one is first_build_s
    title="Mixed precision: float32, mixed_float16, bfloat16",
    summary="The same RNN in float32, mixed_float16 and bfloat16 through the Keras 3 layers, keras RNN(cell) and "
            "TF1 dynamic_rnn (cast-based), plus seed 000's 'set a global mixed_float16 policy and dynamic_rnn "
            "supports it automatically': speed, memory, and numeric drift against float32 on identical weights.",
    params=PARAMS,
    variants=VARIANTS,
    worker="rnnlab.experiments.precision:run_variant",
    reference="keras_float32",
    presets={
        "quick": {"cell": "lstm", "units": 32, "layers": 1, "batch": 8, "seq_len": 20, "input_dim": 16,
                  "repeats": 5, "warmup": 1, "rounds": 1, "budget_s": 20,
                  "variants": ["keras_float32", "keras_mixed_float16", "tf1_dynamic_policy"]},
        "seed": SEED,
        "full": {"cell": ["rnn", "lstm", "gru"], "units": 128, "layers": 1, "batch": 32, "seq_len": [50, 100],
                 "input_dim": 64, "rounds": 3},
    },
    metrics_doc=METRICS_DOC,
    page="claims",
    work_s=15.0,
)


def run_variant(params: dict, variant: str, ctx) -> dict:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    from rnnlab.core.errors import VariantUnsupported

    if variant not in VARIANTS:
        raise VariantUnsupported(f"unknown precision variant {variant!r}; known: {', '.join(VARIANTS)}")
    from rnnlab.tf import precision

    path, dtype = split(variant)
    return precision.run(params, path, dtype, ctx)
