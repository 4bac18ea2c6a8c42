"""What hosted visitors upload, booked process-wide (``rnnlab.engine.hosted.Uploads``) and let go when they leave.

Streamlit keeps an uploaded file in the server's memory from its arrival until its session shuts down, and keeps a
closed tab's session for a reconnect without ever shutting it down: uploads outlived their visitors. Here:

- a file is booked against one budget for every session (``hosted.Limits.uploads_total_mb``), checked for size and
  count, before the page reads it; a file over a cap is dropped from Streamlit's memory at once;
- a results file is parsed into records kept for its session only, and its bytes are dropped once read;
- hosted, a sweeper thread releases every session that has been gone for ``Limits.session_grace_s`` (20 s): its
  records, its bookings, and, by closing it in Streamlit, its session state, uploaded files and download bytes (a
  closed tab's state and downloads stayed for good otherwise), and hands the freed memory back to the system.
"""

from __future__ import annotations

import ctypes
import gc
import threading
import time

import streamlit as st

from rnnlab.core.errors import RnnlabError
from rnnlab.core.memo import Memo
from rnnlab.engine import api

from . import turns

SWEEP_S = 5.0  # how often the sweeper looks for sessions that ended (at most: a fifth of the grace)
_seen: dict[str, float | None] = {}  # Streamlit session id -> when it was first seen gone (None: connected)
_seen_lock = threading.Lock()
# ledger key -> the views of that session's own uploads (``ui.shared.shared``): kept here, not in the session's
# state, so they go when the sweeper releases the session even if Streamlit still holds the session object
_views: dict[str, Memo] = {}
_trims_due = 0  # sweeps that still give freed memory back to the system after sessions were released


def _runtime():
    from streamlit import runtime

    return runtime.get_instance() if runtime.exists() else None


def _hosted() -> bool:
    from ui.jobs import hosted_mode

    return hosted_mode()


VISIT = "_rnnlab_visit"  # session_state: this visit's own token, beside Streamlit's session id


def _session_id() -> str | None:
    """This session's key in the ledger: Streamlit's session id (the sweeper asks the runtime whether it is still
    connected) and a token of the visit's own (AppTest gives every test's session one id)."""
    import uuid

    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None:
        return None
    if _hosted():  # on one's own machine a tab's session is left to Streamlit (a reconnect keeps its state)
        with _seen_lock:
            _seen[ctx.session_id] = None
    return f"{ctx.session_id}/{st.session_state.setdefault(VISIT, uuid.uuid4().hex)}"


def _trim() -> None:
    """Give freed memory back to the system (glibc keeps it in its arenas otherwise)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the memory is reused by the process instead
        pass


def sweep(now: float | None = None) -> list[str]:
    """Release every session gone for ``Limits.session_grace_s``: what it booked here, and the session itself in
    Streamlit (its state, uploaded files and download bytes). The sessions released."""
    from ui.jobs import hosted_limits

    rt = _runtime()
    now = time.monotonic() if now is None else now
    grace = hosted_limits().session_grace_s
    closing = []
    with _seen_lock:
        for sid, gone in list(_seen.items()):
            if rt is None or rt.is_active_session(sid):
                _seen[sid] = None
            elif gone is None:
                _seen[sid] = now
            elif now - gone >= grace:
                closing.append(sid)
                del _seen[sid]
    released = ledger().sweep(lambda key: key.split("/", 1)[0] not in closing)
    with _seen_lock:
        for key in released:
            _views.pop(key, None)
    for sid in closing:
        # closes a stored (disconnected) session on Streamlit's event loop: AppSession.shutdown drops its uploaded
        # files, its media (download) references and its session state; a later connection gets a new session
        rt.clear_user_info_for_session(sid)
    global _trims_due
    if closing or released:
        _trims_due = 3  # Streamlit's event loop closes them a moment later: trim on this pass and the next ones
    if _trims_due:
        _trims_due -= 1
        _trim()
    return sorted(set(closing) | {k.split("/", 1)[0] for k in released})


def _sweeper() -> None:
    from ui.jobs import hosted_limits

    while True:
        time.sleep(min(SWEEP_S, hosted_limits().session_grace_s / 5))
        try:
            sweep()
        except Exception:  # noqa: BLE001 -- the sweeper must outlive a bad moment; the next pass tries again
            pass


@st.cache_resource(show_spinner=False)
def ledger() -> api.hosted.Uploads:
    """The one ledger of this server process, and its sweeper thread."""
    from ui.jobs import hosted_limits

    book = api.hosted.Uploads(hosted_limits().uploads_total_mb)
    threading.Thread(target=_sweeper, daemon=True, name="rnnlab-upload-sweeper").start()
    return book


def held() -> tuple[list, object]:
    """The records this session uploaded (hosted: kept for it only), and a token that changes with them (None when
    it holds none)."""
    sid = _session_id()
    if sid is None:
        return [], None
    recs, version = ledger().held(sid)
    return (recs, (sid, version)) if recs else ([], None)


def views(token) -> Memo:
    """Where views of this session's uploaded records are kept (``token``: what ``held`` returned)."""
    key = token[0]
    with _seen_lock:
        return _views.setdefault(key, Memo(size=32))


def held_bytes() -> int:
    sid = _session_id()
    return ledger().held_bytes(sid) if sid else 0


def drop(files) -> None:
    """Let Streamlit forget uploaded files (their bytes leave the server's memory now)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    rt, ctx = _runtime(), get_script_run_ctx()
    if rt is None or ctx is None:
        return
    for f in files:
        rt.uploaded_file_mgr.remove_file(ctx.session_id, f.file_id)


def book(files, *, what: str, max_files: int | None = None, max_mb: float | None = None) -> None:
    """Book uploaded ``files`` for this session before reading them: ``RnnlabError`` (and the files dropped from
    memory) when there are more than ``max_files``, together more than ``max_mb``, or more than every session's
    uploads may hold at once."""
    sid = _session_id()
    files = list(files)
    size = sum(f.size for f in files)
    try:
        if max_files is not None and len(files) > max_files:
            raise RnnlabError(f"{what}: {len(files)} files; at most {max_files} in one upload here")
        if max_mb is not None and size > max_mb * 2**20:
            raise RnnlabError(f"{what}: {size / 2**20:.1f} MB; at most {max_mb:g} MB in one upload here")
        if sid is not None:
            ledger().book(sid, {f.file_id: f.size for f in files}, what=what)
    except RnnlabError:
        drop(files)
        raise


def unbook(files) -> None:
    """Give back the booking of ``files`` (uploaded files or their ids)."""
    sid = _session_id()
    if sid is not None:
        ledger().unbook(sid, [getattr(f, "file_id", f) for f in files])


def keep(records) -> None:
    """Keep parsed records for this session only (their upload stays booked)."""
    sid = _session_id()
    if sid is not None:
        ledger().keep(sid, records)


def import_results(up, lim: api.hosted.Limits) -> tuple[bool, object]:
    """A hosted visitor's results file: booked, read (``present.results.read_upload``: validated, never stored),
    its records kept for this session, its bytes dropped from the server. (True, number of records) or (False, why)."""
    from rnnlab.present import results

    try:
        before = held_bytes()
        book([up], what=up.name)
        with turns.aside():  # a large file takes seconds to check: the others render meanwhile
            recs = results.read_upload(up.getvalue(), name=up.name, held=held()[0], held_bytes=before,
                                       max_records=lim.import_records, max_mb=lim.import_mb)
        keep(recs)
        return True, len(recs)
    except RnnlabError as e:
        unbook([up])
        return False, str(e)
    finally:
        drop([up])
