"""Experiment ``pitfalls``: the multi-layer and shape mistakes of seed 000 (section 6), run live.

Every pitfall is a pair of small programs held as source strings in :data:`PITFALLS`: the wrong code and the right
code. The worker runs both with ``compile(source, "<pitfalls:VARIANT:wrong>", "exec")`` / ``exec`` so that an error
TensorFlow raises is captured verbatim, with the line of the program that raised it, and then checks what the right
code computes (against a float64 NumPy reference where it computes an RNN, or by counting its variables).

Importing this module imports no TensorFlow: the app shows ``PITFALLS`` (titles, code, explanations) without running
anything. ``run_variant`` imports TensorFlow lazily.

What the programs are given (their namespace)
---------------------------------------------
TF1 programs run inside a fresh ``tf.Graph`` (graph seed = ``seed``) and get ``tf``, ``np``, ``Cell`` (the TF1 cell
class for the ``cell`` param: ``BasicRNNCell``, ``BasicLSTMCell`` or ``GRUCell``), ``units``, ``batch``, ``seq_len``,
``input_dim``, ``data`` (float32 ``[batch, seq_len, input_dim]``, uniform in [-1, 1] from ``seed``), ``data_tm`` (the
same, time-major), ``train_batch`` (``2 * batch``), ``true_lengths`` (int32 ``[batch]``, from ``seq_len`` down),
``frac_lengths`` (``true_lengths - 0.25`` as float32), ``c_init`` / ``h_init`` (float32 ``[batch, units]``).
Keras programs get ``keras``, ``np``, ``Layer`` (``SimpleRNN`` / ``LSTM`` / ``GRU``), ``Cell`` (``SimpleRNNCell`` /
``LSTMCell`` / ``GRUCell``), the sizes and ``data``. The harness, not the shown code, then compares results; where it
compares a wrong and a right program it first gives both the same weights (the right program's) and re-runs the
wrong one's ``outputs``.

Cell sharing and ``input_dim``
------------------------------
A cell object shared between layers can only work when every layer sees inputs of the same width, i.e. when
``input_dim == units``. The sharing variants therefore always try two sub-cases (``details["cases"]``): ``input_dim ==
units`` (``input_dim`` replaced by ``units``) and ``input_dim != units`` (the param's ``input_dim``, or ``units +
input_dim`` when the two params are equal). Top-level ``details["builds"]`` / ``error*`` describe the sub-case with the
params as given; the metrics that need a built stack (distinct variables, output differences) come from the
``input_dim == units`` sub-case.

Error text is TensorFlow's own, with ANSI colour codes removed and cut at 6,000 characters.
"""

from __future__ import annotations

import linecache
import os
import re
import traceback

from rnnlab.core.errors import RnnlabError, VariantUnsupported
from rnnlab.core.params import param_set
from rnnlab.experiments.base import Experiment

# ----------------------------------------------------------------------------------------------------------------------
# The pitfalls: code shown by the app and run by the worker (keep them short and runnable as they are)

_TF1_GIVEN = ("tf, np; Cell = tf.compat.v1.nn.rnn_cell.BasicRNNCell | BasicLSTMCell | GRUCell (the `cell` param); "
              "units, batch, seq_len, input_dim; data: float32 [batch, seq_len, input_dim]; data_tm: the same, "
              "time-major [seq_len, batch, input_dim]; train_batch = 2 * batch; true_lengths: int32 [batch]; "
              "frac_lengths = true_lengths - 0.25 (float32); c_init, h_init: float32 [batch, units]. "
              "Runs in a fresh tf.Graph.")
_KERAS_GIVEN = ("keras (Keras 3), np; Layer = keras.layers.SimpleRNN | LSTM | GRU and Cell = SimpleRNNCell | LSTMCell | "
                "GRUCell (the `cell` param); units, batch, seq_len, input_dim; data: float32 [batch, seq_len, input_dim].")

_PRE = """x = tf.compat.v1.placeholder(tf.float32, [batch, seq_len, input_dim])
"""
_SESS = """sess = tf.compat.v1.Session()
sess.run(tf.compat.v1.global_variables_initializer())
"""

