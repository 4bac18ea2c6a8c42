"""Pure functions from records to Altair charts (data inlined, so a chart can be exported as it is).

One look everywhere (``rnnlab.present.style``): a variant has its own colour in every chart whatever else is
selected; the source of a mark is encoded too (bars: the outline's dash; sweep lines: the dash and the point
shape), with a legend on every chart (charts side by side are each whole: one width, one legend each). Tick
labels follow one rule per axis (``format.AXIS_LABELS``, set by ``report.chart_spec``). Records are never joined
across machines (``rnnlab.judge.select.machine_key``): a sweep has one line per (variant, machine), and a bar chart
that holds one variant from two machines names the machine on its bar. The matmul rate a chart quotes is ``select.matmul_rate``, the number the sidebar shows.
"""

from __future__ import annotations

from typing import Sequence

import altair as alt
import pandas as pd

from rnnlab.core import format as fmt
from rnnlab.core import stats
from rnnlab.core.record import Record
from rnnlab.experiments import variant_label
from rnnlab.judge import select
from rnnlab.present import style

_W = 520
_PARAMS = ("cell", "seq_len", "batch", "units", "layers")


def _frame(records: Sequence[Record], metrics: Sequence[str]) -> pd.DataFrame:
    """One row per successful record: variant, its label, key params, ``metrics``; its source and machine; ``bar``:
    the variant, or "variant (machine)" when the records hold a variant from more than one machine."""
    recs = [r for r in records if r.ok]
    labels = select.machine_labels(recs)
    counts: dict[str, int] = {}
    for r in recs:
        counts[r.variant] = counts.get(r.variant, 0) + 1
    rows = []
    for r in recs:
        mk = select.machine_key(r)
        row = {"variant": r.variant, "what runs": variant_label(r.experiment, r.variant),
               "bar": r.variant if counts[r.variant] == 1 else f"{r.variant} ({labels[mk]})",
               "source": style.SOURCE_WORDS.get(r.source, r.source), "machine": labels[mk], "key": r.key}
        row.update({k: r.params.get(k) for k in _PARAMS})
        for m in metrics:
            row[m] = r.metrics.get(m)
        rows.append(row)
    return pd.DataFrame(rows)


def _color(df: pd.DataFrame, legend: bool = False) -> alt.Color:
    return alt.Color("variant:N", scale=style.color_scale(df["variant"]), title="variant",
                     legend=alt.Legend() if legend else None)


def _sources(df: pd.DataFrame) -> list[str]:
    """The record sources present, as ``style`` keys ("local", "baseline", ...), for its scales."""
    back = {w: s for s, w in style.SOURCE_WORDS.items()}
    return [back.get(w, w) for w in dict.fromkeys(df["source"])]


def _dash(df: pd.DataFrame) -> alt.StrokeDash:
    return alt.StrokeDash("source:N", scale=style.dash_scale(_sources(df)), title="source",
                          legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=2))


def _sort(x: str, order: str) -> alt.EncodingSortField:
    return alt.EncodingSortField(field=x, op="min", order=order)


def _bars(df: pd.DataFrame, x: str, x_title: str, *, order: str = "descending", tooltip: Sequence = ()
          ) -> alt.Chart:
    """Horizontal bars, one per ``bar``: the variant's colour, the source as the outline's dash (legend)."""
    return alt.Chart(df).mark_bar(stroke="#333333", strokeWidth=1.2).encode(
        y=alt.Y("bar:N", sort=_sort(x, order), title=None), x=alt.X(f"{x}:Q", title=x_title), color=_color(df),
        strokeDash=_dash(df), tooltip=style.tooltips("variant", "what runs", "source", "machine", *tooltip))


