"""Seed 003 reproduced, the Variable lengths page's third tab: the seed's own figures (its 2017 log) beside the
records (:func:`seed003_table`, :func:`seed003_chart`) and its conclusion in words (:func:`seed003_verdict`). Whether
the conclusion holds is ``rnnlab.judge.seed003``'s call (the Claims table's verdicts on the same records); this
module says it, with the records' numbers. Pure: no Streamlit, no TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import altair as alt
import pandas as pd

from rnnlab.core.rules import Status
from rnnlab.core import format as fmt
from rnnlab.core import rules, wording
from rnnlab.core.record import Record
from rnnlab.core.views import Column, TableView
from rnnlab.experiments import seed003 as seed003_exp
from rnnlab.experiments import seeds
from rnnlab.judge import findings, select
from rnnlab.judge import seed003 as judge_seed003
from rnnlab.judge.select import provenance, source_note
from rnnlab.present import style
from rnnlab.present.varlen_records import _caption, _num, _source_words, is_seed_config, standing

SEED003_ROWS = (("steps_per_s", "steps/s once warm (the seed's steps 101 -> 201)", "g"),
                ("first_interval_steps_per_s", "steps/s over the first interval (the seed's steps 1 -> 101)", "g"),
                ("build_s", "building the graph (s)", "g"),
                ("first_step_s", "first training step (s)", "g"),
                ("together_s", "build + session + first step + first interval (s)", "g"),
                ("graph_nodes", "graph nodes", "int"),
                ("cell_steps_run", "cell steps run per forward pass", "int"),
                ("loop_steps_max", "longest true length (steps a length-aware loop needs)", "int"))
# the two claims of seed 003's conclusion (``judge.seed003.CLAIM_IDS``, as the Claims table judges them) in words
SEED003_CLAIMS = tuple(zip(judge_seed003.CLAIM_IDS, ("static_rnn runs faster once warm",
                                                     "static_rnn builds slower")))
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
            f"dynamic ({w})", Column(f"static / dynamic ({w})", "ratio", unit="x")]
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
        tooltip=style.tooltips("variant", "phase", "source", alt.Tooltip("steps_per_s:Q", title="steps/s", format=".3g")),
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


def _v(x: float) -> str:
    return fmt.fmt_value(x, "g")


def _at(recs: Sequence[Record]) -> str:
    """Where the records were measured, after a verb: "here" (this machine only), else whose machine."""
    if select.is_here(recs):
        return "here"
    w = select.where(recs)
    return w[:1].lower() + w[1:]


def _seed_line() -> str:
    """The seed's claim with its own figures."""
    c = seeds.SEED_003_FIGURES
    return (
        f"Seed 003's claim (its own log, TF 1.x Estimator on a 2017 GPU): {c['conclusion']} -- static "
        f"{c['static']['steps_per_s']:.1f} vs dynamic {c['dynamic']['steps_per_s']:.1f} steps/s once warm "
        f"({c['static']['steps_per_s'] / c['dynamic']['steps_per_s']:.1f}x), after a slow first 100 steps "
        f"({c['static']['first_interval_steps_per_s']:.2f} vs {c['dynamic']['first_interval_steps_per_s']:.2f} "
        "steps/s).")


def _config_words(params: dict) -> str:
    """The configuration measured, against the seed's."""
    if is_seed_config(params):
        return "the seed's exact configuration"
    nums = [k for k, v in seeds.SEED_003.items() if isinstance(v, (int, float))]
    smaller = all(params.get(k, v) <= v for k, v in seeds.SEED_003.items() if k in nums)
    return (f"{'a smaller configuration than' if smaller else 'another configuration than'} the seed's (units "
            f"{params.get('units')}, batch {params.get('batch')}, {params.get('seq_len')} steps, lengths "
            f"{params.get('lengths')})")


def _measured_line(j: judge_seed003.Judgement, recs: Sequence[Record]) -> str:
    s, d = j.static.metrics, j.dynamic.metrics
    tf = j.static.env.get("tf")
    return (
        f"{select.where(recs)}{f', TensorFlow {tf},' if tf else ''} with {_config_words(dict(j.static.params))}: "
        f"once warm, static {_v(s['steps_per_s'])} vs dynamic {_v(d['steps_per_s'])} steps/s (static/dynamic = "
        f"{fmt.fmt_ratio_cell(j.steady)}); "
        f"building the graph took static {_v(s['build_s'])} s vs dynamic {_v(d['build_s'])} s "
        f"({fmt.fmt_ratio_cell(j.build)}); "
        f"build, session, first step and first interval together: static {_v(s.get('together_s'))} s vs dynamic "
        f"{_v(d.get('together_s'))} s.")


