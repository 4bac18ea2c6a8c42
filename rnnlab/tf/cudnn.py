"""When does a Keras 3 recurrent layer run cuDNN? Keras 3's rules applied to a user's settings, as a pure function.

rnnlab's one home of this rule (no TensorFlow imported here): :func:`cudnn_eligibility` (every broken rule, in
words), :func:`kernel_note` (the short reason a Keras variant's record gives for its generic kernel), :func:`mask_ok`
(the mask rule on a concrete [batch, time] mask, as the varlen experiment checks it) and :func:`explain` (the
migrate page's question).

Source of the rules: Keras 3.15 ``keras/src/layers/rnn/lstm.py`` and ``gru.py`` (``LSTM``/``GRU.inner_loop``) and
``keras/src/backend/tensorflow/rnn.py`` (``cudnn_ok``, ``_do_lstm_arguments_support_cudnn``,
``_do_gru_arguments_support_cudnn``, ``_assert_valid_mask``). They can only be read here, not run: this machine has
no GPU. In short, the TensorFlow backend tries cuDNN for ``keras.layers.LSTM`` / ``keras.layers.GRU`` when

* a GPU is visible to TensorFlow (``tf.config.list_logical_devices("GPU")``) and ``use_cudnn`` is ``"auto"``/True,
* ``activation`` is tanh and ``recurrent_activation`` is sigmoid,
* ``recurrent_dropout == 0``, ``unroll`` is False, ``use_bias`` is True,
* (GRU) ``reset_after`` is True,
* and a mask, if any, is strictly right-padded with no fully masked row (checked at run time: eagerly a bad mask
  falls back to the generic loop; inside a ``tf.function``, e.g. ``fit``, the ``tf.Assert`` fails the step).

``SimpleRNN`` and any ``keras.layers.RNN(cell)`` (Keras cells, custom cells, ``StackedRNNCells``) never use it.

The CPU path: there is no fused RNN kernel for Keras 3 on CPU. ``backend.lstm``/``backend.gru`` raise
``NotImplementedError`` without a GPU and the layer runs Keras's generic loop, ``keras.src.backend.tensorflow.rnn.rnn``:
a ``tf.while_loop`` (``parallel_iterations=32, swap_memory=True``) over the cell's step function, or a Python loop
when ``unroll=True``. That is :data:`CPU_PATH`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from rnnlab.core.errors import RnnlabError

CPU_PATH = ("CPU: no fused kernel. Keras 3 LSTM/GRU/SimpleRNN run the generic loop "
            "keras.src.backend.tensorflow.rnn.rnn: tf.while_loop(parallel_iterations=32, swap_memory=True) over the "
            "cell's step function (a Python loop when unroll=True); backend.lstm/backend.gru raise "
            "NotImplementedError when no GPU is visible, so LSTM/GRU fall back to it.")

SOURCES = ("keras/src/layers/rnn/lstm.py", "keras/src/layers/rnn/gru.py", "keras/src/backend/tensorflow/rnn.py")

_TANH = {"tanh", "keras.activations.tanh", "activations.tanh", "tf.tanh", "tf.math.tanh", "tf.nn.tanh",
         "keras.ops.tanh", "ops.tanh"}
_SIGMOID = {"sigmoid", "keras.activations.sigmoid", "activations.sigmoid", "tf.sigmoid", "tf.math.sigmoid",
            "tf.nn.sigmoid", "keras.ops.sigmoid", "ops.sigmoid"}
_LAYERS = {"lstm": "LSTM", "gru": "GRU", "simplernn": "SimpleRNN", "simple_rnn": "SimpleRNN", "rnn": "RNN",
           "bidirectional(lstm)": "LSTM", "bidirectional(gru)": "GRU"}
_SETTINGS = {"activation", "recurrent_activation", "recurrent_dropout", "unroll", "use_bias", "reset_after", "mask",
             "sequence_length", "use_cudnn", "gpu", "backend", "cell", "dropout", "go_backwards", "stateful",
             "return_sequences", "return_state", "units", "time_major", "jit_compile"}


def _act_name(value: Any) -> str:
    if value is None:
        return "linear"
    if callable(value):
        mod = getattr(value, "__module__", "") or ""
        return f"{mod}.{getattr(value, '__name__', repr(value))}".lower()
    return str(value).strip().lower()


def _is(value: Any, names: set[str], base: str) -> bool:
    n = _act_name(value)
    if n in names:
        return True
    # callables: keras.src.activations.activations.tanh, tensorflow.python.ops.gen_math_ops.tanh...
    return callable(value) and n.rsplit(".", 1)[-1] == base and ("keras" in n or "tensorflow" in n)


def _mask_rows(mask: Any) -> tuple[str, str]:
    """``(kind, why)`` for a [batch, time] mask (True = real step): kind is ``"right_padded"``,
    ``"not_right_padded"``, ``"fully_masked_row"`` or ``"bad_shape"``; ``why`` says which row and step."""
    m = np.asarray(mask.tolist() if hasattr(mask, "tolist") else mask).astype(bool)
    if m.ndim != 2:
        return "bad_shape", f"mask must be [batch, time], got shape {m.shape}"
    b, t = m.shape
    counts = m.sum(axis=1)
    empty = np.nonzero(counts == 0)[0]
    if empty.size:
        return "fully_masked_row", f"row {int(empty[0])} is fully masked (cuDNN cannot take a zero-length row)"
    right = np.arange(t)[None, :] < counts[:, None]
    bad = np.nonzero((m != right).any(axis=1))[0]
    if bad.size:
        r = int(bad[0])
        first_false = int(np.argmin(m[r])) if not m[r].all() else t
        later_true = int(np.nonzero(m[r, first_false:])[0][0]) + first_false if m[r, first_false:].any() else None
        where = (f"a masked step at {first_false} before a real step at {later_true}" if later_true is not None
                 else "steps out of order")
        return "not_right_padded", f"not right-padded: row {r} has {where} ({int(bad.size)} of {b} rows so)"
    return "right_padded", "strictly right-padded: each row is real steps then padding, none fully masked"


def mask_ok(mask: Any) -> tuple[bool, str]:
    """Whether a [batch, time] mask (True = real step) passes Keras 3's cuDNN requirement on a GPU: ``(ok, reason)``.

    Keras 3 (TF backend) asserts at run time, when the cuDNN kernel is used with a mask, that the mask is strictly
    right-padded (every row: a run of True, then only False) and that no row is fully masked; otherwise the call
    fails with "You are passing a RNN mask that does not correspond to right-padded sequences". This is the mask
    rule of :func:`cudnn_eligibility`, with the offending row named.
    """
    kind, why = _mask_rows(mask)
    return kind == "right_padded", why


def mask_kind(mask: Any = None, sequence_length: Sequence[int] | None = None) -> str:
    """``"none"``, ``"right_padded"``, ``"not_right_padded"`` or ``"fully_masked_row"`` for a mask given as rows of
    booleans, or as a kind name already, or as ``sequence_length`` (always right-padded; a 0 length is a fully
    masked row)."""
    if sequence_length is not None:
        return "fully_masked_row" if any(int(n) <= 0 for n in sequence_length) else "right_padded"
    if mask is None or mask is False:
        return "none"
    if isinstance(mask, str):
        kinds = {"none", "right_padded", "not_right_padded", "left_padded", "fully_masked_row"}
        if mask not in kinds:
            raise RnnlabError(f"mask={mask!r}: expected rows of booleans or one of {', '.join(sorted(kinds))}")
        return "not_right_padded" if mask == "left_padded" else mask
    kind, why = _mask_rows(mask)
    if kind == "bad_shape":
        raise RnnlabError(why)
    return kind


@dataclass(frozen=True)
class Reason:
    """One broken rule: ``short`` for a record's ``details["kernel"]`` ("generic (unroll=True)"), ``text`` for the
    page (what the rule is and what happens instead)."""
    rule: str
    short: str
    text: str


def _broken(layer: str, settings: dict) -> list[Reason]:
    """Every rule of Keras 3's cuDNN path that ``layer`` with ``settings`` breaks, in the order the page lists them."""
    unknown = set(settings) - _SETTINGS
    if unknown:
        raise RnnlabError(f"cudnn_eligibility: unknown setting(s) {', '.join(sorted(unknown))}; "
                          f"known: {', '.join(sorted(_SETTINGS))}")
    key = str(layer).strip().lower().replace("keras.layers.", "")
    if key not in _LAYERS:
        raise RnnlabError(f"cudnn_eligibility: layer={layer!r}: expected LSTM, GRU, SimpleRNN or RNN")
    kind = _LAYERS[key]
    out: list[Reason] = []

    def no(rule: str, short: str, text: str) -> None:
        out.append(Reason(rule, short, text))

    _layer_rules(kind, settings, no)
    use_cudnn = settings.get("use_cudnn", "auto")
    if use_cudnn not in ("auto", True, False):
        raise RnnlabError(f"use_cudnn={use_cudnn!r}: expected 'auto', True or False")
    if use_cudnn is False:
        no("use_cudnn", "use_cudnn=False", "use_cudnn=False")
    if not settings.get("gpu", True):
        no("gpu", "CPU: no fused kernel", "no GPU visible to TensorFlow: cudnn_ok() is False; the generic while_loop "
           "runs (no fused kernel on CPU)")
    if kind in ("LSTM", "GRU"):
        _lstm_gru_rules(kind, settings, no)
    if use_cudnn is True and out:
        no("use_cudnn", "use_cudnn=True raises ValueError",
           "use_cudnn=True with an ineligible configuration: the layer raises ValueError at call ('cuDNN is not "
           "supported for this layer configuration') instead of falling back")
    return out


