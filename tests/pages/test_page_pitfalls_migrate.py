"""Issues 5 and 6, the pages: ``pages/pitfalls.py`` and ``pages/migrate.py`` through AppTest and in a real browser.

The records are real: made once per module by running the experiments' worker functions in-process at the quick
presets' sizes (tiny) and wrapped like ``api.run`` wraps them. Runs started from the pages go through ``ui.jobs`` with
``rnnlab.engine.api.run`` replaced by a fake that stores those records. One test converts a TF1 checkpoint written here by
``tf.compat.v1.train.Saver`` through the page's upload (a real ``python -m rnnlab convert`` subprocess).
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # before any TensorFlow import: the TF1 cells need tf-keras
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import re  # noqa: E402
import time  # noqa: E402
import urllib.parse  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from rnnlab.engine import api
from rnnlab.judge import select  # noqa: E402
from rnnlab.present import pitfalls as PV  # noqa: E402
from rnnlab.core.errors import RnnlabError  # noqa: E402
from rnnlab.experiments import migrate as migrate_exp  # noqa: E402
from rnnlab.experiments import pitfalls as pitfalls_exp  # noqa: E402
from rnnlab.present import migrate as MV  # noqa: E402
from rnnlab.core.record import Record  # noqa: E402
from rnnlab.core.store import Store  # noqa: E402
from tests.apptest_util import (no_errors, no_run_left_behind, open_app, plain,  # noqa: E402,F401
                                render_probe, renders_fast_without_tensorflow, shown_as)
from tests.factories import once_per_run, run_here, stored, this_env  # noqa: E402

pytestmark = [pytest.mark.slow,  # Streamlit pages, a browser or TensorFlow
              pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning")]

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
PIT, MIG = "pages/pitfalls.py", "pages/migrate.py"
QUICK_PIT = PV.preset_params("quick", "rnn")
QUICK_MIG = MV.preset_params("quick", "lstm", 2)


# -- records, made once --------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def records(tmp_path_factory) -> list[Record]:
    def make() -> list[Record]:
        out = [run_here(pitfalls_exp, v, QUICK_PIT, env=this_env(None)) for v in pitfalls_exp.VARIANTS]
        out += [run_here(pitfalls_exp, v, PV.preset_params("quick", c), env=this_env(None)) for c in ("lstm", "gru")
                for v in PV.SHARING_TF1]
        return out + [run_here(migrate_exp, v, QUICK_MIG, env=this_env(None)) for v in migrate_exp.VARIANTS]
    return once_per_run(tmp_path_factory, "pitfall-records", make)


def fill(recs) -> None:
    Store().put_many(recs)


def rec_of(recs, variant: str, **params) -> Record:
    return next(r for r in recs if r.variant == variant and all(r.params.get(k) == v for k, v in params.items()))


# -- AppTest helpers -----------------------------------------------------------------------------------------------
def app(page: str, query: dict | None = None) -> AppTest:
    return open_app(page, query, timeout=120)


no_exception = no_errors


def texts(at: AppTest, *kinds: str) -> str:
    return " | ".join(plain(e.value) for k in kinds for e in getattr(at, k))


def codes(at: AppTest) -> list[str]:
    return [c.value.strip() for c in at.code]


def frames(at: AppTest) -> dict[str, object]:
    """The page's dataframes by their first column's name."""
    return {d.value.columns[0]: d.value for d in at.dataframe}


class FakeRun:
    """In place of ``rnnlab.engine.api.run``: stores the module's record of each (point, variant) asked for."""

    def __init__(self, recs):
        self.recs = recs
        self.plans = []

    def __call__(self, plan, *, store=None, **_):
        self.plans.append(plan)
        store = store or Store()
        out = []
        for point in plan.points:
            for v in plan.variants:
                r = next(r for r in self.recs if r.variant == v and select.same_config(r.params, point))
                store.put(r)
                out.append(r)
        return out


def wait_for(at: AppTest, cond, timeout: float = 30.0) -> AppTest:
    deadline = time.monotonic() + timeout
    while not cond(at):
        assert time.monotonic() < deadline, "condition not reached: " + texts(at, "error", "warning", "info")
        time.sleep(0.1)
        at.run()
        no_exception(at)
    return at


