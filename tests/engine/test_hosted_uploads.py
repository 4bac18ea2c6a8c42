"""What a hosted visitor may upload: a results file kept in the session (present.results.read_upload) and a
checkpoint whose problems come back as one line (present.migrate); pure, no Streamlit, no TensorFlow."""

from __future__ import annotations

import json

import pytest

from rnnlab.core.errors import RnnlabError
from rnnlab.core.store import Store
from rnnlab.engine import api
from rnnlab.present import results as R


def _file(n: int) -> bytes:
    from tests.factories import make_record

    return json.dumps([make_record("tf1_static", {"units": 8 + i}).to_dict() for i in range(n)]).encode()


def test_read_upload_returns_imported_records_and_stores_nothing():
    recs = R.read_upload(_file(3), name="t.json", max_records=10, max_mb=1)
    assert len(recs) == 3 and {r.source for r in recs} == {"imported"}
    assert Store().count() == 0


def test_read_upload_caps_the_session_records_and_bytes():
    held = R.read_upload(_file(3), name="a.json", max_records=4, max_mb=1)
    with pytest.raises(RnnlabError, match=r"^b\.json: 2 records; this demo keeps at most 4 uploaded records per "
                                          r"visit \(3 already\)"):
        R.read_upload(_file(2), name="b.json", held=held, max_records=4, max_mb=1)
    with pytest.raises(RnnlabError, match=r"^c\.json: .* at most 1 MB of uploads per visit"):
        R.read_upload(b" " * 600_000, name="c.json", held_bytes=600_000, max_records=4, max_mb=1)
    with pytest.raises(RnnlabError, match=r"^junk\.bin: not UTF-8"):
        R.read_upload(b"\x00\xff junk", name="junk.bin", max_records=4, max_mb=1)


def test_a_lone_junk_index_is_called_not_a_checkpoint_index():
    with pytest.raises(RnnlabError) as e:
        api.convert.check_upload([("m.index", b"junk")])
    assert str(e.value).startswith("m.index is not a TensorFlow checkpoint index")


@pytest.mark.parametrize("stderr, line", [
    ('W noise\nTraceback (most recent call last):\n  File "x.py", line 3, in <module>\n    go()\n'
     "ValueError: shapes (3,) and (4,) differ", "ValueError: shapes (3,) and (4,) differ"),
    ("Killed", "Killed"),
    ('Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n', "no message"),
    ("", "no message"),
])
def test_a_converter_crash_is_one_line_and_never_a_traceback(stderr, line):
    with pytest.raises(RnnlabError) as e:
        api.convert.parse_convert_output(1, "", stderr)
    msg = str(e.value)
    assert msg.endswith(line) and "\n" not in msg and "Traceback" not in msg and "File " not in msg


def test_uploads_are_booked_against_one_budget_for_every_session_and_released_with_their_session():
    from rnnlab.engine.hosted import Uploads

    book = Uploads(total_mb=10)
    book.book("a", {"f1": 4 * 2**20}, what="a.json")
    book.book("a", {"f1": 4 * 2**20}, what="a.json")  # the same file again: not counted twice
    book.book("b", {"f2": 5 * 2**20}, what="b.json")
    assert book.used() == 9 * 2**20
    with pytest.raises(RnnlabError, match=r"^c\.json: this demo holds at most 10 MB of uploads for all its visitors "
                                          r"at once and has 1\.0 MB free now"):
        book.book("c", {"f3": 2 * 2**20}, what="c.json")
    assert book.used() == 9 * 2**20 and "c" not in book.sessions()  # nothing booked on a refusal
    book.keep("a", ["r1", "r2"])
    recs, v = book.held("a")
    assert recs == ["r1", "r2"] and v == 1 and book.held("b") == ([], 0)
    book.unbook("b", ["f2"])
    assert book.used() == 4 * 2**20
    assert book.sweep(lambda s: s != "a") == ["a"]  # session a ended: its records and bytes are let go
    assert book.used() == 0 and book.held("a") == ([], 0)
