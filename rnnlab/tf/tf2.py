"""TF2 variants: hand-written cells on ``tf.Variable``s in the canonical (TF1) layout, inside a ``tf.function``.

- ``tf2_unrolled``: a Python loop over the time steps, traced into one straight-line graph (TF2's static unrolling).
- ``tf2_while``: ``tf.while_loop`` over a ``TensorArray`` (what ``dynamic_rnn`` does), honouring
  ``parallel_iterations`` and ``swap_memory``; with lengths it stops at the longest row, as ``dynamic_rnn`` does.

The cell maths mirror the TF1 cells op for op (concat [x, h], matmul, bias_add, split), and the length semantics are
``dynamic_rnn``'s: past a row's length its output is zero and its state is carried through.
The train step is the forward, loss = mean(outputs**2), ``tf.GradientTape`` gradients and Adam applied with the same
kernel ``tf.compat.v1.train.AdamOptimizer`` uses (``ResourceApplyAdam``), so it also compiles under XLA.
Imported only inside a worker process.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from rnnlab.core.errors import VariantUnsupported
from rnnlab.tf.weights import FORGET_BIAS, WEIGHT_NAMES, Problem

LEARNING_RATE = 1e-3


class Cells:
    """The stacked cells' variables (canonical layout) and one step of the whole stack."""

    def __init__(self, pb: Problem):
        self.pb = pb
        self.vars: list[dict[str, tf.Variable]] = []
        for li, layer in enumerate(pb.weights):
            self.vars.append({name: tf.Variable(layer[name], name=f"layer{li}/{name.replace('/', '_')}")
                              for name in WEIGHT_NAMES[pb.cell]})

    @property
    def trainable(self) -> list[tf.Variable]:
        return [v for layer in self.vars for v in layer.values()]

    def zero_state(self) -> list[tuple]:
        z = tf.zeros([self.pb.batch, self.pb.units], tf.float32)
        return [(z, z) if self.pb.cell == "lstm" else (z,) for _ in self.vars]

    def _cell(self, w: dict, x, state: tuple):
        cell = self.pb.cell
        if cell == "rnn":
            (h,) = state
            h2 = tf.tanh(tf.nn.bias_add(tf.matmul(tf.concat([x, h], 1), w["kernel"]), w["bias"]))
            return h2, (h2,)
        if cell == "lstm":
            c, h = state
            z = tf.nn.bias_add(tf.matmul(tf.concat([x, h], 1), w["kernel"]), w["bias"])
            i, j, f, o = tf.split(z, 4, axis=1)
            c2 = c * tf.sigmoid(f + FORGET_BIAS) + tf.sigmoid(i) * tf.tanh(j)
            h2 = tf.tanh(c2) * tf.sigmoid(o)
            return h2, (c2, h2)
        (h,) = state
        g = tf.sigmoid(tf.nn.bias_add(tf.matmul(tf.concat([x, h], 1), w["gates/kernel"]), w["gates/bias"]))
        r, u = tf.split(g, 2, axis=1)
        cand = tf.tanh(tf.nn.bias_add(tf.matmul(tf.concat([x, r * h], 1), w["candidate/kernel"]),
                                      w["candidate/bias"]))
        h2 = u * h + (1.0 - u) * cand
        return h2, (h2,)

    def step(self, x, states: list[tuple], live=None):
        """All layers for one time step; ``live`` [batch, 1] bool selects new vs carried state (None: all live)."""
        inp, new_states = x, []
        for w, st in zip(self.vars, states):
            inp, ns = self._cell(w, inp, st)
            new_states.append(ns)
        if live is None:
            return inp, new_states
        carried = [tuple(tf.where(live, n, o) for n, o in zip(ns, st)) for ns, st in zip(new_states, states)]
        return tf.where(live, inp, tf.zeros_like(inp)), carried


class Adam:
    """Adam on plain tf.Variables through ResourceApplyAdam, as tf.compat.v1.train.AdamOptimizer does."""

    def __init__(self, variables: list[tf.Variable], lr=LEARNING_RATE, beta1=0.9, beta2=0.999, epsilon=1e-8):
        self.vars = variables
        self.m = [tf.Variable(tf.zeros_like(v), trainable=False) for v in variables]
        self.v = [tf.Variable(tf.zeros_like(v), trainable=False) for v in variables]
        self.b1p = tf.Variable(beta1, trainable=False, dtype=tf.float32)
        self.b2p = tf.Variable(beta2, trainable=False, dtype=tf.float32)
        self.hyper = (tf.constant(lr, tf.float32), tf.constant(beta1, tf.float32),
                      tf.constant(beta2, tf.float32), tf.constant(epsilon, tf.float32))

    def apply(self, grads) -> None:
        lr, b1, b2, eps = self.hyper
        for var, m, v, g in zip(self.vars, self.m, self.v, grads):
            tf.raw_ops.ResourceApplyAdam(var=var.handle, m=m.handle, v=v.handle, beta1_power=self.b1p,
                                         beta2_power=self.b2p, lr=lr, beta1=b1, beta2=b2, epsilon=eps, grad=g)
        self.b1p.assign(self.b1p * b1)
        self.b2p.assign(self.b2p * b2)


