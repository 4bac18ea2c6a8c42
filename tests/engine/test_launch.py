"""Starting workers: forks of a round's zygote (Linux, CPU) say what spawned workers say, under the same limits."""

import os
import sys

import pytest

from rnnlab.engine import launch
from rnnlab.engine.runner import launch_subprocess, run_task
from rnnlab.worker import main as worker_main

linux = pytest.mark.skipif(not launch.can_fork(), reason="the zygote is Linux's")


def task(variant: str, preload=(), **params) -> dict:
    return {"kind": "variant", "worker": "tests.workers:run_variant", "variant": variant,
            "params": {"units": 4, **params}, "device": "CPU", "preload": list(preload)}


def test_which_tasks_fork_and_what_their_zygote_imports():
    spec = launch.zygote_spec(task("ok", ["tensorflow", "keras"], threads=1))
    if launch.can_fork():
        assert spec == {"device": "CPU", "threads": 1, "preload": ["tensorflow", "keras"]}
        assert launch.zygote_spec(task("ok"))["preload"] == []  # an experiment that preloads nothing imports nothing
        assert launch.zygote_spec({"kind": "probe", "device": "CPU"})["preload"] == list(launch.DEFAULT_PRELOAD)
    assert launch.zygote_spec({**task("ok"), "device": "GPU"}) is None  # CUDA in a fork: spawned instead


def test_a_gpu_task_gets_a_spawned_worker(monkeypatch):
    made = []
    monkeypatch.setattr(launch._runner, "SubprocessWorker", lambda t: made.append(t) or "spawned")
    with launch.ForkLauncher() as start:
        assert start({**task("ok"), "device": "GPU"}) == "spawned"
    assert made and made[0]["device"] == "GPU"


def test_a_gpu_round_imports_nothing_ahead(monkeypatch):
    monkeypatch.setattr(launch, "Zygote", lambda spec: pytest.fail("a zygote for a spawned task"))
    with launch.ForkLauncher() as start:
        start.ahead([{**task("ok"), "device": "GPU"}], 2)  # each GPU worker is spawned with its own import
        start.settle()
        assert start._spares == {} and start._zygotes == {}
        assert not start.imported([{**task("ok"), "device": "GPU"}])  # a spawned worker imports in its own process
    launch.ahead(object(), [task("ok")], 1)  # a launcher without rounds (the tests' fakes) is left alone
    launch.settle(object())
    assert not launch.imported(object(), [task("ok")])


@linux
@pytest.mark.slow  # starts Python processes
def test_a_forked_worker_answers_as_a_spawned_one():
    with launch.ForkLauncher() as start:
        forked = run_task(task("ok"), launcher=start, timeout_s=60, mem_limit_mb=None)
        crash = run_task(task("crash"), launcher=start, timeout_s=60, mem_limit_mb=None)
        code = run_task(task("exit"), launcher=start, timeout_s=60, mem_limit_mb=None)
        slow = run_task(task("sleep"), launcher=start, timeout_s=2, mem_limit_mb=None)
        failed = run_task(task("raise"), launcher=start, timeout_s=60, mem_limit_mb=None)
    spawned = run_task(task("ok"), launcher=launch_subprocess, timeout_s=60, mem_limit_mb=None)
    assert forked["type"] == spawned["type"] == "result"
    assert forked["metrics"].keys() == spawned["metrics"].keys()
    assert forked["details"]["kernel"] == spawned["details"]["kernel"] == "test"
    assert crash["reason"].startswith("worker crashed: killed by signal 11")
    assert code["reason"].startswith("worker exited with code 3")
    assert slow["reason"] == "timed out after 2 s (timeout_s)"
    assert failed["reason"] == "ValueError: shapes (3, 4) and (5, 6) are incompatible"


