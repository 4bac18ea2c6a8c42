from pathlib import Path

import pytest

from tests.browser_util import CHROMIUM, HEIGHT, NEEDS_CHROMIUM, ROOT, WIDTH, chromium_page, streamlit_server


@pytest.fixture(scope="session")
def bundled_site(tmp_path_factory):
    """(url, page): one Streamlit server on the bundled results and an empty store, and one Chromium page at
    WIDTH x HEIGHT, shared by the tests that only read pages in that state (test_reading_browser.py); a test
    that runs something does it after its reading, and the server is started once for all of them."""
    if not Path(CHROMIUM).exists():
        pytest.skip(NEEDS_CHROMIUM)
    store = tmp_path_factory.mktemp("bundled-site") / "results.sqlite"
    with streamlit_server(store, env={"RNNLAB_BASELINE": str(ROOT / "data" / "baseline")}) as url, \
            chromium_page(WIDTH, HEIGHT) as page:
        yield url, page
