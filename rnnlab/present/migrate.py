"""The migrate page's content as data (no Streamlit, no TensorFlow).

- the TF1 -> Keras 3 mapping (``mapping.ROWS``) with what the stored ``migrate`` records say about each row;
- the differences a check or the converter measured, against the one tolerance (``rnnlab.core.rules.ATOL``);
- seed 004's construct as the ``seed004_construct`` worker saw it;
- an uploaded TF1 checkpoint: the file names checked before anything runs (:func:`check_upload`), the command that
  converts it in another process (:func:`convert_argv`) and its answer read back (:func:`parse_convert_output`);
- the cuDNN question on the user's settings (:func:`cudnn_question`, Keras 3's rules from ``rnnlab.tf.cudnn``) and
  the unrolling page's configuration that measures the cost of seed 004's construct against the layer that replaces
  it (:func:`cost_query`, :func:`cost_table`);
- :func:`report`: the page's tables for every configuration stored (``python -m rnnlab export --experiment migrate``).

Which record stands for a check is ``rnnlab.judge.select``'s choice, where it ran is ``select``'s wording ("here" only
for this machine's records), and commands come from ``Plan.command()``.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from rnnlab import experiments
from rnnlab.core import envinfo, format as fmt
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record, canonical_json, utc_now
from rnnlab.core.rules import ATOL
from rnnlab.core.views import Report, TableView, to_frame  # noqa: F401  (to_frame: the page's frames)
from rnnlab.engine import api, runner
from rnnlab.experiments.pitfalls import error_summary
from rnnlab.judge import select
from rnnlab.judge.select import provenance, source_note
from rnnlab.tf import cudnn, mapping
from rnnlab.present.pages import Page

PAGE = Page("migrate", "Migrate TF1 to Keras", ":material/swap_horiz:", order=4, about="TF1 to Keras 3 mapping")

EXP = "migrate"
PRESETS = ("quick", "seed")
SIZES = ("units", "batch", "seq_len", "input_dim", "lengths")  # what a preset sets; cell and layers are chosen
CHECK_VARIANTS = tuple(f"check_{r.check}" for r in mapping.ROWS if r.check)
ROWS = {r.variant: r for r in mapping.ROWS if r.variant}  # variant -> mapping row, in the mapping's order
SUMMARY = experiments.get(EXP).summary
CELLS = tuple(experiments.get(EXP).params["cell"].choices)


def preset_params(preset: str, cell: str, layers: int) -> dict:
    if preset not in PRESETS:
        raise RnnlabError(f"preset={preset!r}: expected one of {', '.join(PRESETS)}")
    exp = experiments.get(EXP)
    sizes = {k: v for k, v in exp.presets[preset].items() if k in SIZES}
    return exp.params.fill({**sizes, "cell": cell, "layers": layers})


def plan(preset: str, cell: str, layers: int, variants: Sequence[str]) -> api.Plan:
    return api.plan(EXP, preset=preset, overrides=preset_params(preset, cell, layers), variants=list(variants))


def plans(preset: str, cell: str, layers: int) -> dict[str, api.Plan]:
    """The page's runs: the live checks, the converter demo, seed 004's construct."""
    return {"checks": plan(preset, cell, layers, CHECK_VARIANTS),
            "demo": plan(preset, cell, layers, ["convert_verify"]),
            "seed004": plan(preset, cell, layers, ["seed004_construct"])}


def cli_command(preset: str, cell: str, layers: int, variants: Sequence[str]) -> str:
    """The same run from a terminal (``Plan.command()``)."""
    return plan(preset, cell, layers, variants).command()


def fingerprint(env: Mapping[str, Any] | None) -> dict | None:
    """This environment's fingerprint from ``api.known_env`` (None: unknown, any record of this store counts)."""
    return envinfo.fingerprint(dict(env)) if env else None


def where(recs: Sequence[Record]) -> str:
    """"here" for this machine's records, else whose: "(bundled from <machine>)" (``select.origin``)."""
    recs = [r for r in recs if r is not None]
    if not recs or select.is_here(recs):
        return "here"
    return f"({'; '.join(dict.fromkeys(select.origin(r) for r in recs))})"


