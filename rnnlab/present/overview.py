"""The Overview page's views, as pure functions of records (no Streamlit): its introduction, the findings cards
(``rnnlab.judge.findings``: every card quotes the configuration ``select.headline`` picks), the questions not
answered yet with the command that answers them, and the table of experiments."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from rnnlab import experiments
from rnnlab.core import wording
from rnnlab.core.wording import shared_opening  # noqa: F401 (pages and ui ask the page's module)
from rnnlab.core.record import Record
from rnnlab.engine import api
from rnnlab.judge import findings
from rnnlab.judge.findings import Finding, Question
from rnnlab.present.pages import Page

PAGE = Page("overview", "Overview", ":material/home:", order=0, about="the findings", default=True)

TITLE = "rnnlab: how TensorFlow unrolls recurrent networks"
INTRO = (
    "An RNN over *T* steps can be built as **one graph node per step** (`static_rnn`, a Python loop in "
    "`tf.function`, Keras `unroll=True`) or as **a loop inside the graph** (`dynamic_rnn`, `tf.while_loop`, Keras "
    "layers, cuDNN). The first costs build time, graph size and memory; the second costs per-step overhead. "
    "rnnlab measures both, every TensorFlow 1, TensorFlow 2 and Keras 3 variant with the same weights and inputs, "
    "**on the machine that runs it**: build and first-call time, forward and training step, peak memory, achieved "
    "GFLOP/s, and whether the outputs agree. Every finding below says whose machine its numbers come from.")


def emphasise(text: str) -> str:
    """Bold the decided differences: "builds **2.74x slower** than ..." (``core.wording.bold``)."""
    return wording.bold(text)


def first_command() -> str:
    """The first, small measurement (under a minute on 2 cores), as the CLI runs it."""
    return _quick("unroll")


def _quick(experiment: str) -> str:
    exp = experiments.get(experiment)
    return api.plan(experiment, preset="quick" if "quick" in exp.presets else None,
                    available_mb=math.inf).command()


@dataclass(frozen=True)
class Cards:
    found: list[tuple[Question, list[Finding]]]  # answered questions with their findings
    open: list[Question]  # not measured yet: ``Question.how`` measures it


def cards(records: Sequence[Record]) -> Cards:
    answered = findings.answer(records)
    return Cards(found=[(q, fs) for q, fs in answered if fs], open=[q for q, fs in answered if not fs])


def experiment_rows(records: Sequence[Record], pages: dict[str, str]) -> list[dict]:
    """One row per experiment: what it answers, how many records are stored, its page (``pages``: url_path ->
    title of the pages that exist), the command that measures it."""
    counts: dict[str, int] = {}
    for r in records:
        counts[r.experiment] = counts.get(r.experiment, 0) + 1
    return [{"experiment": e.name, "what it answers": e.title, "stored records": counts.get(e.name, 0),
             "page": pages.get(e.page or "", ""), "measure with": _quick(e.name)}
            for e in experiments.all_experiments()]


def view(records: Sequence[Record], query, env=None):
    """The Overview as a Report: every finding's sentence as the takeaways, and the table of experiments (stored
    records per experiment, the command that measures it): ``python -m rnnlab export --view overview``."""
    from rnnlab.core.views import Column, Report, TableView
    from rnnlab.present.deck import known
    from rnnlab.present.report import page_report

    known(query, (), "overview")
    found = cards(records).found
    rows = experiment_rows(records, {})
    cols = ("experiment", "what it answers", "stored records", "measure with")
    table = TableView(title="The experiments", caption="stored records here and bundled; the command measures the "
                      "experiment's quick preset",
                      columns=(Column(cols[0], "text", "name"), Column(cols[1], "prose"), cols[2],
                               Column(cols[3], "prose")),
                      rows=tuple(tuple(str(r[c]) for c in cols) for r in rows),
                      raw=tuple(tuple(r[c] for c in cols) for r in rows))
    said = tuple(f.sentence for _, fs in found for f in fs)
    rep = page_report(TITLE, "the findings, each from the configuration the headline rule picks", list(records),
                      [table])
    return Report(rep.title, rep.subtitle, rep.tables, headline_charts(records, env), rep.provenance,
                  takeaways=said)


def headline_charts(records: Sequence[Record], env=None) -> tuple:
    """The chart behind the first finding: the Unrolling page's default view's first chart (forward step time of
    every variant), when its records are stored."""
    from rnnlab.core.errors import RnnlabError
    from rnnlab.present import unrolling

    try:
        return unrolling.view(records, {}, env=env).charts[:1]
    except RnnlabError:
        return ()


def detail_without_source(f: Finding) -> str:
    """A finding's detail without where its numbers came from (``Finding.at``), but with "measured on a busy
    machine" when it was: for a list whose machine is said once above it."""
    return "; ".join(x for x in (f.at, f.busy) if x)


