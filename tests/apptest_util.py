"""What every AppTest page test shares: opening a page through the router, reading messages, making sure no
background run outlives its test, and the probe of a fresh process (how much CPU a page's render takes; that it never
imports TensorFlow). Import ``no_run_left_behind`` into a test module to use the fixture."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "streamlit_app.py")


def open_app(page: str | None = None, query: dict | None = None, *, timeout: float = 60) -> AppTest:
    """Run the router, then switch to ``page`` with ``query`` as its URL parameters."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.run()
    if page:
        at.switch_page(page)
        if query:
            at.query_params.update(query)
        at.run()
    return at


_BUNDLED: dict = {}


def bundled_page(page: str, query: dict | None = None) -> AppTest:
    """``page`` opened on the bundled results (data/baseline) and an empty store, rendered once per test session and
    shared by the tests that only read it: a test that clicks, reruns or needs another store opens its own."""
    key = (page, tuple(sorted((query or {}).items())))
    if key not in _BUNDLED:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("RNNLAB_BASELINE", str(Path(APP).parent / "data" / "baseline"))
            _BUNDLED[key] = open_app(page, query, timeout=180)
    return _BUNDLED[key]


def plain(text: str) -> str:
    """Alert text as the reader sees it (the app escapes Markdown in messages quoting user input)."""
    return re.sub(r"\\(.)", r"\1", text)


def shown_as(cell: object, full: object) -> bool:
    """A table cell as the page shows ``full``: the same text, or its start cut at a word with "…" where its row
    cannot hold it all (``ui.tables.shorten``)."""
    cell, full = " ".join(str(cell).split()), " ".join(str(full).split())
    return cell == full or (cell.endswith("…") and full.startswith(cell[:-1].rstrip()))


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture(autouse=True)
def no_run_left_behind():
    """The JobManager is process-global (st.cache_resource): no test may leave a run going for the next."""
    yield
    from ui.jobs import manager

    mgr = manager()
    for job in mgr.active():
        job.cancel.set()  # whoever started it (a hosted run belongs to its session)
    deadline = time.monotonic() + 60
    while mgr.active() and time.monotonic() < deadline:
        time.sleep(0.05)


_PROBE = textwrap.dedent("""
    import json, sys, time
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(sys.argv[1], default_timeout=60)
    t = time.perf_counter(); at.run(); cold = time.perf_counter() - t   # includes AppTest's own start-up
    out = {"cold_first_run_s": cold, "renders": [], "exceptions": []}
    for page, query in json.loads(sys.argv[2]):
        at.switch_page(page)
        at.query_params.clear()  # as a click in the sidebar does: the other page's settings stay behind
        at.query_params.update(query)
        t = time.process_time(); at.run(); cpu = time.process_time() - t
        out["renders"].append({"page": page, "query": query, "cpu_s": cpu, "charts": len(at.get("vega_lite_chart")),
                               "tables": [str(d.value.columns[0]) for d in at.dataframe]})
        out["exceptions"] += [e.value for e in at.exception]
    out["tensorflow"] = "tensorflow" in sys.modules
    out["keras"] = "keras" in sys.modules
    print(json.dumps(out))
""")


def render_probe(tmp_path: Path, visits: list[tuple[str, dict]]) -> dict:
    """The app in a fresh Python process (nothing imported yet, this test's store), then each (page, URL query) of
    ``visits`` rendered in turn in its one session. Per render its CPU seconds (``cpu_s``: the render runs in this
    process, so its process time is what the page costs, not what another test process beside it takes from the same
    cores), its charts and its tables' first columns; every exception; whether TensorFlow or Keras was imported."""
    script = tmp_path / "probe.py"
    script.write_text(_PROBE)
    res = subprocess.run([sys.executable, str(script), APP, json.dumps(visits)], capture_output=True, text=True,
                         timeout=120, cwd=Path(APP).parent, env={**os.environ})
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    print("render CPU (s):", [(r["page"], r["query"].get("tab", ""), round(r["cpu_s"], 3)) for r in out["renders"]],
          "cold first run (s):", round(out["cold_first_run_s"], 2))
    return out


def renders_fast_without_tensorflow(out: dict, most_s: float = 1.5) -> None:
    """What every probe asks: no exception, neither TensorFlow nor Keras imported, each render under ``most_s``
    CPU seconds."""
    assert not out["exceptions"], out["exceptions"]
    assert out["tensorflow"] is False and out["keras"] is False
    for r in out["renders"]:
        assert r["cpu_s"] < most_s, f"{r['page']} {r['query']} took {r['cpu_s']:.2f} s"
