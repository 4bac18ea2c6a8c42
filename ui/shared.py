"""Views shared by every session: records read once per version of the store, views computed once per version."""

from __future__ import annotations

from rnnlab.core import baseline
from rnnlab.core.memo import Memo
from rnnlab.core.record import Record
from rnnlab.judge import select

from . import uploads
from .common import note_read, store

# Every rerun of every session used to rebuild its page's views from all records (20 sessions: a 37 s p95 render).
# A page's view is a pure function of the records and the page's settings, so it is computed once per (records'
# version, settings) and shared (``core.memo``): ``records()`` is read once per version of the store and of the bundled
# files, and ``shared(records, fn, ...)`` keys a view on that version and its other arguments.
VIEWS = Memo(size=128)  # a page view with its chart data: up to a few MB each


class Records(list):
    """Records as ``records()`` read them, with the version they were read at (``shared`` keys views on it).
    Shared by every session: never change one in place."""

    version: tuple = ()


def records(experiment: str | None = None) -> Records:
    """This machine's records plus bundled ones for configurations not measured here; in hosted mode, plus the
    records this session uploaded (source "imported", for this session only). Read once per version of the store,
    the bundled files and this session's uploads, and shared."""
    s = store()
    mine, token = uploads.held()
    version = ("records", str(s.path), s.version(), baseline.stamp(), experiment, token)
    note_read(version[2])

    def read() -> Records:
        if not mine:
            out = Records(select.combined(s, experiment=experiment))
        else:
            local = s.records(experiment) + [r for r in mine if experiment is None or r.experiment == experiment]
            out = Records(select.combined(s, experiment=experiment, local=local))
        out.version = version
        return out

    return _memo(version).get(version, read)


def _memo(version: tuple) -> Memo:
    """Where views of records at ``version`` are kept: shared by every session, except views of a session's own
    uploads, kept for that session only and let go with it (``uploads.views``)."""
    if version and version[-1] is not None:  # the upload token of ``records()``
        return uploads.views(version[-1])
    return VIEWS


def _key(x, memo: Memo) -> object:
    """An argument of a shared view as part of its key. Records drawn from ``records()`` at one version (the key
    holds the version) are told apart by key, source and time: their repr would cost ~0.1 ms each on every rerun.
    A view this memo holds (or an item of one, or a list of such items: a filtered list of claims) is keyed by where
    it came from (``Memo.origin``); anything else by its repr."""
    if isinstance(x, Records):
        return x.version
    if isinstance(x, Record):
        return ("record", x.key, x.source, x.created_at, x.cached)
    if isinstance(x, (str, int, float, bool, type(None))):
        return repr(x)
    origin = memo.origin(x)
    if origin is not None:
        return ("view", origin)
    if isinstance(x, (list, tuple)) and x:
        if all(isinstance(r, Record) for r in x):
            return (type(x).__name__,) + tuple(_key(r, memo) for r in x)
        items = [memo.origin(i) for i in x]
        if None not in items:
            return (type(x).__name__, "views") + tuple(items)
    return repr(x)


def shared(records, fn, /, *args, **kw):
    """``fn(*args, **kw)``, computed once per (``records``' version, ``fn``, its arguments) and shared by every
    session (``records``: what ``records()`` returned, the arguments' source). Arguments are keyed by their repr (a
    ``Records`` by its version), so everything the view depends on must be among them. Not cached when ``records``
    has no version (a list made by hand)."""
    version = getattr(records, "version", None)
    if not version:
        return fn(*args, **kw)
    memo = _memo(version)
    key = ("view", version, fn.__module__, fn.__qualname__, tuple(_key(a, memo) for a in args),
           tuple((k, _key(v, memo)) for k, v in sorted(kw.items())))
    return memo.get(key, lambda: fn(*args, **kw))
