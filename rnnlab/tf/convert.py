"""Convert the variables of a TF1 RNN (``tf.compat.v1.nn.rnn_cell.*``) into Keras 3 layers, and verify the result.

Input: ``{name: array}`` from a live graph (names may end in ``:0``) or from a TF1 checkpoint on disk
(:func:`read_tf1_checkpoint`, which uses ``tf.train.load_checkpoint``: no unpickling; ``rnnlab.tf.checkpoint``);
which cells they hold and how they stack is ``rnnlab.tf.detect``'s (:func:`detect_stack`).

Weight rules (TF1 -> Keras 3)::

    BasicRNNCell  kernel [in+u, u]                        -> SimpleRNN kernel = K[:in], recurrent_kernel = K[in:]
    (Basic)LSTMCell kernel [in+u, 4u], gates (i, j, f, o) -> LSTM (i, f, c=j, o), split as above,
                                                             forget_bias folded into bias[u:2u]
    GRUCell gates/kernel [in+u, 2u] (r, u),                -> GRU(reset_after=False) (z=u, r, h=candidate)
            candidate/kernel [in+u, u]
    MultiRNNCell  .../multi_rnn_cell/cell_N/<cell>/...     -> one Keras layer per N, in order

Refused (``RnnlabError`` naming them), never silently dropped: peepholes (``w_f_diag``, ``w_i_diag``,
``w_o_diag``), projections (``projection/kernel``, ``num_proj``), ``cell_clip`` / ``proj_clip`` (not visible in
variables: pass them to :func:`convert` and it refuses), CuDNN opaque parameters.

TensorFlow and Keras are imported inside the functions; the TF1 reference in :func:`verify` needs the TF1 cells,
which need ``TF_USE_LEGACY_KERAS=1`` before TensorFlow is first imported (set here when TF is not imported yet).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from rnnlab.core.errors import RnnlabError
from rnnlab.core.rules import ATOL
from rnnlab.tf.checkpoint import import_tf as _tf  # noqa: F401 - the name commands and tests call
from rnnlab.tf.checkpoint import locate_checkpoint, normalize_variables, read_tf1_checkpoint  # noqa: F401
from rnnlab.tf.detect import CELL_TYPES, CellSpec, StackSpec, detect_stack  # noqa: F401 - re-exported


# ----------------------------------------------------------------------------------------------- weight rules

def lstm_weights(kernel: np.ndarray, bias: np.ndarray, input_dim: int, forget_bias: float = 1.0) -> list[np.ndarray]:
    """TF1 (Basic)LSTMCell kernel [in+u, 4u] (i, j, f, o) + bias -> Keras 3 LSTM [kernel, recurrent_kernel, bias]
    (i, f, c, o), with ``forget_bias`` folded into the forget gate's bias."""
    u = kernel.shape[1] // 4
    i, j, f, o = (slice(n * u, (n + 1) * u) for n in range(4))
    cols = np.r_[i, f, j, o]
    k = kernel[:, cols].astype(np.float32)
    b = bias[cols].astype(np.float32).copy()
    b[u:2 * u] += np.float32(forget_bias)
    return [k[:input_dim], k[input_dim:], b]


def gru_weights(gates_kernel: np.ndarray, gates_bias: np.ndarray, cand_kernel: np.ndarray, cand_bias: np.ndarray,
                input_dim: int) -> list[np.ndarray]:
    """TF1 GRUCell (gates r, u; candidate) -> Keras 3 GRU(reset_after=False) [kernel, recurrent_kernel, bias]
    in Keras's (z, r, h) order; TF1's u is Keras's z."""
    u = cand_kernel.shape[1]
    k = np.concatenate([gates_kernel[:, u:], gates_kernel[:, :u], cand_kernel], axis=1).astype(np.float32)
    b = np.concatenate([gates_bias[u:], gates_bias[:u], cand_bias]).astype(np.float32)
    return [k[:input_dim], k[input_dim:], b]


def rnn_weights(kernel: np.ndarray, bias: np.ndarray, input_dim: int) -> list[np.ndarray]:
    """TF1 BasicRNNCell kernel [in+u, u] + bias -> Keras 3 SimpleRNN [kernel, recurrent_kernel, bias]."""
    k = kernel.astype(np.float32)
    return [k[:input_dim], k[input_dim:], bias.astype(np.float32)]


