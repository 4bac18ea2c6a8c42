"""Experiment ``padding``: what padding strategy costs on a data set of variable-length sequences.

The data set: ``n_sequences`` sequences whose true lengths follow ``lengths`` (``uniform:A-B`` typically; clipped to
``seq_len``, the longest allowed), inputs standard normal and zero past each length, one label in
``[0, n_classes)`` each. The model: one layer of ``cell`` with ``units``, a dense layer to ``n_classes`` on the final
hidden state, sparse softmax cross-entropy, Adam. Every variant processes every sequence once per epoch.

Variants (the batching arithmetic is ``rnnlab.tf.batching``):

- ``pad_global``, ``pad_batch``, ``bucket``, ``sort``: a Keras 3 layer (``SimpleRNN`` / ``LSTM`` / ``GRU`` with
  Keras defaults) called with ``mask=`` from the lengths, inside ``tf.function`` (one forward function, one training
  function). A ``tf.function`` specialises to each input shape, so every distinct batch shape is a trace; they are
  traced up front (``build_s``, ``builds`` counted live in the traced Python), then the epochs run.
- ``static_fixed`` (seed 001): TF1 ``static_rnn`` with ``sequence_length`` over the batches of ``pad_global``: one
  graph of ``max length`` steps built once, every batch fed at that length.
- ``dynamic_bucket`` (seed 001): TF1 ``dynamic_rnn`` with ``sequence_length`` (``parallel_iterations`` from params)
  over the batches of ``bucket``: one graph whose ``while_loop`` takes any length.
  Both TF1 variants: v1 ``Graph`` + ``Session``, ``tf.compat.v1.train.AdamOptimizer``, batches fed by ``feed_dict``
  (the Keras variants get them as tensors made before timing).

Timing: after building, one untimed epoch of each kind (``first_epoch_*_s``: the first call of every shape is in it),
``warmup`` more untimed epochs, then ``repeats`` timed epochs; throughput is ``n_sequences`` over the median epoch.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

from rnnlab.core.errors import RnnlabError
from rnnlab.core.params import Param, param_set
from rnnlab.experiments.base import Experiment

KERAS_VARIANTS = ("pad_global", "pad_batch", "bucket", "sort")
VARIANTS = KERAS_VARIANTS + ("static_fixed", "dynamic_bucket")
STRATEGY_OF = {"pad_global": "pad_global", "pad_batch": "pad_batch", "bucket": "bucket", "sort": "sort",
               "static_fixed": "pad_global", "dynamic_bucket": "bucket"}
LABELS = {
    "pad_global": "Keras 3, every batch padded to the data set's longest",
    "pad_batch": "Keras 3, each batch padded to its longest",
    "bucket": "Keras 3, bucketed by length (padded to the bucket's boundary)",
    "sort": "Keras 3, sorted by length",
    "static_fixed": "TF1 static_rnn (sequence_length), fixed length = data set's longest",
    "dynamic_bucket": "TF1 dynamic_rnn (sequence_length), bucketed",
}

METRICS_DOC = {
    "fwd_seq_per_s": "forward throughput: sequences per second over the median timed epoch, sequences/s",
    "train_seq_per_s": "training throughput (forward, backward, Adam): sequences per second, sequences/s",
    "fwd_epoch_s": "median time of one forward epoch over the data set, s",
    "train_epoch_s": "median time of one training epoch over the data set, s",
    "first_epoch_fwd_s": "the first forward epoch after building (first call of every shape), s",
    "first_epoch_train_s": "the first training epoch after building (first call of every shape), s",
    "build_s": "tracing every shape's forward and training function (Keras) or building the one graph with "
               "gradients and Adam (TF1), s",
    "builds": "functions traced (counted live in the traced Python, forward + training, including any retrace "
              "during the epochs) or graphs built (TF1: 1), count",
    "graph_nodes": "operations in the TF1 graph (forward, gradients, Adam), count",
    "n_shapes": "distinct batch shapes (rows, padded length) fed, count",
    "n_batches": "batches per epoch, count",
    "wasted_pct": "time steps fed that are padding, as a share of all time steps fed, %",
    "loop_wasted_pct": "padding within each batch's longest row, as a share of those steps: what a loop that stops "
                       "at the batch's longest row (dynamic_rnn, static_rnn's skip) still computes, %",
    "padded_steps": "rows x padded length over all batches of an epoch, time steps",
    "real_steps": "sum of the true lengths, time steps",
}


def check(p: dict, variants: tuple, **_kw) -> None:
    from rnnlab.core.params import lengths_for

    if min(lengths_for(p["lengths"], min(p["n_sequences"], 4096), p["seq_len"], p["seed"])) < 1:
        raise RnnlabError(f"padding: lengths={p['lengths']} gives empty sequences (length 0); a data set's "
                          "sequences start at length 1 (e.g. uniform:1-50)")
    cells = p["n_sequences"] * p["seq_len"] * p["input_dim"]
    if cells > 100_000_000:
        raise RnnlabError(f"padding: n_sequences x seq_len x input_dim = {cells:,} floats is more than 100,000,000 "
                          f"(400 MB); reduce n_sequences, seq_len or input_dim")


def make_data(p: dict) -> tuple[list[int], np.ndarray, np.ndarray]:
    """(lengths, x [n, max length, input_dim] zero-padded, labels [n]) -- the same for every variant."""
    from rnnlab.core.params import lengths_for

    n = p["n_sequences"]
    lengths = lengths_for(p["lengths"], n, p["seq_len"], p["seed"])
    t = max(lengths)
    rng = np.random.default_rng([p["seed"], 3])
    x = rng.standard_normal((n, t, p["input_dim"]), dtype=np.float32)
    x *= (np.arange(t)[None, :] < np.asarray(lengths)[:, None])[:, :, None]
    y = rng.integers(0, p["n_classes"], size=n).astype(np.int32)
    return lengths, x, y


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


def _run_keras(p: dict, plan, lengths, x, y, ctx) -> tuple[dict, dict]:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import keras
    import tensorflow as tf

    traces = {"fwd": 0, "train": 0}
    d = p["input_dim"]
    with tf.device(ctx.tf_device):
        keras.utils.set_random_seed(p["seed"])
        layer = _keras_layer(p["cell"], p["units"])
        head = keras.layers.Dense(p["n_classes"])
        opt = keras.optimizers.Adam()
        head(layer(np.zeros((1, 1, d), np.float32)))
        variables = layer.trainable_variables + head.trainable_variables
        opt.build(variables)

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
        lens = np.asarray(lengths)
        batches = []
        for b in plan.batches:
            idx = np.asarray(b.indices)
            xb = np.zeros((b.rows, b.padded_len, d), np.float32)
            n = min(b.padded_len, x.shape[1])
            xb[:, :n] = x[idx, :n]
            mb = np.arange(b.padded_len)[None, :] < lens[idx][:, None]
            batches.append((tf.constant(xb), tf.constant(mb), tf.constant(y[idx])))

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


def _run_tf1(p: dict, plan, lengths, x, y, ctx, static: bool) -> tuple[dict, dict]:
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
    feeds = []
    for b in plan.batches:
        idx = np.asarray(b.indices)
        xb = np.zeros((b.rows, b.padded_len, d), np.float32)
        n = min(b.padded_len, x.shape[1])
        xb[:, :n] = x[idx, :n]
        feeds.append({x_ph: xb, len_ph: lens[idx], y_ph: y[idx]})
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


def run_variant(params: dict, variant: str, ctx) -> dict:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    from rnnlab.core.errors import VariantUnsupported
    from rnnlab.tf import batching as padding

    if variant not in VARIANTS:
        raise VariantUnsupported(f"unknown padding variant {variant!r}")
    p = params
    lengths, x, y = make_data(p)
    plan = padding.make_plan(STRATEGY_OF[variant], lengths, p["batch"], p["buckets"], p["seed"])
    if variant in KERAS_VARIANTS:
        metrics, details = _run_keras(p, plan, lengths, x, y, ctx)
    else:
        metrics, details = _run_tf1(p, plan, lengths, x, y, ctx, static=variant == "static_fixed")
    metrics.update({"n_shapes": float(len(plan.shapes)), "n_batches": float(len(plan.batches)),
                    "wasted_pct": plan.wasted_pct, "loop_wasted_pct": plan.loop_wasted_pct,
                    "padded_steps": float(plan.padded_steps), "real_steps": float(plan.real_steps)})
    details.update({"label": LABELS[variant], "plan": plan.summary(),
                    "lengths": {"min": min(lengths), "max": max(lengths), "mean": round(float(np.mean(lengths)), 3)}})
    if plan.strategy == "bucket":
        details["bucket_boundaries"] = padding.bucket_boundaries(lengths, p["buckets"])
    return {"metrics": metrics, "details": details}


EXPERIMENT = Experiment(
    name="padding",
    version=1,
    title="Padding strategies: global, per batch, bucketed, sorted",
    summary="The same data set of variable-length sequences padded to the longest overall, to each batch's longest, "
            "by length buckets, or sorted by length (Keras 3 layer with a mask), and seed 001's fixed-length "
            "static_rnn against a bucketed dynamic_rnn: throughput, wasted steps, traces.",
    params=param_set(
        ["cell", "units", "batch", "seq_len", "input_dim", "lengths", "parallel_iterations", "device", "repeats",
         "warmup", "seed", "rounds", "timeout_s"],
        defaults={"cell": "lstm", "units": 64, "batch": 32, "seq_len": 100, "input_dim": 16,
                  "lengths": "uniform:5-100", "repeats": 3, "warmup": 1},
        extra=[Param("n_sequences", "int", 1024, "sequences in the data set", 1, 1_000_000),
               Param("buckets", "int", 4, "length buckets for bucket / dynamic_bucket", 1, 64),
               Param("n_classes", "int", 10, "classes of the dense layer on the final state", 2, 100_000)]),
    variants=VARIANTS,
    worker="rnnlab.experiments.padding:run_variant",
    reference=None,
    presets={
        "quick": {"cell": "lstm", "units": 16, "batch": 16, "seq_len": 20, "input_dim": 8, "lengths": "uniform:2-20",
                  "n_sequences": 48, "buckets": 2, "repeats": 2, "warmup": 0, "rounds": 1,
                  "variants": ["pad_global", "bucket", "static_fixed", "dynamic_bucket"]},
        # Seed 001 names one size, "the largest input is 50 and the others are shorter": lengths uniform 1-50.
        "seed": {"cell": "lstm", "units": 128, "batch": 32, "seq_len": 50, "input_dim": 16, "lengths": "uniform:1-50",
                 "n_sequences": 1024, "buckets": 4, "repeats": 3, "warmup": 1, "rounds": 3},
        "full": {"cell": ["rnn", "lstm", "gru"], "units": 128, "batch": 64, "seq_len": 200, "input_dim": 32,
                 "lengths": ["uniform:10-200", "uniform:150-200"], "n_sequences": 2048, "buckets": 4,
                 "repeats": 3, "warmup": 1, "rounds": 3},
    },
    check=check,
    metrics_doc=METRICS_DOC,
    page="varlen",
    work_s=40.0,
    hosted={"n_sequences": 4096, "buckets": 16, "n_classes": 1000},
)
