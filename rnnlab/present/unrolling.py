"""The Unrolling page's views, as pure functions of records (no Streamlit): what pages/unrolling.py lays out and what
``python -m rnnlab export --experiment unroll`` writes (:func:`report`).

- which records stand for the page's configuration: :func:`selection` (``select.pick``), the sweep's points
  (``select.sweep``: one per variant, length and machine);
- the comparison table (:func:`comparison`), its charts (:func:`chart_views`) and the sweep charts
  (:func:`sweep_views`), each a ChartView with the caption the page shows;
- the findings these records support (:func:`findings_text`), the same sentences as the Overview's;
- the CLI command of a configuration (:func:`command`, from ``Plan.command``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from rnnlab import experiments
from rnnlab.core import envinfo
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip, fmt_params
from rnnlab.core.record import Record, utc_now
from rnnlab.core.views import ChartView, Column, Report, TableView
from rnnlab.core.wording import Sentence, shared_opening
from rnnlab.engine import api
from rnnlab.judge import findings, select
from rnnlab.present.unrolling_threads import threads_missing, threads_view  # noqa: F401 (page)
from rnnlab.present import charts, tables
from rnnlab.present import report as _report
from rnnlab.present.report import chart_view, config_title, no_records, sweep_sets
from rnnlab.tf import variants as V
from rnnlab.present.pages import Page

PAGE = Page("unrolling", "Unrolling", ":material/linear_scale:", order=1, about="static vs dynamic unrolling")

EXP = experiments.get("unroll")
UNROLL_CONTROLS = findings.UNROLL_CONTROLS
SWEEP_VALUES = findings.SWEEP_VALUES
VARIANTS = list(V.VARIANTS)
BASE = list(V.BASE_VARIANTS)  # the seven variants without XLA
REFERENCE = V.REFERENCE
variant_label = V.label

_DEFAULTS = EXP.params.defaults()


def _preset_values(name: str) -> dict[str, Any]:
    return {**{k: _DEFAULTS[k] for k in UNROLL_CONTROLS},
            **{k: v for k, v in EXP.presets[name].items() if k != "variants" and k in UNROLL_CONTROLS}}


SEED = _preset_values("seed")
QUICK = _preset_values("quick")
# preset -> (the page's control values, its variants)
PRESETS = {"seed": (SEED, BASE),  # the page's seed button: the seed's configuration, the seven without XLA
           "quick": (QUICK, list(EXP.presets["quick"].get("variants") or BASE))}

# The page's charts of one configuration, in its layout (rows of titles)
CHART_ROWS = (("Forward step time", "Training step time"), ("Build time", "Graph size"),
              ("Peak memory", "Achieved GFLOP/s"))
SWEEP_METRICS = (("fwd_ms", "forward step"), ("train_ms", "training step"), ("build_s", "build time"))


def describe(params: Mapping[str, Any]) -> str:
    """A configuration in a caption: "rnn, 3x128, batch 32, 100 steps, 64 in"."""
    return fmt_params(dict(params))


def no_gpu_here() -> bool:
    """TensorFlow certainly sees no GPU on this machine (no NVIDIA device): a run with device=gpu would fail."""
    return not envinfo.static_env()["gpu_hint"]


# -- commands ------------------------------------------------------------------------------------------------------
def command(values: Mapping[str, Any], variants: Sequence[str]) -> str:
    """The same measurement from a terminal (``Plan.command``), as short as the presets allow."""
    for name, (preset, _) in PRESETS.items():
        if dict(values) == preset:
            return api.plan("unroll", preset=name, variants=list(variants), available_mb=math.inf).command()
    return api.plan("unroll", overrides=dict(values), variants=list(variants), available_mb=math.inf).command()


def sweep_plan(values: Mapping[str, Any], variants: Sequence[str]) -> tuple[api.Plan | None, str | None]:
    """The plan of the page's seq_len sweep at ``values``, or why it cannot run here."""
    try:
        return api.plan("unroll", overrides={**values, "seq_len": list(SWEEP_VALUES)}, variants=list(variants)), None
    except RnnlabError as e:
        return None, str(e)


# -- which records the page shows ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Selection:
    point: Mapping[str, Any]  # the configuration (every param filled in)
    shown: tuple[Record, ...]  # one record per chosen variant that has one, in the plan's order
    missing: tuple[str, ...]  # variants a run would measure: nothing stored from this environment
    sweep: tuple[Record, ...]  # the sweep's points at this configuration: one per variant, length and machine


