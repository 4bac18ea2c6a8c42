"""Experiment ``seed003``: seed 003's static_rnn vs dynamic_rnn training benchmark, reproduced.

The seed's configuration, exactly (preset ``seed``, also the defaults): ``BasicLSTMCell(200)``, batch 200, inputs of
300 steps x 16 features uniform in [0, 1), every true length 20, labels in [0, 200); the final state's ``h``
(``state[1]``, 200 wide) is the logits of a sparse softmax cross-entropy (so the number of classes is ``units``),
``tf.compat.v1.train.AdamOptimizer`` minimising it with a global step; ``static`` = ``static_rnn`` over
``tf.unstack(x, axis=1)`` with ``sequence_length``, ``dynamic`` = ``dynamic_rnn`` with ``sequence_length`` and
``parallel_iterations`` (the seed: the batch size, 200). Data: ``n_data`` (1000) sequences through
``tf.data.Dataset.from_tensor_slices(...).repeat().batch(batch)`` and a one-shot iterator, as in the seed.
Not reproduced: the seed's Estimator (its checkpoint at step 1 and summaries every 100 steps) -- a plain v1
``Session`` runs the train op instead, and TF2's runtime (control flow v2) runs the v1 graph.

Timeline, per variant: build the model graph (``build_s``), create the session and initialise (``init_s``), the
first training step (``first_step_s``), then ``interval`` steps (the seed's first logged interval, steps 1 -> 101:
``first_interval_steps_per_s``), then ``steps`` more steps timed one by one (the seed's second interval, 101 -> 201:
``steps_per_s``, ``train_ms``). ``together_steps_per_s`` counts building, session, first step and first interval
together: what a user waiting for step 1+interval sees.

A small probe graph (same steps and lengths, 4 units) counts how many cell steps really run per forward pass
(``cell_steps_run``): dynamic_rnn's while_loop stops at max(sequence_length) in this TF; static_rnn builds every
step but a cond skips the ones past the longest row.

The seed's configuration and its own figures (2017, TF 1.x on a GPU) live in ``rnnlab.experiments.seeds``
(``SEED_003``, ``SEED_003_FIGURES``); they are never results. Whether the seed's conclusion holds is the Claims table's
verdict (``rnnlab.judge.claims``: ``s003_static_runs_faster``, ``s003_static_builds_slower``); the Variable lengths
page words it (``rnnlab.present.varlen.seed003_verdict``). This module only declares and measures.
"""

from __future__ import annotations

import os

from rnnlab.core.params import Param, param_set
from rnnlab.experiments import seeds
from rnnlab.experiments.base import Experiment

VARIANTS = ("static", "dynamic")
LABELS = {"static": "static_rnn with sequence_length (seed 003)",
          "dynamic": "dynamic_rnn with sequence_length, parallel_iterations (seed 003)"}

# Seed 003's benchmark (seeds.SEED_003) with the rest of its setup: parallel_iterations = the batch, 100 + 100 logged
# steps, 1000 sequences.
SEED = seeds.for_params(seeds.SEED_003, ("units", "batch", "seq_len", "input_dim", "lengths"),
                        parallel_iterations=200, interval=100, steps=100, n_data=1000)

METRICS_DOC = {
    "build_s": "building the model graph: the RNN, the loss and Adam's minimize (gradients included), s",
    "graph_nodes": "operations in the graph after building, count",
    "init_s": "creating the session and running the variable initialiser, s",
    "first_step_s": "the first training step (graph optimisation and first allocation included), s",
    "first_interval_s": "the `interval` steps after the first one (the seed's steps 1 -> 101), s",
    "first_interval_steps_per_s": "training steps per second over that first interval (the seed's first figure), "
                                  "steps/s",
    "steps_per_s": "training steps per second over the `steps` steps after it (the seed's second figure), steps/s",
    "train_ms": "median training step over those steps, ms",
    "train_ms_p25": "25th percentile of those steps, ms",
    "train_ms_p75": "75th percentile of those steps, ms",
    "together_s": "build + session + first step + first interval, s",
    "together_steps_per_s": "(1 + interval) steps over together_s, steps/s",
    "cell_steps_run": "cell steps that really run in one forward pass of a small probe graph with the same steps "
                      "and lengths, count",
    "loop_steps_max": "max(sequence_length) of the batch: the steps a length-aware loop needs, count",
}


def run_variant(params: dict, variant: str, ctx) -> dict:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    from rnnlab.core.errors import VariantUnsupported

    if variant not in VARIANTS:
        raise VariantUnsupported(f"unknown seed003 variant {variant!r}")
    from rnnlab.tf import seed003

    out = seed003.run(params, variant == "static", ctx)
    out["details"] = {"label": LABELS[variant], **out["details"]}
    out["details"]["seed_claims"] = seeds.SEED_003_FIGURES[variant]  # the seed's own log, beside these
    out["details"]["not_reproduced"] = ("the seed's Estimator (checkpoint at step 1, summaries every 100 steps); "
                                        "TF2's runtime runs the v1 graph")
    return out


EXPERIMENT = Experiment(
    name="seed003",
    version=1,
    title="Seed 003: static_rnn vs dynamic_rnn training speed, reproduced",
    summary="Seed 003's benchmark exactly (BasicLSTMCell 200, batch 200, 300 steps of 16 features, every length 20, "
            "Adam): graph building, the first interval with its slow start, and steady training steps per second "
            "for static_rnn and dynamic_rnn with sequence_length, beside the seed's own figures.",
    params=param_set(
        ["units", "batch", "seq_len", "input_dim", "lengths", "parallel_iterations", "device", "seed", "rounds", "threads",
         "timeout_s"],
        defaults={**{k: v for k, v in SEED.items() if k not in ("interval", "steps", "n_data")},
                  "timeout_s": 1800},
        extra=[Param("interval", "int", 100, "steps in the first timed interval after step 1 (the seed logged "
                                             "steps 1 -> 101)", 0, 100_000),
               Param("steps", "int", 100, "steps timed one by one after that interval (the seed's 101 -> 201)",
                     1, 100_000),
               Param("n_data", "int", 1000, "sequences in the repeated data set (the seed: 1000)", 1, 100_000)]),
    variants=VARIANTS,
    worker="rnnlab.experiments.seed003:run_variant",
    reference=None,
    presets={
        "quick": {"units": 32, "batch": 32, "seq_len": 16, "input_dim": 8, "lengths": "fixed:4",
                  "parallel_iterations": 32, "interval": 5, "steps": 10, "n_data": 64, "rounds": 1},
        "seed": {**SEED, "rounds": 3},
        "full": {"units": 200, "batch": 200, "seq_len": [100, 300, 600], "input_dim": 16,
                 "lengths": ["fixed:20", "uniform:20-300"], "parallel_iterations": 200, "interval": 100,
                 "steps": 100, "n_data": 1000, "rounds": 3},
    },
    metrics_doc=METRICS_DOC,
    page="varlen",
    work_s=300.0,
    hosted={"steps": 200, "n_data": 2000, "interval": 1000},
)