def keras_weights(spec: CellSpec, vs: Mapping[str, np.ndarray], forget_bias: float = 1.0) -> list[np.ndarray]:
    v = normalize_variables(vs)
    if spec.cell == "lstm":
        return lstm_weights(v[spec.var("kernel")], v[spec.var("bias")], spec.input_dim, forget_bias)
    if spec.cell == "gru":
        return gru_weights(v[spec.var("gates/kernel")], v[spec.var("gates/bias")], v[spec.var("candidate/kernel")],
                           v[spec.var("candidate/bias")], spec.input_dim)
    return rnn_weights(v[spec.var("kernel")], v[spec.var("bias")], spec.input_dim)


# ----------------------------------------------------------------------------------------------- conversion

def refuse_unsupported(spec: StackSpec, *, use_peepholes=None, num_proj=None, cell_clip=None, proj_clip=None,
                       num_unit_shards=None, num_proj_shards=None) -> None:
    """Raise ``RnnlabError`` naming every TF1 option of the stack that Keras 3 layers cannot express."""
    problems = []
    for c in spec.cells:
        for u in c.unsupported:
            problems.append(f"{c.scope}: {u}")
    passed = {"use_peepholes": use_peepholes, "num_proj": num_proj, "cell_clip": cell_clip, "proj_clip": proj_clip,
              "num_unit_shards": num_unit_shards, "num_proj_shards": num_proj_shards}
    for name, value in passed.items():
        if value not in (None, False, 0):
            problems.append(f"{name}={value!r}")
    if problems:
        raise RnnlabError("cannot convert: Keras 3 LSTM/GRU/SimpleRNN have no equivalent for "
                          + "; ".join(problems)
                          + " (peepholes, projections and cell/projection clipping need a custom cell in "
                            "keras.layers.RNN; rnnlab refuses rather than drop them)")


def convert(variables: Mapping[str, Any], *, cell: str | None = None, forget_bias: float = 1.0,
            scope: str | None = None, activation: str = "tanh", use_peepholes: bool | None = None,
            num_proj: int | None = None, cell_clip: float | None = None, proj_clip: float | None = None,
            zero_output_for_mask: bool = True, as_layers: bool = False,
            spec: StackSpec | None = None):
    """Build Keras 3 layers holding a TF1 RNN's weights.

    Returns a functional ``keras.Model`` (input ``[batch, time, input_dim]``; call it as ``model(x, mask=mask)`` for
    ``sequence_length``, see :func:`sequence_mask`) whose outputs are a dict: ``"outputs"`` (the top layer's
    sequence) and ``"cell_N/h"`` (+ ``"cell_N/c"`` for LSTMs) per layer; or, with ``as_layers=True``, the list of
    layers (each ``return_sequences=True, return_state=True``).

    ``forget_bias`` is not stored in TF1 variables: pass the value the cells were built with (default 1.0, as in
    TF1). ``zero_output_for_mask=True`` makes padded steps' outputs zero, as ``dynamic_rnn`` does.
    """
    vs = normalize_variables(variables)
    spec = spec or detect_stack(vs, cell=cell, scope=scope)
    refuse_unsupported(spec, use_peepholes=use_peepholes, num_proj=num_proj, cell_clip=cell_clip, proj_clip=proj_clip)
    _tf()
    import keras

    layers = []
    for c in spec.cells:
        common = dict(activation=activation, return_sequences=True, return_state=True,
                      zero_output_for_mask=zero_output_for_mask, name=f"cell_{c.index}",
                      dtype="float32")
        if c.cell == "lstm":
            layer = keras.layers.LSTM(c.units, **common)
        elif c.cell == "gru":
            layer = keras.layers.GRU(c.units, reset_after=False, **common)
        else:
            layer = keras.layers.SimpleRNN(c.units, **common)
        layers.append(layer)

    inp = keras.Input((None, spec.input_dim), name="inputs", dtype="float32")
    x = inp
    outputs: dict[str, Any] = {}
    for c, layer in zip(spec.cells, layers):
        res = layer(x)
        x = res[0]
        for name, t in zip(c.state_names(), res[1:]):
            outputs[f"cell_{c.index}/{name}"] = t
        layer.set_weights(keras_weights(c, vs, forget_bias))
    model = keras.Model(inp, {"outputs": x, **outputs}, name="converted_tf1_rnn")
    return layers if as_layers else model


