"""The padding experiment's runs in a worker: a Keras 3 layer called with ``mask=`` inside ``tf.function`` (every
batch shape traced up front), or TF1 ``static_rnn`` / ``dynamic_rnn`` with ``sequence_length`` in a v1 Session;
each timed over whole epochs of the batch plan (``rnnlab.tf.batching``)."""

from __future__ import annotations

import os
import statistics
import time

import numpy as np


def _epochs(run_epoch, warmup: int, repeats: int) -> tuple[float, list[float]]:
    t0 = time.perf_counter()
    run_epoch()
    first = time.perf_counter() - t0
    for _ in range(warmup):
        run_epoch()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        run_epoch()
        times.append(time.perf_counter() - t0)
    return first, times


def _keras_layer(cell: str, units: int):
    import keras

    return {"rnn": keras.layers.SimpleRNN, "lstm": keras.layers.LSTM, "gru": keras.layers.GRU}[cell](units)


def _keras_model(p: dict) -> tuple:
    """The Keras layer and dense head from ``seed``, built, and Adam built on their variables."""
    import keras

    keras.utils.set_random_seed(p["seed"])
    layer = _keras_layer(p["cell"], p["units"])
    head = keras.layers.Dense(p["n_classes"])
    opt = keras.optimizers.Adam()
    head(layer(np.zeros((1, 1, p["input_dim"]), np.float32)))
    variables = layer.trainable_variables + head.trainable_variables
    opt.build(variables)
    return layer, head, opt, variables


def _padded(b, x, d: int) -> np.ndarray:
    """Batch ``b``'s rows of ``x`` cut or zero-padded to its padded length: [rows, padded_len, d] float32."""
    xb = np.zeros((b.rows, b.padded_len, d), np.float32)
    n = min(b.padded_len, x.shape[1])
    xb[:, :n] = x[np.asarray(b.indices), :n]
    return xb


def _keras_batches(tf, plan, lengths, x, y, d: int) -> list[tuple]:
    """The plan's batches as tensors (inputs, mask, labels), made before anything is timed."""
    lens = np.asarray(lengths)
    batches = []
    for b in plan.batches:
        idx = np.asarray(b.indices)
        mb = np.arange(b.padded_len)[None, :] < lens[idx][:, None]
        batches.append((tf.constant(_padded(b, x, d)), tf.constant(mb), tf.constant(y[idx])))
    return batches


def run_keras(p: dict, plan, lengths, x, y, ctx) -> tuple[dict, dict]:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow as tf

    traces = {"fwd": 0, "train": 0}
    d = p["input_dim"]
    with tf.device(ctx.tf_device):
        layer, head, opt, variables = _keras_model(p)

        @tf.function
        def fwd(xb, mb):
            traces["fwd"] += 1
            return layer(xb, mask=mb)

        @tf.function
        def train(xb, mb, yb):
            traces["train"] += 1
            with tf.GradientTape() as tape:
                logits = head(layer(xb, mask=mb))
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=yb, logits=logits))
            grads = tape.gradient(loss, variables)
            opt.apply_gradients(zip(grads, variables))
            return loss

        ctx.phase("build")
        t0 = time.perf_counter()
        for rows, tlen in plan.shapes:
            fwd.get_concrete_function(tf.TensorSpec([rows, tlen, d], tf.float32), tf.TensorSpec([rows, tlen], tf.bool))
            train.get_concrete_function(tf.TensorSpec([rows, tlen, d], tf.float32),
                                        tf.TensorSpec([rows, tlen], tf.bool), tf.TensorSpec([rows], tf.int32))
        build_s = time.perf_counter() - t0
        traced_up_front = dict(traces)
        batches = _keras_batches(tf, plan, lengths, x, y, d)

        def fwd_epoch():
            out = None
            for xb, mb, _ in batches:
                out = fwd(xb, mb)
            np.asarray(out)  # waits for the device

        def train_epoch():
            out = None
            for xb, mb, yb in batches:
                out = train(xb, mb, yb)
            np.asarray(out)

        ctx.phase("forward")
        f_first, f_times = _epochs(fwd_epoch, p["warmup"], p["repeats"])
        ctx.phase("train")
        t_first, t_times = _epochs(train_epoch, p["warmup"], p["repeats"])
    metrics = {"build_s": build_s, "builds": float(traces["fwd"] + traces["train"]),
               "first_epoch_fwd_s": f_first, "first_epoch_train_s": t_first}
    details = {"model": f"keras.layers.{type(layer).__name__}({p['units']}) called with mask=, "
                        f"Dense({p['n_classes']}) on its output; keras.optimizers.Adam; tf.function per step",
               "traces": {"up_front": traced_up_front, "total": dict(traces)},
               "epoch_fwd_s": [round(v, 6) for v in f_times], "epoch_train_s": [round(v, 6) for v in t_times]}
    return metrics | _throughput(p, f_times, t_times), details


