"""Convert the variables of a TF1 RNN (``tf.compat.v1.nn.rnn_cell.*``) into Keras 3 layers, and verify the result.

Input: ``{name: array}`` from a live graph (names may end in ``:0``) or from a TF1 checkpoint on disk
(:func:`read_tf1_checkpoint`, which uses ``tf.train.load_checkpoint``: no unpickling).

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
import re
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from rnnlab.core.errors import RnnlabError
from rnnlab.core.rules import ATOL

CELL_TYPES = ("rnn", "lstm", "gru")

# Known TF1 cell scope names -> (cell type, TF1 class)
_KNOWN_CELLS = {
    "basic_rnn_cell": ("rnn", "BasicRNNCell"),
    "basic_lstm_cell": ("lstm", "BasicLSTMCell"),
    "lstm_cell": ("lstm", "LSTMCell"),
    "gru_cell": ("gru", "GRUCell"),
}
# Variable roles relative to a cell scope
_ROLES = ("kernel", "bias", "gates/kernel", "gates/bias", "candidate/kernel", "candidate/bias",
          "w_f_diag", "w_i_diag", "w_o_diag", "projection/kernel")
_UNSUPPORTED_ROLES = ("w_f_diag", "w_i_diag", "w_o_diag", "projection/kernel")
_SLOT_RE = re.compile(r"/(Adam(_\d+)?|Momentum|RMSProp(_\d+)?|Adagrad|ExponentialMovingAverage)$")
_CELL_N_RE = re.compile(r"^cell_(\d+)$")


# ----------------------------------------------------------------------------------------------- reading variables

def _tf():
    """Import TensorFlow, setting TF_USE_LEGACY_KERAS=1 first when it is not imported yet (TF1 cells need it)."""
    if "tensorflow" not in sys.modules:
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow as tf

    return tf


def _checkpoint_prefix(path: str | os.PathLike) -> str:
    p = Path(path)
    if p.is_dir():
        tf = _tf()
        latest = tf.train.latest_checkpoint(str(p))
        if latest:
            return latest
        idx = sorted(p.glob("*.index"))
        if len(idx) == 1:
            return str(idx[0])[: -len(".index")]
        raise RnnlabError(f"{path}: a directory without a TF checkpoint (no 'checkpoint' file, no single *.index)")
    s = str(p)
    if s.endswith(".index"):
        return s[: -len(".index")]
    m = re.match(r"^(.*)\.data-\d+-of-\d+$", s)
    if m:
        return m.group(1)
    if s.endswith(".meta"):
        return s[: -len(".meta")]
    return s


# A checkpoint's .index is a LevelDB-style table: it ends in a 48-byte footer whose last 8 bytes are this number
# (little-endian; tensorflow/core/lib/io/format.h kTableMagicNumber).
_TABLE_MAGIC = 0xDB4775248B80FB57
_FOOTER = 48


def _check_index(index: Path) -> None:
    """Refuse a file that cannot be a TensorFlow checkpoint index, naming it: pure Python, no TensorFlow."""
    try:
        size = index.stat().st_size
        tail = b""
        if size >= _FOOTER:
            with open(index, "rb") as f:
                f.seek(size - 8)
                tail = f.read(8)
    except OSError as e:
        raise RnnlabError(f"{index.name}: cannot read it ({e.strerror or e})") from None
    if size < _FOOTER or int.from_bytes(tail, "little") != _TABLE_MAGIC:
        raise RnnlabError(f"{index.name}: not a TensorFlow checkpoint index")


def locate_checkpoint(path: str | os.PathLike) -> tuple[str, str, str]:
    """(prefix, what TensorFlow should open, what to call it if it cannot), from ``path`` alone: a missing
    checkpoint or a junk index raises ``RnnlabError`` here, before TensorFlow is imported."""
    prefix = _checkpoint_prefix(path)
    if Path(prefix + ".index").exists():
        _check_index(Path(prefix + ".index"))  # before TensorFlow reads it (and before it is even imported)
        return prefix, prefix, "not a readable TF checkpoint"
    if not Path(prefix).exists() and not Path(path).exists():
        raise RnnlabError(f"{path}: no such checkpoint (expected {prefix}.index and {prefix}.data-*)")
    # maybe a V1 (single-file) checkpoint; otherwise not a checkpoint at all
    return prefix, str(path), f"not a TF checkpoint (no {Path(prefix).name}.index beside it)"


def read_tf1_checkpoint(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """All variables of a TF checkpoint as ``{name: array}`` (via ``tf.train.load_checkpoint``; never unpickles).

    ``path`` is a checkpoint prefix (``model.ckpt``), one of its files (``.index``, ``.data-*``, ``.meta``) or a
    directory holding a ``checkpoint`` file. Missing or unreadable -> ``RnnlabError``.
    """
    prefix, target, what = locate_checkpoint(path)
    tf = _tf()
    try:
        reader = tf.train.load_checkpoint(target)
        shapes = reader.get_variable_to_shape_map()
        out = {}
        for name in sorted(shapes):
            value = reader.get_tensor(name)
            if isinstance(value, np.ndarray) or np.isscalar(value):
                out[name] = np.asarray(value)
    except IndexError as e:  # TensorFlow's "Read less bytes than requested": a data shard shorter than its index says
        if "read less" not in str(e).lower():
            raise
        shards = sorted(p.name for p in Path(prefix).parent.glob(Path(prefix).name + ".data-*")) or [f"{prefix}.data-*"]
        raise RnnlabError(f"{', '.join(shards)}: truncated (read less than the index says)") from None
    except (tf.errors.OpError, ValueError, RuntimeError) as e:  # DataLossError, NotFoundError...
        first = (str(e).splitlines() or [""])[0]
        raise RnnlabError(f"{path}: {what} ({type(e).__name__}: {first[:200]})") from None
    if not out:
        raise RnnlabError(f"{path}: the checkpoint holds no variables")
    return out


def _normalize(variables: Mapping[str, Any]) -> dict[str, np.ndarray]:
    if not isinstance(variables, Mapping) or not variables:
        raise RnnlabError("no variables given: expected a non-empty {name: array} dict (from a graph or a checkpoint)")
    out = {}
    for name, value in variables.items():
        out[re.sub(r":\d+$", "", str(name))] = np.asarray(value)
    return out


# ----------------------------------------------------------------------------------------------- detection

@dataclass(frozen=True)
class CellSpec:
    """One TF1 cell of a stack: where its variables are and what they imply."""

    index: int  # position in the stack (MultiRNNCell's cell_N)
    scope: str  # e.g. "rnn/multi_rnn_cell/cell_0/basic_lstm_cell"
    cell: str  # "rnn" | "lstm" | "gru"
    tf1_class: str  # "BasicRNNCell" | "BasicLSTMCell" | "LSTMCell" | "GRUCell" | "unknown (<name>)"
    input_dim: int
    units: int
    roles: tuple[tuple[str, str], ...]  # (role, full variable name), e.g. ("kernel", ".../kernel")
    unsupported: tuple[str, ...] = ()  # human descriptions of options found that Keras 3 cannot express

    def var(self, role: str) -> str:
        return dict(self.roles)[role]

    def state_names(self) -> tuple[str, ...]:
        return ("h", "c") if self.cell == "lstm" else ("h",)

    def to_dict(self) -> dict:
        return {"index": self.index, "scope": self.scope, "cell": self.cell, "tf1_class": self.tf1_class,
                "input_dim": self.input_dim, "units": self.units, "variables": dict(self.roles),
                "unsupported": list(self.unsupported)}


@dataclass(frozen=True)
class StackSpec:
    """A detected TF1 RNN: one cell, or a MultiRNNCell stack, under one scope."""

    scope: str  # the stack's scope, e.g. "rnn" (MultiRNNCell's own "multi_rnn_cell" is below it)
    cells: tuple[CellSpec, ...]
    multi: bool  # MultiRNNCell (cell_N scopes)
    ignored: tuple[str, ...] = ()  # variables that belong to no RNN cell (global_step, optimizer slots, dense...)
    other_stacks: tuple[str, ...] = field(default=())

    @property
    def layers(self) -> int:
        return len(self.cells)

    @property
    def input_dim(self) -> int:
        return self.cells[0].input_dim

    @property
    def units(self) -> int:
        return self.cells[-1].units

    @property
    def cell(self) -> str:
        kinds = {c.cell for c in self.cells}
        return kinds.pop() if len(kinds) == 1 else "mixed"

    def state_keys(self) -> list[str]:
        return [f"cell_{c.index}/{s}" for c in self.cells for s in c.state_names()]

    def to_dict(self) -> dict:
        return {"scope": self.scope, "multi_rnn_cell": self.multi, "layers": self.layers, "cell": self.cell,
                "input_dim": self.input_dim, "units": self.units, "cells": [c.to_dict() for c in self.cells],
                "ignored": list(self.ignored), "other_stacks": list(self.other_stacks)}


def _split_role(name: str) -> tuple[str, str] | None:
    """``a/b/gru_cell/gates/kernel`` -> (``a/b/gru_cell``, ``gates/kernel``)."""
    for role in sorted(_ROLES, key=len, reverse=True):
        if name.endswith("/" + role):
            return name[: -len(role) - 1], role
    return None


def _cell_kind_from_name(scope_last: str) -> tuple[str | None, str]:
    if scope_last in _KNOWN_CELLS:
        return _KNOWN_CELLS[scope_last]
    low = scope_last.lower()
    guess = "gru" if "gru" in low else "lstm" if "lstm" in low else "rnn" if "rnn" in low else None
    return guess, f"unknown ({scope_last})"


def detect_stack(variables: Mapping[str, Any], *, cell: str | None = None, scope: str | None = None) -> StackSpec:
    """Find the TF1 RNN cells in ``variables`` and how they stack; infer cell type, units and input size.

    Cells are recognised by their scope names (``basic_rnn_cell``, ``basic_lstm_cell``, ``lstm_cell``,
    ``gru_cell``) or, inside a MultiRNNCell's ``cell_N`` scope, by their variables (``kernel``/``bias``, or
    ``gates/*`` + ``candidate/*``). ``cell`` forces the type where names do not tell; ``scope`` picks one RNN when
    the variables hold several (encoder/decoder, bidirectional fw/bw).
    """
    if cell is not None and cell not in CELL_TYPES:
        raise RnnlabError(f"cell={cell!r}: expected one of {', '.join(CELL_TYPES)}")
    vs = _normalize(variables)

    opaque = [n for n in vs if n.endswith("opaque_kernel")]
    if opaque:
        raise RnnlabError(f"CudnnLSTM/CudnnGRU opaque parameters are not supported: {', '.join(opaque)}")

    # group variables by cell scope
    by_scope: dict[str, dict[str, str]] = {}
    ignored = []
    for name in sorted(vs):
        if _SLOT_RE.search(name):
            ignored.append(name)
            continue
        sr = _split_role(name)
        if sr is None:
            ignored.append(name)
            continue
        sc, role = sr
        by_scope.setdefault(sc, {})[role] = name

    keras_like = [n for n in vs if n.endswith("/recurrent_kernel") and not _SLOT_RE.search(n)]

    found: list[tuple[str, int, bool, str]] = []  # (stack scope, index, multi, cell scope)
    for sc, roles in by_scope.items():
        if f"{sc}/recurrent_kernel" in vs:
            raise RnnlabError(f"{sc}: kernel + recurrent_kernel are Keras layer weights, not a TF1 RNNCell's; "
                              "load them with set_weights / load_weights (same layout in Keras 3) instead of "
                              "converting")
        parts = sc.split("/")
        last = parts[-1]
        parent = parts[-2] if len(parts) >= 2 else ""
        in_multi = bool(_CELL_N_RE.match(parent))
        known = last in _KNOWN_CELLS
        if not known and not in_multi:
            ignored.extend(roles.values())
            continue
        if in_multi:
            idx = int(_CELL_N_RE.match(parent).group(1))
            stack_parts = parts[:-2]
            if stack_parts and stack_parts[-1] == "multi_rnn_cell":
                stack_parts = stack_parts[:-1]
            found.append(("/".join(stack_parts), idx, True, sc))
        else:
            found.append(("/".join(parts[:-1]), 0, False, sc))

    if not found:
        hint = ""
        if any(".ATTRIBUTES/" in n for n in vs):
            hint = (" (this is a TF2 object-based checkpoint (tf.train.Checkpoint / Keras): restore it into the same "
                    "Keras model instead)")
        elif keras_like:
            hint = (" (found kernel + recurrent_kernel: these look like Keras layer weights, not TF1 RNNCell ones; "
                    "load them with set_weights / load_weights instead)")
        raise RnnlabError("no TF1 RNN cell variables found (expected e.g. rnn/basic_lstm_cell/kernel, "
                          f"rnn/multi_rnn_cell/cell_0/gru_cell/gates/kernel){hint}")

    stacks = sorted({f[0] for f in found})
    if scope is not None:
        chosen = [s for s in stacks if s == scope.rstrip("/")] or [s for s in stacks if s.startswith(scope.rstrip("/"))]
        if len(set(chosen)) != 1:
            raise RnnlabError(f"scope={scope!r} matches {len(set(chosen))} of the RNNs found: "
                              f"{', '.join(stacks) or '-'}")
        stack = chosen[0]
    elif len(stacks) > 1:
        raise RnnlabError(f"the variables hold {len(stacks)} RNNs ({', '.join(s or '<root>' for s in stacks)}): "
                          "pick one with scope=...")
    else:
        stack = stacks[0]

    members = sorted((f for f in found if f[0] == stack), key=lambda f: f[1])
    idxs = [f[1] for f in members]
    if idxs != list(range(len(idxs))):
        raise RnnlabError(f"{stack}: MultiRNNCell cells are {idxs}; expected cell_0..cell_{len(idxs) - 1} "
                          "(one cell per cell_N scope, none missing)")
    multi = members[0][2]

    cells: list[CellSpec] = []
    prev_out: int | None = None
    for _, idx, _, sc in members:
        cells.append(_cell_spec(idx, sc, by_scope[sc], vs, cell, prev_out))
        prev_out = cells[-1].units if not any("projection" in u for u in cells[-1].unsupported) else \
            vs[cells[-1].var("projection/kernel")].shape[1]
    others = tuple(s for s in stacks if s != stack)
    for s in others:
        ignored.extend(n for f in found if f[0] == s for n in by_scope[f[3]].values())
    return StackSpec(scope=stack, cells=tuple(cells), multi=multi, ignored=tuple(sorted(ignored)), other_stacks=others)


def _cell_spec(idx: int, sc: str, roles: dict[str, str], vs: dict[str, np.ndarray], cell: str | None,
               prev_out: int | None) -> CellSpec:
    last = sc.split("/")[-1]
    kind, cls = _cell_kind_from_name(last)
    has_gru = {"gates/kernel", "candidate/kernel"} <= set(roles)
    if has_gru:
        kind_v = "gru"
    elif "kernel" in roles and "bias" in roles:
        kind_v = None  # rnn or lstm: decide from shapes
    else:
        raise RnnlabError(f"{sc}: incomplete cell variables ({', '.join(sorted(roles))}); "
                          "expected kernel + bias, or gates/* + candidate/*")
    if kind_v == "gru":
        if kind not in (None, "gru") and last in _KNOWN_CELLS:
            raise RnnlabError(f"{sc}: GRU variables under an {kind} cell scope")
        kind = "gru"
    if cell is not None:
        if last in _KNOWN_CELLS and kind != cell:
            raise RnnlabError(f"{sc}: the variables are a {_KNOWN_CELLS[last][1]} ({kind}), not cell={cell!r}")
        if kind_v == "gru" and cell != "gru":
            raise RnnlabError(f"{sc}: gates/ + candidate/ variables are a GRUCell, not cell={cell!r}")
        kind = cell

    peep = [r for r in ("w_f_diag", "w_i_diag", "w_o_diag") if r in roles]
    unsupported = ((f"peepholes (use_peepholes=True: {', '.join(peep)})",) if peep else ()) + \
        (("projection (num_proj: projection/kernel)",) if "projection/kernel" in roles else ())
    if kind == "gru":
        missing = {"gates/kernel", "gates/bias", "candidate/kernel", "candidate/bias"} - set(roles)
        if missing:
            raise RnnlabError(f"{sc}: GRUCell variables missing: {', '.join(sorted(missing))}")
        gk, gb = vs[roles["gates/kernel"]], vs[roles["gates/bias"]]
        ck, cb = vs[roles["candidate/kernel"]], vs[roles["candidate/bias"]]
        if gk.ndim != 2 or gk.shape[1] % 2 or gb.shape != (gk.shape[1],):
            raise RnnlabError(f"{sc}: gates/kernel {gk.shape} and gates/bias {gb.shape} are not a GRUCell's")
        units = gk.shape[1] // 2
        input_dim = gk.shape[0] - units
        if ck.shape != (gk.shape[0], units) or cb.shape != (units,) or input_dim < 1:
            raise RnnlabError(f"{sc}: candidate/kernel {ck.shape}, candidate/bias {cb.shape} do not match "
                              f"gates/kernel {gk.shape}")
        if cls.startswith("unknown"):
            cls = "GRUCell"
    else:
        k, b = vs[roles["kernel"]], vs[roles["bias"]]
        if k.ndim != 2 or b.ndim != 1 or k.shape[1] != b.shape[0]:
            raise RnnlabError(f"{sc}: kernel {k.shape} and bias {b.shape} are not an RNN cell's")
        if kind is None:
            kind = _guess_rnn_or_lstm(sc, k.shape, prev_out)
        if kind == "lstm":
            if k.shape[1] % 4:
                raise RnnlabError(f"{sc}: kernel {k.shape} has {k.shape[1]} columns, not 4*units (an LSTM's)")
            units = k.shape[1] // 4
            rec = vs[roles["projection/kernel"]].shape[1] if "projection/kernel" in roles else units
            input_dim = k.shape[0] - rec
        else:
            units = k.shape[1]
            input_dim = k.shape[0] - units
        if input_dim < 1:
            raise RnnlabError(f"{sc}: kernel {k.shape} leaves no input features for a {kind} of {units} units")
        if cls.startswith("unknown") and last not in _KNOWN_CELLS:
            cls = f"unknown ({last}) read as {'LSTM' if kind == 'lstm' else 'BasicRNN'}Cell"
        if kind == "rnn" and any(r in roles for r in _UNSUPPORTED_ROLES):
            raise RnnlabError(f"{sc}: peephole/projection variables on a non-LSTM cell")
    if prev_out is not None and input_dim != prev_out:
        raise RnnlabError(f"{sc}: takes {input_dim} input features but the cell below it gives {prev_out}")
    return CellSpec(index=idx, scope=sc, cell=kind, tf1_class=cls, input_dim=int(input_dim), units=int(units),
                    roles=tuple(sorted(roles.items())), unsupported=unsupported)


def _guess_rnn_or_lstm(sc: str, kshape: tuple, prev_out: int | None) -> str:
    rows, cols = kshape
    fits_rnn = rows - cols >= 1 and (prev_out is None or rows - cols == prev_out)
    fits_lstm = cols % 4 == 0 and rows - cols // 4 >= 1 and (prev_out is None or rows - cols // 4 == prev_out)
    if fits_rnn and not fits_lstm:
        return "rnn"
    if fits_lstm and not fits_rnn:
        return "lstm"
    raise RnnlabError(f"{sc}: kernel {tuple(kshape)} could be a BasicRNNCell or an LSTM cell; pass cell=rnn or "
                      "cell=lstm (--cell)")


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
    v = _normalize(vs)
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
    vs = _normalize(variables)
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
    vs = _normalize(variables)
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
    vs = _normalize(variables)
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
