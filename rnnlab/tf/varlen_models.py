"""Small self-contained models for the variable-length semantics: run one layer over a padded batch and return every
step's output, every step's state and the final state, as NumPy arrays for the pure checks in ``checks.py``.

TensorFlow is imported inside the functions (set ``TF_USE_LEGACY_KERAS=1`` before the first import so the TF1 cells
resolve). Weights are the canonical ones of ``rnnlab.tf.weights`` (one layer), loaded into every implementation.

The state after each step is obtained by running the same implementation over each prefix ``x[:, :t+1]`` with the
same lengths (an RNN is causal, so that is exactly the state it holds after step ``t``): one graph with a
``static_rnn`` per prefix (sharing the cell's variables), one ``dynamic_rnn`` graph run once per prefix, and the Keras
layer called once per prefix. ``observe`` limits this to some steps (the rest are NaN in ``states``, which the checks
skip), since a static graph per prefix grows with the square of the length. State layout: ``h`` for rnn/gru, ``concat([c, h])`` for lstm (TF1's tuple order).
"""

from __future__ import annotations

import os

import numpy as np

KERAS_HOW = ("masking", "mask_arg", "none")


def _tf():
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow as tf

    return tf


def _tf1_cell(tf, cell: str, units: int):
    rc = tf.compat.v1.nn.rnn_cell
    if cell == "rnn":
        return rc.BasicRNNCell(units)
    if cell == "lstm":
        return rc.BasicLSTMCell(units)
    if cell == "gru":
        return rc.GRUCell(units)
    raise ValueError(f"cell={cell!r}")


def _flat_state(tf, cell: str, state):
    return tf.concat([state.c, state.h], axis=1) if cell == "lstm" else state


def _load_tf1(tf, sess, cell_obj, cell: str, layer: dict) -> None:
    from rnnlab.tf.weights import WEIGHT_NAMES

    names = WEIGHT_NAMES[cell]
    variables = list(cell_obj.weights)
    if len(variables) != len(names):
        raise RuntimeError(f"{cell} cell has {len(variables)} variables, expected {len(names)}")
    with sess.graph.as_default():
        for var, name in zip(variables, names):
            if not var.name.split(":")[0].endswith(name):
                raise RuntimeError(f"variable {var.name} does not match {name}")
            sess.run(var.assign(layer[name]))


def _steps(observe, t: int) -> list[int]:
    """The observed steps, sorted, always with the last one (whose state is the final state)."""
    steps = list(range(t)) if observe is None else sorted({int(s) for s in observe} | {t - 1})
    if steps[0] < 0 or steps[-1] >= t:
        raise ValueError(f"observe must be steps within [0, {t})")
    return steps


def _stack_states(finals: dict, steps: list[int], t: int) -> np.ndarray:
    """[batch, t, state] with NaN at the steps not observed."""
    first = finals[steps[0]]
    out = np.full((first.shape[0], t, first.shape[1]), np.nan, dtype=np.float64)
    for s in steps:
        out[:, s] = finals[s]
    return out


