"""Load on the hosted app: N concurrent sessions viewing pages over Streamlit's own WebSocket protocol (no browser).

Starts ``streamlit run streamlit_app.py`` hosted (``RNNLAB_HOSTED=1``, the bundled results, an empty scratch store)
on a free loopback port, unless ``--url`` names one already running (it must be on 127.0.0.1). Each session is a
thread with its own WebSocket: it asks for a page (the page, a query of a shared link), times the script run until
Streamlit says it finished, waits a think time, and asks for the next page; every ``--deck-every``-th view of a page
that offers a PowerPoint download fetches the deck the way a browser does (accepting a gzip-compressed answer; its
bytes must arrive, a zip). Everything stays on loopback, bounded by ``--duration`` and ``--max-views``; it stops by
itself.

Prints p50/p95/max render time, the views, every exception a page showed, the decks asked for and arrived, the
server's CPU per view and its memory (RSS of the Streamlit server process: its warm plateau before the load, its peak
during, and after the load ended, once closed sessions are released and it settles, ``--settle``); with ``--json``
one JSON object on stdout. Exit 1 when a page showed an exception or a deck did not arrive.

    python -m scripts.load_hosted --sessions 20 --duration 90
    python -m scripts.load_hosted --sessions 1 --duration 30 --json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent

# the pages a visitor reads (a run is not a page view), with the queries of links the app itself makes
VIEWS = ["overview", "unrolling", "unrolling?cell=lstm", "varlen", "varlen?tab=cost", "pitfalls", "migrate",
         "claims", "results", "glossary"]
LOOPBACK = ("127.0.0.1", "localhost", "::1")
BROWSER_ENCODINGS = "gzip, deflate"  # what a browser accepts for a download, of what this server can send


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


class Session:
    """One visitor: a WebSocket to the app's ``/_stcore/stream``, page views one after the other."""

    def __init__(self, base: str, timeout: float):
        from websockets.sync.client import connect

        ws_url = base.replace("http://", "ws://") + "/_stcore/stream"
        self.base, self.timeout = base, timeout
        self._conn = connect(ws_url, subprotocols=["streamlit"], open_timeout=timeout, max_size=None,
                             origin=base)
        self.ws = self._conn.__enter__()
        self.session_id = ""

    def close(self) -> None:
        try:
            self._conn.__exit__(None, None, None)
        except Exception:  # noqa: BLE001 -- closing a socket the server already dropped
            pass

    def _send(self, back) -> None:
        self.ws.send(back.SerializeToString())

    def _recv(self, deadline: float):
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = ForwardMsg()
        msg.ParseFromString(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
        return msg

    def view(self, view: str, click: str | None = None) -> dict:
        """Ask for ``view`` ("page?query"), pressing the button whose id is ``click``; wait for the end of its
        script run. Returns the seconds it took, the exceptions shown, the download buttons (label -> (deferred
        file id, url)) and the buttons (label -> id)."""
        from streamlit.proto.BackMsg_pb2 import BackMsg

        page, _, query = view.partition("?")
        back = BackMsg()
        back.rerun_script.query_string = query
        back.rerun_script.page_name = "" if page == "overview" else page  # the default page has no path
        if click:
            w = back.rerun_script.widget_states.widgets.add()
            w.id = click
            w.trigger_value = True
        t0 = time.monotonic()
        deadline = t0 + self.timeout
        self._send(back)
        exceptions, downloads, buttons, started = [], {}, {}, False
        while True:
            msg = self._recv(deadline)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                self.session_id = msg.new_session.initialize.session_id or self.session_id
                started = True
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                el = msg.delta.new_element
                what = el.WhichOneof("type")
                if what == "exception":
                    exceptions.append(f"{view}: {el.exception.type}: {el.exception.message[:200]}")
                elif what == "download_button":
                    b = el.download_button
                    downloads[b.label] = (b.deferred_file_id if b.HasField("deferred_file_id") else "", b.url)
                elif what == "button":
                    buttons[el.button.label] = el.button.id
            elif kind == "script_finished" and started:
                # FINISHED_SUCCESSFULLY / WITH_COMPILE_ERROR; a rerun the page asked for (FINISHED_EARLY_FOR_RERUN)
                # goes on in the same view
                status = msg.script_finished
                if status != msg.FINISHED_EARLY_FOR_RERUN:
                    return {"seconds": time.monotonic() - t0, "exceptions": exceptions, "downloads": downloads,
                            "buttons": buttons}
            elif kind == "page_not_found":
                exceptions.append(f"{view}: page not found")

    def deck(self, view: str, got: dict) -> tuple[bool, list[str]] | None:
        """The PowerPoint deck of a view just shown (``got``: what :meth:`view` returned), made on a click first when
        the page offers a "Make PowerPoint" button (then kept for every session showing this view): (arrived, the
        exceptions the click showed), or None when the view offers no deck."""
        deck = got["downloads"].get("PowerPoint")
        make = got["buttons"].get("Make PowerPoint")
        if not (deck or make):
            return None
        shown: list[str] = []
        if deck is None:
            made = self.view(view, click=make)
            shown = made["exceptions"]
            deck = made["downloads"].get("PowerPoint")
        return bool(deck) and self.fetch_deck(*deck), shown

    def fetch_deck(self, file_id: str, url: str) -> bool:
        """A PowerPoint download as the browser does it: a deferred one asks the server to build it first (a
        backend operation), then GETs its URL. True when a zip arrived."""
        from streamlit.proto.BackMsg_pb2 import BackMsg

        if file_id:
            back = BackMsg()
            req = back.backend_operation_request
            req.request_id = f"deck-{random.getrandbits(32)}"
            req.session_id = self.session_id
            req.deferred_file.file_id = file_id
            self._send(back)
            deadline = time.monotonic() + self.timeout
            url = ""
            while not url:
                msg = self._recv(deadline)
                if msg.WhichOneof("type") == "backend_operation_response":
                    r = msg.backend_operation_response
                    if r.error_msg:
                        return False
                    url = r.deferred_file.url
        if not url:
            return False
        full = url if url.startswith("http") else self.base + url
        assert urlsplit(full).hostname in LOOPBACK, full
        try:  # a browser accepts a compressed response, and the server may compress the deck for it
            req = urllib.request.Request(full, headers={"Accept-Encoding": BROWSER_ENCODINGS})
            with urllib.request.urlopen(req, timeout=self.timeout) as r:
                body = r.read()
                if r.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                return body[:2] == b"PK"
        except (OSError, EOFError):  # EOFError: a gzip body cut short
            return False


class Memory:
    """The server's RSS (MB), sampled every ``every`` seconds on a thread of its own: ``peak`` while it runs."""

    def __init__(self, proc, every: float = 0.5):
        self.proc, self.every, self.peak = proc, every, 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True, name="rss-sampler")

    def now(self) -> float:
        return self.proc.memory_info().rss / 2**20

    def _poll(self) -> None:
        while not self._stop.is_set():
            try:
                self.peak = max(self.peak, self.now())
            except Exception:  # noqa: BLE001 -- the server went away: the figures so far stand
                return
            self._stop.wait(self.every)

    def __enter__(self) -> "Memory":
        self.peak = self.now()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def plateau(self, seconds: float, *, at_least: float = 0.0, step: float = 2.0) -> float:
        """RSS once it stops moving: sampled every ``step`` s for up to ``seconds``; the last value once three
        samples in a row are within 2 MB of each other after ``at_least`` seconds (the app releases a closed
        session about 25 s after it ends)."""
        t0 = time.monotonic()
        got = [self.now()]
        while time.monotonic() - t0 < seconds:
            time.sleep(step)
            got.append(self.now())
            if len(got) >= 3 and max(got[-3:]) - min(got[-3:]) < 2.0 and time.monotonic() - t0 >= at_least:
                break
        return got[-1]


