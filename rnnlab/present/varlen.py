"""Records of ``varlen``, ``padding`` and ``seed003`` -> the tables, charts and plain-words notes the Variable lengths
page shows, and the same views as a Report for ``python -m rnnlab export --experiment varlen|padding|seed003``.
Pure: no Streamlit, no TensorFlow (Altair and pandas only).

Which records stand is :mod:`rnnlab.judge.select`'s choice (one configuration on one machine per table and chart:
:func:`standing`, :func:`selection`); thresholds are :mod:`rnnlab.core.rules`'; seed 003's verdict is the Claims
table's (:func:`seed003_verdict` reads ``claims.verdict`` for the two seed-003 claims); every ratio quoted carries its
interval (``findings.interval``: ``core.stats.ratio_interval`` across rounds, or the timed steps' quartiles) and a
"faster" is ``rules.call`` on it, as the Claims table decides; provenance words are
``select``'s (only this machine's records are "measured here"); colours and source marks are
:mod:`rnnlab.present.style`'s. The page (``pages/varlen.py``) imports only this module, ``engine.api`` and ``ui``.

Numbers go through ``rnnlab.core.format`` so the screen matches the exports. A failed record keeps its row with the
reason in an "error" column; a metric a record does not hold is an en dash, never zero.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

import altair as alt
import pandas as pd

from rnnlab import experiments
from rnnlab.core import wording
from rnnlab.core import envinfo, rules, stats
from rnnlab.core import format as fmt
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import fmt_params  # noqa: F401  (the page's captions)
from rnnlab.core.params import PARAMS, lengths_for
from rnnlab.core.record import Record
from rnnlab.core.views import ChartView, Report, TableView, to_frame  # noqa: F401  (to_frame: the page's tables)
from rnnlab.experiments import padding as padding_exp
from rnnlab.experiments import seed003 as seed003_exp
from rnnlab.experiments import seeds
from rnnlab.experiments import varlen as varlen_exp
from rnnlab.judge import claims, findings, select
from rnnlab.judge.select import provenance, source_note
from rnnlab.present import style
from rnnlab.present.report import chart_view, page_report
from rnnlab.tf.cudnn import mask_ok
from rnnlab.tf.varlen_checks import pre_padded, valid_mask

DASH = fmt.MISSING
EXPERIMENTS = ("varlen", "padding", "seed003")  # the page's tabs, in order
VARIANTS = {"varlen": varlen_exp.VARIANTS, "padding": padding_exp.VARIANTS, "seed003": seed003_exp.VARIANTS}
LABELS = {"varlen": varlen_exp.LABELS, "padding": padding_exp.LABELS, "seed003": seed003_exp.LABELS}
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


def experiment(name: str):
    """The declaration of one of the page's experiments."""
    return experiments.get(name)


def seed_config(name: str) -> Mapping[str, Any] | None:
    """The seed configuration a headline prefers: seed 003's for ``seed003``, the ``seed`` preset (seed 001's
    example) for ``varlen`` and ``padding``."""
    if name == "seed003":
        return seeds.SEED_003
    preset = experiments.get(name).presets.get("seed")
    return None if preset is None else {k: v for k, v in preset.items() if k != "variants"}


def is_seed_config(params: Mapping[str, Any]) -> bool:
    """``params`` are at seed 003's configuration (``seeds.SEED_003``)."""
    return seeds.matches(params, seeds.SEED_003)


def row_lengths(values: Mapping[str, Any]) -> list[int]:
    """The true length of each batch row the page's settings give."""
    return lengths_for(values["lengths"], values["batch"], values["seq_len"], values.get("seed", 0))


def gpu_visible() -> bool:
    """TensorFlow can (probably) see a GPU on this machine (without importing TensorFlow)."""
    return bool(envinfo.static_env().get("gpu_hint"))


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


# -- which records stand -----------------------------------------------------------------------------------------------
def _order(records: Iterable[Record], variants: Sequence[str]) -> list[Record]:
    rank = {v: i for i, v in enumerate(variants)}
    return sorted(records, key=lambda r: rank.get(r.variant, len(rank)))


def _experiment_of(records: Sequence[Record]) -> str | None:
    return records[0].experiment if records else None


def ordered_groups(records: Iterable[Record], name: str, *,
                   here: Mapping[str, Any] | None = None) -> list[select.Group]:
    """``name``'s records as comparable sets (one configuration on one machine each), the one a headline quotes
    first (``select.headline``, asked again for the rest)."""
    left = select.groups(records, experiment=name, here=here)
    out = []
    while left:
        g = select.headline(left, seed=seed_config(name))
        out.append(g)
        left = [x for x in left if x is not g]
    return out


