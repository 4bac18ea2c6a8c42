"""Competing load on demand: N CPU-bound processes that ``calibrate --contend N`` starts and stops itself, so anyone
can repeat a test of the method beside a known load (what a laptop's browser or a VM's neighbour does, made
reproducible). Each process spins in pure Python at normal priority; all are killed when the block ends, whatever
happens inside it."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from typing import Iterator

SPIN = "while True: pass"


@contextlib.contextmanager
def load(n: int) -> Iterator[list]:
    """``n`` spinning processes for the duration of the block (none for 0)."""
    procs = []
    try:
        for _ in range(max(0, int(n))):
            procs.append(subprocess.Popen([sys.executable, "-c", SPIN], stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            with contextlib.suppress(Exception):
                p.wait(timeout=5)
