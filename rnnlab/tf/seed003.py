"""Seed 003's static_rnn vs dynamic_rnn training benchmark in a worker (the ``seed003`` experiment): the seed's
graph (BasicLSTMCell, sequence_length, Adam, a tf.data one-shot iterator) built and trained in a v1 Session, timed
step by step, and a small probe graph that counts the cell steps that really run."""

from __future__ import annotations

import statistics
import time

import numpy as np


def run(p: dict, static: bool, ctx) -> dict:
    """Build, initialise and train the seed's model (``static``: static_rnn, else dynamic_rnn) -> metrics, details."""
    import tensorflow as tf

    from rnnlab.core.params import lengths_for

    b, t, d = p["batch"], p["seq_len"], p["input_dim"]
    g, ops, build_s = _build(tf, p, static, ctx)
    nodes = len(g.get_operations())
    timed = _train(tf, g, ops, p, ctx)
    ctx.phase("probe")
    probe = _count_cell_steps(tf, static, t, d, lengths_for(p["lengths"], min(b, 8), t, p["seed"]),
                              p["parallel_iterations"], ctx.tf_device)
    samples = timed["samples"]
    q = statistics.quantiles(samples, n=4, method="inclusive") if len(samples) > 1 else [samples[0]] * 3
    together = build_s + timed["init_s"] + timed["first_step_s"] + timed["first_interval_s"]
    metrics = {
        "build_s": build_s, "graph_nodes": float(nodes), "init_s": timed["init_s"],
        "first_step_s": timed["first_step_s"], "first_interval_s": timed["first_interval_s"],
        "steps_per_s": len(samples) / sum(samples),
        "train_ms": statistics.median(samples) * 1e3, "train_ms_p25": q[0] * 1e3, "train_ms_p75": q[2] * 1e3,
        "together_s": together, "together_steps_per_s": (1 + p["interval"]) / together,
        "cell_steps_run": float(probe["cell_steps_run"]), "loop_steps_max": float(probe["max_length"]),
    }
    if p["interval"]:
        metrics["first_interval_steps_per_s"] = p["interval"] / timed["first_interval_s"]
    details = {
        "model": ("static_rnn(BasicLSTMCell, tf.unstack(x, axis=1), sequence_length)" if static else
                  f"dynamic_rnn(BasicLSTMCell, x, sequence_length, parallel_iterations={p['parallel_iterations']})")
                 + "; logits = state[1] (h); sparse softmax cross-entropy; AdamOptimizer; tf.data one-shot iterator",
        "control_flow_v2": bool(tf.compat.v1.control_flow_v2_enabled()),
        "loss_first": timed["first_loss"], "loss_last": timed["last_loss"], "global_step": timed["steps_done"],
        "probe": probe,
    }
    return {"metrics": metrics, "details": details}


def _build(tf, p: dict, static: bool, ctx) -> tuple:
    """The seed's graph on its data -> (graph, (init, train_op, loss, global_step), build_s)."""
    from rnnlab.core.params import lengths_for

    b, t, d, units = p["batch"], p["seq_len"], p["input_dim"], p["units"]
    n = p["n_data"]
    rng = np.random.default_rng([p["seed"], 4])
    data = rng.random((n, t, d), dtype=np.float32)
    length = np.asarray(lengths_for(p["lengths"], n, t, p["seed"]), dtype=np.int32)
    label = rng.integers(0, units, size=n).astype(np.int32)
    g = tf.Graph()
    with g.as_default(), tf.device(ctx.tf_device):
        tf.compat.v1.set_random_seed(p["seed"])
        ds = tf.data.Dataset.from_tensor_slices((data, length, label)).repeat().batch(b)
        feat, seq_len, labels = tf.compat.v1.data.make_one_shot_iterator(ds).get_next()
        ctx.phase("build")
        t0 = time.perf_counter()
        cell = tf.compat.v1.nn.rnn_cell.BasicLSTMCell(units)
        if static:
            _, state = tf.compat.v1.nn.static_rnn(cell, tf.unstack(feat, num=t, axis=1), sequence_length=seq_len,
                                                  dtype=tf.float32)
        else:
            _, state = tf.compat.v1.nn.dynamic_rnn(cell, feat, seq_len, dtype=tf.float32,
                                                   parallel_iterations=p["parallel_iterations"])
        loss = tf.compat.v1.losses.sparse_softmax_cross_entropy(labels=labels, logits=state[1])
        global_step = tf.compat.v1.train.get_or_create_global_step()
        train_op = tf.compat.v1.train.AdamOptimizer().minimize(loss, global_step=global_step)
        build_s = time.perf_counter() - t0
        init = tf.compat.v1.global_variables_initializer()
    return g, (init, train_op, loss, global_step), build_s


