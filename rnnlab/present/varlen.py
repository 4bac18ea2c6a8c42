"""Records of ``varlen``, ``padding`` and ``seed003`` -> the tables, charts and plain-words notes the Variable lengths
page shows, and the same views as a Report for ``python -m rnnlab export --experiment varlen|padding|seed003``.
Pure: no Streamlit, no TensorFlow (Altair and pandas only).

Which records stand is :mod:`rnnlab.judge.select`'s choice (one configuration on one machine per table and chart:
:func:`standing`, :func:`selection`); thresholds are :mod:`rnnlab.core.rules`'; seed 003's verdict is the Claims
table's (``rnnlab.judge.seed003`` calls it from ``claims.verdict`` for the two seed-003 claims, :func:`seed003_verdict`
says it); every ratio quoted carries its
interval (``findings.interval``: ``core.stats.ratio_interval`` across rounds, or the timed steps' quartiles) and a
"faster" is ``rules.call`` on it, as the Claims table decides; provenance words are
``select``'s (only this machine's records are "measured here"); colours and source marks are
:mod:`rnnlab.present.style`'s. The page (``pages/varlen.py``) imports only this module and ``ui``.

Numbers go through ``rnnlab.core.format`` so the screen matches the exports. A failed record keeps its row with the
reason in an "error" column; a metric a record does not hold is an en dash, never zero.

Each tab's views live in their own module (``varlen_checks``: what padding does; ``varlen_cost``: what it costs;
``seed003``: seed 003 reproduced; ``varlen_records``: lengths and which records stand); this one puts a tab together
(:func:`views`, :func:`tab_report`, :func:`view`, :func:`report`) and names everything the page uses.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

from rnnlab import experiments
from rnnlab.core import format as fmt
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import fmt_params  # noqa: F401  (the page's captions)
from rnnlab.core.record import Record
from rnnlab.core.views import ChartView, Report, TableView
from rnnlab.judge import select
from rnnlab.judge.seed003 import conclusion  # noqa: F401  (how the page's verdict combines the two claims)
from rnnlab.judge.select import source_note
from rnnlab.present.report import chart_view, page_report
# each tab's views in its own module, named here for the page, the CLI and the tests
from rnnlab.present.seed003 import (SEED003_CLAIMS, SEED003_ROWS, SEED_LOG, Seed003Verdict,  # noqa: F401
                                    seed003_chart, seed003_in_short, seed003_table, seed003_verdict)
from rnnlab.present.varlen_checks import (CHECKS, CHECKS_MEANING, PATTERN_WORDS, ZOFM_COLUMN,  # noqa: F401
                                          checks_findings, checks_table, cudnn_notes, heatmap_chart, heatmap_frame)
from rnnlab.present.varlen_cost import COST_COLUMNS, COST_MEANING, cost_chart, cost_table, seed001_comparison  # noqa: F401
from rnnlab.present.varlen_records import (DASH, EXPERIMENTS, LABELS, VARIANTS, Shown, experiment,  # noqa: F401
                                           gpu_visible, is_seed_config, lengths_note, normalize_lengths,
                                           not_here_note, ordered_groups, row_lengths, seed_config, selection,
                                           standing, _experiment_of)
from rnnlab.core.rules import Status  # noqa: F401 (pages read it from here)
from rnnlab.present.pages import Page

PAGE = Page("varlen", "Variable lengths", ":material/straighten:", order=2, about="variable-length sequences")

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
    d = urlstate.decode(query, experiment=exp, names=names, defaults=defaults,
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
