"""The Migrate page's seed 004 sections: its "cuDNN-based" construct as the ``seed004_construct`` worker saw it
(:func:`seed004_findings`, :func:`seed004_table`), the cuDNN question on the user's settings (:func:`cudnn_question`,
Keras 3's rules from ``rnnlab.tf.cudnn``) and the unrolling page's configuration that measures the construct's cost
against the layer that replaces it (:func:`cost_query`, :func:`cost_table`). Pure: no Streamlit, no TensorFlow.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from rnnlab import experiments
from rnnlab.core import envinfo, format as fmt
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record
from rnnlab.core.views import Column, TableView
from rnnlab.experiments.pitfalls import error_summary
from rnnlab.judge import select
from rnnlab.judge.select import provenance
from rnnlab.present.migrate_common import _short_params, fingerprint, seen_on, where
from rnnlab.tf import cudnn

SCENARIOS = {
    "keras3_RNN_of_tf1_LSTMCell": "keras.layers.RNN(TF1 LSTMCell)(x), eager",
    "keras3_RNN_of_tf1_LSTMCell_functional": "The same in a functional keras.Model",
    "keras3_RNN_of_tf1_LSTMCell_initial_state": "The same with initial_state given",
    "seed_verbatim_default_env": "The seed's imports (tf.keras), default install",
    "seed_verbatim_legacy_env": "The seed's imports (tf.keras), TF_USE_LEGACY_KERAS=1",
}


def _rnn_class(name: str, s: Mapping[str, Any]) -> str:
    if name.startswith("keras3_"):
        return "keras.layers.RNN: Keras 3"
    module = str((s.get("notes") or {}).get("RNN") or (s.get("versions") or {}).get("tf.keras.layers.RNN") or "")
    return ("tf.keras.layers.RNN: " + ("Keras 3" if module.startswith("keras.") else
                                       "Keras 2 (tf_keras)" if module.startswith("tf_keras") else module or "?"))


def seed004_findings(rec: Record) -> list[str]:
    """The construct's outcomes, one plain-text sentence per scenario (errors by their informative line; the
    record holds them verbatim)."""
    scen = (rec.details or {}).get("scenarios") or {}
    out = []
    for name, s in scen.items():
        label = SCENARIOS.get(name, name)
        if s.get("result") == "ok":
            notes = s.get("notes") or {}
            extra = ""
            if "keras3_layer_trainable_weights" in notes:
                extra = (f": it runs, but the Keras 3 layer has {notes['keras3_layer_trainable_weights']} trainable "
                         f"weights (the cell's {', '.join(notes.get('tf1_cell_weights') or [])} are invisible to it: "
                         "an optimizer never updates them)")
            elif notes.get("keras"):
                loops = ", ".join(notes.get("loop_ops") or []) or "no loop op"
                cud = ", ".join(notes.get("cudnn_ops") or []) or "no cuDNN op"
                extra = f": it runs, in {notes['keras']}, as a generic {loops} loop ({cud})"
            out.append(f"{label}{extra or ': runs'}.")
        elif s.get("result") == "error":
            out.append(f"{label}: fails at '{s.get('failed_at')}' with {s.get('error_type')}: "
                       f"{error_summary(s.get('error'))}")
        else:
            out.append(f"{label}: {s.get('result')}.")
    return out


def seed004_heading(rec: Record | None) -> str:
    """"Seed 004's construct, run here" for this machine's record (or none yet), else whose machine ran it."""
    w = where([rec] if rec is not None else [])
    return "Seed 004's construct, run here" if w == "here" else f"Seed 004's construct {w}"