# -- empty store: the code and how to get the live result ----------------------------------------------------------
def test_pitfalls_page_on_an_empty_store_shows_the_code_and_how_to_run_it():
    at = app(PIT)
    no_exception(at)
    spec = pitfalls_exp.PITFALLS["tf1_shared_dynamic"]
    assert spec["wrong_code"].strip() in codes(at) and spec["right_code"].strip() in codes(at)
    cmd = "python -m rnnlab run pitfalls --preset quick --variants tf1_shared_dynamic"  # Plan.command()
    assert cmd in texts(at, "info") and cmd == PV.cli_command("quick", "rnn", ["tf1_shared_dynamic"])
    assert not at.button(key="pitfalls.run").disabled
    assert set(frames(at)["pitfall"]["wrong code"]) == {"not run yet"}
    assert not at.error


def test_migrate_page_on_an_empty_store_shows_the_mapping_and_how_to_run_it():
    at = app(MIG)
    no_exception(at)
    mapping_frame = frames(at)["TF1 construct"]
    assert len(mapping_frame) == 11 and set(mapping_frame["checked live"]) == {"not run yet"}
    info = texts(at, "info")
    assert "python -m rnnlab run migrate --preset quick --variants convert_verify" in info  # Plan.command()
    assert "python -m rnnlab run migrate --preset quick --set cell=gru --set layers=1 --variants check_gru_cell" \
        == MV.cli_command("quick", "gru", 1, ["check_gru_cell"])
    assert "seed004_construct" in info
    assert MV.mapping.ROWS[0].keras3_code in codes(at)  # before/after of the first row
    assert not at.error


# -- stored records --------------------------------------------------------------------------------------------------
def test_pitfalls_page_shows_what_happened_here(records):
    fill(records)
    at = app(PIT)
    no_exception(at)
    assert not at.error
    rec = rec_of(records, "tf1_shared_dynamic", cell="rnn")
    d = rec.details
    assert d["error"].strip() in codes(at), "the error, verbatim"
    assert d["error_line"] in codes(at) and "dynamic_rnn(cell, x" in d["error_line"]
    body = texts(at, "markdown")
    assert f"fails while building, at line {d['error_lineno']} of the wrong code: ValueError" in body
    assert f"TensorFlow {d['tf_version']}" in texts(at, "caption")
    assert "Passed" in texts(at, "success")
    f = frames(at)
    facts = f["measure"].set_index("measure")
    assert facts.loc["distinct trainable variables", "wrong code"] == "2"
    assert facts.loc["distinct trainable variables", "right code"] == "6"
    assert list(f["sub-case"]["wrong code"]) == ["builds and runs", "fails while building"]
    matrix = f["cell"]
    assert len(matrix) == 3 * 2 * 2 and set(matrix["cell"]) == {"rnn", "lstm", "gru"}
    assert set(matrix["one kernel, 3 layers"]) == {"yes", "–"}
    summary = f["pitfall"]
    assert len(summary) == 13 and set(summary["right code check"]) == {"pass"}
    assert "runs (silently)" in set(summary["wrong code"])
    assert at.button(key="pitfalls.run").disabled and at.button(key="pitfalls.run_cells").disabled


def test_pitfalls_silent_pitfall_and_variations_from_the_url(records):
    fill(records)
    at = app(PIT, {"variants": "shape_time_major"})
    no_exception(at)
    assert at.selectbox(key="pitfalls.pitfall").value == "shape_time_major"
    assert "runs to its end: no exception" in texts(at, "warning")
    assert "outputs differ from the right code's" in texts(at, "markdown")
    at.selectbox(key="pitfalls.pitfall").set_value("shape_2d_input").run()
    no_exception(at)
    assert at.query_params["variants"] == "shape_2d_input"
    assert len(at.expander) >= 2  # the variations tried beside the wrong code, each with its verbatim error
    assert any("must be a sequence" in c.value for c in at.code)


def test_pitfalls_bad_url_warns_and_uses_defaults():
    at = app(PIT, {"variants": "nope", "preset": "huge", "cell": "transformer"})
    no_exception(at)
    warn = texts(at, "warning")
    assert "nope" in warn and "huge" in warn and "transformer" in warn
    assert at.selectbox(key="pitfalls.pitfall").value == "tf1_shared_dynamic"
    assert at.radio(key="pitfalls.preset").value == "quick" and at.selectbox(key="pitfalls.cell").value == "rnn"