def seen_on(recs: Sequence[Record]) -> str:
    if not recs:
        return ""
    tfs = sorted({str(r.env.get("tf")) for r in recs})
    keras = sorted({str(r.env.get("keras")) for r in recs if r.env.get("keras")})
    dates = sorted({r.created_at[:10] for r in recs})
    return (f"TensorFlow {'/'.join(tfs)}" + (f", Keras {'/'.join(keras)}" if keras else "")
            + f"; {source_note(recs)}, {' to '.join([dates[0], dates[-1]] if len(dates) > 1 else dates)}")


def _short_params(p: Mapping[str, Any]) -> str:
    return fmt.fmt_params({k: p[k] for k in ("cell", "layers", "units", "batch", "seq_len", "input_dim")
                           if k in p})


# ----------------------------------------------------------------------------------------------- live checks

@dataclass(frozen=True)
class Live:
    record: Record | None
    exact: bool  # at the page's configuration (else: the best record of another configuration)


def live(records: Sequence[Record], params: Mapping[str, Any], variants: Sequence[str], *,
         fingerprint: Mapping[str, Any] | None = None) -> dict[str, Live]:
    """Per variant, the record at this configuration, else the best one at any configuration (a check that passed
    at other sizes on this install still says the mapping holds here)."""
    sel = select.pick(records, params, variants, fingerprint=fingerprint, experiment=EXP)
    out = {}
    for v in variants:
        if v in sel.shown:
            out[v] = Live(sel.shown[v], True)
        else:
            out[v] = Live(select.best([r for r in records if r.experiment == EXP and r.variant == v], fingerprint),
                          False)
    return out


def verdict(rec: Record | None, *, exact: bool = True) -> str:
    """"pass (1.2e-07)" (the max abs diff) / "FAIL (...)" / "worker failed: ..." / "not run yet"."""
    if rec is None:
        return fmt.NOT_RUN
    if not rec.ok:
        return f"worker failed: {rec.error}"
    m = rec.metrics
    passed = bool(m.get("passed"))
    text = f"{'pass' if passed else 'FAIL'} ({fmt.fmt_value(m.get('max_abs_diff'), 'sci')})"
    if not exact:
        text += f" (at {_short_params(rec.params)})"
    return text


def mapping_table(checks: Mapping[str, Live], params: Mapping[str, Any] | None = None) -> TableView:
    """The mapping, one row per TF1 construct; "checked live" from the stored check records (``params``: the
    configuration they were chosen for, in the title)."""
    rows, raw, recs = [], [], []
    for r in mapping.ROWS:
        lv = checks.get(r.variant) if r.variant else None
        rec = lv.record if lv else None
        if rec is not None:
            recs.append(rec)
        live_text = verdict(rec, exact=lv.exact if lv else True) if r.check else "no live check"
        traps = "\n".join(f"• {t}" for t in r.traps)
        none = "\n".join(f"• {t}" for t in r.no_equivalent) or fmt.MISSING
        rows.append((r.tf1, r.keras3_code, traps, none, live_text))
        raw.append((r.tf1, r.keras3_code, list(r.traps), list(r.no_equivalent),
                    None if rec is None or not rec.ok else bool(rec.metrics.get("passed"))))
    return TableView(title="TF1 RNN constructs -> Keras 3" + (f" ({_short_params(params)})" if params else ""),
                     caption=("checked live: the TF1 construct and its Keras 3 replacement run on identical weights "
                              f"and inputs, max abs difference of outputs and final states against {ATOL:g}; "
                              + (seen_on(recs) if recs else "no check stored yet")),
                     columns=("TF1 construct", "Keras 3 code", "traps", "no Keras 3 equivalent", "checked live"),
                     rows=tuple(rows), raw=tuple(raw), provenance=provenance(recs),
                     code=("Keras 3 code",))


_CASES = {"full": "max |diff|, full lengths", "sequence_length": "max |diff|, with sequence_length",
          "": "max |diff|"}