def save(model, path: str | os.PathLike) -> str:
    """Write ``model`` as a ``.keras`` file (architecture + weights) or ``.weights.h5`` (weights only)."""
    p = Path(path)
    s = str(p)
    if not (s.endswith(".keras") or s.endswith(".weights.h5")):
        raise RnnlabError(f"--out {path}: the name must end in .keras (model) or .weights.h5 (weights only)")
    if p.parent and not p.parent.exists():
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RnnlabError(f"--out {path}: cannot create {p.parent} ({e.strerror})") from None
    try:
        if s.endswith(".keras"):
            model.save(s)
        else:
            model.save_weights(s)
    except OSError as e:
        raise RnnlabError(f"--out {path}: cannot write ({e.strerror or e})") from None
    return s


# ----------------------------------------------------------------------------------------------- running both sides

def sequence_mask(lengths: Sequence[int], seq_len: int) -> np.ndarray:
    """``dynamic_rnn``'s ``sequence_length`` as the boolean ``[batch, time]`` mask Keras layers take."""
    lengths = np.asarray(lengths, dtype=np.int64)
    return np.arange(seq_len)[None, :] < lengths[:, None]


def run_keras(model, x: np.ndarray, sequence_length: Sequence[int] | None = None, initial_state=None) -> dict:
    """Run a converted model (or list of layers) -> ``{"outputs": array, "cell_N/h": array, ...}`` as numpy."""
    mask = None if sequence_length is None else sequence_mask(sequence_length, x.shape[1])
    with warnings.catch_warnings():
        # Functional says it "destroys the mask" of its *output*; the layers inside do get it.
        warnings.filterwarnings("ignore", message=".*does not support masking.*")
        if isinstance(model, (list, tuple)):
            out = {}
            h = x
            for n, layer in enumerate(model):
                kw = {}
                if initial_state is not None:
                    kw["initial_state"] = initial_state[n]
                res = layer(h, mask=mask, **kw)
                h = res[0]
                names = ("h", "c") if len(res) == 3 else ("h",)
                for nm, t in zip(names, res[1:]):
                    out[f"{layer.name}/{nm}"] = np.asarray(t)
            out["outputs"] = np.asarray(h)
            return out
        res = model(x, mask=mask) if mask is not None else model(x)
    return {k: np.asarray(v) for k, v in res.items()}


def tf1_cells_module():
    """``tf.compat.v1.nn.rnn_cell``, or ``RnnlabError`` when TF was imported without TF_USE_LEGACY_KERAS=1."""
    tf = _tf()
    rc = tf.compat.v1.nn.rnn_cell
    try:
        rc.BasicLSTMCell  # noqa: B018  (raises AttributeError under Keras 3)
    except AttributeError as e:
        raise RnnlabError(f"the TF1 cells are unavailable in this process ({e}); TF_USE_LEGACY_KERAS=1 must be set "
                          "before tensorflow is first imported") from None
    return rc


def make_tf1_cell(rc, c: CellSpec, forget_bias: float = 1.0, activation=None):
    """A fresh TF1 cell of the same class/size as ``c`` (for the reference run)."""
    kw = {} if activation is None else {"activation": activation}
    if c.cell == "lstm":
        if c.tf1_class == "LSTMCell":
            return rc.LSTMCell(c.units, forget_bias=forget_bias, **kw)
        return rc.BasicLSTMCell(c.units, forget_bias=forget_bias, **kw)
    if c.cell == "gru":
        return rc.GRUCell(c.units, **kw)
    return rc.BasicRNNCell(c.units, **kw)


def tf1_state_dict(state, spec: StackSpec) -> dict[str, np.ndarray]:
    """A TF1 final state (LSTMStateTuple(c, h), tensor, or MultiRNNCell tuple) as ``{"cell_N/h", "cell_N/c"}``."""
    per = list(state) if spec.multi else [state]
    out = {}
    for c, s in zip(spec.cells, per):
        if c.cell == "lstm":
            out[f"cell_{c.index}/h"] = np.asarray(s.h if hasattr(s, "h") else s[1])
            out[f"cell_{c.index}/c"] = np.asarray(s.c if hasattr(s, "c") else s[0])
        else:
            out[f"cell_{c.index}/h"] = np.asarray(s)
    return out


