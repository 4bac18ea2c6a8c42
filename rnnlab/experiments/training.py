"""Experiment ``training``: one small classifier trained with every unrolling strategy on a real offline data set.

The model: one RNN layer of ``cell`` (``units``) over the rows of an image (one row per time step), its final hidden
state into a dense softmax layer; sparse softmax cross-entropy averaged over the batch; Adam (``lr``, beta1 0.9,
beta2 0.999, epsilon 1e-8 -- TF1 ``AdamOptimizer``'s, also given to Keras's Adam, whose default is 1e-7).

The data, never downloaded: MNIST (28 steps of 28 features) when a local copy exists at
``~/.keras/datasets/mnist.npz``, otherwise scikit-learn's bundled digits (8 steps of 8 features, 1,797 images,
a fixed 80/20 split from ``seed``); ``dataset`` chooses (``auto`` = MNIST if present). Pixels scaled to [0, 1].

Same start, same path: every strategy starts from the same weights (the canonical RNN weights of
``rnnlab.tf.weights`` from ``seed``, and a dense layer drawn from ``seed``), sees the same batches in the same
order (a permutation per epoch from ``seed``; the last incomplete batch dropped so every step has the same shape),
and runs the same number of epochs. Differences are then rounding: the order of floating-point operations differs
between kernels.

Strategies (variants): ``tf1_static`` / ``tf1_dynamic`` (v1 Graph + Session, ``AdamOptimizer``), ``tf2_unrolled`` /
``tf2_while`` (the TF2 variants' hand-written cells on tf.Variables, a Python loop or ``tf.while_loop`` in a
``tf.function``, Adam through ``ResourceApplyAdam``), ``keras`` / ``keras_unroll`` / ``keras_cell`` (Keras 3 layer,
``unroll=True``, ``RNN(Cell)``; GRU with ``reset_after=False`` to compute TF1's GRUCell; train step in a
``tf.function``) and ``keras_eager`` (the ``keras`` model with an eager train step: seed 004's claim that
``tf.function`` makes training faster).

Time: ``build_s`` is building the graphs or tracing the train step (eager: none); each epoch's training steps are
timed (evaluation excluded); the test set is evaluated before training and after every epoch. ``outputs``
(``test_probs``: the test set's softmax after training) are compared with the reference ``tf1_dynamic`` as
``max_abs_diff``.

Records hold numbers and facts; the sentences the Claims page writes over them are ``rnnlab.present.claims``'s
(``summarize``).
"""

from __future__ import annotations

import os

from rnnlab.core.errors import RnnlabError
from rnnlab.core.params import Param, param_set
from rnnlab.experiments.base import Experiment
from rnnlab.tf import training_data
from rnnlab.tf.training_data import load_data  # noqa: F401 - this experiment's data, importable here

VARIANTS = ("tf1_static", "tf1_dynamic", "tf2_unrolled", "tf2_while", "keras", "keras_unroll", "keras_cell",
            "keras_eager")
LABELS = {
    "tf1_static": "static_rnn (TF1 graph + session)",
    "tf1_dynamic": "dynamic_rnn (TF1 graph + session)",
    "tf2_unrolled": "tf.function, Python loop over steps",
    "tf2_while": "tf.function, tf.while_loop",
    "keras": "Keras 3 layer, train step in tf.function",
    "keras_unroll": "Keras 3 layer, unroll=True",
    "keras_cell": "Keras 3 RNN(Cell)",
    "keras_eager": "Keras 3 layer, eager train step (no tf.function)",
}

