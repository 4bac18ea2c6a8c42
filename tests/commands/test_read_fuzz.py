"""A property that cannot be argued with (issue 20): real bundled records, each mutated in one to three fields at any
depth (``tests/fuzz_records.py``); whatever ``api.read_import`` accepts, every read command (``results`` in each
format, ``claims``, ``export --view`` of each page, csv/md/pptx) and every page's view and report renders it
beside the bundled records without an exception. What it refuses, put into the store anyway (as an older import
may have), is left out of every reader with a warning.

``RNNLAB_FUZZ_N=5000 pytest tests/commands/test_read_fuzz.py -m slow`` runs the long version (and prints its counts)."""

import json
import os

import pytest

from rnnlab.core.baseline import BASELINE_DIR
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record
from rnnlab.core.store import Store
from rnnlab.engine import api
from tests import fuzz_records as fz

SEED = 20


@pytest.mark.slow  # every reader over the mutated records
def test_a_few_mutated_records_read_everywhere(tmp_path):
    """The quick loop's version: 40 mutations of four unroll records, read by the quick readers alone."""
    base = [d for d in fz.bundled() if d["experiment"] in ("unroll", "varlen")][:4]
    import random

    rng = random.Random(SEED)
    accepted, refused = [], []
    for i in range(40):
        d = fz._fresh_key(fz.mutate(rng, rng.choice(base)), i, {x["key"] for x in base})
        try:
            api.read_import(fz.encode(d))
            accepted.append(d)
        except RnnlabError:
            refused.append(d)
    assert accepted and refused
    store = Store(tmp_path / "s.sqlite", warn=lambda m: None)
    api.import_file(json.dumps(base + accepted), store=store)
    quick = {"results --format csv", "results --format json", "claims --format json", "unrolling.view",
             "varlen.view", "overview.view", "results page"}  # the slow test reads every reader
    for name, call in fz.readers(store, tmp_path, heavy=False):
        if name not in quick:
            continue
        try:
            call()
        except RnnlabError:
            pass


@pytest.mark.slow
def test_mutated_bundled_records_that_import_read_everywhere(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RNNLAB_BASELINE", str(BASELINE_DIR))
    n = int(os.environ.get("RNNLAB_FUZZ_N", "60"))
    res = fz.run(SEED, n, tmp_path, batch=60, heavy_every=10 if n > 200 else 1)  # the default: one batch
    with capsys.disabled():
        print(f"\nfuzz: {res['generated']} generated, {res['accepted']} accepted, {res['refused']} refused, "
              f"read in {res['batches']} batches")
    assert res["accepted"] >= n // 10 and res["refused"] >= n // 10  # both paths exercised
    assert not res["failures"], [(name, err, json.dumps(d)[:400] if d else None)
                                 for name, err, d in res["failures"][:3]]


def test_refused_records_already_stored_are_left_out_with_a_warning(tmp_path, capsys):
    """The read path's net: a record an older import let in, that the validator refuses now."""
    import random

    rng = random.Random(SEED)
    base = [d for d in fz.bundled() if d["experiment"] == "unroll"][:10]
    bad = []
    while len(bad) < 10:
        d = fz.mutate(rng, rng.choice(base))
        try:
            rec = Record.from_dict(d)  # structurally a record, so an older rnnlab stored it
        except RnnlabError:
            continue
        from rnnlab import experiments

        if experiments.problems(rec, unknown_params=False):
            bad.append(rec.with_(key=f"{len(bad):064x}", source="imported"))
    store = Store(tmp_path / "s.sqlite", warn=lambda m: None)
    store.put_many(bad)
    from rnnlab.commands import results

    assert results.run(fmt="json", store=store, include_baseline=False) == "[]"
    import re

    err = capsys.readouterr().err
    assert sum(int(n) for n in re.findall(r"skipped (\d+) imported record", err)) == 10, err


@pytest.mark.slow  # 100 cases through the import command, then every quick reader, and a rerun of 20
def test_the_fuzz_script_keeps_the_property_and_resumes(tmp_path):
    from scripts import fuzz_records as script

    state_path = tmp_path / "state.json"
    # a batch, then a rerun (the script itself runs 100,000: python -m scripts.fuzz_records)
    state = script.run(seed=30, cases=100, state_path=state_path, batch=100, heavy_every=0, work=tmp_path / "w",
                       progress=False)
    assert state["done"] == 100 and state["failures"] == [], state["failures"][:3]
    assert state["accepted"] >= 15 and state["refused"] >= 30  # both paths exercised
    assert state["accepted"] + state["refused"] == 100
    again = script.run(seed=30, cases=120, state_path=state_path, batch=100, heavy_every=0, work=tmp_path / "w",
                       progress=False)  # a rerun continues: only the 20 new cases
    assert again["done"] == 120 and again["accepted"] + again["refused"] == 120 and again["failures"] == []
    fresh = json.loads(state_path.read_text())
    assert fresh["done"] == 120 and fresh["seed"] == 30


def test_a_case_is_drawn_from_its_seed_and_index_alone():
    base = fz.bundled()
    assert fz.case(30, 7, base) == fz.case(30, 7, base) != fz.case(30, 9, base)
    assert fz.case(30, 8, base) != fz.case(31, 8, base)