def step_time(records: Sequence[Record], metric: str = "fwd_ms") -> alt.Chart | None:
    """Median step time per variant as bars, with the quartiles as whiskers."""
    lo, hi = f"{metric}_p25", f"{metric}_p75"
    df = _frame(records, [metric, lo, hi])
    if df.empty or df[metric].isna().all():
        return None
    df = df.dropna(subset=[metric])
    title = fmt.label(metric)
    bars = _bars(df, metric, f"{title}: median, whiskers p25-p75", order="ascending",
                 tooltip=[alt.Tooltip(f"{metric}:Q", format=".3g"), alt.Tooltip(f"{lo}:Q", format=".3g"),
                          alt.Tooltip(f"{hi}:Q", format=".3g")])
    whiskers = alt.Chart(df).mark_rule(color="black").encode(
        y=alt.Y("bar:N", sort=_sort(metric, "ascending"), title=None), x=f"{lo}:Q", x2=f"{hi}:Q")
    return (bars + whiskers).properties(width=_W, title=title)


def build_time(records: Sequence[Record]) -> alt.Chart | None:
    """Building the graph or tracing the function, per variant (the first call beside it in the tooltip)."""
    df = _frame(records, ["build_s", "first_call_s"])
    if df.empty or df["build_s"].isna().all():
        return None
    return _bars(df.dropna(subset=["build_s"]), "build_s", "build / trace (s)",
                 tooltip=[alt.Tooltip("build_s:Q", format=".3g"), alt.Tooltip("first_call_s:Q", format=".3g")]
                 ).properties(width=_W, title="Build / trace time")


def graph_size(records: Sequence[Record]) -> alt.Chart | None:
    """The graph's nodes per variant, loop bodies included (``graph_nodes``)."""
    df = _frame(records, ["graph_nodes"])
    if df.empty or df["graph_nodes"].isna().all():
        return None
    return _bars(df.dropna(subset=["graph_nodes"]), "graph_nodes", "graph nodes", tooltip=["graph_nodes"]
                 ).properties(width=_W, title="Graph size (nodes, incl. loop bodies)")


def memory(records: Sequence[Record]) -> alt.Chart | None:
    df = _frame(records, ["peak_mem_mb"])
    if df.empty or df["peak_mem_mb"].isna().all():
        return None
    return _bars(df.dropna(subset=["peak_mem_mb"]), "peak_mem_mb", "peak memory (MB)",
                 tooltip=[alt.Tooltip("peak_mem_mb:Q", format=".3g")]
                 ).properties(width=_W, title="Peak memory per variant (own process)")


def matmul_rates(records: Sequence[Record]) -> dict[str, float]:
    """machine label -> the machine's matmul rate (``select.matmul_rate``) for the successful ``records``."""
    recs = [r for r in records if r.ok]
    labels = select.machine_labels(recs)
    out: dict[str, float] = {}
    for r in recs:
        rate = select.matmul_rate(r)
        if rate is not None:
            out.setdefault(labels[select.machine_key(r)], rate)
    return out


def gflops(records: Sequence[Record]) -> alt.Chart | None:
    """Achieved GFLOP/s per variant against the machine's matmul rate (a dashed rule per machine): the rate of
    ``select.matmul_rate``, the number the sidebar shows for this machine."""
    df = _frame(records, ["gflops", "roofline_frac"])
    if df.empty or df["gflops"].isna().all():
        return None
    bars = _bars(df.dropna(subset=["gflops"]), "gflops", "achieved GFLOP/s (forward)",
                 tooltip=[alt.Tooltip("gflops:Q", format=".3g"), alt.Tooltip("roofline_frac:Q", format=".1%")])
    rates = matmul_rates(records)
    if len(rates) == 1:
        title = f"Achieved GFLOP/s vs matmul rate {fmt.fmt_rate(next(iter(rates.values())))} (dashed)"
    elif rates:
        title = "Achieved GFLOP/s vs each machine's matmul rate (dashed)"
    else:
        title = "Achieved GFLOP/s"
    chart = bars
    if rates:
        rdf = pd.DataFrame({"rate": list(rates.values()), "machine": list(rates)})
        rule = alt.Chart(rdf).mark_rule(strokeDash=[6, 4], color="red").encode(
            x=alt.X("rate:Q"), tooltip=style.tooltips("machine", alt.Tooltip("rate:Q", format=",.0f", title="matmul GFLOP/s")))
        chart = bars + rule
    return chart.properties(width=_W, title=title)


