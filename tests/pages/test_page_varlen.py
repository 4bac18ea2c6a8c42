"""The Variable lengths page (issue 4): AppTest with real records of varlen, padding and seed003 made once in process
at tiny sizes, the views it draws, a headless browser look (screenshot), and the no-TensorFlow rule.

The records come from the experiments' own ``run_variant`` (every variant, a WorkerContext) wrapped the way
``api.run`` wraps them, so the page is tested on what the workers really return.
"""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rnnlab.engine import api
from rnnlab.core import baseline
from rnnlab import experiments
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record
from rnnlab.core.store import Store
from rnnlab.judge import claims
from rnnlab.present import varlen as vv
from tests.apptest_util import (no_errors, no_run_left_behind, open_app, plain, render_probe,  # noqa: F401
                                renders_fast_without_tensorflow)
from tests.factories import VARLEN_TINY, as_records, quick_values, varlen_runs

pytestmark = pytest.mark.slow  # Streamlit pages, a browser or TensorFlow

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "streamlit_app.py")
PAGE = "pages/varlen.py"
TAB_OF = {"varlen": "semantics", "padding": "cost", "seed003": "seed003"}
PREFIX = {"varlen": "varlen.sem.", "padding": "varlen.pad.", "seed003": "varlen.s003."}


TINY = VARLEN_TINY


def tiny_query(experiment: str) -> dict:
    """The page's URL for the records' settings (every variant: the URL names none)."""
    return {"tab": TAB_OF[experiment], **{k: str(v) for k, v in TINY[experiment].items()}}


# -- records, once per run ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def recs(tmp_path_factory) -> dict[str, list[Record]]:
    """Every variant of varlen, padding and seed003 at the TINY sizes, as the records ``api.run`` would store."""
    return {name: as_records(name, params, res) for name, (params, res) in varlen_runs(tmp_path_factory).items()}


def fill(recs: dict, *names: str) -> None:
    Store().put_many([r for n in (names or recs) for r in recs[n]])


# -- AppTest helpers ---------------------------------------------------------------------------------------------------
def app(query: dict | None = None) -> AppTest:
    return open_app(PAGE, query)


def alerts(at: AppTest) -> str:
    return plain(" | ".join(e.value for e in [*at.error, *at.warning, *at.info, *at.success]))


def frame(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def markdown(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown)


def charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]


# -- the tabs with records ---------------------------------------------------------------------------------------------
def test_semantics_tab_shows_checks_heatmap_and_gpu_note(recs):
    fill(recs, "varlen")
    at = app(tiny_query("varlen"))
    no_errors(at)
    assert not at.error and not at.warning, alerts(at)
    table = frame(at, "(a) zeros")
    rows = {r["variant"]: r for r in table.to_dict("records")}
    assert list(rows) == list(experiments.get("varlen").variants)
    assert [rows["tf1_static"][c] for c in ("(a) zeros", "(b) state kept", "(c) final state")] == ["pass"] * 3
    assert [rows["keras_mask_arg"][c] for c in ("(a) zeros", "(b) state kept", "(c) final state")] == \
        ["FAIL", "pass", "pass"]
    assert rows["keras_mask_arg"]["zofm=True"] == "3/3 pass" and rows["keras_mask_arg"]["outputs past length"] == \
        "last output repeated"
    assert rows["keras_nolen"]["(b) state kept"] == "FAIL" and float(rows["keras_nolen"]["final-state drift"]) > 1e-3
    text = markdown(at)
    assert "Honour the lengths" in text and "zero_output_for_mask=True" in text and "Without lengths" in text
    heat = [c for c in charts(at) if "facet" in c]
    assert heat and {"rect", "tick"} <= {layer["mark"]["type"] for layer in heat[0]["spec"]["layer"]}
    assert "cuDNN can take this mask" in text and "padded at the front" in text
    assert any("measured only on a GPU" in c.value for c in at.caption)
    assert at.button(key="varlen.sem.run").disabled  # everything stored
    assert {b.label for b in at.get("download_button")} >= {"CSV", "Markdown", "LaTeX"}
    assert "Make PNG charts" in {b.label for b in at.button}  # made on a click, then held by its button


def test_cost_tab_shows_strategies_and_seed001s_pair(recs):
    fill(recs, "padding")
    at = app(tiny_query("padding"))
    no_errors(at)
    table = frame(at, "padding fed")
    assert list(table["variant"]) == list(experiments.get("padding").variants)
    assert all(v.endswith("%") for v in table["padding fed"])
    assert table.set_index("variant").loc["static_fixed", "traces / graphs"] == "1"
    assert "Seed 001's choice" in markdown(at)
    assert any("hconcat" in c for c in charts(at))


