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