def fingerprint(env: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return envinfo.fingerprint(dict(env)) if env else None


def selection(records: Sequence[Record], plan: api.Plan, env: Mapping[str, Any] | None) -> Selection:
    """What the page shows for a plan's (first) point, with ``env`` the environment a run here would record."""
    fp = fingerprint(env)
    point = plan.points[0]
    sel = select.pick(records, point, plan.variants, fingerprint=fp, experiment="unroll")
    sweep = select.sweep(records, point, plan.variants, x="seq_len", fingerprint=fp, experiment="unroll")
    return Selection(point, tuple(sel.shown[v] for v in plan.variants if v in sel.shown), sel.missing, tuple(sweep))


def sweep_missing(records: Sequence[Record], plan: api.Plan | None, env: Mapping[str, Any] | None) -> int:
    """How many (point, variant) measurements of the sweep plan are not stored for this environment."""
    if plan is None:
        return 0
    fp = fingerprint(env)
    return sum(len(select.pick(records, p, plan.variants, fingerprint=fp, experiment="unroll").missing)
               for p in plan.points)


# -- views ---------------------------------------------------------------------------------------------------------
def title(point: Mapping[str, Any]) -> str:
    return f"Unrolling: {describe(point)}"


def caption(records: Sequence[Record], point: Mapping[str, Any]) -> str:
    return f"{describe(point)}; {select.source_note(records)}" if records else describe(point)


def comparison(shown: Sequence[Record], *, reference: str, point: Mapping[str, Any]) -> TableView:
    """The comparison table: one row per variant, ratios against ``reference`` on the row's own machine, each with
    its interval ("0.63x (0.60–0.66)"); noisy figures flagged ("13.7 (! 23%)"), impossible ones in a "check"
    column; the raw interval columns (role "bound") for the downloads."""
    return tables.comparison(shown, reference=reference, title=title(point))


def screen(view: TableView) -> TableView:
    """The comparison as the page shows it: without the raw interval columns (the ratio cells say the interval)."""
    return tables.without_bounds(view)


def chart_views(shown: Sequence[Record], point: Mapping[str, Any]) -> list[tuple[Any, ChartView]]:
    """(Altair chart, ChartView) of the page's charts that the successful records support, titled as in
    ``CHART_ROWS``."""
    ok = [r for r in shown if r.ok]
    cap = caption(ok, point)
    out = []
    for chart, name in ((charts.step_time(ok, "fwd_ms"), "Forward step time"),
                        (charts.step_time(ok, "train_ms"), "Training step time"),
                        (charts.build_time(ok), "Build time"), (charts.graph_size(ok), "Graph size"),
                        (charts.memory(ok), "Peak memory"), (charts.gflops(ok), "Achieved GFLOP/s")):
        if chart is not None:
            out.append((chart, chart_view(chart, name, cap, ok)))
    return out


def gflops_note(shown: Sequence[Record]) -> str:
    """What the GFLOP/s chart shows, and whose matmul rate its dashed line is."""
    ok = [r for r in shown if r.ok]
    rates = charts.matmul_rates(ok)
    whose = ("this machine's matrix-multiply rate, as its probe measured it" if select.is_here(ok) else
             "the matrix-multiply rate probed on the machine that measured them"
             + ("" if len(rates) <= 1 else " (one line per machine)"))
    return ("GFLOP/s: the forward pass's counted floating-point operations over its median time; the dashed line "
            f"is {whose}.")


def sweep_caption(sweep: Sequence[Record], point: Mapping[str, Any]) -> str:
    cfg = {k: v for k, v in point.items() if k != "seq_len"}
    return f"{describe(cfg)}; {select.source_note(sweep)}" if sweep else describe(cfg)


def sweep_views(sweep: Sequence[Record], point: Mapping[str, Any]) -> list[tuple[str, Any, ChartView]]:
    """(tab name, Altair chart, ChartView) per metric of the seq_len sweep: a line per variant and machine."""
    cap = sweep_caption(sweep, point)
    out = []
    for metric, name in SWEEP_METRICS:
        chart = charts.sweep(sweep, x="seq_len", metric=metric)
        if chart is not None:
            out.append((name, chart, chart_view(chart, f"Scaling with seq_len: {name}", cap, list(sweep))))
    return out


# The page answers a Keras user first (``unroll=True``, then the generic cell, each against the default layer), then
# the TF1 / TF2 history; the Overview keeps ``findings.QUESTIONS``' order.
KERAS_FIRST = ("keras_unroll", "keras_fused_vs_cell")


def answers(records: Sequence[Record]) -> list:
    """``findings.answer`` in the page's order: the Keras questions first."""
    got = findings.answer(list(records))
    return sorted(got, key=lambda qf: KERAS_FIRST.index(qf[0].key) if qf[0].key in KERAS_FIRST else len(KERAS_FIRST))


def findings_text(shown: Sequence[Record], sweep: Sequence[Record] = ()) -> list[Sentence]:
    """The findings these records support (the Overview's sentences, for this configuration and its sweep), the Keras
    answer first."""
    out = []
    for q, fs in answers(shown):
        if q.key != "build_scaling":
            out += [f.sentence for f in fs]
    out += [f.sentence for f in findings.build_scaling(list(sweep))]
    return out


def page_report(sel: Selection, table: TableView, charts_made: Sequence[ChartView],
                sweeps_made: Sequence[ChartView]) -> Report:
    """The page's download: its table, charts and sweep charts, with the records' provenance."""
    return _report.page_report(f"rnnlab {table.title}", table.caption, list(sel.shown) + list(sel.sweep), (table,),
                               tuple(charts_made) + tuple(sweeps_made))


# -- the page's view, for the page and for ``export --view unrolling?...`` ------------------------------------------
URL_KEYS = (*UNROLL_CONTROLS, "variants", "ref")  # the page's settings in its URL (ui.UrlSync + "ref")


@dataclass(frozen=True)
class PageView:
    """Everything the page shows below its Run buttons for one set of settings: one function builds it for the page
    and for the talk deck (:func:`view`), so the deck's cells are the page's."""
    sel: Selection
    ref: str  # the reference of the ratios, one of the shown variants (or the asked one when nothing is shown)
    table: TableView | None  # the comparison (None: nothing stored)
    said: tuple[Sentence, ...]  # the findings' sentences for this configuration and its sweep
    charts: tuple[tuple[Any, ChartView], ...]  # (Altair chart, ChartView) per chart, titled as in CHART_ROWS
    sweeps: tuple[tuple[str, Any, ChartView], ...]  # (tab name, Altair chart, ChartView) per swept metric
    report: Report | None  # the download: table, charts, sweep charts and the findings as takeaways
    threads: TableView | None = None  # the ratios at 1 thread and at every core (``unrolling_threads``)
    threads_said: tuple[Sentence, ...] = ()  # what moved between them, and why


def more_said(said: Sequence[Sentence]) -> list[Sentence]:
    """The findings after the page's first two ("In short"), without the machine they share, said there already
    (``core.wording.shared_opening``): each fact once."""
    return shared_opening(said)[1][2:]


def reference_for(ref: str | None, variants: Sequence[str]) -> str:
    """The reference the page uses: ``ref`` when it is among ``variants``, else tf1_dynamic, else the first."""
    if ref in variants:
        return str(ref)
    return REFERENCE if REFERENCE in variants or not variants else variants[0]


def page_view(records: Sequence[Record], plan: api.Plan, env: Mapping[str, Any] | None, ref: str | None
              ) -> PageView:
    """The page's comparison, findings, charts and download for ``plan``'s configuration and variants."""
    sel = selection(records, plan, env)
    shown = list(sel.shown)
    ref = reference_for(ref, [r.variant for r in shown] or list(plan.variants))
    sweeps = tuple(sweep_views(sel.sweep, sel.point))
    if not shown:
        return PageView(sel, ref, None, (), (), sweeps, None)
    table = comparison(shown, reference=ref, point=sel.point)
    said = tuple(findings_text(shown, sel.sweep))
    made = tuple(chart_views(shown, sel.point))
    rep = page_report(sel, table, [cv for _, cv in made], [cv for _, _, cv in sweeps])
    rep = dataclasses.replace(rep, takeaways=said, pairs=(tuple(range(len(rep.charts))),))
    tt, t_said = threads_view(records, sel.point, list(plan.variants), ref)
    if tt is not None:  # the thread counts' table after the comparison, no chart of its own; its sentences last
        rep = dataclasses.replace(rep, tables=(*rep.tables, tt), pairs=(*rep.pairs, ()),
                                  takeaways=(*rep.takeaways, *t_said))
    return PageView(sel, ref, table, said, made, sweeps, rep, tt, tuple(t_said))


def view(records: Sequence[Record], query: Mapping[str, Any], env: Mapping[str, Any] | None = None) -> Report:
    """What the page shows for the URL settings ``query`` (as its link carries them), as a Report with the findings
    as takeaways: ``python -m rnnlab export --view unrolling?...``. A setting the page would warn about (a bad
    value, an unknown key, a reference not among the variants) raises ``RnnlabError``; so does a configuration
    with nothing stored (with the command that measures it)."""
    from rnnlab.core import urlstate
    from rnnlab.present.deck import known, refused

    known(query, URL_KEYS, "unrolling")
    d = urlstate.decode(query, experiment=EXP, names=UNROLL_CONTROLS, defaults=SEED, default_variants=BASE,
                        extra_keys=["ref"], allowed_variants=VARIANTS)
    if d.problems:
        raise refused("unrolling", d.problems[0])
    ref = d.extra.get("ref") or REFERENCE
    if "ref" in d.extra and ref not in d.variants:
        raise RnnlabError(f"--view unrolling: reference {clip(repr(ref))} is not among the variants "
                          f"({', '.join(d.variants)})")
    plan = api.plan("unroll", overrides=d.values, variants=d.variants, available_mb=math.inf)  # stored: no run
    pv = page_view(records, plan, env, ref)
    if pv.report is None:
        raise RnnlabError(f"nothing stored for unrolling at {describe(pv.sel.point)}; measure it with "
                          f"{command(d.values, list(plan.variants))}")
    return pv.report


# -- export --------------------------------------------------------------------------------------------------------
def _ordered(groups: list[select.Group]) -> list[select.Group]:
    """Groups in the headline rule's order (``select.headline``): the seed configuration first."""
    rest, out = list(groups), []
    while rest:
        g = select.headline(rest, seed=findings.SEED)
        out.append(g)
        rest.remove(g)
    return out


def findings_table(records: Sequence[Record]) -> TableView | None:
    """The findings as a table: question, finding, configuration and source."""
    rows = [(q.text, f.headline, f.detail) for q, fs in answers(records) for f in fs]
    if not rows:
        return None
    return TableView(title="Unrolling: findings", caption="computed from the records below; "
                     + select.source_note([r for r in records if r.experiment == "unroll"]),
                     columns=tuple(Column(c, "prose") for c in ("question", "finding", "configuration and source")),
                     rows=rows, raw=rows)


def report(records: Sequence[Record]) -> Report:
    """What ``export --experiment unroll`` writes: the findings, then per configuration and machine (the headline's
    first) the page's comparison table and charts, then the sweep charts (a line per variant and machine)."""
    recs = [r for r in records if r.experiment == "unroll"]
    if not recs:
        raise no_records("unroll")
    groups = _ordered(select.groups(recs, experiment="unroll"))
    tvs: list[TableView] = []
    cvs: list[ChartView] = []
    ft = findings_table(recs)
    if ft is not None:
        tvs.append(ft)
    for g in groups:
        shown = [g.records[v] for v in sorted(g.records, key=lambda v: VARIANTS.index(v) if v in VARIANTS else 99)]
        point = shown[0].params
        ref = REFERENCE if REFERENCE in g.ok() else next(iter(g.ok()), REFERENCE)
        name = config_title("Unrolling", g, groups)
        tvs.append(tables.comparison(shown, reference=ref, title=name))
        where = name.removeprefix("Unrolling: ")  # the configuration (and machine) in every chart's title
        cvs += [dataclasses.replace(cv, title=f"{cv.title}: {where}") for _, cv in chart_views(shown, point)]
    for sweep in sweep_sets(recs, "seq_len"):
        cfg = describe({k: v for k, v in sweep[0].params.items() if k != "seq_len"})
        cvs += [dataclasses.replace(cv, title=f"{cv.title}: {cfg}") for _, _, cv in sweep_views(sweep, sweep[0].params)]
    head = groups[0]
    return _report.page_report("rnnlab: static vs dynamic unrolling",
                               f"{len(groups)} configuration{'s' if len(groups) != 1 else ''}, first "
                               f"{describe(head.config)} ({head.note()}); exported {utc_now()}", recs, tvs, cvs)


def run_shape_words() -> str:
    """How a run from this page is timed: as ``python -m rnnlab run unroll`` without a preset (``plan.own_run_words``)."""
    return api.own_run_words("unroll")