def run_tf1(spec: StackSpec, variables: Mapping[str, Any], x: np.ndarray, sequence_length: Sequence[int] | None = None,
            *, forget_bias: float = 1.0, static: bool = False) -> dict[str, np.ndarray]:
    """The TF1 reference: rebuild the stack's cells in a fresh v1 Graph, load ``variables`` into them, run
    ``dynamic_rnn`` (or ``static_rnn`` with ``static=True``) on ``x`` -> ``{"outputs": .., "cell_N/h": .., ...}``."""
    tf = _tf()
    rc = tf1_cells_module()
    vs = normalize_variables(variables)
    g = tf.Graph()
    with g.as_default(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is deprecated.*")
        cells = [make_tf1_cell(rc, c, forget_bias) for c in spec.cells]
        cell = rc.MultiRNNCell(cells) if spec.multi else cells[0]
        xp = tf.compat.v1.placeholder(tf.float32, [None, x.shape[1], x.shape[2]])
        feed = {xp: x.astype(np.float32)}
        sl = None
        if sequence_length is not None:
            sl = tf.compat.v1.placeholder(tf.int32, [None])
            feed[sl] = np.asarray(sequence_length, dtype=np.int32)
        if static:
            outs, state = tf.compat.v1.nn.static_rnn(cell, tf.unstack(xp, axis=1), sequence_length=sl,
                                                     dtype=tf.float32)
            out = tf.stack(outs, axis=1)
        else:
            out, state = tf.compat.v1.nn.dynamic_rnn(cell, xp, sequence_length=sl, dtype=tf.float32)
        created = {v.name[:-2]: v for v in tf.compat.v1.global_variables()}
        made = detect_stack({n: np.zeros(v.shape, np.float32) for n, v in created.items()},
                            cell=spec.cell if spec.cell != "mixed" else None)
        with tf.compat.v1.Session(graph=g) as sess:
            for mine, theirs in zip(made.cells, spec.cells):
                for role, name in mine.roles:
                    created[name].load(vs[theirs.var(role)].astype(np.float32), sess)
            o, s = sess.run([out, state], feed)
    res = {"outputs": np.asarray(o)}
    res.update(tf1_state_dict(s, spec))
    return res


def compare(reference: Mapping[str, np.ndarray], candidate: Mapping[str, np.ndarray], atol: float = ATOL) -> dict:
    """Max abs diff per key (outputs and each state) and overall, with pass/fail at ``atol``."""
    diffs = {}
    for k, ref in reference.items():
        if k not in candidate:
            raise RnnlabError(f"converted model lacks {k!r} (has {', '.join(candidate)})")
        a, b = np.asarray(ref, np.float64), np.asarray(candidate[k], np.float64)
        if a.shape != b.shape:
            raise RnnlabError(f"{k}: shape {b.shape} differs from the TF1 reference's {a.shape}")
        diffs[k] = float(np.max(np.abs(a - b))) if a.size else 0.0
    worst = max(diffs.values()) if diffs else 0.0
    return {"max_abs_diff": worst, "diffs": diffs, "pass": bool(worst <= atol), "atol": atol}


def verify(variables: Mapping[str, Any], model=None, *, cell: str | None = None, forget_bias: float = 1.0,
           scope: str | None = None, batch: int = 4, seq_len: int = 7, seed: int = 0,
           lengths: Sequence[int] | None = None, atol: float = ATOL, spec: StackSpec | None = None) -> dict:
    """TF1 graph (``dynamic_rnn``) vs converted Keras 3 layers on identical random inputs, twice: full lengths and
    with ``sequence_length`` (``lengths``, default random lengths in 1..seq_len with one full row).

    Returns ``{"pass", "atol", "max_abs_diff", "max_abs_diff_outputs", "max_abs_diff_states",
    "cases": {"full": {...}, "sequence_length": {..., "lengths": [...]}}, "spec": {...}}``.
    """
    vs = normalize_variables(variables)
    spec = spec or detect_stack(vs, cell=cell, scope=scope)
    if model is None:
        model = convert(vs, forget_bias=forget_bias, spec=spec)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, seq_len, spec.input_dim)).astype(np.float32)
    if lengths is None:
        lengths = rng.integers(1, seq_len + 1, size=batch)
        lengths[0] = seq_len
    lengths = [int(v) for v in lengths]
    cases = {}
    for case, sl in (("full", None), ("sequence_length", lengths)):
        ref = run_tf1(spec, vs, x, sl, forget_bias=forget_bias)
        got = run_keras(model, x, sl)
        cmp = compare(ref, got, atol)
        if sl is not None:
            cmp["lengths"] = list(sl)
        cases[case] = cmp
    out_d = max(c["diffs"]["outputs"] for c in cases.values())
    st_d = max((d for c in cases.values() for k, d in c["diffs"].items() if k != "outputs"), default=0.0)
    return {"pass": all(c["pass"] for c in cases.values()), "atol": atol,
            "max_abs_diff": max(out_d, st_d), "max_abs_diff_outputs": out_d, "max_abs_diff_states": st_d,
            "batch": batch, "seq_len": seq_len, "seed": seed, "cases": cases, "spec": spec.to_dict()}
