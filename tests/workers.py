"""Worker functions for harness tests: they run inside the real spawned worker process."""

import os
import sys
import time

import numpy as np

from rnnlab.worker.main import UNUSED


def run_variant(params, variant, ctx):
    ctx.phase("build")
    if variant == "crash":
        os.kill(os.getpid(), 11)  # a segfault, as a broken native kernel would
    if variant == "exit":
        os._exit(3)
    if variant == "sleep":
        time.sleep(60)
    if variant == "raise":
        raise ValueError("shapes (3, 4) and (5, 6) are incompatible")
    if variant == "unsupported":
        from rnnlab.core.errors import VariantUnsupported

        raise VariantUnsupported("bfloat16 is not supported by this variant on CPU")
    if variant == "whoami":  # which process ran it, and its file-backed memory when it started (the zygote's tests)
        status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line)
        return {"metrics": {"fwd_ms": 1.0},
                "details": {"pid": os.getpid(), "ppid": os.getppid(), "rss_file_kb": int(status["RssFile"].split()[0]),
                            "frozen": __import__("gc").get_freeze_count(),
                            "left_out": sorted(m for m in UNUSED if m in sys.modules and sys.modules[m] is None)}}
    if variant == "hog":
        blocks = [np.ones(50 * 2**20 // 8) for _ in range(40)]  # ~2 GB, touched
        time.sleep(30)
        return {"metrics": {"n": len(blocks)}}
    ctx.phase("forward")
    x = np.arange(6, dtype=np.float32).reshape(2, 3) * (1.0 + params["units"] * 1e-6)
    if variant == "ok_off":
        x = x + 0.5
    return {"metrics": {"fwd_ms": 2.0, "fwd_ms_p25": 1.5, "fwd_ms_p75": 2.5},
            "details": {"fwd_flops": 4e6, "kernel": "test"},
            "outputs": {"outputs": x}}


# -- a fake launcher: scripted workers in this process, no process and no TensorFlow -----------------------------------
class ScriptedWorker:
    """A worker that sends ``messages`` and then exits with ``code`` (negative: killed by that signal)."""

    def __init__(self, messages, code=0):
        self.messages, self.code, self.killed = list(messages), code, False

    def read(self, timeout):
        return self.messages.pop(0) if self.messages else None

    def poll(self):
        if self.killed:
            return -9
        return None if self.messages else self.code

    def kill(self):
        self.killed = True

    def rss_mb(self):
        return 10.0

    def stderr_tail(self):
        return ""


class FakeLauncher:
    """``api.run(..., launcher=FakeLauncher(metrics))``: every task a scripted worker, launched in order.

    ``metrics(task, n)`` (n: 0-based launch number) gives the result's metrics, or a string for a failure:
    ``"crash"`` (killed by signal 9: transient) or any other text (a deterministic error with that reason).
    Successful workers write the same outputs as ``run_variant`` above when asked for them.
    """

    def __init__(self, metrics=None, readings=None):
        self.metrics = metrics or (lambda task, n: {"fwd_ms": 2.0, "fwd_ms_p25": 1.5, "fwd_ms_p75": 2.5})
        self.readings = readings  # what a real worker's meter reads (``details.readings``), when given
        self.tasks = []

    @property
    def order(self):
        return [t["variant"] for t in self.tasks]

    def __call__(self, task):
        n = len(self.tasks)
        self.tasks.append(task)
        got = self.metrics(task, n)
        phases = [{"type": "phase", "phase": p} for p in ("starting", "importing TensorFlow", "build")]
        if got == "crash":
            return ScriptedWorker(phases, code=-9)
        if isinstance(got, str):
            return ScriptedWorker(phases + [{"type": "error", "reason": got}])
        path = task.get("outputs_path")
        if path:
            x = np.arange(6, dtype=np.float32).reshape(2, 3) + (0.5 if task["variant"] == "ok_off" else 0.0)
            np.savez(path, outputs=x)
        details = {"fwd_flops": 4e6, "kernel": "test", "worker_wall_s": 1.0}
        if self.readings is not None:
            details["readings"] = list(self.readings)
        return ScriptedWorker(phases + [{"type": "result", "metrics": dict(got), "details": details,
                                         "outputs_path": path}])


def run_series(params, variant, ctx):
    """A worker function timing three series through ``ctx.series`` (as ``tf.measure.time_runner`` does), no
    TensorFlow: each step sleeps ``params["units"]`` microseconds, twice as long for variant ``slow``."""
    us = params["units"] * (2.0 if variant == "slow" else 1.0)
    out = {}
    for metric in ("build_s", "fwd_ms", "train_ms"):
        ctx.phase(metric)
        samples = ctx.series(metric, lambda: time.sleep(us * 1e-6), repeats=3, warmup=1)
        out[metric] = float(np.median(samples)) * (1000.0 if metric.endswith("_ms") else 1.0)
    return {"metrics": out, "details": {"kernel": "test"},
            "outputs": {"outputs": np.arange(6, dtype=np.float32).reshape(2, 3)}}


class ServingWorker:
    """A scripted interleaved worker (``engine.interleave``): ready at the start gate, then at each of ``ops``; a
    window's value is ``value(op, n)`` (n: the window's index); after the last op, its result. ``fail_at``: the op
    whose first window ends it with an error instead."""

    def __init__(self, task, value, ops=("build_s", "fwd_ms", "train_ms"), fail_at=None, load=None):
        self.task, self.value, self.ops, self.fail_at, self.load = task, value, list(ops), fail_at, load
        self.q = [{"type": "phase", "phase": "starting"}, {"type": "ready", "op": "start"}]
        self.i, self.n, self.code, self.sent = -1, 0, None, []

    def read(self, timeout):
        return self.q.pop(0) if self.q else None

    def send(self, msg):
        self.sent.append(msg)
        if msg["cmd"] == "next":
            self.i += 1
            if self.i < len(self.ops):
                self.q.append({"type": "ready", "op": self.ops[self.i]})
            else:
                path = self.task.get("outputs_path")
                if path:
                    np.savez(path, outputs=np.arange(6, dtype=np.float32).reshape(2, 3))
                self.q.append({"type": "result", "metrics": {"fwd_ms": 1.0}, "details": {"kernel": "test"},
                               "outputs_path": path})
                self.code = 0
        else:
            op = self.ops[self.i]
            if op == self.fail_at:
                self.q.append({"type": "error", "reason": f"failed at {op}"})
                self.code = 0
                return
            msg = {"type": "window", "op": op, "value": self.value(self.task, op, self.n)}
            if self.load is not None:  # the window's reading of other processes' cores, and its own (one thread)
                msg.update(other=self.load(self.task, op, self.n), own=1.0)
            self.q.append(msg)
            self.n += 1

    def poll(self):
        return self.code if not self.q else None

    def kill(self):
        self.code = -9
        self.q = []

    def rss_mb(self):
        return 10.0

    def stderr_tail(self):
        return ""


class ServingLauncher:
    """``launcher=ServingLauncher(value)``: every task a ``ServingWorker``; ``fail`` maps a variant to the op it
    fails at; ``load(task, op, n)``: each window's reading of other processes' cores (none: not read)."""

    def __init__(self, value, fail=None, load=None):
        self.value, self.fail, self.workers, self.load = value, fail or {}, [], load

    def __call__(self, task):
        w = ServingWorker(task, self.value, fail_at=self.fail.get(task["variant"]), load=self.load)
        self.workers.append(w)
        return w
