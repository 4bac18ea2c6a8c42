"""A fresh hosted copy: hosted mode on, an empty store, and the bundled results in data/baseline.

Every page shows the bundled report (labelled as not measured here), and a run over the hosted caps is refused
with a message. Uses the real bundled files: what a visitor of the hosted demo would see.
"""

from __future__ import annotations

import json

import pytest

from rnnlab.core.errors import RnnlabError
from rnnlab.engine import api
from rnnlab.core import baseline
from rnnlab.core.store import Store
from tests.apptest_util import no_errors, plain
from tests.apptest_util import open_app as app
from ui import nav

pytestmark = pytest.mark.slow  # Streamlit pages, a browser or TensorFlow

# the pages that show results (the Glossary shows none: it explains the words, "measured here" among them)
PAGES = [p.file for p in nav.existing() if p.url_path != "glossary"]


@pytest.fixture(autouse=True)
def hosted(monkeypatch):
    monkeypatch.setenv("RNNLAB_HOSTED", "1")
    monkeypatch.delenv("RNNLAB_BASELINE")  # the real bundled results, as a hosted copy has them


def test_the_bundled_results_cover_every_experiment_a_page_shows():
    recs = baseline.load()
    assert recs, "data/baseline holds the bundled results (python -m scripts.make_baseline)"
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


def test_an_oversize_run_is_not_offered_and_says_why(monkeypatch):
    calls = []
    monkeypatch.setattr(api, "run", lambda *a, **k: calls.append(1) or [])
    at = app("pages/unrolling.py", {"seq_len": "1000", "variants": "tf1_static,tf1_dynamic"})
    no_errors(at)
    run = at.button(key="unroll.run")
    assert run.disabled and "seq_len=1000 (at most 200)" in plain(run.help)
    assert at.button(key="unroll.fresh").disabled
    caps = [plain(c.value) for c in at.caption]
    assert any("Not in this demo" in c and "seq_len=1000 (at most 200)" in c and "python -m rnnlab run unroll" in c
               for c in caps), caps
    assert calls == []


def test_the_sweep_over_the_caps_is_a_command_not_a_button():
    at = app("pages/unrolling.py", {"variants": "tf1_static,tf1_dynamic"})
    no_errors(at)
    assert not [b for b in at.button if b.key == "unroll.sweep"], "no live sweep button in hosted mode"
    caps = [plain(c.value) for c in at.caption]
    assert any("Not in this demo" in c and "seq_len=" in c and "python -m rnnlab" in c for c in caps), caps


def test_measure_all_again_is_not_offered_stored_results_are_read_only():
    at = app("pages/unrolling.py", {"variants": "tf1_static", "units": "8", "seq_len": "10", "batch": "2"})
    no_errors(at)
    again = at.button(key="unroll.fresh")
    assert again.disabled and "read-only" in plain(again.help)


