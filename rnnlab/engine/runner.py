"""The manager side: one spawned worker per variant, progress, limits, and records.

The manager never shares live state with a worker: a task goes in as JSON, messages come back as JSON lines
(pyperf's design). A worker that crashes, runs out of memory or passes its time limit becomes an error record with a
one-line reason and the run goes on. The launcher and the clock are injected so tests can run the manager without
TensorFlow or real time.
"""

from __future__ import annotations

import io
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence

from rnnlab.core.errors import RnnlabError

_ROOT = Path(__file__).resolve().parents[2]


# How far into one task each phase counts, so a progress bar moves while a worker starts and imports TensorFlow
# (several seconds before the experiment's first phase). A phase not listed is the experiment's own work (build,
# forward, train...): halfway.
PHASE_SHARE = {"queued": 0.0, "starting": 0.05, "importing TensorFlow": 0.15}
DONE_PHASES = ("done", "failed", "cached")


@dataclass(frozen=True, slots=True)
class Progress:
    """Where a run is: which variant of which point in which round, which phase, how long it has been going.

    ``index`` and ``total`` count tasks: one task is one (point, variant, round), one worker process. A phase that
    starts with ``"warning: "`` (``variant`` empty) is a warning about the whole run, e.g. a busy machine; other
    run-wide phases (the environment probe) also come with an empty ``variant``.
    """

    experiment: str
    variant: str
    phase: str  # "queued", "starting", "importing TensorFlow", "build", ..., "done", "failed", "cached"
    index: int  # 0-based position of this task in the run
    total: int
    elapsed_s: float  # since the run started
    point: int = 0
    n_points: int = 1
    round: int = 0  # 0-based
    n_rounds: int = 1
    where: str = ""  # the cluster node the task runs on ("": this machine)

    @property
    def warning(self) -> bool:
        return self.phase.startswith("warning: ")

    @property
    def fraction(self) -> float:
        if self.phase in DONE_PHASES:
            share = 1.0
        elif not self.variant or self.warning:
            share = 0.0
        else:
            share = PHASE_SHARE.get(self.phase, 0.5)
        return min(1.0, (self.index + share) / max(1, self.total))


class Cancelled(RnnlabError):
    """The caller cancelled the run; what finished before is stored."""


class Worker(Protocol):
    def read(self, timeout: float) -> dict | None: ...  # next message, or None if none came in time
    def poll(self) -> int | None: ...
    def kill(self) -> None: ...
    def rss_mb(self) -> float | None: ...
    def stderr_tail(self) -> str: ...