PITFALLS: dict[str, dict] = {
    "tf1_shared_dynamic": {
        "title": "MultiRNNCell([cell] * 3) under dynamic_rnn: one cell object for three layers",
        "api": "tf1",
        "wrong_code": _PRE + """cell = tf.compat.v1.nn.rnn_cell.MultiRNNCell([Cell(units)] * 3)   # one object, three times
outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, x, dtype=tf.float32)
""" + _SESS + """out = sess.run(outputs, {x: data})
""",
        "right_code": _PRE + """cell = tf.compat.v1.nn.rnn_cell.MultiRNNCell([Cell(units) for _ in range(3)])   # three objects
outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, x, dtype=tf.float32)
""" + _SESS + """out = sess.run(outputs, {x: data})
""",
        "explanation": "`[Cell(units)] * 3` is a list holding the same object three times. In TF 2.x the legacy cells "
                       "are Keras layers: the object builds its weights once, for the first layer's input width, and "
                       "every later layer calls the same weights. With input_dim != units the second layer's input "
                       "[batch, units + units] no longer fits the kernel built for [input_dim + units] and graph "
                       "construction fails with a MatMul shape error (not the old 'Trying to share variable' error of "
                       "TF 1.x); with input_dim == units it builds silently: a 3-layer stack with one layer's "
                       "parameters, i.e. tied weights, computing exactly what a correct stack computes when every "
                       "layer is given the same weights.",
        "given": _TF1_GIVEN,
    },
    "tf1_shared_static": {
        "title": "MultiRNNCell([cell] * 3) under static_rnn: one cell object for three layers",
        "api": "tf1",
        "wrong_code": _PRE + """cell = tf.compat.v1.nn.rnn_cell.MultiRNNCell([Cell(units)] * 3)   # one object, three times
outputs, state = tf.compat.v1.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32)
""" + _SESS + """out = np.stack(sess.run(outputs, {x: data}), axis=1)
""",
        "right_code": _PRE + """cell = tf.compat.v1.nn.rnn_cell.MultiRNNCell([Cell(units) for _ in range(3)])   # three objects
outputs, state = tf.compat.v1.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32)
""" + _SESS + """out = np.stack(sess.run(outputs, {x: data}), axis=1)
""",
        "explanation": "The same mistake under static_rnn: the unrolled graph has seq_len x 3 cell calls, all using "
                       "one set of weights. Same outcome as under dynamic_rnn: a MatMul shape error when "
                       "input_dim != units, silent weight tying when they are equal.",
        "given": _TF1_GIVEN,
    },
    "keras_shared_sequential": {
        "title": "Keras 3: one RNN layer object used three times in a Sequential",
        "api": "keras",
        "wrong_code": """layer = Layer(units, return_sequences=True)   # one layer object...
model = keras.Sequential([keras.Input((seq_len, input_dim)), layer, layer, layer])   # ...used three times
out = model(data)
""",
        "right_code": """model = keras.Sequential([keras.Input((seq_len, input_dim))]
                         + [Layer(units, return_sequences=True) for _ in range(3)])
out = model(data)
""",
        "explanation": "A Keras layer object owns its weights; putting it in a model three times makes three "
                       "positions share one set of weights. model.layers lists it three times, count_params() counts "
                       "it once. With input_dim != units the Sequential is still constructed (its weights built for "
                       "input_dim) and the first call fails inside the second position. With input_dim == units it "
                       "works, and training any model that holds the object moves all three positions at once.",
        "given": _KERAS_GIVEN,
    },
    "keras_shared_stacked_cells": {
        "title": "Keras 3: StackedRNNCells([cell] * 3), one cell object for three layers",
        "api": "keras",
        "wrong_code": """cell = Cell(units)
rnn = keras.layers.RNN(keras.layers.StackedRNNCells([cell] * 3), return_sequences=True)
model = keras.Sequential([keras.Input((seq_len, input_dim)), rnn])
out = model(data)
""",
        "right_code": """rnn = keras.layers.RNN(keras.layers.StackedRNNCells([Cell(units) for _ in range(3)]),
                       return_sequences=True)
model = keras.Sequential([keras.Input((seq_len, input_dim)), rnn])
out = model(data)
""",
        "explanation": "The Keras 3 counterpart of MultiRNNCell([cell] * 3): the stack holds one cell object three "
                       "times, built once for the first layer's input width. input_dim != units fails at the first "
                       "call; input_dim == units runs with one layer's weights.",
        "given": _KERAS_GIVEN,
    },
    "shape_time_major": {
        "title": "Time-major data given to a batch-major dynamic_rnn",
        "api": "tf1",
        "wrong_code": """x = tf.compat.v1.placeholder(tf.float32, [seq_len, batch, input_dim])   # time-major data
outputs, state = tf.compat.v1.nn.dynamic_rnn(Cell(units), x, dtype=tf.float32)   # time_major defaults to False
""" + _SESS + """out = sess.run(outputs, {x: data_tm})
""",
        "right_code": """x = tf.compat.v1.placeholder(tf.float32, [seq_len, batch, input_dim])   # time-major data
outputs, state = tf.compat.v1.nn.dynamic_rnn(Cell(units), x, time_major=True, dtype=tf.float32)
""" + _SESS + """out = sess.run(outputs, {x: data_tm})
""",
        "explanation": "dynamic_rnn cannot tell [time, batch, features] from [batch, time, features]: it reads the "
                       "first axis as the batch. Nothing fails; the network runs seq_len 'sequences' of batch steps "
                       "each, so the recurrence mixes different examples. The outputs even have the shape the right "
                       "call returns ([seq_len, batch, units]); only the final state's shape ([seq_len, units] "
                       "instead of [batch, units]) gives it away, and not when batch == seq_len.",
        "given": _TF1_GIVEN,
    },
    "shape_batch_major": {
        "title": "Batch-major data given to dynamic_rnn(time_major=True)",
        "api": "tf1",
        "wrong_code": _PRE + """outputs, state = tf.compat.v1.nn.dynamic_rnn(Cell(units), x, time_major=True, dtype=tf.float32)
""" + _SESS + """out = sess.run(outputs, {x: data})
""",
        "right_code": _PRE + """outputs, state = tf.compat.v1.nn.dynamic_rnn(Cell(units), x, dtype=tf.float32)   # time_major=False
""" + _SESS + """out = sess.run(outputs, {x: data})
""",
        "explanation": "The reverse mistake (e.g. a flag copied from time-major code): the batch axis is stepped "
                       "through as time. It runs; outputs have the right shape and wrong values.",
        "given": _TF1_GIVEN,
    },
    "shape_2d_input": {
        "title": "A 2-D [batch, features] input where [batch, time, features] is needed",
        "api": "tf1",
        "wrong_code": """x = tf.compat.v1.placeholder(tf.float32, [batch, input_dim])   # one step, no time axis
outputs, state = tf.compat.v1.nn.dynamic_rnn(Cell(units), x, dtype=tf.float32)
""" + _SESS + """out = sess.run(outputs, {x: data[:, 0]})
""",
        "right_code": """x = tf.compat.v1.placeholder(tf.float32, [batch, input_dim])
outputs, state = tf.compat.v1.nn.dynamic_rnn(Cell(units), x[:, tf.newaxis, :], dtype=tf.float32)   # [batch, 1, input_dim]
""" + _SESS + """out = sess.run(outputs, {x: data[:, 0]})
""",
        "variations": {
            "static_rnn given the 2-D tensor itself": """x = tf.compat.v1.placeholder(tf.float32, [batch, input_dim])
outputs, state = tf.compat.v1.nn.static_rnn(Cell(units), x, dtype=tf.float32)
""",
            "static_rnn given tf.unstack of the 2-D tensor": """x = tf.compat.v1.placeholder(tf.float32, [batch, input_dim])
outputs, state = tf.compat.v1.nn.static_rnn(Cell(units), tf.unstack(x, axis=1), dtype=tf.float32)
""",
        },
        "explanation": "dynamic_rnn needs rank 3. The error names the shape after its internal batch/time transpose. "
                       "static_rnn needs a Python list of [batch, features] tensors; unstacking a 2-D tensor gives "
                       "a list of 1-D tensors and the cell refuses them. The fix adds a time axis of length 1.",
        "given": _TF1_GIVEN,
    },
    "shape_zero_state_batch": {
        "title": "zero_state built for another batch size",
        "api": "tf1",
        "wrong_code": """x = tf.compat.v1.placeholder(tf.float32, [None, seq_len, input_dim])
cell = Cell(units)
init = cell.zero_state(train_batch, tf.float32)   # the batch size of training, not of this feed
outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, x, initial_state=init)
""" + _SESS + """out = sess.run(outputs, {x: data})   # an evaluation batch of another size
""",
        "right_code": """x = tf.compat.v1.placeholder(tf.float32, [None, seq_len, input_dim])
cell = Cell(units)
init = cell.zero_state(tf.shape(x)[0], tf.float32)   # follows the batch actually fed
outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, x, initial_state=init)
""" + _SESS + """out = sess.run(outputs, {x: data})
""",
        "variations": {
            "static batch size in the placeholder": """x = tf.compat.v1.placeholder(tf.float32, [batch, seq_len, input_dim])
cell = Cell(units)
init = cell.zero_state(train_batch, tf.float32)
outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, x, initial_state=init)
""",
        },
        "explanation": "zero_state(n) makes a state of exactly n rows; TensorFlow does not broadcast it. With a "
                       "static batch size the mismatch is found while building (a ConcatV2 shape error inside the "
                       "cell); with a [None, ...] placeholder it surfaces only at sess.run.",
        "given": _TF1_GIVEN,
    },
    "shape_state_is_tuple": {
        "title": "LSTM state_is_tuple confusion: a concatenated [c, h] tensor as initial_state",
        "api": "tf1",
        "wrong_code": _PRE + """cell = tf.compat.v1.nn.rnn_cell.BasicLSTMCell(units)   # state_is_tuple=True by default
init = tf.constant(np.concatenate([c_init, h_init], axis=1))   # the state_is_tuple=False layout
outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, x, initial_state=init)
""" + _SESS + """out = sess.run(outputs, {x: data})
""",
        "right_code": _PRE + """cell = tf.compat.v1.nn.rnn_cell.BasicLSTMCell(units)
init = tf.compat.v1.nn.rnn_cell.LSTMStateTuple(c=tf.constant(c_init), h=tf.constant(h_init))
outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, x, initial_state=init)
""" + _SESS + """out = sess.run(outputs, {x: data})
""",
        "variations": {
            "state_is_tuple=False cell given an LSTMStateTuple": _PRE + """cell = tf.compat.v1.nn.rnn_cell.BasicLSTMCell(units, state_is_tuple=False)
init = tf.compat.v1.nn.rnn_cell.LSTMStateTuple(c=tf.constant(c_init), h=tf.constant(h_init))
outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, x, initial_state=init)
""",
        },
        "explanation": "With state_is_tuple=True (the default, and what seed 000 recommends) an LSTM state is "
                       "LSTMStateTuple(c, h), not one [batch, 2 * units] tensor. Given a tensor, the cell tries to "
                       "unpack it and TensorFlow reports the attempt as Python control flow over a symbolic tensor, "
                       "a message that does not mention the state at all. The reverse (a state_is_tuple=False cell "
                       "given an LSTMStateTuple) turns the tuple into a [2, batch, units] tensor and splits it along "
                       "the batch axis: a ValueError that depends on the batch size (odd: 'Dimension size must be "
                       "evenly divisible by 2'; even: 'Shape must be rank 2 but is rank 3'). Always uses the LSTM "
                       "cell, whatever `cell` is.",
        "given": _TF1_GIVEN,
    },
    "shape_lstm_state_order": {
        "title": "LSTM final state: state[0] is c, not the last output h",
        "api": "tf1",
        "wrong_code": _PRE + """outputs, state = tf.compat.v1.nn.dynamic_rnn(tf.compat.v1.nn.rnn_cell.BasicLSTMCell(units), x,
                                             dtype=tf.float32)
last = state[0]   # meant: the last hidden output
""" + _SESS + """out = sess.run(last, {x: data})
""",
        "right_code": _PRE + """outputs, state = tf.compat.v1.nn.dynamic_rnn(tf.compat.v1.nn.rnn_cell.BasicLSTMCell(units), x,
                                             dtype=tf.float32)
last = state.h   # == outputs[:, -1] when every sequence is full length
""" + _SESS + """out = sess.run(last, {x: data})
""",
        "variations": {
            "a dense layer applied to the whole state tuple": _PRE + """outputs, state = tf.compat.v1.nn.dynamic_rnn(tf.compat.v1.nn.rnn_cell.BasicLSTMCell(units), x,
                                             dtype=tf.float32)
logits = tf.matmul(state, tf.ones([units, 3]))   # meant [batch, 3]
""" + _SESS + """out = sess.run(logits, {x: data})
""",
        },
        "explanation": "LSTMStateTuple is (c, h): index 0 is the cell memory, not the output. Both are "
                       "[batch, units], so nothing fails. Passing the whole tuple to matmul turns it into a "
                       "[2, batch, units] tensor and silently batches the product. Always uses the LSTM cell.",
        "given": _TF1_GIVEN,
    },
    "shape_initial_state_stack": {
        "title": "initial_state of one layer given to a 3-layer MultiRNNCell",
        "api": "tf1",
        "wrong_code": _PRE + """cell = tf.compat.v1.nn.rnn_cell.MultiRNNCell([Cell(units) for _ in range(3)])
init = Cell(units).zero_state(batch, tf.float32)   # one layer's state
outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, x, initial_state=init)
""" + _SESS + """out = sess.run(outputs, {x: data})
""",
        "right_code": _PRE + """cell = tf.compat.v1.nn.rnn_cell.MultiRNNCell([Cell(units) for _ in range(3)])
init = cell.zero_state(batch, tf.float32)   # a tuple: one state per layer
outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, x, initial_state=init)
""" + _SESS + """out = sess.run(outputs, {x: data})
""",
        "variations": {
            "a tuple of 2 layer states for 3 layers": _PRE + """cell = tf.compat.v1.nn.rnn_cell.MultiRNNCell([Cell(units) for _ in range(3)])
init = tuple(Cell(units).zero_state(batch, tf.float32) for _ in range(2))
outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, x, initial_state=init)
""",
            "3 layer states of the wrong width": _PRE + """cell = tf.compat.v1.nn.rnn_cell.MultiRNNCell([Cell(units) for _ in range(3)])
init = tuple(Cell(units + 1).zero_state(batch, tf.float32) for _ in range(3))
outputs, state = tf.compat.v1.nn.dynamic_rnn(cell, x, initial_state=init)
""",
        },
        "explanation": "A MultiRNNCell state is a tuple with one entry per layer (each itself an LSTMStateTuple for "
                       "LSTM). A single layer's state is refused with 'Expected state to be a tuple of length 3' for "
                       "RNN/GRU; for LSTM the (c, h) pair is taken as two layer states and fails with the "
                       "misleading Python-control-flow TypeError. Two states for three layers fail with a bare "
                       "IndexError.",
        "given": _TF1_GIVEN,
    },
    "shape_seq_len_wrong": {
        "title": "sequence_length with the wrong number of entries",
        "api": "tf1",
        "wrong_code": """x = tf.compat.v1.placeholder(tf.float32, [None, seq_len, input_dim])
lengths = tf.compat.v1.placeholder(tf.int32, [None])
outputs, state = tf.compat.v1.nn.dynamic_rnn(Cell(units), x, sequence_length=lengths, dtype=tf.float32)
""" + _SESS + """out = sess.run(outputs, {x: data, lengths: true_lengths[:-1]})   # one row short
""",
        "right_code": """x = tf.compat.v1.placeholder(tf.float32, [None, seq_len, input_dim])
lengths = tf.compat.v1.placeholder(tf.int32, [None])
outputs, state = tf.compat.v1.nn.dynamic_rnn(Cell(units), x, sequence_length=lengths, dtype=tf.float32)
""" + _SESS + """out = sess.run(outputs, {x: data, lengths: true_lengths})   # one length per batch row
""",
        "variations": {
            "static shapes: a constant of the wrong length": _PRE + """outputs, state = tf.compat.v1.nn.dynamic_rnn(Cell(units), x, sequence_length=true_lengths[:-1],
                                             dtype=tf.float32)
""",
            "a [1, batch] matrix instead of a vector": _PRE + """outputs, state = tf.compat.v1.nn.dynamic_rnn(Cell(units), x, sequence_length=true_lengths[None, :],
                                             dtype=tf.float32)
""",
        },
        "explanation": "sequence_length needs one entry per batch row. With unknown shapes dynamic_rnn checks it "
                       "with a runtime Assert (an InvalidArgumentError at sess.run); with static shapes the mismatch "
                       "fails graph construction in a Select op; a matrix is refused by name.",
        "given": _TF1_GIVEN,
    },
    "shape_seq_len_dtype": {
        "title": "sequence_length as floats: silently truncated",
        "api": "tf1",
        "wrong_code": _PRE + """lengths = tf.constant(frac_lengths)   # float32, e.g. 5.75 from a rate or a mean
outputs, state = tf.compat.v1.nn.dynamic_rnn(Cell(units), x, sequence_length=lengths, dtype=tf.float32)
""" + _SESS + """out = sess.run(outputs, {x: data})
""",
        "right_code": _PRE + """lengths = tf.cast(tf.round(tf.constant(frac_lengths)), tf.int32)   # decide the rounding yourself
outputs, state = tf.compat.v1.nn.dynamic_rnn(Cell(units), x, sequence_length=lengths, dtype=tf.float32)
""" + _SESS + """out = sess.run(outputs, {x: data})
""",
        "explanation": "dynamic_rnn casts sequence_length to int32 without a word, which truncates: 5.75 becomes 5 "
                       "and each row silently loses its last step (a length below 1 becomes 0: no step at all). "
                       "int64 lengths are fine.",
        "given": _TF1_GIVEN,
    },
}

