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
import statistics
import time
from pathlib import Path

import numpy as np

from rnnlab.core.errors import RnnlabError
from rnnlab.core.params import Param, param_set
from rnnlab.experiments.base import Experiment

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
MNIST_PATH = Path("~/.keras/datasets/mnist.npz").expanduser()
ADAM = {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}

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
    if p["dataset"] == "mnist" and not MNIST_PATH.exists():
        raise RnnlabError(f"dataset=mnist: no local copy at {MNIST_PATH} (rnnlab never downloads); use "
                          "dataset=digits or auto")


EXPERIMENT = Experiment(
    name="training",
    version=1,
    title="Training a real model with each unrolling strategy",
    summary="One RNN layer + a dense softmax trained on real images (rows as time steps: MNIST if a local copy "
            "exists, else scikit-learn's digits) with every unrolling strategy from the same seed and weights: "
            "time per epoch, time to a target accuracy, final accuracy, and whether they end in the same place.",
    params=param_set(["cell", "units", "batch", "device", "seed", "rounds", "timeout_s"],
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


# ---------------------------------------------------------------------------------------------------------------------
# data and initial weights (NumPy only)

def load_data(p: dict) -> dict:
    """{"x_train", "y_train", "x_test", "y_test": float32 [n, steps, features] / int32 [n], "name", "source"}."""
    want = p.get("dataset", "auto")
    if want == "mnist" or (want == "auto" and MNIST_PATH.exists()):
        if not MNIST_PATH.exists():
            raise RnnlabError(f"no local MNIST copy at {MNIST_PATH}; rnnlab never downloads")
        with np.load(MNIST_PATH, allow_pickle=False) as z:
            xtr, ytr, xte, yte = z["x_train"], z["y_train"], z["x_test"], z["y_test"]
        n = int(p.get("n_train") or 0) or len(xtr)
        n_test = min(len(xte), max(1, n // 6)) if p.get("n_train") else len(xte)
        return {"x_train": (xtr[:n] / 255.0).astype(np.float32), "y_train": ytr[:n].astype(np.int32),
                "x_test": (xte[:n_test] / 255.0).astype(np.float32), "y_test": yte[:n_test].astype(np.int32),
                "name": "mnist", "source": str(MNIST_PATH)}
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)
    y = d.target.astype(np.int32)
    perm = np.random.default_rng([int(p.get("seed", 0)), 7]).permutation(len(x))
    cut = int(round(len(x) * 0.8))
    tr, te = perm[:cut], perm[cut:]
    return {"x_train": x[tr], "y_train": y[tr], "x_test": x[te], "y_test": y[te], "name": "digits",
            "source": "sklearn.datasets.load_digits (bundled with scikit-learn)"}


def initial_weights(cell: str, units: int, input_dim: int, n_classes: int, seed: int) -> tuple[dict, np.ndarray,
                                                                                                np.ndarray]:
    """(canonical RNN layer weights, dense kernel [units, classes], dense bias [classes])."""
    from rnnlab.tf.weights import make_weights

    layer = make_weights(cell, 1, units, input_dim, seed)[0]
    s = 1.0 / np.sqrt(units)
    k = np.random.default_rng([int(seed), 5]).uniform(-s, s, size=(units, n_classes)).astype(np.float32)
    return layer, k, np.zeros(n_classes, np.float32)


def batches(n: int, batch: int, epoch: int, seed: int) -> list[np.ndarray]:
    """The index batches of one epoch: a permutation from (seed, epoch); the incomplete last batch is dropped."""
    perm = np.random.default_rng([int(seed), 6, int(epoch)]).permutation(n)
    return [perm[i:i + batch] for i in range(0, n - batch + 1, batch)]


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------------------------------------------------------------
# the strategies: each is an object with build(), train_step(x, y) -> loss, logits(x) -> np.ndarray, close()

class _TF1:
    def __init__(self, static: bool, cell: str, layer: dict, dense_k, dense_b, lr: float, steps: int, feats: int,
                 device: str):
        import tensorflow as tf

        from rnnlab.tf.tf1 import _cell_classes
        from rnnlab.tf.weights import as_list

        v1 = tf.compat.v1
        self.tf, self.v1 = tf, v1
        self.g = tf.Graph()
        classes, _ = _cell_classes()
        with self.g.as_default(), tf.device(device):
            self.x = v1.placeholder(tf.float32, [None, steps, feats], name="x")
            self.y = v1.placeholder(tf.int32, [None], name="y")
            c = classes[cell](dense_k.shape[0])
            if static:
                _, state = v1.nn.static_rnn(c, tf.unstack(self.x, num=steps, axis=1), dtype=tf.float32)
            else:
                _, state = v1.nn.dynamic_rnn(c, self.x, dtype=tf.float32)
            h = state.h if cell == "lstm" else state
            w = v1.get_variable("dense/kernel", dense_k.shape, tf.float32)
            b = v1.get_variable("dense/bias", dense_b.shape, tf.float32)
            self.logits_t = tf.matmul(h, w) + b
            self.loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=self.y,
                                                                                      logits=self.logits_t))
            self.train_op = v1.train.AdamOptimizer(lr, ADAM["beta1"], ADAM["beta2"], ADAM["epsilon"]).minimize(
                self.loss)
            init = v1.global_variables_initializer()
            loads = []
            for var, arr in zip(list(c.weights) + [w, b], as_list(cell, layer) + [dense_k, dense_b]):
                ph = v1.placeholder(tf.float32, arr.shape)
                loads.append((var.assign(ph, read_value=False), ph, arr))
        self.sess = v1.Session(graph=self.g)
        self.sess.run(init)
        for op, ph, arr in loads:
            self.sess.run(op, {ph: arr})

    def train_step(self, x, y) -> float:
        return float(self.sess.run([self.train_op, self.loss], {self.x: x, self.y: y})[1])

    def logits(self, x) -> np.ndarray:
        return self.sess.run(self.logits_t, {self.x: x})

    def close(self):
        self.sess.close()


class _TF2:
    def __init__(self, unrolled: bool, cell: str, layer: dict, dense_k, dense_b, lr: float, steps: int, feats: int,
                 batch: int, n_test: int):
        import types

        import tensorflow as tf

        from rnnlab.tf.tf2 import Adam, Cells

        self.tf = tf
        units = dense_k.shape[0]
        self.cells = Cells(types.SimpleNamespace(cell=cell, weights=[layer], batch=batch, units=units))
        self.w = tf.Variable(dense_k, name="dense_kernel")
        self.b = tf.Variable(dense_b, name="dense_bias")
        self.vars = self.cells.trainable + [self.w, self.b]
        self.adam = Adam(self.vars, lr=lr, **ADAM)
        lstm = cell == "lstm"

        def final_h(x):
            z = tf.zeros([tf.shape(x)[0], units], tf.float32)
            states = [(z, z) if lstm else (z,)]
            if unrolled:
                for t in range(steps):
                    _, states = self.cells.step(x[:, t], states)
            else:
                def body(t, st):
                    _, new = self.cells.step(tf.gather(x, t, axis=1), st)
                    return t + 1, new

                _, states = tf.while_loop(lambda t, st: t < steps, body, (tf.constant(0), states),
                                          maximum_iterations=steps)
            return states[0][1] if lstm else states[0][0]

        def logits(x):
            return tf.matmul(final_h(x), self.w) + self.b

        def train(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits(x)))
            self.adam.apply(tape.gradient(loss, self.vars))
            return loss

        spec_x = tf.TensorSpec([batch, steps, feats], tf.float32)
        self.train_fn = tf.function(train, autograph=False).get_concrete_function(spec_x, tf.TensorSpec([batch],
                                                                                                      tf.int32))
        self.logits_fn = tf.function(logits, autograph=False).get_concrete_function(
            tf.TensorSpec([n_test, steps, feats], tf.float32))

    def train_step(self, x, y) -> float:
        return float(self.train_fn(self.tf.constant(x), self.tf.constant(y)).numpy())

    def logits(self, x) -> np.ndarray:
        return self.logits_fn(self.tf.constant(x)).numpy()

    def close(self):
        pass