def seed004_table(rec: Record) -> TableView:
    scen = (rec.details or {}).get("scenarios") or {}
    rows, raw = [], []
    for name, s in scen.items():
        err = f"{s.get('error_type')}: {error_summary(s.get('error'))}" if s.get("error_type") else ""
        rows.append((SCENARIOS.get(name, name), "1" if s.get("TF_USE_LEGACY_KERAS") else "unset",
                     _rnn_class(name, s), str(s.get("result")), str(s.get("failed_at") or ""), err))
        raw.append((name, s.get("TF_USE_LEGACY_KERAS"), _rnn_class(name, s), s.get("result"), s.get("failed_at"),
                    err))
    return TableView(title=f"{seed004_heading(rec)} ({_short_params(rec.params)})", caption=seen_on([rec]),
                     columns=(Column("what ran", "prose", "name"), Column("TF_USE_LEGACY_KERAS", "text"), "RNN layer",
                              "result", "failed at", Column("error", "prose", "error")),
                     rows=tuple(rows), raw=tuple(raw), provenance=provenance([rec]))


# ----------------------------------------------------------------------------------------------- cuDNN question

# widget choice -> (layer for cudnn.cudnn_eligibility, extra settings, cell of the unroll experiment)
LAYERS: dict[str, tuple[str, dict, str]] = {
    "LSTM": ("LSTM", {}, "lstm"),
    "GRU": ("GRU", {}, "gru"),
    "SimpleRNN": ("SimpleRNN", {}, "rnn"),
    "RNN(LSTMCell)": ("RNN", {"cell": "keras.layers.LSTMCell(n)"}, "lstm"),
    "RNN(tf.compat.v1 LSTMCell) (seed 004)": ("RNN", {"cell": "tf.compat.v1.nn.rnn_cell.LSTMCell(n)"}, "lstm"),
}
# setting -> options as text (the first is Keras's default); the URL holds the text
CUDNN_OPTIONS: dict[str, tuple[str, ...]] = {
    "keras_layer": tuple(LAYERS),
    "activation": ("tanh", "relu", "sigmoid", "linear"),
    "recurrent_activation": ("sigmoid", "hard_sigmoid", "tanh"),
    "recurrent_dropout": ("0", "0.1", "0.2", "0.5"),
    "unroll": ("False", "True"),
    "use_bias": ("True", "False"),
    "reset_after": ("True", "False"),
    "mask": ("none", "right_padded", "not_right_padded", "fully_masked_row"),
    "use_cudnn": ("auto", "True", "False"),
    "gpu": ("True", "False"),
}
CUDNN_DEFAULTS = {k: v[0] for k, v in CUDNN_OPTIONS.items()}


def _b(text: str) -> bool:
    return text == "True"


def cudnn_question(choice: Mapping[str, str]) -> dict:
    """The widgets' text values -> ``cudnn.explain`` (eligible, reasons, path, notes) for that layer and settings."""
    bad = [k for k, v in choice.items() if k in CUDNN_OPTIONS and v not in CUDNN_OPTIONS[k]]
    if bad:
        raise RnnlabError("; ".join(f"{k}={choice[k]!r}: expected one of {', '.join(CUDNN_OPTIONS[k])}" for k in bad))
    c = {**CUDNN_DEFAULTS, **choice}
    layer, extra, _ = LAYERS[c["keras_layer"]]
    settings: dict[str, Any] = dict(extra)
    if layer in ("LSTM", "GRU"):
        settings.update(activation=c["activation"], recurrent_activation=c["recurrent_activation"],
                        recurrent_dropout=float(c["recurrent_dropout"]), unroll=_b(c["unroll"]),
                        use_bias=_b(c["use_bias"]), mask=c["mask"])
        if layer == "GRU":
            settings["reset_after"] = _b(c["reset_after"])
    uc = c["use_cudnn"]
    settings["use_cudnn"] = "auto" if uc == "auto" else _b(uc)
    settings["gpu"] = _b(c["gpu"])
    res = cudnn.explain(layer, **settings)
    res["settings"] = settings
    res["notes"] = [fmt.sentence_start(n) for n in res.get("notes") or []]  # each note a caption of its own
    return res


