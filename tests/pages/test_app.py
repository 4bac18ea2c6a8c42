"""The Streamlit app through AppTest: every page renders, runs go through the background JobManager, the URL holds
a view, bad input becomes a message (never a traceback), and pages that show stored results import no TensorFlow.

Most tests replace ``rnnlab.engine.api.run`` with a fake (fast); ``test_real_tiny_run`` runs real workers.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rnnlab.engine import api
from rnnlab.core import envinfo
from rnnlab.engine.runner import Cancelled, Progress
from rnnlab.core.record import Record
from rnnlab.core.store import Store
from rnnlab.tf.variants import BASE_VARIANTS
from tests.apptest_util import (no_errors, no_run_left_behind, open_app, plain, render_probe,  # noqa: F401
                                renders_fast_without_tensorflow)
from tests.factories import SEED, UNROLL, make_record, this_env  # noqa: F401

pytestmark = pytest.mark.slow  # Streamlit pages, a browser or TensorFlow

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
EXP = UNROLL
PAGES = ["pages/overview.py", "pages/unrolling.py", "pages/results.py"]


# -- records -------------------------------------------------------------------------------------------------------
def seed_store(*, sweep: bool = False) -> list[Record]:
    recs = [make_record(v, SEED) for v in BASE_VARIANTS]
    if sweep:
        recs += [make_record(v, {**SEED, "seq_len": n}, scale=n / 100) for v in BASE_VARIANTS
                 for n in (25, 50, 200, 400)]
    Store().put_many(recs)
    return recs


# -- a fake runner in place of rnnlab.engine.api.run -------------------------------------------------------------------------
class FakeRun:
    """Stores a record per (point, variant) like api.run; ``fail`` variants get an error record; with ``block`` it
    waits for Cancel."""

    def __init__(self, *, fail: dict[str, str] | None = None, block: bool = False):
        self.fail = fail or {}
        self.block = block
        self.calls = 0
        self.started = threading.Event()

    def __call__(self, plan, *, fresh=False, on_progress=None, cancel=None, store=None, **_):
        self.calls += 1
        store = store or Store()
        say = on_progress or (lambda p: None)
        out = []
        total = plan.n_tasks
        for pi, point in enumerate(plan.points):
            for vi, v in enumerate(plan.variants):
                idx = pi * len(plan.variants) + vi
                say(Progress("unroll", v, "build", idx, total, 0.5, pi, len(plan.points)))
                self.started.set()
                if self.block:
                    while not cancel.is_set():
                        time.sleep(0.02)
                    raise Cancelled("cancelled")
                rec = make_record(v, {k: point[k] for k in point if k != "device"}, error=self.fail.get(v))
                store.put(rec)
                out.append(rec)
                say(Progress("unroll", v, "done", idx, total, 0.6, pi, len(plan.points)))
        return out


def app(page: str | None = None, query: dict | None = None) -> AppTest:
    return open_app(page, query)


def wait_for(at: AppTest, cond, timeout: float = 30.0, every: float = 0.1) -> AppTest:
    """Rerun until ``cond`` holds (checked on the current state first: an outcome shows once)."""
    deadline = time.monotonic() + timeout
    no_errors(at)
    while not cond(at):
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached; page said: " +
                                 " | ".join(e.value for e in [*at.error, *at.warning, *at.info, *at.success]))
        time.sleep(every)
        at.run()
        no_errors(at)
    return at


def table_variants(at: AppTest) -> list[str]:
    for df in at.dataframe:
        frame = df.value
        if "variant" in frame.columns and "what runs" in frame.columns:
            return list(frame["variant"])
    return []


# -- every page ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_on_an_empty_store(page):
    at = app(page)
    no_errors(at)
    assert at.title, "the page has a title"


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_with_records(page):
    seed_store(sweep=True)
    at = app(page)
    no_errors(at)
    assert not at.error


def test_the_router_renders_a_page_in_its_turn(monkeypatch):
    """Every page renders in a turn (``ui.turns``): the router's script takes it when it is free; while another
    script holds it, the router waits (here at most 0.2 s) and then renders the page all the same."""
    from ui import turns

    taken = []  # per turn the script asked for: (asked from the script's own thread, got it)
    real = turns._take

    def spy(wait_s):
        real(wait_s)
        taken.append((threading.current_thread() is not threading.main_thread(), turns.holding()))

    monkeypatch.setattr(turns, "_take", spy)
    monkeypatch.setattr(turns, "WAIT_S", 0.2)
    no_errors(app())
    assert taken and all(mine and got for mine, got in taken)
    with turns.render():  # another session's script holds the turn
        taken.clear()
        at = app()
    no_errors(at)
    assert at.title and taken and all(mine and not got for mine, got in taken)
    assert not turns.holding()


def test_router_shows_environment_and_source_in_the_sidebar():
    seed_store()
    at = app()
    text = " ".join(c.value for c in at.sidebar.caption)
    assert f"TensorFlow {envinfo.static_env()['tf']}" in text and "Keras" in text
    assert "This machine's store: 7 records" in text


def test_overview_computes_findings_and_links_to_the_configuration():
    at = app()
    assert any("No results yet" in i.value and "python -m rnnlab run unroll --preset quick" in i.value for i in at.info)
    seed_store()
    at = app()
    no_errors(at)
    heads = [m.value for m in at.markdown]
    # tf1_static is variant 1 (build 0.1 s, fwd 1 ms), tf1_dynamic variant 2 (0.2 s, 2 ms); the forward ratio's
    # interval from the quartiles (0.9/2.4 .. 1.2/1.8) follows it; the build time has no quartiles and one round:
    # its ratio is said with no call (it once read "builds **2.00x faster**", from no interval at all)
    assert any("static_rnn builds at 0.50x dynamic_rnn's time, no interval (one round) and runs a forward step "
               "**2.00x faster** (1.50–2.67x) at 100 steps" in h for h in heads), heads
    assert heads.count("On this CPU:") == 1 and not any("On this CPU," in h for h in heads)  # the machine, once
    links = [p for p in at.get("page_link")]
    assert any("Unrolling" in p.proto.label for p in links)


@pytest.mark.parametrize("page", PAGES)
def test_a_store_from_a_newer_rnnlab_is_an_error_on_every_page(page):
    import sqlite3

    path = os.environ["RNNLAB_STORE"]
    con = sqlite3.connect(path)
    con.execute("PRAGMA application_id=1919839852")  # rnnlab's
    con.execute("PRAGMA user_version=99")
    con.execute("CREATE TABLE records (key TEXT)")
    con.commit()
    con.close()
    at = app(page)
    no_errors(at)
    assert any("newer rnnlab" in plain(e.value) for e in [*at.error, *at.sidebar.error])


def test_a_corrupt_store_file_is_moved_aside_with_a_warning():
    Path(os.environ["RNNLAB_STORE"]).write_bytes(b"this is not sqlite" * 100)
    at = app()
    no_errors(at)
    assert any("moved it to" in plain(w.value) for w in [*at.warning, *at.sidebar.warning])  # once per session
    at.switch_page("pages/results.py").run()
    no_errors(at)
    assert not at.warning and not at.sidebar.warning


# -- unrolling: stored results, URL, bad input -----------------------------------------------------------------------
def test_unrolling_shows_stored_results_at_once_with_charts_and_downloads():
    seed_store(sweep=True)
    at = app("pages/unrolling.py")
    no_errors(at)
    assert table_variants(at) == list(BASE_VARIANTS)
    assert at.button(key="unroll.run").disabled  # nothing to measure
    frame = next(d.value for d in at.dataframe if "variant" in d.value.columns)
    # the ratio with its interval from the quartiles (0.9/2.4 .. 1.2/1.8); the raw bound columns stay off the screen
    assert "forward vs tf1_dynamic" in frame.columns and frame.loc[0, "forward vs tf1_dynamic"] == "0.50x (0.38–0.67)"
    assert not any(c.endswith(("(low)", "(high)")) for c in frame.columns)
    assert len(at.get("vega_lite_chart")) == 6 + 3  # six charts (three rows of two), three sweep tabs
    assert {b.label for b in at.get("download_button")} >= {"CSV", "Markdown", "LaTeX"}
    # a PowerPoint and PNGs take seconds: made on a click, then held by the button (and kept for every session
    # showing this view), so the download survives a busy server (no deferred file to lose)
    assert {b.label for b in at.button} >= {"Make PowerPoint", "Make PNG charts"}
    next(b for b in at.button if b.label == "Make PowerPoint").click().run()
    no_errors(at)
    deck = next(b for b in at.get("download_button") if b.label == "PowerPoint")
    assert deck.proto.url.endswith(".pptx") and not deck.proto.HasField("deferred_file_id")
    at.run()  # a rerun (another session would see the same): the deck is kept, no Make button any more
    assert "PowerPoint" in {b.label for b in at.get("download_button")}
    assert "Make PowerPoint" not in {b.label for b in at.button}


def test_unrolling_download_report_renders_every_format():
    from rnnlab.present import charts, tables
    from rnnlab import exporters
    from rnnlab.present.report import chart_view
    from ui import downloads

    recs = seed_store()
    view = tables.comparison(recs, reference="tf1_dynamic", title="Unrolling: test")
    cv = chart_view(charts.step_time(recs), "Forward step time", "cap", recs)
    rep = downloads.make_report("rnnlab Unrolling: test", view.caption, [view], [cv], recs)
    for fmt in downloads.FORMATS:
        name, mime = downloads.file_name(rep, fmt)
        real_name, data, real_mime = exporters.render_bytes(rep, fmt)
        assert data and real_mime == mime and name.endswith(real_name[real_name.rindex("."):])


def test_unrolling_settings_round_trip_through_the_url():
    at = app("pages/unrolling.py", {"cell": "lstm", "units": "64", "seq_len": "50", "variants": "keras,tf1_dynamic",
                                    "ref": "keras"})
    no_errors(at)
    assert at.selectbox(key="unroll.cell").value == "lstm"
    assert at.number_input(key="unroll.units").value == 64
    assert at.number_input(key="unroll.seq_len").value == 50
    assert at.multiselect(key="unroll.variants").value == ["tf1_dynamic", "keras"]
    assert not at.warning
    at.number_input(key="unroll.batch").set_value(16).run()
    q = at.query_params
    assert q["batch"] == "16" and q["cell"] == "lstm" and q["variants"] == "tf1_dynamic,keras"


def test_unrolling_bad_url_values_warn_and_fall_back():
    at = app("pages/unrolling.py", {"cell": "transformer", "units": "-5", "batch": "many", "variants": "nope,keras",
                                    "ref": "tf1_static"})
    no_errors(at)
    text = plain(" ".join(w.value for w in at.warning))
    assert "cell='transformer'" in text and "units" in text and "batch" in text and "nope" in text
    assert "reference 'tf1_static'" in text
    assert at.selectbox(key="unroll.cell").value == "rnn" and at.number_input(key="unroll.units").value == 128
    assert at.multiselect(key="unroll.variants").value == ["keras"]
    assert at.query_params["cell"] == "rnn"  # the URL now shows what is used


def test_unrolling_impossible_configuration_is_an_error_not_a_traceback():
    at = app("pages/unrolling.py", {"units": "2048", "layers": "8", "batch": "4096", "seq_len": "2000",
                                    "input_dim": "4096"})
    no_errors(at)
    assert any("needs an estimated" in plain(e.value) and "reduce batch, seq_len" in plain(e.value)
               for e in at.error)


@pytest.mark.skipif(envinfo.gpu_hint(), reason="this machine may have a GPU")
def test_unrolling_gpu_without_a_gpu_warns_and_a_run_fails_with_the_reason():
    at = app("pages/unrolling.py", {"device": "gpu", "units": "8", "variants": "tf1_dynamic"})
    no_errors(at)
    assert any("cannot see a GPU" in plain(w.value) for w in at.warning)
    at.button(key="unroll.run").click().run()
    wait_for(at, lambda a: any("TensorFlow sees no GPU" in plain(e.value) for e in a.error))


def test_unrolling_presets_set_the_widgets():
    at = app("pages/unrolling.py")
    at.button(key="unroll.preset_quick").click().run()
    quick = EXP.presets["quick"]
    assert at.number_input(key="unroll.units").value == quick["units"]
    assert at.number_input(key="unroll.repeats").value == quick["repeats"]
    assert at.multiselect(key="unroll.variants").value == quick["variants"]
    assert at.query_params["units"] == str(quick["units"])
    at.button(key="unroll.preset_seed").click().run()
    assert at.number_input(key="unroll.layers").value == SEED["layers"]
    assert at.multiselect(key="unroll.variants").value == list(BASE_VARIANTS)


def test_unrolling_no_variant_is_a_hint():
    at = app("pages/unrolling.py")
    at.multiselect(key="unroll.variants").set_value([]).run()
    no_errors(at)
    assert any("Pick at least one variant" in i.value for i in at.info)


# -- unrolling: runs -----------------------------------------------------------------------------------------------
def test_run_in_the_background_with_a_failed_variant(monkeypatch):
    fake = FakeRun(fail={"tf1_static": "out of memory (limit 100 MB)"})
    monkeypatch.setattr(api, "run", fake)
    at = app("pages/unrolling.py", {"units": "8", "variants": "tf1_static,tf1_dynamic"})
    assert table_variants(at) == []
    assert "2 variants" in at.button(key="unroll.run").label
    at.button(key="unroll.run").click().run()
    wait_for(at, lambda a: table_variants(a) == ["tf1_static", "tf1_dynamic"])
    frame = next(d.value for d in at.dataframe if "variant" in d.value.columns)
    assert frame.loc[0, "error"] == "out of memory (limit 100 MB)"
    assert fake.calls == 1
    assert at.button(key="unroll.run").disabled  # now everything is stored (the failure too)


def test_cancel_stops_the_run(monkeypatch):
    fake = FakeRun(block=True)
    monkeypatch.setattr(api, "run", fake)
    at = app("pages/unrolling.py", {"units": "8", "variants": "tf1_dynamic"})
    at.button(key="unroll.run").click().run()
    assert fake.started.wait(10)
    at.run()
    bar = at.get("progress")
    assert bar and "variant 1/1: tf1_dynamic" in bar[0].proto.text
    assert at.button(key="unroll.run").disabled  # one run at a time
    cancel = next(b for b in at.button if b.label == "Cancel run")
    cancel.click().run()
    wait_for(at, lambda a: any("Run cancelled" in w.value for w in a.warning))


def test_two_sessions_share_one_run(monkeypatch):
    fake = FakeRun(block=True)
    monkeypatch.setattr(api, "run", fake)
    q = {"units": "8", "variants": "tf1_dynamic"}
    a = app("pages/unrolling.py", q)
    b = app("pages/unrolling.py", q)
    a.button(key="unroll.run").click().run()
    assert fake.started.wait(10)
    b.run()
    assert b.get("progress") and "Measuring" in b.get("progress")[0].proto.text  # the same plan: its run
    from ui.jobs import manager

    assert len(manager().active()) == 1 and fake.calls == 1


def test_sweep_button_runs_five_lengths(monkeypatch):
    fake = FakeRun()
    monkeypatch.setattr(api, "run", fake)
    at = app("pages/unrolling.py", {"units": "8", "variants": "tf1_static,tf1_dynamic"})
    assert "10 measurements" in at.button(key="unroll.sweep").label
    at.button(key="unroll.sweep").click().run()
    wait_for(at, lambda a: not a.get("progress") and len(a.tabs) == 3)  # forward / training / build vs seq_len
    assert at.button(key="unroll.sweep").disabled
    assert table_variants(at) == ["tf1_static", "tf1_dynamic"]  # seq_len 100 is one of the sweep's points


def test_hosted_mode_caps_a_run_with_a_message(monkeypatch):
    fake = FakeRun()
    monkeypatch.setattr(api, "run", fake)
    monkeypatch.setenv("RNNLAB_HOSTED", "1")
    at = app("pages/unrolling.py", {"units": "512", "variants": "tf1_dynamic"})
    no_errors(at)
    run = at.button(key="unroll.run")  # over the caps: not offered (disabled), and the page says why
    assert run.disabled and "units=512" in plain(run.help or "")
    assert any("units=512" in plain(c.value) for c in at.caption)
    assert fake.calls == 0


# -- results -------------------------------------------------------------------------------------------------------
def _upload(at: AppTest, name: str, data: bytes) -> AppTest:
    return at.file_uploader(key="results.upload").upload(name, data, "application/json").run()


def test_results_import_a_valid_file_and_refuse_a_corrupt_one():
    recs = [make_record(v, SEED) for v in ("tf1_static", "tf1_dynamic")]
    at = app("pages/results.py")
    bad = b'[{"schema": 1, "key": "nothex", "experiment": "unroll"}]'
    _upload(at, "corrupt.json", bad)
    no_errors(at)
    assert any("Nothing imported" in e.value for e in at.error)
    assert Store().count() == 0
    _upload(at, "garbage.json", b"\x89PNG\x00\xff not text")
    assert any("not UTF-8" in plain(e.value) for e in at.error) and Store().count() == 0
    good = json.dumps([r.to_dict() for r in recs]).encode()
    _upload(at, "results.json", good)
    no_errors(at)
    assert any("Imported 2 records" in s.value for s in at.success)
    assert Store().count() == 2
    at.run()  # the same file stays in the uploader: imported once, not again
    assert Store().count() == 2
    frame = next(d.value for d in at.dataframe)
    assert set(frame["source"]) == {"imported"}


def test_results_filter_delete_and_download():
    seed_store()
    at = app("pages/results.py")
    frame = at.dataframe[0].value
    assert len(frame) == 7
    at.multiselect(key="results.variant").set_value(["tf1_static", "keras"]).run()
    frame = at.dataframe[0].value
    assert sorted(frame["variant"]) == ["keras", "tf1_static"]
    key = at.dataframe[0].key
    at.session_state[key] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert any("Delete 1 record" in m.value for m in at.markdown)
    at.button(key="results.delete").click().run()
    no_errors(at)
    assert Store().count() == 6
    assert len(at.dataframe[0].value) == 1  # the other filtered record is left, and not selected
    assert not any("Delete 1 record" in m.value for m in at.markdown)
    labels = {b.label for b in at.get("download_button")}
    assert labels >= {"CSV", "JSON"}


def test_results_text_filter_and_bad_text_are_harmless():
    seed_store()
    at = app("pages/results.py")
    at.text_input(key="results.text").input("[(*").run()  # not a regex: no traceback
    no_errors(at)
    assert len(at.dataframe[0].value) == 0


def test_results_by_machine_sets_an_imported_machine_beside_this_one():
    seed_store()
    other = {**this_env(), "cpu": "NVIDIA box CPU", "machine": "gpu-box, 8 cores", "device": "GPU", "gpu": "A100"}
    Store().put_many([make_record(v, SEED).with_(source="imported", env=other, key=f"{i:064x}")
                      for i, v in enumerate(("tf1_static", "keras"))])
    home = app()  # the sidebar as AppTest sees it: on the router's first page
    assert [t for t in home.sidebar.text_input if t.key == "run.cluster"]  # "Runs go to" (never in hosted mode)
    assert [c for c in home.sidebar.caption if "Store: " in c.value]
    at = app("pages/results.py")
    at.session_state["results.view"] = "by machine"
    at.run()
    no_errors(at)
    frame = at.dataframe[0].value
    machines = [c for c in frame.columns if c not in ("experiment", "configuration", "variant")]
    assert len(machines) == 2 and "this machine" in machines  # short labels; the caption names each in full
    assert any("never a ratio across machines" in c.value and "gpu-box, 8 cores" in c.value for c in at.caption)
    fwd = at.dataframe[0].value
    at.selectbox(key="results.machine-metric").set_value("train_ms").run()
    no_errors(at)
    assert not at.dataframe[0].value.equals(fwd)  # the train step's figures now


# -- speed and imports ---------------------------------------------------------------------------------------------
def test_pages_render_fast_and_never_import_tensorflow(tmp_path):
    seed_store(sweep=True)
    pages = ["pages/unrolling.py", "pages/results.py", "pages/overview.py"]
    renders_fast_without_tensorflow(render_probe(tmp_path, [(p, {}) for p in pages + pages[:1]]))
