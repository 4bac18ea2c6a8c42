"""core.memo: a view computed once per key and shared, even when many threads ask at the same moment."""

import threading
import time

import pytest

from rnnlab.core.memo import Memo


def test_a_key_is_computed_once_by_many_threads_at_once_and_shared():
    memo, calls = Memo(), []

    def make():
        calls.append(1)
        time.sleep(0.2)  # the others arrive while it is computed
        return object()

    got = []
    threads = [threading.Thread(target=lambda: got.append(memo.get("k", make))) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(got) == 12 and all(g is got[0] for g in got)
    assert memo.misses == 1 and memo.hits == 11


def test_the_oldest_keys_go_and_a_failure_is_not_kept():
    memo = Memo(size=2)
    for k in "abc":
        memo.get(k, lambda k=k: k.upper())
    assert len(memo) == 2 and memo.peek("a") is None and memo.peek("c") == "C"
    with pytest.raises(ValueError):
        memo.get("x", lambda: (_ for _ in ()).throw(ValueError("boom")))
    assert memo.get("x", lambda: 1) == 1  # tried again, not the error kept


def test_a_kept_value_and_each_of_its_items_say_where_they_came_from_until_they_go():
    memo = Memo(size=2)
    view, items = object(), [object(), object()]
    assert memo.get("v", lambda: view) is view and memo.get("l", lambda: items) is items
    assert memo.origin(view) == "v" and memo.origin(items) == "l" and memo.origin(items[1]) == ("l", 1)
    assert memo.origin(object()) is None and memo.origin([*items]) is None  # an equal list made anew is not held
    memo.get("w", lambda: 1)  # "v" goes: its value is no longer found by identity
    assert memo.origin(view) is None and memo.origin(items[0]) == ("l", 0)
    memo.clear()
    assert memo.origin(items) is None



def test_a_value_per_object_is_made_once_and_never_given_to_another_object():
    memo, made = Memo(size=1), []
    a, b = object(), object()
    assert memo.of(a, lambda: made.append("a") or "A", "fmt") == "A" == memo.of(a, lambda: "again", "fmt")
    assert memo.peek_of(a, "fmt") == "A" and memo.peek_of(a, "other") is None and memo.peek_of(b, "fmt") is None
    assert memo.of(b, lambda: "B", "fmt") == "B" and memo.peek_of(a, "fmt") is None  # a's went (size 1)
    assert made == ["a"]
    key = (id(a), "fmt")
    memo.get(key, lambda: (b, "B's"))  # another object's value under a's id (an id reused after a was dropped)
    assert memo.of(a, lambda: "A anew", "fmt") == "A anew" and memo.peek_of(a, "fmt") is None