# -- Results: read-only, the visitor's uploads kept in the session ---------------------------------------------------
def _records_file(n: int = 2) -> bytes:
    from tests.factories import make_record

    variants = ["tf1_static", "tf1_dynamic", "keras"]
    recs = [make_record(variants[i % 3], {"units": 8 + i // 3, "seq_len": 10, "batch": 2}) for i in range(n)]
    return json.dumps([r.to_dict() for r in recs]).encode()


def _upload(at, name: str, data: bytes):
    return at.file_uploader(key="results.upload").upload(name, data, "application/octet-stream").run()


def test_results_has_no_delete_control_and_says_read_only():
    at = app("pages/results.py")
    no_errors(at)
    assert not [b for b in at.button if "delete" in (b.key or "")]
    assert not at.get("popover"), "no Delete popover at all in hosted mode"
    assert any("read-only in this demo" in plain(i.value) for i in at.info)
    # no Ray cluster to send runs to, and no server path (outside hosted mode both are in the sidebar:
    # test_app's test_results_by_machine_...)
    home = app()
    assert [c for c in home.sidebar.caption if "This machine's store" in c.value]  # the sidebar is there
    assert not [t for t in home.sidebar.text_input if t.key == "run.cluster"]
    assert not [c for c in home.sidebar.caption if "Store: " in c.value]


def test_an_upload_is_shown_to_that_session_only_and_never_stored():
    at = app("pages/results.py")
    before = Store().count()
    _upload(at, "theirs.json", _records_file(2))
    no_errors(at)
    assert any("Imported 2 records" in plain(s.value) and "not stored" in plain(s.value) for s in at.success), \
        [s.value for s in at.success] + [e.value for e in at.error]
    frame = next(d.value for d in at.dataframe)
    assert (frame["source"] == "imported").sum() == 2
    assert Store().count() == before  # the shared store is untouched
    at.switch_page("pages/unrolling.py")  # every page of this session reads them: here, at their configuration
    at.query_params.update({"units": "8", "layers": "1", "seq_len": "10", "batch": "2", "cell": "rnn",
                            "variants": "tf1_static,tf1_dynamic"})
    at.run()
    no_errors(at)
    assert "imported" in _everything(at)
    assert at.dataframe, "the comparison table of the uploaded records"
    other = app("pages/results.py")  # a second visitor
    frame2 = next(d.value for d in other.dataframe)
    assert not (frame2["source"] == "imported").any()


def test_an_oversized_upload_is_refused_with_one_line(monkeypatch):
    monkeypatch.setenv("RNNLAB_HOSTED_MAX_IMPORT_RECORDS", "3")
    monkeypatch.setenv("RNNLAB_HOSTED_MAX_IMPORT_MB", "1")
    at = app("pages/results.py")
    # the widget itself lets a file over the demo's cap through (its own refusal is a red chip, the reason in a
    # tooltip), so the page says why below; the cap is said before anything is uploaded
    assert at.file_uploader(key="results.upload").proto.max_upload_size_mb >= 50  # the server's own cap
    assert any("at most 1 MB and 3 records per visit" in plain(c.value) for c in at.caption)
    _upload(at, "many.json", _records_file(5))
    no_errors(at)
    msgs = [plain(e.value) for e in at.error]
    assert any("Nothing imported" in m and "at most 3 uploaded records" in m for m in msgs), msgs
    big = b"[" + b" " * (2 * 2**20) + b"]"
    _upload(at, "big.json", big)
    msgs = [plain(e.value) for e in at.error]
    assert any("at most 1 MB of uploads" in m for m in msgs), msgs
    assert not any("Imported" in plain(s.value) for s in at.success)
    assert Store().count() == 0


@pytest.mark.parametrize("name, data", [("junk.bin", b"\x00\x01junk\xff"), ("notes.txt", b"hello"),
                                        ("junk.json", b"{not json")])
def test_a_junk_upload_shows_a_line_of_text(name, data):
    at = app("pages/results.py")
    _upload(at, name, data)
    no_errors(at)
    msgs = [plain(e.value) for e in at.error]
    assert len(msgs) == 1 and msgs[0].startswith(f"Nothing imported: {name}:") and len(msgs[0]) > 40, msgs
    assert "Traceback" not in msgs[0]


def test_a_conversion_is_refused_while_a_run_goes(monkeypatch):
    """One heavy process: with a run going, Convert is disabled, and a conversion racing it is refused."""
    import threading

    from ui.jobs import manager

    release = threading.Event()
    monkeypatch.setattr(api, "run", lambda *a, **k: release.wait(30) or [])
    plan = api.plan("migrate", overrides={"units": 8}, variants=["convert_verify"])
    job = manager().submit(plan)
    try:
        at = app("pages/migrate.py")
        no_errors(at)
        at.file_uploader(key="migrate.upload").upload("m.index", b"x", "application/octet-stream").run()
        conv = at.button(key="migrate.convert")
        assert conv.disabled and "wait for the run" in conv.help
        with pytest.raises(RnnlabError, match="already going"):
            with manager().hold("a checkpoint conversion"):
                pass
    finally:
        _let_go(release, job)


def _let_go(release, job) -> None:
    """Let a held fake run end, and wait (at most 6 s) until its job is no longer active."""
    import threading

    release.set()
    for _ in range(300):
        if not job.active:
            break
        threading.Event().wait(0.02)


QUERY = {"variants": "tf1_static", "units": "8", "seq_len": "10", "batch": "2"}  # nothing stored or bundled


@pytest.mark.parametrize("same", [False, True])
def test_a_visitor_kept_waiting_by_another_visitors_run_is_told_why_and_when(monkeypatch, same):
    """Another visitor's run holds the one slot: the page says so where its results will be, and when to try again
    (from that run's estimate), never "Measuring" as if it were this visitor's own run."""
    import threading

    from rnnlab.engine.hosted import check
    from ui.jobs import manager

    release = threading.Event()
    monkeypatch.setattr(api, "run", lambda *a, **k: release.wait(30) or [])
    from rnnlab.present.unrolling import SEED  # the page's settings where the URL names none

    theirs = api.plan("unroll", overrides={**SEED, "units": 8 if same else 9, "seq_len": 10, "batch": 2},
                      variants=["tf1_static"])
    job = manager().submit(check(theirs), owner="another-visitor", expected_s=90.0)
    try:
        at = app("pages/unrolling.py", QUERY)
        no_errors(at)
        said = [plain(i.value) for i in at.info]
        assert not any(s.startswith("Measuring") for s in said), said
        if same:
            assert any("Another visitor's run is measuring these same settings: the table and charts appear here "
                       "when it ends (about " in s for s in said), said
        else:
            assert any("Another visitor's run is measuring, and this demo runs one heavy process at a time, so yours "
                       "has not started: try again in about " in s for s in said), said
        assert at.button(key="unroll.run").disabled
    finally:
        _let_go(release, job)


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


def test_a_visitors_run_writes_through_a_store_that_replaces_nothing_stored(monkeypatch):
    """Hosted, every run's store keeps what is stored (``Store(keep_stored=True)``, tests/core/test_store.py): an
    imported record under this machine's key is never replaced by a visitor's run. Locally a run may replace."""
    from ui import jobs

    assert jobs._run_store().keep_stored
    monkeypatch.setenv("RNNLAB_HOSTED", "0")
    assert not jobs._run_store().keep_stored


def test_a_checkpoint_upload_over_its_count_or_size_is_refused_at_once_and_not_held(monkeypatch):
    """The Migrate uploader's files are checked for count and size (and booked against every visitor's uploads)
    on the first script run that sees them, before anything reads them; refused files leave the server's memory
    and Convert has nothing to convert. (It held three 40 MB files and any number of files until Convert.)"""
    monkeypatch.setattr(api.convert, "MAX_UPLOAD_MB", 1)
    at = app("pages/migrate.py")
    seven = [(f"m.data-0000{i}-of-00007", b"x" * 10, "application/octet-stream") for i in range(7)]
    at.file_uploader(key="migrate.upload").set_value(seven).run()
    no_errors(at)
    msgs = [plain(e.value) for e in at.error]
    assert any("this checkpoint: 7 files; at most 6 in one upload here" in m for m in msgs), msgs
    assert at.button(key="migrate.convert").disabled
    at.file_uploader(key="migrate.upload").set_value(
        [("m.index", b"x" * (600 * 1024), "application/octet-stream"),
         ("m.data-00000-of-00001", b"x" * (600 * 1024), "application/octet-stream")]).run()
    msgs = [plain(e.value) for e in at.error]
    assert any("this checkpoint: 1.2 MB; at most 1 MB in one upload here" in m for m in msgs), msgs
    assert at.button(key="migrate.convert").disabled
    at.file_uploader(key="migrate.upload").set_value(
        [("m.index", b"x" * 10, "application/octet-stream")]).run()  # within the caps: held, Convert offered
    assert not at.error and not at.button(key="migrate.convert").disabled
