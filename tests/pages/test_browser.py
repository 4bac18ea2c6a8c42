"""The app in a real browser: a headless ``streamlit run`` server and Chromium (Playwright).

Every page opens without an exception block; a tiny experiment runs through the UI (real workers) and its table
shows; a shared link (URL with query parameters) opens the same settings in a new session; a bad link warns.
With ``RNNLAB_SCREENSHOTS=1``, screenshots of the empty overview, the run, a bad link and the overview after the run
go to artifacts/screenshots/app-*.png (git-ignored); test_reading_browser.py opens every page with the bundled results.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from tests.browser_util import (CHROMIUM, NEEDS_CHROMIUM, TINY, chromium_page, go, no_exception, open_page, query,
                                 screenshot, streamlit_server, wait_idle)

pytestmark = [pytest.mark.slow,  # Streamlit pages, a browser or TensorFlow
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NEEDS_CHROMIUM)]

def widget_value(page, label: str) -> str:
    """The value shown by the number input or select box labelled ``label``."""
    box = page.locator('[data-testid="stNumberInput"], [data-testid="stSelectbox"]').filter(
        has=page.get_by_text(label, exact=True)).first
    inp = box.locator("input").first
    return inp.input_value() if box.get_attribute("data-testid") == "stNumberInput" else box.inner_text()


def grid_text(page, expect: str = "", timeout: float = 15.0) -> str:
    """The first table's cells (glide-data-grid keeps an accessible copy of the cells in the DOM, drawn a moment
    after the canvas); waits until ``expect`` shows."""
    deadline = time.monotonic() + timeout
    while True:
        text = " ".join(page.locator('[data-testid="stDataFrame"]').first.locator("[role=gridcell], td, th")
                        .all_inner_texts())
        if expect in text or time.monotonic() > deadline:
            return text
        time.sleep(0.2)


def test_pages_run_and_shared_links(tmp_path):
    from ui import nav

    store = tmp_path / "results.sqlite"
    t_start = time.monotonic()
    with streamlit_server(store) as url, chromium_page() as page:
        # the server's very first request is a shared link: it must still go through the router (sidebar with
        # the environment, wide layout), not run pages/unrolling.py alone (Streamlit's legacy pages/ mode)
        open_page(page, url + "/unrolling" + query(TINY))
        no_exception(page)
        assert "This machine" in page.locator('[data-testid="stSidebar"]').inner_text()
        assert widget_value(page, "units") == "4"

        # every page, on an empty store
        for p in nav.existing():
            go(page, url, "" if p.default else p.url_path)
            no_exception(page)
            assert page.locator("h1").count() >= 1, p.url_path
        open_page(page, url + "/")
        assert "No results yet" in page.locator('[data-testid="stMain"]').inner_text()
        screenshot(page, "app-overview-empty")

        # a tiny experiment through the UI: the link sets the widgets, Run measures in the background
        open_page(page, url + "/unrolling" + query(TINY))
        no_exception(page)
        assert widget_value(page, "units") == "4" and widget_value(page, "seq_len") == "5"
        page.get_by_role("button", name=re.compile(r"Run: measure 2 variants")).click()
        page.get_by_text(re.compile(r"Measuring: variant \d/2: tf1_")).first.wait_for(timeout=60_000)  # phase, time
        screenshot(page, "app-unrolling-running")
        page.get_by_text("Run finished").wait_for(timeout=150_000)
        wait_idle(page)
        no_exception(page)
        main = page.locator('[data-testid="stMain"]').inner_text()
        assert "Comparison" in main and "Charts" in main
        cells = grid_text(page, "tf1_dynamic")
        assert "tf1_static" in cells and "tf1_dynamic" in cells, cells[:500]
        assert page.locator('[data-testid="stVegaLiteChart"]').count() >= 4
        screenshot(page, "app-unrolling")
        with page.expect_download(timeout=30_000) as dl:  # the bytes are made on click
            page.get_by_role("button", name="CSV", exact=True).click()
        csv_text = Path(dl.value.path()).read_text()
        assert "tf1_static" in csv_text and "tf1_dynamic" in csv_text
        # the measurement itself: both variants stored, successful, with a forward time (real workers)
        from rnnlab.core.store import Store

        stored = {r.variant: r for r in Store(store).records("unroll")}
        assert set(stored) == {"tf1_static", "tf1_dynamic"}
        assert all(r.ok and r.metrics.get("fwd_ms", 0) > 0 for r in stored.values()), stored

        # the shared link opens the same settings in a fresh session (another browser context)
        shared = page.url
        assert "units=4" in shared and "seq_len=5" in shared
        ctx = page.context.browser.new_context(viewport={"width": 1500, "height": 1000})
        other = ctx.new_page()
        open_page(other, shared)
        no_exception(other)
        assert widget_value(other, "units") == "4" and widget_value(other, "seq_len") == "5"
        assert "tf1_static" in grid_text(other, "tf1_static")  # stored results show at once, no run
        assert other.get_by_role("button", name=re.compile("everything is stored")).is_disabled()
        ctx.close()

        # a bad link: warnings, the defaults, no traceback
        open_page(page, url + "/unrolling?cell=transformer&units=-1&variants=bogus")
        no_exception(page)
        text = page.locator('[data-testid="stMain"]').inner_text()
        assert "cell='transformer'" in text and "bogus" in text
        assert widget_value(page, "units") == "128"
        screenshot(page, "app-unrolling-bad-link")

        # every other page with the measured records (by the sidebar's links, as a reader goes)
        for p in nav.existing():
            if p.url_path == "unrolling":
                continue
            go(page, url, "" if p.default else p.url_path)
            no_exception(page)
            if p.url_path == "overview":  # (the reading walk screenshots every page; here, the one this run fills)
                assert "static_rnn builds" in page.locator('[data-testid="stMain"]').inner_text()
                screenshot(page, f"app-{p.url_path}")
    assert time.monotonic() - t_start < 180
