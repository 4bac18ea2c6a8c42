"""Keras 3 variants: ``keras`` (SimpleRNN/LSTM/GRU layers), ``keras_unroll`` (unroll=True) and ``keras_cell``
(``keras.layers.RNN(LSTMCell(...))`` and kin, never fused).

Layer defaults throughout, except GRU ``reset_after=False`` so it computes exactly TF1's GRUCell (the canonical weights
are converted by ``weights.to_keras``). Layers are stacked with ``return_sequences`` and ``return_state``; lengths
become a boolean right-padded mask passed as ``mask=``, with ``zero_output_for_mask=True`` so padded outputs are zero
as in ``dynamic_rnn``. Keras 3 layers are batch-major: with ``time_major`` the time-major input is transposed inside
the traced function. ``mixed_float16`` / ``bfloat16`` become the layers' dtype policy; outputs are cast to float32.

``details["kernel"]`` says which kernel ran: the traced graph is searched for cuDNN ops, and when there are none the
reason is given by Keras 3's own eligibility rules, applied by ``rnnlab.tf.cudnn`` to the layer built here
(:func:`layer_settings`).
Imported only inside a worker process.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

import keras

from rnnlab.tf.cudnn import kernel_note
from rnnlab.tf.weights import Problem, to_keras

LEARNING_RATE = 1e-3


_LAYER = {"rnn": "SimpleRNN", "lstm": "LSTM", "gru": "GRU"}
_CELL = {"rnn": "keras.layers.SimpleRNNCell(units)", "lstm": "keras.layers.LSTMCell(units)",
         "gru": "keras.layers.GRUCell(units, reset_after=False)"}


def layer_settings(pb: Problem, variant: str, device: str) -> tuple[str, dict]:
    """The layer this runner builds and its arguments, in the terms of ``rnnlab.tf.cudnn.cudnn_eligibility``.

    Activations, use_bias and recurrent_dropout are Keras's defaults here; lengths (each >= 1) become a strictly
    right-padded mask; a time-major input is transposed before the layer, which never sees ``time_major``.
    """
    settings: dict = {"gpu": device == "GPU"}
    if pb.masked:
        settings["sequence_length"] = list(pb.lengths)
    if variant == "keras_cell":
        return "RNN", {**settings, "cell": _CELL[pb.cell]}
    settings["unroll"] = variant == "keras_unroll"
    if pb.cell == "gru":
        settings["reset_after"] = False
    return _LAYER[pb.cell], settings


def _graph_ops(graph_def) -> set[str]:
    ops = {n.op for n in graph_def.node}
    for f in graph_def.library.function:
        ops.update(n.op for n in f.node_def)
    return ops


class KerasRunner:
    def __init__(self, pb: Problem, variant: str, xla: bool, ctx):
        if variant not in ("keras", "keras_unroll", "keras_cell"):
            raise ValueError(variant)
        self.pb, self.variant, self.xla, self.ctx = pb, variant, xla, ctx
        self.policy = None if pb.dtype == "float32" else keras.DTypePolicy(pb.dtype)
        self.details = {
            "xla": xla,
            "time_major": pb.time_major,
            "keras_dtype_policy": pb.dtype,
        }
        if pb.time_major:
            self.details["time_major_note"] = "Keras 3 layers are batch-major: transposed inside the function"

    def _jit(self):
        return True if self.xla else None

    def _make_layer(self, in_dim: int, weights: dict):
        pb, units = self.pb, self.pb.units
        # The canonical weights overwrite whatever the initializers draw: zeros skip the orthogonal initializer's QR
        # (slow for big units, and not defined for bfloat16) without changing what is computed.
        init = dict(kernel_initializer="zeros", recurrent_initializer="zeros", bias_initializer="zeros")
        common = dict(return_sequences=True, return_state=True, zero_output_for_mask=True, dtype=self.policy)
        if self.variant == "keras_cell":
            cell = {"rnn": lambda: keras.layers.SimpleRNNCell(units, dtype=self.policy, **init),
                    "lstm": lambda: keras.layers.LSTMCell(units, dtype=self.policy, **init),
                    "gru": lambda: keras.layers.GRUCell(units, reset_after=False, dtype=self.policy, **init)}[pb.cell]()
            layer = keras.layers.RNN(cell, **common)
        else:
            unroll = self.variant == "keras_unroll"
            if pb.cell == "rnn":
                layer = keras.layers.SimpleRNN(units, unroll=unroll, **init, **common)
            elif pb.cell == "lstm":
                layer = keras.layers.LSTM(units, unroll=unroll, **init, **common)
            else:
                layer = keras.layers.GRU(units, unroll=unroll, reset_after=False, **init, **common)
        layer.build((pb.batch, pb.seq_len, in_dim))
        layer.set_weights(to_keras(pb.cell, weights, in_dim))
        return layer

    def _forward(self, x, training=False):
        h = tf.transpose(x, [1, 0, 2]) if self.pb.time_major else x
        states = []
        for layer in self.layers:
            res = layer(h, mask=self.mask, training=training) if self.mask is not None else \
                layer(h, training=training)
            h = res[0]
            states.append([tf.cast(s, tf.float32) for s in res[1:]])  # [h] or, for LSTM, [h, c]
        return tf.cast(h, tf.float32), states

    # -- runner protocol (see measure.py) --------------------------------------------------------------------
    def build_forward(self) -> None:
        pb = self.pb
        self.layers = [self._make_layer(d, w) for d, w in zip(pb.in_dims, pb.weights)]
        self.x = tf.constant(pb.x_feed)
        self.mask = tf.constant(pb.mask()) if pb.masked else None
        self.fwd = tf.function(self._forward, jit_compile=self._jit(), autograph=False)
        self.concrete = self.fwd.get_concrete_function(self.x)

    def drop_forward(self) -> None:
        """Let go of the layers and the traced function (measure.time_builds makes new ones and traces again)."""
        self.layers = self.x = self.mask = self.fwd = self.concrete = None

    def forward_graph_def(self):
        gd = self.concrete.graph.as_graph_def()
        cudnn = any(op.startswith("CudnnRNN") for op in _graph_ops(gd))
        layer, settings = layer_settings(self.pb, self.variant, self.ctx.device)
        reason = kernel_note(layer, **settings)  # Keras 3's rules: rnnlab.tf.cudnn
        if cudnn:
            self.details["kernel"] = "cudnn"
        elif reason is not None:
            self.details["kernel"] = f"generic ({reason})"
        else:
            self.details["kernel"] = "generic (cuDNN-eligible by Keras's rules, but no cuDNN op was traced)"
        return gd

    def start(self) -> None:
        pass

    def forward(self):
        return tf.nest.map_structure(lambda t: t.numpy(), self.fwd(self.x))

    def result(self, raw) -> dict[str, np.ndarray]:
        outputs, states = raw
        d = {"outputs": np.ascontiguousarray(outputs, dtype=np.float32)}
        for li, st in enumerate(states):
            d[f"state_{li}_h"] = st[0]
            if self.pb.cell == "lstm":
                d[f"state_{li}_c"] = st[1]
        return d

    def _train(self, x):
        with tf.GradientTape() as tape:
            outputs, _ = self._forward(x, training=True)
            loss = tf.reduce_mean(tf.square(outputs))
            scaled = self.opt.scale_loss(loss)
        grads = tape.gradient(scaled, self.tvars)
        self.opt.apply(grads, self.tvars)
        return loss

    def build_train(self) -> None:
        """Adam from Keras 3 (wrapped in LossScaleOptimizer under mixed_float16, as Keras does in fit)."""
        opt = keras.optimizers.Adam(learning_rate=LEARNING_RATE)
        if self.pb.dtype == "mixed_float16":
            opt = keras.optimizers.LossScaleOptimizer(opt)
        self.opt = opt
        self.tvars = [w for layer in self.layers for w in layer.trainable_weights]
        self.opt.build(self.tvars)
        self.train_fn = tf.function(self._train, jit_compile=self._jit(), autograph=False)
        self.train_fn.get_concrete_function(self.x)

    def start_train(self) -> None:
        pass

    def train(self):
        return self.train_fn(self.x).numpy()

    def close(self) -> None:
        pass