def sweep(records: Sequence[Record], *, x: str = "seq_len", metric: str = "fwd_ms", log: bool = True
          ) -> alt.LayerChart | None:
    """Cost against a swept parameter: one line per variant and machine (``select.series``), so no line runs
    through two machines' points; the variant's colour, the source as dash and point shape (legend), or the machine
    when the records come from more than one (its legend names each). Where records
    have two rounds or more, an error bar spans each point's rounds (min to max: ``stats.round_values``)."""
    recs = [r for r in records if r.ok and x in r.params and r.metrics.get(metric) is not None]
    series = select.series(recs, x)
    labels = select.machine_labels(recs)
    configs = {select.config_key(g.config) for g in series}
    rows = []
    for g in series:
        where = labels[g.machine] + (f", {fmt.fmt_params(dict(g.config))}" if len(configs) > 1 else "")
        for r in g.records.values():
            vals = stats.round_values(r.round_metrics, metric) if len(r.rounds) >= 2 else []
            rows.append({"variant": r.variant, "what runs": variant_label(r.experiment, r.variant),
                         "line": f"{r.variant} · {where}", "source": style.SOURCE_WORDS.get(r.source, r.source),
                         "machine": labels[g.machine], "key": r.key, x: r.params[x], metric: r.metrics[metric],
                         "rounds": len(vals) or 1, "round_min": min(vals) if len(vals) >= 2 else None,
                         "round_max": max(vals) if len(vals) >= 2 else None})
    df = pd.DataFrame(rows)
    if df.empty or df[x].nunique() < 2:
        return None
    scale = alt.Scale(type="log") if log else alt.Scale()
    xs = sorted(float(v) for v in df[x].unique())
    # the swept axis spans the points measured (25 to 400, not a nice 10 to 1000), a tick at each of them
    x_scale = alt.Scale(type="log" if log else "linear", domain=[xs[0], xs[-1]], nice=False)
    base = alt.Chart(df).encode(
        x=alt.X(f"{x}:Q", scale=x_scale, title=x, axis=alt.Axis(values=xs)),
        y=alt.Y(f"{metric}:Q", scale=scale, title=fmt.label(metric)),
        color=_color(df, legend=True), detail=alt.Detail("line:N"),
        tooltip=style.tooltips("variant", "machine", "source", x, alt.Tooltip(f"{metric}:Q", format=".3g"), "rounds"))
    if df["machine"].nunique() > 1:  # no chart mixes machines without saying so: each machine its dash and shape
        whole = alt.Legend(labelLimit=0)  # a machine's name whole ("bundled from AMD EPYC, 2 cores")
        lines = base.mark_line().encode(strokeDash=alt.StrokeDash("machine:N", title="machine", legend=whole))
        points = base.mark_point(filled=True, size=45).encode(
            shape=alt.Shape("machine:N", title="machine", legend=whole))
    else:
        lines = base.mark_line().encode(strokeDash=_dash(df))
        points = base.mark_point(filled=True, size=45).encode(
            shape=alt.Shape("source:N", scale=style.shape_scale(_sources(df)), title="source"))
    chart = lines + points
    spread = df.dropna(subset=["round_min", "round_max"])
    title = f"{fmt.label(metric)} against {x}"
    if not spread.empty:
        bars = alt.Chart(spread).mark_errorbar(ticks=True).encode(
            x=alt.X(f"{x}:Q", scale=x_scale), y=alt.Y("round_min:Q", scale=scale, title=fmt.label(metric)),
            y2=alt.Y2("round_max:Q"), color=_color(spread), detail=alt.Detail("line:N"),
            tooltip=style.tooltips("variant", "machine", x, "rounds",
                                   alt.Tooltip("round_min:Q", format=".3g", title="min"),
                                   alt.Tooltip("round_max:Q", format=".3g", title="max")))
        chart = chart + bars
        title += " (bars: min to max across rounds)"
    return chart.properties(width=_W, title=title)
