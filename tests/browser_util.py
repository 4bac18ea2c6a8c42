"""A headless Streamlit server and Chromium page for the browser tests (and for taking screenshots by hand: the tests
write theirs to artifacts/screenshots/ with ``RNNLAB_SCREENSHOTS=1``).

    with streamlit_server(store_path) as url:
        with chromium_page() as page:
            open_page(page, url + "/unrolling")
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(store: str | os.PathLike, *, env: dict | None = None, timeout: float = 60.0
                     ) -> Iterator[str]:
    """``streamlit run streamlit_app.py`` headless on a free port with ``RNNLAB_STORE=store``; yields its URL once
    ``/_stcore/health`` answers. The server (its whole process group) is stopped on exit."""
    port = free_port()
    log = open(Path(store).with_suffix(".server.log"), "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env={**os.environ, "RNNLAB_STORE": str(store), **(env or {})}, stdout=log,
        stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {proc.returncode}; see {log.name}")
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not answer /_stcore/health within {timeout:.0f} s")
            time.sleep(0.3)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def server_pid(url: str) -> int:
    """The pid of the server listening on ``url``'s port (this machine's sockets, read with psutil)."""
    import psutil

    port = int(url.rsplit(":", 1)[1])
    for c in psutil.net_connections(kind="tcp"):
        if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port and c.pid:
            return c.pid
    raise RuntimeError(f"no process listens on port {port}")


_DRIVER: list = []  # one Playwright driver for the whole test process: a second sync_playwright() while the session
#                     fixture's is open fails ("Sync API inside the asyncio loop")


def _playwright():
    if not _DRIVER:
        import atexit

        from playwright.sync_api import sync_playwright

        _DRIVER.append(sync_playwright().start())
        atexit.register(lambda: _DRIVER.pop().stop() if _DRIVER else None)
    return _DRIVER[0]


@contextlib.contextmanager
def chromium_page(width: int = 1500, height: int = 1000):
    browser = _playwright().chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        page = browser.new_page(viewport={"width": width, "height": height})
        yield page
    finally:
        browser.close()


def keep_on_loopback(context) -> list[str]:
    """Abort every request of ``context`` (a browser context) to a host that is not this machine, and return the
    list they are recorded in: a page must fetch nothing from a third-party host (a font, an icon, a script)."""
    from urllib.parse import urlsplit

    leaving: list[str] = []

    def route(r):
        url = r.request.url
        host = urlsplit(url).hostname or ""
        if url.startswith(("data:", "blob:", "about:")) or host in ("127.0.0.1", "localhost", "::1"):
            r.continue_()
        else:
            leaving.append(url)
            r.abort()

    context.route("**/*", route)
    return leaving


def wait_idle(page, timeout: float = 60.0) -> None:
    """Wait until the script run has finished: the app says ``notRunning`` (no "Running..."/Stop status widget)
    for a moment, connected. A fragment rerunning every second (a run in progress) counts as running."""
    page.wait_for_selector('[data-testid="stMain"]', timeout=timeout * 1000)
    app = page.locator('[data-testid="stApp"]')
    deadline = time.monotonic() + timeout
    quiet_since = None
    while time.monotonic() < deadline:
        idle = (app.get_attribute("data-test-script-state") == "notRunning"
                and app.get_attribute("data-test-connection-state") == "CONNECTED"
                and page.locator('[data-testid="stStatusWidget"]').count() == 0)
        if idle:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since > 0.7:
                return
        else:
            quiet_since = None
        time.sleep(0.1)
    raise TimeoutError(f"the app kept running for {timeout:.0f} s")


def open_page(page, url: str, timeout: float = 60.0) -> None:
    page.goto(url, wait_until="domcontentloaded")
    wait_idle(page, timeout)


def go(page, url: str, path: str, timeout: float = 60.0) -> None:
    """Open ``path`` (a page's URL path, "" for the default page) of the app at ``url`` as a reader moves between
    pages: by its link in the sidebar when the app is already open there (its code stays loaded: a whole reload
    cost Chromium about a CPU-second more a page), else by loading the URL (a path with a query, the first page)."""
    link = page.locator(f'[data-testid="stSidebarNav"] a[href="{url}/{path}"]')
    if "?" in path or not page.url.startswith(url) or link.count() != 1:
        open_page(page, f"{url}/{path}", timeout)
        return
    link.click()
    page.wait_for_url(lambda u: urlsplit(u).path.strip("/") == path, timeout=timeout * 1000)
    wait_idle(page, timeout)


def shots_wanted() -> bool:
    """Whether the browser tests write their screenshots (``RNNLAB_SCREENSHOTS=1``): a whole-page picture costs
    Chromium about a CPU-second (the reading walk: 65 core-seconds with its twelve, 54 without), and only a person
    reads them."""
    return os.environ.get("RNNLAB_SCREENSHOTS", "") not in ("", "0")


def screenshot(page, name: str, *, max_height: int = 7000, always: bool = False) -> Path | None:
    """The whole page: Streamlit scrolls inside its main block, so the viewport is stretched to the content first.
    Only when :func:`shots_wanted`, or ``always`` (a test that reads the picture, or needs the whole page drawn);
    else None."""
    if not (always or shots_wanted()):
        return None
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    size = page.viewport_size
    height = page.evaluate("""() => {
        const m = document.querySelector('[data-testid="stMain"]');
        const b = document.querySelector('[data-testid="stMainBlockContainer"]');
        return Math.max(m ? m.scrollHeight : 0, b ? b.scrollHeight + 120 : 0, window.innerHeight);
    }""")
    page.set_viewport_size({"width": size["width"], "height": min(int(height), max_height)})
    try:
        page.wait_for_timeout(600)  # charts re-layout to the new size
        page.screenshot(path=str(path), full_page=True)
    finally:
        page.set_viewport_size(size)
    return path


# -- what every browser test shares ---------------------------------------------------------------------------------
# A tiny unroll measurement (two variants, one round), as URL query values.
TINY = {"cell": "rnn", "layers": "1", "units": "4", "batch": "2", "seq_len": "5", "input_dim": "3", "repeats": "3",
        "warmup": "1", "rounds": "1", "variants": "tf1_static,tf1_dynamic", "ref": "tf1_dynamic"}
NEEDS_CHROMIUM = f"{CHROMIUM} is missing: install Debian's chromium to run the browser tests"


def query(q: dict) -> str:
    return "?" + "&".join(f"{k}={v}" for k, v in q.items())


def no_exception(page) -> None:
    n = page.locator('[data-testid="stException"]').count()
    assert n == 0, page.locator('[data-testid="stException"]').first.inner_text()[:2000]


def has_count(page, selector: str, n: int, timeout: float = 30.0) -> None:
    """Wait until ``selector`` matches exactly ``n`` elements (charts and tables render after the script run ends,
    later on a loaded machine): never a fixed sleep, never a count read once."""
    from playwright.sync_api import expect

    expect(page.locator(selector)).to_have_count(n, timeout=timeout * 1000)


# The window of the layout and text checks, and the views they read: every page and the Variable lengths page's other tabs
WIDTH, HEIGHT = 1400, 1000
VIEWS = [(p, p) for p in ("overview", "unrolling", "varlen", "pitfalls", "migrate", "claims", "results",
                          "glossary")] + [("varlen-cost", "varlen?tab=cost"), ("varlen-seed003", "varlen?tab=seed003")]

CHART = '[data-testid="stVegaLiteChart"]'
TABLE = '[data-testid="stDataFrame"]'
