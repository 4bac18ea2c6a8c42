"""The worker function for the variants: build, first call, forward timing, train-step timing, reference check.

``run_variant(params, variant, ctx)`` follows the contract in ``rnnlab/experiments/base.py``. It dispatches to a
runner from ``tf1.py``, ``tf2.py`` or ``keras3.py``; each runner has the same steps, timed here the same way:

    build_forward()          -> metric first_build_s (graph construction / tracing of the forward pass, no run: the
                                                      first, cold build of the process)
    drop_forward(), build_forward() BUILD_REPEATS times
                             -> metric build_s       (median of the warm builds: the same work, from scratch each time)
    forward_graph_def()      -> metric graph_nodes   (see count_nodes; of the last build)
    start()                  untimed: session, weights, inputs (on the last build)
    forward() once           -> metric first_call_s  (first run after build; XLA/grappler compilation included)
    forward() repeated       -> metrics fwd_ms, fwd_ms_p25, fwd_ms_p75 (median/quartiles, outputs fetched to host)
    build_train()            -> metric train_build_s (loss = mean(outputs**2), gradients, Adam update: built/traced)
    start_train()            untimed: optimizer slots
    train() once             -> metric train_first_call_s
    train() repeated         -> metrics train_ms, train_ms_p25, train_ms_p75

plus ``ref_abs_diff``: max |variant - float64 NumPy reference| over outputs and every final state, on the outputs of
the first call (before any training changed the weights).

Details: ``fwd_flops`` (flops.forward_flops), ``kernel`` (which kernel ran), ``xla``, ``dtype``, ``lengths`` (the true
length of every row), ``masked``, ``device``, ``graph_nodes_top``/``graph_nodes_functions`` (the split of graph_nodes),
``time_major``, and variant-specific notes.
"""

from __future__ import annotations

import gc
import statistics

import numpy as np

from rnnlab.core.errors import VariantUnsupported
from rnnlab.core.stats import Timing, time_once
from rnnlab.tf.variants import VARIANTS, XLA_VARIANTS, split_xla
from rnnlab.tf.flops import forward_flops
from rnnlab.tf.numpy_ref import as_outputs, forward as ref_forward
from rnnlab.tf.weights import Problem

# Warm forward builds timed after the first, cold one; build_s is their median.
BUILD_REPEATS = 3

METRICS = ("first_build_s", "build_s", "graph_nodes", "first_call_s", "fwd_ms", "fwd_ms_p25", "fwd_ms_p75",
           "train_build_s", "train_first_call_s", "train_ms", "train_ms_p25", "train_ms_p75", "ref_abs_diff")

METRICS_DOC = {
    "first_build_s": "the first build of the forward graph (TF1) or trace of the forward function (TF2/Keras), "
                     "as build_s was before: in a fresh worker it is cold, paying for Python, TensorFlow and Keras "
                     "caches and first imports that later builds find warm",
    "build_s": f"median of {BUILD_REPEATS} further builds/traces of the forward pass, each from scratch (a new "
               "tf.Graph, or new variables/layers and a new tf.function), after the cold one",
    "graph_nodes": "nodes of the forward graph (only what outputs and final states need) plus the nodes of every "
                   "function in its library (while_loop cond/body, nested tf.functions), so a while_loop's body "
                   "counts once and an unrolled graph counts every step",
    "train_build_s": "building (TF1) or tracing (TF2/Keras) the train step: loss, gradients and the Adam update",
    "train_first_call_s": "first run of the train step (compilation included)",
    "ref_abs_diff": "max abs difference of outputs and final states against the float64 NumPy reference",
}


def count_nodes(graph_def) -> tuple[int, int]:
    """(top-level nodes, nodes inside the function library) of a GraphDef.

    A v2 while_loop (TF1 dynamic_rnn under TF2 control flow, tf.while_loop in a tf.function) is one ``While`` node
    whose cond and body are library functions, so counting only top-level nodes would hide the loop's body; the
    library is counted too. Every function body counts once however often it runs.
    """
    return len(graph_def.node), sum(len(f.node_def) for f in graph_def.library.function)


def _make_runner(pb: Problem, base: str, xla: bool, ctx):
    if base in ("tf1_static", "tf1_dynamic"):
        from rnnlab.tf.tf1 import TF1Runner
        return TF1Runner(pb, base, ctx)
    if base in ("tf2_unrolled", "tf2_while"):
        from rnnlab.tf.tf2 import TF2Runner
        return TF2Runner(pb, base, xla, ctx)
    from rnnlab.tf.keras3 import KerasRunner
    return KerasRunner(pb, base, xla, ctx)


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return f"{type(e).__name__}: {line}" if line else type(e).__name__


def _xla_guard(xla: bool, what: str, fn):
    """Run ``fn``; under XLA a compile failure becomes VariantUnsupported with the error's first line."""
    if not xla:
        return fn()
    try:
        return fn()
    except VariantUnsupported:
        raise
    except Exception as e:  # XLA reports unsupported ops as InvalidArgumentError, UnimplementedError, ...
        raise VariantUnsupported(f"XLA compilation of the {what} failed: {_first_line(e)}") from None


