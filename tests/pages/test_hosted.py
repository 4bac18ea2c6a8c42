"""A fresh hosted copy: hosted mode on, an empty store, and the bundled results in data/baseline.

Every page shows the bundled report (labelled as not measured here), and a run over the hosted caps is refused
with a message. Uses the real bundled files: what a visitor of the hosted demo would see.
"""

from __future__ import annotations

import pytest

from rnnlab.engine import api
from rnnlab.core import baseline
from rnnlab.core.store import Store
from tests.pages.test_app import app, no_errors, plain
from ui import nav

pytestmark = pytest.mark.slow  # Streamlit pages, a browser or TensorFlow

PAGES = [p.file for p in nav.existing()]


@pytest.fixture(autouse=True)
def hosted(monkeypatch):
    monkeypatch.setenv("RNNLAB_HOSTED", "1")
    monkeypatch.delenv("RNNLAB_BASELINE")  # the real bundled results, as a hosted copy has them


def test_the_bundled_results_cover_every_experiment_a_page_shows():
    recs = baseline.load()
    assert recs, "data/baseline holds the bundled results (scripts/make_baseline)"
    assert {r.experiment for r in recs} >= {"unroll", "varlen", "padding", "seed003", "pitfalls", "migrate", "knobs",
                                             "precision", "training"}
    assert all(r.source == "baseline" and r.env.get("machine") and r.env.get("tf") for r in recs)
    assert Store().count() == 0  # the test's store is empty: everything shown below is bundled


def _text(at) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    return plain(" ".join(str(p) for p in parts)).lower()


@pytest.mark.parametrize("page", PAGES)
def test_every_page_shows_the_bundled_report_on_an_empty_store(page):
    at = app(page)
    no_errors(at)
    assert not at.error, [e.value for e in at.error]
    if page.endswith(("pitfalls.py", "migrate.py")):
        assert "bundled" in _text(at) or at.dataframe or at.expander  # their results are text and tables
    else:
        assert at.dataframe or at.table, "a table of bundled results"
    assert "bundled" in _text(at), "the page says the numbers were not measured here"


def test_an_oversize_run_is_refused_with_a_message(monkeypatch):
    calls = []
    monkeypatch.setattr(api, "run", lambda *a, **k: calls.append(1) or [])
    at = app("pages/unrolling.py", {"seq_len": "1000", "variants": "tf1_static,tf1_dynamic"})
    at.button(key="unroll.run").click().run()
    no_errors(at)
    msgs = [plain(e.value) for e in at.error]
    assert any("hosted demo caps" in m and "seq_len=1000 (at most 200)" in m for m in msgs), msgs
    assert calls == []


def _everything(at) -> str:
    """All the text a visitor can read: prose, captions, alerts, metrics, table headers and cells, chart titles."""
    parts = []
    for kind in ("markdown", "caption", "info", "success", "warning", "error", "title", "header", "subheader",
                 "text", "metric", "expander", "tabs"):
        for el in getattr(at, kind, []):
            parts += [str(getattr(el, a, "") or "") for a in ("value", "label", "proto")
                      if a != "proto" or kind == "metric"]
    for df in list(at.dataframe) + list(at.table):
        frame = df.value
        parts += [str(c) for c in frame.columns] + [str(v) for v in frame.astype(str).to_numpy().ravel()]
    for chart in at.get("arrow_vega_lite_chart") + at.get("vega_lite_chart"):
        parts.append(str(getattr(chart.proto, "spec", "")))
    return plain(" ".join(parts)).lower()


@pytest.mark.parametrize("page", PAGES)
def test_bundled_figures_are_never_called_measured_here(page):
    """With only bundled results, no figure on any page is said to be measured here or on this machine.

    (Sentences about the host itself stay allowed: "no GPU on this machine", "runs measure on this machine's CPU".)"""
    at = app(page)
    no_errors(at)
    text = _everything(at).replace("not measured here", "")
    for words in ("measured here", "measured on this", "on this cpu", "on this gpu", "on this device,"):
        i = text.find(words)
        assert i < 0, f"{page}: ...{text[max(0, i - 160):i + 60]}..."
