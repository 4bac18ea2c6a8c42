"""The Overview page's views, as pure functions of records (no Streamlit): its introduction, the findings cards
(``rnnlab.judge.findings``: every card quotes the configuration ``select.headline`` picks), the questions not
answered yet with the command that answers them, and the table of experiments."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Sequence

from rnnlab import experiments
from rnnlab.core.record import Record
from rnnlab.engine import api
from rnnlab.judge import findings
from rnnlab.judge.findings import Finding, Question

TITLE = "rnnlab: how TensorFlow unrolls recurrent networks"
INTRO = (
    "An RNN over *T* steps can be built as **one graph node per step** (`static_rnn`, a Python loop in "
    "`tf.function`, Keras `unroll=True`) or as **a loop inside the graph** (`dynamic_rnn`, `tf.while_loop`, Keras "
    "layers, cuDNN). The first costs build time, graph size and memory; the second costs per-step overhead. "
    "rnnlab measures both, every TensorFlow 1, TensorFlow 2 and Keras 3 variant with the same weights and inputs, "
    "**on the machine that runs it**: build and first-call time, forward and training step, peak memory, achieved "
    "GFLOP/s, and whether the outputs agree. Every finding below says whose machine its numbers come from.")


def emphasise(text: str) -> str:
    """Bold the quoted ratios: "builds **2.74x slower**"."""
    return re.sub(r"(\d[\d,.]*x (?:slower|faster)|about as fast)", r"**\1**", text)


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