def diffs_table(diffs: Mapping[str, float], *, atol: float = ATOL, title: str = "differences",
                caption: str = "") -> TableView:
    """``{"full/outputs": d, "sequence_length/cell_0/h": d}`` (or ``{"outputs": d}``) -> one row per tensor, one
    column per case, and whether all of the row is within ``atol``."""
    cells: dict[str, dict[str, float]] = {}
    cases: list[str] = []
    for key, d in diffs.items():
        head, _, rest = key.partition("/")
        case, tensor = (head, rest) if head in ("full", "sequence_length") and rest else ("", key)
        if case not in cases:
            cases.append(case)
        cells.setdefault(tensor, {})[case] = d
    rows, raw = [], []
    for tensor, by_case in cells.items():
        vals = [by_case.get(c) for c in cases]
        ok = all(v is not None and v <= atol for v in vals)
        rows.append((tensor, *[fmt.fmt_value(v, "sci") for v in vals], "pass" if ok else "FAIL"))
        raw.append((tensor, *vals, ok))
    return TableView(title=title, caption=caption,
                     columns=("tensor", *[_CASES[c] for c in cases], f"within {atol:g}"), rows=tuple(rows),
                     raw=tuple(raw))


def ran_note(rec: Record) -> str:
    """What a check or the demo ran: the stack it detected (the cell checks use their own cell, whatever ``cell``
    says), the batch and steps."""
    d = rec.details or {}
    p = rec.params
    sizes = f"batch {p.get('batch')}, {p.get('seq_len')} steps"
    if d.get("lengths") is not None:
        sizes += f", sequence_length {d['lengths']}"
    if d.get("spec"):
        return f"{describe_spec(d['spec'])}; {sizes}"
    return f"{_short_params(p)}; {sizes}"


def check_table(rec: Record) -> TableView:
    """A check's differences, TF1 construct vs its Keras 3 replacement (one row per tensor)."""
    row = ROWS.get(rec.variant)
    name = row.key if row is not None else rec.variant
    return diffs_table(rec.details.get("diffs") or {}, title=f"{name}: TF1 vs Keras 3 ({_short_params(rec.params)})",
                       caption=f"Ran {ran_note(rec)}; {seen_on([rec])}")


def demo_table(rec: Record) -> TableView:
    """The converter demo's differences: the TF1 graph vs the .keras file it wrote."""
    return diffs_table(rec.details.get("diffs") or {}, title=f"converter demo ({_short_params(rec.params)})",
                       caption=f"Ran {ran_note(rec)}; {seen_on([rec])}")


def check_headline(rec: Record, *, exact: bool = True) -> str:
    """"Checked live here: passed; max abs diff ... 1.2e-07, tolerance 1e-05" (whose machine, when not this one)."""
    passed = bool(rec.metrics.get("passed"))
    return (f"Checked live {where([rec])}: {'passed' if passed else 'FAILED'}; max abs diff of outputs and final "
            f"states {rec.metrics.get('max_abs_diff', float('nan')):.1e}, tolerance {ATOL:g}"
            + ("" if exact else f" (measured at {_short_params(rec.params)}, not at the sizes chosen)"))


def demo_headline(rec: Record) -> str:
    m = rec.metrics
    return (f"{'Pass' if m.get('passed') else 'FAIL'}: max abs diff {m.get('max_abs_diff', float('nan')):.1e} "
            f"(outputs {m.get('max_abs_diff_outputs', float('nan')):.1e}, final states "
            f"{m.get('max_abs_diff_states', float('nan')):.1e}) against {ATOL:g}")


def extra_facts(rec: Record) -> list[tuple[str, str]]:
    """The numbers and notes a check stored beside its diffs (traps it demonstrated), as (label, text)."""
    skip = {"diffs", "atol", "spec", "tf1", "keras3_code", "no_equivalent", "not_checked", "lengths", "refused"}
    out = []
    for k, v in (rec.details or {}).items():
        if k in skip:
            continue
        if isinstance(v, bool):
            out.append((k, fmt.fmt_value(v)))
        elif isinstance(v, (int, float)):
            out.append((k, fmt.fmt_value(v, "sci")))
        elif isinstance(v, str):
            out.append((k, v))
    for k, v in ((rec.details or {}).get("refused") or {}).items():
        out.append((f"refused: {k}", str(v)))
    return out


def describe_spec(spec: Mapping[str, Any]) -> str:
    """"2 x BasicLSTMCell (lstm) in scope 'rnn', units 8, input features 4"."""
    cells = spec.get("cells") or []
    classes = sorted({c.get("tf1_class") for c in cells if c.get("tf1_class")})
    units = sorted({c.get("units") for c in cells if c.get("units") is not None})
    return (f"{spec.get('layers')} x {'/'.join(classes)} ({spec.get('cell')}) in scope "
            f"'{spec.get('scope') or ''}', units {'/'.join(map(str, units))}, input features {spec.get('input_dim')}")


