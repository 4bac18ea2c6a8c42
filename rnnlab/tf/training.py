"""Training one small classifier with each unrolling strategy (the ``training`` experiment's worker side): the
strategies, each an object with ``train_step(x, y) -> loss``, ``logits(x)`` and ``close()``, and :func:`run`,
which builds one, trains it for the epochs asked, and returns its record's metrics, details and outputs."""

from __future__ import annotations

import statistics
import time

import numpy as np

from rnnlab.core.errors import RnnlabError, VariantUnsupported
from rnnlab.tf.training_data import ADAM, accuracy, batches, initial_weights, load_data, softmax, xent

# the strategies: each is an object with build(), train_step(x, y) -> loss, logits(x) -> np.ndarray, close()

class TF1Strategy:
    """static_rnn / dynamic_rnn in a v1 Graph + Session, AdamOptimizer."""

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


class TF2Strategy:
    """The TF2 variants' cells on tf.Variables: a Python loop or tf.while_loop in a tf.function."""

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


class KerasStrategy:
    """A Keras 3 layer (or RNN(Cell)) and a dense layer; the train step in a tf.function, or eager."""

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


def run(p: dict, variant: str, ctx, label: str) -> dict:
    """Train ``variant``'s model from the common start; ``label`` is the variant's words in the record."""
    import tensorflow as tf

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
            model = TF1Strategy(variant == "tf1_static", p["cell"], layer, dk, db, lr, steps, feats, ctx.tf_device)
        elif variant in ("tf2_unrolled", "tf2_while"):
            model = TF2Strategy(variant == "tf2_unrolled", p["cell"], layer, dk, db, lr, steps, feats, batch,
                                len(xte))
        else:
            model = KerasStrategy(variant, p["cell"], layer, dk, db, lr, steps, feats, batch, len(xte))
    build_s = 0.0 if variant == "keras_eager" else time.perf_counter() - t0
    try:
        with tf.device(ctx.tf_device):
            run_ = _train(model, data, p, ctx, batch, build_s)
    finally:
        model.close()
    return _result(run_, data, p, ctx, label=label, build_s=build_s, batch=batch, lr=lr, n_classes=n_classes)


def _train(model, data: dict, p: dict, ctx, batch: int, build_s: float) -> dict:
    """Every epoch's training steps timed, the test set evaluated before training and after each epoch."""
    xtr, ytr, xte, yte = data["x_train"], data["y_train"], data["x_test"], data["y_test"]
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
        acc = accuracy(model.logits(xte), yte)
        acc_curve.append(acc)
        if reached_epoch is None and acc >= p["target_acc"]:
            reached_epoch, reached_s = e + 1, build_s + cum
    return {"logits0": logits0, "final_logits": model.logits(xte), "acc_curve": acc_curve, "loss_curve": loss_curve,
            "epoch_times": epoch_times, "reached_epoch": reached_epoch, "reached_s": reached_s, "n_steps": n_steps}


def _result(r: dict, data: dict, p: dict, ctx, *, label: str, build_s: float, batch: int, lr: float,
            n_classes: int) -> dict:
    xtr, xte, yte = data["x_train"], data["x_test"], data["y_test"]
    epoch_times, acc_curve, loss_curve, n_steps = r["epoch_times"], r["acc_curve"], r["loss_curve"], r["n_steps"]
    later = epoch_times[1:] or epoch_times
    epoch_s = statistics.median(later)
    m = {"build_s": build_s, "first_epoch_s": epoch_times[0], "epoch_s": epoch_s,
         "step_ms": epoch_s / max(n_steps, 1) * 1000.0, "train_s": sum(epoch_times),
         "initial_acc": accuracy(r["logits0"], yte), "initial_loss": xent(r["logits0"], yte),
         "final_acc": acc_curve[-1], "best_acc": max(acc_curve), "final_loss": loss_curve[-1],
         "steps_per_epoch": float(n_steps)}
    if r["reached_epoch"] is not None:
        m.update(time_to_target_s=r["reached_s"], epochs_to_target=float(r["reached_epoch"]))
    details = {
        "label": label,
        "acc_curve": [round(a, 6) for a in acc_curve],
        "loss_curve": [round(v, 6) for v in loss_curve],
        "epoch_times_s": [round(t, 4) for t in epoch_times],
        "dataset": {"name": data["name"], "source": data["source"], "n_train": int(len(xtr)),
                    "n_test": int(len(xte)), "steps": int(xtr.shape[1]), "features": int(xtr.shape[2]),
                    "classes": n_classes},
        "optimizer": {"name": "Adam", "lr": lr, **ADAM},
        "batches": f"{n_steps} batches of {batch} per epoch (permutation per epoch from seed; remainder dropped)",
        "target_acc": p["target_acc"],
        "device": ctx.device,
    }
    return {"metrics": m, "details": details,
            "outputs": {"test_probs": softmax(r["final_logits"].astype(np.float64)).astype(np.float32)}}