def time_builds(runner, ctx, builds: int | None = None) -> tuple[float, float]:
    """(first_build_s, build_s): the cold forward build, then the median of the warm ones (``ctx.series("build_s")``:
    ``builds``, default BUILD_REPEATS, one after the other; interleaved, as many windows as the manager asks for). The
    runner keeps the LAST build, and the variant runs on it (each build replaces the previous one, so this needs no
    bookkeeping; the builds are the same graph, so graph_nodes and every timing after are those of any).

    Peak memory is the worker's RSS high-water mark, so two builds must never be alive together: before each warm
    build ``runner.drop_forward()`` lets go of the previous one and ``gc.collect()`` (untimed) frees it (TF1 graphs
    are reference cycles; a dropped tf.function removes its functions from the eager context when collected). One
    collection before the cold build too, so no timed build pays for collecting earlier garbage. Checked at the seed
    configuration: without the drop, RSS grew with every kept build (tf1_static ~7 MB each, keras_unroll ~10 MB;
    peak_mem_mb up to +20 MB); with it, RSS after each TF1/TF2 build is flat, Keras keeps about 1 MB or less per build
    (eager kernel-cache entries), and peak_mem_mb, set by the training step, is unchanged. keras.backend.clear_session
    is not called: it would also empty the kernel cache and reset Keras's global settings, which the builds and the
    first call should find as the cold build left them.
    """
    builds = BUILD_REPEATS if builds is None else builds
    gc.collect()
    first, _ = time_once(runner.build_forward, ctx.clock)

    def warm() -> float:
        runner.drop_forward()
        gc.collect()
        return time_once(runner.build_forward, ctx.clock)[0]

    samples = ctx.series("build_s", warm, repeats=builds, warmup=0, self_timed=True) if builds else []
    return first, (statistics.median(samples) if samples else first)


def _timing(samples_s: list[float]) -> Timing:
    return Timing.of([s * 1000.0 for s in samples_s])


def time_runner(runner, ctx, *, repeats: int, warmup: int, xla: bool = False
                ) -> tuple[dict[str, float], dict, tuple[int, int]]:
    """The timing protocol every unroll-style runner goes through, in one place.

    ``runner`` has ``build_forward``, ``drop_forward``, ``forward_graph_def``, ``start``, ``forward``, ``result``,
    ``build_train``, ``start_train``, ``train`` and ``close`` (see tf1.py). Returns the metrics (cold and warm
    build, graph size, first call, forward and train step median/quartiles), the forward outputs, and the graph's
    (top-level, function) node counts. The runner is closed whatever happens. Every repeated step goes through
    ``ctx.series`` (``worker.context``), so an interleaved point times it in windows beside the other variants.
    """
    import tensorflow as tf

    clock = ctx.clock
    metrics: dict[str, float] = {}
    try:
        with tf.device(ctx.tf_device):
            ctx.phase("build")
            metrics["first_build_s"], metrics["build_s"] = time_builds(runner, ctx)
            top, fns = count_nodes(runner.forward_graph_def())
            metrics["graph_nodes"] = float(top + fns)
            runner.start()

            ctx.phase("first_call")
            metrics["first_call_s"], raw = time_once(lambda: _xla_guard(xla, "forward pass", runner.forward), clock)
            outputs = runner.result(raw)

            ctx.phase("forward")
            t = _timing(ctx.series("fwd_ms", runner.forward, repeats=repeats, warmup=warmup))
            metrics.update(fwd_ms=t.median_ms, fwd_ms_p25=t.p25_ms, fwd_ms_p75=t.p75_ms)

            ctx.phase("train")
            metrics["train_build_s"], _ = time_once(runner.build_train, clock)
            runner.start_train()
            metrics["train_first_call_s"], _ = time_once(
                lambda: _xla_guard(xla, "train step", runner.train), clock)
            t = _timing(ctx.series("train_ms", runner.train, repeats=repeats, warmup=warmup))
            metrics.update(train_ms=t.median_ms, train_ms_p25=t.p25_ms, train_ms_p75=t.p75_ms)
    finally:
        runner.close()
    return metrics, outputs, (top, fns)


def run_variant(params: dict, variant: str, ctx) -> dict:
    """Measure one variant; see the module docstring for what each metric is."""
    if variant not in VARIANTS:
        raise VariantUnsupported(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    base, xla = split_xla(variant)
    if xla and base not in XLA_VARIANTS:
        raise VariantUnsupported(f"{variant}: XLA is not applied to {base}")
    pb = Problem(params)
    repeats = int(params.get("repeats", 30))
    warmup = int(params.get("warmup", 3))
    runner = _make_runner(pb, base, xla, ctx)
    metrics, outputs, (top, fns) = time_runner(runner, ctx, repeats=repeats, warmup=warmup, xla=xla)

    ref = as_outputs(*ref_forward(pb.cell, pb.weights, pb.x, pb.lengths))
    missing = set(ref) ^ set(outputs)
    if missing:
        raise RuntimeError(f"{variant}: outputs {sorted(outputs)} do not match the reference's {sorted(ref)}")
    metrics["ref_abs_diff"] = float(max(np.max(np.abs(outputs[k].astype(np.float64) - ref[k])) for k in ref))

    details = {
        "fwd_flops": forward_flops(pb.cell, pb.layers, pb.units, pb.input_dim, pb.batch, pb.seq_len),
        "dtype": pb.dtype,
        "lengths": list(pb.lengths),
        "masked": pb.masked,
        "device": ctx.device,
        "graph_nodes_top": top,
        "graph_nodes_functions": fns,
        "repeats": repeats,
        "warmup": warmup,
    }
    details.update(runner.details)
    details.setdefault("xla", xla)
    return {"metrics": metrics, "details": details, "outputs": outputs}
