"""Records of ``varlen``, ``padding`` and ``seed003`` -> the tables, charts and plain-words notes the Variable lengths
page shows and its downloads export. Pure: no Streamlit, no TensorFlow (Altair and pandas only).

Numbers go through ``rnnlab.core.format`` so the screen matches the exports. A failed record keeps its row with the
reason in an "error" column; a metric a record does not hold is an en dash, never zero.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterable, Mapping, Sequence

import altair as alt
import pandas as pd

from rnnlab.core import format as fmt
from rnnlab.core.errors import RnnlabError
from rnnlab.experiments import padding as padding_exp
from rnnlab.experiments import seed003 as seed003_exp
from rnnlab.experiments import varlen as varlen_exp
from rnnlab.core.params import PARAMS, lengths_for
from rnnlab.core.record import Record
from rnnlab.judge.select import provenance, source_note
from rnnlab.core.views import TableView
from rnnlab.tf.varlen_checks import cudnn_mask_ok, pre_padded, valid_mask

DASH = "–"
CHECKS = (("outputs_zero", "check_outputs_zero", "(a) zeros"),
          ("state_carried", "check_state_carried", "(b) state kept"),
          ("final_state", "check_final_state", "(c) final state"))
CHECKS_MEANING = ("(a) every output past a row's length is zero; (b) past the length the state stays the state at "
                  "step length-1; (c) the final state is the state at step length-1; final-state drift and real-step "
                  "error: max |difference| from a float64 NumPy forward pass with lengths (for a variant told no "
                  "lengths, the drift is how far the padding moved the state); zofm=True: the checks the same Keras "
                  "layer passes with zero_output_for_mask=True")
ZOFM_COLUMN = "zofm=True"
PATTERN_WORDS = {"zero": "zeros", "carried": "last output repeated", "other": "keep changing",
                 "none": "no padding in this batch"}


# -- lengths -----------------------------------------------------------------------------------------------------------
_BARE_ROWS = re.compile(r"^\d+(?:\s*[/,;\s]\s*\d+)+$")
_BARE_RANGE = re.compile(r"^(\d+)\s*-\s*(\d+)$")


def normalize_lengths(text: str) -> str:
    """What a person types for the true lengths -> the ``lengths`` value: ``"12 9 5"``, ``"12,9,5"`` or
    ``"12/9/5"`` -> ``"rows:12/9/5"``; ``"20"`` -> ``"fixed:20"``; ``"5-100"`` -> ``"uniform:5-100"``; a value
    already in one of the forms (``full``, ``fixed:N``, ``uniform:A-B``, ``rows:a/b/c``) stays. Refused with the
    forms it takes."""
    raw = " ".join(str(text).split()).strip().lower()
    if raw.isdigit():
        raw = f"fixed:{raw}"
    elif _BARE_RANGE.match(raw):
        a, b = _BARE_RANGE.match(raw).groups()
        raw = f"uniform:{a}-{b}"
    elif _BARE_ROWS.match(raw):
        raw = "rows:" + "/".join(re.split(r"[/,;\s]+", raw))
    elif raw.startswith("rows:"):
        raw = "rows:" + "/".join(x for x in re.split(r"[/,;\s]+", raw[5:]) if x)
    else:
        raw = raw.replace(" ", "")
    try:
        return PARAMS["lengths"].validate(raw)
    except RnnlabError:
        raise RnnlabError(f"lengths {text!r} is not understood: type one length per row (12 9 5 3), one length for "
                          "every row (20), a range drawn at random (5-100), or full") from None


def lengths_note(spec: str, rows: int, seq_len: int, seed: int = 0, *, what: str = "row") -> str:
    """The true lengths a ``lengths`` value gives, in words: each row's when there are few, else the spread; and
    how much of the padded batch is padding."""
    lens = lengths_for(spec, rows, seq_len, seed)
    clipped = "" if not _asks_longer(spec, seq_len) else f"; lengths above seq_len={seq_len} are cut to it"
    pad = 100.0 * (1 - sum(lens) / (len(lens) * seq_len))
    if len(set(lens)) == 1:
        head = f"{len(lens):,} {what}{'s' if len(lens) != 1 else ''}, every true length {lens[0]}"
    elif len(lens) <= 12:
        head = f"true length of each {what}: {', '.join(map(str, lens))}"
    else:
        head = (f"{len(lens):,} {what}s, true lengths {min(lens)} to {max(lens)} (mean "
                f"{sum(lens) / len(lens):.1f})")
    return f"{head}; padded to {seq_len} steps, {pad:.0f}% of the padded steps are padding{clipped}"


def _asks_longer(spec: str, seq_len: int) -> bool:
    nums = [int(x) for x in re.findall(r"\d+", spec)]
    return any(n > seq_len for n in nums)


# -- shared ------------------------------------------------------------------------------------------------------------
def _order(records: Iterable[Record], variants: Sequence[str]) -> list[Record]:
    rank = {v: i for i, v in enumerate(variants)}
    return sorted(records, key=lambda r: rank.get(r.variant, len(rank)))


def _caption(records: Sequence[Record], *extra: str) -> str:
    p = dict(records[0].params) if records else {}
    return "; ".join(x for x in (fmt.fmt_params(p), *extra, source_note(records)) if x)


def _view(title: str, caption: str, columns: list[str], rows: list[list], raw: list[list],
          records: Sequence[Record]) -> TableView:
    if not any(r[-1] for r in raw):  # the error column only when something failed
        columns, rows, raw = columns[:-1], [r[:-1] for r in rows], [r[:-1] for r in raw]
    return TableView(title=title, caption=caption, columns=tuple(columns), rows=tuple(map(tuple, rows)),
                     raw=tuple(map(tuple, raw)), provenance=provenance(records))


def _num(value: Any, kind: str = "g") -> str:
    if kind == "pct100":  # a metric already in percent
        return fmt.fmt_value(None if value is None else value / 100.0, "pct")
    return fmt.fmt_value(value, kind)


# -- varlen: the checks ------------------------------------------------------------------------------------------------
def _pf(value: float | None) -> str:
    return DASH if value is None else ("pass" if value >= 0.5 else "FAIL")


def checks_table(records: Sequence[Record], *, title: str | None = None) -> TableView:
    """One row per variant: the three checks pass/FAIL, what its outputs past the length look like, the final
    state's distance from the float64 reference with lengths (the drift of a variant told no lengths)."""
    recs = _order(records, varlen_exp.VARIANTS)
    cols = ["variant", "what runs", *(c[2] for c in CHECKS), "outputs past length", "final-state drift",
            ZOFM_COLUMN, "real-step error", "error"]
    rows, raw = [], []
    for r in recs:
        m, d = r.metrics, r.details
        checks = [m.get(c[1]) for c in CHECKS]
        zofm = d.get("zero_output_for_mask_true")
        zofm_n = sum(bool(v) for v in zofm.values()) if isinstance(zofm, Mapping) else None
        pattern = d.get("past_length_outputs")
        rows.append([r.variant, varlen_exp.LABELS.get(r.variant, r.variant), *map(_pf, checks),
                     PATTERN_WORDS.get(pattern, pattern or DASH), _num(m.get("final_state_err"), "sci"),
                     DASH if zofm_n is None else f"{zofm_n}/3 pass", _num(m.get("valid_output_err"), "sci"),
                     r.error or ""])
        raw.append([r.variant, varlen_exp.LABELS.get(r.variant, r.variant), *checks, pattern,
                    m.get("final_state_err"), zofm_n, m.get("valid_output_err"), r.error])
    cap = _caption(recs, CHECKS_MEANING)
    return _view(title or f"Variable lengths, checks: {fmt.fmt_params(dict(recs[0].params)) if recs else ''}",
                 cap, cols, rows, raw, recs)


