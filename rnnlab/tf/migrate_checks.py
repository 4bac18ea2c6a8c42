"""Live checks, one per mapping row: run the TF1 construct and its Keras 3 replacement on identical weights and
inputs on this install, and report pass/fail and the max abs diff.

Every check is ``check(params) -> {"pass": bool, "max_abs_diff": float, "atol": float, "diffs": {name: float},
"details": {...}}``; ``params`` holds ``cell``, ``units``, ``layers``, ``batch``, ``seq_len``, ``input_dim``,
``lengths`` and ``seed`` (missing ones take :data:`DEFAULTS`). TensorFlow is imported inside the checks; they need
the TF1 cells, so ``TF_USE_LEGACY_KERAS=1`` must be set before TensorFlow is first imported (the worker does).

:func:`seed004_construct` (``rnnlab.tf.seed004``) tries seed 004's
``keras.layers.RNN(tf.compat.v1.nn.rnn_cell.LSTMCell(n))`` in fresh interpreters and captures what happens, verbatim;
:func:`convert_roundtrip` (``rnnlab.tf.convert_roundtrip``) runs the converter end to end. The shared parameters,
inputs and TF1 runner are ``rnnlab.tf.migrate_harness``'s.
"""

from __future__ import annotations

import os
import tempfile
from typing import Callable

import numpy as np

from rnnlab.core.errors import RnnlabError
from rnnlab.core.rules import ATOL
from rnnlab.tf import convert as cv
from rnnlab.tf.convert_roundtrip import convert_roundtrip  # noqa: F401 - the migrate worker calls it from here
from rnnlab.tf.migrate_harness import (DEFAULTS, cell_row, check_result, error_text, inputs_of,  # noqa: F401
                                       lengths_of, max_diff, params_of, run_dynamic, run_graph, tf1_cell)
from rnnlab.tf.seed004 import seed004_construct, summarize_seed004  # noqa: F401 - the migrate worker calls them


# ------------------------------------------------------------------------------------------------ the checks

def check_basic_rnn_cell(params=None) -> dict:
    p = params_of(params)
    diffs, details, _, _ = cell_row(p, "rnn", lambda rc: rc.BasicRNNCell(p["units"]))
    details["keras"] = "keras.layers.SimpleRNN(units, return_sequences=True, return_state=True)"
    return check_result(diffs, details)


def check_basic_lstm_cell(params=None) -> dict:
    p = params_of(params)
    fb = 0.7  # a non-default forget_bias, so that folding it is exercised
    diffs, details, vals, x = cell_row(p, "lstm", lambda rc: rc.BasicLSTMCell(p["units"], forget_bias=fb), fb)
    # the trap: forget the fold (forget_bias=0) -> other numbers
    spec = cv.detect_stack(vals)
    wrong = cv.run_keras(cv.convert(vals, forget_bias=0.0, spec=spec), x)
    _, out = run_dynamic(lambda rc: rc.BasicLSTMCell(p["units"], forget_bias=fb), x, None, p["seed"])
    details["diff_if_forget_bias_not_folded"] = max_diff(out["outputs"], wrong["outputs"])
    # state_is_tuple=False: one tensor concat([c, h]); split it for Keras's (h, c)
    _, out2 = run_dynamic(lambda rc: rc.BasicLSTMCell(p["units"], forget_bias=fb, state_is_tuple=False), x, None,
                       p["seed"])
    got = cv.run_keras(cv.convert(vals, forget_bias=fb, spec=spec), x)
    u = p["units"]
    s = np.asarray(out2["state"])
    diffs["state_is_tuple=False/c"] = max_diff(s[:, :u], got["cell_0/c"])
    diffs["state_is_tuple=False/h"] = max_diff(s[:, u:], got["cell_0/h"])
    details["forget_bias"] = fb
    return check_result(diffs, details, details["diff_if_forget_bias_not_folded"] > ATOL)


