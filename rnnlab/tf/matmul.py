"""The matmul rate: achieved GFLOP/s of an n x n matrix product on a device, in a given dtype (best of ``repeats``,
after a warm-up). The one measurement behind the environment probe's ``matmul_gflops``, the roofline's denominator
and the precision experiment's per-dtype rates."""

from __future__ import annotations

import time


def matmul_gflops(tf_device: str, *, dtype: str = "float32", n: int = 2048, repeats: int = 10) -> float:
    """GFLOP/s of ``tf.matmul`` of two ``n`` x ``n`` ``dtype`` matrices on ``tf_device`` (e.g. ``/CPU:0``)."""
    import tensorflow as tf

    with tf.device(tf_device):
        a = tf.cast(tf.random.stateless_uniform((n, n), seed=(1, 2)), dtype)
        b = tf.cast(tf.random.stateless_uniform((n, n), seed=(3, 4)), dtype)
        f = tf.function(lambda x, y: tf.reduce_sum(tf.cast(tf.matmul(x, y), tf.float32)))
        f(a, b).numpy()
        best = float("inf")
        for _ in range(repeats):
            t0 = time.perf_counter()
            f(a, b).numpy()
            best = min(best, time.perf_counter() - t0)
    return 2.0 * n**3 / best / 1e9