def _throughput(p: dict, f_times: list[float], t_times: list[float]) -> dict:
    f, t = statistics.median(f_times), statistics.median(t_times)
    return {"fwd_epoch_s": f, "train_epoch_s": t, "fwd_seq_per_s": p["n_sequences"] / f,
            "train_seq_per_s": p["n_sequences"] / t}


def _tf1_cell(tf, cell: str, units: int):
    rc = tf.compat.v1.nn.rnn_cell
    return {"rnn": rc.BasicRNNCell, "lstm": rc.BasicLSTMCell, "gru": rc.GRUCell}[cell](units)


def run_tf1(p: dict, plan, lengths, x, y, ctx, static: bool) -> tuple[dict, dict]:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow as tf

    d = p["input_dim"]
    tmax = max(lengths)
    g = tf.Graph()
    ctx.phase("build")
    t0 = time.perf_counter()
    with g.as_default(), tf.device(ctx.tf_device):
        tf.compat.v1.set_random_seed(p["seed"])
        x_ph = tf.compat.v1.placeholder(tf.float32, [None, tmax if static else None, d], name="x")
        len_ph = tf.compat.v1.placeholder(tf.int32, [None], name="lengths")
        y_ph = tf.compat.v1.placeholder(tf.int32, [None], name="labels")
        cell = _tf1_cell(tf, p["cell"], p["units"])
        if static:
            _, state = tf.compat.v1.nn.static_rnn(cell, tf.unstack(x_ph, axis=1), sequence_length=len_ph,
                                                  dtype=tf.float32)
        else:
            _, state = tf.compat.v1.nn.dynamic_rnn(cell, x_ph, sequence_length=len_ph, dtype=tf.float32,
                                                   parallel_iterations=p["parallel_iterations"])
        h = state.h if p["cell"] == "lstm" else state
        w = tf.compat.v1.get_variable("dense_w", [p["units"], p["n_classes"]])
        bias = tf.compat.v1.get_variable("dense_b", [p["n_classes"]], initializer=tf.zeros_initializer())
        logits = tf.matmul(h, w) + bias
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y_ph, logits=logits))
        train_op = tf.compat.v1.train.AdamOptimizer().minimize(loss)
        init = tf.compat.v1.global_variables_initializer()
    build_s = time.perf_counter() - t0
    nodes = len(g.get_operations())
    lens = np.asarray(lengths, np.int32)
    feeds = [{x_ph: _padded(b, x, d), len_ph: lens[np.asarray(b.indices)], y_ph: y[np.asarray(b.indices)]}
             for b in plan.batches]
    with tf.compat.v1.Session(graph=g) as sess:
        sess.run(init)
        ctx.phase("forward")
        f_first, f_times = _epochs(lambda: [sess.run(h, fd) for fd in feeds], p["warmup"], p["repeats"])
        ctx.phase("train")
        t_first, t_times = _epochs(lambda: [sess.run(train_op, fd) for fd in feeds], p["warmup"], p["repeats"])
    metrics = {"build_s": build_s, "builds": 1.0, "graph_nodes": float(nodes),
               "first_epoch_fwd_s": f_first, "first_epoch_train_s": t_first}
    details = {"model": ("tf.compat.v1.nn.static_rnn" if static else
                         f"tf.compat.v1.nn.dynamic_rnn(parallel_iterations={p['parallel_iterations']})")
                        + f" with sequence_length over {type(cell).__name__}({p['units']}), dense to "
                          f"{p['n_classes']} classes on the final h, tf.compat.v1.train.AdamOptimizer; v1 Graph + "
                          "Session, feed_dict",
               "epoch_fwd_s": [round(v, 6) for v in f_times], "epoch_train_s": [round(v, 6) for v in t_times]}
    return metrics | _throughput(p, f_times, t_times), details
