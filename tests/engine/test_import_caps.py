"""What one import may add is capped before anything is stored (engine/importing.py): records per file, and the
records the store would then hold (each a row of the full appendix), each refusal one line that says the size."""

import json

import pytest

from rnnlab.core.errors import RnnlabError
from rnnlab.core.store import Store
from rnnlab.engine import importing
from tests.factories import make_record


def _file(n: int, first: int = 0) -> bytes:
    recs = [make_record("tf1_static", {"units": 8 + i, "seq_len": 10, "batch": 2}) for i in range(first, first + n)]
    return json.dumps([r.to_dict() for r in recs]).encode()


def test_a_file_past_the_records_cap_is_refused_whole(monkeypatch, tmp_path):
    monkeypatch.setattr(importing, "MAX_IMPORT_RECORDS", 5)
    store = Store(tmp_path / "s.sqlite")
    with pytest.raises(RnnlabError, match=r"^big.json: 6 records; at most 5 in one import \(the full appendix, "
                                          r"export --format pptx, takes about .* stored\); split it, nothing"):
        importing.import_file(_file(6), name="big.json", store=store)
    assert store.count() == 0
    assert importing.import_file(_file(5), name="ok.json", store=store) == 5


def test_the_store_total_is_capped_counting_only_new_records(monkeypatch, tmp_path):
    monkeypatch.setattr(importing, "MAX_STORED", 8)
    store = Store(tmp_path / "s.sqlite")
    assert importing.import_file(_file(6), name="a.json", store=store) == 6
    with pytest.raises(RnnlabError, match=r"^b.json: the store would hold 9 records; at most 8 \(the full appendix"):
        importing.import_file(_file(3, first=6), name="b.json", store=store)
    assert store.count() == 6
    assert importing.import_file(_file(8), name="again.json", store=store) == 2  # 6 already stored: 8 in all


def test_the_caps_are_sized_for_the_appendix():
    assert importing.MAX_IMPORT_RECORDS <= importing.MAX_STORED <= 1000  # 3,000 records: no pptx in 300 s
