"""The pitfalls of seed 000 (section 6) as programs: for each, the wrong code and the right code (source text the
app shows and the worker runs), a title, an explanation and what the programs are given. Text only: importing this
imports no TensorFlow."""

from __future__ import annotations

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
SHARED_TF1 = ("tf1_shared_dynamic", "tf1_shared_static")
SHARED_KERAS = ("keras_shared_sequential", "keras_shared_stacked_cells")
LSTM_ONLY = ("shape_state_is_tuple", "shape_lstm_state_order")