def test_pitfalls_run_goes_through_the_background_jobs(records, monkeypatch):
    fake = FakeRun(records)
    monkeypatch.setattr(api, "run", fake)
    at = app(PIT)
    at.button(key="pitfalls.run_cells").click().run()
    wait_for(at, lambda a: "Run finished" in texts(a, "success"))
    plan = fake.plans[0]
    assert plan.experiment == "pitfalls" and set(plan.variants) == set(PV.SHARING_TF1)
    assert [p["cell"] for p in plan.points] == ["rnn", "lstm", "gru"] and plan.points[0]["units"] == 16
    assert len(frames(at)["cell"]) == 12


def test_migrate_page_shows_checks_demo_and_seed004(records):
    fill(records)
    at = app(MIG)
    no_exception(at)
    assert not at.error
    f = frames(at)
    live = list(f["TF1 construct"]["checked live"])
    assert all(v.startswith("pass (") for v in live), live
    ok = texts(at, "success")
    assert "Checked live here: passed" in ok and "Pass: max abs diff" in ok
    assert {"max |diff|, full lengths", "max |diff|, with sequence_length", "within 1e-05"} <= set(f["tensor"].columns)
    demo = rec_of(records, "convert_verify")
    assert TF_VERSION(demo) in texts(at, "caption")
    body = texts(at, "markdown")
    assert "0 trainable weights" in body and "not available with Keras 3" in body
    assert "Seed 004's construct, run here" in texts(at, "subheader")
    assert "what ran" not in f and len(MV.seed004_findings(rec_of(records, "seed004_construct"))) == 5  # as bullets
    assert sum(x in body for x in ("Seed 004's", "Corrected:")) >= 1
    assert "Not measured at these sizes yet" in texts(at, "caption")
    fill(_unroll_records())  # the cost, once the unrolling experiment measured seed 004's sizes
    at.run()
    # the comparison is three tables that fit the page (time and memory, build, agreement): the first has the ratios
    cost = next(d.value for d in at.dataframe if "forward vs keras_cell" in d.value.columns)
    assert list(cost["variant"]) == ["keras", "keras_cell"]
    assert list(cost["forward vs keras_cell"]) == ["0.50x (0.50–0.50)", "1.00x"]  # two rounds that agree
    links = at.get("page_link")
    link = next(p for p in links if "Unrolling" in p.proto.label)
    q = urllib.parse.parse_qs(link.proto.query_string)
    assert q["variants"] == ["keras,keras_cell"] and q["cell"] == ["lstm"] and q["units"] == ["32"]
    assert q["seq_len"] == ["28"] and q["ref"] == ["keras_cell"]


def _unroll_records() -> list[Record]:
    point, variants, _ = MV.cost_point({})
    params = {**point, "device": "cpu"}  # as api.run records the resolved device
    return [stored("unroll", v, params, env=this_env(None),
                   metrics={"fwd_ms": ms, "train_ms": 2 * ms, "build_s": 0.1, "peak_mem_mb": 50.0})
            for v, ms in zip(variants, (1.0, 2.0))]


def TF_VERSION(rec: Record) -> str:
    return f"TensorFlow {rec.env['tf']}"


def test_migrate_cudnn_widgets_and_url(records):
    fill(records)
    at = app(MIG, {"keras_layer": "GRU", "reset_after": "False", "variants": "check_gru_cell", "cell": "gru",
                   "layers": "1"})
    no_exception(at)
    assert at.selectbox(key="migrate.row").value == "check_gru_cell"
    assert at.selectbox(key="migrate.cell").value == "gru" and at.number_input(key="migrate.layers").value == 1
    assert "reset_after=False" in texts(at, "warning")
    # the gru/1-layer checks are not stored: the quick lstm/2 ones are shown, saying so
    assert "not at the sizes chosen" in texts(at, "success")
    at.selectbox(key="migrate.keras_layer").set_value("RNN(tf.compat.v1 LSTMCell) (seed 004)").run()
    no_exception(at)
    warn = texts(at, "warning")
    assert "always runs the generic loop" in warn and "not a Keras 3 cell" in warn
    assert at.query_params["keras_layer"] == "RNN(tf.compat.v1 LSTMCell) (seed 004)"
    at.selectbox(key="migrate.keras_layer").set_value("LSTM").run()
    at.selectbox(key="migrate.unroll").set_value("True").run()
    assert "unroll=True" in texts(at, "warning")
    link = next(p for p in at.get("page_link") if "Unrolling" in p.proto.label)
    assert "keras_unroll" in urllib.parse.parse_qs(link.proto.query_string)["variants"][0]

    bad = app(MIG, {"keras_layer": "Transformer", "preset": "xl", "layers": "99"})
    no_exception(bad)
    warn = texts(bad, "warning")
    assert "Transformer" in warn and "xl" in warn and "layers" in warn
    assert bad.selectbox(key="migrate.keras_layer").value == "LSTM"


