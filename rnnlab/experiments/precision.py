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
import time

import numpy as np

from rnnlab.core.params import param_set
from rnnlab.experiments import seeds
from rnnlab.experiments.base import Experiment

DTYPES = ("float32", "mixed_float16", "bfloat16")
PATHS = ("keras", "keras_cell", "tf1_dynamic")
VARIANTS = tuple(f"{p}_{d}" for p in PATHS for d in DTYPES) + ("tf1_dynamic_policy",)
COMPUTE = {"float32": "float32", "mixed_float16": "float16", "bfloat16": "bfloat16"}
LOSS_SCALE = 1024.0  # tf1_dynamic_mixed_float16's fixed loss scale


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


PARAMS = param_set(["cell", "units", "layers", "batch", "seq_len", "input_dim", "device", "repeats", "warmup",
                   "seed", "rounds", "protocol", "budget_s", "live", "timeout_s"],
                   defaults={"cell": "lstm", "units": 128, "layers": 1, "batch": 32, "seq_len": 100,
                             "input_dim": 64, "repeats": 20})
SEED = seeds.for_params(seeds.SEED_000, PARAMS.names(), rounds=3)

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


# ---------------------------------------------------------------------------------------------------------------------
# worker

def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def _matmul_rate(dtype: str, device: str, n: int = 512, repeats: int = 5) -> float:
    import tensorflow as tf

    with tf.device(device):
        a = tf.cast(tf.random.stateless_uniform((n, n), seed=(1, 2)), dtype)
        b = tf.cast(tf.random.stateless_uniform((n, n), seed=(3, 4)), dtype)
        f = tf.function(lambda x, y: tf.reduce_sum(tf.cast(tf.matmul(x, y), tf.float32)))
        f(a, b).numpy()
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            f(a, b).numpy()
            best = min(best, time.perf_counter() - t0)
    return 2.0 * n**3 / best / 1e9


def run_variant(params: dict, variant: str, ctx) -> dict:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    from rnnlab.core.errors import VariantUnsupported

    if variant not in VARIANTS:
        raise VariantUnsupported(f"unknown precision variant {variant!r}; known: {', '.join(VARIANTS)}")
    path, dtype = split(variant)
    p = {**params, "lengths": "full", "time_major": False, "parallel_iterations": 32, "swap_memory": False,
         "dtype": "float32" if dtype == "policy" else dtype}

    ctx.phase("matmul")
    flags = _cpu_flags()
    compute = "float16" if dtype == "policy" else COMPUTE[dtype]
    f32 = _matmul_rate("float32", ctx.tf_device)
    try:
        rate = f32 if compute == "float32" else _matmul_rate(compute, ctx.tf_device)
    except Exception as e:  # a device without that matmul kernel
        rate = None
        rate_error = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e).strip() else ''}"
    else:
        rate_error = None
    ratio = None if rate is None else rate / f32

    try:
        if dtype == "policy":
            out = _run_policy(p, ctx)
        elif path in ("keras", "keras_cell") or dtype == "float32":
            from rnnlab.tf import measure

            out = measure.run_variant(p, path, ctx)
        else:
            out = _run_tf1_cast(p, dtype, ctx)
    except VariantUnsupported:
        raise
    except Exception as e:
        line = str(e).strip().splitlines()[0][:240] if str(e).strip() else ""
        raise VariantUnsupported(f"{dtype} is unsupported for {path} on {ctx.device}: "
                                 f"{type(e).__name__}: {line}") from None
    m = out["metrics"]
    if rate is not None:
        m.update(matmul_gflops=rate, matmul_vs_float32=ratio)
    if dtype in ("mixed_float16", "bfloat16") and "fwd_ms" in m:
        ctx.phase("float32_forward")
        f32_ms = _float32_forward_ms(p, path, ctx)
        m["fwd_ms_float32"] = f32_ms
        m["fwd_vs_float32"] = m["fwd_ms"] / f32_ms
    # facts only: rnnlab.present.claims.dtype_note words them, with whose machine measured them
    out["details"].update(dtype=dtype, path=path, compute_dtype=compute,
                          cpu_flags_checked=sorted(f for f in flags if "bf16" in f or "fp16" in f),
                          cpu_flags_read=bool(flags))  # False: no /proc/cpuinfo, the list above says nothing
    if rate_error:
        out["details"]["matmul_error"] = rate_error
    return out


