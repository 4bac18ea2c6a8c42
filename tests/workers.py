"""Worker functions for harness tests: they run inside the real spawned worker process."""

import os
import time

import numpy as np


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

    def __init__(self, metrics=None):
        self.metrics = metrics or (lambda task, n: {"fwd_ms": 2.0, "fwd_ms_p25": 1.5, "fwd_ms_p75": 2.5})
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
        return ScriptedWorker(phases + [{"type": "result", "metrics": dict(got),
                                         "details": {"fwd_flops": 4e6, "kernel": "test", "worker_wall_s": 1.0},
                                         "outputs_path": path}])