def _layer_rules(kind: str, settings: dict, no: Callable[[str, str, str], None]) -> None:
    """The backend, and layers that have no cuDNN path at all (SimpleRNN, RNN(cell))."""
    backend = str(settings.get("backend", "tensorflow")).lower()
    if backend != "tensorflow":
        no("backend", f"backend={backend}",
           f"backend={backend!r}: these are the TensorFlow backend's rules (rnnlab runs TensorFlow)")
    if kind == "SimpleRNN":
        no("layer", "SimpleRNN has no cuDNN kernel",
           "SimpleRNN has no cuDNN path in Keras 3 (only LSTM and GRU have one)")
    if kind == "RNN":
        cell = settings.get("cell", "a cell")
        no("layer", "keras.layers.RNN(cell) has no fused path",
           f"keras.layers.RNN({cell}) always runs the generic loop: only keras.layers.LSTM and "
           "keras.layers.GRU try cuDNN (wrapping LSTMCell/GRUCell in RNN gives that up)")
        if "compat.v1" in str(cell) or "rnn_cell" in str(cell):
            no("cell", "a TF1 cell is not a Keras 3 cell",
               f"{cell} is a TF1 (tf_keras) cell, not a Keras 3 cell: Keras 3 cannot run it at all")


def _lstm_gru_rules(kind: str, settings: dict, no: Callable[[str, str, str], None]) -> None:
    """An LSTM's or GRU's settings against what cuDNN needs."""
    act = settings.get("activation", "tanh")
    if not _is(act, _TANH, "tanh"):
        no("activation", f"activation={_act_name(act)}", f"activation={_act_name(act)!r}: cuDNN needs tanh")
    ract = settings.get("recurrent_activation", "sigmoid")
    if not _is(ract, _SIGMOID, "sigmoid"):
        hint = (" (hard_sigmoid was the default of Keras <= 2.2 and of TF1-era tf.keras LSTM/GRU)"
                if "hard_sigmoid" in _act_name(ract) else "")
        no("recurrent_activation", f"recurrent_activation={_act_name(ract)}",
           f"recurrent_activation={_act_name(ract)!r}: cuDNN needs sigmoid{hint}")
    rd = float(settings.get("recurrent_dropout", 0.0) or 0.0)
    if rd != 0.0:
        no("recurrent_dropout", f"recurrent_dropout={rd}",
           f"recurrent_dropout={rd}: cuDNN needs 0 (the layer skips backend.{kind.lower()} entirely)")
    if settings.get("unroll", False):
        no("unroll", "unroll=True", "unroll=True: cuDNN needs unroll=False")
    if not settings.get("use_bias", True):
        no("use_bias", "use_bias=False", "use_bias=False: cuDNN needs use_bias=True")
    if kind == "GRU" and not settings.get("reset_after", True):
        no("reset_after", "GRU reset_after=False; cuDNN needs reset_after=True",
           "reset_after=False: cuDNN's GRU is the reset_after=True formula (a converted TF1 GRUCell needs "
           "reset_after=False, so it never gets cuDNN)")
    mk = mask_kind(settings.get("mask"), settings.get("sequence_length"))
    if mk == "not_right_padded":
        no("mask", "mask not right-padded", "mask is not strictly right-padded: cuDNN's tf.Assert fails "
           "(eagerly Keras falls back to the generic loop; inside tf.function/fit the step errors)")
    elif mk == "fully_masked_row":
        no("mask", "a fully masked row", "a row is fully masked (length 0): cuDNN's tf.Assert fails (eager: "
           "fallback; tf.function: error)")
    if settings.get("time_major"):
        no("time_major", "time_major",
           "time_major: Keras 3 layers take no time_major argument (transpose the input instead)")