def check_lstm_cell(params=None) -> dict:
    p = params_of(params)
    diffs, details, _, x = cell_row(p, "lstm", lambda rc: rc.LSTMCell(p["units"]))
    refused = {}
    variants = {"use_peepholes": dict(use_peepholes=True), "num_proj": dict(num_proj=max(1, p["units"] // 2)),
                "both": dict(use_peepholes=True, num_proj=max(1, p["units"] // 2))}
    for name, kw in variants.items():
        vals, _ = run_dynamic(lambda rc, kw=kw: rc.LSTMCell(p["units"], **kw), x, None, p["seed"])
        try:
            cv.convert(vals)
            refused[name] = None
        except RnnlabError as e:
            refused[name] = str(e)
    plain_vals, _ = run_dynamic(lambda rc: rc.LSTMCell(p["units"]), x, None, p["seed"])
    for name, kw in {"cell_clip": dict(cell_clip=3.0), "proj_clip": dict(proj_clip=1.0)}.items():
        try:
            cv.convert(plain_vals, **kw)
            refused[name] = None
        except RnnlabError as e:
            refused[name] = str(e)
    details["refused"] = refused
    ok = (all(refused.values()) and "w_f_diag" in refused["use_peepholes"]
          and "projection/kernel" in refused["num_proj"] and "cell_clip" in refused["cell_clip"])
    return check_result(diffs, details, ok)


def check_gru_cell(params=None) -> dict:
    p = params_of(params)
    diffs, details, vals, x = cell_row(p, "gru", lambda rc: rc.GRUCell(p["units"]))
    # the trap: Keras's default reset_after=True with the same weights (bias [b, 0]) computes something else
    import keras

    spec = cv.detect_stack(vals)
    k, rk, b = cv.keras_weights(spec.cells[0], vals)
    layer = keras.layers.GRU(p["units"], return_sequences=True)  # reset_after=True
    layer.build((None, None, p["input_dim"]))
    layer.set_weights([k, rk, np.stack([b, np.zeros_like(b)])])
    _, out = run_dynamic(lambda rc: rc.GRUCell(p["units"]), x, None, p["seed"])
    details["diff_with_default_reset_after_true"] = max_diff(out["outputs"], np.asarray(layer(x)))
    return check_result(diffs, details, details["diff_with_default_reset_after_true"] > ATOL)


def check_multi_rnn_cell(params=None) -> dict:
    p = params_of(params)
    layers = max(2, p["layers"])
    cell = p["cell"]

    def make(rc):
        return rc.MultiRNNCell([tf1_cell(rc, cell, p["units"]) for _ in range(layers)])

    diffs, details, _, _ = cell_row(p, cell, make)
    details["layers"] = layers
    return check_result(diffs, details, details["spec"]["layers"] == layers)


def check_dynamic_rnn(params=None) -> dict:
    """sequence_length -> mask, initial_state (c, h) -> [h, c], time_major -> transpose, zero_output_for_mask."""
    p = params_of(params)
    import keras

    cell, u = p["cell"], p["units"]
    x = inputs_of(p)
    lengths = lengths_of(p)
    rng = np.random.default_rng(p["seed"] + 7)
    h0 = rng.uniform(-0.5, 0.5, (p["batch"], u)).astype(np.float32)
    c0 = rng.uniform(-0.5, 0.5, (p["batch"], u)).astype(np.float32)

    def build(tf, rc):
        c = tf1_cell(rc, cell, u)
        xp = tf.compat.v1.placeholder(tf.float32, [x.shape[1], None, x.shape[2]])  # time-major
        sl = tf.compat.v1.placeholder(tf.int32, [None])
        init = rc.LSTMStateTuple(tf.constant(c0), tf.constant(h0)) if cell == "lstm" else tf.constant(h0)
        out, state = tf.compat.v1.nn.dynamic_rnn(c, xp, sequence_length=sl, initial_state=init, time_major=True,
                                                 parallel_iterations=4, swap_memory=True)
        return {"outputs": out, "state": state}, {xp: np.transpose(x, (1, 0, 2)), sl: np.asarray(lengths, np.int32)}

    vals, out = run_graph(build, p["seed"])
    spec = cv.detect_stack(vals)
    diffs, details = {}, {}
    for zero in (True, False):
        layers = cv.convert(vals, spec=spec, as_layers=True, zero_output_for_mask=zero)
        init = [[h0, c0]] if cell == "lstm" else [[h0]]
        x_tm = np.transpose(x, (1, 0, 2))  # what a time_major TF1 model is fed
        got = cv.run_keras(layers, np.asarray(keras.ops.transpose(x_tm, (1, 0, 2))), lengths, initial_state=init)
        ref = {"outputs": np.transpose(out["outputs"], (1, 0, 2)), **cv.tf1_state_dict(out["state"], spec)}
        if zero:
            for k in ref:
                diffs[k] = max_diff(ref[k], got[k])
        else:
            details["zero_output_for_mask=False: outputs diff"] = max_diff(ref["outputs"], got["outputs"])
            details["zero_output_for_mask=False: final state diff"] = max(
                max_diff(ref[k], got[k]) for k in ref if k != "outputs")
    details["lengths"] = lengths
    details["keras_while_loop"] = "tf.while_loop(parallel_iterations=32, swap_memory=True) (hard-coded in Keras 3)"
    padded = any(n < p["seq_len"] for n in lengths)
    # with padding, zero_output_for_mask=False must show the trap (repeated outputs where TF1 writes zeros)
    trap_ok = (not padded) or details["zero_output_for_mask=False: outputs diff"] > ATOL
    return check_result(diffs, details, trap_ok)


def check_static_rnn(params=None) -> dict:
    p = params_of(params)
    import keras

    cell, u = p["cell"], p["units"]
    x = inputs_of(p)
    lengths = lengths_of(p)

    def build(tf, rc):
        c = tf1_cell(rc, cell, u)
        xp = tf.compat.v1.placeholder(tf.float32, [None, x.shape[1], x.shape[2]])
        sl = tf.compat.v1.placeholder(tf.int32, [None])
        outs, state = tf.compat.v1.nn.static_rnn(c, tf.unstack(xp, axis=1), sequence_length=sl, dtype=tf.float32)
        return {"outputs": tf.stack(outs, axis=1), "state": state}, {xp: x, sl: np.asarray(lengths, np.int32)}

    vals, out = run_graph(build, p["seed"])
    spec = cv.detect_stack(vals)
    c = spec.cells[0]
    cls = {"lstm": keras.layers.LSTM, "gru": keras.layers.GRU, "rnn": keras.layers.SimpleRNN}[cell]
    kw = {"reset_after": False} if cell == "gru" else {}
    layer = cls(u, unroll=True, return_sequences=True, return_state=True, zero_output_for_mask=True, **kw)
    inp = keras.Input((p["seq_len"], p["input_dim"]))
    model = keras.Model(inp, layer(inp))
    layer.set_weights(cv.keras_weights(c, vals))
    res = [np.asarray(t) for t in layer(x, mask=cv.sequence_mask(lengths, p["seq_len"]))]
    got = {"outputs": res[0], "cell_0/h": res[1]}
    if cell == "lstm":
        got["cell_0/c"] = res[2]
    ref = {"outputs": out["outputs"], **cv.tf1_state_dict(out["state"], spec)}
    diffs = {k: max_diff(ref[k], got[k]) for k in ref}
    details = {"lengths": lengths, "unroll": True, "model_input": str(model.inputs[0].shape)}
    # unroll=True with an unknown time dimension: fine eagerly (T is known per call), fails when traced
    tf = cv._tf()
    inp2 = keras.Input((None, p["input_dim"]))
    m2 = keras.Model(inp2, cls(u, unroll=True, **kw)(inp2))
    fn = tf.function(lambda t: m2(t), input_signature=[tf.TensorSpec([None, None, p["input_dim"]], tf.float32)])
    try:
        fn(x)
        details["unroll_with_None_time_in_tf_function"] = "ran (no error)"
    except Exception as e:  # noqa: BLE001  (we record what Keras says)
        msg = error_text(e, 2000)
        i = msg.find("Cannot unroll")
        details["unroll_with_None_time_in_tf_function"] = (type(e).__name__ + ": " + msg[i:i + 200]) if i >= 0 else msg
    return check_result(diffs, details)


def check_bidirectional_dynamic_rnn(params=None) -> dict:
    p = params_of(params)
    import keras

    cell, u = p["cell"], p["units"]
    x = inputs_of(p)
    lengths = lengths_of(p)

    def build(tf, rc):
        xp = tf.compat.v1.placeholder(tf.float32, [None, x.shape[1], x.shape[2]])
        sl = tf.compat.v1.placeholder(tf.int32, [None])
        (of, ob), (sf, sb) = tf.compat.v1.nn.bidirectional_dynamic_rnn(
            tf1_cell(rc, cell, u), tf1_cell(rc, cell, u), xp, sequence_length=sl, dtype=tf.float32)
        return {"fw": of, "bw": ob, "sf": sf, "sb": sb}, {xp: x, sl: np.asarray(lengths, np.int32)}

    vals, out = run_graph(build, p["seed"])
    specs = {d: cv.detect_stack(vals, scope=f"bidirectional_rnn/{d}") for d in ("fw", "bw")}
    cls = {"lstm": keras.layers.LSTM, "gru": keras.layers.GRU, "rnn": keras.layers.SimpleRNN}[cell]
    kw = {"reset_after": False} if cell == "gru" else {}
    bi = keras.layers.Bidirectional(cls(u, return_sequences=True, return_state=True, zero_output_for_mask=True, **kw),
                                    merge_mode=None)
    bi.build((None, None, p["input_dim"]))
    bi.forward_layer.set_weights(cv.keras_weights(specs["fw"].cells[0], vals))
    bi.backward_layer.set_weights(cv.keras_weights(specs["bw"].cells[0], vals))
    mask = cv.sequence_mask(lengths, p["seq_len"])
    res = [np.asarray(t) for t in bi(x, mask=mask)]
    n = 2 if cell == "lstm" else 1
    got = {"outputs_fw": res[0], "outputs_bw": res[1]}
    st_f, st_b = res[2:2 + n], res[2 + n:2 + 2 * n]
    ref = {"outputs_fw": out["fw"], "outputs_bw": out["bw"]}
    for d, st, tst in (("fw", st_f, out["sf"]), ("bw", st_b, out["sb"])):
        tf1s = cv.tf1_state_dict(tst, specs[d])
        ref[f"{d}/h"] = tf1s["cell_0/h"]
        got[f"{d}/h"] = st[0]
        if cell == "lstm":
            ref[f"{d}/c"] = tf1s["cell_0/c"]
            got[f"{d}/c"] = st[1]
    diffs = {k: max_diff(ref[k], got[k]) for k in ref}
    nomask = [np.asarray(t) for t in bi(x)]
    details = {"lengths": lengths, "merge_mode": None,
               "diff_bw_without_mask": max_diff(out["bw"] * mask[..., None], nomask[1] * mask[..., None])}
    return check_result(diffs, details)


def check_dropout_wrapper(params=None) -> dict:
    p = params_of(params)
    import keras

    cell, u = p["cell"], p["units"]
    x = inputs_of(p)
    rate = 0.3

    def build(tf, rc):
        kp = tf.compat.v1.placeholder_with_default(1.0, [])
        c = rc.DropoutWrapper(tf1_cell(rc, cell, u), input_keep_prob=kp, output_keep_prob=kp, state_keep_prob=kp,
                              seed=p["seed"])
        xp = tf.compat.v1.placeholder(tf.float32, [None, x.shape[1], x.shape[2]])
        out, state = tf.compat.v1.nn.dynamic_rnn(c, xp, dtype=tf.float32)
        return {"outputs": out, "state": state, "kp": kp}, {xp: x}

    vals, out = run_graph(build, p["seed"])  # keep_prob fed 1.0: TF1's way to evaluate
    spec = cv.detect_stack(vals)
    cls = {"lstm": keras.layers.LSTM, "gru": keras.layers.GRU, "rnn": keras.layers.SimpleRNN}[cell]
    kw = {"reset_after": False} if cell == "gru" else {}
    layer = cls(u, dropout=rate, recurrent_dropout=rate, return_sequences=True, **kw)
    layer.build((None, None, p["input_dim"]))
    layer.set_weights(cv.keras_weights(spec.cells[0], vals))
    drop = keras.layers.Dropout(rate)
    infer = np.asarray(drop(layer(x, training=False), training=False))
    train = np.asarray(drop(layer(x, training=True), training=True))
    diffs = {"outputs (keep_prob=1 vs training=False)": max_diff(out["outputs"], infer)}
    _, out_drop = _dynamic_dropout(p, cell, u, x, 1.0 - rate)
    details = {"rate": rate, "keep_prob": 1.0 - rate,
               "keras_training_true_changes_outputs": max_diff(infer, train),
               "tf1_keep_prob_lt_1_changes_outputs": max_diff(out["outputs"], out_drop),
               "variable_scope": spec.cells[0].scope}
    ok = details["keras_training_true_changes_outputs"] > ATOL and details["tf1_keep_prob_lt_1_changes_outputs"] > ATOL
    return check_result(diffs, details, ok)


def _dynamic_dropout(p, cell, u, x, keep):
    def build(tf, rc):
        c = rc.DropoutWrapper(tf1_cell(rc, cell, u), input_keep_prob=keep, output_keep_prob=keep,
                              state_keep_prob=keep, seed=p["seed"])
        xp = tf.compat.v1.placeholder(tf.float32, [None, x.shape[1], x.shape[2]])
        out, _ = tf.compat.v1.nn.dynamic_rnn(c, xp, dtype=tf.float32)
        return out, {xp: x}

    return run_graph(build, p["seed"])


def check_residual_wrapper(params=None) -> dict:
    p = params_of(params)
    import keras

    cell, u = p["cell"], p["units"]
    x = inputs_of(p, input_dim=u)  # a residual needs input features == units
    lengths = lengths_of(p)

    def run(sl):
        def build(tf, rc):
            c = rc.ResidualWrapper(tf1_cell(rc, cell, u))
            xp = tf.compat.v1.placeholder(tf.float32, [None, x.shape[1], x.shape[2]])
            out, state = tf.compat.v1.nn.dynamic_rnn(c, xp, sequence_length=sl, dtype=tf.float32)
            return {"outputs": out, "state": state}, {xp: x}

        return run_graph(build, p["seed"])

    vals, out = run(None)
    spec = cv.detect_stack(vals)
    layer = cv.convert(vals, spec=spec, as_layers=True)[0]
    res = layer(x)
    y = np.asarray(keras.layers.Add()([x, res[0]]))
    diffs = {"outputs": max_diff(out["outputs"], y),
             "cell_0/h": max_diff(cv.tf1_state_dict(out["state"], spec)["cell_0/h"], res[1])}
    details = {"input_dim": u, "note": "input_dim set to units (a residual needs equal sizes)", "lengths": lengths}
    # the sequence_length trap: TF1 zeroes the residual output past each length, Add() leaves x there
    _, out_sl = run(np.asarray(lengths, np.int32))
    mask = cv.sequence_mask(lengths, p["seq_len"])[..., None]
    y_m = np.asarray(keras.layers.Add()([x, layer(x, mask=mask[..., 0])[0]]))
    details["with_sequence_length: diff on valid steps"] = max_diff(out_sl["outputs"] * mask, y_m * mask)
    details["with_sequence_length: diff on padded steps"] = max_diff(out_sl["outputs"] * ~mask, y_m * ~mask)
    return check_result(diffs, details, details["with_sequence_length: diff on valid steps"] <= ATOL)


def check_tf_keras_to_keras3(params=None) -> dict:
    p = params_of(params)
    tf = cv._tf()
    import keras

    k2 = tf.keras
    if not k2.__name__.startswith("tf_keras"):
        raise RnnlabError(f"tf.keras is {k2.__name__} here, not Keras 2 (tf_keras): set TF_USE_LEGACY_KERAS=1 before "
                          "importing TensorFlow")
    import tf_keras

    version2 = tf_keras.__version__
    x = inputs_of(p)
    u = p["units"]
    diffs, details = {}, {"tf.keras": version2, "keras": keras.__version__}
    for name in ("SimpleRNN", "LSTM", "GRU"):
        l2 = getattr(k2.layers, name)(u, return_sequences=True, return_state=True)
        r2 = l2(x)
        rng = np.random.default_rng(p["seed"] + 3)
        l2.set_weights([rng.uniform(-0.5, 0.5, w.shape).astype(np.float32) for w in l2.get_weights()])
        r2 = [np.asarray(t) for t in l2(x)]
        l3 = getattr(keras.layers, name)(u, return_sequences=True, return_state=True)
        l3.build((None, None, p["input_dim"]))
        l3.set_weights(l2.get_weights())
        r3 = [np.asarray(t) for t in l3(x)]
        for i, (a, b) in enumerate(zip(r2, r3)):
            diffs[f"{name}/{'outputs' if i == 0 else f'state{i}'}"] = max_diff(a, b)
    # a Keras 2 weights file read by Keras 3
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k2.h5")
        m2 = k2.Sequential([k2.Input((None, p["input_dim"])), k2.layers.LSTM(u, return_sequences=True)])
        m2.save_weights(path)
        m3 = keras.Sequential([keras.Input((None, p["input_dim"])), keras.layers.LSTM(u, return_sequences=True)])
        try:
            m3.load_weights(path)
            diffs["legacy_h5_weights/outputs"] = max_diff(np.asarray(m2(x)), np.asarray(m3(x)))
            details["legacy_h5_weights"] = "Keras 3 load_weights read the Keras 2 .h5 weights file"
        except Exception as e:  # noqa: BLE001
            details["legacy_h5_weights"] = error_text(e)
    try:
        keras.layers.LSTM(u, time_major=True)
        details["keras3_time_major"] = "accepted"
    except Exception as e:  # noqa: BLE001
        details["keras3_time_major"] = error_text(e)
    return check_result(diffs, details)


CHECKS: dict[str, Callable[[dict | None], dict]] = {
    "basic_rnn_cell": check_basic_rnn_cell,
    "basic_lstm_cell": check_basic_lstm_cell,
    "lstm_cell": check_lstm_cell,
    "gru_cell": check_gru_cell,
    "multi_rnn_cell": check_multi_rnn_cell,
    "dynamic_rnn": check_dynamic_rnn,
    "static_rnn": check_static_rnn,
    "bidirectional_dynamic_rnn": check_bidirectional_dynamic_rnn,
    "dropout_wrapper": check_dropout_wrapper,
    "residual_wrapper": check_residual_wrapper,
    "tf_keras_to_keras3": check_tf_keras_to_keras3,
}


def run_check(name: str, params: dict | None = None) -> dict:
    if name not in CHECKS:
        raise RnnlabError(f"unknown check {name!r}; known: {', '.join(CHECKS)}")
    return CHECKS[name](params)
