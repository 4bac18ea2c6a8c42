import os

# The TF1 cells need tf-keras, chosen before TensorFlow is first imported anywhere in the test process.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path_factory, monkeypatch):
    """No test touches the developer's store: each gets its own, and sees no bundled results unless it asks for
    them (tests/pages/test_hosted.py uses the real data/baseline)."""
    monkeypatch.setenv("RNNLAB_STORE", str(tmp_path_factory.mktemp("store") / "results.sqlite"))
    monkeypatch.setenv("RNNLAB_BASELINE", str(tmp_path_factory.mktemp("no-baseline")))