def checks_findings(records: Sequence[Record]) -> list[str]:
    """The checks in plain words: who honours the lengths, what Keras does with a mask, how far the variants
    without lengths drift. One sentence per group of variants (Markdown)."""
    recs = [r for r in _order(records, varlen_exp.VARIANTS) if r.ok and "checks_passed" in r.metrics]
    if not recs:
        return []
    if all(not r.details.get("checks", {}).get("outputs_zero", {}).get("checked", 1) for r in recs):
        return ["Every row is as long as the padded batch, so there is no padding to check: choose shorter "
                "lengths for some rows."]
    out = []
    full = [r for r in recs if r.metrics["checks_passed"] == 3]
    if full:
        out.append("**Honour the lengths** (outputs past the length are zero, the state is carried through, the "
                   "final state is the last real step's): " + ", ".join(f"`{r.variant}`" for r in full) + ".")
    repeat = [r for r in recs if r.metrics["checks_passed"] == 2 and r.metrics.get("check_outputs_zero") == 0
              and r.details.get("past_length_outputs") == "carried"]
    if repeat:
        fixed = all(isinstance(r.details.get("zero_output_for_mask_true"), Mapping)
                    and all(r.details["zero_output_for_mask_true"].values()) for r in repeat)
        out.append("**Keras with a mask**: " + ", ".join(f"`{r.variant}`" for r in repeat)
                   + (" carry" if len(repeat) > 1 else " carries") + " the state through and "
                   + ("return" if len(repeat) > 1 else "returns") + " the right final state, but past each row's "
                     "length the outputs repeat the last real output instead of zeros (Keras' default "
                     "`zero_output_for_mask=False`)"
                   + ("; with `zero_output_for_mask=True` all three checks pass." if fixed else "."))
    drift = [r for r in recs if r.variant.endswith("_nolen")]
    if drift:
        worst = max(r.metrics.get("final_state_err", 0.0) for r in drift)
        out.append("**Without lengths** (" + ", ".join(f"`{r.variant}`" for r in drift) + ") the padding runs "
                   f"through the cell: the final state is off by up to {_num(worst, 'sci')} from the state at "
                   "each row's last real step, and the outputs past the length keep changing.")
    rest = [r for r in recs if r not in full and r not in repeat and r not in drift]
    for r in rest:
        failed = [c[2] for c in CHECKS if r.metrics.get(c[1]) == 0]
        out.append(f"`{r.variant}` fails " + ", ".join(failed) + ".")
    return out