VARIANTS = tuple(PITFALLS)
_SHARED_TF1 = ("tf1_shared_dynamic", "tf1_shared_static")
_SHARED_KERAS = ("keras_shared_sequential", "keras_shared_stacked_cells")
_LSTM_ONLY = ("shape_state_is_tuple", "shape_lstm_state_order")

EXPERIMENT = Experiment(
    name="pitfalls",
    version=1,
    title="Multi-layer and shape pitfalls, run live",
    summary="Seed 000's warnings (MultiRNNCell([cell] * 3), shape mistakes) run in the installed TensorFlow: what "
            "each mistake really does (the exact error and the line that raised it, or the silently wrong result) "
            "beside the fix and a check that the fix works.",
    params=param_set(["cell", "units", "input_dim", "batch", "seq_len", "seed", "timeout_s"],
                     defaults={"units": 16, "input_dim": 8, "batch": 4, "seq_len": 6, "timeout_s": 300}),
    variants=VARIANTS,
    worker="rnnlab.experiments.pitfalls:run_variant",
    reference=None,
    presets={
        # each variant computes in < 1 s here, but every worker spends ~8 s importing TensorFlow: quick runs four
        # representative pitfalls (~35 s) so that all quick presets together stay within DESIGN's 2 minutes
        "quick": {"cell": "rnn", "units": 16, "input_dim": 8, "batch": 4, "seq_len": 6,
                  "variants": ["tf1_shared_dynamic", "keras_shared_sequential", "shape_time_major",
                               "shape_state_is_tuple"]},
        "seed": {"cell": "rnn", "units": 128, "input_dim": 64, "batch": 32, "seq_len": 100},
        "full": {"cell": ["rnn", "lstm", "gru"], "units": 128, "input_dim": 64, "batch": 32, "seq_len": 100},
    },
    metrics_doc={
        "wrong_builds": "1 when the wrong code ran to the end without an error (with the params as given), else 0",
        "check_passed": "1 when the right code passed its check, else 0",
        "wrong_builds_same_dim": "sharing variants: 1 when the shared stack builds and runs with input_dim == units",
        "wrong_builds_diff_dim": "sharing variants: 1 when the shared stack builds and runs with input_dim != units",
        "distinct_vars_wrong": "sharing variants (input_dim == units): distinct trainable variables of the shared stack",
        "distinct_vars_right": "sharing variants (input_dim == units): distinct trainable variables of the correct stack",
        "distinct_kernels_wrong": "sharing variants (input_dim == units): distinct kernel variables, shared stack",
        "distinct_kernels_right": "sharing variants (input_dim == units): distinct kernel variables, correct stack",
        "params_wrong": "sharing variants (input_dim == units): parameters of the shared stack (count_params for Keras)",
        "params_right": "sharing variants (input_dim == units): parameters of the correct stack",
        "params_right_diff_dim": "sharing variants: parameters of the correct stack with input_dim != units",
        "max_abs_diff_vs_correct": "max |wrong - right| of the outputs on the same inputs (same weights where the "
                                   "two programs have the same variables; for sharing: the correct stack with its "
                                   "own weights)",
        "max_abs_diff_vs_tied": "sharing variants: max |shared - correct stack given the shared weights in every "
                                "layer| (about 0: the shared stack is a weight-tied stack)",
        "others_changed_wrong": "Keras sharing: max |change| of the weights at positions 2 and 3 after one SGD step "
                                "on a model holding only position 1, shared objects",
        "others_changed_right": "the same with fresh objects (0: untouched)",
        "right_ref_abs_diff": "max |right code's result - float64 NumPy reference|",
        "rows_short": "seq_len dtype: batch rows whose effective length is below the intended (rounded) one",
    },
    page="pitfalls",
    work_s=30.0,
)


