"""Live checks, one per mapping row: run the TF1 construct and its Keras 3 replacement on identical weights and
inputs on this install, and report pass/fail and the max abs diff.

Every check is ``check(params) -> {"pass": bool, "max_abs_diff": float, "atol": float, "diffs": {name: float},
"details": {...}}``; ``params`` holds ``cell``, ``units``, ``layers``, ``batch``, ``seq_len``, ``input_dim``,
``lengths`` and ``seed`` (missing ones take :data:`DEFAULTS`). TensorFlow is imported inside the checks; they need
the TF1 cells, so ``TF_USE_LEGACY_KERAS=1`` must be set before TensorFlow is first imported (the worker does).

:func:`seed004_construct` tries seed 004's ``keras.layers.RNN(tf.compat.v1.nn.rnn_cell.LSTMCell(n))`` in fresh
interpreters and captures what happens, verbatim.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import warnings
from typing import Any, Callable

import numpy as np

from rnnlab.core.errors import RnnlabError
from rnnlab.core.rules import ATOL
from rnnlab.tf import convert as cv

DEFAULTS = {"cell": "lstm", "units": 8, "layers": 2, "batch": 4, "seq_len": 10, "input_dim": 5,
            "lengths": "uniform:1-10", "seed": 0}


def _p(params: dict | None) -> dict:
    p = dict(DEFAULTS)
    p.update({k: v for k, v in (params or {}).items() if k in DEFAULTS})
    return p


def _lengths(p: dict) -> list[int]:
    from rnnlab.core.params import lengths_for

    return lengths_for(p["lengths"], p["batch"], p["seq_len"], p["seed"])


def _x(p: dict, input_dim: int | None = None) -> np.ndarray:
    rng = np.random.default_rng(p["seed"])
    return rng.standard_normal((p["batch"], p["seq_len"], input_dim or p["input_dim"])).astype(np.float32)


def _diff(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        raise RnnlabError(f"shapes differ: {a.shape} vs {b.shape}")
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def _err(e: BaseException, limit: int = 300) -> str:
    """An exception as one line without terminal colour codes."""
    import re

    text = re.sub(r"\x1b\[[0-9;]*m", "", " ".join(str(e).split()))
    return f"{type(e).__name__}: {text[:limit]}"


def _result(diffs: dict[str, float], details: dict, extra_ok: bool = True, atol: float = ATOL) -> dict:
    worst = max(diffs.values()) if diffs else float("nan")
    return {"pass": bool(diffs) and worst <= atol and bool(extra_ok), "max_abs_diff": worst, "atol": atol,
            "diffs": diffs, "details": details}


def _rc():
    return cv.tf1_cells_module()


def _tf1_cell(rc, cell: str, units: int, forget_bias: float = 1.0, **kw):
    if cell == "lstm":
        return rc.BasicLSTMCell(units, forget_bias=forget_bias, **kw)
    if cell == "gru":
        return rc.GRUCell(units)
    return rc.BasicRNNCell(units)


def run_graph(build: Callable, seed: int = 0, feed_extra: dict | None = None):
    """Build a TF1 graph with ``build(tf, rc) -> (fetches, feed)``, give every variable random weights in
    [-0.5, 0.5] (seeded), run it -> ``(variables {name: array}, fetched values)``."""
    tf = cv._tf()
    rc = _rc()
    g = tf.Graph()
    with g.as_default(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is deprecated.*")
        fetches, feed = build(tf, rc)
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            rng = np.random.default_rng(seed + 1)
            variables = sorted(tf.compat.v1.global_variables(), key=lambda v: v.name)
            for v in variables:
                v.load(rng.uniform(-0.5, 0.5, v.shape).astype(np.float32), sess)
            out = sess.run(fetches, {**feed, **(feed_extra or {})})
            vals = {v.name[:-2]: sess.run(v) for v in variables}
    return vals, out


def _dynamic(cells_fn, x, lengths=None, seed=0, **kw):
    def build(tf, rc):
        cell = cells_fn(rc)
        xp = tf.compat.v1.placeholder(tf.float32, [None, x.shape[1], x.shape[2]])
        feed = {xp: x}
        sl = None
        if lengths is not None:
            sl = tf.compat.v1.placeholder(tf.int32, [None])
            feed[sl] = np.asarray(lengths, np.int32)
        out, state = tf.compat.v1.nn.dynamic_rnn(cell, xp, sequence_length=sl, dtype=tf.float32, **kw)
        return {"outputs": out, "state": state}, feed

    return run_graph(build, seed)


def _cell_row(p: dict, cell: str, make: Callable, forget_bias: float = 1.0) -> dict:
    """TF1 dynamic_rnn over one cell vs the converted Keras 3 layer, full lengths and with sequence_length."""
    x = _x(p)
    lengths = _lengths(p)
    diffs, details = {}, {}
    for case, sl in (("full", None), ("sequence_length", lengths)):
        vals, out = _dynamic(make, x, sl, p["seed"])
        spec = cv.detect_stack(vals)
        model = cv.convert(vals, forget_bias=forget_bias, spec=spec)
        got = cv.run_keras(model, x, sl)
        ref = {"outputs": out["outputs"], **cv.tf1_state_dict(out["state"], spec)}
        for k in ref:
            diffs[f"{case}/{k}"] = _diff(ref[k], got[k])
        details["spec"] = spec.to_dict()
    details["lengths"] = lengths
    return diffs, details, vals, x


# ------------------------------------------------------------------------------------------------ the checks

def check_basic_rnn_cell(params=None) -> dict:
    p = _p(params)
    diffs, details, _, _ = _cell_row(p, "rnn", lambda rc: rc.BasicRNNCell(p["units"]))
    details["keras"] = "keras.layers.SimpleRNN(units, return_sequences=True, return_state=True)"
    return _result(diffs, details)


def check_basic_lstm_cell(params=None) -> dict:
    p = _p(params)
    fb = 0.7  # a non-default forget_bias, so that folding it is exercised
    diffs, details, vals, x = _cell_row(p, "lstm", lambda rc: rc.BasicLSTMCell(p["units"], forget_bias=fb), fb)
    # the trap: forget the fold (forget_bias=0) -> other numbers
    spec = cv.detect_stack(vals)
    wrong = cv.run_keras(cv.convert(vals, forget_bias=0.0, spec=spec), x)
    _, out = _dynamic(lambda rc: rc.BasicLSTMCell(p["units"], forget_bias=fb), x, None, p["seed"])
    details["diff_if_forget_bias_not_folded"] = _diff(out["outputs"], wrong["outputs"])
    # state_is_tuple=False: one tensor concat([c, h]); split it for Keras's (h, c)
    _, out2 = _dynamic(lambda rc: rc.BasicLSTMCell(p["units"], forget_bias=fb, state_is_tuple=False), x, None,
                       p["seed"])
    got = cv.run_keras(cv.convert(vals, forget_bias=fb, spec=spec), x)
    u = p["units"]
    s = np.asarray(out2["state"])
    diffs["state_is_tuple=False/c"] = _diff(s[:, :u], got["cell_0/c"])
    diffs["state_is_tuple=False/h"] = _diff(s[:, u:], got["cell_0/h"])
    details["forget_bias"] = fb
    return _result(diffs, details, details["diff_if_forget_bias_not_folded"] > ATOL)


def check_lstm_cell(params=None) -> dict:
    p = _p(params)
    diffs, details, _, x = _cell_row(p, "lstm", lambda rc: rc.LSTMCell(p["units"]))
    refused = {}
    variants = {"use_peepholes": dict(use_peepholes=True), "num_proj": dict(num_proj=max(1, p["units"] // 2)),
                "both": dict(use_peepholes=True, num_proj=max(1, p["units"] // 2))}
    for name, kw in variants.items():
        vals, _ = _dynamic(lambda rc, kw=kw: rc.LSTMCell(p["units"], **kw), x, None, p["seed"])
        try:
            cv.convert(vals)
            refused[name] = None
        except RnnlabError as e:
            refused[name] = str(e)
    plain_vals, _ = _dynamic(lambda rc: rc.LSTMCell(p["units"]), x, None, p["seed"])
    for name, kw in {"cell_clip": dict(cell_clip=3.0), "proj_clip": dict(proj_clip=1.0)}.items():
        try:
            cv.convert(plain_vals, **kw)
            refused[name] = None
        except RnnlabError as e:
            refused[name] = str(e)
    details["refused"] = refused
    ok = (all(refused.values()) and "w_f_diag" in refused["use_peepholes"]
          and "projection/kernel" in refused["num_proj"] and "cell_clip" in refused["cell_clip"])
    return _result(diffs, details, ok)


def check_gru_cell(params=None) -> dict:
    p = _p(params)
    diffs, details, vals, x = _cell_row(p, "gru", lambda rc: rc.GRUCell(p["units"]))
    # the trap: Keras's default reset_after=True with the same weights (bias [b, 0]) computes something else
    import keras

    spec = cv.detect_stack(vals)
    k, rk, b = cv.keras_weights(spec.cells[0], vals)
    layer = keras.layers.GRU(p["units"], return_sequences=True)  # reset_after=True
    layer.build((None, None, p["input_dim"]))
    layer.set_weights([k, rk, np.stack([b, np.zeros_like(b)])])
    _, out = _dynamic(lambda rc: rc.GRUCell(p["units"]), x, None, p["seed"])
    details["diff_with_default_reset_after_true"] = _diff(out["outputs"], np.asarray(layer(x)))
    return _result(diffs, details, details["diff_with_default_reset_after_true"] > ATOL)


def check_multi_rnn_cell(params=None) -> dict:
    p = _p(params)
    layers = max(2, p["layers"])
    cell = p["cell"]

    def make(rc):
        return rc.MultiRNNCell([_tf1_cell(rc, cell, p["units"]) for _ in range(layers)])

    diffs, details, _, _ = _cell_row(p, cell, make)
    details["layers"] = layers
    return _result(diffs, details, details["spec"]["layers"] == layers)


def check_dynamic_rnn(params=None) -> dict:
    """sequence_length -> mask, initial_state (c, h) -> [h, c], time_major -> transpose, zero_output_for_mask."""
    p = _p(params)
    import keras

    cell, u = p["cell"], p["units"]
    x = _x(p)
    lengths = _lengths(p)
    rng = np.random.default_rng(p["seed"] + 7)
    h0 = rng.uniform(-0.5, 0.5, (p["batch"], u)).astype(np.float32)
    c0 = rng.uniform(-0.5, 0.5, (p["batch"], u)).astype(np.float32)

    def build(tf, rc):
        c = _tf1_cell(rc, cell, u)
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
                diffs[k] = _diff(ref[k], got[k])
        else:
            details["zero_output_for_mask=False: outputs diff"] = _diff(ref["outputs"], got["outputs"])
            details["zero_output_for_mask=False: final state diff"] = max(
                _diff(ref[k], got[k]) for k in ref if k != "outputs")
    details["lengths"] = lengths
    details["keras_while_loop"] = "tf.while_loop(parallel_iterations=32, swap_memory=True) (hard-coded in Keras 3)"
    padded = any(n < p["seq_len"] for n in lengths)
    # with padding, zero_output_for_mask=False must show the trap (repeated outputs where TF1 writes zeros)
    trap_ok = (not padded) or details["zero_output_for_mask=False: outputs diff"] > ATOL
    return _result(diffs, details, trap_ok)


def check_static_rnn(params=None) -> dict:
    p = _p(params)
    import keras

    cell, u = p["cell"], p["units"]
    x = _x(p)
    lengths = _lengths(p)

    def build(tf, rc):
        c = _tf1_cell(rc, cell, u)
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
    diffs = {k: _diff(ref[k], got[k]) for k in ref}
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
        msg = _err(e, 2000)
        i = msg.find("Cannot unroll")
        details["unroll_with_None_time_in_tf_function"] = (type(e).__name__ + ": " + msg[i:i + 200]) if i >= 0 else msg
    return _result(diffs, details)


def check_bidirectional_dynamic_rnn(params=None) -> dict:
    p = _p(params)
    import keras

    cell, u = p["cell"], p["units"]
    x = _x(p)
    lengths = _lengths(p)

    def build(tf, rc):
        xp = tf.compat.v1.placeholder(tf.float32, [None, x.shape[1], x.shape[2]])
        sl = tf.compat.v1.placeholder(tf.int32, [None])
        (of, ob), (sf, sb) = tf.compat.v1.nn.bidirectional_dynamic_rnn(
            _tf1_cell(rc, cell, u), _tf1_cell(rc, cell, u), xp, sequence_length=sl, dtype=tf.float32)
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
    diffs = {k: _diff(ref[k], got[k]) for k in ref}
    nomask = [np.asarray(t) for t in bi(x)]
    details = {"lengths": lengths, "merge_mode": None,
               "diff_bw_without_mask": _diff(out["bw"] * mask[..., None], nomask[1] * mask[..., None])}
    return _result(diffs, details)


def check_dropout_wrapper(params=None) -> dict:
    p = _p(params)
    import keras

    cell, u = p["cell"], p["units"]
    x = _x(p)
    rate = 0.3

    def build(tf, rc):
        kp = tf.compat.v1.placeholder_with_default(1.0, [])
        c = rc.DropoutWrapper(_tf1_cell(rc, cell, u), input_keep_prob=kp, output_keep_prob=kp, state_keep_prob=kp,
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
    diffs = {"outputs (keep_prob=1 vs training=False)": _diff(out["outputs"], infer)}
    _, out_drop = _dynamic_dropout(p, cell, u, x, 1.0 - rate)
    details = {"rate": rate, "keep_prob": 1.0 - rate,
               "keras_training_true_changes_outputs": _diff(infer, train),
               "tf1_keep_prob_lt_1_changes_outputs": _diff(out["outputs"], out_drop),
               "variable_scope": spec.cells[0].scope}
    ok = details["keras_training_true_changes_outputs"] > ATOL and details["tf1_keep_prob_lt_1_changes_outputs"] > ATOL
    return _result(diffs, details, ok)


def _dynamic_dropout(p, cell, u, x, keep):
    def build(tf, rc):
        c = rc.DropoutWrapper(_tf1_cell(rc, cell, u), input_keep_prob=keep, output_keep_prob=keep,
                              state_keep_prob=keep, seed=p["seed"])
        xp = tf.compat.v1.placeholder(tf.float32, [None, x.shape[1], x.shape[2]])
        out, _ = tf.compat.v1.nn.dynamic_rnn(c, xp, dtype=tf.float32)
        return out, {xp: x}

    return run_graph(build, p["seed"])


def check_residual_wrapper(params=None) -> dict:
    p = _p(params)
    import keras

    cell, u = p["cell"], p["units"]
    x = _x(p, input_dim=u)  # a residual needs input features == units
    lengths = _lengths(p)

    def run(sl):
        def build(tf, rc):
            c = rc.ResidualWrapper(_tf1_cell(rc, cell, u))
            xp = tf.compat.v1.placeholder(tf.float32, [None, x.shape[1], x.shape[2]])
            out, state = tf.compat.v1.nn.dynamic_rnn(c, xp, sequence_length=sl, dtype=tf.float32)
            return {"outputs": out, "state": state}, {xp: x}

        return run_graph(build, p["seed"])

    vals, out = run(None)
    spec = cv.detect_stack(vals)
    layer = cv.convert(vals, spec=spec, as_layers=True)[0]
    res = layer(x)
    y = np.asarray(keras.layers.Add()([x, res[0]]))
    diffs = {"outputs": _diff(out["outputs"], y),
             "cell_0/h": _diff(cv.tf1_state_dict(out["state"], spec)["cell_0/h"], res[1])}
    details = {"input_dim": u, "note": "input_dim set to units (a residual needs equal sizes)", "lengths": lengths}
    # the sequence_length trap: TF1 zeroes the residual output past each length, Add() leaves x there
    _, out_sl = run(np.asarray(lengths, np.int32))
    mask = cv.sequence_mask(lengths, p["seq_len"])[..., None]
    y_m = np.asarray(keras.layers.Add()([x, layer(x, mask=mask[..., 0])[0]]))
    details["with_sequence_length: diff on valid steps"] = _diff(out_sl["outputs"] * mask, y_m * mask)
    details["with_sequence_length: diff on padded steps"] = _diff(out_sl["outputs"] * ~mask, y_m * ~mask)
    return _result(diffs, details, details["with_sequence_length: diff on valid steps"] <= ATOL)


def check_tf_keras_to_keras3(params=None) -> dict:
    p = _p(params)
    tf = cv._tf()
    import keras

    k2 = tf.keras
    if not k2.__name__.startswith("tf_keras"):
        raise RnnlabError(f"tf.keras is {k2.__name__} here, not Keras 2 (tf_keras): set TF_USE_LEGACY_KERAS=1 before "
                          "importing TensorFlow")
    import tf_keras

    version2 = tf_keras.__version__
    x = _x(p)
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
            diffs[f"{name}/{'outputs' if i == 0 else f'state{i}'}"] = _diff(a, b)
    # a Keras 2 weights file read by Keras 3
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "k2.h5")
        m2 = k2.Sequential([k2.Input((None, p["input_dim"])), k2.layers.LSTM(u, return_sequences=True)])
        m2.save_weights(path)
        m3 = keras.Sequential([keras.Input((None, p["input_dim"])), keras.layers.LSTM(u, return_sequences=True)])
        try:
            m3.load_weights(path)
            diffs["legacy_h5_weights/outputs"] = _diff(np.asarray(m2(x)), np.asarray(m3(x)))
            details["legacy_h5_weights"] = "Keras 3 load_weights read the Keras 2 .h5 weights file"
        except Exception as e:  # noqa: BLE001
            details["legacy_h5_weights"] = _err(e)
    try:
        keras.layers.LSTM(u, time_major=True)
        details["keras3_time_major"] = "accepted"
    except Exception as e:  # noqa: BLE001
        details["keras3_time_major"] = _err(e)
    return _result(diffs, details)


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


# ------------------------------------------------------------------------------------------------ seed 004

# (scenario, TF_USE_LEGACY_KERAS, body). Scenarios sharing a setting run in one fresh interpreter, each in its own try.
_SEED004_SCENARIOS = (
    # what the brief asks: Keras 3's RNN layer around the TF1 cell (only reachable with TF_USE_LEGACY_KERAS=1)
    ("keras3_RNN_of_tf1_LSTMCell", "1", """
        import keras, tensorflow as tf
        step("tf.compat.v1.nn.rnn_cell.LSTMCell(N)"); cell = tf.compat.v1.nn.rnn_cell.LSTMCell(N)
        step("keras.layers.RNN(cell, return_sequences=True)"); layer = keras.layers.RNN(cell, return_sequences=True)
        step("layer(x) on a [2, 28, 28] array"); y = layer(np.zeros((2, 28, 28), np.float32))
        note(shape=list(y.shape))
    """),
    ("keras3_RNN_of_tf1_LSTMCell_functional", "1", """
        import keras, tensorflow as tf
        cell = tf.compat.v1.nn.rnn_cell.LSTMCell(N)
        layer = keras.layers.RNN(cell, return_sequences=True)
        step("layer(keras.Input((28, 28))) (symbolic)"); inp = keras.Input((28, 28)); y = layer(inp)
        note(symbolic_shape=list(y.shape))
        step("keras.Model(inp, y)(x) on a [2, 28, 28] array"); model = keras.Model(inp, y)
        out = model(np.zeros((2, 28, 28), np.float32)); note(shape=list(out.shape))
    """),
    ("keras3_RNN_of_tf1_LSTMCell_initial_state", "1", """
        import keras, tensorflow as tf
        cell = tf.compat.v1.nn.rnn_cell.LSTMCell(N)
        layer = keras.layers.RNN(cell, return_sequences=True)
        z = np.zeros((2, N), np.float32)
        step("layer(x, initial_state=[zeros, zeros])")
        y = layer(np.zeros((2, 28, 28), np.float32), initial_state=[z, z])
        note(shape=list(y.shape), keras3_layer_trainable_weights=len(layer.trainable_weights),
             tf1_cell_weights=[w.name for w in cell.weights],
             consequence="the cell's kernel and bias are invisible to the Keras 3 layer/model: "
                         "model.trainable_variables misses them and an optimizer never updates them")
    """),
    # the seed's own imports on a default install (no TF_USE_LEGACY_KERAS): tf.keras is Keras 3
    ("seed_verbatim_default_env", "", """
        import tensorflow as tf
        step("from tensorflow.keras.layers import RNN"); from tensorflow.keras.layers import RNN
        note(RNN=RNN.__module__)
        step("tf.compat.v1.nn.rnn_cell.LSTMCell(N)"); cell = tf.compat.v1.nn.rnn_cell.LSTMCell(N)
        step("RNN(cell, return_sequences=True)"); layer = RNN(cell, return_sequences=True)
        step("layer(x)"); y = layer(np.zeros((2, 28, 28), np.float32)); note(shape=list(y.shape))
    """),
    # the seed's own imports with TF_USE_LEGACY_KERAS=1: tf.keras is Keras 2 (tf_keras), not Keras 3
    ("seed_verbatim_legacy_env", "1", """
        import tensorflow as tf
        step("from tensorflow.keras.layers import RNN"); from tensorflow.keras.layers import RNN
        note(RNN=RNN.__module__)
        step("tf.compat.v1.nn.rnn_cell.LSTMCell(N)"); cell = tf.compat.v1.nn.rnn_cell.LSTMCell(N)
        step("RNN(cell, return_sequences=True)"); layer = RNN(cell, return_sequences=True)
        step("layer(x)"); y = layer(np.zeros((2, 28, 28), np.float32)); note(shape=list(y.shape))
        g = tf.function(lambda t: layer(t)).get_concrete_function(tf.TensorSpec([2, 28, 28], tf.float32)).graph
        ops = sorted({op.type for op in g.get_operations()})
        note(keras="Keras 2 (tf_keras), not Keras 3", loop_ops=[o for o in ops if o in ("While", "StatelessWhile")],
             cudnn_ops=[o for o in ops if "Cudnn" in o])
    """),
)

_HARNESS_HEAD = """
import json, os, sys, warnings
warnings.simplefilter("ignore")
import numpy as np
N = {units}
_all = {{}}
"""
_HARNESS_SCENARIO = """
_state = {{"steps": [], "notes": {{}}}}
def step(s, _s=_state): _s["steps"].append(s)
def note(_s=_state, **kw): _s["notes"].update(kw)
try:
{body}
    _state["result"] = "ok"
