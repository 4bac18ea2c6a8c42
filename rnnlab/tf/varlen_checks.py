"""Pure checks of variable-length semantics, over arrays only (no TensorFlow here).

Arrays, batch-major:

- ``outputs``  [batch, time, units]: the per-step outputs an implementation returned for a padded batch.
- ``states``   [batch, time, state]: the state after each step (for an LSTM, ``concat([c, h])``); NaN at a step
  that was not observed (it is skipped). Each row's step length-1 must be observed.
- ``final``    [batch, state]: the final state it returned.
- ``lengths``  [batch]: each row's true length (>= 0); steps ``t >= lengths[b]`` are padding. A row of length 0 is
  all padding: its "state at step length-1" is the initial state, zero.

The three checks (each pass/fail, with the worst offender so a failure can be shown):

(a) ``check_outputs_zero``  -- every output past a row's length is zero;
(b) ``check_state_carried`` -- the state past a row's length equals the state at step ``length-1`` (carried unchanged);
(c) ``check_final_state``   -- the final state equals the state at step ``length-1``.

An implementation that ignores the lengths (runs the padding through the cell) fails all three as soon as one row is
shorter than the padded length; one that honours them passes. A check with nothing to look at (every row full) passes
and says so (``checked == 0``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rnnlab.core.rules import ATOL
# Keras 3's cuDNN mask rule lives with the other cuDNN rules; re-exported for the varlen callers.

ATOL_ZERO = 1e-6   # an output counts as zero below this
ATOL_STATE = ATOL  # two states count as equal within the one float32 tolerance (same ops)


def valid_mask(lengths, steps: int) -> np.ndarray:
    """Boolean [batch, steps]: True at real steps (right-padded)."""
    return np.arange(steps)[None, :] < np.asarray(lengths)[:, None]


def _lengths(lengths, batch: int, steps: int) -> np.ndarray:
    lens = np.asarray(lengths, dtype=np.int64)
    if lens.shape != (batch,):
        raise ValueError(f"lengths has shape {lens.shape}, expected ({batch},)")
    if (lens < 0).any() or (lens > steps).any():
        raise ValueError(f"lengths must be within [0, {steps}]")
    return lens


def _result(ok: bool, worst: float, where: tuple | None, checked: int) -> dict[str, Any]:
    return {"ok": bool(ok), "worst": float(worst), "row": None if where is None else int(where[0]),
            "step": None if where is None or where[1] is None else int(where[1]), "checked": int(checked)}


def _last_real(st: np.ndarray, lens: np.ndarray) -> np.ndarray:
    last = st[np.arange(st.shape[0]), np.maximum(lens - 1, 0)]  # [batch, state]
    last = np.where((lens > 0)[:, None], last, 0.0)  # a length-0 row keeps the (zero) initial state
    if np.isnan(last).any():
        raise ValueError("states must be observed at every row's step length-1")
    return last


def check_outputs_zero(outputs, lengths, atol: float = ATOL_ZERO) -> dict[str, Any]:
    """(a) Outputs past each row's length are zero. ``worst`` is the largest |output| found there."""
    out = np.asarray(outputs, dtype=np.float64)
    b, t = out.shape[:2]
    lens = _lengths(lengths, b, t)
    pad = ~valid_mask(lens, t)
    checked = int(pad.sum())
    if not checked:
        return _result(True, 0.0, None, 0)
    mag = np.abs(out).reshape(b, t, -1).max(axis=2)
    mag = np.where(pad, mag, 0.0)
    r, s = np.unravel_index(int(np.argmax(mag)), mag.shape)
    worst = float(mag[r, s])
    return _result(worst <= atol, worst, (r, s) if worst > 0 else None, checked)


def check_state_carried(states, lengths, atol: float = ATOL_STATE) -> dict[str, Any]:
    """(b) For every step past a row's length, the state equals the state at step length-1.

    ``worst`` is the largest |state[t] - state[length-1]| over padded steps.
    """
    st = np.asarray(states, dtype=np.float64)
    b, t = st.shape[:2]
    lens = _lengths(lengths, b, t)
    last = _last_real(st, lens)
    observed = ~np.isnan(st).any(axis=2)
    pad = ~valid_mask(lens, t) & observed
    checked = int(pad.sum())
    if not checked:
        return _result(True, 0.0, None, 0)
    diff = np.abs(np.nan_to_num(st) - last[:, None, :]).reshape(b, t, -1).max(axis=2)
    diff = np.where(pad, diff, 0.0)
    r, s = np.unravel_index(int(np.argmax(diff)), diff.shape)
    worst = float(diff[r, s])
    return _result(worst <= atol, worst, (r, s) if worst > 0 else None, checked)