# ----------------------------------------------------------------------------------------------- seed 004

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
                     columns=("what ran", "TF_USE_LEGACY_KERAS", "RNN layer", "result", "failed at", "error"),
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


# ----------------------------------------------------------------------------------------------- upload

MAX_UPLOAD_MB = 50
_TABLE_MAGIC = bytes.fromhex("57fb808b247547db")  # the last 8 bytes of every TF checkpoint .index (an SSTable)
_DATA = re.compile(r"^(?P<prefix>.+)\.data-(?P<i>\d{5})-of-(?P<n>\d{5})$")
_SAFE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
_LAYOUT = "a TF1 checkpoint is PREFIX.index plus PREFIX.data-00000-of-00001 (or several shards), and optionally " \
          "the `checkpoint` file"


@dataclass(frozen=True)
class UploadCheck:
    prefix: str  # e.g. "model.ckpt-1000"
    write: tuple[str, ...]  # the files to put in the temporary directory (the .index and the .data shards)
    ignored: tuple[str, ...]  # accepted but not needed (`checkpoint`, PREFIX.meta)
    total_bytes: int


def check_upload(files: Sequence[tuple[str, bytes]], *, max_mb: float = MAX_UPLOAD_MB) -> UploadCheck:
    """Refuse, with a message that says what to upload, anything that is not one consistent TF1 checkpoint.

    ``files``: (name, content) pairs as uploaded. Checks names (one prefix; every shard of one count; nothing
    else), the total size, empty files, and the .index file's table magic number. The content of the weights is
    read by the converter (in its own process), which refuses what it cannot read.
    """
    if not files:
        raise RnnlabError(f"no files: {_LAYOUT}")
    names = [n for n, _ in files]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise RnnlabError(f"{', '.join(dups)} uploaded twice")
    total = sum(len(b) for _, b in files)
    if total > max_mb * 2**20:
        raise RnnlabError(f"{total / 2**20:.1f} MB in total; the limit here is {max_mb:g} MB (convert larger "
                          "checkpoints with `python -m rnnlab convert PREFIX --out model.keras`)")
    for n in names:
        if not _SAFE.match(n) or ".." in n:
            raise RnnlabError(f"{n!r}: not a checkpoint file name (letters, digits, '.', '_' and '-' only)")
    index = [n for n in names if n.endswith(".index")]
    if not index:
        raise RnnlabError(f"no .index file among {', '.join(names)}: {_LAYOUT}")
    if len(index) > 1:
        raise RnnlabError(f"several .index files ({', '.join(index)}): upload one checkpoint at a time")
    prefix = index[0][: -len(".index")]
    shards: dict[int, int] = {}
    ignored = []
    for n in names:
        if n == index[0]:
            continue
        if n in ("checkpoint", prefix + ".meta"):
            ignored.append(n)
            continue
        m = _DATA.match(n)
        if m is None:
            raise RnnlabError(f"{n}: not a file of checkpoint {prefix!r} ({_LAYOUT})")
        if m["prefix"] != prefix:
            raise RnnlabError(f"{n} belongs to checkpoint {m['prefix']!r}, the .index to {prefix!r}: upload the "
                              "files of one checkpoint")
        shards[int(m["i"])] = int(m["n"])
    if not shards:
        index_bytes = dict(files)[index[0]]
        if index_bytes and not index_bytes.endswith(_TABLE_MAGIC):  # a lone junk file: say that first
            raise RnnlabError(f"{index[0]} is not a TensorFlow checkpoint index (it does not end with the table "
                              f"magic number), and {prefix}.data-00000-of-00001 is missing too: upload the .index "
                              "and .data files written by tf.compat.v1.train.Saver")
        raise RnnlabError(f"{prefix}.data-00000-of-00001 is missing: the .index only lists the variables, their "
                          "values are in the .data file(s)")
    counts = sorted(set(shards.values()))
    if len(counts) > 1:
        raise RnnlabError(f"the .data files of {prefix!r} disagree on the number of shards "
                          f"({', '.join(map(str, counts))})")
    n = counts[0]
    missing = [i for i in range(n) if i not in shards]
    extra = [i for i in shards if i >= n]
    if n < 1 or extra:
        raise RnnlabError(f"{prefix}.data-*: shard numbers {', '.join(map(str, sorted(shards)))} do not fit "
                          f"'-of-{n:05d}'")
    if missing:
        raise RnnlabError("missing shard(s): " + ", ".join(f"{prefix}.data-{i:05d}-of-{n:05d}" for i in missing))
    content = dict(files)
    for name in [index[0]] + sorted(k for k in content if _DATA.match(k)):
        if not content[name]:
            raise RnnlabError(f"{name} is empty")
    if not content[index[0]].endswith(_TABLE_MAGIC):
        raise RnnlabError(f"{index[0]} is not a TensorFlow checkpoint index (it does not end with the table magic "
                          "number); upload the .index file written by tf.compat.v1.train.Saver")
    write = (index[0],) + tuple(f"{prefix}.data-{i:05d}-of-{n:05d}" for i in range(n))
    return UploadCheck(prefix=prefix, write=write, ignored=tuple(ignored), total_bytes=total)