# -- varlen: the heatmap -----------------------------------------------------------------------------------------------
def heatmap_frame(records: Sequence[Record]) -> pd.DataFrame:
    """Long form of every record's ``details["heatmap"]``: one row per (variant, batch row, step block)."""
    rows = []
    for r in _order(records, varlen_exp.VARIANTS):
        hm = r.details.get("heatmap") if r.ok else None
        if not isinstance(hm, Mapping) or not hm.get("z"):
            continue
        steps = list(hm.get("steps") or range(len(hm["z"])))
        t = int(r.params.get("seq_len") or (steps[-1] + 1))
        ends = steps[1:] + [t]
        lengths = list(hm.get("lengths") or [])
        for j, (s, e) in enumerate(zip(steps, ends)):
            for b, norm in enumerate(hm["z"][j]):
                length = lengths[b] if b < len(lengths) else None
                rows.append({"variant": r.variant, "what runs": varlen_exp.LABELS.get(r.variant, r.variant),
                             "row": b, "row_end": b + 1, "step": s, "step_end": e, "norm": norm,
                             "length": length, "padding": "yes" if length is not None and s >= length else "no"})
    return pd.DataFrame(rows)


def heatmap_chart(records: Sequence[Record], *, columns: int = 4) -> alt.FacetChart | None:
    """Output norm per time step (x) and batch row (y), one small panel per variant, on one colour scale (white is
    zero); a red bar marks where each row's true length ends, so what a variant does with the padding (zeros,
    a repeated output, or still moving) shows at a glance."""
    df = heatmap_frame(records)
    if df.empty:
        return None
    t = int(df["step_end"].max())
    n_rows = int(df["row_end"].max())
    width = int(min(190, max(120, 24 * t)))  # four panels a row fit the page's main column
    height = int(min(260, max(90, 22 * n_rows)))
    x = alt.X("step:Q", title="time step", scale=alt.Scale(domain=[0, t], nice=False))
    y = alt.Y("row:O", title="batch row", axis=alt.Axis(labelOverlap="parity"))
    scale = alt.Scale(domainMin=0, range=["#ffffff", "#08306b"], interpolate="rgb")
    # a stroke in the cell's own colour: narrow cells at fractional pixels leave no light seams between them
    cells = alt.Chart().mark_rect(strokeWidth=0.6).encode(
        x=x, x2="step_end:Q", y=y,
        color=alt.Color("norm:Q", title="output norm", scale=scale),
        stroke=alt.Stroke("norm:Q", scale=scale, legend=None),
        tooltip=["variant", "row", alt.Tooltip("step:Q", title="step"), alt.Tooltip("norm:Q", format=".3g"),
                 alt.Tooltip("length:Q", title="true length"), alt.Tooltip("padding:N", title="padding step")])
    ends = alt.Chart().transform_filter("datum.step == 0").mark_tick(color="#d62728", thickness=3).encode(
        x=alt.X("length:Q"), y=y, tooltip=["row", alt.Tooltip("length:Q", title="true length")])
    order = [v for v in varlen_exp.VARIANTS if v in set(df["variant"])]
    return alt.layer(cells, ends, data=df).properties(width=width, height=height).facet(
        facet=alt.Facet("variant:N", sort=order, title=None, header=alt.Header(labelFontWeight="bold")),
        columns=columns).properties(
        title=alt.TitleParams("Output norm per time step and batch row; the red bar marks where each row's true "
                              "length ends",
                              anchor="start"))


