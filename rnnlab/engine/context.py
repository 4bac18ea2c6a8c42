"""What a worker function gets besides its params: the device it runs on and a way to report its phase."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable


@dataclass
class WorkerContext:
    device: str = "CPU"  # "CPU" or "GPU", already resolved
    on_phase: Callable[[str], None] = lambda phase: None
    clock: Callable[[], float] = time.perf_counter
    phases: list = field(default_factory=list)

    @property
    def tf_device(self) -> str:
        return f"/{self.device}:0"

    def phase(self, name: str) -> None:
        """Report progress: ``"build"``, ``"first_call"``, ``"forward"``, ``"train"``..."""
        self.phases.append(name)
        self.on_phase(name)