# ----------------------------------------------------------------------------------------------------------------------
# Running a program from source and capturing what it raised

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_MAX_ERROR = 6000


def _clean_error(exc: BaseException) -> str:
    text = _ANSI.sub("", str(exc))
    if len(text) > _MAX_ERROR:
        text = text[:_MAX_ERROR] + f"... [{len(text) - _MAX_ERROR} more characters]"
    return text


def run_source(src: str, ns: dict, filename: str) -> dict | None:
    """Exec ``src`` in ``ns`` under ``filename``; None if it ran, else the error, verbatim, and the line that raised.

    The line is the last traceback frame in ``filename`` (the user's line, not TensorFlow's internals).
    """
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)  # tracebacks can show the source
    code = compile(src, filename, "exec")
    try:
        exec(code, ns)
    except Exception as exc:  # noqa: BLE001 - capturing what TensorFlow raises is the point
        lineno = end = None
        for frame in traceback.extract_tb(exc.__traceback__):
            if frame.filename == filename:
                lineno = frame.lineno
                end = getattr(frame, "end_lineno", None) or lineno
        lines = src.splitlines()
        # the whole statement when it spans lines (Python 3.11 tracebacks know where it ends)
        line = "\n".join(lines[i].rstrip() for i in range(lineno - 1, max(end, lineno))).strip() if lineno else None
        stage = None
        if line is not None:
            stage = "run" if (".run(" in line or "model(" in line) else "build"
        text = _clean_error(exc)
        return {"error_type": type(exc).__name__, "error": text, "error_summary": error_summary(text),
                "error_line": line, "error_lineno": lineno, "stage": stage}
    return None


def _no_error() -> dict:
    return {"error_type": None, "error": None, "error_summary": None, "error_line": None, "error_lineno": None,
            "stage": None}


_HEADER = re.compile(r"^(Graph execution error:|Exception encountered when calling|Detected at node|File \"|Node:|"
                     r"\[\[|Original stack trace|Arguments received by|Encountered error:|\"\"\"|•)")


def error_summary(text: str | None) -> str:
    """The informative line of a TensorFlow error (one line, at most 240 characters).

    Skips generic headers ("Graph execution error:", "Exception encountered when calling ...") and op-context lines;
    prefers an "assertion failed" line; drops a leading ``{{function_node ...}}`` tag.
    """
    if not text:
        return ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    pick = next((ln for ln in lines if "assertion failed" in ln), None)
    if pick is None:
        pick = next((ln for ln in lines if not _HEADER.match(ln)), lines[0] if lines else "")
    pick = re.sub(r"^\{\{function_node [^}]*\}\}\s*", "", pick)
    pick = re.sub(r"\s*\[Op:\w+\].*$", "", pick)
    return pick[:237] + "..." if len(pick) > 240 else pick


_first_line = error_summary


# ----------------------------------------------------------------------------------------------------------------------
# NumPy float64 references of the TF1 cells (weights in the order the cell lists them)

def _sig(z):
    import numpy as np

    return 1.0 / (1.0 + np.exp(-z))


def _np_step(kind: str, w: list, x, state):
    import numpy as np

    if kind == "rnn":
        k, b = w
        h = np.tanh(np.concatenate([x, state], 1) @ k + b)
        return h, h
    if kind == "lstm":
        k, b = w
        c, h = state
        i, j, f, o = np.split(np.concatenate([x, h], 1) @ k + b, 4, axis=1)
        c2 = c * _sig(f + 1.0) + _sig(i) * np.tanh(j)  # BasicLSTMCell: forget_bias=1.0
        h2 = np.tanh(c2) * _sig(o)
        return h2, (c2, h2)
    gk, gb, ck, cb = w  # GRUCell: gates (r, u), then the candidate from r * h
    r, u = np.split(_sig(np.concatenate([x, state], 1) @ gk + gb), 2, axis=1)
    cand = np.tanh(np.concatenate([x, r * state], 1) @ ck + cb)
    h2 = u * state + (1 - u) * cand
    return h2, h2


def _np_zero(kind: str, batch: int, units: int):
    import numpy as np

    z = np.zeros((batch, units))
    return (z, z.copy()) if kind == "lstm" else z


def np_stack(kind: str, layer_weights: list, data, states=None, lengths=None):
    """Outputs [batch, time, units] and final states of a stack of TF1 cells, in float64.

    ``lengths`` mimics dynamic_rnn: past a row's length, outputs are 0 and states are carried through.
    """
    import numpy as np

    x = np.asarray(data, np.float64)
    batch, steps, _ = x.shape
    units = np.asarray(layer_weights[0][1]).shape[0] // {"rnn": 1, "lstm": 4, "gru": 2}[kind]
    ws = [[np.asarray(a, np.float64) for a in w] for w in layer_weights]
    st = list(states) if states is not None else [_np_zero(kind, batch, units) for _ in ws]
    outs = np.zeros((batch, steps, units))
    for t in range(steps):
        inp = x[:, t]
        alive = np.ones(batch, bool) if lengths is None else (np.asarray(lengths) > t)
        for i, w in enumerate(ws):
            out, new = _np_step(kind, w, inp, st[i])
            if kind == "lstm":
                st[i] = tuple(np.where(alive[:, None], n, o) for n, o in zip(new, st[i]))
            else:
                st[i] = np.where(alive[:, None], new, st[i])
            inp = out
        outs[:, t] = np.where(alive[:, None], inp, 0.0)
    return outs, st


# ----------------------------------------------------------------------------------------------------------------------
# The worker function