def standing(records: Iterable[Record], name: str | None = None) -> list[Record]:
    """The records one table or chart shows: ``select.headline``'s group among ``records`` (of experiment ``name``,
    by default the first record's), one record per variant, in the experiment's variant order. Records of several
    configurations or machines never share a view."""
    recs = list(records)
    name = name or _experiment_of(recs)
    if name is None:
        return []
    gs = ordered_groups(recs, name)
    return _order(gs[0].records.values(), VARIANTS.get(name, ())) if gs else []


@dataclass(frozen=True)
class Shown:
    """What the page shows for one tab's settings."""
    records: list[Record]  # one configuration on one machine, in the plan's variant order (empty: nothing stored)
    missing: tuple[str, ...]  # variants a run would measure (nothing from this environment)
    others: tuple[str, ...]  # the other machines' stored results for these settings (source notes), not shown


def selection(records: Sequence[Record], plan, env: Mapping[str, Any] | None = None) -> Shown:
    """The records standing for ``plan``'s settings (``select.pick``'s configuration, ``select.headline``'s machine)
    and what a run would measure. ``env``: this machine's known environment (None: unknown)."""
    fp = envinfo.fingerprint(dict(env)) if env else None
    params = plan.points[0]
    sel = select.pick(records, params, plan.variants, fingerprint=fp, experiment=plan.experiment)
    cands = [r for r in records if r.experiment == plan.experiment and r.variant in plan.variants
             and select.same_config(r.params, params, ignore=select.STANDS_IN)]
    gs = ordered_groups(cands, plan.experiment, here=fp)
    if not gs:
        return Shown([], sel.missing, ())
    order = {v: i for i, v in enumerate(plan.variants)}
    shown = sorted(gs[0].records.values(), key=lambda r: order[r.variant])
    return Shown(shown, sel.missing, tuple(g.note() for g in gs[1:]))


def not_here_note(records: Sequence[Record]) -> str | None:
    """For records from another machine (bundled, imported): whose they are, and that Run measures them here."""
    if not records or select.is_here(records):
        return None
    machines = "; ".join(sorted({r.machine for r in records}))
    kind = "Bundled" if {r.source for r in records} == {"baseline"} else "Imported"
    return (f"{kind} results from {machines}: measured on that machine, not on this one. **Run** measures them on "
            "this one.")


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


def _source_words(records: Sequence[Record]) -> str:
    """Whose records, in a legend or a column header: "this machine", "bundled", "imported"."""
    srcs = list(dict.fromkeys(r.source for r in records))
    return "/".join(select.ORIGIN_WORDS.get(s, s) for s in srcs) or "measured"


# -- varlen: the checks ------------------------------------------------------------------------------------------------
def _pf(value: float | None) -> str:
    return DASH if value is None else ("pass" if value >= 0.5 else "FAIL")


def checks_table(records: Sequence[Record], *, title: str | None = None) -> TableView:
    """One row per variant: the three checks pass/FAIL, what its outputs past the length look like, the final
    state's distance from the float64 reference with lengths (the drift of a variant told no lengths)."""
    recs = standing(records, "varlen")
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
    recs = [r for r in standing(records, "varlen") if r.ok and "checks_passed" in r.metrics]
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
    for r in standing(records, "varlen"):
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
        columns=columns).resolve_axis(x="independent").properties(  # no axis under an empty last-row slot
        title=alt.TitleParams("Output norm per time step and batch row; the red bar marks where each row's true "
                              "length ends",
                              anchor="start"))


