"""The precision experiment's worker side: a path run in float16 / bfloat16 (Keras's dtype policies, TF1
dynamic_rnn computing in the low dtype on float32 variables, or the mixed_float16 global policy over an ordinary
dynamic_rnn), the device's matmul rate in that dtype, and the float32 forward pass it is set against."""

from __future__ import annotations

import numpy as np

from rnnlab.core.errors import VariantUnsupported
from rnnlab.tf.matmul import matmul_gflops

COMPUTE = {"float32": "float32", "mixed_float16": "float16", "bfloat16": "bfloat16"}
LOSS_SCALE = 1024.0  # tf1_dynamic_mixed_float16's fixed loss scale


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def run(params: dict, path: str, dtype: str, ctx) -> dict:
    """One precision variant: ``path`` (keras, keras_cell, tf1_dynamic) computing in ``dtype`` ("policy": the
    mixed_float16 global policy over tf1_dynamic), beside the device's matmul rate in that dtype."""
    p = {**params, "lengths": "full", "time_major": False, "parallel_iterations": 32, "swap_memory": False,
         "dtype": "float32" if dtype == "policy" else dtype}

    ctx.phase("matmul")
    flags = _cpu_flags()
    compute = "float16" if dtype == "policy" else COMPUTE[dtype]
    f32 = matmul_gflops(ctx.tf_device, dtype="float32", n=512, repeats=5)
    try:
        rate = f32 if compute == "float32" else matmul_gflops(ctx.tf_device, dtype=compute, n=512, repeats=5)
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
