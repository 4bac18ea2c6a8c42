"""The Variable lengths page's second tab, what padding costs (experiment ``padding``): one row per padding strategy
(:func:`cost_table`, :func:`cost_chart`) and seed 001's static-fixed vs dynamic-bucketed pair in words
(:func:`seed001_comparison`). Pure: no Streamlit, no TensorFlow.
"""

from __future__ import annotations

from typing import Sequence

import altair as alt
import pandas as pd

from rnnlab.core import format as fmt
from rnnlab.core import wording
from rnnlab.core.record import Record
from rnnlab.core.views import Column, TableView
from rnnlab.experiments import padding as padding_exp
from rnnlab.judge import findings, select
from rnnlab.present import style
from rnnlab.present.tables import ERROR, VARIANT, WHAT_RUNS
from rnnlab.present.varlen_records import _caption, _num, _view, standing

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
    cols = [VARIANT, WHAT_RUNS, *(Column(c[1], "number", "metric", key=c[0]) for c in COST_COLUMNS), ERROR]
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
            tooltip=style.tooltips("variant", "what runs", "family", "source",
                                   alt.Tooltip(f"{metric}:Q", format=fmt_, title=title)),
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
