"""Pure functions from records to Altair charts (data inlined, so a chart can be exported as it is)."""

from __future__ import annotations

from typing import Sequence

import altair as alt
import pandas as pd

from rnnlab.core import format as fmt
from rnnlab.core.record import Record
from rnnlab.experiments import variant_label

_W = 520


def _frame(records: Sequence[Record], metrics: Sequence[str]) -> pd.DataFrame:
    rows = []
    for r in records:
        if not r.ok:
            continue
        row = {"variant": r.variant, "what runs": variant_label(r.experiment, r.variant)}
        row.update({k: r.params.get(k) for k in ("cell", "seq_len", "batch", "units", "layers")})
        for m in metrics:
            row[m] = r.metrics.get(m)
        rows.append(row)
    return pd.DataFrame(rows)


def step_time(records: Sequence[Record], metric: str = "fwd_ms") -> alt.Chart | None:
    """Median step time per variant as bars, with the quartiles as whiskers."""
    lo, hi = f"{metric}_p25", f"{metric}_p75"
    df = _frame(records, [metric, lo, hi])
    if df.empty or df[metric].isna().all():
        return None
    df = df.dropna(subset=[metric])
    title = fmt.label(metric)
    base = alt.Chart(df).encode(y=alt.Y("variant:N", sort="x", title=None))
    bars = base.mark_bar().encode(
        x=alt.X(f"{metric}:Q", title=f"{title}: median, whiskers p25-p75"),
        color=alt.Color("variant:N", legend=None),
        tooltip=["variant", "what runs", alt.Tooltip(f"{metric}:Q", format=".3g"),
                 alt.Tooltip(f"{lo}:Q", format=".3g"), alt.Tooltip(f"{hi}:Q", format=".3g")])
    whiskers = base.mark_rule(color="black").encode(x=f"{lo}:Q", x2=f"{hi}:Q")
    return (bars + whiskers).properties(width=_W, title=title)


def build_and_graph(records: Sequence[Record]) -> alt.Chart | None:
    df = _frame(records, ["build_s", "graph_nodes", "first_call_s"])
    if df.empty or df["build_s"].isna().all():
        return None
    b = alt.Chart(df).mark_bar().encode(
        y=alt.Y("variant:N", sort="-x", title=None), x=alt.X("build_s:Q", title="build / trace (s)"),
        color=alt.Color("variant:N", legend=None),
        tooltip=["variant", alt.Tooltip("build_s:Q", format=".3g"), alt.Tooltip("first_call_s:Q", format=".3g")],
    ).properties(width=_W // 2, title="Build / trace time")
    g = alt.Chart(df.dropna(subset=["graph_nodes"])).mark_bar().encode(
        y=alt.Y("variant:N", sort="-x", title=None), x=alt.X("graph_nodes:Q", title="graph nodes"),
        color=alt.Color("variant:N", legend=None), tooltip=["variant", "graph_nodes"],
    ).properties(width=_W // 2, title="Graph size (nodes, incl. loop bodies)")
    return alt.hconcat(b, g)


def memory(records: Sequence[Record]) -> alt.Chart | None:
    df = _frame(records, ["peak_mem_mb"])
    if df.empty or df["peak_mem_mb"].isna().all():
        return None
    return alt.Chart(df).mark_bar().encode(
        y=alt.Y("variant:N", sort="-x", title=None), x=alt.X("peak_mem_mb:Q", title="peak memory (MB)"),
        color=alt.Color("variant:N", legend=None),
        tooltip=["variant", alt.Tooltip("peak_mem_mb:Q", format=".3g")],
    ).properties(width=_W, title="Peak memory per variant (own process)")


def gflops(records: Sequence[Record]) -> alt.Chart | None:
    """Achieved GFLOP/s per variant against the device's measured matmul rate (a dashed rule)."""
    df = _frame(records, ["gflops", "roofline_frac"])
    if df.empty or df["gflops"].isna().all():
        return None
    rates = sorted(float(r.details.get("matmul_gflops") or r.env.get("matmul_gflops") or 0) for r in records if r.ok)
    rates = [x for x in rates if x > 0]
    rate = rates[len(rates) // 2] if rates else None  # median of the rates the workers measured
    bars = alt.Chart(df).mark_bar().encode(
        y=alt.Y("variant:N", sort="-x", title=None), x=alt.X("gflops:Q", title="achieved GFLOP/s (forward)"),
        color=alt.Color("variant:N", legend=None),
        tooltip=["variant", alt.Tooltip("gflops:Q", format=".3g"), alt.Tooltip("roofline_frac:Q", format=".1%")])
    title = "Achieved GFLOP/s" + (f" vs matmul rate {rate:,.0f} GFLOP/s (dashed)" if rate else "")
    chart = bars
    if rate:
        rule = alt.Chart(pd.DataFrame({"rate": [rate]})).mark_rule(strokeDash=[6, 4], color="red").encode(x="rate:Q")
        chart = bars + rule
    return chart.properties(width=_W, title=title)


def sweep(records: Sequence[Record], *, x: str = "seq_len", metric: str = "fwd_ms", log: bool = True
          ) -> alt.Chart | None:
    """Cost against a swept parameter, one line per variant (log axes where it helps)."""
    df = _frame(records, [metric])
    if df.empty or x not in df or df[x].nunique() < 2 or df[metric].isna().all():
        return None
    scale = alt.Scale(type="log") if log else alt.Scale()
    return alt.Chart(df.dropna(subset=[metric])).mark_line(point=True).encode(
        x=alt.X(f"{x}:Q", scale=scale, title=x), y=alt.Y(f"{metric}:Q", scale=scale, title=fmt.label(metric)),
        color=alt.Color("variant:N"), tooltip=["variant", x, alt.Tooltip(f"{metric}:Q", format=".3g")],
    ).properties(width=_W, title=f"{fmt.label(metric)} against {x}")