class _Keras:
    def __init__(self, variant: str, cell: str, layer: dict, dense_k, dense_b, lr: float, steps: int, feats: int,
                 batch: int, n_test: int):
        import keras
        import tensorflow as tf

        from rnnlab.tf.weights import to_keras

        self.tf = tf
        units = dense_k.shape[0]
        init = dict(kernel_initializer="zeros", recurrent_initializer="zeros", bias_initializer="zeros")
        if variant == "keras_cell":
            c = {"rnn": lambda: keras.layers.SimpleRNNCell(units, **init),
                 "lstm": lambda: keras.layers.LSTMCell(units, **init),
                 "gru": lambda: keras.layers.GRUCell(units, reset_after=False, **init)}[cell]()
            rnn = keras.layers.RNN(c)
        else:
            unroll = variant == "keras_unroll"
            kw = dict(unroll=unroll, **init)
            rnn = {"rnn": lambda: keras.layers.SimpleRNN(units, **kw), "lstm": lambda: keras.layers.LSTM(units, **kw),
                   "gru": lambda: keras.layers.GRU(units, reset_after=False, **kw)}[cell]()
        rnn.build((None, steps, feats))
        rnn.set_weights(to_keras(cell, layer, feats))
        dense = keras.layers.Dense(dense_k.shape[1])
        dense.build((None, units))
        dense.set_weights([dense_k, dense_b])
        self.layers = [rnn, dense]
        self.vars = rnn.trainable_weights + dense.trainable_weights
        self.opt = keras.optimizers.Adam(learning_rate=lr, beta_1=ADAM["beta1"], beta_2=ADAM["beta2"],
                                         epsilon=ADAM["epsilon"])
        self.opt.build(self.vars)

        def logits(x):
            return dense(rnn(x))

        def train(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits(x)))
            self.opt.apply(tape.gradient(loss, self.vars), self.vars)
            return loss

        if variant == "keras_eager":
            self.train_fn, self.logits_fn = train, logits
        else:
            self.train_fn = tf.function(train, autograph=False).get_concrete_function(
                tf.TensorSpec([batch, steps, feats], tf.float32), tf.TensorSpec([batch], tf.int32))
            self.logits_fn = tf.function(logits, autograph=False).get_concrete_function(
                tf.TensorSpec([n_test, steps, feats], tf.float32))

    def train_step(self, x, y) -> float:
        return float(self.train_fn(self.tf.constant(x), self.tf.constant(y)).numpy())

    def logits(self, x) -> np.ndarray:
        return np.asarray(self.logits_fn(self.tf.constant(x)))

    def close(self):
        pass


