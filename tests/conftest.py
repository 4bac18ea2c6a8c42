import os
import sys

# The TF1 cells need tf-keras, chosen before TensorFlow is first imported anywhere in the test process.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# Compiled modules are cached even where the environment says not to (PYTHONDONTWRITEBYTECODE): pytest rewrites and
# compiles every test module at each start otherwise (7 of the quick loop's 9 s of collection), and every process a
# test starts compiles the package again. This process from here on, and every process it starts.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

# Every Python process a test starts (``python -m rnnlab``, ``python -c ...``, a worker, the Streamlit server) finds
# this checkout's ``rnnlab`` and ``tests`` whatever the working directory pytest was started from.
ROOT = str(Path(__file__).resolve().parent.parent)
os.environ["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                                      if p and p != ROOT])


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path_factory, monkeypatch):
    """No test touches the developer's store: each gets its own, and sees no bundled results unless it asks for
    them (tests/pages/test_hosted.py uses the real data/baseline)."""
    monkeypatch.setenv("RNNLAB_STORE", str(tmp_path_factory.mktemp("store") / "results.sqlite"))
    monkeypatch.setenv("RNNLAB_BASELINE", str(tmp_path_factory.mktemp("no-baseline")))


@pytest.fixture(autouse=True)
def _quiet_machine(monkeypatch):
    """Other processes' CPU before a run reads as a quiet machine (the real reading sleeps half a second per run);
    a test of the busy warning sets its own."""
    from rnnlab.core import condition

    monkeypatch.setattr(condition, "others_now", lambda seconds=0.5: 0.0)


@pytest.fixture(autouse=True)
def _sigint_handled():
    """Ctrl-C handled as Python does by default, before and after every test: a library that leaves SIGINT ignored
    in this process (seen in the full suite) would have every later subprocess inherit it, and a test that sends
    SIGINT to a `python -m rnnlab run` would wait for a process that never hears it."""
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _heap_frozen_between_tests():
    """What earlier tests left alive is frozen (``gc.freeze``) before each test, as a worker freezes what its import
    made (``rnnlab.worker.main.freeze_imports``): a test process's imports alone (TensorFlow, Keras,
    Streamlit, pandas, Altair) leave about 457,000 objects, 0.2 s a full collection, and every full collection walked
    them all, and what TensorFlow built since: the untimed ``gc.collect()`` of each build
    (``tf.measure.time_builds``), and Streamlit's ``keras.backend.clear_session()`` after every AppTest script run in
    a process that has imported Keras. Both took about 140 of the suite's 690 CPU-seconds (a py-spy profile of the suite
    on a 2-core VM). Garbage is collected first (only what the last test made is walked), so none is kept."""
    import gc

    gc.collect()
    gc.freeze()
