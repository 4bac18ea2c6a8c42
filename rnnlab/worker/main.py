"""The worker process: one task (one variant, or the environment probe) in a fresh interpreter and TensorFlow.

Run as ``python -m rnnlab.worker``; the task arrives as JSON on stdin. Messages go back as JSON lines on
the original stdout, which is kept for them alone: anything TensorFlow or user code prints goes to stderr.

Messages: ``{"type": "phase", "phase": "starting"}`` as soon as the interpreter runs this module, then
``"importing TensorFlow"`` (several seconds; not in a zygote's fork, which has it) and the experiment's own phases
... then one ``{"type": "result", ...}``
or ``{"type": "error", "reason": "one line"}``.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
import traceback


def _jsonable(obj):
    if hasattr(obj, "tolist"):  # numpy scalars and arrays
        return obj.tolist()
    return str(obj)


def _send(stream, msg: dict) -> None:
    stream.write(json.dumps(msg, default=_jsonable) + "\n")
    stream.flush()


def _rss_hwm_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: KiB


THREAD_VARS = ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
               "MKL_NUM_THREADS")  # TensorFlow's pools (eager and every v1 Session's default), OpenMP, BLAS


def prepare_env(device: str, threads: int = 0) -> None:
    """What must be set before TensorFlow is imported."""
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # TF1 cells need tf-keras; must precede the TF import
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if device == "CPU":
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"  # a CPU run must not touch (or allocate on) a GPU
    if threads > 0:  # before TensorFlow is imported: its thread pools read these once
        for name in THREAD_VARS:
            os.environ[name] = str(threads)


def _limit_threads(tf, threads: int) -> None:
    """The ``threads`` parameter in TensorFlow's own config too (eager functions; a v1 ``Session`` built without
    thread counts takes the process defaults the environment set). Checked by measurement: a worker at 1 thread keeps
    one core busy (``details.condition.own_cores``, its CPU time over its wall time while timed)."""
    if tf is not None and threads > 0:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)


# What Keras 3 imports when it is installed and a worker never uses: scikit-learn for its wrapper (0.75 s of a 6-8 s
# import), pandas for slicing DataFrames (0.34 s) and IPython for its file editor's display (0.40 s); each behind a
# ``try: import``, so Keras goes on without it
UNUSED = ("sklearn", "pandas", "IPython")


def leave_out_unused(preload) -> None:
    """In a process that runs TensorFlow and nothing else (a worker; the ``convert`` command) only: the modules of
    ``UNUSED`` it does not preload, and has not imported yet, are left out (``sys.modules[name] = None``: an import of
    it fails at once, and Keras's ``try: import`` moves on)."""
    wanted = {str(m).split(".")[0] for m in preload or ()}
    for name in UNUSED:
        if name not in wanted:
            sys.modules.setdefault(name, None)


def freeze_imports() -> None:
    """Move every object the imports made (TensorFlow's and Keras's: about 400,000) out of the collector's reach
    (``gc.freeze``): they live as long as the process, and a full collection walked them all, 0.1-0.3 s each time on a
    2-core Xeon: the untimed ``gc.collect()`` before every build window (``tf.measure.time_builds``), dozens a
    round, and any full collection that falls inside a timed step. What the variant makes later is collected as
    before. The zygote freezes before it forks (CPython's advice, which also keeps the children's pages shared); a
    forked child's call then finds next to nothing new, a spawned worker freezes its own import here."""
    import gc

    gc.freeze()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if len(text) > 300:
        text = text[:297] + "..."
    name = type(exc).__name__
    return text if text.startswith(name) else f"{name}: {text}"


def run_task(task: dict, send, recv=None) -> None:
    """Run ``task``; ``recv`` (the next command from the manager, blocking) is given when the manager keeps the pipe
    open for an interleaved point (``task["serve"]``)."""
    from rnnlab.core.errors import VariantUnsupported
    from rnnlab.worker.context import START, Channel, WorkerContext
    from rnnlab.worker.context import MIN_WINDOW_S  # the shortest span the system's CPU counters read to 0.1 core

    device = task.get("device", "CPU")
    threads = int((task.get("params") or {}).get("threads") or 0)
    preload = task.get("preload", ("tensorflow", "keras"))
    prepare_env(device, threads)
    heavy = task["kind"] == "probe" or "tensorflow" in preload
    if any(m not in sys.modules for m in (("tensorflow",) if heavy else preload)):  # (a zygote's fork has them)
        send({"type": "phase", "phase": "importing TensorFlow" if heavy else "importing"})
    import importlib

    if task["kind"] == "probe":
        from rnnlab.worker.machine import probe

        send({"type": "result", "probe": probe(device)})
        return

    import numpy  # noqa: F401 - loaded before the memory baseline is read, as the variant will use it

    for name in preload:
        importlib.import_module(name)  # the memory baseline includes TensorFlow and Keras
    tf = sys.modules.get("tensorflow")
    _limit_threads(tf, threads)

    module_name, _, fn_name = task["worker"].partition(":")
    fn = getattr(importlib.import_module(module_name), fn_name)
    freeze_imports()
    channel = Channel(send, recv) if task.get("serve") and recv is not None else None
    ctx = WorkerContext(device=device, on_phase=lambda p: send({"type": "phase", "phase": p}), channel=channel,
                        inject=float(task.get("inject") or 0.0))
    if channel is not None:
        channel.gate(START)  # imported: wait for our turn, so no two workers build at once
    gpu = device == "GPU" and tf is not None
    if gpu:
        tf.config.experimental.reset_memory_stats("GPU:0")
    base_mb = _rss_hwm_mb()
    meter = ctx.meter()  # the whole call's condition, for a variant that times no series of its own
    t0 = time.perf_counter()
    try:
        out = fn(dict(task["params"]), task["variant"], ctx)
    except VariantUnsupported as e:
        send({"type": "error", "reason": str(e)})
        return
    wall = time.perf_counter() - t0
    whole = meter.read()
    if channel is None and not ctx.readings and whole["wall"] >= MIN_WINDOW_S:
        # its epochs, checks or steps timed by its own clock (training, padding, seed003, the checks): what other
        # processes took over the whole call, so its record says the cores free, never a load average's guess
        ctx.readings.append({"metric": "run", **whole})
    if ctx.readings:  # sequential: each timed series' condition (interleaved windows report their own)
        out = {**out, "details": {**(out.get("details") or {}), "readings": ctx.readings}}
    send(_result(out, task, wall=wall, base_mb=base_mb, tf=tf, gpu=gpu))


def _result(out: dict, task: dict, *, wall: float, base_mb: float, tf, gpu: bool) -> dict:
    """The result message of a variant that ran: its finite metrics, peak memory, wall time, the matmul rate measured
    right after it (for the roofline), and its outputs saved where the manager asked."""
    import math

    import numpy as np

    device = task.get("device", "CPU")
    details = dict(out.get("details") or {})
    metrics = {}
    for k, v in (out.get("metrics") or {}).items():
        if v is None:
            continue
        if math.isfinite(float(v)):
            metrics[k] = float(v)
        else:  # a NaN/inf is a finding, not a number to chart
            details.setdefault("nonfinite_metrics", {})[k] = str(float(v))
    if gpu:
        metrics["peak_mem_mb"] = tf.config.experimental.get_memory_info("GPU:0")["peak"] / 2**20
        details["peak_mem_method"] = "TensorFlow GPU allocator peak"
    else:
        metrics["peak_mem_mb"] = max(0.0, _rss_hwm_mb() - base_mb)
        details["peak_mem_method"] = "process RSS high-water mark minus baseline after importing TensorFlow"
    details["worker_wall_s"] = round(wall, 3)
    if details.get("fwd_flops") and tf is not None and task.get("matmul", True):
        # The roofline's denominator, measured in this process right after the variant, under the same load
        from rnnlab.core.condition import Meter
        from rnnlab.worker.machine import matmul_gflops

        meter = Meter()
        details["matmul_gflops"] = round(matmul_gflops(device, repeats=5), 2)
        details["matmul_other"] = meter.read()["other"]  # the roofline stands only beside windows timed alike
    outputs = out.get("outputs") or {}
    outputs_path = None
    if outputs and task.get("outputs_path"):
        outputs_path = task["outputs_path"]
        np.savez(outputs_path, **{k: np.asarray(v) for k, v in outputs.items()})
    return {"type": "result", "metrics": metrics, "details": details, "outputs_path": outputs_path}


def _end_with_parent(poll_s: float = 1.0) -> None:
    """Exit when the process that started this worker is gone (killed without a chance to kill its workers, e.g.
    a Ray task force-cancelled): a worker runs in its own session, so nothing else would end it."""
    import threading

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(poll_s)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _reader(stream):
    """The manager's next command (one JSON line), or None when it closed the pipe."""
    def recv() -> dict | None:
        line = stream.readline()
        return json.loads(line) if line.strip() else None
    return recv


def main() -> int:
    _end_with_parent()
    msg_stream = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # everything else printed to stdout lands on stderr
    sys.stdout = sys.stderr
    send = lambda m: _send(msg_stream, m)  # noqa: E731
    try:
        send({"type": "phase", "phase": "starting"})  # before anything is imported: the manager hears at once
        task = json.loads(sys.stdin.readline())  # one line: the pipe stays open for commands when serving
        leave_out_unused(task.get("preload", ("tensorflow", "keras")) if task.get("kind") != "probe" else ())
        run_task(task, send, _reader(sys.stdin))
    except MemoryError:
        send({"type": "error", "reason": "out of memory (MemoryError in the worker)"})
    except Exception as e:  # a failing variant becomes an error record; the traceback stays on stderr
        traceback.print_exc()
        send({"type": "error", "reason": _one_line(e)})
    return 0


def end(code: int) -> None:
    """End now: the result is sent and the outputs written; TensorFlow's own teardown (thread pools, atexit hooks)
    would only cost the round a second per worker."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


