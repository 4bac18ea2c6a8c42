"""TF1 variants: ``tf1_static`` (static_rnn) and ``tf1_dynamic`` (dynamic_rnn) in a v1 ``Graph`` + ``Session``.

Imported only inside a worker process. The TF1 cells live in tf-keras, which TensorFlow only wires up when
``TF_USE_LEGACY_KERAS=1`` is set before its first import; the worker sets it, and so does this module in case.
"""

from __future__ import annotations

import contextlib
import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from rnnlab.core.errors import VariantUnsupported  # noqa: E402
from rnnlab.tf.weights import Problem, as_list  # noqa: E402

v1 = tf.compat.v1

LEARNING_RATE = 1e-3


def _cell_classes():
    try:
        rc = v1.nn.rnn_cell
        return {"rnn": rc.BasicRNNCell, "lstm": rc.BasicLSTMCell, "gru": rc.GRUCell}, rc.MultiRNNCell
    except Exception as e:  # tf-keras missing, or TensorFlow imported before TF_USE_LEGACY_KERAS was set
        raise VariantUnsupported(
            f"TF1 cells unavailable ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}); "
            "install tf-keras and set TF_USE_LEGACY_KERAS=1 before TensorFlow is imported") from None


_CAST_SCOPE = "rnn_cast"


def _cast_scope(comp):
    """A variable scope whose variables are float32 and read as ``comp`` (TF1's mixed-precision custom getter)."""

    def cast_getter(getter, name, shape=None, dtype=None, *args, **kw):  # TF passes ``getter=`` by name
        var = getter(name, shape, tf.float32, *args, **kw)  # master weights stay float32
        return tf.cast(var, comp) if dtype == comp else var

    return v1.variable_scope(_CAST_SCOPE, custom_getter=cast_getter)


def _per_layer_states(cell: str, state, layers: int) -> list[dict]:
    """MultiRNNCell gives a tuple of per-layer states; BasicLSTMCell's state is LSTMStateTuple(c, h)."""
    per_layer = list(state) if layers > 1 else [state]
    out = []
    for st in per_layer:
        out.append({"h": st.h, "c": st.c} if cell == "lstm" else {"h": st})
    return out