def keras_code(choice: Mapping[str, str]) -> str:
    """The layer as Keras 3 code, with the arguments that differ from the defaults."""
    c = {**CUDNN_DEFAULTS, **choice}
    layer, extra, _ = LAYERS[c["keras_layer"]]
    if layer == "RNN":
        return f"keras.layers.RNN({extra['cell']}, return_sequences=True)"
    args = ["units", "return_sequences=True"]
    if layer in ("LSTM", "GRU"):
        for k in ("activation", "recurrent_activation", "recurrent_dropout", "unroll", "use_bias") + \
                (("reset_after",) if layer == "GRU" else ()):
            if c[k] != CUDNN_DEFAULTS[k]:
                args.append(f"{k}={c[k]!r}" if k.endswith("activation") else f"{k}={c[k]}")
    if c["use_cudnn"] != "auto":
        args.append(f"use_cudnn={c['use_cudnn']}")
    call = "(x, mask=mask)" if layer in ("LSTM", "GRU") and c["mask"] != "none" else "(x)"
    return f"keras.layers.{layer}({', '.join(args)}){call}"


# seed 004: LSTMCell(32) over MNIST rows (28 steps of 28 features), batch 32
SEED004_CONFIG = {"layers": 1, "units": 32, "batch": 32, "seq_len": 28, "input_dim": 28, "dtype": "float32"}


def cost_point(choice: Mapping[str, str]) -> tuple[dict, list[str], str]:
    """The unrolling experiment's params at seed 004's sizes for the chosen layer, the variants that compare the
    seed's construct (``keras_cell``: RNN(Cell), the generic loop) with the chosen layer (``keras`` or
    ``keras_unroll``), and the reference."""
    c = {**CUDNN_DEFAULTS, **choice}
    _, _, cell = LAYERS[c["keras_layer"]]
    after = "keras_unroll" if _b(c["unroll"]) else "keras"
    exp = experiments.get("unroll")
    return exp.params.fill({**SEED004_CONFIG, "cell": cell}), ["keras", "keras_unroll", "keras_cell"] if \
        after == "keras_unroll" else ["keras", "keras_cell"], "keras_cell"


def cost_query(choice: Mapping[str, str]) -> dict[str, str]:
    """The unrolling page's query for :func:`cost_point`."""
    from rnnlab.judge.findings import unroll_query

    point, variants, ref = cost_point(choice)
    return unroll_query(point, variants, ref=ref)



CPU_PATH = cudnn.CPU_PATH.removeprefix("CPU: ")  # the generic loop Keras 3 runs without a GPU
RULE_SOURCES = cudnn.SOURCES


def gpu_here() -> bool:
    """Whether this machine may have a GPU (an NVIDIA device node; no TensorFlow imported)."""
    return bool(envinfo.static_env()["gpu_hint"])


def keras_version() -> str:
    return str(envinfo.static_env().get("keras") or "3")


def cost_intro(choice: Mapping[str, str]) -> str:
    """What the cost table compares, in words (Markdown)."""
    point, variants, _ = cost_point(choice)
    return (f"At seed 004's sizes ({fmt.fmt_params(point)}): before, `keras_cell` = `keras.layers.RNN(LSTMCell)`, "
            "the generic loop the seed's construct amounts to under Keras 3; after, the layer chosen above "
            f"(`{'keras_unroll' if 'keras_unroll' in variants else 'keras'}`). Ratios against before.")


def cost_table(unroll_records: Sequence[Record], choice: Mapping[str, str],
               env: Mapping[str, Any] | None = None) -> TableView | None:
    """The unrolling experiment's records at :func:`cost_point` as a comparison (None: not measured yet)."""
    from rnnlab.present import tables

    point, variants, ref = cost_point(choice)
    shown = list(select.pick(unroll_records, point, variants, fingerprint=fingerprint(env),
                             experiment="unroll").shown.values())
    if not shown:
        return None
    # the page shows it as it is (ui.comparison_frame): the ratio cells carry their intervals, no raw bound columns
    return tables.without_bounds(tables.comparison(
        shown, reference=ref, title="seed 004's construct vs its replacement",
        metrics=("fwd_ms", "train_ms", "build_s", "first_call_s", "peak_mem_mb")))
