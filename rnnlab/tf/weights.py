"""Deterministic weights and inputs from a seed, in one canonical layout, and converters to Keras 3 layouts.

No TensorFlow here: every variant loads the same arrays, so their outputs can be compared.

Canonical layout (TF1's ``tf.compat.v1.nn.rnn_cell``), one dict per layer; ``in`` is ``input_dim`` for layer 0 and
``units`` above it, and kernels multiply ``concat([x, h], axis=1)``:

- ``rnn`` (BasicRNNCell): ``kernel`` [in+units, units], ``bias`` [units].  h' = tanh([x,h] K + b)
- ``lstm`` (BasicLSTMCell, forget_bias=1.0, state_is_tuple): ``kernel`` [in+units, 4*units], ``bias`` [4*units],
  column blocks in TF1's order i, j, f, o (j is the candidate). c' = c*sig(f + 1) + sig(i)*tanh(j); h' = tanh(c')*sig(o)
- ``gru`` (GRUCell): ``gates/kernel`` [in+units, 2*units], ``gates/bias`` [2*units] with blocks r, u;
  ``candidate/kernel`` [in+units, units], ``candidate/bias`` [units].
  r, u = sig([x,h] Kg + bg); c = tanh([x, r*h] Kc + bc); h' = u*h + (1-u)*c

Arrays are float32 (drawn in float64, then rounded), so the float64 reference sees exactly the weights the variants use.
Magnitudes are small (uniform in +-1/sqrt(units)) so nothing saturates and differences stay visible.
"""

from __future__ import annotations

import numpy as np

CELLS = ("rnn", "lstm", "gru")
FORGET_BIAS = 1.0  # BasicLSTMCell's default, added to the f gate before the sigmoid
GATES = {"rnn": 1, "lstm": 4, "gru": 3}  # blocks of `units` columns per layer (GRU: 2 gates + 1 candidate)

# Each layer's dict keys, in the order the TF1 cell creates its variables (cell.weights).
WEIGHT_NAMES = {
    "rnn": ("kernel", "bias"),
    "lstm": ("kernel", "bias"),
    "gru": ("gates/kernel", "gates/bias", "candidate/kernel", "candidate/bias"),
}


def _check_cell(cell: str) -> None:
    if cell not in CELLS:
        raise ValueError(f"cell={cell!r}: expected one of {', '.join(CELLS)}")


def layer_input_dims(layers: int, units: int, input_dim: int) -> list[int]:
    """Input width of each layer: ``input_dim`` for the first, ``units`` for the ones stacked on it."""
    return [input_dim] + [units] * (layers - 1)


