"""Counted floating-point operations of one forward pass (no TensorFlow).

Counting rules, per layer per time step, with B = batch, U = units, I = that layer's input width
(``input_dim`` for layer 0, ``units`` above):

- a matmul [M, K] x [K, N] counts 2*M*N*K (one multiply and one add per term);
- every elementwise op (bias add, add, multiply, 1 - u, sigmoid, tanh) counts 1 per element;
  a transcendental counts 1 like any other op.

    rnn : 2*B*(I+U)*U   + B*U (bias) + B*U (tanh)                                     = 2B(I+U)U + 2BU
    lstm: 2*B*(I+U)*4U  + 4BU (bias) + BU (f + forget_bias) + 3BU (3 sigmoid) + BU (tanh j)
          + 3BU (c*f + i*j) + BU (tanh c) + BU (h = o*tanh c)                          = 8B(I+U)U + 14BU
    gru : 2*B*(I+U)*2U  + 2BU (bias) + 2BU (sigmoid) + BU (r*h)
          + 2*B*(I+U)*U + BU (bias) + BU (tanh) + 4BU (u*h + (1-u)*c)                  = 6B(I+U)U + 11BU

The total is the sum over layers times ``seq_len``: padded steps are counted (the count is of the padded batch, the
work static_rnn and the Keras layers do), and masking selects, concatenations and copies are not counted.
"""

from __future__ import annotations

_MATMUL_BLOCKS = {"rnn": 1, "lstm": 4, "gru": 3}  # units-wide column blocks multiplied per step
_ELEMENTWISE = {"rnn": 2, "lstm": 14, "gru": 11}  # elementwise ops per (row, unit) per step


def step_flops(cell: str, units: int, in_dim: int, batch: int) -> int:
    """One layer, one time step."""
    if cell not in _MATMUL_BLOCKS:
        raise ValueError(f"cell={cell!r}: expected rnn, lstm or gru")
    return 2 * batch * (in_dim + units) * _MATMUL_BLOCKS[cell] * units + _ELEMENTWISE[cell] * batch * units


def forward_flops(cell: str, layers: int, units: int, input_dim: int, batch: int, seq_len: int) -> int:
    """Forward pass of ``layers`` stacked cells over ``seq_len`` steps (see the module docstring for the formula)."""
    per_step = sum(step_flops(cell, units, input_dim if li == 0 else units, batch) for li in range(layers))
    return int(per_step * seq_len)