def test_migrate_run_goes_through_the_background_jobs(records, monkeypatch):
    fake = FakeRun(records)
    monkeypatch.setattr(api, "run", fake)
    at = app(MIG)
    at.button(key="migrate.run_demo").click().run()
    wait_for(at, lambda a: "Pass: max abs diff" in texts(a, "success"))
    assert fake.plans[0].variants == ("convert_verify",) and fake.plans[0].points[0]["units"] == 8


# -- exports: the page's tables, cell by cell -------------------------------------------------------------------------
def _screen(value) -> str:
    """A cell as the Markdown exporter writes it: lines stripped, Markdown-safe (``format.md_text``), joined by <br>."""
    from rnnlab.core.format import md_text

    return "<br>".join(md_text(line.strip()) for line in str(value).splitlines()).strip()


def _md_cells(line: str) -> tuple[str, ...]:
    return tuple(c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip()[1:-1]))


def _md_tables(text: str) -> list[tuple[tuple[str, ...], list[tuple[str, ...]]]]:
    """Every pipe table of a Markdown file: (header, rows)."""
    out, block = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("| "):
            block.append(_md_cells(line))
        elif block:
            out.append((block[0], block[2:]))
            block = []
    return out


def _export_md(experiment: str, tmp_path) -> str:
    from rnnlab.commands import export

    (path,) = export.run(fmt="md", out=str(tmp_path / f"{experiment}.md"), experiment=experiment)
    return path.read_text()


def assert_page_tables_exported(at: AppTest, md: str, *, skip: tuple[str, ...] = ()) -> int:
    """Every dataframe the page shows (but ``skip``, by first column) is a table of the export, cell by cell."""
    exported = _md_tables(md)
    n = 0
    for d in at.dataframe:
        frame = d.value
        if frame.columns[0] in skip:
            continue
        cols = tuple(_screen(c) for c in frame.columns)
        rows = [tuple(_screen(v) for v in row) for row in frame.itertuples(index=False)]
        same_cols = [t for t in exported if t[0] == cols]
        assert same_cols, f"no exported table with columns {cols}"
        assert any(len(r) == len(rows) and all(shown_as(a, b) for ra, rb in zip(rows, r) for a, b in zip(ra, rb))
                   for _, r in same_cols), f"table {cols[0]!r}: rows differ from every exported one"
        n += 1
    return n


def test_export_pitfalls_writes_the_page_tables(records, tmp_path):
    fill(records)
    md = _export_md("pitfalls", tmp_path)
    assert md.count("Pitfalls: cell=") == 3  # a summary per stored configuration: rnn, lstm, gru at quick sizes
    for query in (None, {"variants": "keras_shared_sequential"}, {"variants": "shape_seq_len_dtype"}):
        at = app(PIT, query)
        no_exception(at)
        assert assert_page_tables_exported(at, md) >= 3
    rep = PV.report(Store().records("pitfalls"))
    assert rep.provenance["source"].startswith("measured here") and not rep.charts


def test_export_migrate_writes_the_page_tables(records, tmp_path):
    fill(records)
    md = _export_md("migrate", tmp_path)
    at = app(MIG)
    no_exception(at)
    assert assert_page_tables_exported(at, md) == 3  # mapping, the row's check, the demo (seed 004: its sentences)
    with pytest.raises(RnnlabError, match="python -m rnnlab run migrate --preset quick"):
        MV.report([])


def test_bundled_records_are_not_measured_here(records):
    bundled = [r.with_(source="baseline") for r in records]
    rec = rec_of(bundled, "tf1_shared_dynamic", cell="rnn")
    assert PV.happened_heading(rec).startswith("What happened (bundled from ")
    assert "here" not in PV.seen_on(rec).replace("not measured here", "")
    s004 = rec_of(bundled, "seed004_construct")
    assert MV.seed004_heading(s004).startswith("Seed 004's construct (bundled from ")
    assert MV.check_headline(rec_of(bundled, "check_dynamic_rnn")).startswith("Checked live (bundled from ")
    for t in PV.tables(bundled) + MV.tables(bundled):
        assert "measured here" not in t.caption.replace("not measured here", "") and "on this machine" not in t.caption
        assert " here" not in t.title


