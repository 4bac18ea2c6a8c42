"""Which TF1 RNN cells a model's variables hold and how they stack (``detect_stack`` -> ``StackSpec``): cell type,
units and input size per cell, from scope names and shapes; anything the converter cannot take refused by name."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from rnnlab.core.errors import RnnlabError
from rnnlab.tf.checkpoint import normalize_variables

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
    vs = normalize_variables(variables)

    opaque = [n for n in vs if n.endswith("opaque_kernel")]
    if opaque:
        raise RnnlabError(f"CudnnLSTM/CudnnGRU opaque parameters are not supported: {', '.join(opaque)}")
    by_scope, ignored = _by_scope(vs)
    found = _find_cells(by_scope, vs, ignored)
    if not found:
        _refuse_no_cells(vs)
    stacks = sorted({f[0] for f in found})
    stack = _choose_stack(stacks, scope)
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


def _by_scope(vs: dict[str, np.ndarray]) -> tuple[dict[str, dict[str, str]], list[str]]:
    """The variables grouped by cell scope (``{scope: {role: name}}``), and the names that are no cell's."""
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
    return by_scope, ignored


def _find_cells(by_scope: dict[str, dict[str, str]], vs: dict[str, np.ndarray],
                ignored: list[str]) -> list[tuple[str, int, bool, str]]:
    """Every cell scope as (stack scope, index, inside a MultiRNNCell, cell scope); a scope that is no known cell
    and not in a MultiRNNCell adds its variables to ``ignored``."""
    found: list[tuple[str, int, bool, str]] = []
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
    return found


def _refuse_no_cells(vs: dict[str, np.ndarray]) -> None:
    keras_like = [n for n in vs if n.endswith("/recurrent_kernel") and not _SLOT_RE.search(n)]
    hint = ""
    if any(".ATTRIBUTES/" in n for n in vs):
        hint = (" (this is a TF2 object-based checkpoint (tf.train.Checkpoint / Keras): restore it into the same "
                "Keras model instead)")
    elif keras_like:
        hint = (" (found kernel + recurrent_kernel: these look like Keras layer weights, not TF1 RNNCell ones; "
                "load them with set_weights / load_weights instead)")
    raise RnnlabError("no TF1 RNN cell variables found (expected e.g. rnn/basic_lstm_cell/kernel, "
                      f"rnn/multi_rnn_cell/cell_0/gru_cell/gates/kernel){hint}")


def _choose_stack(stacks: list[str], scope: str | None) -> str:
    """The one RNN to convert: the only one, or the one ``scope`` names."""
    if scope is not None:
        chosen = [s for s in stacks if s == scope.rstrip("/")] or [s for s in stacks if s.startswith(scope.rstrip("/"))]
        if len(set(chosen)) != 1:
            raise RnnlabError(f"scope={scope!r} matches {len(set(chosen))} of the RNNs found: "
                              f"{', '.join(stacks) or '-'}")
        return chosen[0]
    if len(stacks) > 1:
        raise RnnlabError(f"the variables hold {len(stacks)} RNNs ({', '.join(s or '<root>' for s in stacks)}): "
                          "pick one with scope=...")
    return stacks[0]


def _cell_spec(idx: int, sc: str, roles: dict[str, str], vs: dict[str, np.ndarray], cell: str | None,
               prev_out: int | None) -> CellSpec:
    last = sc.split("/")[-1]
    kind, cls = _cell_kind(sc, roles, cell)
    peep = [r for r in ("w_f_diag", "w_i_diag", "w_o_diag") if r in roles]
    unsupported = ((f"peepholes (use_peepholes=True: {', '.join(peep)})",) if peep else ()) + \
        (("projection (num_proj: projection/kernel)",) if "projection/kernel" in roles else ())
    if kind == "gru":
        units, input_dim = _gru_sizes(sc, roles, vs)
        if cls.startswith("unknown"):
            cls = "GRUCell"
    else:
        kind, units, input_dim = _rnn_or_lstm_sizes(sc, roles, vs, kind, prev_out)
        if cls.startswith("unknown") and last not in _KNOWN_CELLS:
            cls = f"unknown ({last}) read as {'LSTM' if kind == 'lstm' else 'BasicRNN'}Cell"
        if kind == "rnn" and any(r in roles for r in _UNSUPPORTED_ROLES):
            raise RnnlabError(f"{sc}: peephole/projection variables on a non-LSTM cell")
    if prev_out is not None and input_dim != prev_out:
        raise RnnlabError(f"{sc}: takes {input_dim} input features but the cell below it gives {prev_out}")
    return CellSpec(index=idx, scope=sc, cell=kind, tf1_class=cls, input_dim=int(input_dim), units=int(units),
                    roles=tuple(sorted(roles.items())), unsupported=unsupported)


def _cell_kind(sc: str, roles: dict[str, str], cell: str | None) -> tuple[str | None, str]:
    """The cell's type (None: rnn or lstm, decided from shapes) and TF1 class, from its scope name, its variables
    and ``cell``."""
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
    return kind, cls


def _gru_sizes(sc: str, roles: dict[str, str], vs: dict[str, np.ndarray]) -> tuple[int, int]:
    """A GRUCell's (units, input_dim), its four variables checked against each other."""
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
    return units, input_dim


def _rnn_or_lstm_sizes(sc: str, roles: dict[str, str], vs: dict[str, np.ndarray], kind: str | None,
                       prev_out: int | None) -> tuple[str, int, int]:
    """A kernel + bias cell's (type, units, input_dim); the type from the shapes when ``kind`` is None."""
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
    return kind, units, input_dim


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