class SubprocessWorker:
    """``python -m rnnlab.worker`` in a fresh interpreter (spawned, never forked: TensorFlow and fork do
    not mix), in its own process group so a kill takes its children too."""

    def __init__(self, task: dict):
        self._err = tempfile.TemporaryFile()
        env = dict(os.environ)
        env["PYTHONPATH"] = str(_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen([sys.executable, "-m", "rnnlab.worker"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._err, env=env, cwd=str(_ROOT),
                                     start_new_session=True)
        try:
            self._q: queue.Queue = queue.Queue()
            threading.Thread(target=self._pump, daemon=True).start()
            self.proc.stdin.write(json.dumps(task).encode() + b"\n")
            if task.get("serve"):  # an interleaved point: commands follow on the same pipe (``send``)
                self.proc.stdin.flush()
            else:
                self.proc.stdin.close()
        except BaseException:  # interrupted while starting: no orphan either
            self.kill()
            raise

    def _pump(self) -> None:
        pump(self.proc.stdout, self._q)

    def read(self, timeout: float) -> dict | None:
        try:
            msg = self._q.get(timeout=timeout)
        except queue.Empty:
            return None
        return msg if msg is not None else None

    def poll(self) -> int | None:
        return self.proc.poll()

    def send(self, msg: dict) -> None:
        """A command to a serving worker (one JSON line); a worker already gone is left to ``poll`` to tell."""
        try:
            self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()

    def rss_mb(self) -> float | None:
        return tree_rss_mb(self.proc.pid)

    def stderr_tail(self) -> str:
        self._err.seek(0)
        return last_line(self._err.read().decode("utf-8", "replace"))


def pump(stream, q: queue.Queue) -> None:
    """A worker's messages, one JSON object a line of its binary ``stream``, into ``q``; None once it ends."""
    for line in io.TextIOWrapper(stream, encoding="utf-8", errors="replace"):
        line = line.strip()
        if line:
            try:
                q.put(json.loads(line))
            except json.JSONDecodeError:
                pass  # the message channel is ours alone; a stray line is ignored
    q.put(None)


def last_line(text: str) -> str:
    """The most telling line of a crash's stderr: the last one that is not a log prefix, cut to 300 characters."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if not ln.startswith(("W0000", "I0000", "E0000", "WARNING", "  ")):
            return " ".join(ln.split())[:300]
    return " ".join(lines[-1].split())[:300] if lines else ""


def launch_subprocess(task: dict) -> Worker:
    return SubprocessWorker(task)


def run_task(task: dict, *, launcher: Callable[[dict], Worker] = launch_subprocess, timeout_s: float,
             mem_limit_mb: float | None, on_phase: Callable[[str], None] = lambda p: None,
             cancel: threading.Event | None = None, clock: Callable[[], float] = time.monotonic,
             poll_s: float = 0.2) -> dict:
    """Run one task in a worker; return its result message, or ``{"type": "error", "reason": ...}``."""
    worker = launcher(task)
    try:
        return _watch(worker, timeout_s=timeout_s, mem_limit_mb=mem_limit_mb, on_phase=on_phase, cancel=cancel,
                      clock=clock, poll_s=poll_s)
    except BaseException:  # Ctrl-C, SIGTERM (the CLI raises on it), a bug: the worker never outlives its manager
        worker.kill()
        raise


def _watch(worker: Worker, *, timeout_s: float, mem_limit_mb: float | None, on_phase: Callable[[str], None],
           cancel: threading.Event | None, clock: Callable[[], float], poll_s: float) -> dict:
    t0 = clock()
    result: dict | None = None
    while True:
        msg = worker.read(poll_s)
        if msg is not None:
            if msg.get("type") == "phase":
                on_phase(msg["phase"])
            elif msg.get("type") in ("result", "error"):
                result = msg
        if cancel is not None and cancel.is_set():
            worker.kill()
            raise Cancelled("run cancelled")
        if result is not None:
            reap(worker)
            return result
        code = worker.poll()
        if code is not None and msg is None:
            # drain what the pump may still hold
            tail = worker.read(0.5)
            if tail is not None and tail.get("type") in ("result", "error"):
                return tail
            if tail is not None:
                continue
            return exit_error(code, worker.stderr_tail())
        if clock() - t0 > timeout_s:
            worker.kill()
            return {"type": "error", "transient": True, "reason": f"timed out after {timeout_s:g} s (timeout_s)"}
        if mem_limit_mb is not None:
            rss = worker.rss_mb()
            if rss is not None and rss > mem_limit_mb:
                worker.kill()
                return {"type": "error", "transient": True, "reason": f"out of memory: worker used {rss:.0f} MB, over the limit of"
                                                   f" {mem_limit_mb:.0f} MB"}


def exit_error(code: int, reason: str) -> dict:
    """The error message of a worker that ended without a result: a signal (9: likely out of memory) or an exit."""
    if code < 0:
        sig = -code
        why = "killed by signal 9 (likely out of memory)" if sig == 9 else f"killed by signal {sig}"
        return {"type": "error", "transient": True, "reason": f"worker crashed: {why}" + (f"; {reason}" if reason else "")}
    return {"type": "error", "transient": True,
            "reason": f"worker exited with code {code}" + (f": {reason}" if reason else "")}


def reap(worker: Worker, grace_s: float = 10.0) -> None:
    """Give a worker that has sent its result a moment to exit by itself (real time: a real process)."""
    t0 = time.monotonic()
    while worker.poll() is None:
        if time.monotonic() - t0 > grace_s:
            worker.kill()
            return
        time.sleep(0.05)


def tree_rss_mb(pid: int) -> float | None:
    """The resident memory of a process and all its children, MB (None when it is gone)."""
    try:
        import psutil

        p = psutil.Process(pid)
        return sum(c.memory_info().rss for c in [p, *p.children(recursive=True)]) / 2**20
    except Exception:  # the process may be gone between the two calls
        return None


def run_limited(argv: Sequence[str], *, cwd: str, env: Mapping[str, str], timeout_s: float,
                mem_limit_mb: float | None = None, what: str = "the command", poll_s: float = 0.2
                ) -> tuple[int, str, str]:
    """Run ``argv`` in its own process group; (returncode, stdout, stderr). Killed (group and all) with an
    ``RnnlabError`` past ``timeout_s`` or when its RSS, children included, passes ``mem_limit_mb`` (polled as the
    run's workers are: :func:`tree_rss_mb`). For heavy one-off commands outside a run (a checkpoint conversion)."""
    import signal

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), stdout=out, stderr=err, start_new_session=True)
        why = None
        deadline = time.monotonic() + timeout_s
        try:
            while proc.poll() is None:
                if time.monotonic() > deadline:
                    why = f"{what} did not finish within {timeout_s:g} s"
                    break
                if mem_limit_mb is not None:
                    rss = tree_rss_mb(proc.pid)
                    if rss is not None and rss > mem_limit_mb:
                        why = f"{what} used {rss:.0f} MB, over the limit of {mem_limit_mb:.0f} MB here"
                        break
                time.sleep(poll_s)
        finally:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                proc.wait()
        if why:
            raise RnnlabError(why)
        out.seek(0)
        err.seek(0)
        return (proc.returncode, out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"))
