"""Starting workers: a fork of a round's zygote where it can be (Linux, CPU), else a spawned interpreter.

``ForkLauncher`` is the run's launcher (``engine.api.run`` makes one per run): called with a task, it returns a
``Worker`` (``engine.runner``'s protocol). Tasks that share a device, a thread count and the modules they preload
share a zygote (``worker.zygote``), which imports TensorFlow once and forks each worker with a fresh runtime;
``new_round()`` retires every zygote that has forked a variant, so each round of a point starts from a newly
imported interpreter. ``ahead()`` starts later rounds' zygotes beside this round's, all importing while nothing is
timed (an import keeps one core busy: two go side by side on two cores), and ``settle()`` waits until they have: such
a round then starts in a fork's time, not an import's (``imported()`` says so; a first run's rounds import beside the
machine probe's own, ``engine.running``). A GPU task, or a platform without ``fork`` and descriptor
passing, gets a spawned worker (``runner.SubprocessWorker``), as every task did before: CUDA in a forked process is
not checked here.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time

from rnnlab.engine import runner as _runner

DEFAULT_PRELOAD = ("tensorflow", "keras")
_ids = itertools.count(1)


def can_fork() -> bool:
    """Whether this platform can run a zygote: Linux (``/proc``'s page map, SEQPACKET sockets, ``fork``)."""
    return sys.platform.startswith("linux") and hasattr(socket, "send_fds") and hasattr(os, "fork")


def zygote_spec(task: dict) -> dict | None:
    """What a task's zygote must have set up before its import (device, threads, modules), or None when the task
    is spawned instead (a GPU, or no fork here)."""
    device = str(task.get("device", "CPU"))
    if device != "CPU" or not can_fork():
        return None
    threads = int((task.get("params") or {}).get("threads") or 0)
    preload = task.get("preload")
    preload = DEFAULT_PRELOAD if preload is None or task.get("kind") == "probe" else tuple(preload)
    return {"device": device, "threads": threads, "preload": list(preload)}


def _key(spec: dict) -> str:
    """Which zygote a spec's tasks share."""
    return json.dumps(spec, sort_keys=True)


class Zygote:
    """The manager's side of one zygote process: fork requests out, ``forked`` / ``exit`` replies in."""

    def __init__(self, spec: dict):
        self.spec = spec
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._err = tempfile.TemporaryFile()
        env = dict(os.environ)
        env["PYTHONPATH"] = str(_runner._ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "rnnlab.worker.zygote", json.dumps(spec), str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=self._err, stderr=self._err, env=env,
                cwd=str(_runner._ROOT), start_new_session=True)
        finally:
            theirs.close()
        self.ready = threading.Event()
        self.gone = threading.Event()
        self.failure = ""
        self.used = False  # it has forked a variant: a new round wants a new zygote
        self._lock = threading.Lock()
        self._pids: dict[int, int] = {}  # request id -> pid
        self._codes: dict[int, int] = {}  # pid -> exit code
        self._changed = threading.Condition(self._lock)
        threading.Thread(target=self._listen, daemon=True).start()

    def _listen(self) -> None:
        while True:
            try:
                raw = self.sock.recv(65536)
            except OSError:
                raw = b""
            if not raw:
                break
            msg = json.loads(raw)
            with self._changed:
                if msg["type"] == "ready":
                    self.ready.set()
                elif msg["type"] == "forked":
                    self._pids[int(msg["id"])] = int(msg["pid"])
                elif msg["type"] == "exit":
                    self._codes[int(msg["pid"])] = int(msg["code"])
                elif msg["type"] == "failed":
                    self.failure = str(msg.get("reason") or "")
                self._changed.notify_all()
        with self._changed:
            self.gone.set()
            self._changed.notify_all()

    def fork(self, task: dict) -> "ForkedWorker":
        if task.get("kind") == "variant":
            self.used = True
        return ForkedWorker(self, task)

    def request(self, fds: list[int]) -> int:
        rid = next(_ids)
        try:
            socket.send_fds(self.sock, [json.dumps({"id": rid}).encode()], fds)
        except OSError:
            pass  # the zygote is gone: the worker reads end of file and says so
        return rid

    def pid_of(self, rid: int) -> int | None:
        with self._lock:
            return self._pids.get(rid)

    def code_of(self, pid: int) -> int | None:
        with self._lock:
            return self._codes.get(pid)

    def wait_exit(self, pid: int, timeout: float) -> None:
        end = time.monotonic() + timeout
        with self._changed:
            while pid not in self._codes and not self.gone.is_set() and time.monotonic() < end:
                self._changed.wait(max(0.0, end - time.monotonic()))

    def stderr_tail(self) -> str:
        self._err.seek(0)
        return _runner.last_line(self._err.read().decode("utf-8", "replace"))

    def close(self) -> None:
        """End the zygote at once: it holds nothing to save, and an interpreter with TensorFlow loaded takes a second
        to end by itself. A child still running ends when it sees its zygote gone (``worker._end_with_parent``)."""
        try:
            os.killpg(self.proc.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        self.sock.close()


class ForkedWorker:
    """A worker forked by a zygote: the same messages on the same kind of pipes as a spawned one
    (``runner.SubprocessWorker``)."""

    def __init__(self, zygote: Zygote, task: dict):
        self.zygote = zygote
        self._err = tempfile.TemporaryFile()
        self._q: queue.Queue = queue.Queue()
        self._killed = False
        if not zygote.ready.is_set():
            self._q.put({"type": "phase", "phase": "importing TensorFlow"})
        in_r, self._in = os.pipe()
        self._out, out_w = os.pipe()
        try:
            self.rid = zygote.request([in_r, out_w, self._err.fileno()])
        finally:
            os.close(in_r)
            os.close(out_w)
        self._stdin = os.fdopen(self._in, "wb")
        threading.Thread(target=self._pump, daemon=True).start()
        self._stdin.write(json.dumps(task).encode() + b"\n")
        self._stdin.flush()
        if not task.get("serve"):
            self._stdin.close()

    @property
    def pid(self) -> int | None:
        return self.zygote.pid_of(self.rid)

    def _pump(self) -> None:
        with os.fdopen(self._out, "rb") as f:
            _runner.pump(f, self._q)

    def read(self, timeout: float) -> dict | None:
        try:
            return self._q.get(timeout=timeout)
        except queue.Empty:
            return None

    def poll(self) -> int | None:
        pid = self.pid
        if pid is not None:
            code = self.zygote.code_of(pid)
            if code is not None:
                return code
            if not self.zygote.gone.is_set():
                return None
            try:  # the zygote ended first: the child ends when it sees that (``worker._end_with_parent``)
                os.kill(pid, 0)
                return None
            except ProcessLookupError:
                return -9 if self._killed else 1
        return (self.zygote.proc.poll() or 1) if self.zygote.gone.is_set() else None

    def send(self, msg: dict) -> None:
        try:
            self._stdin.write(json.dumps(msg).encode() + b"\n")
            self._stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass

    def kill(self) -> None:
        self._killed = True
        end = time.monotonic() + 5
        while self.pid is None and not self.zygote.gone.is_set() and time.monotonic() < end:
            time.sleep(0.01)  # asked before the fork came back: wait for its pid
        pid = self.pid
        if pid is not None:
            try:
                os.killpg(pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
            self.zygote.wait_exit(pid, 2.0)
        try:
            self._stdin.close()
        except OSError:
            pass

    def rss_mb(self) -> float | None:
        pid = self.pid
        return _runner.tree_rss_mb(pid) if pid is not None else None

    def stderr_tail(self) -> str:
        self._err.seek(0)
        own = _runner.last_line(self._err.read().decode("utf-8", "replace"))
        return own or (self.zygote.failure or self.zygote.stderr_tail() if self.zygote.gone.is_set() else "")


class ForkLauncher:
    """The run's launcher: tasks go to the zygote of their kind (``zygote_spec``), one started when first needed,
    or the one ``ahead()`` started for this round; ``new_round()`` retires the zygotes a round used; ``close()`` ends
    every one."""

    def __init__(self):
        self._zygotes: dict[str, Zygote] = {}
        self._spares: dict[str, list[Zygote]] = {}  # started ahead, each for a round to come (never forked yet)
        self._lock = threading.Lock()

    def _current(self, spec: dict) -> Zygote:
        """The zygote this round forks ``spec``'s workers from: the one in use, else the next spare, else a new one."""
        key = _key(spec)
        with self._lock:
            z = self._zygotes.get(key)
            if z is None or z.gone.is_set():
                spares = [s for s in self._spares.pop(key, []) if not s.gone.is_set()]
                z = self._zygotes[key] = spares.pop(0) if spares else Zygote(spec)
                if spares:
                    self._spares[key] = spares
            return z

    def __call__(self, task: dict) -> _runner.Worker:
        spec = zygote_spec(task)
        if spec is None:
            return _runner.SubprocessWorker(task)
        return self._current(spec).fork(task)

    def ahead(self, tasks, n: int) -> None:
        """Start ``n`` zygotes for the rounds after this one, for each kind of task in ``tasks``, now: they import
        beside this round's own zygote, which is started first where it is not yet running."""
        for key, spec in {_key(s): s for s in map(zygote_spec, tasks) if s is not None}.items():
            self._current(spec)
            with self._lock:
                spares = self._spares.setdefault(key, [])
                spares += [Zygote(spec) for _ in range(max(0, n - len(spares)))]

    def imported(self, tasks) -> bool:
        """Whether every one of ``tasks`` would fork now from a zygote whose import is done: the one in use, or the
        next started ahead (False for a task that is spawned: it imports in its own process)."""
        specs = [zygote_spec(t) for t in tasks]
        if not specs or any(s is None for s in specs):
            return False
        with self._lock:
            for key in {_key(s) for s in specs}:
                z = self._zygotes.get(key)
                if z is None or z.gone.is_set():
                    z = next((s for s in self._spares.get(key, []) if not s.gone.is_set()), None)
                if z is None or not z.ready.is_set():
                    return False
        return True

    def settle(self, timeout: float = 600.0) -> None:
        """Wait until no zygote started ahead is still importing (each is ready, or gone: its round says why), so
        nothing a worker times runs beside an import."""
        end = time.monotonic() + timeout
        with self._lock:
            spares = [z for zs in self._spares.values() for z in zs]
        for z in spares:
            while not (z.ready.is_set() or z.gone.is_set()) and time.monotonic() < end:
                z.ready.wait(0.05)

    def new_round(self) -> None:
        """Every zygote that forked a variant is retired: the next round's workers come from a new import (the next
        one started ahead, where there is one)."""
        with self._lock:
            old = [k for k, z in self._zygotes.items() if z.used]
            retired = [self._zygotes.pop(k) for k in old]
        for z in retired:
            z.close()

    def close(self) -> None:
        with self._lock:
            retired = list(self._zygotes.values()) + [z for zs in self._spares.values() for z in zs]
            self._zygotes.clear()
            self._spares.clear()
        for z in retired:
            z.close()

    def __enter__(self) -> "ForkLauncher":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def new_round(launcher) -> None:
    """Tell ``launcher`` a new round starts (a launcher without rounds, as the tests' fakes, is left alone)."""
    fn = getattr(launcher, "new_round", None)
    if fn is not None:
        fn()


def ahead(launcher, tasks, n: int) -> None:
    """Have ``launcher`` start the imports of ``n`` rounds to come of ``tasks`` now (``ForkLauncher.ahead``)."""
    fn = getattr(launcher, "ahead", None)
    if fn is not None and n > 0:
        fn(list(tasks), n)


def imported(launcher, tasks) -> bool:
    """Whether ``tasks`` would start in a fork's time now, their import done (``ForkLauncher.imported``; False for a
    launcher without zygotes)."""
    fn = getattr(launcher, "imported", None)
    return bool(fn(list(tasks))) if fn is not None else False


def settle(launcher) -> None:
    """Wait until ``launcher`` imports nothing ahead any more (``ForkLauncher.settle``)."""
    fn = getattr(launcher, "settle", None)
    if fn is not None:
        fn()


@contextlib.contextmanager
def own(launcher=None):
    """``launcher``, or (None) a ``ForkLauncher`` of the caller's own, ended with the block."""
    if launcher is not None:
        yield launcher
        return
    with ForkLauncher() as mine:
        yield mine