def _accuracy(logits: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.argmax(logits, axis=1) == y))


def _xent(logits: np.ndarray, y: np.ndarray) -> float:
    p = _softmax(logits.astype(np.float64))
    return float(-np.mean(np.log(np.maximum(p[np.arange(len(y)), y], 1e-300))))


def run_variant(params: dict, variant: str, ctx) -> dict:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    from rnnlab.core.errors import VariantUnsupported

    if variant not in VARIANTS:
        raise VariantUnsupported(f"unknown training variant {variant!r}; known: {', '.join(VARIANTS)}")
    import tensorflow as tf

    p = params
    try:
        data = load_data(p)
    except RnnlabError as e:
        raise VariantUnsupported(str(e)) from None
    xtr, ytr, xte, yte = data["x_train"], data["y_train"], data["x_test"], data["y_test"]
    steps, feats = xtr.shape[1], xtr.shape[2]
    n_classes = int(max(ytr.max(), yte.max())) + 1
    layer, dk, db = initial_weights(p["cell"], p["units"], feats, n_classes, p["seed"])
    batch = min(int(p["batch"]), len(xtr))
    lr = float(p["lr"])

    ctx.phase("build")
    t0 = time.perf_counter()
    with tf.device(ctx.tf_device):
        if variant in ("tf1_static", "tf1_dynamic"):
            model = _TF1(variant == "tf1_static", p["cell"], layer, dk, db, lr, steps, feats, ctx.tf_device)
        elif variant in ("tf2_unrolled", "tf2_while"):
            model = _TF2(variant == "tf2_unrolled", p["cell"], layer, dk, db, lr, steps, feats, batch, len(xte))
        else:
            model = _Keras(variant, p["cell"], layer, dk, db, lr, steps, feats, batch, len(xte))
    build_s = 0.0 if variant == "keras_eager" else time.perf_counter() - t0

    try:
        with tf.device(ctx.tf_device):
            logits0 = model.logits(xte)
            acc_curve, loss_curve, epoch_times = [], [], []
            reached_epoch, reached_s, cum = None, None, 0.0
            n_steps = 0
            for e in range(int(p["epochs"])):
                ctx.phase(f"epoch {e + 1}")
                idx = batches(len(xtr), batch, e, p["seed"])
                n_steps = len(idx)
                losses = []
                t0 = time.perf_counter()
                for bi in idx:
                    losses.append(model.train_step(xtr[bi], ytr[bi]))
                dt = time.perf_counter() - t0
                cum += dt
                epoch_times.append(dt)
                loss_curve.append(float(np.mean(losses)))
                acc = _accuracy(model.logits(xte), yte)
                acc_curve.append(acc)
                if reached_epoch is None and acc >= p["target_acc"]:
                    reached_epoch, reached_s = e + 1, build_s + cum
            final_logits = model.logits(xte)
    finally:
        model.close()

    later = epoch_times[1:] or epoch_times
    epoch_s = statistics.median(later)
    m = {"build_s": build_s, "first_epoch_s": epoch_times[0], "epoch_s": epoch_s,
         "step_ms": epoch_s / max(n_steps, 1) * 1000.0, "train_s": sum(epoch_times),
         "initial_acc": _accuracy(logits0, yte), "initial_loss": _xent(logits0, yte), "final_acc": acc_curve[-1],
         "best_acc": max(acc_curve), "final_loss": loss_curve[-1], "steps_per_epoch": float(n_steps)}
    if reached_epoch is not None:
        m.update(time_to_target_s=reached_s, epochs_to_target=float(reached_epoch))
    details = {
        "label": LABELS[variant],
        "acc_curve": [round(a, 6) for a in acc_curve],
        "loss_curve": [round(v, 6) for v in loss_curve],
        "epoch_times_s": [round(t, 4) for t in epoch_times],
        "dataset": {"name": data["name"], "source": data["source"], "n_train": int(len(xtr)),
                    "n_test": int(len(xte)), "steps": int(steps), "features": int(feats), "classes": n_classes},
        "optimizer": {"name": "Adam", "lr": lr, **ADAM},
        "batches": f"{n_steps} batches of {batch} per epoch (permutation per epoch from seed; remainder dropped)",
        "target_acc": p["target_acc"],
        "device": ctx.device,
    }
    return {"metrics": m, "details": details,
            "outputs": {"test_probs": _softmax(final_logits.astype(np.float64)).astype(np.float32)}}
