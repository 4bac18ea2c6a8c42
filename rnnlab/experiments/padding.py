"""Experiment ``padding``: what padding strategy costs on a data set of variable-length sequences.

The data set: ``n_sequences`` sequences whose true lengths follow ``lengths`` (``uniform:A-B`` typically; clipped to
``seq_len``, the longest allowed), inputs standard normal and zero past each length, one label in
``[0, n_classes)`` each. The model: one layer of ``cell`` with ``units``, a dense layer to ``n_classes`` on the final
hidden state, sparse softmax cross-entropy, Adam. Every variant processes every sequence once per epoch.

Variants (the batching arithmetic is ``rnnlab.tf.batching``; the runs ``rnnlab.tf.padding``):

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


def run_variant(params: dict, variant: str, ctx) -> dict:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    from rnnlab.core.errors import VariantUnsupported
    from rnnlab.tf import batching as padding
    from rnnlab.tf import padding as tf_padding

    if variant not in VARIANTS:
        raise VariantUnsupported(f"unknown padding variant {variant!r}")
    p = params
    lengths, x, y = make_data(p)
    plan = padding.make_plan(STRATEGY_OF[variant], lengths, p["batch"], p["buckets"], p["seed"])
    if variant in KERAS_VARIANTS:
        metrics, details = tf_padding.run_keras(p, plan, lengths, x, y, ctx)
    else:
        metrics, details = tf_padding.run_tf1(p, plan, lengths, x, y, ctx, static=variant == "static_fixed")
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
         "warmup", "seed", "rounds", "threads", "timeout_s"],
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