# -- varlen: the GPU note ----------------------------------------------------------------------------------------------
def cudnn_notes(records: Sequence[Record] = (), *, lengths: Sequence[int] | None = None,
                seq_len: int | None = None) -> list[tuple[bool | None, str]]:
    """Whether Keras 3's fused cuDNN kernel can take this batch's mask (it needs strict right padding), as
    ``(ok, sentence)`` lines: from a record's ``details["cudnn_mask"]`` (and the kernel a GPU run saw), else from
    ``lengths`` and ``seq_len`` (the same rule, computed)."""
    rec = next((r for r in records if r.ok and isinstance(r.details.get("cudnn_mask"), Mapping)), None)
    if rec is not None:
        cm = rec.details["cudnn_mask"]
        right, pre = cm.get("right_padded", {}), cm.get("pre_padded", {})
    elif lengths is not None and seq_len is not None:
        mask = valid_mask(lengths, seq_len)
        ok_r, why_r = cudnn_mask_ok(mask)
        ok_p, why_p = cudnn_mask_ok(pre_padded(mask))
        right, pre = {"ok": ok_r, "reason": why_r}, {"ok": ok_p, "reason": why_p}
    else:
        return []
    yes = lambda ok: "can" if ok else "cannot"  # noqa: E731
    lines = [(bool(right.get("ok")), f"Padded at the end (as here): cuDNN {yes(right.get('ok'))} take this mask: "
                                     f"{right.get('reason', '')}."),
             (bool(pre.get("ok")), "The same rows padded at the front (`keras.utils.pad_sequences`' default "
                                   f"`padding='pre'`): cuDNN {yes(pre.get('ok'))} take it: {pre.get('reason', '')}.")]
    gpu = [r for r in records if r.ok and isinstance(r.details.get("gpu_kernel"), Mapping)]
    if gpu:
        for name, what in (("right_padded", "padded at the end"), ("pre_padded", "padded at the front")):
            probe = gpu[0].details["gpu_kernel"].get(name) or {}
            if probe.get("error"):
                lines.append((False, f"Measured on {gpu[0].env.get('device_name') or 'the GPU'}, {what}: a default "
                                     f"Keras LSTM with this mask failed: {probe['error']}"))
            else:
                lines.append((probe.get("kernel") == "cudnn",
                              f"Measured on {gpu[0].env.get('device_name') or 'the GPU'}, {what}: a default Keras "
                              f"LSTM with this mask ran the {probe.get('kernel', '?')} kernel."))
    else:
        where = "these records come from a CPU" if rec is not None else "nothing measured yet"
        lines.append((None, f"Which kernel really runs is measured only on a GPU ({where}; Keras uses cuDNN only "
                            "there). The rule above is the check Keras 3 itself makes before it calls cuDNN."))
    return lines


