"""Records -> a Report (tables and charts) that the app shows and the exporters save."""

from __future__ import annotations

import contextlib
import math
import subprocess
import threading
from pathlib import Path
from typing import Sequence

from rnnlab.engine.api import first_run_command
from rnnlab.judge import select
from rnnlab.present import charts, pages, tables
from rnnlab import experiments
from rnnlab.core import condition
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import fmt_params
from rnnlab.core.record import Record, utc_now
from rnnlab.core.views import ChartView, Report, TableView

_ROOT = Path(__file__).resolve().parents[2]


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=_ROOT, capture_output=True, text=True,
                              timeout=5).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


# Altair keeps its data transformer and theme process-wide, and Streamlit switches both (under a lock of its own)
# while it converts a chart for a page: a spec built meanwhile in another thread (another session) would point at
# data held in Streamlit's dictionary, not in the spec. Every spec here is built under that same lock, with Altair's
# defaults switched on for the build: ``ui`` hands Streamlit's lock over (``share_spec_lock``) when the app starts;
# without Streamlit (the CLI, exports) a lock of our own serves. tests/present/test_chart_threads.py builds every
# page's charts from many threads beside Streamlit's conversions and fails when a spec's data is not its own.
spec_lock: threading.Lock = threading.Lock()


def share_spec_lock(lock) -> None:
    """Build specs under ``lock`` (the lock Streamlit holds while it switches Altair's settings)."""
    global spec_lock
    spec_lock = lock


def chart_spec(chart) -> dict:
    """``chart`` as a Vega-Lite dict with its data inlined (``datasets``), whatever another thread has switched."""
    import altair as alt

    with spec_lock:
        theme = alt.theme.enable("default") if alt.theme.active != "default" else contextlib.nullcontext()
        data = (alt.data_transformers.enable("default") if alt.data_transformers.active != "default"
                else contextlib.nullcontext())
        with theme, data:
            # not validated against the Vega-Lite schema on every render (a third of a page's build time): the specs
            # come from code, and tests/present/test_chart_specs.py validates every chart of every page's view
            return axis_labels(chart.to_dict(validate=False))


def axis_labels(spec: dict) -> dict:
    """``spec`` with every quantitative x/y axis labelled by one rule (``format.AXIS_LABELS``) unless the chart
    chose its own format (a percentage) or has no axis, a log axis over many decades ticked at powers of ten; in
    place, returned."""
    from rnnlab.core.format import AXIS_LABELS

    datasets = spec.get("datasets") if isinstance(spec.get("datasets"), dict) else {}

    def walk(node) -> None:
        if isinstance(node, dict):
            enc = node.get("encoding")
            if isinstance(enc, dict):
                for ch in ("x", "y"):
                    e = enc.get(ch)
                    if not isinstance(e, dict) or e.get("type") != "quantitative" or e.get("axis", {}) is None:
                        continue
                    axis = e.setdefault("axis", {})
                    if "format" not in axis and "labelExpr" not in axis:
                        axis["labelExpr"] = AXIS_LABELS
                    if (e.get("scale") or {}).get("type") == "log" and "values" not in axis \
                            and _decades(datasets, e.get("field")) >= 3:
                        # a tick per power of ten or two (not 9e-7, 8e-6, 7e-5 left over from crowded labels);
                        # over fewer decades Vega's 1-2-5 ticks read better
                        axis.setdefault("tickCount", 3)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(spec)
    return spec


def _decades(datasets: dict, field) -> float:
    """How many powers of ten the positive values of ``field`` span in the spec's inlined data (0 if none)."""
    vals = [abs(row[field]) for rows in datasets.values() if isinstance(rows, list) for row in rows
            if isinstance(row, dict) and isinstance(row.get(field), (int, float)) and row.get(field)]
    return math.log10(max(vals) / min(vals)) if len(vals) >= 2 else 0.0


def chart_view(chart, title: str, caption: str, records: Sequence[Record]) -> ChartView | None:
    if chart is None:
        return None
    return ChartView(title=title, caption=caption, spec=chart_spec(chart), provenance=select.provenance(records))


def config_title(exp_title: str, group: select.Group, groups: Sequence[select.Group]) -> str:
    """"<experiment>: <configuration>", plus its thread count when another group's configuration reads the same
    but differs in it (the seed point at 1 thread and at every core), and whose machine when another group has the
    same configuration."""
    words = fmt_params(dict(group.config))
    title = f"{exp_title}: {words}"
    if any(g.experiment == group.experiment and g.config != group.config and fmt_params(dict(g.config)) == words
           for g in groups):
        title += f", {condition.threads_words(list(group.records.values()))}"
    twins = [g for g in groups if g.experiment == group.experiment and g.config == group.config]
    if len(twins) > 1:
        labels = select.machine_labels([next(iter(g.records.values())) for g in twins])
        title += f" ({labels[group.machine]})"
    return title


def group_charts(records: Sequence[Record], caption: str) -> list[ChartView]:
    """The charts of one configuration's records: step times, build and graph, memory, GFLOP/s."""
    ok = [r for r in records if r.ok]
    out = []
    for c, t in ((charts.step_time(ok, "fwd_ms"), "Forward step time"),
                 (charts.step_time(ok, "train_ms"), "Training step time"),
                 (charts.build_time(ok), "Build time"), (charts.graph_size(ok), "Graph size"),
                 (charts.memory(ok), "Peak memory"), (charts.gflops(ok), "Achieved GFLOP/s")):
        v = chart_view(c, t, caption, ok)
        if v:
            out.append(v)
    return out