def run_variant(params: dict, variant: str, ctx) -> dict:
    if variant not in PITFALLS:
        raise RnnlabError(f"unknown pitfalls variant {variant!r}; known: {', '.join(VARIANTS)}")
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # TF1 cells need tf-keras; must precede the first TF import
    import numpy as np
    import tensorflow as tf

    api = PITFALLS[variant]["api"]
    if api == "tf1":
        try:
            tf.compat.v1.nn.rnn_cell.BasicRNNCell  # noqa: B018
        except (AttributeError, ImportError) as e:
            raise VariantUnsupported(f"TF1 cells unavailable ({e}); TF_USE_LEGACY_KERAS=1 must be set before "
                                     "TensorFlow is imported") from None
    p = dict(params)
    ctx.phase("build")
    if variant in _SHARED_TF1:
        out = _run_tf1_shared(p, variant, ctx, tf, np)
    elif variant in _SHARED_KERAS:
        out = _run_keras_shared(p, variant, ctx, tf, np)
    else:
        out = _SHAPE_RUNNERS[variant](p, variant, ctx, tf, np)
    details = out["details"]
    details["cell_used"] = "lstm" if variant in _LSTM_ONLY else p["cell"]
    details["tf_version"] = tf.__version__
    if api == "keras":
        import keras

        details["keras_version"] = keras.__version__
    details.setdefault("explanation", PITFALLS[variant]["explanation"])
    return {"metrics": {k: float(v) for k, v in out["metrics"].items() if v is not None}, "details": details}


# --- TF1 helpers ------------------------------------------------------------------------------------------------------

_TF1_CELLS = {"rnn": "BasicRNNCell", "lstm": "BasicLSTMCell", "gru": "GRUCell"}
_KERAS = {"rnn": ("SimpleRNN", "SimpleRNNCell"), "lstm": ("LSTM", "LSTMCell"), "gru": ("GRU", "GRUCell")}


