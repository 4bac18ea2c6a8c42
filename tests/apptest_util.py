"""What every AppTest page test shares: opening a page through the router, reading messages, and making sure no
background run outlives its test. Import ``no_run_left_behind`` into a test module to use the fixture."""

from __future__ import annotations

import re
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
