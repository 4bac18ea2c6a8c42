"""Page scripts take turns: one renders at a time in this server process; work that takes seconds steps aside.

Streamlit runs every session's script in a thread of one process, so scripts share one interpreter lock. Sixty
visitors' scripts at once were sliced by it every few milliseconds: each waited on all the others, and switching
among them cost CPU of its own. On a 2-core Xeon (``python -m scripts.load_hosted --sessions 60 --duration 60
--warm``) a view took 0.048-0.065 s of server CPU and the p95 render was 2.07-3.60 s; with scripts taking turns,
0.040-0.050 s and 0.37-0.95 s (README). A script waits for its turn at most ``WAIT_S`` seconds, then renders
beside the one that holds it, so a holder that is stuck slows the others down and never stops them.

``render()`` wraps the app's routing (``streamlit_app.py``). ``aside()`` wraps work inside a page that takes seconds
and needs no turn: making a deck, reading an uploaded file, a conversion in another process. Meanwhile the others
render; the page takes its turn again after it. A fragment's own reruns (``ui.jobs``' progress) do not pass through
``render()``, so they take no turn and ``aside()`` in them does nothing.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator

WAIT_S = 5.0  # at most this long a script waits for its turn, then renders anyway

_TURN = threading.Lock()
_mine = threading.local()  # .held: this thread holds the turn


def holding() -> bool:
    """This thread's script holds the turn."""
    return getattr(_mine, "held", False)


def _take(wait_s: float | None) -> None:
    _mine.held = _TURN.acquire(timeout=WAIT_S if wait_s is None else wait_s)


def _give() -> None:
    if holding():
        _mine.held = False
        _TURN.release()


@contextlib.contextmanager
def render(wait_s: float | None = None) -> Iterator[None]:
    """The block runs in this thread's turn (waited for at most ``wait_s`` s, default ``WAIT_S``); the turn is given
    back however the block ends (``st.stop``, a rerun and a page switch end a script by raising)."""
    if holding():  # nested: the outer block holds it
        yield
        return
    _take(wait_s)
    try:
        yield
    finally:
        _give()


@contextlib.contextmanager
def aside(wait_s: float | None = None) -> Iterator[None]:
    """The block runs without the turn (others render meanwhile), which is taken again after it (waited for at most
    ``wait_s`` s, default ``WAIT_S``); outside ``render()`` it does nothing."""
    if not holding():
        yield
        return
    _give()
    try:
        yield
    finally:
        _take(wait_s)
