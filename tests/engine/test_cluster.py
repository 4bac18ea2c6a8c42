"""``run --cluster local``: the same records as a local run, failures as error records, nothing left after a cancel.

The harness tests' experiments (workers without TensorFlow) on a real local Ray instance; Ray is imported only by
the tests that ask for a cluster, and a run without ``--cluster`` never imports it."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from rnnlab.core.store import Store
from rnnlab.engine import api
from tests.factories import ENV, FAKE, FAKE_R, use_fakes

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a Python process of its own
def test_a_run_without_cluster_never_imports_ray(tmp_path):
    probe = textwrap.dedent("""
        import contextlib, io, sys
        from rnnlab.cli import main
        from rnnlab.engine import api, jobs
        from rnnlab.commands import run
        with contextlib.redirect_stdout(io.StringIO()):
            main(["list"])
        print("ray" in sys.modules)
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT), RNNLAB_STORE=str(tmp_path / "s.sqlite"))
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_a_missing_ray_is_one_clear_error(monkeypatch):
    from rnnlab.core.errors import RnnlabError
    from rnnlab.engine import cluster

    monkeypatch.setitem(sys.modules, "ray", None)  # "import ray" raises ImportError
    with pytest.raises(RnnlabError, match="--cluster needs Ray: pip install"):
        cluster.Cluster("local")


@pytest.fixture(scope="module")
def local_cluster():
    pytest.importorskip("ray")
    from rnnlab.engine.cluster import Cluster

    with Cluster("local") as c:
        yield c


@pytest.fixture
def fakes(monkeypatch):
    use_fakes(monkeypatch, FAKE, FAKE_R)


@pytest.mark.slow
def test_a_sweep_on_the_local_cluster_gives_the_local_runs_keys(local_cluster, fakes, tmp_path):
    assert {n["NodeManagerAddress"] for n in local_cluster.ray.nodes()} == {"127.0.0.1"}  # a node on loopback
    p = api.plan("fake_r", overrides={"units": [4, 8], "rounds": 2}, variants=["ok_off"])
    here = api.run(p, store=Store(tmp_path / "here.sqlite"), env=ENV)
    seen = []
    store = Store(tmp_path / "ray.sqlite")
    there = api.run(p, store=store, env=ENV, cluster=local_cluster, on_progress=seen.append)
    assert [r.key for r in there] == [r.key for r in here]  # the same records, in plan order
    assert {r.key for r in store.records("fake_r")} == {r.key for r in Store(tmp_path / "here.sqlite").records("fake_r")}
    assert all(r.ok and len(r.rounds) == 2 for r in there)
    by = {(r.params["units"], r.variant): r for r in there}
    assert by[4, "ok_off"].metrics["max_abs_diff"] == pytest.approx(0.5)  # against the reference, on the same node
    done = [pr for pr in seen if pr.phase == "done"]
    assert len(done) == p.n_runs and all(pr.where for pr in done)  # progress names the node
    assert done[-1].index + 1 == p.n_runs
    # stored: a second run on the cluster is served from the store
    again = api.run(p, store=store, env=ENV, cluster=local_cluster)
    assert all(r.cached for r in again)
    # the instance's processes (its head, node, workers: children of this one) reached loopback addresses only
    far = [(c.pid, c.raddr) for k in psutil.Process().children(recursive=True) for c in _connections(k)
           if c.raddr and not c.raddr.ip.removeprefix("::ffff:").startswith("127.")]
    assert not far, far


@pytest.mark.slow
def test_a_crash_or_a_timeout_on_the_cluster_is_an_error_record(local_cluster, fakes, tmp_path):
    p = api.plan("fake", overrides={"timeout_s": 5}, variants=["crash", "sleep", "raise", "ok_off"])
    recs = api.run(p, store=Store(tmp_path / "s.sqlite"), env=ENV, cluster=local_cluster)
    by = {r.variant: r for r in recs}
    assert by["crash"].error.startswith("worker crashed: killed by signal 11")
    assert by["sleep"].error == "timed out after 5 s (timeout_s)"
    assert by["raise"].error == "ValueError: shapes (3, 4) and (5, 6) are incompatible"
    assert by["ok_off"].ok


