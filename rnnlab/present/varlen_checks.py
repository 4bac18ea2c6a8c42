"""The Variable lengths page's first tab, what padding does (experiment ``varlen``): the checks per variant
(:func:`checks_table`, :func:`checks_findings`), where the padding is in the outputs (:func:`heatmap_chart`) and
whether Keras' fused cuDNN kernel can take the mask (:func:`cudnn_notes`). Pure: no Streamlit, no TensorFlow.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import altair as alt
import pandas as pd

from rnnlab.core import format as fmt
from rnnlab.core.record import Record
from rnnlab.core.views import Column, TableView
from rnnlab.experiments import varlen as varlen_exp
from rnnlab.present import style
from rnnlab.present.tables import ERROR, VARIANT, WHAT_RUNS
from rnnlab.present.varlen_records import DASH, _caption, _num, _view, standing
from rnnlab.tf.cudnn import mask_ok
from rnnlab.tf.varlen_checks import pre_padded, valid_mask

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



def _pf(value: float | None) -> str:
    return DASH if value is None else ("pass" if value >= 0.5 else "FAIL")


def checks_table(records: Sequence[Record], *, title: str | None = None) -> TableView:
    """One row per variant: the three checks pass/FAIL, what its outputs past the length look like, the final
    state's distance from the float64 reference with lengths (the drift of a variant told no lengths)."""
    recs = standing(records, "varlen")
    # a check's pass/FAIL and the zofm count ("2/3 pass") are words, whatever the raw figure behind them
    cols = [VARIANT, WHAT_RUNS, *(Column(c[2], "text") for c in CHECKS), "outputs past length", "final-state drift",
            Column(ZOFM_COLUMN, "text"), "real-step error", ERROR]
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
        x=x, x2=alt.X2("step_end:Q"), y=y,
        color=alt.Color("norm:Q", title="output norm", scale=scale),
        stroke=alt.Stroke("norm:Q", scale=scale, legend=None),
        tooltip=style.tooltips("variant", "row", alt.Tooltip("step:Q", title="step"), alt.Tooltip("norm:Q", format=".3g"),
                               alt.Tooltip("length:Q", title="true length"),
                               alt.Tooltip("padding:N", title="padding step")))
    ends = alt.Chart().transform_filter("datum.step == 0").mark_tick(color="#d62728", thickness=3).encode(
        x=alt.X("length:Q"), y=y, tooltip=style.tooltips("row", alt.Tooltip("length:Q", title="true length")))
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
