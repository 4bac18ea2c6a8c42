"""Ctrl-C and SIGTERM on ``python -m rnnlab run``: the spawned workers (their process groups) end with the run."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]

# The command line as ``python -m rnnlab`` runs it, with the harness tests' fake experiment (workers without
# TensorFlow) and a known environment (no probe): a "sleep" worker runs for a minute unless something ends it.
SCRIPT = textwrap.dedent("""
    import sys
    from rnnlab import experiments
    from rnnlab.engine import api
    from rnnlab.cli import main
    from tests.factories import ENV, FAKE

    experiments._load_all()
    experiments._cache["fake"] = FAKE
    real_run = api.run
    api.run = lambda p, **kw: real_run(p, env=ENV, **kw)
    sys.exit(main(["run", "fake", "--variants", "ok,sleep"]))
""")


def _workers(parent: psutil.Process) -> list[psutil.Process]:
    """The run's workers and the zygotes they were forked from (a fork keeps its zygote's command line)."""
    return [c for c in parent.children(recursive=True)
            if any(m in " ".join(c.cmdline()) for m in ("rnnlab.worker", "rnnlab.worker.zygote"))]


@pytest.mark.slow  # a run in a subprocess, interrupted
@pytest.mark.parametrize("sig,code,word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_ends_the_workers_and_keeps_finished_variants(tmp_path, sig, code, word):
    env = dict(os.environ, PYTHONPATH=str(ROOT), RNNLAB_STORE=str(tmp_path / "s.sqlite"))
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    parent = psutil.Process(proc.pid)
    seen: list[psutil.Process] = []
    deadline = time.monotonic() + 60
    try:
        # wait until the first variant is stored and the "sleep" worker runs
        while time.monotonic() < deadline and proc.poll() is None:
            if _ok_stored(tmp_path):
                seen = _workers(parent)
                if seen:
                    break
            time.sleep(0.1)
        assert seen, "no worker running"
        time.sleep(0.3)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    gone, alive = psutil.wait_procs(seen, timeout=5)
    for p in alive:  # an orphan left by the run: end it here, then fail
        p.kill()
    assert alive == [], f"workers outlived the run: {[p.pid for p in alive]}"
    assert proc.returncode == code, err
    lines = [ln for ln in err.splitlines() if ln.startswith("rnnlab: ") and "[" not in ln[:10]]
    assert lines[-1] == f"rnnlab: {word}; its workers ended, finished variants are stored"
    assert "Traceback" not in err
    from rnnlab.core.store import Store

    assert [r.variant for r in Store(tmp_path / "s.sqlite").records("fake")] == ["ok"]


def _ok_stored(tmp_path) -> bool:
    from rnnlab.core.store import Store

    path = tmp_path / "s.sqlite"
    try:
        return path.exists() and any(r.variant == "ok" for r in Store(path).records("fake"))
    except Exception:  # the store is being written
        return False