def convert_argv(python: str, prefix_path: str, out_path: str, *, cell: str | None = None,
                 forget_bias: float = 1.0, scope: str | None = None) -> list[str]:
    """``python -m rnnlab convert PREFIX --out OUT --json`` with the user's options."""
    argv = [python, "-m", "rnnlab", "convert", prefix_path, "--out", out_path, "--json",
            "--forget-bias", repr(float(forget_bias))]
    if cell:
        argv += ["--cell", cell]
    if scope:
        argv += ["--scope", scope]
    return argv


def parse_convert_output(returncode: int, stdout: str, stderr: str, *, hide: str = "") -> dict:
    """The command's JSON answer (exit 0: verified, 1: converted but not within ATOL); its one-line error as an
    ``RnnlabError`` (exit 2); anything else (a crash) as an ``RnnlabError`` with the end of stderr. ``hide``: a
    temporary directory to strip from messages."""
    def clean(text: str) -> str:
        return text.replace(hide.rstrip("/") + "/", "").replace(hide, "") if hide else text

    if returncode == 2:
        line = next((ln for ln in reversed(stderr.splitlines()) if ln.startswith("rnnlab: error:")), None)
        if line:
            raise RnnlabError(clean(line[len("rnnlab: error:"):].strip()))
    if returncode in (0, 1):
        text = stdout.strip()
        start = text.find("{\n") if not text.startswith("{") else 0
        try:
            res = json.loads(text[start:]) if start >= 0 else None
        except json.JSONDecodeError:
            res = None
        if isinstance(res, dict) and "verification" in res:
            return res
    raise RnnlabError(clean(f"the converter stopped with exit code {returncode}: "
                            f"{crash_line(stderr)[-300:] or 'no message'}"))


def convert_diffs(res: Mapping[str, Any]) -> TableView:
    """The converter's verification (TF1 graph vs the written .keras file), one row per case and tensor."""
    v = res["verification"]
    diffs = {f"{case}/{k}": d for case, c in v["cases"].items() for k, d in c["diffs"].items()}
    lengths = (v["cases"].get("sequence_length") or {}).get("lengths")
    cap = (f"TF1 dynamic_rnn with the checkpoint's weights vs the written .keras file, batch {v.get('batch')}, "
           f"{v.get('seq_len')} steps of random inputs" + (f"; sequence_length = {lengths}" if lengths else ""))
    return diffs_table(diffs, atol=float(v.get("atol", ATOL)), title="Verification of the converted file",
                       caption=cap)


# ----------------------------------------------------------------------------------------------- page helpers

def selection(records: Sequence[Record], params: Mapping[str, Any], env: Mapping[str, Any] | None = None
              ) -> tuple[dict[str, Live], select.Selection, Record | None]:
    """What the page shows at ``params``: the live check per mapping row (:func:`live`), the selection of every
    migrate variant (what stands, what a run would still measure) and seed 004's record (at these params, else the
    best one stored)."""
    fp = fingerprint(env)
    checks = live(records, params, CHECK_VARIANTS, fingerprint=fp)
    sel = select.pick(records, params, ["convert_verify", "seed004_construct", *CHECK_VARIANTS], fingerprint=fp,
                      experiment=EXP)
    s004 = live(records, params, ["seed004_construct"], fingerprint=fp)["seed004_construct"].record
    return checks, sel, s004


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


CONVERT_TIMEOUT_S = 240
_EXC_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b(: .*)?$")