except BaseException as e:
    _state["result"] = "error"
    _state["error_type"] = type(e).__name__
    _state["error"] = str(e)
    _state["failed_at"] = _state["steps"][-1] if _state["steps"] else None
_all[{name!r}] = _state
"""
_HARNESS_TAIL = """
try:
    import keras, tensorflow as tf
    _v = {"tf": tf.__version__, "keras (import keras)": keras.__version__,
          "tf.keras.layers.RNN": tf.keras.layers.RNN.__module__}
except Exception as e:
    _v = {"error": str(e)}
for _s in _all.values():
    _s["versions"] = _v
print("@@RESULT@@" + json.dumps(_all))
"""


def seed004_construct(units: int = 32, timeout_s: int = 300) -> dict:
    """Run seed 004's construct in fresh interpreters (the legacy-Keras switch must precede the TF import, so each
    setting gets its own process) and capture the outcome and any error message verbatim."""
    import re

    out: dict[str, dict] = {}
    for legacy in ("1", ""):
        chosen = [(n, b) for n, lg, b in _SEED004_SCENARIOS if lg == legacy]
        code = _HARNESS_HEAD.format(units=int(units))
        for name, body in chosen:
            code += _HARNESS_SCENARIO.format(name=name, body=textwrap.indent(textwrap.dedent(body).strip(), "    "))
        code += _HARNESS_TAIL
        env = dict(os.environ)
        env.pop("TF_USE_LEGACY_KERAS", None)
        if legacy:
            env["TF_USE_LEGACY_KERAS"] = legacy
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        env["CUDA_VISIBLE_DEVICES"] = "-1"
        try:
            proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                  timeout=timeout_s)
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT@@")), None)
            res = json.loads(line[len("@@RESULT@@"):]) if line else {
                n: {"result": "crashed", "returncode": proc.returncode, "stderr_tail": proc.stderr[-2000:]}
                for n, _ in chosen}
        except subprocess.TimeoutExpired:
            res = {n: {"result": "timeout"} for n, _ in chosen}
        for name, _ in chosen:
            r = res.get(name, {"result": "missing"})
            r["TF_USE_LEGACY_KERAS"] = legacy or None
            if "error" in r:
                r["error"] = re.sub(r"\x1b\[[0-9;]*m", "", r["error"])  # Keras's bold markers
            out[name] = r
    return {n: out[n] for n, _, _ in _SEED004_SCENARIOS}


def summarize_seed004(res: dict[str, Any]) -> str:
    """One line: what seed 004's construct does under Keras 3 here."""
    k3 = res.get("keras3_RNN_of_tf1_LSTMCell", {})
    if k3.get("result") == "error":
        return (f"keras.layers.RNN(tf.compat.v1.nn.rnn_cell.LSTMCell(n)) under Keras 3 fails at "
                f"'{k3.get('failed_at')}': {k3.get('error_type')}: {' '.join(str(k3.get('error')).split())}")
    return f"keras.layers.RNN(tf.compat.v1.nn.rnn_cell.LSTMCell(n)) under Keras 3: {k3.get('result')}"