def sweep_sets(records: Sequence[Record], x: str = "seq_len") -> list[list[Record]]:
    """Records of one configuration with ``x`` free, every machine's (a sweep chart draws a line per machine)."""
    by: dict[str, list[Record]] = {}
    for g in select.series(records, x):
        by.setdefault(select.config_key(dict(g.config)), []).extend(g.records.values())
    return [recs for recs in by.values() if len({r.params[x] for r in recs}) >= 2]


def experiment_views(records: Sequence[Record], *, with_charts: bool = True
                     ) -> tuple[list[TableView], list[ChartView]]:
    """Tables and charts for one experiment's records: one comparison per configuration and machine
    (``select.groups``), sweeps where swept (a line per variant and machine). ``with_charts=False``: the tables
    alone (no charts built: Altair is most of the time), for text that shows no chart."""
    if not records:
        return [], []
    exp = experiments.get(records[0].experiment)
    tvs: list[TableView] = []
    cvs: list[ChartView] = []
    groups = select.groups(records)
    for group in groups:
        recs = list(group.records.values())
        title = config_title(exp.title, group, groups)
        if exp.reference:
            tvs.append(tables.comparison(recs, reference=exp.reference, title=title))
        else:
            tvs.append(tables.generic(recs, title=title))
        if with_charts:
            cvs += group_charts(recs, f"{fmt_params(dict(group.config))}; {group.note()}")
    for x in ("seq_len",) if with_charts else ():
        for recs in sweep_sets(records, x):
            for metric in ("fwd_ms", "train_ms", "build_s"):
                cfg = {k: v for k, v in recs[0].params.items() if k != x}
                v = chart_view(charts.sweep(recs, x=x, metric=metric), f"Scaling with {x}",
                               f"{fmt_params(cfg)}; {select.source_note(recs)}", recs)
                if v:
                    cvs.append(v)
    return tvs, cvs


def no_records(experiment: str) -> RnnlabError:
    """The error an export or a page raises when ``experiment`` has nothing stored, with the command that fixes it."""
    return RnnlabError(f"no stored records for experiment {experiment!r}; run one first, e.g. "
                       f"{first_run_command(experiment)}")


def page_report(title: str, subtitle: str, records: Sequence[Record], tables: Sequence[TableView],
                charts: Sequence[ChartView] = ()) -> Report:
    """A page's views as a Report, with the records' provenance and this checkout's commit."""
    return Report(title=title, subtitle=subtitle, tables=tuple(tables), charts=tuple(charts),
                  provenance=(select.provenance(records) if records else {}) | {"commit": commit()})


def checks_report(records: Sequence[Record], experiment: str, title: str, tables) -> Report:
    """What ``export --experiment`` writes for a page of checks run live (pitfalls, migrate): ``tables(records)`` of
    the experiment's records, under the machine, device and TensorFlow version they ran on."""
    recs = [r for r in records if r.experiment == experiment]
    if not recs:
        raise no_records(experiment)
    prov = select.provenance(recs)
    return page_report(title, f"{experiment} on {prov['machine']} ({prov['device']}), TensorFlow {prov['tf']}; "
                              f"{prov['source']}; exported {utc_now()}", recs, tables(recs))


# experiment -> the page topic whose views an export of it shows (rnnlab.present.<topic>): each experiment's page
# (``Experiment.page``), and a topic page (``Page.topic``: the Claims page) under its own name
TOPICS = {e.name: e.page for e in experiments.all_experiments() if e.page} | \
         {p.name: p.name for p in pages.pages() if p.topic}


def appendix(page: str) -> str | None:
    """What ``export --view PAGE --full`` writes: the page's topic when it is one (an experiment of that name, or a
    topic page), else its one experiment, else None (every experiment)."""
    if page in TOPICS:
        return page
    shown = [e for e, t in TOPICS.items() if t == page]
    return shown[0] if len(shown) == 1 else None


def shown(experiment: str) -> set[str] | None:
    """The experiments whose records ``export --experiment`` reads: every one (None) for a topic page, the one named
    when its page is a topic page (the Claims page reads every experiment), else every experiment of its page."""
    topic = TOPICS.get(experiment)
    page = pages.get(topic or "")
    if page is not None and page.topic:
        return None if experiment == topic else {experiment}
    return {e for e, t in TOPICS.items() if t == topic} if topic else {experiment}


def topic_report(records: Sequence[Record], topic: str) -> Report | None:
    """The page's own views as a Report, when ``rnnlab.present.<topic>`` defines ``report(records)``."""
    import importlib

    try:
        mod = importlib.import_module(f"rnnlab.present.{topic}")
    except ModuleNotFoundError as e:
        if e.name == f"rnnlab.present.{topic}":
            return None
        raise
    fn = getattr(mod, "report", None)
    return None if fn is None else fn(records)


def build(records: Sequence[Record], *, experiment: str | None = None) -> Report:
    """Every experiment's views (no ``experiment``), or the page views of one experiment or topic ("claims")."""
    if experiment in TOPICS:
        rep = topic_report(records, TOPICS[experiment])
        if rep is not None:
            return rep
    recs = [r for r in records if experiment is None or r.experiment == experiment]
    if not recs:
        raise RnnlabError("no stored records" + (f" for experiment {experiment!r}" if experiment else "") +
                          "; run one first, e.g. " + first_run_command(experiment))
    tvs, cvs = [], []
    for name in dict.fromkeys(r.experiment for r in recs):
        t, c = experiment_views([r for r in recs if r.experiment == name])
        tvs += t
        cvs += c
    prov = select.provenance(recs) | {"commit": commit()}
    return Report(title="rnnlab: how TensorFlow unrolls recurrent networks",
                  subtitle=f"{', '.join(dict.fromkeys(r.experiment for r in recs))} on {prov['machine']}"
                           f" ({prov['device']}), TensorFlow {prov['tf']}, exported {utc_now()}",
                  tables=tuple(tvs), charts=tuple(cvs), provenance=prov)