def crash_line(stderr: str) -> str:
    """One line a reader can use from a crashed process's stderr: its exception (``ValueError: ...``), else its
    last line that is no part of a traceback; never the traceback itself."""
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    exc = next((ln for ln in reversed(lines) if _EXC_LINE.match(ln)), None)
    if exc:
        return exc
    plain = [ln for ln in lines if not ln.startswith(("Traceback ", "File \"", "^", "~")) and not ln.startswith("  ")]
    return plain[-1] if plain else ""


def convert_upload(files: Sequence[tuple[str, bytes]], *, python: str, root: str, cell: str | None = None,
                   forget_bias: float = 1.0, scope: str | None = None, timeout_s: float = CONVERT_TIMEOUT_S,
                   mem_limit_mb: float | None = None) -> dict:
    """Check uploaded files (:func:`check_upload`), write them to a temporary directory and convert them with
    ``python -m rnnlab convert`` in a subprocess (TensorFlow starts there, never in the app). Returns ``{"res": the
    command's JSON, "keras": the file's bytes, "name", "ignored"}``; RnnlabError for anything the user can fix, and
    for a conversion over ``timeout_s`` or ``mem_limit_mb`` (its RSS, children included; the process is killed)."""
    chk = check_upload(files)
    content = dict(files)
    with tempfile.TemporaryDirectory(prefix="rnnlab-upload-") as tmp:
        for name in chk.write:
            with open(os.path.join(tmp, name), "wb") as fh:
                fh.write(content[name])
        out = os.path.join(tmp, "model.keras")
        argv = convert_argv(python, os.path.join(tmp, chk.prefix), out, cell=cell, forget_bias=forget_bias,
                            scope=scope)
        environ = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2",
                   "PYTHONPATH": os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)}
        returncode, stdout, stderr = runner.run_limited(argv, cwd=root, env=environ, timeout_s=timeout_s,
                                                 mem_limit_mb=mem_limit_mb, what="the conversion")
        res = parse_convert_output(returncode, stdout, stderr, hide=tmp)
        with open(out, "rb") as fh:
            data = fh.read()
    return {"res": res, "keras": data, "name": f"{chk.prefix}.keras", "ignored": chk.ignored}


# ----------------------------------------------------------------------------------------------- export

def _config_order(params: Mapping[str, Any]) -> tuple:
    cell = {c: i for i, c in enumerate(CELLS)}
    return (cell.get(params.get("cell"), 9), int(params.get("layers") or 0),
            tuple(str(params.get(k)) for k in SIZES), canonical_json(dict(params)))


def tables(records: Sequence[Record], env: Mapping[str, Any] | None = None) -> list[TableView]:
    """Every table the page shows from migrate records, for every configuration stored: the mapping with its live
    checks, each check's differences, the converter demo's, and seed 004's construct."""
    recs = [r for r in records if r.experiment == EXP]
    configs: dict[str, dict] = {}
    for r in recs:
        configs.setdefault(select.config_key(r), dict(r.params))
    out: list[TableView] = []
    for params in sorted(configs.values(), key=_config_order):
        checks, sel, _ = selection(recs, params, env)
        out.append(mapping_table(checks, params))
        for v in CHECK_VARIANTS:
            rec = sel.shown.get(v)
            if rec is not None and rec.ok:
                out.append(check_table(rec))
        for v, make in (("convert_verify", demo_table), ("seed004_construct", seed004_table)):
            rec = sel.shown.get(v)
            if rec is not None and rec.ok:
                out.append(make(rec))
    return out


def report(records: Sequence[Record]) -> Report:
    """The page's tables as a Report: ``python -m rnnlab export --experiment migrate``."""
    from rnnlab.present.report import no_records, page_report

    recs = [r for r in records if r.experiment == EXP]
    if not recs:
        raise no_records(EXP)
    prov = provenance(recs)
    return page_report("rnnlab: migrating TF1 RNN cells to Keras 3",
                       f"migrate on {prov['machine']} ({prov['device']}), TensorFlow {prov['tf']}; {prov['source']}; "
                       f"exported {utc_now()}", recs, tables(recs))