def _headline(j: judge_seed003.Judgement, at: str) -> str:
    here = " here" if at == "here" else ""
    run_v, build_v = j.verdicts
    margin = fmt.fmt_percent(rules.MARGIN)

    def said(iv, kind: str) -> str:  # the measured difference in the one sentence rule's words
        phrase = wording.difference(iv, kind=kind)
        return phrase.against("dynamic_rnn") if phrase is not None else "with no ratio known"
    runs, builds = said(j.steady, "rate"), said(j.build, "time")
    run_part = {"holds": f"static_rnn does run faster{here}: it runs {runs}",
                Status.DOES_NOT_HOLD: f"static_rnn does not run faster by the {margin} margin{here}: it runs {runs}",
                rules.NOISY: f"whether static_rnn runs faster{here} is too noisy to call: it runs {runs}",
                }.get(run_v.status, f"whether static_rnn runs faster depends ({run_v.why})")
    build_part = {"holds": f"static_rnn is slower to build, as claimed: it builds {builds}",
                  Status.DOES_NOT_HOLD: f"static_rnn is not slower to build by the {margin} margin: it builds {builds}",
                  rules.NOISY: f"whether static_rnn builds slower is too noisy to call: it builds {builds}",
                  }.get(build_v.status, f"whether static_rnn builds slower depends ({build_v.why})")
    return f"Verdict: the conclusion {j.status} {at}: {run_part}, and {build_part}."


def _slow_start_line(j: judge_seed003.Judgement, at: str) -> str:
    s, d = j.static.metrics, j.dynamic.metrics
    fs, fd = s["first_interval_steps_per_s"], d["first_interval_steps_per_s"]
    interval = j.static.params.get("interval")
    n = f"its first {interval} steps" if interval else "its first interval"
    return ((f"The seed's slow start of static_rnn does show {at}: {_v(fs)} steps/s over {n} "
             f"against {_v(s['steps_per_s'])} after" if j.slow_start else
             f"static_rnn shows no slow start {at}: {_v(fs)} steps/s over {n} against "
             f"{_v(s['steps_per_s'])} after")
            + f" (dynamic_rnn: {_v(fd)} then {_v(d['steps_per_s'])}).")


def _why_lines(j: judge_seed003.Judgement) -> list[str]:
    s, d = j.static.metrics, j.dynamic.metrics
    tf = j.static.env.get("tf")
    t = int(j.static.params.get("seq_len") or s.get("loop_steps_max") or 0)
    mx = int(s.get("loop_steps_max", 0)) or None
    which_tf = f"TensorFlow {tf}" if tf else "the TensorFlow these records come from"
    lines = []
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
    return lines


def seed003_verdict(records: Iterable[Record]) -> Seed003Verdict:
    """Seed 003's conclusion on the records one view shows (``standing``: one configuration, one machine), as
    ``judge.seed003`` calls it (the statuses ``claims.verdict`` gives for ``SEED003_CLAIMS`` on exactly those
    records, so the page never disagrees with the Claims table), in words with the records' numbers."""
    recs, s_rec, d_rec = _seed003_pair(records)
    j = judge_seed003.judge(recs, s_rec, d_rec)
    judged = tuple((cid, words, v) for (cid, words), v in zip(SEED003_CLAIMS, j.verdicts))
    table_line = ("The Claims table judges the same records: " + "; ".join(
        f"\u201c{words}\u201d {v.status}" for _, words, v in judged)
        + f" (a difference counts from {fmt.fmt_percent(rules.MARGIN)}).")
    if not j.judgeable:
        from rnnlab.engine import api

        missing = [v for v, r in (("static", j.static), ("dynamic", j.dynamic)) if r is None]
        what = ("no measured " + " and ".join(missing) + " record" if missing else
                "; ".join(v.measured for _, _, v in judged if v.status == j.status))
        cmd = api.plan("seed003", preset="seed").command()
        return Seed003Verdict(j.status, judged, f"Cannot judge seed 003's claim yet: {what} (run `{cmd}`).",
                              (_seed_line(),))
    at = _at(recs)
    lines = [_seed_line(), _measured_line(j, recs), table_line]
    if j.slow_start is not None:
        lines.append(_slow_start_line(j, at))
    lines += _why_lines(j)
    return Seed003Verdict(j.status, judged, _headline(j, at), tuple(lines))