def run_tf1(cell: str, layer: dict, x: np.ndarray, lengths, units: int, static: bool, use_lengths: bool,
            device: str = "/CPU:0", observe=None) -> dict:
    """``tf.compat.v1.nn.static_rnn`` / ``dynamic_rnn`` in a v1 Graph + Session; ``sequence_length`` when
    ``use_lengths``. ``observe``: the steps whose state is recorded (default all; the others are NaN).
    Returns ``{"outputs", "states", "final", "final_parts", "info"}``."""
    tf = _tf()
    b, t, d = x.shape
    steps = _steps(observe, t)
    lens = np.asarray(lengths, dtype=np.int32)
    g = tf.Graph()
    with g.as_default(), tf.device(device):
        x_ph = tf.compat.v1.placeholder(tf.float32, [b, t if static else None, d], name="x")
        len_ph = tf.compat.v1.placeholder(tf.int32, [b], name="lengths")
        seq = len_ph if use_lengths else None
        c = _tf1_cell(tf, cell, units)
        if static:
            recorded: list = []
            if not use_lengths:
                c = _recording_cell(tf, cell, units, recorded)
            outs, final = tf.compat.v1.nn.static_rnn(c, tf.unstack(x_ph, axis=1), sequence_length=seq,
                                                     dtype=tf.float32)
            outputs = tf.stack(outs, axis=1)
            flat_fin = tf.nest.flatten(final)
            per_step = _cond_step_states(g, flat_fin, t) if use_lengths else (recorded if len(recorded) == t
                                                                              else None)
            if per_step is not None and ([_strip_identity(v).name for v in per_step[-1]]
                                         != [_strip_identity(v).name for v in flat_fin]):
                per_step = None
            if per_step is not None:
                source = ("the state outputs of each step's cond op" if use_lengths
                          else "the state each cell call returned")
                prefix_finals = [tf.concat(per_step[s], axis=1) for s in steps[:-1]]
            else:  # unexpected graph structure: one static_rnn per observed prefix, sharing the cell
                source = "one static_rnn per observed prefix"
                prefix_finals = []
                for s in steps[:-1]:
                    _, st = tf.compat.v1.nn.static_rnn(c, tf.unstack(x_ph[:, :s + 1], axis=1),
                                                       sequence_length=seq, dtype=tf.float32)
                    prefix_finals.append(_flat_state(tf, cell, st))
        else:
            outputs, final = tf.compat.v1.nn.dynamic_rnn(c, x_ph, sequence_length=seq, dtype=tf.float32)
            source = "the same graph run on each observed prefix"
        flat_final = _flat_state(tf, cell, final)
        init = tf.compat.v1.global_variables_initializer()
    with tf.compat.v1.Session(graph=g) as sess:
        sess.run(init)
        _load_tf1(tf, sess, c, cell, layer)
        feed = {x_ph: x, len_ph: lens}
        if static:
            out_v, fin_v, *pref = sess.run([outputs, flat_final] + prefix_finals, feed)
            finals = dict(zip([s for s in steps if s != t - 1], pref))
        else:
            out_v, fin_v = sess.run([outputs, flat_final], feed)
            finals = {s: sess.run(flat_final, {x_ph: x[:, :s + 1], len_ph: lens}) for s in steps if s != t - 1}
        finals[t - 1] = fin_v
        states = _stack_states(finals, steps, t)
    return {"outputs": out_v, "states": states, "final": fin_v, "final_parts": _parts(cell, fin_v, units),
            "info": {"impl": ("static_rnn" if static else "dynamic_rnn")
                     + (" with sequence_length" if use_lengths else " without sequence_length"),
                     "cell": type(c).__name__, "state_per_step_from": source}}


def _recording_cell(tf, cell: str, units: int, recorded: list):
    """The TF1 cell, subclassed to remember the (flattened) state each call returns: a static graph without
    conditionals exposes every step's state that way."""
    base = type(_tf1_cell(tf, cell, units))

    def call(self, inputs, state):
        out, new = base.call(self, inputs, state)
        recorded.append(tf.nest.flatten(new))
        return out, new

    return type(base.__name__, (base,), {"call": call})(units)


def _strip_identity(t):
    while t.op.type == "Identity":
        t = t.op.inputs[0]
    return t


def _cond_step_states(g, flat_final: list, t: int):
    """Per step, the state tensors ``static_rnn`` passes on when given ``sequence_length``: each step is one cond
    (``If``) op in the graph whose outputs are the step's flat outputs then its flat state (``cond`` returns them
through ``Identity`` ops). None when the graph does
    not look like that (checked again by the caller against the returned final state)."""
    ifs = [op for op in g.get_operations() if op.type in ("If", "StatelessIf")]
    if len(ifs) != t:
        return None
    n = len(flat_final)
    return [list(op.outputs[len(op.outputs) - n:]) for op in ifs]


def _parts(cell: str, flat: np.ndarray, units: int) -> dict:
    if cell == "lstm":
        return {"c": flat[:, :units], "h": flat[:, units:]}
    return {"h": flat}


def keras_layer(cell: str, units: int, zero_output_for_mask: bool = False, **kw):
    """The Keras 3 layer for a cell, returning sequences and state. GRU uses ``reset_after=False`` so it computes
    exactly TF1's GRUCell (and the canonical weights apply)."""
    _tf()
    import keras

    common = dict(return_sequences=True, return_state=True, zero_output_for_mask=zero_output_for_mask, **kw)
    if cell == "rnn":
        return keras.layers.SimpleRNN(units, **common)
    if cell == "lstm":
        return keras.layers.LSTM(units, **common)
    if cell == "gru":
        return keras.layers.GRU(units, reset_after=False, **common)
    raise ValueError(f"cell={cell!r}")