def view(records: Sequence[Record], query: Mapping[str, Any], env: Mapping[str, Any] | None = None) -> Report:
    """What the page shows for its URL settings (``preset``, ``cell``, ``layers``; the chosen row and the cuDNN
    questions do not change the mapping) as a Report: the mapping with its live checks, the checks' headlines as
    takeaways. ``python -m rnnlab export --view migrate?...``; bad settings raise ``RnnlabError``."""
    from rnnlab.core import urlstate
    from rnnlab.present.deck import known, refused

    known(query, ("cell", "layers", "preset", "variants", *CUDNN_OPTIONS), "migrate")
    d = urlstate.decode(query, experiment=experiments.get(EXP), names=["cell", "layers"], defaults={"cell": "lstm", "layers": 2},
                        default_variants=list(ROWS)[:1], extra_keys=["preset", *CUDNN_OPTIONS],
                        allowed_variants=list(ROWS))
    bad = [f"{k}={v!r} is not one of {', '.join(opts)}"
           for k, opts in {"preset": PRESETS, **CUDNN_OPTIONS}.items() if (v := d.extra.get(k, opts[0])) not in opts]
    if d.problems or bad:
        raise refused("migrate", d.problems[0] if d.problems else bad[0])
    params = preset_params(d.extra.get("preset", "quick"), d.values["cell"], d.values["layers"])
    recs = [r for r in records if r.experiment == EXP]
    checks, sel, s004 = selection(recs, params, env)
    return mapping_report(checks, params, sel.shown.get("convert_verify"), s004)


def mapping_report(checks: Mapping[str, Live], params: Mapping[str, Any], demo: Record | None = None,
                   s004: Record | None = None) -> Report:
    """The mapping with its live checks, then the converter's result (``demo``) and seed 004's construct
    (``s004``) when stored; the page's answer and each check's headline are the takeaways: the page's download
    and :func:`view`."""
    from rnnlab.present.report import page_report

    table = mapping_table(checks, params)
    used = [lv.record for lv in checks.values() if lv.record is not None]
    said = answer_lines(checks, demo, s004)
    said += [f"{r.tf1.split('(')[0]}: {check_headline(checks[r.variant].record, exact=checks[r.variant].exact)}."
             for r in mapping.ROWS if r.variant in checks and checks[r.variant].record is not None
             and checks[r.variant].record.ok]
    tables = [table]
    for rec, make in ((demo, demo_table), (s004, seed004_table)):
        if rec is not None and rec.ok:
            tables.append(make(rec))
            used.append(rec)
    rep = page_report("rnnlab: TF1 to Keras 3 mapping", table.caption, used, tables)
    return Report(rep.title, rep.subtitle, rep.tables, rep.charts, rep.provenance, takeaways=tuple(said))


def answer(checks: Mapping[str, Any], demo: Record | None, s004: Record | None) -> str:
    """The page's answer first, in two or three sentences from the records: how many TF1 constructs matched their
    Keras 3 replacement live (and on whose machine), whether the converter round trip passed, and what seed 004's
    construct does; "" when nothing is stored."""
    return " ".join(answer_lines(checks, demo, s004))


def answer_lines(checks: Mapping[str, Any], demo: Record | None, s004: Record | None) -> list[str]:
    """:func:`answer`'s sentences, one a line (a talk deck's takeaways)."""
    recs = [lv.record for lv in checks.values() if lv.record is not None and lv.record.ok]
    said = []
    if recs:
        n_pass = sum(bool(r.metrics.get("passed")) for r in recs)
        left = len(checks) - len(recs)
        said.append(f"Checked live {where(recs)}: **{n_pass} of {len(recs)}** TF1 constructs give the same outputs "
                    f"and final states as their Keras 3 replacement (within {ATOL:g})"
                    + (f"; the other {left} are not stored at these sizes." if left else "."))
    if demo is not None and demo.ok:
        ok = bool(demo.metrics.get("passed"))
        said.append(f"A TF1 checkpoint converted to a .keras file {'matches' if ok else 'does NOT match'} its TF1 "
                    f"graph (max abs diff {demo.metrics.get('max_abs_diff', float('nan')):.1e}).")
    if s004 is not None and s004.ok and (s004.details or {}).get("correction"):
        sentences = s004.details["correction"].split(". ")  # "Seed 004 wraps ...", "It is not: ...", ...
        why = sentences[1] if len(sentences) > 1 else sentences[0]
        said.append(f"Seed 004's \"cuDNN-based\" construct is not what it says: "
                    f"{why.removeprefix('It is not: ').rstrip('.')}.")
    return said
