"""The Claims page's charts of the knobs, precision and training sections (every variant in its own colour:
``style.color_scale``). Altair and pandas load only when a chart is drawn: the CLI's claims table does not need them.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from rnnlab.core.record import Record
from rnnlab.present import style
from rnnlab.present.claims_sections import Configuration, _order
from rnnlab.present.claims_precision import precision_label

_LABEL = 220  # px for a variant name on a chart axis


def _alt():
    import altair as alt  # loaded only when a chart is drawn: the CLI's claims table does not need it
    import pandas as pd

    return alt, pd


def _variant_color(alt, df, legend: bool = False):
    return alt.Color("variant:N", scale=style.color_scale(df["variant"]), title="variant",
                     legend=alt.Legend(orient="bottom", columns=3) if legend else None)


def _speed_bars(records: Sequence[Record], labels: Mapping[str, str], *, title: str, width: int):
    """Median forward and training step per variant (the training step lighter), whiskers p25-p75."""
    alt, pd = _alt()
    rows = []
    for r in records:
        if not r.ok:
            continue
        for m, name in (("fwd_ms", "forward"), ("train_ms", "train step")):
            if m in r.metrics:
                rows.append({"variant": r.variant, "what": labels.get(r.variant, r.variant), "measure": name,
                             "ms": r.metrics[m], "p25": r.metrics.get(f"{m}_p25"), "p75": r.metrics.get(f"{m}_p75")})
    if not rows:
        return None
    df = pd.DataFrame(rows)
    order = list(dict.fromkeys(df["variant"]))
    measures = ["forward", "train step"]
    base = alt.Chart(df).encode(y=alt.Y("variant:N", sort=order, title=None, axis=alt.Axis(labelLimit=_LABEL)),
                                yOffset=alt.YOffset("measure:N", sort=measures))
    bars = base.mark_bar().encode(
        x=alt.X("ms:Q", title="median step (ms), whiskers p25-p75"), color=_variant_color(alt, df),
        opacity=alt.Opacity("measure:N", sort=measures, scale=alt.Scale(domain=measures, range=[1.0, 0.5]),
                            title=None, legend=alt.Legend(orient="bottom")),
        tooltip=style.tooltips("variant", "what", "measure", alt.Tooltip("ms:Q", format=".3g"),
                                alt.Tooltip("p25:Q", format=".3g"), alt.Tooltip("p75:Q", format=".3g")))
    whiskers = base.mark_rule(color="black").encode(x=alt.X("p25:Q"), x2=alt.X2("p75:Q"))
    return (bars + whiskers).properties(width=width, title=title)


def _bars(records: Sequence[Record], metric: str, *, labels: Mapping[str, str], title: str, x_title: str,
          width: int, fmt_: str = ".3g", log: bool = False):
    alt, pd = _alt()
    rows = [{"variant": r.variant, "what": labels.get(r.variant, r.variant), metric: r.metrics[metric]}
            for r in records if r.ok and metric in r.metrics
            and (not log or r.metrics[metric] > 0)]  # a log axis cannot show 0
    if not rows:
        return None
    df = pd.DataFrame(rows)
    enc = dict(y=alt.Y("variant:N", sort=list(df["variant"]), title=None, axis=alt.Axis(labelLimit=_LABEL)),
               x=alt.X(f"{metric}:Q", title=x_title, scale=alt.Scale(type="log") if log else alt.Undefined),
               color=_variant_color(alt, df), tooltip=style.tooltips("variant", "what", alt.Tooltip(f"{metric}:Q", format=fmt_)))
    mark = alt.Chart(df).mark_circle(size=120, opacity=1) if log else alt.Chart(df).mark_bar()  # no bar from 0 on log
    return mark.encode(**enc).properties(width=width, height=alt.Step(24), title=title)


def _side_by_side(alt, *charts):
    parts = [c for c in charts if c is not None]
    if len(parts) > 1:  # each its own explicit variant -> colour scale (style.color_scale: the same colours)
        return alt.hconcat(*parts).resolve_scale(color="independent")
    return parts[0] if parts else None


def knobs_chart(cfg: Configuration, width: int = 340):
    """Step time (forward and train, with quartiles) and peak memory per knob."""
    from rnnlab.experiments.knobs import LABELS, VARIANTS

    alt, _ = _alt()
    recs = _order(cfg.records, VARIANTS)
    speed = _speed_bars(recs, LABELS, title="Step time per knob", width=width)
    mem = _bars(recs, "peak_mem_mb", labels=LABELS, title="Peak memory per knob", x_title="peak memory (MB)",
                width=width)
    return _side_by_side(alt, speed, mem)


def precision_chart(cfg: Configuration, width: int = 340):
    """Step time per path and dtype, and the drift against float32 on identical weights."""
    from rnnlab.experiments.precision import VARIANTS

    alt, _ = _alt()
    recs = _order(cfg.records, VARIANTS)
    labels = {r.variant: " ".join(precision_label(r.variant)) for r in recs}
    speed = _speed_bars(recs, labels, title="Step time per dtype", width=width)
    drift = _bars(recs, "max_abs_diff", labels=labels, title="Drift against keras_float32 (same weights, inputs)",
                  x_title="max |diff| of outputs and final state (log; float32 itself: 0)", width=width,
                  fmt_=".2e", log=True)
    return _side_by_side(alt, speed, drift)


def training_charts(cfg: Configuration, width: int = 340):
    """(test accuracy per epoch per strategy, training time per epoch per strategy); either may be None."""
    alt, pd = _alt()
    acc, times = [], []
    for r in cfg.records:
        if not r.ok:
            continue
        for i, a in enumerate(r.details.get("acc_curve") or (), start=1):
            acc.append({"variant": r.variant, "epoch": i, "test accuracy": float(a)})
        for i, t in enumerate(r.details.get("epoch_times_s") or (), start=1):
            times.append({"variant": r.variant, "epoch": i, "seconds": float(t)})
    a_chart = t_chart = None
    if acc:
        df = pd.DataFrame(acc)
        a_chart = alt.Chart(df).mark_line(point=True).encode(
            x=alt.X("epoch:Q", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("test accuracy:Q", axis=alt.Axis(format="%"), scale=alt.Scale(zero=False), title="test accuracy"),
            color=_variant_color(alt, df, legend=True),
            tooltip=style.tooltips("variant", "epoch", alt.Tooltip("test accuracy:Q", format=".1%")),
        ).properties(width=width, title="Test accuracy after each epoch")
    if times:
        df = pd.DataFrame(times)
        t_chart = alt.Chart(df).mark_line(point=True).encode(
            x=alt.X("epoch:Q", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("seconds:Q", scale=alt.Scale(type="log"), title="seconds (log)"),
            color=_variant_color(alt, df, legend=True),
            tooltip=style.tooltips("variant", "epoch", alt.Tooltip("seconds:Q", format=".3g")),
        ).properties(width=width, title="Training time per epoch (the first compiles)")
    return a_chart, t_chart