def run_keras(cell: str, layer: dict, x: np.ndarray, lengths, units: int, how: str,
              zero_output_for_mask: bool = False, device: str = "/CPU:0", observe=None) -> dict:
    """A Keras 3 layer (``SimpleRNN`` / ``LSTM`` / ``GRU``) over the padded batch, told the lengths through a
    ``Masking(mask_value=0.0)`` layer (``how="masking"``: padding must be all-zero steps and no real step may be), the
    ``mask=`` call argument (``"mask_arg"``), or not at all (``"none"``)."""
    if how not in KERAS_HOW:
        raise ValueError(f"how={how!r}: expected one of {KERAS_HOW}")
    tf = _tf()
    import keras

    from rnnlab.tf.weights import to_keras
    from rnnlab.tf.varlen_checks import valid_mask

    b, t, d = x.shape
    steps = _steps(observe, t)
    mask = valid_mask(lengths, t)
    with tf.device(device):
        rnn = keras_layer(cell, units, zero_output_for_mask=zero_output_for_mask)
        if how == "masking":
            inp = keras.Input((None, d))
            model = keras.Model(inp, rnn(keras.layers.Masking(mask_value=0.0)(inp)))
            call = lambda k: model(x[:, :k])  # noqa: E731
        elif how == "mask_arg":
            call = lambda k: rnn(x[:, :k], mask=mask[:, :k])  # noqa: E731
        else:
            call = lambda k: rnn(x[:, :k])  # noqa: E731
        call(1)  # builds the layer
        rnn.set_weights(to_keras(cell, layer, d))

        def flat(res):
            seq, *st = (np.asarray(r) for r in res)
            fin = np.concatenate([st[1], st[0]], axis=1) if cell == "lstm" else st[0]  # Keras returns [h, c]
            return seq, fin

        out_v, fin_v = flat(call(t))
        finals = {s: flat(call(s + 1))[1] for s in steps if s != t - 1}
        finals[t - 1] = fin_v
        states = _stack_states(finals, steps, t)
    return {"outputs": out_v, "states": states, "final": fin_v, "final_parts": _parts(cell, fin_v, units),
            "info": {"impl": f"keras.layers.{type(rnn).__name__}"
                     + {"masking": " after Masking(mask_value=0.0)", "mask_arg": " called with mask=",
                        "none": " without a mask"}[how]
                     + f", zero_output_for_mask={zero_output_for_mask}",
                     "keras": keras.__version__}}


def _op_types(tf, concrete) -> set:
    gd = concrete.graph.as_graph_def()
    ops = {n.op for n in gd.node}
    for f in gd.library.function:
        ops |= {n.op for n in f.node_def}
    return ops


def keras_lstm_kernel_probe(x: np.ndarray, mask: np.ndarray, units: int, device: str) -> dict:
    """Run a default Keras 3 LSTM with ``mask`` on ``device`` and report which kernel ran: ``"cudnn"`` when the traced
    graph holds a CudnnRNN op, ``"generic"`` otherwise; or the error the call raised (e.g. Keras' right-padding
    assertion). Meaningful on a GPU; on a CPU Keras never picks cuDNN."""
    tf = _tf()
    import keras

    with tf.device(device):
        layer = keras.layers.LSTM(units)
        fn = tf.function(lambda a, m: layer(a, mask=m))
        xs, ms = tf.constant(x), tf.constant(mask.astype(bool))
        res: dict = {"device": device}
        try:
            concrete = fn.get_concrete_function(xs, ms)
            ops = _op_types(tf, concrete)
            res["kernel"] = "cudnn" if any(o.startswith("CudnnRNN") for o in ops) else "generic"
            np.asarray(fn(xs, ms))
            res["error"] = None
        except Exception as e:  # noqa: BLE001 -- recorded, not raised: the error is the finding
            res["error"] = " ".join(f"{type(e).__name__}: {e}".split())[:400]
    return res