def make_weights(cell: str, layers: int, units: int, input_dim: int, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """Per layer, the canonical (TF1) weights as float32 arrays; the same seed gives the same arrays."""
    _check_cell(cell)
    rng = np.random.default_rng([int(seed), 1])
    scale = 1.0 / np.sqrt(units)
    out = []
    for d_in in layer_input_dims(layers, units, input_dim):
        rows = d_in + units

        def u(*shape):
            return rng.uniform(-scale, scale, size=shape).astype(np.float32)

        if cell == "gru":
            out.append({"gates/kernel": u(rows, 2 * units), "gates/bias": u(2 * units),
                        "candidate/kernel": u(rows, units), "candidate/bias": u(units)})
        else:
            g = GATES[cell]
            out.append({"kernel": u(rows, g * units), "bias": u(g * units)})
    return out


def make_inputs(batch: int, seq_len: int, input_dim: int, seed: int = 0) -> np.ndarray:
    """Inputs, float32 [batch, seq_len, input_dim], uniform in [-1, 1)."""
    rng = np.random.default_rng([int(seed), 2])
    return rng.uniform(-1.0, 1.0, size=(batch, seq_len, input_dim)).astype(np.float32)


def as_list(cell: str, layer: dict[str, np.ndarray]) -> list[np.ndarray]:
    """One layer's canonical arrays in the TF1 cell's variable order (``WEIGHT_NAMES``)."""
    return [layer[name] for name in WEIGHT_NAMES[cell]]


def to_keras(cell: str, layer: dict[str, np.ndarray], input_dim: int) -> list[np.ndarray]:
    """One layer's canonical weights as Keras 3 ``get_weights()`` order: [kernel, recurrent_kernel, bias].

    - SimpleRNN: the TF1 kernel's first ``input_dim`` rows are the kernel, the rest the recurrent kernel.
    - LSTM: gate blocks TF1 i, j, f, o -> Keras i, f, c, o, and BasicLSTMCell's forget_bias folded into the f bias
      (Keras has no forget_bias at call time; ``unit_forget_bias`` only initialises).
    - GRU with ``reset_after=False``: Keras blocks z, r, h where z is TF1's u, r is TF1's r and h the candidate;
      bias [3*units]. With reset_after=False Keras applies r to h before the recurrent matmul, exactly as GRUCell.
    """
    _check_cell(cell)
    if cell == "rnn":
        k = layer["kernel"]
        return [k[:input_dim].copy(), k[input_dim:].copy(), layer["bias"].copy()]
    if cell == "lstm":
        k, b = layer["kernel"], layer["bias"]
        i, j, f, o = np.split(k, 4, axis=1)
        bi, bj, bf, bo = np.split(b, 4)
        k2 = np.concatenate([i, f, j, o], axis=1)
        b2 = np.concatenate([bi, bf + np.float32(FORGET_BIAS), bj, bo]).astype(np.float32)
        return [k2[:input_dim].copy(), k2[input_dim:].copy(), b2]
    gk, gb = layer["gates/kernel"], layer["gates/bias"]
    ck, cb = layer["candidate/kernel"], layer["candidate/bias"]
    r, u = np.split(gk, 2, axis=1)
    br, bu = np.split(gb, 2)
    k3 = np.concatenate([u, r, ck], axis=1)
    return [k3[:input_dim].copy(), k3[input_dim:].copy(), np.concatenate([bu, br, cb]).astype(np.float32)]


def from_keras(cell: str, arrays: list[np.ndarray]) -> dict[str, np.ndarray]:
    """The inverse of ``to_keras`` (for tests and for reading trained Keras weights back)."""
    _check_cell(cell)
    kernel, rec, bias = (np.asarray(a) for a in arrays)
    k = np.concatenate([kernel, rec], axis=0)
    if cell == "rnn":
        return {"kernel": k, "bias": bias}
    if cell == "lstm":
        i, f, j, o = np.split(k, 4, axis=1)
        bi, bf, bj, bo = np.split(bias, 4)
        return {"kernel": np.concatenate([i, j, f, o], axis=1),
                "bias": np.concatenate([bi, bj, bf - np.float32(FORGET_BIAS), bo]).astype(np.float32)}
    u, r, c = np.split(k, 3, axis=1)
    bu, br, bc = np.split(bias, 3)
    return {"gates/kernel": np.concatenate([r, u], axis=1), "gates/bias": np.concatenate([br, bu]),
            "candidate/kernel": c, "candidate/bias": bc}


class Problem:
    """One measurement's sizes, options, weights and inputs, read from validated params (absent ones get defaults).

    ``lengths`` is the true length of every row; ``masked`` is True when params ask for lengths other than "full"
    (then variants pass ``sequence_length`` / a mask even if every row happens to be full, so its cost is measured).
    ``x`` is batch-major [batch, seq_len, input_dim]; ``x_feed`` is the layout the variant is fed (time-major when
    ``time_major``).
    """

    def __init__(self, params: dict):
        from rnnlab.core.params import PARAMS, lengths_for

        def get(name):
            return params[name] if name in params else PARAMS[name].default

        self.cell: str = get("cell")
        _check_cell(self.cell)
        self.layers: int = int(get("layers"))
        self.units: int = int(get("units"))
        self.input_dim: int = int(get("input_dim"))
        self.batch: int = int(get("batch"))
        self.seq_len: int = int(get("seq_len"))
        self.seed: int = int(get("seed"))
        self.dtype: str = get("dtype")
        self.time_major: bool = bool(get("time_major"))
        self.parallel_iterations: int = int(get("parallel_iterations"))
        self.swap_memory: bool = bool(get("swap_memory"))
        self.lengths_spec: str = get("lengths")
        self.lengths: list[int] = lengths_for(self.lengths_spec, self.batch, self.seq_len, self.seed)
        self.masked: bool = self.lengths_spec != "full"
        self.weights = make_weights(self.cell, self.layers, self.units, self.input_dim, self.seed)
        self.x = make_inputs(self.batch, self.seq_len, self.input_dim, self.seed)

    @property
    def x_feed(self) -> np.ndarray:
        return np.ascontiguousarray(self.x.transpose(1, 0, 2)) if self.time_major else self.x

    @property
    def in_dims(self) -> list[int]:
        return layer_input_dims(self.layers, self.units, self.input_dim)

    def mask(self) -> np.ndarray:
        """Boolean [batch, seq_len]: True at real steps (right-padded)."""
        return np.arange(self.seq_len)[None, :] < np.asarray(self.lengths)[:, None]