def drive(base: str, *, sessions: int, duration: float, think: tuple[float, float], max_views: int,
          deck_every: int, timeout: float, seed: int = 0) -> dict:
    """``sessions`` visitors at once for ``duration`` seconds (at most ``max_views`` views in all)."""
    lock = threading.Lock()
    times: list[float] = []
    by_page: dict[str, list[float]] = {}
    exceptions: list[str] = []
    errors: list[str] = []
    decks = {"asked": 0, "arrived": 0}
    count = {"views": 0}
    stop_at = time.monotonic() + duration

    def visitor(i: int) -> None:
        rng = random.Random(seed * 1000 + i)
        order = VIEWS[i % len(VIEWS):] + VIEWS[:i % len(VIEWS)]
        s = None
        n = 0
        try:
            s = Session(base, timeout)
            time.sleep(rng.uniform(0, think[1]))  # visitors arrive spread out, not all in one instant
            while time.monotonic() < stop_at:
                with lock:
                    if count["views"] >= max_views:
                        return
                    count["views"] += 1
                view = order[n % len(order)]
                n += 1
                got = s.view(view)
                with lock:
                    times.append(got["seconds"])
                    by_page.setdefault(view, []).append(got["seconds"])
                    exceptions.extend(got["exceptions"])
                fetched = s.deck(view, got) if deck_every and n % deck_every == 0 else None
                if fetched is not None:
                    with lock:
                        exceptions.extend(fetched[1])
                        decks["asked"] += 1
                        decks["arrived"] += fetched[0]
                time.sleep(rng.uniform(*think))
        except Exception as e:  # noqa: BLE001 -- a session that broke is reported, the others go on
            with lock:
                errors.append(f"session {i}: {type(e).__name__}: {e}")
        finally:
            if s is not None:
                s.close()

    threads = [threading.Thread(target=visitor, args=(i,), daemon=True) for i in range(sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=duration + timeout + 30)
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {"sessions": sessions, "duration_s": duration, "views": len(times),
            "p50_s": round(percentile(times, 0.5), 3), "p95_s": round(percentile(times, 0.95), 3),
            "max_s": round(max(times), 3) if times else None,
            "by_page_p50_s": {k: round(percentile(v, 0.5), 3) for k, v in sorted(by_page.items())},
            "exceptions": sorted(set(exceptions)), "n_exceptions": len(exceptions), "session_errors": errors,
            "decks_asked": decks["asked"], "decks_arrived": decks["arrived"],
            "loadavg_1_5_15": [round(x, 2) for x in load]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=f"python -m scripts.{Path(__file__).stem}", description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    ap.add_argument("--think", default="1-4", help="seconds between a session's views, A-B (default 1-4)")
    ap.add_argument("--max-views", type=int, default=5000, help="views in all, at most (default 5000)")
    ap.add_argument("--deck-every", type=int, default=3,
                    help="fetch the PowerPoint deck on every N-th view that offers one (0: never; default 3)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds a view or a download may take")
    ap.add_argument("--warm", action="store_true", help="one view of every page before the load (not timed)")
    ap.add_argument("--settle", type=float, default=60.0,
                    help="seconds, at most, to wait after the load for the server's memory to settle (default 60)")
    ap.add_argument("--url", help="an app already running on loopback (default: start one)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    lo, _, hi = a.think.partition("-")
    think = (float(lo), float(hi or lo))
    if not 1 <= a.sessions <= 200 or a.duration > 3600:
        ap.error("--sessions 1..200, --duration at most 3600 s")

    def run(base: str) -> dict:
        from tests.browser_util import server_pid

        import psutil

        if a.warm:  # every page and its deck once: what the load reuses is built (vl-convert's engine among it)
            s = Session(base, a.timeout)
            for v in VIEWS:
                s.deck(v, s.view(v))
            s.close()
        try:  # the server's own CPU time: what a view costs, whatever else the machine runs
            server = psutil.Process(server_pid(base))
            cpu0 = sum(server.cpu_times()[:2])
        except (RuntimeError, psutil.Error):
            server = None
        load = lambda: drive(base, sessions=a.sessions, duration=a.duration, think=think,  # noqa: E731
                             max_views=a.max_views, deck_every=a.deck_every, timeout=a.timeout)
        if server is None:
            return load()
        mem = Memory(server)
        warm = mem.plateau(a.settle, at_least=min(a.settle, 30.0) if a.warm else 0.0)  # the warm session released
        print(f"load_hosted: server pid {server.pid} at {warm:.0f} MB; {a.sessions} sessions for {a.duration:g} s "
              "from now", file=sys.stderr, flush=True)
        with mem:
            out = load()
        out["server_rss_mb"] = {"warm": round(warm), "peak": round(mem.peak),
                                "after": round(mem.plateau(a.settle, at_least=min(a.settle, 30.0)))}
        if out["views"]:
            out["server_cpu_s_per_view"] = round((sum(server.cpu_times()[:2]) - cpu0) / out["views"], 3)
        return out

    if a.url:
        if urlsplit(a.url).hostname not in LOOPBACK:
            ap.error("--url must be on this machine (127.0.0.1)")
        out = run(a.url.rstrip("/"))
    else:
        from tests.browser_util import streamlit_server

        with tempfile.TemporaryDirectory() as tmp:
            env = {"RNNLAB_HOSTED": "1", "RNNLAB_BASELINE": os.environ.get("RNNLAB_BASELINE", "")}
            with streamlit_server(Path(tmp) / "results.sqlite", env=env, timeout=120) as base:
                out = run(base)
    if a.json:
        print(json.dumps(out))
    else:
        print(f"{out['sessions']} sessions, {out['duration_s']:.0f} s: {out['views']} views; render p50 "
              f"{out['p50_s']:.2f} s, p95 {out['p95_s']:.2f} s, max {out['max_s']} s; exceptions "
              f"{out['n_exceptions']}; decks {out['decks_arrived']}/{out['decks_asked']} arrived; load average "
              f"{out['loadavg_1_5_15']}; server CPU {out.get('server_cpu_s_per_view', '?')} s per view")
        rss = out.get("server_rss_mb")
        if rss:
            print(f"  server memory (RSS): warm {rss['warm']} MB, peak {rss['peak']} MB during the load, "
                  f"{rss['after']} MB after it ({rss['after'] - rss['warm']:+d} MB from warm)")
        for e in out["exceptions"][:10] + out["session_errors"][:10]:
            print("  " + e)
        print("  p50 by page: " + ", ".join(f"{k} {v:.2f}" for k, v in out["by_page_p50_s"].items()))
    return 1 if out["n_exceptions"] or out["session_errors"] or out["decks_arrived"] < out["decks_asked"] else 0


if __name__ == "__main__":
    sys.exit(main())