# -- varlen: the GPU note ----------------------------------------------------------------------------------------------
def cudnn_notes(records: Sequence[Record] = (), *, lengths: Sequence[int] | None = None,
                seq_len: int | None = None) -> list[tuple[bool | None, str]]:
    """Whether Keras 3's fused cuDNN kernel can take this batch's mask (it needs strict right padding), as
    ``(ok, sentence)`` lines: from a record's ``details["cudnn_mask"]`` (and the kernel a GPU run saw), else from
    ``lengths`` and ``seq_len`` (the same rule, computed)."""
    records = standing(records, "varlen")
    rec = next((r for r in records if r.ok and isinstance(r.details.get("cudnn_mask"), Mapping)), None)
    if rec is not None:
        cm = rec.details["cudnn_mask"]
        right, pre = cm.get("right_padded", {}), cm.get("pre_padded", {})
    elif lengths is not None and seq_len is not None:
        mask = valid_mask(lengths, seq_len)
        ok_r, why_r = mask_ok(mask)
        ok_p, why_p = mask_ok(pre_padded(mask))
        right, pre = {"ok": ok_r, "reason": why_r}, {"ok": ok_p, "reason": why_p}
    else:
        return []
    yes = lambda ok: "can" if ok else "cannot"  # noqa: E731
    lines = [(bool(right.get("ok")), f"Padded at the end (as in this batch): cuDNN {yes(right.get('ok'))} take "
                                     f"this mask: {right.get('reason', '')}."),
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
    recs = standing(records, "padding")
    cols = ["variant", "what runs", *(c[1] for c in COST_COLUMNS), "error"]
    rows, raw = [], []
    for r in recs:
        vals = [r.metrics.get(c[0]) for c in COST_COLUMNS]
        rows.append([r.variant, padding_exp.LABELS.get(r.variant, r.variant),
                     *(_num(v, c[2]) for v, c in zip(vals, COST_COLUMNS)), r.error or ""])
        raw.append([r.variant, padding_exp.LABELS.get(r.variant, r.variant), *vals, r.error])
    p = dict(recs[0].params) if recs else {}
    n_seq = p.get("n_sequences")
    extra = (f"{f'{n_seq:,}' if isinstance(n_seq, int) else '?'} sequences, lengths {p.get('lengths')}, "
             f"batch {p.get('batch')}, "
             f"{p.get('buckets')} buckets; median of {p.get('repeats')} epoch{'s' if p.get('repeats') != 1 else ''}; "
             f"{COST_MEANING}" if p else "")
    return _view(title or f"Padding strategies: {fmt.fmt_params(p)}", _caption(recs, extra), cols, rows, raw, recs)


def cost_chart(records: Sequence[Record]) -> alt.HConcatChart | None:
    """Training throughput, padding fed and traces per strategy, side by side: one colour per variant (as on every
    page), the bars' outline dashed by source (this machine solid; bundled or imported dashed)."""
    recs = standing(records, "padding")
    rows = []
    for r in recs:
        if r.ok and "train_seq_per_s" in r.metrics:
            rows.append({"variant": r.variant, "what runs": padding_exp.LABELS.get(r.variant, r.variant),
                         "family": "Keras 3 + mask" if r.variant in padding_exp.KERAS_VARIANTS
                         else "TF1 (seed 001)", "source": style.SOURCE_WORDS.get(r.source, r.source),
                         **{c[0]: r.metrics.get(c[0]) for c in COST_COLUMNS}})
    if not rows:
        return None
    df = pd.DataFrame(rows)
    order = list(df["variant"])
    y = alt.Y("variant:N", sort=order, title=None)
    color = alt.Color("variant:N", scale=style.color_scale(order), legend=None)
    dash = alt.StrokeDash("source:N", scale=style.dash_scale(dict.fromkeys(r.source for r in recs)),
                          legend=alt.Legend(orient="bottom", title="results from", symbolType="square",
                                            symbolFillColor="transparent", symbolStrokeColor="#333333"))

    def bars(metric: str, title: str, fmt_: str):
        return alt.Chart(df).mark_bar(stroke="#333333", strokeWidth=1).encode(
            y=y, x=alt.X(f"{metric}:Q", title=title), color=color, strokeDash=dash,
            tooltip=["variant", "what runs", "family", "source",
                     alt.Tooltip(f"{metric}:Q", format=fmt_, title=title)],
        ).properties(width=230, title=title)

    return alt.hconcat(bars("train_seq_per_s", "training throughput (seq/s)", ",.3g"),
                       bars("wasted_pct", "padding fed (% of steps)", ".1f"),
                       bars("builds", "traces / graphs built", "d")).resolve_scale(color="shared")


def seed001_comparison(records: Sequence[Record]) -> str | None:
    """Seed 001's question in one paragraph: pad everything to the longest for a static_rnn graph, or bucket by
    length for dynamic_rnn? Measured numbers only (one machine); the ``rules`` margin decides "faster"; None
    without both."""
    by = {r.variant: r for r in standing(records, "padding") if r.ok and "train_seq_per_s" in r.metrics}
    s, d = by.get("static_fixed"), by.get("dynamic_bucket")
    if s is None or d is None:
        return None
    sm, dm = s.metrics, d.metrics
    metric = "train_seq_per_s"
    phrase = wording.difference(findings.interval(d, s, metric), kind="rate")  # dynamic/static of the throughput
    faster = ("dynamic_rnn over buckets trains " + phrase.against("static_rnn at the fixed length", md=True)
              if phrase is not None else "no ratio of the two throughputs is known")
    return (f"**Seed 001's choice.** {select.where([s, d])}: static_rnn "
            f"padded to the longest sequence ({_num(sm['train_seq_per_s'])} seq/s, "
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
# the two claims of seed 003's conclusion, as the Claims table judges them (rnnlab.judge.claims)
SEED003_CLAIMS = (("s003_static_runs_faster", "static_rnn runs faster once warm"),
                  ("s003_static_builds_slower", "static_rnn builds slower"))
SEED_LOG = "seed 003's log (2017 GPU)"  # the seed's figures in a legend: never a measurement


def seed003_in_short() -> str:
    """The seed's own figures in a few words (from ``seeds.SEED_003_FIGURES``)."""
    c = seeds.SEED_003_FIGURES
    return (f"static_rnn was slow to start ({fmt.fmt_value(c['static']['first_interval_steps_per_s'])} steps/s) "
            f"and then {fmt.fmt_value(c['static']['steps_per_s'])} steps/s, dynamic_rnn "
            f"{fmt.fmt_value(c['dynamic']['steps_per_s'])} steps/s")


def _seed003_pair(records: Iterable[Record]) -> tuple[list[Record], Record | None, Record | None]:
    recs = standing(records, "seed003")
    by = {r.variant: r for r in recs}
    return recs, by.get("static"), by.get("dynamic")


def seed003_table(records: Sequence[Record], *, title: str | None = None) -> TableView:
    """The seed's own figures (its 2017 log) beside the records', measure by measure, and static/dynamic; the
    measured columns say whose records they are ("this machine", "bundled", "imported"), the caption whose machine."""
    c = seeds.SEED_003_FIGURES
    recs, s, d = _seed003_pair(records)
    w = _source_words(recs)
    cols = ["measure", "seed 003: static (its log)", "seed 003: dynamic (its log)", f"static ({w})",
            f"dynamic ({w})", f"static / dynamic ({w})"]
    rows, raw = [], []
    for metric, name, kind in SEED003_ROWS:
        cs, cd = c["static"].get(metric), c["dynamic"].get(metric)
        ms = s.metrics.get(metric) if s is not None and s.ok else None
        md = d.metrics.get(metric) if d is not None and d.ok else None
        iv = findings.interval(s, d, metric) if ms is not None and md else None
        rows.append([name, _num(cs, kind), _num(cd, kind), _num(ms, kind), _num(md, kind), fmt.fmt_ratio_cell(iv)])
        raw.append([name, cs, cd, ms, md, None if iv is None else iv.mid])
    errors = [f"{r.variant} failed: {r.error}" for r in recs if not r.ok]
    cap = _caption(recs, "seed columns: " + c["label"], *errors)
    p = dict(recs[0].params) if recs else {}
    return TableView(title=title or "Seed 003 reproduced: static_rnn vs dynamic_rnn training"
                     + (f" ({fmt.fmt_params(p)})" if p else ""), caption=cap,
                     columns=tuple(cols), rows=tuple(map(tuple, rows)), raw=tuple(map(tuple, raw)),
                     provenance=provenance(recs))


def seed003_chart(records: Sequence[Record]) -> alt.FacetChart | None:
    """Steps per second, first interval and once warm: the seed's log beside the records, one colour per variant
    (``style``), one mark shape per source (the seed's log a diamond)."""
    c = seeds.SEED_003_FIGURES
    recs, s, d = _seed003_pair(records)
    rows = []
    for v, r in (("static", s), ("dynamic", d)):
        for metric, phase in (("first_interval_steps_per_s", "first interval"), ("steps_per_s", "once warm")):
            rows.append({"variant": v, "phase": phase, "source": SEED_LOG, "steps_per_s": c[v][metric]})
            if r is not None and r.ok and metric in r.metrics:
                rows.append({"variant": v, "phase": phase, "source": style.SOURCE_WORDS.get(r.source, r.source),
                             "steps_per_s": r.metrics[metric]})
    df = pd.DataFrame(rows)
    if (df["source"] != SEED_LOG).sum() == 0:
        return None
    sources = [recs[0].source, SEED_LOG]
    shapes = style.shape_scale(sources)
    config = ("seed 003's configuration" if is_seed_config(recs[0].params) else
              f"not the seed's configuration: {fmt.fmt_params(dict(recs[0].params))}")
    # dots, not bars: the log axis (the seed's GPU and a CPU differ by orders of magnitude) has no zero to start from
    return alt.Chart(df).mark_point(filled=True, size=140, opacity=0.9).encode(
        y=alt.Y("source:N", title=None, sort=list(shapes.domain)),
        yOffset=alt.YOffset("variant:N", sort=list(seed003_exp.VARIANTS)),
        x=alt.X("steps_per_s:Q", title="training steps per second (log scale)", scale=alt.Scale(type="log")),
        color=alt.Color("variant:N", title=None, scale=style.color_scale(seed003_exp.VARIANTS),
                        legend=alt.Legend(orient="bottom")),
        shape=alt.Shape("source:N", title=None, scale=shapes,
                        legend=alt.Legend(orient="bottom", direction="vertical", labelLimit=400)),
        row=alt.Row("phase:N", title=None, sort=["first interval", "once warm"]),
        tooltip=["variant", "phase", "source", alt.Tooltip("steps_per_s:Q", title="steps/s", format=".3g")],
    ).properties(width=300, height=70, title=alt.TitleParams(
        # the source note a line per part (whose machines, a busy machine): one line was wider than the chart
        "Training steps per second", subtitle=[*source_note(recs).split("; "), config], anchor="start"))


@dataclass(frozen=True)
class Seed003Verdict:
    """Does seed 003's conclusion ("static_rnn builds slower but runs faster") hold on these records?"""
    status: str  # one of rules.STATUSES: "holds" only when both claims hold
    claims: tuple[tuple[str, str, Any], ...]  # (claim id, its words, the Claims table's Verdict) for SEED003_CLAIMS
    headline: str  # "Verdict: the conclusion ...", or "Cannot judge ..." when not measured
    paragraphs: tuple[str, ...]  # the seed's figures, the measurements, the Claims table, the slow start, why

    @property
    def text(self) -> str:
        return "\n".join((self.headline, *self.paragraphs))


def conclusion(statuses: Sequence[str]) -> str:
    """The status of a conclusion made of several claims, all of which it asserts: not measured when one is not,
    does not hold when one does not, depends when one depends, too noisy to call when one is, holds when all
    hold."""
    for st in ("not measured", "not measurable here", "does not hold", "depends", "too noisy to call"):
        if st in statuses:
            return st
    return "holds" if statuses else "not measured"


def _v(x: float) -> str:
    return fmt.fmt_value(x, "g")


def _call(iv) -> str:
    """``rules.call`` on an interval (``findings.interval``); no ratio does not hold."""
    return rules.call(iv) if iv is not None else "does not hold"


def _sp(iv, *, invert: bool = False) -> str:
    """", 3.8–4.2x" after a ratio in a sentence ("" without a known spread)."""
    b = fmt.fmt_span(iv, invert=invert)
    return f", {b}x" if b else ""


def _at(recs: Sequence[Record]) -> str:
    """Where the records were measured, after a verb: "here" (this machine only), else whose machine."""
    if select.is_here(recs):
        return "here"
    w = select.where(recs)
    return w[:1].lower() + w[1:]


def seed003_verdict(records: Iterable[Record]) -> Seed003Verdict:
    """Seed 003's conclusion judged on the records one view shows (``standing``: one configuration, one machine),
    with the statuses ``claims.verdict`` gives for ``SEED003_CLAIMS`` on exactly those records, so the page never
    disagrees with the Claims table; the numbers in the words come from the records."""
    from rnnlab.engine import api

    recs, s_rec, d_rec = _seed003_pair(records)
    judged = tuple((cid, words, claims.verdict(cid, recs)) for cid, words in SEED003_CLAIMS)
    status = conclusion([v.status for _, _, v in judged])
    c = seeds.SEED_003_FIGURES
    seed_line = (
        f"Seed 003's claim (its own log, TF 1.x Estimator on a 2017 GPU): {c['conclusion']} -- static "
        f"{c['static']['steps_per_s']:.1f} vs dynamic {c['dynamic']['steps_per_s']:.1f} steps/s once warm "
        f"({c['static']['steps_per_s'] / c['dynamic']['steps_per_s']:.1f}x), after a slow first 100 steps "
        f"({c['static']['first_interval_steps_per_s']:.2f} vs {c['dynamic']['first_interval_steps_per_s']:.2f} "
        "steps/s).")
    table_line = ("The Claims table judges the same records: " + "; ".join(
        f"\u201c{words}\u201d {v.status}" for _, words, v in judged)
        + f" (a difference counts from {fmt.fmt_percent(rules.MARGIN)}).")
    ok = {v: r for v, r in (("static", s_rec), ("dynamic", d_rec))
          if r is not None and r.ok and "steps_per_s" in r.metrics and "build_s" in r.metrics}
    if status in ("not measured", "not measurable here") or len(ok) < 2:
        missing = [v for v in ("static", "dynamic") if v not in ok]
        what = ("no measured " + " and ".join(missing) + " record" if missing else
                "; ".join(v.measured for _, _, v in judged if v.status == status))
        cmd = api.plan("seed003", preset="seed").command()
        return Seed003Verdict(status, judged, f"Cannot judge seed 003's claim yet: {what} (run `{cmd}`).",
                              (seed_line,))

    S, D = ok["static"], ok["dynamic"]
    s, d = S.metrics, D.metrics
    params = dict(S.params)
    at = _at(recs)
    tf = S.env.get("tf")
    iv_steady = findings.interval(S, D, "steps_per_s")  # static/dynamic of steps/s
    iv_build = findings.interval(S, D, "build_s")  # static/dynamic of the build time
    if is_seed_config(params):
        cfg = "the seed's exact configuration"
    else:
        nums = [k for k, v in seeds.SEED_003.items() if isinstance(v, (int, float))]
        smaller = all(params.get(k, v) <= v for k, v in seeds.SEED_003.items() if k in nums)
        cfg = (f"{'a smaller configuration than' if smaller else 'another configuration than'} the seed's (units "
               f"{params.get('units')}, batch {params.get('batch')}, {params.get('seq_len')} steps, lengths "
               f"{params.get('lengths')})")
    measured = (
        f"{select.where(recs)}{f', TensorFlow {tf},' if tf else ''} with {cfg}: once warm, static "
        f"{_v(s['steps_per_s'])} vs dynamic {_v(d['steps_per_s'])} steps/s (static/dynamic = "
        f"{fmt.fmt_ratio_cell(iv_steady)}); "
        f"building the graph took static {_v(s['build_s'])} s vs dynamic {_v(d['build_s'])} s "
        f"({fmt.fmt_ratio_cell(iv_build)}); "
        f"build, session, first step and first interval together: static {_v(s.get('together_s'))} s vs dynamic "
        f"{_v(d.get('together_s'))} s.")

    here = " here" if at == "here" else ""
    run_v, build_v = judged[0][2], judged[1][2]
    margin = fmt.fmt_percent(rules.MARGIN)

    def said(iv, kind: str) -> str:  # the measured difference in the one sentence rule's words
        phrase = wording.difference(iv, kind=kind)
        return phrase.against("dynamic_rnn") if phrase is not None else "with no ratio known"
    runs, builds = said(iv_steady, "rate"), said(iv_build, "time")
    run_part = {"holds": f"static_rnn does run faster{here}: it runs {runs}",
                "does not hold": f"static_rnn does not run faster by the {margin} margin{here}: it runs {runs}",
                rules.NOISY: f"whether static_rnn runs faster{here} is too noisy to call: it runs {runs}",
                }.get(run_v.status, f"whether static_rnn runs faster depends ({run_v.why})")
    build_part = {"holds": f"static_rnn is slower to build, as claimed: it builds {builds}",
                  "does not hold": f"static_rnn is not slower to build by the {margin} margin: it builds {builds}",
                  rules.NOISY: f"whether static_rnn builds slower is too noisy to call: it builds {builds}",
                  }.get(build_v.status, f"whether static_rnn builds slower depends ({build_v.why})")
    headline = f"Verdict: the conclusion {status} {at}: {run_part}, and {build_part}."

    lines = [seed_line, measured, table_line]
    if "first_interval_steps_per_s" in s and "first_interval_steps_per_s" in d:
        fs, fd = s["first_interval_steps_per_s"], d["first_interval_steps_per_s"]
        n = f"its first {params['interval']} steps" if params.get("interval") else "its first interval"
        both = [m for m in S.round_metrics if "first_interval_steps_per_s" in m and "steps_per_s" in m]
        # a slow start: the first interval's rate at least the margin below the warm rate, round by round
        slow = _call(stats.ratio_interval([{"rate": m["first_interval_steps_per_s"]} for m in both],
                                          [{"rate": m["steps_per_s"]} for m in both], "rate")) == "holds"
        lines.append(
            (f"The seed's slow start of static_rnn does show {at}: {_v(fs)} steps/s over {n} "
             f"against {_v(s['steps_per_s'])} after" if slow else
             f"static_rnn shows no slow start {at}: {_v(fs)} steps/s over {n} against "
             f"{_v(s['steps_per_s'])} after")
            + f" (dynamic_rnn: {_v(fd)} then {_v(d['steps_per_s'])}).")
    t = int(params.get("seq_len") or s.get("loop_steps_max") or 0)
    mx = int(s.get("loop_steps_max", 0)) or None
    which_tf = f"TensorFlow {tf}" if tf else "the TensorFlow these records come from"
    if mx is not None and "cell_steps_run" in d and "cell_steps_run" in s:
        lines.append(
            f"Why: every sequence is padded to {t} steps but no row is longer than {mx}. In {which_tf}, "
            f"dynamic_rnn's while_loop stops at max(sequence_length) = {mx} (measured: {int(d['cell_steps_run'])} "
            f"cell steps ran per forward pass), and static_rnn builds all {t} steps but a cond skips every step "
            f"past the longest row (measured: {int(s['cell_steps_run'])} cell steps ran). Both compute about the "
            f"same {mx} steps; the padding is not computed by either. What separates them is overhead: static_rnn "
            f"still evaluates a cond at each of the {max(t - mx, 0)} skipped steps (and again in the gradient), "
            f"dynamic_rnn pays one while_loop iteration per real step; and the {t}-step static graph costs its "
            f"{int(s.get('graph_nodes', 0)):,} nodes in building and in the first step "
            f"({_v(s.get('first_step_s'))} s vs {_v(d.get('first_step_s'))} s).")
    lines.append(
        "The seed's 2017 gap fits a dynamic_rnn whose loop ran to the padded length (every one of the 300 steps, "
        "copying the state through past each row's end) while static_rnn already skipped past the longest row; "
        f"the loop bound at max(sequence_length) is what {which_tf} has. Its numbers came from a GPU and an "
        "Estimator; these are the measurements above.")
    return Seed003Verdict(status, judged, headline, tuple(lines))


# -- one tab's views, and the page as a Report -------------------------------------------------------------------------
TAB_TITLES = {"varlen": "Variable lengths", "padding": "Padding strategies", "seed003": "Seed 003 reproduced"}
CHART_TITLES = {"varlen": "Output norms per step and row",
                "padding": "Padding strategies: throughput, padding fed, traces",
                "seed003": "Seed 003: training steps per second"}


@dataclass(frozen=True)
class TabViews:
    """What one tab shows for one configuration on one machine: its table and chart, as the page draws them and the
    downloads and ``export`` save them."""
    title: str
    table: TableView
    chart: Any  # the Altair chart the page draws (None: nothing to draw)
    chart_view: ChartView | None  # the same chart for the exporters
    records: tuple[Record, ...]


def views(name: str, records: Sequence[Record]) -> TabViews:
    """The table and chart of experiment ``name``'s tab for ``records`` (``standing``: one group)."""
    recs = standing(records, name)
    params = dict(recs[0].params) if recs else {}
    cap = "; ".join(x for x in (fmt.fmt_params(params), source_note(recs)) if x)
    if name == "varlen":
        table, chart = checks_table(recs), heatmap_chart(recs)
    elif name == "padding":
        table, chart = cost_table(recs), cost_chart(recs)
    elif name == "seed003":
        table, chart = seed003_table(recs), seed003_chart(recs)
        cap = table.caption
    else:
        raise RnnlabError(f"the Variable lengths page shows {', '.join(EXPERIMENTS)}, not {name!r}")
    title = f"rnnlab {TAB_TITLES[name]}" + (f": {fmt.fmt_params(params)}" if params else "")
    return TabViews(title, table, chart, chart_view(chart, CHART_TITLES[name], cap, recs), tuple(recs))


def report(records: Iterable[Record]) -> Report:
    """The Variable lengths page as a Report: per experiment (varlen, padding, seed003) and per comparable set of
    ``records`` (one configuration on one machine: ``select.groups``, the headline first), the tab's table and
    chart. What ``python -m rnnlab export --experiment varlen|padding|seed003`` writes."""
    recs = list(records)
    tables, charts, used = [], [], []
    for name in EXPERIMENTS:
        groups = ordered_groups(recs, name)
        for g in groups:
            v = views(name, list(g.records.values()))
            table = v.table
            twins = [x for x in groups if x.config == g.config]
            if len(twins) > 1:  # one configuration from several machines: the titles say whose
                labels = select.machine_labels([next(iter(x.records.values())) for x in twins])
                table = replace(table, title=f"{table.title} ({labels[g.machine]})")
            tables.append(table)
            charts += [v.chart_view] if v.chart_view is not None else []
            used += v.records
    if not tables:
        raise RnnlabError("no stored records of " + ", ".join(EXPERIMENTS) + "; run one first, e.g. "
                          + cli_command("varlen", experiment("varlen").presets["quick"],
                                        experiment("varlen").presets["quick"]["variants"]))
    names = list(dict.fromkeys(r.experiment for r in used))
    return page_report("rnnlab: variable-length sequences",
                       f"{', '.join(names)}: {len(tables)} table{'s' if len(tables) != 1 else ''}; {source_note(used)}",
                       used, tables, charts)


# -- the CLI line ------------------------------------------------------------------------------------------------------
def cli_command(name: str, values: Mapping[str, Any], variants: Sequence[str]) -> str:
    """The same measurement from a terminal (``Plan.command()``), as short as the presets allow: a preset whose
    values these are, else the values that differ from the defaults."""
    from rnnlab.engine import api

    exp = experiments.get(name)
    full = exp.params.fill({k: v for k, v in values.items() if k != "variants"})
    for preset, pv in exp.presets.items():
        pv = {k: v for k, v in pv.items() if k != "variants"}
        if any(isinstance(v, (list, tuple)) for v in pv.values()):
            continue
        if exp.params.fill(pv) == full:
            return api.plan(name, preset=preset, overrides=full, variants=variants).command()
    return api.plan(name, overrides=full, variants=variants).command()


# -- the page's view for ``export --view varlen?tab=...`` ----------------------------------------------------------------
TABS = {"semantics": "varlen", "cost": "padding", "seed003": "seed003"}  # the page's tab (URL "tab") -> experiment


def view(records: Sequence[Record], query: Mapping[str, Any], env: Mapping[str, Any] | None = None) -> Report:
    """What one tab of the page shows for its URL settings (``tab``, the experiment's parameters, ``variants``;
    defaults: the first tab at the seed preset) as a Report: the tab's table and chart, with the tab's findings as
    the takeaways. ``python -m rnnlab export --view varlen?tab=cost``; bad settings raise ``RnnlabError``."""
    from rnnlab.core import urlstate
    from rnnlab.engine import api
    from rnnlab.present.deck import known, refused

    tab = str(query.get("tab") or "semantics")
    if tab not in TABS:
        raise RnnlabError(f"--view varlen: unknown tab {tab!r}; known: {', '.join(TABS)}")
    name = TABS[tab]
    exp = experiment(name)
    names = list(exp.params.defaults())
    known(query, ("tab", "variants", *names), "varlen")
    seed = exp.presets["seed"]
    defaults = {**exp.params.defaults(), **{k: v for k, v in seed.items() if k in names}}
    d = urlstate.decode(query, experiment=name, names=names, defaults=defaults,
                        default_variants=list(seed.get("variants") or exp.default_variants))
    if d.problems:
        raise refused("varlen", d.problems[0])
    plan = api.plan(name, overrides=d.values, variants=d.variants, available_mb=float("inf"))
    shown = selection([r for r in records if r.experiment == name], plan, env).records
    if not shown:
        raise RnnlabError(f"nothing stored for the {tab} tab at {fmt.fmt_params(dict(plan.points[0]))}; measure it "
                          f"with {cli_command(name, d.values, d.variants)}")
    return tab_report(views(name, shown))


def tab_report(tv: TabViews) -> Report:
    """One tab's download (its table and chart) with the tab's findings as takeaways: what the page's buttons save
    and :func:`view` exports."""
    recs = list(tv.records)
    name = _experiment_of(recs)
    if not recs:
        said = []
    elif name == "varlen":
        said = checks_findings(recs)
    elif name == "padding":
        said = [x for x in (seed001_comparison(recs),) if x]
    else:
        said = [seed003_verdict(recs).headline]
    rep = page_report(tv.title, tv.table.caption, recs, [tv.table], [tv.chart_view] if tv.chart_view is not None
                      else [])
    return replace(rep, takeaways=tuple(said))
