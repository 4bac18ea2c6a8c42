"""A process-wide memo of views: computed once per key, shared by every caller (every session of the app).

The app's pages ask for the same views over and over (every rerun of every session), and a view is a pure function of
the records and the page's settings. ``Memo.get(key, make)`` computes ``make()`` once per key, even when many threads
ask for it at the same moment (the others wait for the first), and keeps the latest ``size`` keys. A key carries the
records' version (``core.store.Store.version``, the bundled files' stamp), so a store that changed is a new key and
the old views age out. The values are shared, never copied: callers must not change them (views are frozen).

``origin(x)``: the key a value kept here was made for (or, for an item of a kept list or tuple, that key and its
index), found by identity. A view computed from another view is keyed by where its argument came from, not by the
argument's repr, which for a claim list or a configuration with its records cost milliseconds on every rerun.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Hashable, TypeVar

T = TypeVar("T")


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.value = None
        self.error: BaseException | None = None


class Memo:
    def __init__(self, size: int = 256):
        self.size = size
        self._lock = threading.Lock()
        self._values: OrderedDict[Hashable, object] = OrderedDict()
        self._pending: dict[Hashable, _Pending] = {}
        self._origin: dict[int, tuple[object, Hashable]] = {}  # id -> (a kept value or an item of one, its key)
        self.hits = self.misses = 0

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        """``make()`` for ``key``, computed once (a failure is not kept: the next caller tries again)."""
        with self._lock:
            if key in self._values:
                self._values.move_to_end(key)
                self.hits += 1
                return self._values[key]  # type: ignore[return-value]
            pending = self._pending.get(key)
            mine = pending is None
            if mine:
                pending = self._pending[key] = _Pending()
                self.misses += 1
            else:
                self.hits += 1
        if not mine:
            pending.done.wait()
            if pending.error is not None:
                raise pending.error
            return pending.value  # type: ignore[return-value]
        try:
            value = make()
        except BaseException as e:
            pending.error = e
            with self._lock:
                del self._pending[key]
            pending.done.set()
            raise
        pending.value = value
        with self._lock:
            self._values[key] = value
            self._note(key, value)
            while len(self._values) > self.size:
                self._forget(*self._values.popitem(last=False))
            del self._pending[key]
        pending.done.set()
        return value

    def _note(self, key: Hashable, value: object) -> None:
        """Remember where ``value`` (and each item of a list or tuple value) came from; the first key wins."""
        self._origin.setdefault(id(value), (value, key))
        if isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                self._origin.setdefault(id(item), (item, (key, i)))

    def _forget(self, key: Hashable, value: object) -> None:
        for x in (value, *(value if isinstance(value, (list, tuple)) else ())):
            got = self._origin.get(id(x))
            mine = got is not None and (got[1] == key or isinstance(got[1], tuple) and len(got[1]) == 2
                                        and got[1][0] == key)  # the value, or one of its items
            if mine and got[0] is x:
                del self._origin[id(x)]

    def origin(self, x: object) -> Hashable | None:
        """The key ``x`` was kept for (an item of a kept list or tuple: (key, index)), or None: ``x`` itself, by
        identity, is not held here."""
        with self._lock:
            got = self._origin.get(id(x))
        return got[1] if got is not None and got[0] is x else None

    def of(self, obj: object, make: Callable[[], T], *more: Hashable) -> T:
        """``make()`` once per object, found by identity (``more``: what else the value depends on). The object is
        kept beside its value, so its id is not another's while kept; an object whose id was another's, dropped since,
        gets its value made afresh."""
        held, value = self.get((id(obj), *more), lambda: (obj, make()))
        return value if held is obj else make()

    def peek_of(self, obj: object, *more: Hashable):
        """The value :meth:`of` keeps for ``obj`` (and ``more``), or None (nothing is made)."""
        got = self.peek((id(obj), *more))
        return got[1] if got is not None and got[0] is obj else None

    def peek(self, key: Hashable):
        """The value kept for ``key``, or None (nothing is computed)."""
        with self._lock:
            return self._values.get(key)

    def clear(self) -> None:
        with self._lock:
            self._values.clear()
            self._origin.clear()

    def __len__(self) -> int:
        return len(self._values)