METRICS_DOC = {
    "build_s": "building the graphs (TF1) or tracing the train and evaluation functions (TF2, Keras); 0 for eager, s",
    "first_epoch_s": "the first epoch's training steps (first-call compilation included), s",
    "epoch_s": "median epoch after the first (the first when epochs = 1): training steps only, s",
    "step_ms": "epoch_s over the steps of an epoch, ms",
    "train_s": "all epochs' training steps together, s",
    "initial_acc": "test accuracy before training (the same for every strategy: same initial weights), 0-1",
    "initial_loss": "test cross-entropy before training, nats",
    "final_acc": "test accuracy after the last epoch, 0-1",
    "best_acc": "best test accuracy after any epoch, 0-1",
    "final_loss": "mean training loss over the last epoch, nats",
    "time_to_target_s": "build_s plus the training time of the epochs until test accuracy first reached "
                        "target_acc (evaluation excluded); absent when never reached, s",
    "epochs_to_target": "epochs until test accuracy first reached target_acc; absent when never reached, count",
    "steps_per_epoch": "training steps per epoch, count",
    "max_abs_diff": "max abs difference of the test set's softmax after training against tf1_dynamic's",
    "peak_mem_mb": "peak memory of the worker (CPU: RSS high-water mark above the TensorFlow baseline), MB",
}


def check(p: dict, variants: tuple, **_kw) -> None:
    mnist = training_data.MNIST_PATH
    if p["dataset"] == "mnist" and not mnist.exists():
        raise RnnlabError(f"dataset=mnist: no local copy at {mnist} (rnnlab never downloads); use "
                          "dataset=digits or auto")


EXPERIMENT = Experiment(
    name="training",
    version=1,
    title="Training a real model with each unrolling strategy",
    summary="One RNN layer + a dense softmax trained on real images (rows as time steps: MNIST if a local copy "
            "exists, else scikit-learn's digits) with every unrolling strategy from the same seed and weights: "
            "time per epoch, time to a target accuracy, final accuracy, and whether they end in the same place.",
    params=param_set(["cell", "units", "batch", "device", "seed", "rounds", "threads", "timeout_s"],
                     defaults={"cell": "lstm", "units": 32, "batch": 32, "timeout_s": 1800},
                     extra=[Param("dataset", "choice", "auto", "auto: MNIST rows if ~/.keras/datasets/mnist.npz "
                                  "exists, else scikit-learn digits (never downloads)",
                                  choices=("auto", "digits", "mnist")),
                            Param("epochs", "int", 10, "training epochs", 1, 500),
                            Param("lr", "float", 0.01, "Adam learning rate", 1e-6, 1.0),
                            Param("target_acc", "float", 0.9, "test accuracy that counts as reached", 0.0, 1.0),
                            Param("n_train", "int", 0, "MNIST: training images used (0: all 60,000; the test set "
                                  "is the first 10,000 / 6 as many); digits: ignored", 0, 60000)]),
    variants=VARIANTS,
    worker="rnnlab.experiments.training:run_variant",
    reference="tf1_dynamic",
    presets={
        "quick": {"cell": "lstm", "units": 16, "batch": 32, "dataset": "digits", "epochs": 2, "lr": 0.01,
                  "target_acc": 0.5, "rounds": 1, "variants": ["tf1_static", "tf1_dynamic", "keras"]},
        # seed 004: LSTMCell(32), batch 32, Adam(0.001), 10 epochs over MNIST rows (digits when MNIST is absent)
        "seed": {"cell": "lstm", "units": 32, "batch": 32, "dataset": "auto", "epochs": 10, "lr": 0.001,
                 "n_train": 10000, "target_acc": 0.9, "rounds": 3},
        "full": {"cell": ["rnn", "lstm", "gru"], "units": 32, "batch": 32, "dataset": "auto", "epochs": 20,
                 "lr": 0.01, "n_train": 10000, "target_acc": 0.9, "rounds": 3,
                 "variants": ["tf1_static", "tf1_dynamic", "tf2_unrolled", "tf2_while", "keras", "keras_unroll",
                              "keras_cell"]},
    },
    check=check,
    metrics_doc=METRICS_DOC,
    page="claims",
    work_s=60.0,
    hosted={"epochs": 20, "n_train": 10000},  # the seed preset trains on 10,000
    preload=("tensorflow", "keras", "sklearn.datasets"),  # scikit-learn (the digits) is not the variant's memory
)




def run_variant(params: dict, variant: str, ctx) -> dict:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    from rnnlab.core.errors import VariantUnsupported

    if variant not in VARIANTS:
        raise VariantUnsupported(f"unknown training variant {variant!r}; known: {', '.join(VARIANTS)}")
    from rnnlab.tf import training

    return training.run(params, variant, ctx, LABELS[variant])