class TF2Runner:
    def __init__(self, pb: Problem, variant: str, xla: bool, ctx):
        if variant not in ("tf2_unrolled", "tf2_while"):
            raise ValueError(variant)
        if pb.dtype != "float32":
            raise VariantUnsupported(
                f"dtype={pb.dtype}: {variant} runs hand-written float32 cells only; "
                "mixed_float16/bfloat16 are measured with the keras* variants")
        self.pb, self.variant, self.xla, self.ctx = pb, variant, xla, ctx
        self.unrolled = variant == "tf2_unrolled"
        self.details = {
            "kernel": "generic (hand-written cell ops, " + ("unrolled graph)" if self.unrolled else "while_loop)"),
            "xla": xla,
            "time_major": pb.time_major,
        }
        if not self.unrolled:
            self.details.update(parallel_iterations=pb.parallel_iterations, swap_memory=pb.swap_memory)

    def _jit(self):
        return True if self.xla else None

    # -- the forward pass, as traced Python ------------------------------------------------------------------
    def _forward(self, x):
        pb = self.pb
        lengths = tf.constant(pb.lengths, tf.int32) if pb.masked else None
        states = self.cells.zero_state()
        if self.unrolled:
            outs = []
            for t in range(pb.seq_len):
                x_t = x[t] if pb.time_major else x[:, t]
                live = tf.expand_dims(tf.less(t, lengths), 1) if lengths is not None else None
                out, states = self.cells.step(x_t, states, live)
                outs.append(out)
            return tf.stack(outs, axis=1), states  # batch-major, like tf1_static's stacked list

        xs = x if pb.time_major else tf.transpose(x, [1, 0, 2])
        in_ta = tf.TensorArray(tf.float32, size=pb.seq_len, element_shape=[pb.batch, pb.input_dim]).unstack(xs)
        out_ta = tf.TensorArray(tf.float32, size=pb.seq_len, element_shape=[pb.batch, pb.units])
        # dynamic_rnn stops at the longest row; steps never run stay zero in the stacked outputs.
        bound = (tf.minimum(pb.seq_len, tf.reduce_max(lengths)) if lengths is not None
                 else tf.constant(pb.seq_len))

        def cond(t, states, ta):
            return t < bound

        def body(t, states, ta):
            live = tf.expand_dims(tf.less(t, lengths), 1) if lengths is not None else None
            out, new_states = self.cells.step(in_ta.read(t), states, live)
            return t + 1, new_states, ta.write(t, out)

        _, states, out_ta = tf.while_loop(
            cond, body, (tf.constant(0), states, out_ta), parallel_iterations=pb.parallel_iterations,
            swap_memory=pb.swap_memory, maximum_iterations=pb.seq_len)
        outputs = out_ta.stack()  # [time, batch, units]
        return (outputs if pb.time_major else tf.transpose(outputs, [1, 0, 2])), states

    def _returns_time_major(self) -> bool:
        return self.pb.time_major and not self.unrolled

    # -- runner protocol (see measure.py) --------------------------------------------------------------------
    def build_forward(self) -> None:
        self.cells = Cells(self.pb)
        self.x = tf.constant(self.pb.x_feed)
        self.fwd = tf.function(self._forward, jit_compile=self._jit(), autograph=False)
        self.concrete = self.fwd.get_concrete_function(self.x)

    def drop_forward(self) -> None:
        """Let go of the variables and the traced function (measure.time_builds builds and traces them again)."""
        self.cells = self.x = self.fwd = self.concrete = None

    def forward_graph_def(self):
        return self.concrete.graph.as_graph_def()

    def start(self) -> None:
        pass

    def forward(self):
        return tf.nest.map_structure(lambda t: t.numpy(), self.fwd(self.x))

    def result(self, raw) -> dict[str, np.ndarray]:
        outputs, states = raw
        out = outputs.transpose(1, 0, 2) if self._returns_time_major() else outputs
        d = {"outputs": np.ascontiguousarray(out, dtype=np.float32)}
        for li, st in enumerate(states):
            if self.pb.cell == "lstm":
                d[f"state_{li}_h"], d[f"state_{li}_c"] = st[1], st[0]
            else:
                d[f"state_{li}_h"] = st[0]
        return d

    def _train(self, x):
        with tf.GradientTape() as tape:
            outputs, _ = self._forward(x)
            loss = tf.reduce_mean(tf.square(outputs))
        grads = tape.gradient(loss, self.cells.trainable)
        self.adam.apply(grads)
        return loss

    def build_train(self) -> None:
        self.adam = Adam(self.cells.trainable)
        self.train_fn = tf.function(self._train, jit_compile=self._jit(), autograph=False)
        self.train_fn.get_concrete_function(self.x)

    def start_train(self) -> None:
        pass

    def train(self):
        return self.train_fn(self.x).numpy()

    def close(self) -> None:
        pass
