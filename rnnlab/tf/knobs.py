"""The knobs experiment's ``static_first_n`` in a worker: seed 000's ``tf.unstack(inputs, num=N, axis=1)`` run as
written (TensorFlow's own message when it fails), and static_rnn over the first N steps timed and checked."""

from __future__ import annotations

import numpy as np


def _seed_line(params: dict, n: int) -> dict:
    """Seed 000's line as written: tf.unstack(inputs, num=N, axis=1) on the full-length input, in a v1 graph."""
    import tensorflow as tf

    v1 = tf.compat.v1
    b, t, d = params["batch"], params["seq_len"], params["input_dim"]
    data = np.zeros((b, t, d), np.float32)
    res = {"seed_code": f"inputs = tf.unstack(inputs, num={n}, axis=1)  # inputs: [{b}, {t}, {d}]"}
    for key, shape in (("known_time", [b, t, d]), ("unknown_time", [b, None, d])):
        g = tf.Graph()
        try:
            with g.as_default():
                x = v1.placeholder(tf.float32, shape)
                steps = tf.unstack(x, num=n, axis=1)
                with v1.Session(graph=g) as sess:
                    sess.run(steps[-1], {x: data})
            res[key] = None
        except Exception as e:  # the finding: TensorFlow's own message
            res[key] = f"{type(e).__name__}: {measure_first_line(e)}"
    return res


def measure_first_line(e: BaseException) -> str:
    text = str(e).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if lines and lines[0].startswith("Graph execution error") and len(lines) > 1:
        # the runtime error's message is after the traceback of where the op was created
        msg = [ln for ln in lines if "Error" in ln or "must" in ln or "Expected" in ln or "Input" in ln]
        return (msg[-1] if msg else lines[-1])[:300]
    return (lines[0] if lines else type(e).__name__)[:300]


def run_first_n(params: dict, measure_params: dict, ctx, label: str) -> dict:
    """``static_first_n``: static_rnn over the first ``first_n`` steps (``measure_params``: the unroll variants'
    params), timed, checked against the float64 reference, beside seed 000's line as written."""
    from rnnlab.tf.flops import forward_flops
    from rnnlab.tf.measure import time_runner
    from rnnlab.tf.numpy_ref import as_outputs, forward as ref_forward
    from rnnlab.tf.tf1 import TF1Runner
    from rnnlab.tf.weights import Problem

    n = int(params["first_n"])
    pb = Problem(measure_params)
    if n > pb.seq_len:
        from rnnlab.core.errors import VariantUnsupported

        raise VariantUnsupported(f"first_n={n} is more than seq_len={pb.seq_len}")

    ctx.phase("seed_code")
    seed = _seed_line(params, n)
    repeats, warmup = int(params.get("repeats", 30)), int(params.get("warmup", 3))
    runner = TF1Runner(pb, "tf1_static", ctx, first_n=n)  # static_rnn over tf.unstack(x[:, :n], num=n, axis=1)
    m, outputs, (top, fns) = time_runner(runner, ctx, repeats=repeats, warmup=warmup)

    full = as_outputs(*ref_forward(pb.cell, pb.weights, pb.x))
    first = as_outputs(*ref_forward(pb.cell, pb.weights, pb.x[:, :n]))
    states = [k for k in full if k.startswith("state_")]
    m["ref_abs_diff"] = float(max(np.max(np.abs(outputs[k].astype(np.float64) - first[k])) for k in first))
    m["final_state_vs_full"] = float(max(np.max(np.abs(outputs[k].astype(np.float64) - full[k])) for k in states))
    m["outputs_first_n_vs_full"] = float(np.max(np.abs(outputs["outputs"].astype(np.float64)
                                                       - full["outputs"][:, :n])))
    m["seed_code_runs"] = float(seed["known_time"] is None and seed["unknown_time"] is None)
    m["steps_unrolled"] = float(n)
    details = {
        "label": label, "first_n": n, "seq_len": pb.seq_len,
        "seed_code": seed["seed_code"],
        "seed_code_error": seed["known_time"],
        "seed_code_error_unknown_time": seed["unknown_time"],
        "what_runs": f"static_rnn(cell, tf.unstack(inputs[:, :{n}], num={n}, axis=1))",
        "fwd_flops": forward_flops(pb.cell, pb.layers, pb.units, pb.input_dim, pb.batch, n),
        "device": ctx.device, "graph_nodes_top": top, "graph_nodes_functions": fns,
        "repeats": repeats, "warmup": warmup, **runner.details,
    }
    return {"metrics": m, "details": details}