@linux
@pytest.mark.slow  # starts Python processes
def test_each_round_forks_from_a_new_zygote_and_a_child_maps_its_memory_again():
    with launch.ForkLauncher() as start:
        a = run_task(task("whoami", ["numpy"]), launcher=start, timeout_s=60, mem_limit_mb=None)
        b = run_task(task("whoami", ["numpy"]), launcher=start, timeout_s=60, mem_limit_mb=None)
        (zygote,) = start._zygotes.values()
        status = open(f"/proc/{zygote.proc.pid}/status").read()
        zygote_file_kb = int(status.split("RssFile:")[1].split()[0])
        start.new_round()
        c = run_task(task("whoami", ["numpy"]), launcher=start, timeout_s=60, mem_limit_mb=None)
    da, db, dc = (m["details"] for m in (a, b, c))
    assert da["ppid"] == db["ppid"] == zygote.proc.pid != os.getpid()  # one zygote for one round's workers
    assert da["pid"] != db["pid"]
    assert dc["ppid"] != da["ppid"]  # the next round's from a new import
    # a fork maps the zygote's library pages only as it touches them; each child maps them again before its baseline
    assert da["rss_file_kb"] >= 0.9 * zygote_file_kb
    # the import's objects are out of every collection's reach (``worker.main.freeze_imports``), forked or spawned
    spawned = run_task(task("whoami", ["numpy"]), launcher=launch_subprocess, timeout_s=60, mem_limit_mb=None)
    assert min(da["frozen"], dc["frozen"], spawned["details"]["frozen"]) > 10_000
    # what Keras would import and a worker never uses is left out, forked or spawned, unless the task preloads it
    assert da["left_out"] == spawned["details"]["left_out"] == sorted(worker_main.UNUSED)
    own = run_task(task("whoami", ["numpy", "pandas"]), launcher=launch_subprocess, timeout_s=60, mem_limit_mb=None)
    assert own["details"]["left_out"] == sorted(set(worker_main.UNUSED) - {"pandas"})


@linux
@pytest.mark.slow  # starts Python processes
def test_the_next_rounds_zygote_imports_ahead_and_serves_that_round():
    with launch.ForkLauncher() as start:
        assert not launch.imported(start, [task("whoami", ["numpy"])])  # nothing started yet
        a = run_task(task("whoami", ["numpy"]), launcher=start, timeout_s=60, mem_limit_mb=None)
        start.ahead([task("whoami", ["numpy"]), task("ok", ["numpy"])], 1)  # one kind of task: one zygote ahead
        (spare,) = start._spares[launch._key(launch.zygote_spec(task("ok", ["numpy"])))]
        start.settle()
        assert spare.ready.is_set()  # imported before anything else runs
        b = run_task(task("whoami", ["numpy"]), launcher=start, timeout_s=60, mem_limit_mb=None)
        start.new_round()
        assert launch.imported(start, [task("whoami", ["numpy"])])  # the round starts from the spare: in forks
        assert not launch.imported(start, [task("whoami", ["numpy"]), task("ok")])  # one kind still to import
        c = run_task(task("whoami", ["numpy"]), launcher=start, timeout_s=60, mem_limit_mb=None)
        start.new_round()
        assert not launch.imported(start, [task("whoami", ["numpy"])])  # none ahead: an import of its own
        d = run_task(task("whoami", ["numpy"]), launcher=start, timeout_s=60, mem_limit_mb=None)
    pa, pb, pc, pd = (m["details"]["ppid"] for m in (a, b, c, d))
    assert pa == pb != pc  # the round goes on from its own zygote; the next from the one started ahead
    assert pc == spare.proc.pid and pd not in (pa, pc)  # then from a new import once none is ahead
    assert spare.gone.wait(5)  # closed with the launcher


@linux
@pytest.mark.slow  # starts Python processes
def test_a_zygote_whose_import_fails_says_why_to_every_worker():
    with launch.ForkLauncher() as start:
        msgs = [run_task(task("ok", ["no_such_module_rnnlab"]), launcher=start, timeout_s=60, mem_limit_mb=None)
                for _ in range(2)]
    for msg in msgs:
        assert msg["type"] == "error" and "no_such_module_rnnlab" in msg["reason"], msg


@linux
@pytest.mark.slow  # starts Python processes
def test_a_child_ends_when_its_zygote_is_gone():
    start = launch.ForkLauncher()
    w = start(task("sleep"))
    while w.pid is None:
        w.read(0.1)
    start.close()
    for _ in range(50):
        try:
            os.kill(w.pid, 0)
        except ProcessLookupError:
            break
        w.read(0.1)
    else:
        pytest.fail("the worker outlived its zygote")
    assert sys.platform.startswith("linux")


@linux
@pytest.mark.slow  # starts Python processes
def test_a_forked_worker_says_nothing_of_an_import_it_does_not_do():
    forked, spawned = [], []
    with launch.ForkLauncher() as start:
        run_task(task("ok", ["numpy"]), launcher=start, timeout_s=60, mem_limit_mb=None)  # its zygote now imported
        run_task(task("ok", ["numpy"]), launcher=start, timeout_s=60, mem_limit_mb=None, on_phase=forked.append)
    run_task(task("ok", ["numpy"]), launcher=launch_subprocess, timeout_s=60, mem_limit_mb=None,
             on_phase=spawned.append)
    assert "importing" in spawned and "importing" not in forked and forked  # it reports its other phases
