"""What the migration checks share: their parameters (:data:`DEFAULTS`) and inputs, a TF1 graph run with seeded
random weights (:func:`run_graph`, :func:`run_dynamic`), one cell against its converted Keras 3 layer
(:func:`cell_row`), and the result every check returns (:func:`check_result`)."""

from __future__ import annotations

import warnings
from typing import Callable

import numpy as np

from rnnlab.core.errors import RnnlabError
from rnnlab.core.rules import ATOL
from rnnlab.tf import convert as cv

DEFAULTS = {"cell": "lstm", "units": 8, "layers": 2, "batch": 4, "seq_len": 10, "input_dim": 5,
            "lengths": "uniform:1-10", "seed": 0}


def params_of(params: dict | None) -> dict:
    p = dict(DEFAULTS)
    p.update({k: v for k, v in (params or {}).items() if k in DEFAULTS})
    return p


def lengths_of(p: dict) -> list[int]:
    from rnnlab.core.params import lengths_for

    return lengths_for(p["lengths"], p["batch"], p["seq_len"], p["seed"])


def inputs_of(p: dict, input_dim: int | None = None) -> np.ndarray:
    rng = np.random.default_rng(p["seed"])
    return rng.standard_normal((p["batch"], p["seq_len"], input_dim or p["input_dim"])).astype(np.float32)


def max_diff(a, b) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        raise RnnlabError(f"shapes differ: {a.shape} vs {b.shape}")
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def error_text(e: BaseException, limit: int = 300) -> str:
    """An exception as one line without terminal colour codes."""
    import re

    text = re.sub(r"\x1b\[[0-9;]*m", "", " ".join(str(e).split()))
    return f"{type(e).__name__}: {text[:limit]}"


def check_result(diffs: dict[str, float], details: dict, extra_ok: bool = True, atol: float = ATOL) -> dict:
    worst = max(diffs.values()) if diffs else float("nan")
    return {"pass": bool(diffs) and worst <= atol and bool(extra_ok), "max_abs_diff": worst, "atol": atol,
            "diffs": diffs, "details": details}


def rnn_cells():
    return cv.tf1_cells_module()


def tf1_cell(rc, cell: str, units: int, forget_bias: float = 1.0, **kw):
    if cell == "lstm":
        return rc.BasicLSTMCell(units, forget_bias=forget_bias, **kw)
    if cell == "gru":
        return rc.GRUCell(units)
    return rc.BasicRNNCell(units)


def run_graph(build: Callable, seed: int = 0, feed_extra: dict | None = None):
    """Build a TF1 graph with ``build(tf, rc) -> (fetches, feed)``, give every variable random weights in
    [-0.5, 0.5] (seeded), run it -> ``(variables {name: array}, fetched values)``."""
    tf = cv._tf()
    rc = rnn_cells()
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


def run_dynamic(cells_fn, x, lengths=None, seed=0, **kw):
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


def cell_row(p: dict, cell: str, make: Callable, forget_bias: float = 1.0) -> dict:
    """TF1 dynamic_rnn over one cell vs the converted Keras 3 layer, full lengths and with sequence_length."""
    x = inputs_of(p)
    lengths = lengths_of(p)
    diffs, details = {}, {}
    for case, sl in (("full", None), ("sequence_length", lengths)):
        vals, out = run_dynamic(make, x, sl, p["seed"])
        spec = cv.detect_stack(vals)
        model = cv.convert(vals, forget_bias=forget_bias, spec=spec)
        got = cv.run_keras(model, x, sl)
        ref = {"outputs": out["outputs"], **cv.tf1_state_dict(out["state"], spec)}
        for k in ref:
            diffs[f"{case}/{k}"] = max_diff(ref[k], got[k])
        details["spec"] = spec.to_dict()
    details["lengths"] = lengths
    return diffs, details, vals, x
