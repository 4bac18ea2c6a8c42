"""Float64 NumPy reference forward pass for the canonical (TF1) cells: the ground truth every variant is checked against.

Semantics are ``dynamic_rnn``'s with ``sequence_length``: at a step past a row's length the output is zero and the
state is carried through unchanged, so the final state is the state after the row's last real step.
"""

from __future__ import annotations

import numpy as np

from rnnlab.tf.weights import FORGET_BIAS


def _sig(x):
    return 1.0 / (1.0 + np.exp(-x))


def _step(cell: str, w: dict, x: np.ndarray, state: tuple) -> tuple[np.ndarray, tuple]:
    """One step of one layer; ``state`` is (h,) or, for lstm, (c, h). Returns (output, new state)."""
    if cell == "rnn":
        (h,) = state
        h2 = np.tanh(np.concatenate([x, h], axis=1) @ w["kernel"] + w["bias"])
        return h2, (h2,)
    if cell == "lstm":
        c, h = state
        z = np.concatenate([x, h], axis=1) @ w["kernel"] + w["bias"]
        i, j, f, o = np.split(z, 4, axis=1)
        c2 = c * _sig(f + FORGET_BIAS) + _sig(i) * np.tanh(j)
        h2 = np.tanh(c2) * _sig(o)
        return h2, (c2, h2)
    if cell == "gru":
        (h,) = state
        g = _sig(np.concatenate([x, h], axis=1) @ w["gates/kernel"] + w["gates/bias"])
        r, u = np.split(g, 2, axis=1)
        cand = np.tanh(np.concatenate([x, r * h], axis=1) @ w["candidate/kernel"] + w["candidate/bias"])
        h2 = u * h + (1.0 - u) * cand
        return h2, (h2,)
    raise ValueError(f"cell={cell!r}: expected rnn, lstm or gru")


def forward(cell: str, weights: list[dict[str, np.ndarray]], x: np.ndarray,
            lengths: list[int] | np.ndarray | None = None) -> tuple[np.ndarray, list[dict[str, np.ndarray]]]:
    """Run the stacked cells over ``x`` [batch, time, input_dim] in float64.

    Returns ``(outputs, states)``: outputs [batch, time, units] of the last layer (zero past each row's length),
    and per layer a dict of final states: ``{"h": ...}`` or, for lstm, ``{"h": ..., "c": ...}``, each [batch, units].
    """
    x = np.asarray(x, dtype=np.float64)
    batch, steps, _ = x.shape
    lengths = np.full(batch, steps) if lengths is None else np.asarray(lengths)
    w64 = [{k: np.asarray(v, dtype=np.float64) for k, v in layer.items()} for layer in weights]
    units = (w64[0]["candidate/bias"] if cell == "gru" else w64[0]["bias"]).shape[0] // (4 if cell == "lstm" else 1)
    zero = np.zeros((batch, units))
    states = [(zero, zero) if cell == "lstm" else (zero,) for _ in w64]
    outputs = np.zeros((batch, steps, units))
    for t in range(steps):
        live = (t < lengths)[:, None]
        inp = x[:, t]
        for li, w in enumerate(w64):
            out, new = _step(cell, w, inp, states[li])
            states[li] = tuple(np.where(live, n, s) for n, s in zip(new, states[li]))
            inp = np.where(live, out, 0.0)
        outputs[:, t] = inp
    finals = []
    for st in states:
        finals.append({"c": st[0], "h": st[1]} if cell == "lstm" else {"h": st[0]})
    return outputs, finals


def as_outputs(outputs: np.ndarray, finals: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The ``outputs`` dict of the worker contract: ``outputs`` and ``state_L_K`` (L from 0, K = h or c)."""
    d = {"outputs": outputs}
    for li, st in enumerate(finals):
        for k in sorted(st, key=lambda k: k != "h"):
            d[f"state_{li}_{k}"] = st[k]
    return d
