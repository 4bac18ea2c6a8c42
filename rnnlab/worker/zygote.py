"""The zygote: one interpreter that imports TensorFlow once, then forks fresh workers from that state (Linux, CPU).

Importing TensorFlow and Keras takes 6-8 s of one core; a round of twelve workers spent 32-36 s of a 2-core machine on
it, and a 2-worker round beside one busy process 15 s. A fork of an interpreter that has *imported* TensorFlow, but
never created its runtime (no eager context, no session, no thread pool, no device), starts a worker in milliseconds
with everything else fresh: its own TensorFlow runtime, graphs, thread pools and memory. A zygote serves one round
(``engine.launch``): every round's workers come from a newly started interpreter, so rounds stay independent at the
level of the process image too (where libraries and the import's objects landed).

Run as ``python -m rnnlab.worker.zygote SPEC FD``: ``SPEC`` (JSON: device, threads, preload) is what every worker it
forks shares, set before the import; ``FD`` a Unix SEQPACKET socket to the manager. Each request is one message with
three file descriptors attached (the worker's stdin, its message pipe, its stderr); the zygote forks, the child puts
them on 0/1/2 and runs ``worker.main.main`` exactly as a spawned worker does. Replies: ``ready`` once imported,
``forked`` (id, pid) per request, ``exit`` (pid, code) when a child ends (the zygote is the one that can wait for it).

Peak memory stays the spawned worker's figure: a forked child maps the libraries' pages again only as it touches them,
so its resident size starts below the zygote's (the anonymous memory alone: 310 of 775 MB here) and every library
page touched later would count as the variant's. The zygote notes which pages of its file mappings are resident
after the import, and each child maps those again before anything reads its baseline (``prefault``), so the child's
baseline is what a spawned worker's is after its own import.
"""

from __future__ import annotations

import json
import os
import select
import socket
import sys

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
MADV_POPULATE_READ = 22  # Linux 5.14+: map a range's pages now, as reads would


def resident_file_ranges() -> list[tuple[int, int]]:
    """(address, length) of every run of resident pages in this process's file mappings (libraries, Python
    modules' shared objects), from ``/proc/self/maps`` and ``/proc/self/pagemap``'s present bits."""
    import numpy as np

    out: list[tuple[int, int]] = []
    with open("/proc/self/maps") as maps, open("/proc/self/pagemap", "rb") as pagemap:
        for line in maps:
            parts = line.split(maxsplit=5)
            if len(parts) < 6 or "r" not in parts[1]:
                continue
            path = parts[5].strip()
            if not path.startswith("/") or path.startswith(("/dev/", "/memfd:")) or path.endswith("(deleted)"):
                continue
            start, end = (int(x, 16) for x in parts[0].split("-"))
            pagemap.seek(start // PAGE * 8)
            raw = pagemap.read((end - start) // PAGE * 8)
            present = (np.frombuffer(raw, dtype="<u8") >> np.uint64(63)).astype(bool)
            if not present.any():
                continue
            edges = np.flatnonzero(np.diff(np.concatenate(([0], present.astype(np.int8), [0]))))
            out += [(start + int(a) * PAGE, int(b - a) * PAGE) for a, b in zip(edges[::2], edges[1::2])]
    return out


def prefault(ranges: list[tuple[int, int]]) -> None:
    """Map ``ranges`` into this process again (``MADV_POPULATE_READ``; where the kernel lacks it, a read of a byte
    per page)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    for addr, length in ranges:
        if libc.madvise(addr, length, MADV_POPULATE_READ) != 0:
            for a in range(addr, addr + length, PAGE):
                ctypes.c_char.from_address(a).value  # noqa: B018 - the read maps the page


def _send(sock: socket.socket, msg: dict) -> None:
    try:
        sock.send(json.dumps(msg).encode())
    except OSError:  # the manager is gone: the loop ends at its next look
        pass


def _die_with_parent() -> None:
    """The kernel ends this child when its zygote ends (``PR_SET_PDEATHSIG``), at once and whatever the child is
    doing; ``worker.main`` also watches for it once a second, on platforms without it."""
    import ctypes
    import signal

    parent = os.getppid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the zygote ended before the request took: nothing will tell us
        os._exit(1)


def _child(fds: list[int], sock: socket.socket, ranges: list[tuple[int, int]]) -> None:
    """In the forked child: its own session (a kill takes its group), the three descriptors as stdin, stdout and
    stderr, the zygote's resident pages mapped again, then the worker's own main."""
    import signal

    code = 1
    try:
        _die_with_parent()
        os.setsid()
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        sock.close()
        for i, fd in enumerate(fds):
            os.dup2(fd, i)
            os.close(fd)
        sys.stdin = open(0, "r", closefd=False)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        prefault(ranges)
        from rnnlab.worker import main as worker

        code = worker.main()
    except BaseException:  # noqa: BLE001 - whatever happens, this process must not return into the zygote's loop
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def serve(spec: dict, sock: socket.socket) -> int:
    """Import what ``spec`` preloads, say ``ready``, then fork one child per request until the manager closes the
    socket or goes away."""
    import importlib

    from rnnlab.worker import main as worker

    worker.prepare_env(str(spec.get("device", "CPU")), int(spec.get("threads") or 0))
    worker.leave_out_unused(spec.get("preload") or ())
    import numpy  # noqa: F401 - a spawned worker loads it before its memory baseline too

    for name in spec.get("preload") or ():
        importlib.import_module(name)
    worker.freeze_imports()  # before the fork: no child's collection walks the import's objects
    ranges = resident_file_ranges()
    parent = os.getppid()
    _send(sock, {"type": "ready"})
    children: set[int] = set()
    while True:
        ready, _, _ = select.select([sock], [], [], 0.05)
        for pid in list(children):  # report every child that ended: only the zygote can wait for it
            try:
                done, status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done, status = pid, 0
            if done:
                children.discard(pid)
                _send(sock, {"type": "exit", "pid": pid, "code": os.waitstatus_to_exitcode(status)})
        if os.getppid() != parent:
            return 0
        if not ready:
            continue
        try:
            msg, fds, _, _ = socket.recv_fds(sock, 65536, 3)
        except OSError:
            return 0
        if not msg:
            return 0  # the manager closed the socket: the round is over
        req = json.loads(msg)
        pid = os.fork()
        if pid == 0:
            _child(list(fds), sock, ranges)
        for fd in fds:
            os.close(fd)
        children.add(pid)
        _send(sock, {"type": "forked", "id": req.get("id"), "pid": pid})


def main() -> int:
    spec = json.loads(sys.argv[1])
    sock = socket.socket(fileno=int(sys.argv[2]))
    try:
        return serve(spec, sock)
    except Exception as e:  # an import that fails: said on stderr, the manager tells every waiting worker
        import traceback

        traceback.print_exc()
        _send(sock, {"type": "failed", "reason": f"{type(e).__name__}: {e}"[:300]})
        return 1


if __name__ == "__main__":
    sys.exit(main())