def cudnn_eligibility(layer: str, **settings) -> tuple[bool, list[str]]:
    """Would Keras 3 (TensorFlow backend) run ``layer`` with these settings on cuDNN? -> ``(eligible, reasons)``.

    ``layer``: ``"LSTM"``, ``"GRU"``, ``"SimpleRNN"`` or ``"RNN"`` (``keras.layers.RNN(cell)``; say which with
    ``cell=...``). Settings use the layer's argument names and defaults (``activation="tanh"``,
    ``recurrent_activation="sigmoid"``, ``recurrent_dropout=0``, ``unroll=False``, ``use_bias=True``,
    ``reset_after=True``, ``use_cudnn="auto"``), plus ``mask`` (rows of booleans, or ``"right_padded"`` ...),
    ``sequence_length`` (per-row lengths), ``gpu`` (is a GPU visible to TensorFlow? default True: the question is
    then "on a GPU machine") and ``backend`` (default ``"tensorflow"``).

    ``reasons`` lists every rule the settings break (empty when eligible); it is pure: nothing is imported or run.
    This is rnnlab's one cuDNN rule: the Keras variants' ``details["kernel"]`` (:func:`kernel_note`), the varlen
    mask check (:func:`mask_ok`) and the migrate page's question (:func:`explain`) all come from here.
    """
    broken = _broken(layer, settings)
    return (not broken, [r.text for r in broken])