class TF1Runner:
    """Builds the forward graph, a session with the canonical weights loaded, then the Adam train step.

    The one TF1 graph builder of rnnlab; ``parallel_iterations``, ``swap_memory``, ``time_major`` and the lengths
    come from the Problem, and three hooks cover the experiments that build something slightly different:

    - ``first_n`` (``tf1_static`` only): ``static_rnn`` over ``tf.unstack(x[:, :N], num=N)`` (seed 000's "only unroll
      the first N steps"); the input variable keeps its full length.
    - ``compute_dtype`` (``"float16"`` / ``"bfloat16"``): the TF1 mixed-precision recipe. Variables stay float32
      behind a ``variable_scope`` custom getter that casts them to the compute dtype, the inputs are cast, the RNN
      runs with ``dtype=compute_dtype``, outputs and states are cast back to float32.
    - ``loss_scale``: the train step takes the gradients of ``loss * loss_scale`` and divides them back before
      ``AdamOptimizer.apply_gradients`` (None: ``AdamOptimizer.minimize(loss)``).
    """

    def __init__(self, pb: Problem, variant: str, ctx, *, first_n: int | None = None,
                 compute_dtype: str = "float32", loss_scale: float | None = None):
        if variant not in ("tf1_static", "tf1_dynamic"):
            raise ValueError(variant)
        if pb.dtype != "float32":
            raise VariantUnsupported(
                f"dtype={pb.dtype}: {variant} builds float32 TF1 graphs only; "
                "mixed_float16/bfloat16 are measured with the keras* variants")
        if first_n is not None and (variant != "tf1_static" or not 1 <= first_n <= pb.seq_len):
            raise VariantUnsupported(f"first_n={first_n}: tf1_static only, 1 <= first_n <= seq_len={pb.seq_len}")
        self.pb, self.variant, self.ctx = pb, variant, ctx
        self.static = variant == "tf1_static"
        self.first_n, self.compute_dtype, self.loss_scale = first_n, compute_dtype, loss_scale
        self.sess = None
        labels = {"rnn": "BasicRNNCell", "lstm": "BasicLSTMCell", "gru": "GRUCell"}
        if first_n is not None:
            kernel = f"generic (TF1 cells, unrolled graph of the first {first_n} of {pb.seq_len} steps)"
        elif compute_dtype != "float32":
            kernel = (f"generic (TF1 cells computing in {compute_dtype} on float32 variables, "
                      + ("unrolled graph)" if self.static else "while_loop)"))
        else:
            kernel = f"generic (TF1 {labels[pb.cell]} ops, " + ("unrolled graph)" if self.static else "while_loop)")
        self.details = {
            "kernel": kernel,
            "xla": False,
            "time_major": pb.time_major,
        }
        if not self.static:
            self.details.update(parallel_iterations=pb.parallel_iterations, swap_memory=pb.swap_memory)
        if loss_scale is not None:
            self.details["loss_scale"] = loss_scale

    # -- graphs --------------------------------------------------------------------------------------------
    # The train step gets its own graph. Under TF2 control flow (While/If ops with function bodies) taking gradients
    # rewrites the forward While/If to also output its intermediates: done in the forward graph, that would slow the
    # measured forward pass, and done after a Session has run the graph it fails outright.
    def _build(self, train: bool) -> dict:
        pb = self.pb
        classes, multi = _cell_classes()
        cast = self.compute_dtype != "float32"
        comp = tf.as_dtype(self.compute_dtype)
        g = {"graph": tf.Graph()}
        with g["graph"].as_default(), tf.device(self.ctx.tf_device):
            # Inputs live in a variable (loaded once) so no feed is copied per call, as for the TF2 variants.
            g["x"] = v1.get_variable("inputs", shape=pb.x_feed.shape, dtype=tf.float32, trainable=False,
                                     initializer=v1.zeros_initializer())
            lengths = pb.lengths if self.first_n is None else [min(n, self.first_n) for n in pb.lengths]
            seq = tf.constant(lengths, dtype=tf.int32, name="sequence_length") if pb.masked else None
            with _cast_scope(comp) if cast else contextlib.nullcontext():
                kw = {"dtype": comp} if cast else {}
                g["cells"] = [classes[pb.cell](pb.units, **kw) for _ in range(pb.layers)]
                cell = multi(g["cells"]) if pb.layers > 1 else g["cells"][0]
                x = tf.cast(g["x"], comp) if cast else g["x"]
                if self.static:
                    axis = 0 if pb.time_major else 1
                    if self.first_n is not None:
                        x = x[: self.first_n] if pb.time_major else x[:, : self.first_n]
                    steps = tf.unstack(x, num=self.first_n, axis=axis)
                    outs, state = v1.nn.static_rnn(cell, steps, sequence_length=seq, dtype=comp)
                    outputs = tf.stack(outs, axis=1)  # batch-major
                else:
                    outputs, state = v1.nn.dynamic_rnn(
                        cell, x, sequence_length=seq, dtype=comp, time_major=pb.time_major,
                        parallel_iterations=pb.parallel_iterations, swap_memory=pb.swap_memory)
            states = _per_layer_states(pb.cell, state, pb.layers)
            if cast:
                g["outputs"] = tf.cast(outputs, tf.float32)
                g["states"] = [{k: tf.cast(t, tf.float32) for k, t in st.items()} for st in states]
                weights = [v for v in v1.trainable_variables() if v.name.startswith(_CAST_SCOPE + "/")]
            else:
                g["outputs"], g["states"] = outputs, states
                weights = [w for c in g["cells"] for w in c.weights]
            if train:
                g["loss"] = tf.reduce_mean(tf.square(g["outputs"]))
                opt = v1.train.AdamOptimizer(LEARNING_RATE)
                if self.loss_scale is None:
                    g["train_op"] = opt.minimize(g["loss"])
                else:
                    scale = self.loss_scale
                    grads = opt.compute_gradients(g["loss"] * scale, var_list=weights)
                    g["train_op"] = opt.apply_gradients([(gr / scale, v) for gr, v in grads])
            g["init"] = v1.global_variables_initializer()
            # Loading through placeholders keeps the weights out of the graph (forward_graph_def prunes these ops).
            g["loads"] = []
            for var in [g["x"]] + weights:
                ph = v1.placeholder(var.dtype.base_dtype, var.shape)
                g["loads"].append((var, ph, var.assign(ph, read_value=False)))
        return g

    def _open(self, g: dict):
        """A session on ``g`` with variables initialised, the canonical weights and the inputs loaded."""
        sess = v1.Session(graph=g["graph"], config=v1.ConfigProto(allow_soft_placement=True))
        with g["graph"].as_default():
            sess.run(g["init"])
            arrays = [self.pb.x_feed] + [a for layer in self.pb.weights for a in as_list(self.pb.cell, layer)]
            if len(arrays) != len(g["loads"]):
                raise RuntimeError(f"TF1 cells made {len(g['loads']) - 1} variables, expected {len(arrays) - 1}")
            for (var, ph, op), arr in zip(g["loads"], arrays):
                if tuple(var.shape) != arr.shape:
                    raise RuntimeError(f"{var.name}: shape {tuple(var.shape)} != canonical {arr.shape}")
                sess.run(op, {ph: arr})
        return sess

    # -- forward ---------------------------------------------------------------------------------------------
    def build_forward(self) -> None:
        self.fg = self._build(train=False)
        self.fetches = {"outputs": self.fg["outputs"], "states": self.fg["states"]}

    def drop_forward(self) -> None:
        """Let go of the forward graph (measure.time_builds builds it again into a new tf.Graph)."""
        self.fg = self.fetches = None

    def forward_graph_def(self):
        """Only what computing outputs and final states needs (no initializers), plus the function library."""
        gd = self.fg["graph"].as_graph_def()
        names = [self.fg["outputs"].op.name] + [t.op.name for st in self.fg["states"] for t in st.values()]
        sub = v1.graph_util.extract_sub_graph(gd, names)
        if not len(sub.library.function):
            sub.library.CopyFrom(gd.library)
        return sub

    def start(self) -> None:
        self.sess = self._open(self.fg)

    def forward(self):
        return self.sess.run(self.fetches)

    def result(self, raw) -> dict[str, np.ndarray]:
        out = np.asarray(raw["outputs"], dtype=np.float32)
        if self.pb.time_major and not self.static:
            out = out.transpose(1, 0, 2)
        d = {"outputs": np.ascontiguousarray(out)}
        for li, st in enumerate(raw["states"]):
            for k in ("h", "c"):
                if k in st:
                    d[f"state_{li}_{k}"] = np.asarray(st[k], dtype=np.float32)
        return d

    # -- train -----------------------------------------------------------------------------------------------
    def build_train(self) -> None:
        """A fresh graph: the same forward, loss = mean(outputs**2), AdamOptimizer.minimize."""
        self.tg = self._build(train=True)

    def start_train(self) -> None:
        self.close()
        self.sess = self._open(self.tg)
        self.train_fetches = [self.tg["train_op"], self.tg["loss"]]

    def train(self):
        return self.sess.run(self.train_fetches)[1]

    def close(self) -> None:
        if self.sess is not None:
            self.sess.close()
            self.sess = None