# -- padding: the cost -------------------------------------------------------------------------------------------------
COST_COLUMNS = (("train_seq_per_s", "train (seq/s)", "g"), ("fwd_seq_per_s", "forward (seq/s)", "g"),
                ("wasted_pct", "padding fed", "pct100"), ("loop_wasted_pct", "padding in loop", "pct100"),
                ("n_shapes", "batch shapes", "int"), ("builds", "traces / graphs", "int"),
                ("build_s", "build (s)", "g"), ("first_epoch_train_s", "1st train epoch (s)", "g"),
                ("train_epoch_s", "train epoch (s)", "g"))
COST_MEANING = ("padding fed: the share of the time steps fed that are padding; padding in loop: the share a loop "
                "that stops at each batch's longest row (dynamic_rnn, static_rnn's skip) still runs; batch shapes: "
                "distinct (rows, padded length), each one trace of a shape-specialised tf.function; traces / "
                "graphs: functions traced (forward + training) or TF1 graphs built")


def cost_table(records: Sequence[Record], *, title: str | None = None) -> TableView:
    """One row per padding strategy: throughput, the share of fed steps that is padding, batch shapes and traces
    (each shape is a trace of a shape-specialised function), build time."""
    recs = _order(records, padding_exp.VARIANTS)
    cols = ["variant", "what runs", *(c[1] for c in COST_COLUMNS), "error"]
    rows, raw = [], []
    for r in recs:
        vals = [r.metrics.get(c[0]) for c in COST_COLUMNS]
        rows.append([r.variant, padding_exp.LABELS.get(r.variant, r.variant),
                     *(_num(v, c[2]) for v, c in zip(vals, COST_COLUMNS)), r.error or ""])
        raw.append([r.variant, padding_exp.LABELS.get(r.variant, r.variant), *vals, r.error])
    p = dict(recs[0].params) if recs else {}
    extra = (f"{p.get('n_sequences', '?'):,} sequences, lengths {p.get('lengths')}, batch {p.get('batch')}, "
             f"{p.get('buckets')} buckets; median of {p.get('repeats')} epoch{'s' if p.get('repeats') != 1 else ''}; "
             f"{COST_MEANING}" if p else "")
    return _view(title or f"Padding strategies: {fmt.fmt_params(p)}", _caption(recs, extra), cols, rows, raw, recs)


def cost_chart(records: Sequence[Record]) -> alt.HConcatChart | None:
    """Training throughput, padding fed and traces per strategy, side by side (Keras 3 strategies vs seed 001's
    TF1 pair in two colours)."""
    rows = []
    for r in _order(records, padding_exp.VARIANTS):
        if r.ok and "train_seq_per_s" in r.metrics:
            rows.append({"variant": r.variant, "what runs": padding_exp.LABELS.get(r.variant, r.variant),
                         "family": "Keras 3 + mask" if r.variant in padding_exp.KERAS_VARIANTS
                         else "TF1 (seed 001)",
                         **{c[0]: r.metrics.get(c[0]) for c in COST_COLUMNS}})
    if not rows:
        return None
    df = pd.DataFrame(rows)
    order = list(df["variant"])
    y = alt.Y("variant:N", sort=order, title=None)
    color = alt.Color("family:N", title=None, legend=alt.Legend(orient="bottom"))

    def bars(metric: str, title: str, fmt_: str):
        return alt.Chart(df).mark_bar().encode(
            y=y, x=alt.X(f"{metric}:Q", title=title), color=color,
            tooltip=["variant", "what runs", alt.Tooltip(f"{metric}:Q", format=fmt_, title=title)],
        ).properties(width=230, title=title)

    return alt.hconcat(bars("train_seq_per_s", "training throughput (seq/s)", ",.3g"),
                       bars("wasted_pct", "padding fed (% of steps)", ".1f"),
                       bars("builds", "traces / graphs built", "d")).resolve_scale(color="shared")