# -- the upload --------------------------------------------------------------------------------------------------------
def _upload(at: AppTest, files: list[tuple[str, bytes]]) -> AppTest:
    at.get("file_uploader")[0].set_value([(n, b, "application/octet-stream") for n, b in files])
    at.run()
    at.button(key="migrate.convert").click().run()
    return at


def test_upload_of_bad_files_is_an_error_and_nothing_else_changes(records):
    fill(records)
    at = app(MIG)
    before = (texts(at, "success"), len(at.dataframe), Store().count())
    _upload(at, [("model.ckpt.index", b"not an index"), ("model.ckpt.data-00000-of-00001", b"\0" * 8)])
    no_exception(at)
    assert "not a TensorFlow checkpoint index" in texts(at, "error")
    assert (texts(at, "success"), len(at.dataframe), Store().count()) == before
    assert not [b for b in at.get("download_button") if b.label.endswith(".keras")]
    _upload(at, [("model.ckpt.index", b"x"), ("other.data-00000-of-00001", b"x")])
    no_exception(at)
    assert "belongs to checkpoint 'other'" in texts(at, "error")


@pytest.mark.parametrize("files, message", [
    ([], "no files"),
    ([("a.data-00000-of-00001", b"x")], "no .index file"),
    ([("a.index", b"x"), ("b.index", b"x")], "several .index files"),
    ([("a.index", b"x")], "a.data-00000-of-00001 is missing"),
    ([("a.index", b"x"), ("a.data-00000-of-00002", b"x")], "missing shard(s): a.data-00001-of-00002"),
    ([("a.index", b"x"), ("a.data-00000-of-00002", b"x"), ("a.data-00001-of-00003", b"x")], "disagree"),
    ([("a.index", b"x"), ("a.data-00000-of-00001", b"x"), ("notes.txt", b"x")], "notes.txt: not a file"),
    ([("../a.index", b"x")], "not a checkpoint file name"),
    ([("a.index", b""), ("a.data-00000-of-00001", b"x")], "a.index is empty"),
    ([("a.index", b"x" * 10), ("a.data-00000-of-00001", b"x" * (2**20))], "limit here is 1 MB"),
])
def test_check_upload_refuses_with_a_message(files, message):
    with pytest.raises(RnnlabError) as e:
        api.convert.check_upload(files, max_mb=1)
    assert message in str(e.value)


def test_check_upload_accepts_one_checkpoint_and_parses_the_command():
    idx = b"\0" * 20 + bytes.fromhex("57fb808b247547db")
    ok = api.convert.check_upload([("checkpoint", b"x"), ("m.ckpt-7.index", idx), ("m.ckpt-7.data-00001-of-00002", b"1"),
                          ("m.ckpt-7.data-00000-of-00002", b"0"), ("m.ckpt-7.meta", b"g")])
    assert ok.prefix == "m.ckpt-7" and ok.ignored == ("checkpoint", "m.ckpt-7.meta")
    assert ok.write == ("m.ckpt-7.index", "m.ckpt-7.data-00000-of-00002", "m.ckpt-7.data-00001-of-00002")
    argv = api.convert.convert_argv("py", "/t/m.ckpt-7", "/t/model.keras", cell="gru", forget_bias=0.5, scope="s")
    assert argv[:7] == ["py", "-m", "rnnlab", "convert", "/t/m.ckpt-7", "--out", "/t/model.keras"]
    assert argv[7:] == ["--json", "--forget-bias", "0.5", "--cell", "gru", "--scope", "s"]
    with pytest.raises(RnnlabError, match=r"^m\.ckpt-7: not a readable TF checkpoint"):
        api.convert.parse_convert_output(2, "", "W tf noise\nrnnlab: error: /tmp/x/m.ckpt-7: not a readable TF checkpoint",
                                hide="/tmp/x")
    with pytest.raises(RnnlabError, match="exit code -9"):
        api.convert.parse_convert_output(-9, "", "Killed")
    res = api.convert.parse_convert_output(1, 'noise\n{\n "verification": {"pass": false}\n}\n', "")
    assert res["verification"]["pass"] is False


def _write_tf1_checkpoint(prefix: Path) -> None:
    import numpy as np
    import tensorflow as tf

    g = tf.Graph()
    with g.as_default():
        cell = tf.compat.v1.nn.rnn_cell.MultiRNNCell([tf.compat.v1.nn.rnn_cell.BasicLSTMCell(5) for _ in range(2)])
        x = tf.compat.v1.placeholder(tf.float32, [None, 4, 3])
        tf.compat.v1.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            rng = np.random.default_rng(3)
            for v in tf.compat.v1.global_variables():
                v.load(rng.uniform(-0.5, 0.5, v.shape).astype(np.float32), sess)
            tf.compat.v1.train.Saver().save(sess, str(prefix))


