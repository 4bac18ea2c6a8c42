"""Every page renders (no exception, no page-wide error) with accepted mutated records in the store (issue 20):
the records ``api.read_import`` lets in, from ``tests/fuzz_records.py``, beside the bundled results."""

import json
import random

import pytest

from rnnlab.core.baseline import BASELINE_DIR
from rnnlab.core.errors import RnnlabError
from rnnlab.core.store import Store, default_path
from rnnlab.engine import api
from tests import fuzz_records as fz
from tests.apptest_util import no_errors, no_run_left_behind, open_app  # noqa: F401

pytestmark = pytest.mark.slow  # Streamlit pages

PAGES = ["pages/overview.py", "pages/unrolling.py", "pages/varlen.py", "pages/pitfalls.py", "pages/migrate.py",
         "pages/claims.py", "pages/results.py", "pages/glossary.py"]


@pytest.fixture
def mutated_store(monkeypatch):
    monkeypatch.setenv("RNNLAB_BASELINE", str(BASELINE_DIR))
    rng = random.Random(2020)
    base = fz.bundled()
    originals = {d["key"] for d in base}
    accepted = []
    for i in range(300):
        d = fz._fresh_key(fz.mutate(rng, rng.choice(base)), i, originals)
        try:
            api.read_import(fz.encode(d))
        except RnnlabError:
            continue
        accepted.append(d)
    assert len(accepted) >= 30
    api.import_file(json.dumps(accepted), store=Store(default_path()))
    return accepted


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders_with_accepted_mutated_records(page, mutated_store):
    at = open_app(page, timeout=180)
    no_errors(at)
    assert not at.error, [e.value for e in at.error]