def test_seed003_tab_puts_the_seeds_figures_beside_this_machines(recs):
    fill(recs, "seed003")
    at = app(tiny_query("seed003"))
    no_errors(at)
    verdict = [a.value for a in [*at.warning, *at.success] if a.value.startswith("Verdict:")]
    assert len(verdict) == 1
    table = frame(at, "seed 003: static (its log)").set_index("measure")
    warm = table.loc["steps/s once warm (the seed's steps 101 -> 201)"]
    assert warm["seed 003: static (its log)"] == "20.3" and warm["seed 003: dynamic (its log)"] == "5.41"
    assert warm["static (this machine)"] != "–" and warm["dynamic (this machine)"] != "–"
    text = markdown(at)
    assert "smaller configuration than the seed's" in text and "max(sequence_length) = 3" in text
    assert any("compares like with like" in c.value for c in at.caption)
    assert charts(at)
    # the verdict is the Claims table's, on the same records
    status = vv.conclusion([v.status for c, v in claims.evaluate(recs["seed003"]) if c.id in S003_CLAIMS])
    assert verdict[0].startswith(f"Verdict: the conclusion {status} here:")


S003_CLAIMS = [cid for cid, _ in vv.SEED003_CLAIMS]
# (static steps/s, build s), (dynamic steps/s, build s): static faster and slower to build; dynamic faster; within
# the margin; static faster but as fast to build
VERDICT_CASES = {"static faster": ((20.0, 30.0), (5.0, 1.0)), "dynamic faster": ((2.0, 30.0), (5.0, 1.0)),
                 "within the margin": ((5.2, 1.05), (5.0, 1.0)), "builds as fast": ((20.0, 1.0), (5.0, 1.0))}


@pytest.mark.parametrize("case", list(VERDICT_CASES))
def test_seed003_verdict_on_the_page_is_the_claims_tables(recs, case):
    """Static faster / dynamic faster / within the margin: the page's verdict, ``vv.seed003_verdict`` and the Claims
    table (``claims.evaluate``, what ``python -m rnnlab claims`` prints) give one status for the same records."""
    (ss, sb), (ds, db) = VERDICT_CASES[case]
    new = {"static": (ss, sb), "dynamic": (ds, db)}
    records = [r.with_(metrics={**r.metrics, "steps_per_s": new[r.variant][0], "build_s": new[r.variant][1]})
               for r in recs["seed003"]]
    Store().put_many(records)
    table = {c.id: v.status for c, v in claims.evaluate(records)}
    want = vv.conclusion([table[cid] for cid in S003_CLAIMS])
    assert vv.seed003_verdict(records).status == want
    assert [v.status for _, _, v in vv.seed003_verdict(records).claims] == [table[cid] for cid in S003_CLAIMS]
    at = app(tiny_query("seed003"))
    no_errors(at)
    verdict = [a.value for a in [*at.warning, *at.success] if a.value.startswith("Verdict:")]
    assert len(verdict) == 1 and verdict[0].startswith(f"Verdict: the conclusion {want} here:"), verdict
    text = markdown(at)
    for cid, words in vv.SEED003_CLAIMS:
        assert f"\u201c{words}\u201d {table[cid]}" in text


# -- no records, presets, the URL --------------------------------------------------------------------------------------
@pytest.mark.parametrize("experiment", ["varlen", "padding", "seed003"])
def test_empty_store_says_how_to_get_results(experiment):
    at = app({"tab": TAB_OF[experiment]})
    no_errors(at)
    assert any(f"python -m rnnlab run {experiment} --preset seed" in i.value and "press **Run** above" in i.value
               for i in at.info), alerts(at)
    assert at.button(key=PREFIX[experiment] + "run").label.startswith("Run: measure")
    if experiment == "seed003":  # the seed's own figures show before anything is measured
        table = frame(at, "seed 003: static (its log)")
        assert "20.3" in set(table["seed 003: static (its log)"]) and set(table["static (measured)"]) == {"–"}


def test_bundled_results_show_labelled(recs, monkeypatch):
    monkeypatch.setattr(baseline, "load", lambda *a, **k: [r.with_(source="baseline") for r in recs["varlen"]])
    at = app(tiny_query("varlen"))
    no_errors(at)
    assert any("Bundled results from" in i.value and "not on this one" in i.value for i in at.info)
    assert "bundled results (not measured here)" in " ".join(c.value for c in at.caption)
    assert "measure 7 variants" in at.button(key="varlen.sem.run").label  # bundled ones are not this machine's