def _float32_forward_ms(p: dict, path: str, ctx) -> float:
    """The same path's float32 forward pass, timed like ``fwd_ms`` in the same worker (weights and inputs equal)."""
    import tensorflow as tf

    from rnnlab.core.stats import time_steps
    from rnnlab.tf import measure
    from rnnlab.tf.weights import Problem

    runner = measure._make_runner(Problem({**p, "dtype": "float32"}), path, False, ctx)
    try:
        with tf.device(ctx.tf_device):
            runner.build_forward()
            runner.start()
            runner.forward()
            t = time_steps(runner.forward, int(p.get("repeats", 30)), int(p.get("warmup", 3)), ctx.clock)
    finally:
        runner.close()
    return t.median_ms


def _run_policy(p: dict, ctx) -> dict:
    """Seed 000 6.3: set tf.keras's global policy to mixed_float16, then build an ordinary dynamic_rnn."""
    import tensorflow as tf

    from rnnlab.tf import measure
    from rnnlab.tf.tf1 import TF1Runner
    from rnnlab.tf.weights import Problem

    mp = tf.keras.mixed_precision
    mp.set_global_policy("mixed_float16")
    try:
        ctx.phase("policy_graph")
        info: dict = {"policy_keras": getattr(tf.keras, "__name__", "tf.keras"),
                      "policy_code": 'tf.keras.mixed_precision.set_global_policy("mixed_float16")'}
        metrics: dict = {}
        runner = TF1Runner(Problem(p), "tf1_dynamic", ctx)  # the graph tf1_dynamic times, built under the policy
        try:
            try:
                runner.build_forward()
                g = runner.fg
                gd = g["graph"].as_graph_def()
                kinds = [n.attr["T"].type for n in gd.node if n.op in ("MatMul", "BatchMatMulV2")]
                kinds += [n.attr["T"].type for f in gd.library.function for n in f.node_def
                          if n.op in ("MatMul", "BatchMatMulV2")]
                metrics["policy_float16_matmuls"] = float(sum(k == tf.float16.as_datatype_enum for k in kinds))
                metrics["policy_float32_matmuls"] = float(sum(k == tf.float32.as_datatype_enum for k in kinds))
                info["policy_output_dtype"] = g["outputs"].dtype.name
                info["policy_variable_dtypes"] = sorted({w.dtype.base_dtype.name for c in g["cells"]
                                                         for w in c.weights})
                runner.start()
                runner.forward()
            finally:
                runner.close()
            metrics["policy_runs"] = 1.0
        except Exception as e:
            metrics["policy_runs"] = 0.0
            text = str(e).strip()
            info["policy_error"] = f"{type(e).__name__}: {text.splitlines()[0][:300] if text else ''}"
        if metrics["policy_runs"]:
            out = measure.run_variant(p, "tf1_dynamic", ctx)  # timed with the policy still set, as the seed has it
        else:
            out = {"metrics": {}, "details": {}}
        out["metrics"].update(metrics)
        out["details"].update(info)
        return out
    finally:
        mp.set_global_policy("float32")


def _run_tf1_cast(p: dict, dtype: str, ctx) -> dict:
    """TF1 dynamic_rnn computing in float16/bfloat16 on float32 variables (the TF1 runner's ``compute_dtype`` and
    ``loss_scale`` hooks), timed like measure."""
    from rnnlab.tf.flops import forward_flops
    from rnnlab.tf.measure import time_runner
    from rnnlab.tf.numpy_ref import as_outputs, forward as ref_forward
    from rnnlab.tf.tf1 import TF1Runner
    from rnnlab.tf.weights import Problem

    pb = Problem({**p, "dtype": "float32"})
    scale = LOSS_SCALE if dtype == "mixed_float16" else 1.0
    runner = TF1Runner(pb, "tf1_dynamic", ctx, compute_dtype=COMPUTE[dtype], loss_scale=scale)
    repeats, warmup = int(p.get("repeats", 30)), int(p.get("warmup", 3))
    m, outputs, (top, fns) = time_runner(runner, ctx, repeats=repeats, warmup=warmup)
    ref = as_outputs(*ref_forward(pb.cell, pb.weights, pb.x))
    m["ref_abs_diff"] = float(max(np.max(np.abs(outputs[k].astype(np.float64) - ref[k])) for k in ref))
    details = {"fwd_flops": forward_flops(pb.cell, pb.layers, pb.units, pb.input_dim, pb.batch, pb.seq_len),
               "device": ctx.device, "graph_nodes_top": top, "graph_nodes_functions": fns, "repeats": repeats,
               "warmup": warmup, **runner.details}
    return {"metrics": m, "details": details, "outputs": outputs}
