"""The environment: versions, CPU, GPUs, and the fingerprint that keys results.

``static_env()`` is fast and imports no TensorFlow (package metadata, /proc/cpuinfo). What only TensorFlow can tell
(GPU names, cuDNN, the matmul rate) comes from a probe in a worker process and is cached in the store per machine.
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
from importlib import metadata

from rnnlab.core.errors import RnnlabError

FINGERPRINT_KEYS = ("tf", "keras", "tf_keras", "python", "cpu", "cores", "device", "device_name", "gpu", "cudnn",
                    "cuda")


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@functools.lru_cache(maxsize=1)
def static_env() -> dict:
    """What can be known without importing TensorFlow."""
    from rnnlab.core.version import VERSION

    return {
        "tf": _version("tensorflow") or _version("tensorflow-cpu"),
        "keras": _version("keras"),
        "tf_keras": _version("tf-keras"),
        "python": platform.python_version(),
        "rnnlab": VERSION,
        "cpu": cpu_model(),
        "cores": _cores(),
        "os": f"{platform.system()} {platform.release()}",
        "gpu_hint": gpu_hint(),
    }


def gpu_hint() -> bool:
    """Could TensorFlow see a GPU here? False means certainly not (no NVIDIA device node, or hidden)."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("-1", ""):
        return False
    return os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl") or bool(shutil.which("nvidia-smi"))


def resolve_device(requested: str, gpus: list[str]) -> str:
    """``auto`` picks the GPU when TensorFlow sees one; ``gpu`` without one is the user's error."""
    if requested == "cpu":
        return "CPU"
    if requested == "gpu":
        if not gpus:
            raise RnnlabError("device=gpu: TensorFlow sees no GPU on this machine; use device=auto or device=cpu")
        return "GPU"
    return "GPU" if gpus else "CPU"


def run_env(static: dict, probe: dict | None, device: str) -> dict:
    """The ``env`` block of a record: DESIGN.md's fields plus versions and the measured matmul rate."""
    gpus = (probe or {}).get("gpus") or []
    gpu = gpus[0] if gpus else None
    env = {
        "tf": static["tf"], "keras": static["keras"], "tf_keras": static["tf_keras"], "python": static["python"],
        "rnnlab": static["rnnlab"], "device": device,
        "device_name": gpu if device == "GPU" else static["cpu"],
        "cpu": static["cpu"], "cores": static["cores"],
        "gpu": gpu, "cudnn": (probe or {}).get("cudnn") if gpu else None,
        "cuda": (probe or {}).get("cuda") if gpu else None,
        "machine": f"{static['cpu']}, {static['cores']} core{'s' if static['cores'] != 1 else ''}" + (f", {gpu}" if gpu else ""),
    }
    if probe and probe.get("matmul_gflops"):
        env["matmul_gflops"] = round(float(probe["matmul_gflops"]), 2)
    return env


def fingerprint(env: dict) -> dict:
    """The part of the environment that decides whether a stored result may be reused."""
    return {k: env.get(k) for k in FINGERPRINT_KEYS}


def available_mb() -> float:
    """Memory this machine has free now, MB (the run's memory limit and the size checks use it)."""
    import psutil

    return psutil.virtual_memory().available / 2**20