def test_a_dead_ray_task_becomes_a_transient_error_message():
    from rnnlab.engine.cluster import Node, _failure

    msg = _failure(RuntimeError("The worker died unexpectedly\n while executing"), Node("n1", "10.0.0.7", 8, 0))
    assert msg == {"type": "error", "transient": True,
                   "reason": "the Ray task on 10.0.0.7 failed: The worker died unexpectedly while executing"}


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
    sys.exit(main(["run", "fake", "--variants", "ok,sleep", "--cluster", "local"]))
""")


@pytest.mark.slow
def test_ctrl_c_cancels_the_cluster_run_and_leaves_nothing_behind(tmp_path):
    pytest.importorskip("ray")
    store = tmp_path / "s.sqlite"
    env = dict(os.environ, PYTHONPATH=str(ROOT), RNNLAB_STORE=str(store))
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    me = psutil.Process(proc.pid)
    seen: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until "ok" is stored and the "sleep" variant's worker runs, under a Ray task
            kids = me.children(recursive=True)
            for k in kids:
                try:
                    seen[k.pid] = " ".join(k.cmdline())[:120]
                except psutil.Error:
                    pass
            if _ok_stored(store) and any(
                    "rnnlab.worker" in " ".join(_cmd(k)) and k.create_time() < time.time() - 1 for k in kids):
                break
            time.sleep(0.3)
        else:
            pytest.fail("the sleep worker never started: " + (proc.stderr.read() if proc.poll() is not None else ""))
        time.sleep(1.0)
        for k in me.children(recursive=True):
            seen.setdefault(k.pid, " ".join(_cmd(k))[:120])
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err[-2000:]
    assert "interrupted" in err
    # every process gone within seconds of the run's end: 2 s quiet; a Ray task's process (ray::measure_on_node)
    # outlived 5 s once, in a full suite on a 2-core VM whose four test processes kept both cores busy
    deadline = time.monotonic() + 15.0
    while (left := [f"{pid}: {cmd}" for pid, cmd in seen.items() if _alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, "left behind:\n" + "\n".join(left)
    # what finished is kept: "ok", stored before the interrupt (its task and the sleeper's run side by side; on a busy
    # machine "ok" once had not ended a second after the sleeper started)
    assert _ok_stored(store)


def _ok_stored(path) -> bool:
    try:
        return path.exists() and any(r.variant == "ok" and r.ok for r in Store(path).records("fake"))
    except Exception:  # noqa: BLE001 - the run holds the store mid-write: not yet
        return False


def _connections(p: psutil.Process) -> list:
    try:
        return p.net_connections("inet")
    except psutil.Error:
        return []


def _cmd(p: psutil.Process) -> list[str]:
    try:
        return p.cmdline()
    except psutil.Error:
        return []


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_the_app_s_job_manager_runs_on_the_cluster_it_is_given(monkeypatch):
    """``JobManager.submit(plan, cluster=ADDRESS)`` (the sidebar's "Runs go to"): the run gets a connected cluster,
    which is closed when the run ends; without it, no cluster."""
    from rnnlab.engine import cluster
    from rnnlab.engine.jobs import JobManager

    opened = []

    class FakeCluster:
        nodes = ("n1",)

        def __init__(self, address):
            opened.append([address, "open"])

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            opened[-1][1] = "closed"

    monkeypatch.setattr(cluster, "Cluster", FakeCluster)
    got = []
    mgr = JobManager(runner=lambda plan, **kw: got.append(kw.get("cluster")) or [])
    p = api.plan("unroll", preset="quick", variants=["tf1_static"], available_mb=float("inf"))
    for address in ("local", None):
        job = mgr.submit(p, cluster=address)
        t0 = time.monotonic()
        while job.active and time.monotonic() - t0 < 5:
            time.sleep(0.01)
        assert job.state == "done", job.error
    assert isinstance(got[0], FakeCluster) and got[1] is None
    assert opened == [["local", "closed"]]


@pytest.mark.slow
def test_a_killed_ray_task_is_an_error_record_and_its_worker_ends_too(local_cluster, fakes, tmp_path):
    """The Ray process of a task dies hard (SIGKILL: no chance to end its worker): the run records a transient error
    for that variant and goes on, and the worker it had started (its own session) exits by itself."""
    import threading

    p = api.plan("fake", overrides={"timeout_s": 60}, variants=["sleep"])
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("recs", api.run(p, store=Store(tmp_path / "s.sqlite"), env=ENV,
                                                                         cluster=local_cluster)))
    t.start()
    worker = None
    deadline = time.monotonic() + 60
    while worker is None and time.monotonic() < deadline:
        for proc in psutil.process_iter(["cmdline"]):
            cmd = " ".join(proc.info["cmdline"] or [])
            if "rnnlab.worker" in cmd:
                try:  # the reference's worker ends within a second; the "sleep" one stays
                    parent = proc.parent()
                    if (parent is not None and "measure_on_node" in " ".join(parent.cmdline())
                            and time.time() - proc.create_time() > 3):
                        worker, ray_task = proc, parent
                except psutil.Error:
                    pass
        time.sleep(0.3)
    assert worker is not None, "no worker under a Ray task"
    ray_task.kill()
    t.join(60)
    assert not t.is_alive()
    (rec,) = out["recs"]
    assert rec.error.startswith("the Ray task on ") and rec.details.get("transient")
    worker.wait(timeout=5)  # gone within its watch interval, not after the minute it would sleep


# -- two nodes of different hardware, without Ray: a scripted cluster ---------------------------------------------------
class _Ref:
    def __init__(self, result):
        self.result = result


class _FakeRay:
    """What ``cluster.run`` uses of Ray: ``wait`` (every task finishes at once), ``get``, ``cancel``."""

    def __init__(self):
        self.cancelled = []

    def wait(self, refs, num_returns=1, timeout=None):
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):
        if isinstance(ref.result, BaseException):
            raise ref.result
        return ref.result

    def cancel(self, ref, force=False):
        self.cancelled.append(ref)


class _TwoNodes:
    """A CPU box and a GPU box: each task's node and environment noted; the GPU box is 10x faster."""

    def __init__(self):
        from rnnlab.engine.cluster import Node

        self.ray, self.local = _FakeRay(), False
        self.nodes = [Node("a", "cpu-box", 2, 0), Node("b", "gpu-box", 16, 1)]
        self.envs = {"a": {**ENV, "machine": "cpu-box", "cpu": "cpu"},
                     "b": {**ENV, "machine": "gpu-box", "cpu": "xeon", "device": "GPU", "gpu": "A100"}}
        self.tasks = []

    def environment(self, node, requested, store=None):
        return dict(self.envs[node.id])

    def submit(self, node, task, *, timeout_s, mem_limit_mb):
        self.tasks.append((node.name, task["variant"], task["params"]["units"], task["device"]))
        ms = 2.0 if node.id == "a" else 0.2
        if task["variant"] == "b" and node.id == "b":
            return _Ref(RuntimeError("The actor died unexpectedly"))  # the Ray task itself dies
        return _Ref(({"type": "result", "metrics": {"fwd_ms": ms}, "details": {}}, None, (0.1, 0.2)))


def test_points_are_dealt_to_the_nodes_and_each_keeps_its_own_machine(fakes, tmp_path):
    from rnnlab.engine import cluster

    c = _TwoNodes()
    p = api.plan("fake_r", overrides={"units": [4, 8], "rounds": 2}, variants=["a", "b"])
    recs = cluster.run(p, c, store=Store(tmp_path / "s.sqlite"))
    # point 1 on the CPU box, point 2 on the GPU box; every round of a point (and its reference) on its node
    assert {(n, u) for n, _, u, _ in c.tasks} == {("cpu-box", 4), ("gpu-box", 8)}
    assert len(c.tasks) == 2 * 3 * 2  # 2 points x (a, b + the reference) x 2 rounds
    by = {(r.params["units"], r.variant): r for r in recs}
    assert by[4, "a"].env["machine"] == "cpu-box" and by[8, "a"].env["machine"] == "gpu-box"
    assert by[8, "a"].params["device"] == "gpu" and by[8, "a"].metrics["fwd_ms"] == 0.2
    from rnnlab.core import envinfo
    from rnnlab.core.record import make_key

    for (units, v), r in by.items():  # each record keyed by its own node's machine fingerprint
        node = "a" if units == 4 else "b"
        assert r.key == make_key(api.spec_of("fake_r", FAKE_R.version, v, r.params), envinfo.fingerprint(c.envs[node]))
    # a dead Ray task: a transient error record for that variant on that node; the rest stands
    assert by[8, "b"].error.startswith("the Ray task on gpu-box failed: The actor died") and by[8, "b"].details["transient"]
    assert by[4, "b"].ok