def _train(tf, g, ops: tuple, p: dict, ctx) -> dict:
    """Session and initialiser, the first step, the first interval, then ``steps`` steps timed one by one."""
    init, train_op, loss, global_step = ops
    ctx.phase("init")
    t0 = time.perf_counter()
    sess = tf.compat.v1.Session(graph=g)
    sess.run(init)
    init_s = time.perf_counter() - t0
    try:
        ctx.phase("first_call")
        t0 = time.perf_counter()
        first_loss = float(sess.run([train_op, loss])[1])
        first_step_s = time.perf_counter() - t0
        ctx.phase("first_interval")
        t0 = time.perf_counter()
        for _ in range(p["interval"]):
            sess.run(train_op)
        first_interval_s = time.perf_counter() - t0
        ctx.phase("train")
        samples = []
        for _ in range(p["steps"]):
            t1 = time.perf_counter()
            sess.run(train_op)
            samples.append(time.perf_counter() - t1)
        last_loss = float(sess.run(loss))
        steps_done = int(sess.run(global_step))
    finally:
        sess.close()
    return {"init_s": init_s, "first_step_s": first_step_s, "first_interval_s": first_interval_s,
            "samples": samples, "first_loss": first_loss, "last_loss": last_loss, "steps_done": steps_done}


def _count_cell_steps(tf, static: bool, t: int, d: int, lengths: list[int], parallel_iterations: int,
                      device: str) -> dict:
    """Run a 4-unit BasicLSTMCell the same way over ``t`` steps with ``lengths`` and count the cell calls that
    execute (a counter incremented inside the cell, tied to its output)."""
    units = 4
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        counter = tf.compat.v1.get_variable("cell_steps", [], tf.int64, initializer=tf.zeros_initializer(),
                                            trainable=False, use_resource=True)
        base = tf.compat.v1.nn.rnn_cell.BasicLSTMCell

        def call(self, inputs, state):
            out, new = base.call(self, inputs, state)
            inc = counter.assign_add(1)
            with tf.control_dependencies([inc]):  # whatever is fetched (output or state) runs the increment
                return tf.identity(out), tf.nest.map_structure(tf.identity, new)

        cell = type("CountingBasicLSTMCell", (base,), {"call": call})(units)
        x = tf.compat.v1.placeholder(tf.float32, [len(lengths), t, d])
        sl = tf.constant(lengths, tf.int32)
        if static:
            _, st = tf.compat.v1.nn.static_rnn(cell, tf.unstack(x, axis=1), sequence_length=sl, dtype=tf.float32)
        else:
            _, st = tf.compat.v1.nn.dynamic_rnn(cell, x, sl, dtype=tf.float32,
                                                parallel_iterations=parallel_iterations)
        init = tf.compat.v1.global_variables_initializer()
    with tf.compat.v1.Session(graph=g) as sess:
        sess.run(init)
        sess.run(st.h, {x: np.zeros((len(lengths), t, d), np.float32)})
        ran = int(sess.run(counter))
    return {"cell_steps_run": ran, "steps_built": t if static else 1, "padded_steps": t,
            "max_length": int(max(lengths)), "rows": len(lengths)}