def seed001_comparison(records: Sequence[Record]) -> str | None:
    """Seed 001's question in one paragraph: pad everything to the longest for a static_rnn graph, or bucket by
    length for dynamic_rnn? Measured numbers only; None without both."""
    by = {r.variant: r for r in records if r.ok and "train_seq_per_s" in r.metrics}
    s, d = by.get("static_fixed"), by.get("dynamic_bucket")
    if s is None or d is None:
        return None
    sm, dm = s.metrics, d.metrics
    ratio = dm["train_seq_per_s"] / sm["train_seq_per_s"]
    faster = (f"dynamic_rnn over buckets trains **{fmt.fmt_ratio(ratio)} as fast**" if ratio >= 1.1 else
              f"static_rnn at the fixed length trains **{fmt.fmt_ratio(1 / ratio)} as fast**" if ratio <= 1 / 1.1
              else "the two train **about as fast** (within 10%)")
    return (f"**Seed 001's choice.** static_rnn padded to the longest sequence ({_num(sm['train_seq_per_s'])} seq/s, "
            f"{_num(sm.get('wasted_pct'), 'pct100')} of the fed steps are padding, one graph of "
            f"{_num(sm.get('graph_nodes'), 'int')} nodes built in {_num(sm.get('build_s'))} s) against dynamic_rnn "
            f"over {int(d.params.get('buckets', 0)) or '?'} length buckets ({_num(dm['train_seq_per_s'])} seq/s, "
            f"{_num(dm.get('wasted_pct'), 'pct100')} padding, {_num(dm.get('graph_nodes'), 'int')} nodes in "
            f"{_num(dm.get('build_s'))} s): {faster}. Both get `sequence_length`, so neither computes every padded "
            f"step: a length-aware loop stops at each batch's longest row, which leaves "
            f"{_num(sm.get('loop_wasted_pct'), 'pct100')} vs {_num(dm.get('loop_wasted_pct'), 'pct100')} of its steps "
            "as padding.")


# -- seed 003 ----------------------------------------------------------------------------------------------------------
SEED003_ROWS = (("steps_per_s", "steps/s once warm (the seed's steps 101 -> 201)", "g"),
                ("first_interval_steps_per_s", "steps/s over the first interval (the seed's steps 1 -> 101)", "g"),
                ("build_s", "building the graph (s)", "g"),
                ("first_step_s", "first training step (s)", "g"),
                ("together_s", "build + session + first step + first interval (s)", "g"),
                ("graph_nodes", "graph nodes", "int"),
                ("cell_steps_run", "cell steps run per forward pass", "int"),
                ("loop_steps_max", "longest true length (steps a length-aware loop needs)", "int"))


def _pick(records: Sequence[Record], variant: str) -> Record | None:
    return next((r for r in records if r.variant == variant), None)


def seed003_table(records: Sequence[Record], *, title: str | None = None) -> TableView:
    """The seed's own figures (its 2017 log) beside this machine's, measure by measure; static/dynamic here."""
    c = seed003_exp.SEED003_CLAIMS
    s, d = _pick(records, "static"), _pick(records, "dynamic")
    recs = [r for r in (s, d) if r is not None]
    cols = ["measure", "seed 003: static (its log)", "seed 003: dynamic (its log)", "static here", "dynamic here",
            "static / dynamic here"]
    rows, raw = [], []
    for metric, name, kind in SEED003_ROWS:
        cs, cd = c["static"].get(metric), c["dynamic"].get(metric)
        ms = s.metrics.get(metric) if s is not None and s.ok else None
        md = d.metrics.get(metric) if d is not None and d.ok else None
        ratio = ms / md if ms is not None and md else None
        rows.append([name, _num(cs, kind), _num(cd, kind), _num(ms, kind), _num(md, kind), fmt.fmt_ratio(ratio)])
        raw.append([name, cs, cd, ms, md, ratio])
    errors = [f"{r.variant} failed: {r.error}" for r in recs if not r.ok]
    cap = _caption(recs, "seed columns: " + c["label"], *errors)
    return TableView(title=title or "Seed 003 reproduced: static_rnn vs dynamic_rnn training", caption=cap,
                     columns=tuple(cols), rows=tuple(map(tuple, rows)), raw=tuple(map(tuple, raw)),
                     provenance=provenance(recs))