def test_upload_of_a_real_tf1_checkpoint_converts_and_offers_the_keras_file(tmp_path):
    _write_tf1_checkpoint(tmp_path / "model.ckpt")
    files = [(p.name, p.read_bytes()) for p in sorted(tmp_path.iterdir()) if p.is_file()]
    assert {"checkpoint", "model.ckpt.index", "model.ckpt.data-00000-of-00001"} <= {n for n, _ in files}
    at = app(MIG)
    at.number_input(key="migrate.forget_bias").set_value(1.0)
    _upload(at, files)
    no_exception(at)
    assert not at.error, texts(at, "error")
    assert "Verified: max abs diff" in texts(at, "success")
    assert "2 x BasicLSTMCell (lstm)" in texts(at, "markdown")
    assert any(b.label == "Download model.ckpt.keras" for b in at.get("download_button"))
    assert at.session_state["migrate.converted"]["keras"][:2] == b"PK"  # a .keras file is a zip
    ver = frames(at)["tensor"]
    assert set(ver["within 1e-05"]) == {"pass"}


# -- pure views ------------------------------------------------------------------------------------------------------
def test_views_without_records_and_the_cudnn_question():
    s = PV.summary({}, QUICK_PIT)
    assert len(s.rows) == 13 and {r[1] for r in s.rows} == {"not run yet"}
    assert PV.sharing_matrix([]) is None
    assert MV.cudnn_question({})["eligible"] is True
    q = MV.cudnn_question({"keras_layer": "GRU", "recurrent_activation": "hard_sigmoid", "use_cudnn": "True"})
    assert not q["eligible"] and any("hard_sigmoid" in r for r in q["reasons"])
    assert any("raises ValueError" in r for r in q["reasons"])
    assert MV.keras_code({"keras_layer": "GRU", "reset_after": "False"}) == \
        "keras.layers.GRU(units, return_sequences=True, reset_after=False)(x)"
    with pytest.raises(RnnlabError, match="keras_layer='X'"):
        MV.cudnn_question({"keras_layer": "X"})


# -- speed, imports, browser -----------------------------------------------------------------------------------------
def test_pages_render_from_the_store_fast_and_never_import_tensorflow(records, tmp_path):
    fill(records)
    out = render_probe(tmp_path, [(PIT, {}), (MIG, {})])
    renders_fast_without_tensorflow(out)
    tables = {r["page"]: r["tables"] for r in out["renders"]}
    assert len(tables[PIT]) >= 4 and len(tables[MIG]) >= 3, tables  # stored results shown


def _settle(page, timeout: float = 15.0) -> None:
    """Tables load their grid code on first use: wait until the page stops growing."""
    js = "() => document.querySelector('[data-testid=\"stMain\"]').scrollHeight"
    last, since, end = None, time.monotonic(), time.monotonic() + timeout
    while time.monotonic() < end:
        h = page.evaluate(js)
        if h != last:
            last, since = h, time.monotonic()
        elif time.monotonic() - since > 1.0:
            return
        time.sleep(0.2)


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="/usr/bin/chromium is missing")
def test_browser_pages_with_records_and_screenshots(records, tmp_path):
    from tests.browser_util import chromium_page, open_page, screenshot, streamlit_server

    store = tmp_path / "results.sqlite"
    Store(store).put_many(records)
    with streamlit_server(store) as url, chromium_page() as page:
        for path, name, expect in (("/pitfalls", "pitfalls", "What happened here"),
                                   ("/migrate", "migrate", "Seed 004's construct, run here")):
            open_page(page, url + path)
            _settle(page)
            assert page.locator('[data-testid="stException"]').count() == 0, \
                page.locator('[data-testid="stException"]').first.inner_text()[:2000]
            main = page.locator('[data-testid="stMain"]').inner_text()
            assert expect in main and "Traceback" not in main
            shot = screenshot(page, name, always=True)
            assert shot.stat().st_size > 10_000
        open_page(page, url + "/pitfalls?variants=shape_seq_len_dtype&cell=rnn&preset=quick")
        _settle(page)
        assert "silently truncated" in page.locator('[data-testid="stMain"]').inner_text()