# what a figure from another machine must never say ("bundled results (not measured here)" is its label)
HERE_WORDS = re.compile(r"(?<!not )measured here|on this machine|measured on this|on this [cg]pu", re.I)


def page_text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [h.value for h in at.header]
    parts += [a.value for a in [*at.info, *at.success, *at.warning, *at.error]]
    parts += [" ".join(map(str, d.value.columns)) + " " + " ".join(d.value.astype(str).to_numpy().ravel())
              for d in at.dataframe]
    parts += [json.dumps(c) for c in charts(at)]
    return plain(" | ".join(str(p) for p in parts))


@pytest.mark.parametrize("tab", ["semantics", "cost", "seed003"])
def test_bundled_results_only_never_say_measured_here(tab, monkeypatch):
    """A fresh copy: an empty store and the real data/baseline. Every tab shows the bundled results and says whose
    machine they come from, never "measured here" or "on this machine"."""
    monkeypatch.delenv("RNNLAB_BASELINE")  # the real bundled results (tests/conftest.py points it at nothing)
    assert Store().count() == 0 and baseline.load()
    at = app({"tab": tab})
    no_errors(at)
    assert at.dataframe, "a table of bundled results"
    text = page_text(at)
    assert not HERE_WORDS.search(text), HERE_WORDS.search(text).group(0) + ": " + text[
        max(0, HERE_WORDS.search(text).start() - 300):HERE_WORDS.search(text).end() + 100]
    machine = baseline.load()[0].machine  # "AMD EPYC, 2 cores": the bundled results' machine
    assert f"bundled results (not measured here) from CPU: {machine}" in text
    assert " here)" not in " ".join(" ".join(map(str, d.value.columns)) for d in at.dataframe)
    if tab == "seed003":
        assert "static (bundled)" in text and f"On the bundled results' CPU ({machine}" in text
        verdict = [a.value for a in [*at.warning, *at.success] if a.value.startswith("Verdict:")]
        assert len(verdict) == 1 and "the bundled results' CPU" in verdict[0] and " here" not in verdict[0]
        status = vv.conclusion([v.status for c, v in claims.evaluate(baseline.load()) if c.id in S003_CLAIMS])
        assert verdict[0].startswith(f"Verdict: the conclusion {status} on the bundled results' CPU")


def md_tables(text: str) -> list[list[list[str]]]:
    """The pipe tables of an exported Markdown file: [header row, rows...] each, cells unescaped."""
    out, inside = [], False
    for line in text.splitlines():
        if not line.startswith("| "):
            inside = False
            continue
        if not inside:
            out.append([])
            inside = True
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\) \| ", line[2:-2])]
        if not all(re.fullmatch(r":?-+:?", c) for c in cells):
            out[-1].append(cells)
    return out


def test_export_writes_the_tables_the_page_shows(recs, tmp_path):
    """``python -m rnnlab export --experiment E --format md``: the tables equal the page's, cell by cell."""
    from rnnlab.commands import export

    fill(recs)
    for experiment in ("varlen", "padding", "seed003"):
        at = app(tiny_query(experiment))
        no_errors(at)
        shown = at.dataframe[0].value
        page = [list(map(str, shown.columns))] + [[str(c) for c in row] for row in shown.itertuples(index=False)]
        # the page's TableView is the view module's, for the records the page shows
        view = vv.views(experiment, recs[experiment]).table
        assert page == [list(view.columns)] + [list(r) for r in view.rows]
        path = export.run(fmt="md", out=str(tmp_path / f"{experiment}.md"), experiment=experiment)[0]
        assert page in md_tables(path.read_text()), experiment


def test_presets_set_the_widgets_and_the_url():
    at = app()
    at.button(key="varlen.sem.preset_quick").click().run()
    q = quick_values("varlen")
    assert at.number_input(key="varlen.sem.units").value == q["units"]
    assert at.text_input(key="varlen.sem.lengths").value == q["lengths"]
    assert at.multiselect(key="varlen.sem.variants").value == experiments.get("varlen").presets["quick"]["variants"]
    assert at.query_params["units"] == str(q["units"]) and at.query_params["tab"] == "semantics"
    assert any("python -m rnnlab run varlen --preset quick" in i.value for i in at.info)

    at = app({"tab": "seed003"})
    at.button(key="varlen.s003.preset_quick").click().run()
    at.button(key="varlen.s003.preset_seed").click().run()
    seed = experiments.get("seed003").presets["seed"]
    assert at.number_input(key="varlen.s003.units").value == seed["units"] == 200
    assert at.number_input(key="varlen.s003.seq_len").value == 300
    assert at.text_input(key="varlen.s003.lengths").value == "fixed:20"
    assert at.query_params["batch"] == "200" and at.query_params["tab"] == "seed003"