def is_seed_config(params: Mapping[str, Any]) -> bool:
    seed = seed003_exp.EXPERIMENT.presets["seed"]
    return all(params.get(k) == v for k, v in seed.items())


def seed003_chart(records: Sequence[Record]) -> alt.Chart | None:
    """Steps per second, first interval and once warm, static vs dynamic: the seed's log beside this machine."""
    c = seed003_exp.SEED003_CLAIMS
    here = "measured here" + ("" if any(is_seed_config(r.params) for r in records) else " (smaller configuration)")
    rows = []
    for v in seed003_exp.VARIANTS:
        r = _pick(records, v)
        for metric, phase in (("first_interval_steps_per_s", "first interval"), ("steps_per_s", "once warm")):
            rows.append({"variant": v, "phase": phase, "source": "seed 003's log (2017 GPU)",
                         "steps_per_s": c[v][metric]})
            if r is not None and r.ok and metric in r.metrics:
                rows.append({"variant": v, "phase": phase, "source": here, "steps_per_s": r.metrics[metric]})
    df = pd.DataFrame(rows)
    if (df["source"] == here).sum() == 0:
        return None
    # dots, not bars: the log axis (the seed's GPU and a CPU differ by orders of magnitude) has no zero to start from
    return alt.Chart(df).mark_point(filled=True, size=140, opacity=0.9).encode(
        y=alt.Y("variant:N", title=None, sort=list(seed003_exp.VARIANTS)),
        x=alt.X("steps_per_s:Q", title="training steps per second (log scale)", scale=alt.Scale(type="log")),
        color=alt.Color("source:N", title=None,
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=400)),
        shape=alt.Shape("source:N", title=None),
        row=alt.Row("phase:N", title=None, sort=["first interval", "once warm"]),
        tooltip=["variant", "phase", "source", alt.Tooltip("steps_per_s:Q", title="steps/s", format=".3g")],
    ).properties(width=300, height=60, title=alt.TitleParams("Training steps per second", anchor="start"))


def seed003_verdict_parts(records: Sequence[Record]) -> tuple[str, list[str]]:
    """``seed003_verdict`` split for the screen: the "Verdict:" sentence, and the other paragraphs in order."""
    text = seed003_exp.seed003_verdict(records)
    lines = [x for x in text.split("\n") if x.strip()]
    verdict = next((x for x in lines if x.startswith("Verdict:")), "")
    return verdict, [x for x in lines if x != verdict]


# -- the CLI line ------------------------------------------------------------------------------------------------------
def cli_command(experiment: str, values: Mapping[str, Any], variants: Sequence[str]) -> str:
    """The same measurement from a terminal, as short as the presets allow."""
    from rnnlab.experiments import get

    exp = get(experiment)
    defaults = exp.params.defaults()
    for name, preset in exp.presets.items():
        pv = {k: v for k, v in preset.items() if k != "variants"}
        if any(isinstance(v, (list, tuple)) for v in pv.values()):
            continue
        if all(values.get(k, defaults.get(k)) == pv.get(k, defaults.get(k)) for k in set(values) | set(pv)):
            want = list(preset.get("variants") or exp.default_variants)
            extra = "" if list(variants) == want else f" --variants {','.join(variants)}"
            return f"python -m rnnlab run {experiment} --preset {name}{extra}"
    sets = " ".join(f"--set {k}={_text(v)}" for k, v in values.items() if v != defaults.get(k))
    var = "" if list(variants) == list(exp.default_variants) else f" --variants {','.join(variants)}"
    return " ".join(x for x in (f"python -m rnnlab run {experiment}", sets) if x) + var


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():
        return str(int(v))
    return str(v)