def kernel_note(layer: str, **settings) -> str | None:
    """The short reason the layer runs the generic loop, for a record's ``details["kernel"]`` ("CPU: no fused
    kernel", "unroll=True", ...), or None when :func:`cudnn_eligibility` says it is eligible. No GPU comes first:
    without one nothing else matters."""
    broken = _broken(layer, settings)
    if not broken:
        return None
    return next((r.short for r in broken if r.rule == "gpu"), broken[0].short)


def explain(layer: str, **settings) -> dict:
    """:func:`cudnn_eligibility` plus the path that runs instead, JSON-ready."""
    ok, reasons = cudnn_eligibility(layer, **settings)
    gpu = settings.get("gpu", True)
    if ok:
        path = f"cuDNN (tf.raw_ops.CudnnRNNV3, rnn_mode={'lstm' if 'LSTM' in str(layer).upper() else 'gru'})"
    elif not gpu:
        path = CPU_PATH
    else:
        path = "the generic loop (tf.while_loop over the cell's step; a Python loop with unroll=True), on the GPU"
    notes = []
    if ok:
        notes.append("cuDNN ops are not XLA-compatible: Keras sets supports_jit=False on the layer")
        notes.append("on the cuDNN path, outputs past a row's length are zeros (the generic loop repeats the last "
                     "output unless zero_output_for_mask=True)")
    return {"layer": layer, "eligible": ok, "reasons": reasons, "path": path, "notes": notes,
            "sources": list(SOURCES), "checked_here": False}


# The construct of seed 004, judged by the rules: it is not "cuDNN-based".
SEED004_SETTINGS = {"cell": "tf.compat.v1.nn.rnn_cell.LSTMCell(rnn_units)", "return_sequences": True}