def test_typed_lengths_become_a_lengths_value():
    at = app({"tab": "semantics"})
    at.text_input(key="varlen.sem.lengths").input("12 9  5,3").run()
    no_errors(at)
    assert at.text_input(key="varlen.sem.lengths").value == "rows:12/9/5/3"
    assert at.query_params["lengths"] == "rows:12/9/5/3"
    assert any("true length of each row: 12, 9, 5, 3" in c.value for c in at.caption)
    at.text_input(key="varlen.sem.lengths").input("twelve").run()
    no_errors(at)
    assert any("is not understood" in plain(e.value) for e in at.error)
    assert at.query_params["lengths"] == "rows:12/9/5/3"  # the URL keeps the last usable value


def test_bad_url_values_warn_and_fall_back():
    at = app({"tab": "semantics", "cell": "transformer", "units": "-5", "lengths": "12 9",
              "variants": "nope,keras_nolen"})
    no_errors(at)
    text = plain(" ".join(w.value for w in at.warning))
    assert "cell='transformer'" in text and "units" in text and "lengths" in text and "nope" in text
    assert at.selectbox(key="varlen.sem.cell").value == "lstm" and at.number_input(key="varlen.sem.units").value == 32
    assert at.multiselect(key="varlen.sem.variants").value == ["keras_nolen"]
    assert at.query_params["cell"] == "lstm"

    at = app({"tab": "bogus"})
    no_errors(at)
    assert any("unknown tab 'bogus'" in plain(w.value) for w in at.warning)
    assert at.query_params["tab"] == "semantics"

    at = app({"tab": "semantics", "seq_len": "500"})  # a value the experiment refuses: its reason, no traceback
    no_errors(at)
    assert any("seq_len <= 200" in plain(e.value) for e in at.error)

    at = app({"tab": "cost", "n_sequences": "many", "buckets": "0"})
    no_errors(at)
    text = plain(" ".join(w.value for w in at.warning))
    assert "n_sequences='many'" in text and "buckets=0" in text


def test_run_goes_through_the_background_jobs(recs, monkeypatch):
    calls = []
    started = threading.Event()

    def fake_run(plan, *, store=None, on_progress=None, cancel=None, **_):
        calls.append(plan)
        started.set()
        out = [r for r in recs[plan.experiment] if r.variant in plan.variants]
        (store or Store()).put_many(out)
        return out

    monkeypatch.setattr(api, "run", fake_run)
    at = app(tiny_query("seed003"))
    assert "measure 2 variants" in at.button(key="varlen.s003.run").label
    at.button(key="varlen.s003.run").click().run()
    assert started.wait(10)
    deadline = time.monotonic() + 30
    while not any(s.value.startswith("Run finished") for s in at.success):
        assert time.monotonic() < deadline, alerts(at)
        time.sleep(0.1)
        at.run()
        no_errors(at)
    assert calls[0].experiment == "seed003" and calls[0].variants == ("static", "dynamic")
    assert frame(at, "static (this machine)").set_index("measure").iloc[0]["static (this machine)"] != "–"


# -- the views ---------------------------------------------------------------------------------------------------------
def test_lengths_typed_by_hand():
    assert vv.normalize_lengths("12 9 5") == "rows:12/9/5"
    assert vv.normalize_lengths(" 12, 9,5 ") == "rows:12/9/5"
    assert vv.normalize_lengths("rows: 3 / 4") == "rows:3/4"
    assert vv.normalize_lengths("20") == "fixed:20"
    assert vv.normalize_lengths("5-100") == "uniform:5-100"
    assert vv.normalize_lengths("uniform:5-100") == "uniform:5-100"
    assert vv.normalize_lengths("FULL") == "full"
    for bad in ("0", "9-3", "abc", "rows:"):
        with pytest.raises(RnnlabError, match="one length per row"):
            vv.normalize_lengths(bad)
    assert vv.lengths_note("rows:12/3", 4, 10) == ("true length of each row: 10, 3, 10, 3; padded to 10 steps, 35% of "
                                                   "the padded steps are padding; lengths above seq_len=10 are cut "
                                                   "to it")
    assert vv.lengths_note("fixed:20", 1000, 300, what="sequence").startswith("1,000 sequences, every true length 20;")