def _inputs(p: dict, np, input_dim: int | None = None) -> dict:
    rng = np.random.default_rng(p["seed"])
    b, t, u = p["batch"], p["seq_len"], p["units"]
    f = p["input_dim"] if input_dim is None else input_dim
    data = rng.uniform(-1, 1, (b, t, f)).astype(np.float32)
    true_lengths = np.array([t - (i * t) // (b + 1) for i in range(b)], np.int32)
    return {"units": u, "batch": b, "seq_len": t, "input_dim": f, "data": data,
            "data_tm": np.ascontiguousarray(data.transpose(1, 0, 2)), "train_batch": 2 * b,
            "true_lengths": true_lengths, "frac_lengths": (true_lengths - 0.25).astype(np.float32),
            "c_init": rng.uniform(-0.5, 0.5, (b, u)).astype(np.float32),
            "h_init": rng.uniform(-0.5, 0.5, (b, u)).astype(np.float32)}


class _TF1Run:
    """One TF1 program run in its own graph: its namespace, graph and captured error."""

    def __init__(self, tf, src: str, ns: dict, filename: str, seed: int):
        self.tf, self.graph, self.ns = tf, tf.Graph(), ns
        with self.graph.as_default():
            tf.compat.v1.set_random_seed(seed)
            self.err = run_source(src, ns, filename)

    @property
    def ok(self) -> bool:
        return self.err is None

    @property
    def sess(self):
        return self.ns.get("sess")

    def trainable(self) -> list:
        return self.graph.get_collection(self.tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES)

    def values(self, vs) -> list:
        return self.sess.run(list(vs))

    def load(self, vs, values) -> None:
        with self.graph.as_default():
            for v, a in zip(vs, values):
                v.load(a, self.sess)

    def run(self, fetch, feed_names: dict):
        """Run ``fetch`` feeding the program's placeholders by their names in its namespace: ``{"x": array}``."""
        return self.sess.run(fetch, {self.ns[k]: v for k, v in feed_names.items()})

    def close(self) -> None:
        s = self.ns.get("sess")
        if s is not None:
            s.close()


def _tf1_ns(tf, np, p: dict, kind: str | None = None, input_dim: int | None = None) -> dict:
    ns = {"tf": tf, "np": np, "Cell": getattr(tf.compat.v1.nn.rnn_cell, _TF1_CELLS[kind or p["cell"]])}
    ns.update(_inputs(p, np, input_dim))
    return ns


def _fname(variant: str, which: str) -> str:
    return f"<pitfalls:{variant}:{which}>"


def _layer_groups(vs) -> list[list]:
    """Trainable variables of a MultiRNNCell grouped per layer (by the ``cell_<i>/`` in their names)."""
    groups: dict[int, list] = {}
    for v in vs:
        m = re.search(r"cell_(\d+)/", v.name)
        groups.setdefault(int(m.group(1)) if m else 0, []).append(v)
    return [groups[k] for k in sorted(groups)]


def _n_params(vs) -> int:
    import math

    return int(sum(math.prod(v.shape.as_list()) for v in vs))


def _is_kernel(name: str) -> bool:
    return name.split("/")[-1].split(":")[0] == "kernel"


def _as_batch_major(out, np):
    return np.stack(out, axis=1) if isinstance(out, (list, tuple)) else np.asarray(out)


def _maxdiff(a, b, np) -> float:
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def _err_fields(err: dict | None) -> dict:
    e = err or _no_error()
    return {"builds": err is None, "error_type": e["error_type"], "error": e["error"],
            "error_summary": e["error_summary"], "error_line": e["error_line"], "error_lineno": e["error_lineno"],
            "stage": e["stage"]}


# --- TF1 cell sharing -------------------------------------------------------------------------------------------------

def _run_tf1_shared(p: dict, variant: str, ctx, tf, np) -> dict:
    kind, units = p["cell"], p["units"]
    ne_dim = p["input_dim"] if p["input_dim"] != units else units + p["input_dim"]
    mode = "dynamic_rnn" if variant.endswith("dynamic") else "static_rnn"
    spec = PITFALLS[variant]
    cases, metrics = [], {}
    for label, idim in (("input_dim == units", units), ("input_dim != units", ne_dim)):
        ctx.phase(f"build {label}")
        case = {"case": label, "cell": kind, "mode": mode, "input_dim": idim, "units": units}
        wrong = _TF1Run(tf, spec["wrong_code"], _tf1_ns(tf, np, p, input_dim=idim), _fname(variant, "wrong"),
                        p["seed"])
        right = _TF1Run(tf, spec["right_code"], _tf1_ns(tf, np, p, input_dim=idim), _fname(variant, "right"),
                        p["seed"])
        try:
            case.update(_err_fields(wrong.err))
            rv = right.trainable()
            case["right_builds"] = right.ok
            case["right_error"] = None if right.ok else right.err["error"]
            case["distinct_vars_right"] = len(rv)
            case["distinct_kernels_right"] = sum(_is_kernel(v.name) for v in rv)
            case["params_right"] = _n_params(rv)
            check_ok = False
            if right.ok:
                groups = _layer_groups(rv)
                layer_w = [right.values(g) for g in groups]
                ref, _ = np_stack(kind, layer_w, right.ns["data"])
                case["right_ref_abs_diff"] = _maxdiff(right.ns["out"], ref, np)
                check_ok = (len(groups) == 3 and case["distinct_kernels_right"] ==
                            3 * (2 if kind == "gru" else 1) and case["right_ref_abs_diff"] < 1e-4)
            case["check_passed"] = bool(check_ok)
            if wrong.ok:
                wv = wrong.trainable()
                stack = wrong.ns["cell"]
                layers = list(getattr(stack, "_cells", []))
                case["distinct_vars_wrong"] = len(wv)
                case["distinct_kernels_wrong"] = sum(_is_kernel(v.name) for v in wv)
                case["params_wrong"] = _n_params(wv)
                case["variable_names_wrong"] = [v.name for v in wv]
                case["layers_same_object"] = bool(layers) and all(c is layers[0] for c in layers)
                case["kernels_same_tensor"] = bool(layers) and all(
                    [id(w) for w in c.trainable_weights] == [id(w) for w in layers[0].trainable_weights]
                    for c in layers)
                out_wrong = _as_batch_major(wrong.ns["out"], np)
                if right.ok:
                    out_own = _as_batch_major(right.ns["out"], np)
                    case["max_abs_diff_vs_correct"] = _maxdiff(out_wrong, out_own, np)
                    shared_w = wrong.values(wv)
                    for g in _layer_groups(rv):  # the correct stack, every layer given the shared weights
                        right.load(g, shared_w)
                    tied = _as_batch_major(right.run(right.ns["outputs"], {"x": right.ns["data"]}), np)
                    case["max_abs_diff_vs_tied"] = _maxdiff(out_wrong, tied, np)
                case["result"] = (
                    f"builds; {case['distinct_vars_wrong']} distinct variables ({case['params_wrong']:,} parameters) "
                    f"against {case['distinct_vars_right']} ({case['params_right']:,}) in the correct stack; all 3 "
                    f"layers use the same kernel: {case['kernels_same_tensor']}; outputs differ from the correct "
                    f"stack by up to {case.get('max_abs_diff_vs_correct', float('nan')):.3g} with its own weights and "
                    f"{case.get('max_abs_diff_vs_tied', float('nan')):.3g} given the shared weights in every layer")
            else:
                case["result"] = f"does not build: {case['error_type']}: {_first_line(case['error'])}"
        finally:
            wrong.close()
            right.close()
        cases.append(case)

    eq, ne = cases
    asked = eq if p["input_dim"] == units else ne
    metrics["wrong_builds_same_dim"] = int(eq["builds"])
    metrics["wrong_builds_diff_dim"] = int(ne["builds"])
    metrics["wrong_builds"] = int(asked["builds"])
    for k in ("distinct_vars_wrong", "distinct_kernels_wrong", "params_wrong", "max_abs_diff_vs_correct",
              "max_abs_diff_vs_tied", "distinct_vars_right", "distinct_kernels_right", "params_right",
              "right_ref_abs_diff"):
        if k in eq:
            metrics[k] = eq[k]
    metrics["params_right_diff_dim"] = ne["params_right"]
    check_passed = all(c["check_passed"] for c in cases)
    metrics["check_passed"] = int(check_passed)
    details = {**{k: asked[k] for k in ("builds", "error_type", "error", "error_summary", "error_line",
                                                "error_lineno", "stage")},
               "result": " | ".join(f"{c['case']}: {c['result']}" for c in cases),
               "check_passed": check_passed,
               "check": "the right code builds in both sub-cases, has 3 separate layers with their own kernels, and "
                        "its outputs match a float64 NumPy stack with the same weights (max abs diff < 1e-4)",
               "cases": cases, "input_dim_diff_case": ne_dim}
    return {"metrics": metrics, "details": details}


# --- Keras 3 sharing --------------------------------------------------------------------------------------------------

def _keras_ns(p: dict, np, input_dim: int) -> dict:
    import keras

    layer_name, cell_name = _KERAS[p["cell"]]
    ns = {"keras": keras, "np": np, "Layer": getattr(keras.layers, layer_name),
          "Cell": getattr(keras.layers, cell_name)}
    ns.update({k: v for k, v in _inputs(p, np, input_dim).items()
               if k in ("units", "batch", "seq_len", "input_dim", "data")})
    return ns


def _positions(variant: str, ns: dict) -> list:
    """The three layer positions of the stack: layer objects (Sequential) or cell objects (StackedRNNCells)."""
    model = ns["model"]
    if variant == "keras_shared_sequential":
        return list(model.layers)
    return list(ns["rnn"].cell.cells)


def _keras_probe_step(variant: str, ns: dict, np) -> dict:
    """One SGD step on a model holding only position 1; how much positions 2 and 3 and the stack's output moved."""
    import keras
    import tensorflow as tf

    pos = _positions(variant, ns)
    data, seq_len, input_dim = ns["data"], ns["seq_len"], ns["input_dim"]
    first = pos[0] if variant == "keras_shared_sequential" else keras.layers.RNN(pos[0], return_sequences=True)
    probe = keras.Sequential([keras.Input((seq_len, input_dim)), first])
    before_w = [[np.array(w.numpy()) for w in q.trainable_weights] for q in pos]
    before_out = np.asarray(ns["model"](data))
    target = np.ones_like(np.asarray(probe(data)))
    opt = keras.optimizers.SGD(learning_rate=0.5)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(probe(data) - target))
    grads = tape.gradient(loss, probe.trainable_variables)
    opt.apply(grads, probe.trainable_variables)
    after_w = [[np.array(w.numpy()) for w in q.trainable_weights] for q in pos]
    changes = [max(float(np.max(np.abs(a - b))) for a, b in zip(aw, bw)) for aw, bw in zip(after_w, before_w)]
    after_out = np.asarray(ns["model"](data))
    return {"changed_position_1": changes[0], "changed_others": max(changes[1:]),
            "stack_output_change": _maxdiff(after_out, before_out, np)}


def _run_keras_shared(p: dict, variant: str, ctx, tf, np) -> dict:
    import keras

    units = p["units"]
    ne_dim = p["input_dim"] if p["input_dim"] != units else units + p["input_dim"]
    spec = PITFALLS[variant]
    g = {"rnn": 1, "lstm": 4, "gru": 3}[p["cell"]]
    cases = []
    for label, idim in (("input_dim == units", units), ("input_dim != units", ne_dim)):
        ctx.phase(f"build {label}")
        case = {"case": label, "cell": p["cell"], "input_dim": idim, "units": units}
        keras.utils.set_random_seed(p["seed"])
        wns = _keras_ns(p, np, idim)
        werr = run_source(spec["wrong_code"], wns, _fname(variant, "wrong"))
        keras.utils.set_random_seed(p["seed"])
        rns = _keras_ns(p, np, idim)
        rerr = run_source(spec["right_code"], rns, _fname(variant, "right"))
        case.update(_err_fields(werr))
        case["right_builds"] = rerr is None
        case["right_error"] = None if rerr is None else rerr["error"]
        if "model" in wns:  # constructed, even if the call failed
            wmodel = wns["model"]
            pos = _positions(variant, wns)
            case["constructed"] = True
            case["params_wrong"] = int(wmodel.count_params())
            case["distinct_vars_wrong"] = len({id(w) for w in wmodel.trainable_weights})
            case["distinct_kernels_wrong"] = len({id(w) for w in wmodel.trainable_weights if w.name == "kernel"})
            case["positions"] = len(pos)
            case["positions_same_object"] = all(q is pos[0] for q in pos)
            case["weights_same_objects"] = all(
                [id(w) for w in q.trainable_weights] == [id(w) for w in pos[0].trainable_weights] for q in pos)
        else:
            case["constructed"] = False
        per_layer = lambda f: g * (f * units + units * units + units) + (3 * units if p["cell"] == "gru" else 0)  # noqa: E731
        expected_right = per_layer(idim) + 2 * per_layer(units)
        check_ok = False
        if rerr is None:
            rmodel = rns["model"]
            rpos = _positions(variant, rns)
            case["params_right"] = int(rmodel.count_params())
            case["distinct_vars_right"] = len({id(w) for w in rmodel.trainable_weights})
            case["distinct_kernels_right"] = len({id(w) for w in rmodel.trainable_weights if w.name == "kernel"})
            case["expected_params_right"] = expected_right
            rprobe = _keras_probe_step(variant, rns, np)
            case["others_changed_right"] = rprobe["changed_others"]
            case["position_1_changed_right"] = rprobe["changed_position_1"]
            check_ok = (case["params_right"] == expected_right and len({id(q) for q in rpos}) == 3
                        and rprobe["changed_position_1"] > 0 and rprobe["changed_others"] == 0.0)
        case["check_passed"] = bool(check_ok)
        if werr is None:
            if rerr is None:
                # same inputs; the correct stack with its own weights (from the same seed)
                case["max_abs_diff_vs_correct"] = _maxdiff(wns["out"], rns["out"], np)
                # the correct stack given the shared weights at every position
                shared = [np.array(w.numpy()) for w in _positions(variant, wns)[0].trainable_weights]
                for q in _positions(variant, rns):
                    for w, a in zip(q.trainable_weights, shared):
                        w.assign(a)
                case["max_abs_diff_vs_tied"] = _maxdiff(wns["out"], np.asarray(rns["model"](rns["data"])), np)
            wprobe = _keras_probe_step(variant, wns, np)
            case["others_changed_wrong"] = wprobe["changed_others"]
            case["stack_output_change_wrong"] = wprobe["stack_output_change"]
            case["result"] = (
                f"builds and runs; count_params {case['params_wrong']:,} against {case.get('params_right', 0):,} "
                f"for fresh objects; {case['positions']} positions, same object: {case['positions_same_object']}; "
                f"one SGD step on a model holding only position 1 changed positions 2-3 by up to "
                f"{wprobe['changed_others']:.3g} (fresh objects: {case.get('others_changed_right', float('nan')):.3g})")
        elif case["constructed"]:
            case["result"] = (f"the model is constructed (count_params {case['params_wrong']:,}, weights built for "
                              f"input_dim={idim}) but the first call fails: {case['error_type']}: "
                              f"{_first_line(case['error'])}")
        else:
            case["result"] = f"construction fails: {case['error_type']}: {_first_line(case['error'])}"
        cases.append(case)

    eq, ne = cases
    asked = eq if p["input_dim"] == units else ne
    metrics = {"wrong_builds_same_dim": int(eq["builds"]), "wrong_builds_diff_dim": int(ne["builds"]),
               "wrong_builds": int(asked["builds"])}
    for k in ("distinct_vars_wrong", "distinct_kernels_wrong", "params_wrong", "distinct_vars_right",
              "distinct_kernels_right", "params_right", "max_abs_diff_vs_correct", "max_abs_diff_vs_tied",
              "others_changed_wrong", "others_changed_right"):
        if k in eq:
            metrics[k] = eq[k]
    if "params_right" in ne:
        metrics["params_right_diff_dim"] = ne["params_right"]
    check_passed = all(c["check_passed"] for c in cases)
    metrics["check_passed"] = int(check_passed)
    details = {**{k: asked[k] for k in ("builds", "error_type", "error", "error_summary", "error_line",
                                                "error_lineno", "stage")},
               "result": " | ".join(f"{c['case']}: {c['result']}" for c in cases),
               "check_passed": check_passed,
               "check": "the right code runs in both sub-cases, count_params equals 3 separate layers' parameters, "
                        "the 3 positions are distinct objects, and one SGD step on a model holding only position 1 "
                        "changes position 1 and leaves positions 2-3 exactly unchanged",
               "cases": cases, "input_dim_diff_case": ne_dim}
    return {"metrics": metrics, "details": details}


# --- shape mistakes ---------------------------------------------------------------------------------------------------

def _shape_pair(p, variant, tf, np, kind=None):
    spec = PITFALLS[variant]
    wrong = _TF1Run(tf, spec["wrong_code"], _tf1_ns(tf, np, p, kind), _fname(variant, "wrong"), p["seed"])
    right = _TF1Run(tf, spec["right_code"], _tf1_ns(tf, np, p, kind), _fname(variant, "right"), p["seed"])
    return wrong, right


def _variations(p, variant, tf, np, kind=None) -> list[dict]:
    out = []
    for label, src in PITFALLS[variant].get("variations", {}).items():
        r = _TF1Run(tf, src, _tf1_ns(tf, np, p, kind), _fname(variant, label), p["seed"])
        try:
            c = {"case": label, "code": src, **_err_fields(r.err)}
            if r.ok and "out" in r.ns:
                c["out_shape"] = list(np.shape(r.ns["out"]))
            c["result"] = ("runs" + (f"; result shape {c['out_shape']}" if "out_shape" in c else "")) if r.ok else \
                f"{c['error_type']}: {_first_line(c['error'])}"
            out.append(c)
        finally:
            r.close()
    return out


def _shape_details(variant: str, wrong, main_result: str, check_ok: bool, check: str, extra_cases: list,
                   main_extra: dict | None = None) -> dict:
    main = {"case": "wrong code as shown", "code": PITFALLS[variant]["wrong_code"], **_err_fields(wrong.err),
            "result": main_result, **(main_extra or {})}
    return {**_err_fields(wrong.err), "result": main_result, "check_passed": bool(check_ok), "check": check,
            "cases": [main] + extra_cases}


def _cell_weights(run) -> list:
    return [run.values(run.trainable())]


def _state_shapes(tf, state) -> list:
    return [list(s.shape) for s in tf.nest.flatten(state)]


def _run_time_major(p, variant, ctx, tf, np) -> dict:
    kind = p["cell"]
    wrong, right = _shape_pair(p, variant, tf, np)
    try:
        feed_key = "data_tm" if variant == "shape_time_major" else "data"
        if not right.ok:
            raise RuntimeError(f"right code failed: {right.err['error']}")
        w = _cell_weights(right)
        ref, _ = np_stack(kind, w, right.ns["data"])  # batch-major reference
        right_out = np.asarray(right.ns["out"])
        right_bm = right_out.transpose(1, 0, 2) if variant == "shape_time_major" else right_out
        ref_diff = _maxdiff(right_bm, ref, np)
        metrics = {"right_ref_abs_diff": ref_diff, "wrong_builds": int(wrong.ok)}
        extra = {}
        if wrong.ok:
            wrong.load(wrong.trainable(), w[0])  # the same weights as the right code
            wout, wstate = wrong.run([wrong.ns["outputs"], wrong.ns["state"]], {"x": wrong.ns[feed_key]})
            rstate = right.sess.run(right.ns["state"], {right.ns["x"]: right.ns[feed_key]})
            diff = _maxdiff(wout, right_out, np)
            metrics["max_abs_diff_vs_correct"] = diff
            extra = {"out_shape_wrong": list(np.shape(wout)), "out_shape_right": list(right_out.shape),
                     "state_shapes_wrong": _state_shapes(tf, wstate), "state_shapes_right": _state_shapes(tf, rstate),
                     "max_abs_diff_vs_correct": diff}
            result = (f"runs without an error: outputs {extra['out_shape_wrong']} (right code: "
                      f"{extra['out_shape_right']}), final state {extra['state_shapes_wrong']} (right code: "
                      f"{extra['state_shapes_right']}); outputs differ from the right code's by up to {diff:.3g} "
                      f"with the same weights")
        else:
            result = f"fails: {wrong.err['error_type']}: {_first_line(wrong.err['error'])}"
        check_ok = ref_diff < 1e-4
        metrics["check_passed"] = int(check_ok)
        check = ("the right code's outputs, read in its own layout, match a float64 NumPy unroll of the batch-major "
                 "data with the same weights (max abs diff < 1e-4)")
        return {"metrics": metrics, "details": _shape_details(variant, wrong, result, check_ok, check, [], extra)}
    finally:
        wrong.close()
        right.close()


def _simple_error_pitfall(p, variant, ctx, tf, np, check_fn, check_text, kind=None) -> dict:
    """Wrong code expected to fail (or not: whatever happens is recorded); the right code checked by ``check_fn``."""
    wrong, right = _shape_pair(p, variant, tf, np, kind)
    try:
        if wrong.ok:
            shape = list(np.shape(wrong.ns.get("out"))) if "out" in wrong.ns else None
            result = "runs without an error" + (f"; result shape {shape}" if shape else "")
        else:
            result = f"fails: {wrong.err['error_type']}: {_first_line(wrong.err['error'])}"
        metrics = {"wrong_builds": int(wrong.ok)}
        if right.ok:
            ok, m = check_fn(right)
        else:
            ok, m = False, {}
            result += f" (right code failed too: {right.err['error_type']}: {_first_line(right.err['error'])})"
        metrics.update(m)
        metrics["check_passed"] = int(ok)
        return {"metrics": metrics, "details": _shape_details(variant, wrong, result, ok, check_text,
                                                              _variations(p, variant, tf, np, kind))}
    finally:
        wrong.close()
        right.close()


def _run_2d(p, variant, ctx, tf, np) -> dict:
    kind = p["cell"]

    def check(right):
        w = _cell_weights(right)
        ref, _ = np_stack(kind, w, right.ns["data"][:, :1])
        out = np.asarray(right.ns["out"])
        d = _maxdiff(out, ref, np)
        return out.shape == (p["batch"], 1, p["units"]) and d < 1e-4, {"right_ref_abs_diff": d}

    return _simple_error_pitfall(p, variant, ctx, tf, np, check,
                                 "the right code returns [batch, 1, units] equal to one NumPy cell step on the first "
                                 "time step of the data (max abs diff < 1e-4)")


def _run_zero_state(p, variant, ctx, tf, np) -> dict:
    kind = p["cell"]

    def check(right):
        w = _cell_weights(right)
        diffs = []
        for n in (p["batch"], 2 * p["batch"]):  # the same graph, fed two batch sizes
            data = np.resize(right.ns["data"], (n,) + right.ns["data"].shape[1:]).astype(np.float32)
            out = right.run(right.ns["outputs"], {"x": data})
            ref, _ = np_stack(kind, w, data)
            diffs.append(_maxdiff(out, ref, np))
        return max(diffs) < 1e-4, {"right_ref_abs_diff": max(diffs)}

    return _simple_error_pitfall(p, variant, ctx, tf, np, check,
                                 "the right graph runs for batch and for 2 * batch and matches a NumPy unroll from a "
                                 "zero state both times (max abs diff < 1e-4)")


def _run_state_is_tuple(p, variant, ctx, tf, np) -> dict:
    def check(right):
        w = _cell_weights(right)
        ns = right.ns
        ref, _ = np_stack("lstm", w, ns["data"], states=[(ns["c_init"], ns["h_init"])])
        d = _maxdiff(ns["out"], ref, np)
        return d < 1e-4, {"right_ref_abs_diff": d}

    return _simple_error_pitfall(p, variant, ctx, tf, np, check,
                                 "with LSTMStateTuple(c=c_init, h=h_init) the outputs match a NumPy LSTM started from "
                                 "that (c, h) (max abs diff < 1e-4)", kind="lstm")


def _run_state_order(p, variant, ctx, tf, np) -> dict:
    wrong, right = _shape_pair(p, variant, tf, np, "lstm")
    try:
        metrics = {"wrong_builds": int(wrong.ok)}
        extra = {}
        if not right.ok:
            raise RuntimeError(f"right code failed: {right.err['error']}")
        w = _cell_weights(right)
        ref, st = np_stack("lstm", w, right.ns["data"])
        ref_last = ref[:, -1]
        d_right = _maxdiff(right.ns["out"], ref_last, np)
        metrics["right_ref_abs_diff"] = d_right
        if wrong.ok:
            wrong.load(wrong.trainable(), w[0])
            wlast = wrong.run(wrong.ns["last"], {"x": wrong.ns["data"]})
            d = _maxdiff(wlast, ref_last, np)
            d_c = _maxdiff(wlast, st[0][0], np)
            metrics["max_abs_diff_vs_correct"] = d
            extra = {"max_abs_diff_vs_correct": d, "max_abs_diff_vs_c": d_c, "out_shape_wrong": list(np.shape(wlast))}
            result = (f"runs without an error; state[0] has shape {list(np.shape(wlast))} like h, but differs from "
                      f"the last output by up to {d:.3g} (it equals the cell memory c: diff {d_c:.2g})")
        else:
            result = f"fails: {wrong.err['error_type']}: {_first_line(wrong.err['error'])}"
        ok = d_right < 1e-4
        metrics["check_passed"] = int(ok)
        check = "state.h equals the NumPy LSTM's last output (= outputs[:, -1]) (max abs diff < 1e-4)"
        return {"metrics": metrics, "details": _shape_details(variant, wrong, result, ok, check,
                                                              _variations(p, variant, tf, np, "lstm"), extra)}
    finally:
        wrong.close()
        right.close()


def _run_initial_state_stack(p, variant, ctx, tf, np) -> dict:
    kind = p["cell"]

    def check(right):
        groups = _layer_groups(right.trainable())
        w = [right.values(g) for g in groups]
        ref, _ = np_stack(kind, w, right.ns["data"])
        d = _maxdiff(right.ns["out"], ref, np)
        return len(groups) == 3 and d < 1e-4, {"right_ref_abs_diff": d}

    return _simple_error_pitfall(p, variant, ctx, tf, np, check,
                                 "with the stack's own zero_state (one state per layer) the outputs match a NumPy "
                                 "3-layer stack with the same weights (max abs diff < 1e-4)")


def _effective_lengths(out, np) -> list[int]:
    nz = np.any(np.asarray(out) != 0, axis=2)  # [batch, time]
    return [int(np.max(np.nonzero(r)[0]) + 1) if r.any() else 0 for r in nz]


def _run_seq_len_wrong(p, variant, ctx, tf, np) -> dict:
    kind = p["cell"]

    def check(right):
        w = _cell_weights(right)
        lengths = right.ns["true_lengths"]
        ref, _ = np_stack(kind, w, right.ns["data"], lengths=lengths)
        d = _maxdiff(right.ns["out"], ref, np)
        eff = _effective_lengths(right.ns["out"], np)
        return d < 1e-4 and eff == [int(v) for v in lengths], {"right_ref_abs_diff": d}

    return _simple_error_pitfall(p, variant, ctx, tf, np, check,
                                 "with one length per row the outputs match a NumPy unroll that stops each row at "
                                 "its length, and are zero past it (max abs diff < 1e-4)")


def _run_seq_len_dtype(p, variant, ctx, tf, np) -> dict:
    kind = p["cell"]
    wrong, right = _shape_pair(p, variant, tf, np)
    try:
        if not right.ok:
            raise RuntimeError(f"right code failed: {right.err['error']}")
        ns = right.ns
        intended = [int(v) for v in np.round(ns["frac_lengths"])]
        w = _cell_weights(right)
        ref, _ = np_stack(kind, w, ns["data"], lengths=intended)
        d_right = _maxdiff(ns["out"], ref, np)
        eff_right = _effective_lengths(ns["out"], np)
        metrics = {"wrong_builds": int(wrong.ok), "right_ref_abs_diff": d_right}
        extra = {"frac_lengths": [float(v) for v in ns["frac_lengths"]], "intended_lengths": intended,
                 "effective_lengths_right": eff_right}
        if wrong.ok:
            wrong.load(wrong.trainable(), w[0])
            wout = wrong.run(wrong.ns["outputs"], {"x": wrong.ns["data"]})
            eff = _effective_lengths(wout, np)
            short = sum(a < b for a, b in zip(eff, intended))
            d = _maxdiff(wout, ns["out"], np)
            metrics.update({"max_abs_diff_vs_correct": d, "rows_short": short})
            extra.update({"effective_lengths_wrong": eff, "max_abs_diff_vs_correct": d, "rows_short": short})
            result = (f"runs without an error or warning; lengths {extra['frac_lengths']} were used as {eff} "
                      f"(truncated), not {intended}: {short} of {len(eff)} rows lose steps; outputs differ by up to "
                      f"{d:.3g}")
        else:
            result = f"fails: {wrong.err['error_type']}: {_first_line(wrong.err['error'])}"
        ok = d_right < 1e-4 and eff_right == intended
        metrics["check_passed"] = int(ok)
        check = ("with explicitly rounded int32 lengths every row runs for its intended length (read back from where "
                 "the outputs turn zero) and the outputs match a NumPy unroll with those lengths (max abs diff < 1e-4)")
        return {"metrics": metrics, "details": _shape_details(variant, wrong, result, ok, check, [], extra)}
    finally:
        wrong.close()
        right.close()


_SHAPE_RUNNERS = {
    "shape_time_major": _run_time_major,
    "shape_batch_major": _run_time_major,
    "shape_2d_input": _run_2d,
    "shape_zero_state_batch": _run_zero_state,
    "shape_state_is_tuple": _run_state_is_tuple,
    "shape_lstm_state_order": _run_state_order,
    "shape_initial_state_stack": _run_initial_state_stack,
    "shape_seq_len_wrong": _run_seq_len_wrong,
    "shape_seq_len_dtype": _run_seq_len_dtype,
}
assert set(_SHAPE_RUNNERS) | set(_SHARED_TF1) | set(_SHARED_KERAS) == set(PITFALLS)