# ------------------------------------------------------------------------------------------------ convert round trip

def convert_roundtrip(params=None, workdir: str | None = None,
                      on_phase: Callable[[str], None] = lambda s: None) -> dict:
    """The converter end to end: a TF1 stack (``cell`` x ``layers``) with random weights -> a TF1 checkpoint written
    by ``tf.compat.v1.train.Saver`` -> :func:`convert.read_tf1_checkpoint` -> :func:`convert.convert` -> ``.keras``
    file -> ``keras.models.load_model`` -> outputs and final states against the original TF1 graph's, full lengths
    and with ``sequence_length``."""
    import time

    p = _p(params)
    tf = cv._tf()
    import keras

    cell, u, n_layers = p["cell"], p["units"], p["layers"]
    x = _x(p)
    lengths = _lengths(p)
    with tempfile.TemporaryDirectory(prefix="rnnlab-migrate-") as tmp:
        tmp = workdir or tmp
        prefix = os.path.join(tmp, "tf1", "model.ckpt")
        on_phase("build")
        g = tf.Graph()
        with g.as_default(), warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*is deprecated.*")
            rc = _rc()
            cells = [_tf1_cell(rc, cell, u) for _ in range(n_layers)]
            c = rc.MultiRNNCell(cells) if n_layers > 1 else cells[0]
            xp = tf.compat.v1.placeholder(tf.float32, [None, None, p["input_dim"]])
            sl = tf.compat.v1.placeholder(tf.int32, [None])
            out, state = tf.compat.v1.nn.dynamic_rnn(c, xp, sequence_length=sl, dtype=tf.float32)
            saver = tf.compat.v1.train.Saver()
            with tf.compat.v1.Session(graph=g) as sess:
                sess.run(tf.compat.v1.global_variables_initializer())
                rng = np.random.default_rng(p["seed"] + 1)
                for v in sorted(tf.compat.v1.global_variables(), key=lambda v: v.name):
                    v.load(rng.uniform(-0.5, 0.5, v.shape).astype(np.float32), sess)
                refs = {}
                for case, lens in (("full", [p["seq_len"]] * p["batch"]), ("sequence_length", lengths)):
                    o, s = sess.run([out, state], {xp: x, sl: np.asarray(lens, np.int32)})
                    refs[case] = (o, s)
                os.makedirs(os.path.dirname(prefix), exist_ok=True)
                saver.save(sess, prefix)
        on_phase("convert")
        t0 = time.perf_counter()
        variables = cv.read_tf1_checkpoint(prefix)
        spec = cv.detect_stack(variables)
        model = cv.convert(variables, spec=spec)
        convert_s = time.perf_counter() - t0
        path = cv.save(model, os.path.join(tmp, "converted.keras"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded = keras.models.load_model(path)
        on_phase("verify")
        diffs = {}
        for case, (o, s) in refs.items():
            ref = {"outputs": o, **cv.tf1_state_dict(s, spec)}
            got = cv.run_keras(loaded, x, None if case == "full" else lengths)
            for k in ref:
                diffs[f"{case}/{k}"] = _diff(ref[k], got[k])
        file_mb = os.path.getsize(path) / 2**20
    out_d = max(v for k, v in diffs.items() if k.endswith("/outputs"))
    st_d = max(v for k, v in diffs.items() if not k.endswith("/outputs"))
    details = {"spec": spec.to_dict(), "lengths": lengths, "checkpoint_variables": sorted(variables),
               "keras_file_mb": round(file_mb, 4), "atol": ATOL}
    res = _result(diffs, details)
    res.update({"max_abs_diff_outputs": out_d, "max_abs_diff_states": st_d, "convert_s": convert_s})
    return res