def test_cli_command_is_as_short_as_the_presets_allow():
    q = quick_values("varlen")
    quick_variants = experiments.get("varlen").presets["quick"]["variants"]
    assert vv.cli_command("varlen", q, quick_variants) == "python -m rnnlab run varlen --preset quick"
    assert vv.cli_command("varlen", q, ["tf1_static"]) == \
        "python -m rnnlab run varlen --preset quick --variants tf1_static"
    cmd = vv.cli_command("varlen", {**q, "units": 9, "zero_output_for_mask": True}, ["tf1_static"])
    assert "--set units=9" in cmd and "--set zero_output_for_mask=true" in cmd and "--preset" not in cmd
    seed = {k: v for k, v in experiments.get("seed003").presets["seed"].items()}
    assert vv.cli_command("seed003", seed, ["static", "dynamic"]) == "python -m rnnlab run seed003 --preset seed"


def test_the_page_report_exports_in_every_format(recs):
    from rnnlab import exporters
    from ui import downloads

    vl, pad, s3 = recs["varlen"], recs["padding"], recs["seed003"]
    rep = vv.report(vl + pad + s3)  # what the page's downloads hold, tab by tab, and `export` writes
    assert [t.title for t in rep.tables] == [vv.views(n, recs[n]).table.title for n in ("varlen", "padding",
                                                                                         "seed003")]
    assert len(rep.charts) == 3
    for fmt in downloads.FORMATS:
        name, data, mime = exporters.render_bytes(rep, fmt)
        assert data and mime == downloads.file_name(rep, fmt)[1], fmt
    csv = exporters.render_bytes(rep, "csv")[1]
    assert b"zip" not in csv[:2] and len(csv) > 100


# -- speed and imports -------------------------------------------------------------------------------------------------
def test_renders_from_the_store_fast_and_never_imports_tensorflow(recs, tmp_path):
    fill(recs)
    queries = [tiny_query(n) for n in ("varlen", "padding", "seed003")] + [tiny_query("varlen")]
    out = render_probe(tmp_path, [(PAGE, q) for q in queries])
    renders_fast_without_tensorflow(out)
    assert {r["query"]["tab"]: r["charts"] for r in out["renders"]} == {"semantics": 1, "cost": 1, "seed003": 1}


# -- in a browser ------------------------------------------------------------------------------------------------------
def _query(q: dict) -> str:
    return "?" + "&".join(f"{k}={v}" for k, v in q.items())


@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="/usr/bin/chromium is missing")
def test_in_a_browser(recs, tmp_path):
    from tests.browser_util import (CHART, TABLE, chromium_page, has_count, open_page, screenshot,
                                    streamlit_server, wait_idle)

    store = tmp_path / "browser.sqlite"
    Store(store).put_many([r for rs in recs.values() for r in rs])

    def no_exception(page):
        n = page.locator('[data-testid="stException"]').count()
        assert n == 0, page.locator('[data-testid="stException"]').first.inner_text()[:2000]

    def units(page) -> str:
        box = page.locator('[data-testid="stNumberInput"]').filter(has=page.get_by_text("units", exact=True)).first
        return box.locator("input").first.input_value()

    with streamlit_server(store) as url, chromium_page() as page:
        open_page(page, url + "/varlen" + _query(tiny_query("varlen")))
        no_exception(page)
        main = page.locator('[data-testid="stMain"]')
        text = main.inner_text()
        assert "The checks, per variant" in text and "Output norms" in text and "cuDNN" in text
        has_count(page, CHART, 1)
        has_count(page, TABLE, 2)  # the checks: too many whole headers for one table, continued in a second
        screenshot(page, "varlen")

        # another tab and back: each keeps its own settings, the URL follows
        page.get_by_role("tab", name="What padding costs").click()
        wait_idle(page)
        no_exception(page)
        assert "tab=cost" in page.url and "Not measured yet" in main.inner_text()
        page.get_by_role("tab", name="What padding does").click()
        wait_idle(page)
        assert "tab=semantics" in page.url and "units=8" in page.url and units(page) == "8"
        assert "The checks, per variant" in main.inner_text()

        for name in ("padding", "seed003"):
            open_page(page, url + "/varlen" + _query(tiny_query(name)))
            no_exception(page)
            has_count(page, CHART, 1)
            screenshot(page, f"varlen-{TAB_OF[name]}")
        assert "Verdict:" in main.inner_text()

        open_page(page, url + "/varlen?tab=semantics&units=-1&lengths=abc")
        no_exception(page)
        assert "cannot be used" in main.inner_text()