def check_final_state(final, states, lengths, atol: float = ATOL_STATE) -> dict[str, Any]:
    """(c) The returned final state equals the state at step length-1 of each row.

    ``checked`` counts the rows shorter than the padded length (the ones where this can go wrong); the comparison
    itself covers every row.
    """
    fin = np.asarray(final, dtype=np.float64)
    st = np.asarray(states, dtype=np.float64)
    b, t = st.shape[:2]
    lens = _lengths(lengths, b, t)
    if fin.shape != (b, st.shape[2]):
        raise ValueError(f"final has shape {fin.shape}, expected {(b, st.shape[2])}")
    last = _last_real(st, lens)
    diff = np.abs(fin - last).max(axis=1)
    r = int(np.argmax(diff))
    worst = float(diff[r])
    return _result(worst <= atol, worst, (r, None) if worst > 0 else None, int((lens < t).sum()))


def run_checks(outputs, states, final, lengths) -> dict[str, dict[str, Any]]:
    """All three checks: ``{"outputs_zero": ..., "state_carried": ..., "final_state": ...}``."""
    return {"outputs_zero": check_outputs_zero(outputs, lengths),
            "state_carried": check_state_carried(states, lengths),
            "final_state": check_final_state(final, states, lengths)}


def past_length_pattern(outputs, lengths, atol: float = ATOL_STATE) -> str:
    """What the outputs past each row's length look like: ``"none"`` (no padding), ``"zero"``, ``"carried"`` (the
    last real output repeated -- Keras' default with a mask, ``zero_output_for_mask=False``) or ``"other"`` (they keep
    changing: the padding was run through the cell)."""
    out = np.asarray(outputs, dtype=np.float64)
    b, t = out.shape[:2]
    lens = _lengths(lengths, b, t)
    pad = ~valid_mask(lens, t)
    if not pad.any():
        return "none"
    flat = out.reshape(b, t, -1)
    if np.abs(flat[pad]).max() <= ATOL_ZERO:
        return "zero"
    last = np.where((lens > 0)[:, None], flat[np.arange(b), np.maximum(lens - 1, 0)], 0.0)
    if (np.abs(flat - last[:, None, :]).max(axis=2)[pad] <= atol).all():
        return "carried"
    return "other"


def max_abs_diff(a, b, mask=None) -> float:
    """Largest |a - b|, over the steps where ``mask`` [batch, time] is True when given (e.g. real steps only)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
    d = np.abs(a - b)
    if mask is not None:
        m = np.asarray(mask, dtype=bool)
        d = d[m]
    return float(d.max()) if d.size else 0.0


def norm_heatmap(outputs, lengths=None, max_steps: int = 64, max_rows: int = 32, digits: int = 4) -> dict[str, Any]:
    """Output norms as a small nested list for a heatmap: ``z[t][row]`` = ||outputs[row, t]||.

    Rows past ``max_rows`` are dropped; when there are more than ``max_steps`` steps, consecutive steps are averaged
    in equal blocks (``steps`` then gives each block's first step). ``lengths`` (optional) is passed through so the
    page can draw each row's end.
    """
    out = np.asarray(outputs, dtype=np.float64)
    b, t = out.shape[:2]
    norms = np.linalg.norm(out.reshape(b, t, -1), axis=2)[: max(1, max_rows)]  # [rows, t]
    rows = norms.shape[0]
    if t > max_steps:
        edges = np.linspace(0, t, max_steps + 1).round().astype(int)
        starts = [int(e) for e in edges[:-1]]
        norms = np.stack([norms[:, s:e].mean(axis=1) for s, e in zip(edges[:-1], edges[1:])], axis=1)
    else:
        starts = list(range(t))
    z = [[round(float(v), digits) for v in norms[:, j]] for j in range(norms.shape[1])]
    res: dict[str, Any] = {"z": z, "steps": starts, "rows": list(range(rows)), "axes": ["time step", "batch row"]}
    if lengths is not None:
        res["lengths"] = [int(x) for x in list(lengths)[:rows]]
    return res


def pre_padded(mask) -> np.ndarray:
    """The same rows padded at the front instead (``keras.utils.pad_sequences``' default ``padding="pre"``)."""
    m = np.asarray(mask).astype(bool)
    t = m.shape[1]
    counts = m.sum(axis=1)
    return np.arange(t)[None, :] >= (t - counts)[:, None]
