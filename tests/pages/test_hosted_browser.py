"""The hosted demo in a real browser (``RNNLAB_HOSTED=1``): a visitor cannot delete, cannot import into the shared
store, and cannot start a second heavy process while one is going.

A headless ``streamlit run`` server and Chromium (Playwright), as in test_browser.py. The screenshot of the hosted
Results page goes to artifacts/screenshots/hosted-results-readonly.png (git-ignored).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from rnnlab.core.store import Store
from tests.browser_util import (CHROMIUM, NEEDS_CHROMIUM, TINY, chromium_page, no_exception, open_page, query,
                                 screenshot, streamlit_server, wait_idle)

pytestmark = [pytest.mark.slow,  # Streamlit pages, a browser and TensorFlow workers
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=NEEDS_CHROMIUM)]

def main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def sidebar_text(page) -> str:
    return page.locator('[data-testid="stSidebar"]').inner_text()


def upload(page, name: str, data: bytes) -> None:
    """Put one file into the Results page's import uploader (its expander opened first)."""
    box = page.locator('[data-testid="stFileUploader"]')
    if box.count() == 0 or not box.first.is_visible():
        page.get_by_text("Import a results file").click()
        box.first.wait_for(timeout=10_000)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(
        files=[{"name": name, "mimeType": "application/octet-stream", "buffer": data}])
    time.sleep(0.5)
    wait_idle(page)


def records_file(n: int) -> bytes:
    from tests.pages.test_app import make_record

    recs = [make_record(v, {"units": 8 + i, "seq_len": 10, "batch": 2})
            for i in range(n) for v in ("tf1_static",)]
    return json.dumps([r.to_dict() for r in recs]).encode()


def test_a_visitor_cannot_delete_import_into_the_store_or_start_a_second_heavy_process(tmp_path):
    from tests.pages.test_app import make_record

    store = tmp_path / "results.sqlite"
    shared = Store(store)
    shared.put_many([make_record(v, {"units": 6, "seq_len": 10, "batch": 2}) for v in ("tf1_static", "tf1_dynamic")])
    before = shared.count()
    with streamlit_server(store, env={"RNNLAB_HOSTED": "1"}) as url, chromium_page() as page:
        # -- Results: read-only, no Delete control at all --------------------------------------------------------
        open_page(page, url + "/results")
        no_exception(page)
        text = main_text(page)
        assert "read-only in this demo" in text
        assert page.get_by_role("button", name=re.compile("Delete")).count() == 0
        assert "Delete" not in text

        # -- an upload: shown to this visitor, never stored --------------------------------------------------------
        upload(page, "theirs.json", records_file(3))
        page.get_by_text(re.compile(r"Imported 3 records from theirs\.json for this visit \(not stored\)")).wait_for(
            timeout=20_000)
        no_exception(page)
        assert re.search(r"5 of 5 records", main_text(page)), main_text(page)[:2000]
        assert Store(store).count() == before
        screenshot(page, "hosted-results-readonly")

        # -- a junk file: one line of text, no traceback -------------------------------------------------------------
        upload(page, "junk.bin", b"\x00\x01 junk \xff")
        alert = page.get_by_text(re.compile(r"Nothing imported: junk\.bin: ")).first
        alert.wait_for(timeout=20_000)
        no_exception(page)
        assert "Traceback" not in main_text(page)
        assert Store(store).count() == before

        # another visitor (a fresh browser context) does not see the first one's upload
        ctx = page.context.browser.new_context(viewport={"width": 1500, "height": 1000})
        other = ctx.new_page()
        open_page(other, url + "/results")
        assert re.search(r"2 of 2 records", main_text(other)), main_text(other)[:2000]

        # -- one heavy process: a run goes; another tab's Run and the Migrate page's Convert are disabled -------------
        open_page(page, url + "/unrolling" + query(TINY))
        no_exception(page)
        page.get_by_role("button", name=re.compile(r"Run: measure 2 variants")).click()
        page.get_by_text(re.compile(r"Measuring")).first.wait_for(timeout=60_000)
        try:
            open_page(other, url + "/unrolling" + query({**TINY, "units": "5"}), timeout=90)
            run2 = other.get_by_role("button", name=re.compile(r"Run: measure 2 variants"))
            assert run2.is_disabled()
            assert "Another run is going" in sidebar_text(other)  # runs show at the top of the sidebar
            open_page(other, url + "/migrate", timeout=90)
            no_exception(other)
            other.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(
                files=[{"name": "m.index", "mimeType": "application/octet-stream", "buffer": b"junk"}])
            time.sleep(0.5)
            wait_idle(other, timeout=90)
            assert other.get_by_role("button", name=re.compile("Convert and verify")).is_disabled()
            for name in ("Run the live checks", "Run the converter demo", "Run seed 004"):
                for b in other.get_by_role("button", name=re.compile(name)).all():
                    assert b.is_disabled(), name
        finally:
            cancel = page.get_by_role("button", name=re.compile("Cancel run"))
            if cancel.count():
                cancel.first.click()
            page.get_by_text(re.compile("Run (cancelled|finished)")).first.wait_for(timeout=150_000)
        ctx.close()
        # the run's records went to the store (runs may measure); nothing was deleted or imported
        assert Store(store).count() >= before
        assert all(r.source == "local" for r in Store(store).records())
