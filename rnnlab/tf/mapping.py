"""The TF1 -> Keras 3 mapping for recurrent networks, as data: one row per TF1 construct.

Each row gives the Keras 3 code, the traps, what has no Keras 3 equivalent, and the name of the live check in
:mod:`rnnlab.tf.migrate_checks` that runs the TF1 construct and the Keras 3 code on identical weights and inputs on
this install (``rnnlab run migrate --variants check_<name>`` records pass/fail and the max abs diff). Importing this
module imports no TensorFlow.

"Checked live" means: a check exists and runs here (CPU, TF 2.21, Keras 3). What a check cannot see on this machine
(cuDNN, anything GPU-only) is listed under ``not_checked``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MappingRow:
    key: str  # stable id; the live check is ``checks.CHECKS[key]`` and the experiment variant ``check_<key>``
    tf1: str  # the TF1 construct, as written in TF1 code
    keras3_code: str  # the Keras 3 replacement
    traps: tuple[str, ...]
    no_equivalent: tuple[str, ...] = ()  # TF1 options Keras 3 cannot express (the converter refuses them)
    not_checked: tuple[str, ...] = ()  # claims in this row that the live check cannot verify here
    check: str | None = None  # name of the live check (None: documented only)
    converter: str = ""  # what rnnlab.tf.convert does with it

    @property
    def checked_live(self) -> bool:
        return self.check is not None

    @property
    def variant(self) -> str | None:
        return f"check_{self.check}" if self.check else None

    def to_dict(self) -> dict:
        return {"key": self.key, "tf1": self.tf1, "keras3_code": self.keras3_code, "traps": list(self.traps),
                "no_equivalent": list(self.no_equivalent), "not_checked": list(self.not_checked),
                "check": self.check, "checked_live": self.checked_live, "variant": self.variant,
                "converter": self.converter}


_RS = "return_sequences=True, return_state=True"

ROWS: tuple[MappingRow, ...] = (
    MappingRow(
        key="basic_rnn_cell",
        tf1="tf.compat.v1.nn.rnn_cell.BasicRNNCell(num_units, activation=tanh)",
        keras3_code=f"keras.layers.SimpleRNN(units, activation='tanh', {_RS})\n"
                    "layer.set_weights([K[:in_dim], K[in_dim:], b])  # K: TF1 kernel [in_dim+units, units]",
        traps=(
            "TF1 has one kernel over concat([x, h]); Keras has kernel (x part, first in_dim rows) and "
            "recurrent_kernel (h part, the remaining rows).",
            "Fresh layers are not initialised alike (Keras: glorot_uniform kernel, orthogonal recurrent_kernel): "
            "numbers only match once weights are copied.",
            "SimpleRNN has no fused or cuDNN kernel on any device: it always runs Keras's generic loop.",
        ),
        check="basic_rnn_cell",
        converter="converted (cell=rnn)",
    ),
    MappingRow(
        key="basic_lstm_cell",
        tf1="tf.compat.v1.nn.rnn_cell.BasicLSTMCell(num_units, forget_bias=1.0, state_is_tuple=True)",
        keras3_code=f"keras.layers.LSTM(units, {_RS})  # -> (outputs, h, c)\n"
                    "# weights: columns (i, j, f, o) -> (i, f, c=j, o); bias[units:2*units] += forget_bias",
        traps=(
            "Gate order: TF1 splits its kernel as (i, j, f, o), Keras as (i, f, c, o) with c = TF1's j: reorder the "
            "columns of the kernel and the bias.",
            "forget_bias is added at run time by TF1 and stored nowhere (not in checkpoints): fold it into the "
            "forget-gate bias when converting, with the value the model was trained with. Keras's "
            "unit_forget_bias=True only initialises that bias to 1; it does nothing to copied weights.",
            "State order: TF1 LSTMStateTuple(c, h); Keras returns (outputs, h, c) and takes initial_state=[h, c].",
            "state_is_tuple=False makes TF1 state one tensor concat([c, h], axis=1); Keras has no such option: split "
            "it (c = s[:, :units], h = s[:, units:]).",
        ),
        check="basic_lstm_cell",
        converter="converted (cell=lstm); forget_bias folded (--forget-bias)",
    ),
    MappingRow(
        key="lstm_cell",
        tf1="tf.compat.v1.nn.rnn_cell.LSTMCell(num_units, use_peepholes=False, cell_clip=None, num_proj=None, "
            "proj_clip=None, forget_bias=1.0, initializer=None)",
        keras3_code=f"keras.layers.LSTM(units, {_RS})  # only without peepholes, num_proj, cell_clip, proj_clip",
        traps=(
            "Same weights and gate layout as BasicLSTMCell (i, j, f, o; forget_bias folded), under scope lstm_cell.",
            "initializer only sets initial values: irrelevant once weights are converted.",
        ),
        no_equivalent=(
            "use_peepholes=True (variables w_f_diag, w_i_diag, w_o_diag): Keras 3 has no peephole LSTM "
            "(tf.keras 2's keras.experimental.PeepholeLSTMCell is gone).",
            "num_proj / proj_clip (variable projection/kernel): Keras 3 has no projection LSTM.",
            "cell_clip: Keras 3 never clips the cell state. Not visible in variables: rnnlab refuses it when passed.",
            "All three need a hand-written cell in keras.layers.RNN(cell): the generic loop, never cuDNN.",
        ),
        check="lstm_cell",
        converter="converted when plain; peepholes / projection / clipping refused with RnnlabError naming them",
    ),
    MappingRow(
        key="gru_cell",
        tf1="tf.compat.v1.nn.rnn_cell.GRUCell(num_units, activation=tanh)",
        keras3_code=f"keras.layers.GRU(units, reset_after=False, {_RS})",
        traps=(
            "Keras's default reset_after=True is a different formula (reset applied after the recurrent matmul, "
            "two bias vectors): TF1 GRUCell weights give other numbers there. Use reset_after=False.",
            "reset_after=False is never cuDNN-eligible: a converted TF1 GRU runs the generic loop on GPU too.",
            "Layout: TF1 gates/kernel [in+u, 2u] holds (r, u) and candidate/kernel [in+u, u]; Keras kernel holds "
            "(z, r, h) with z = TF1's u: swap the halves of gates/* and append candidate/*.",
            "TF1 GRUCell's gates/bias starts at 1.0, Keras's bias at 0: matters only for fresh layers.",
        ),
        check="gru_cell",
        converter="converted (cell=gru) to GRU(reset_after=False)",
    ),
    MappingRow(
        key="multi_rnn_cell",
        tf1="tf.compat.v1.nn.rnn_cell.MultiRNNCell([cell_0, cell_1, ...])",
        keras3_code="x = inputs\nfor units in sizes:\n"
                    f"    x, *state = keras.layers.LSTM(units, {_RS})(x, mask=mask)",
        traps=(
            "Variables live under .../multi_rnn_cell/cell_N/<cell>/...: layer order is N, not name order "
            "(cell_10 after cell_9).",
            "The state is a tuple with one entry per layer; Keras returns one state (or h, c) per layer.",
            "keras.layers.RNN(keras.layers.StackedRNNCells([...])) mirrors MultiRNNCell but never uses a fused "
            "kernel; separate LSTM/GRU layers can each use cuDNN on GPU. Same numbers either way.",
        ),
        check="multi_rnn_cell",
        converter="converted: one Keras layer per cell_N, in order; mixed cell types allowed",
    ),
    MappingRow(
        key="dynamic_rnn",
        tf1="tf.compat.v1.nn.dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None, "
            "parallel_iterations=None, swap_memory=False, time_major=False)",
        keras3_code="mask = keras.ops.arange(T)[None, :] < sequence_length[:, None]\n"
                    "outputs, h, c = keras.layers.LSTM(units, return_sequences=True, return_state=True, "
                    "zero_output_for_mask=True)(x, mask=mask, initial_state=[h0, c0])",
        traps=(
            "sequence_length becomes a boolean mask [batch, time] (or keras.layers.Masking(0.0), only if padded "
            "steps are all zeros and no real step is).",
            "Outputs past a row's length: dynamic_rnn writes zeros; Keras 3's generic loop repeats the last valid "
            "output unless zero_output_for_mask=True (the cuDNN path writes zeros). Final states agree: both keep "
            "the state of the last valid step.",
            "initial_state=LSTMStateTuple(c0, h0) becomes initial_state=[h0, c0].",
            "time_major: Keras 3 layers have no time_major argument (tf.keras 2's RNN had one): transpose with "
            "keras.ops.transpose(x, (1, 0, 2)) before and after.",
            "parallel_iterations and swap_memory have no Keras arguments: Keras 3's TensorFlow backend runs its "
            "generic loop as tf.while_loop(parallel_iterations=32, swap_memory=True), hard-coded in "
            "keras/src/backend/tensorflow/rnn.py.",
            "dtype becomes the layer's dtype / dtype policy.",
        ),
        not_checked=("swap_memory's effect (GPU memory) cannot be seen on a CPU-only machine.",),
        check="dynamic_rnn",
        converter="the converted model takes mask= (see convert.sequence_mask); zero_output_for_mask=True by default",
    ),
    MappingRow(
        key="static_rnn",
        tf1="tf.compat.v1.nn.static_rnn(cell, tf.unstack(x, axis=1), sequence_length=None)",
        keras3_code=f"keras.layers.LSTM(units, unroll=True, {_RS})(keras.Input((T, features)))",
        traps=(
            "static_rnn takes and returns Python lists of [batch, features] tensors; Keras takes [batch, time, "
            "features]: tf.stack(outputs, axis=1) to compare.",
            "unroll=True needs a fixed time dimension (keras.Input((T, features)), not None) and builds one copy "
            "of the step per time step: long sequences make huge graphs.",
            "unroll=True rules out cuDNN.",
            "With sequence_length, static_rnn also writes zeros past each length (zero_output_for_mask=True).",
        ),
        check="static_rnn",
        converter="build the converted layers with unroll=True yourself (convert() builds the loop form)",
    ),
    MappingRow(
        key="bidirectional_dynamic_rnn",
        tf1="tf.compat.v1.nn.bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None)",
        keras3_code="keras.layers.Bidirectional(keras.layers.LSTM(units, return_sequences=True, return_state=True, "
                    "zero_output_for_mask=True), merge_mode=None)(x, mask=mask)\n"
                    "# -> [out_fw, out_bw, h_fw, c_fw, h_bw, c_bw]",
        traps=(
            "TF1 reverses each row within its own length (reverse_sequence); Keras's backward layer "
            "(go_backwards=True) reverses the whole padded row and skips the now-leading padding through the mask: "
            "equal only when the mask is given.",
            "(output_fw, output_bw) tuple: merge_mode=None gives both; merge_mode='concat' equals "
            "tf.concat(outputs, -1).",
            "Scopes bidirectional_rnn/fw/... and bidirectional_rnn/bw/...: convert each direction with the cell "
            "rules (rnnlab's converter takes one direction at a time: scope=...).",
        ),
        check="bidirectional_dynamic_rnn",
        converter="one direction per call (scope='.../fw' or '.../bw'); assembling Bidirectional is manual",
    ),
    MappingRow(
        key="dropout_wrapper",
        tf1="tf.compat.v1.nn.rnn_cell.DropoutWrapper(cell, input_keep_prob, output_keep_prob, state_keep_prob, "
            "variational_recurrent=False)",
        keras3_code="keras.layers.LSTM(units, dropout=1 - input_keep_prob, recurrent_dropout=1 - state_keep_prob, "
                    "return_sequences=True)\nkeras.layers.Dropout(1 - output_keep_prob)",
        traps=(
            "Keep probability vs drop rate: rate = 1 - keep_prob.",
            "DropoutWrapper drops whenever keep_prob < 1: TF1 code feeds keep_prob=1.0 to evaluate. Keras drops "
            "only with training=True (fit, or layer(x, training=True)).",
            "Keras draws one dropout mask per sequence (like variational_recurrent=True); TF1's default draws a new "
            "mask at every step.",
            "recurrent_dropout drops the h entering the recurrent matmul; state_keep_prob drops the state the cell "
            "passes on: not the same formula, only the same idea.",
            "recurrent_dropout > 0 rules out cuDNN.",
        ),
        not_checked=("Training-time equality is not checkable (different random masks): the check covers inference "
                     "(keep_prob=1 vs training=False) and that Keras does drop with training=True.",),
        check="dropout_wrapper",
        converter="no variables of its own: convert the wrapped cell, add dropout arguments by hand",
    ),
    MappingRow(
        key="residual_wrapper",
        tf1="tf.compat.v1.nn.rnn_cell.ResidualWrapper(cell, residual_fn=None)",
        keras3_code="y = keras.layers.Add()([x, keras.layers.LSTM(units, return_sequences=True)(x)])  # units == "
                    "features",
        traps=(
            "No Keras wrapper: add the input to the layer's output sequence yourself; states are unchanged.",
            "Input features must equal units (as in TF1).",
            "With sequence_length, dynamic_rnn zeroes the residual output past the length; Add gives x there. "
            "Mask or ignore padded steps.",
            "A custom residual_fn becomes whatever layer computes it.",
        ),
        check="residual_wrapper",
        converter="no variables of its own: convert the wrapped cell, add Add() by hand",
    ),
    MappingRow(
        key="tf_keras_to_keras3",
        tf1="tf.keras.layers.LSTM/GRU/SimpleRNN under Keras 2 (tf_keras; tf.keras when TF_USE_LEGACY_KERAS=1)",
        keras3_code="import keras  # Keras 3\nk3 = keras.layers.LSTM(units, return_sequences=True)\n"
                    "k3.build((None, None, features)); k3.set_weights(k2_layer.get_weights())",
        traps=(
            "Weight layout is the same (kernel, recurrent_kernel, bias; GRU reset_after=True by default in both): "
            "get_weights/set_weights carries over.",
            "Keras 3 removed time_major, CuDNNLSTM/CuDNNGRU (tf.compat.v1.keras.layers) and "
            "keras.experimental.PeepholeLSTMCell.",
            "Keras 3 files: .keras (model) and .weights.h5 (weights; the name must end so); legacy .h5 models load "
            "with keras.models.load_model; SavedModel export is model.export(path).",
            "Keras 2 and Keras 3 objects do not mix: a tf_keras layer or TF1 cell inside a Keras 3 model fails "
            "(see seed 004).",
            "With TF_USE_LEGACY_KERAS=1, tf.keras is Keras 2 while `import keras` is Keras 3.",
        ),
        check="tf_keras_to_keras3",
        converter="not needed: same layout, use get_weights/set_weights",
    ),
)

BY_KEY: dict[str, MappingRow] = {r.key: r for r in ROWS}
CHECK_NAMES: tuple[str, ...] = tuple(r.check for r in ROWS if r.check)


def row(key: str) -> MappingRow:
    from rnnlab.core.errors import RnnlabError

    if key not in BY_KEY:
        raise RnnlabError(f"unknown mapping row {key!r}; known: {', '.join(BY_KEY)}")
    return BY_KEY[key]


def as_dicts() -> list[dict]:
    return [r.to_dict() for r in ROWS]


def as_markdown(results: dict[str, dict] | None = None) -> str:
    """The mapping as a Markdown table; ``results`` (check name -> {"pass", "max_abs_diff"}) fills the live column."""
    lines = ["| TF1 | Keras 3 | traps / no equivalent | checked live |", "| --- | --- | --- | --- |"]
    for r in ROWS:
        traps = "<br>".join(list(r.traps) + [f"**no equivalent:** {n}" for n in r.no_equivalent])
        live = "no"
        if r.check:
            res = (results or {}).get(r.check)
            if res is None:
                live = f"yes (`check_{r.check}`)"
            else:
                verdict = "pass" if res.get("pass") else "FAIL"
                live = f"{verdict}, max diff {res.get('max_abs_diff', float('nan')):.2e}"
        code = "<br>".join(f"`{ln.strip()}`" for ln in r.keras3_code.replace("|", "/").splitlines())
        lines.append(f"| `{r.tf1.replace('|', '/')}` | {code} | {traps.replace('|', '/')} | {live} |")
    return "\n".join(lines)
