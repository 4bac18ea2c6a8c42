"""What an experiment is: its parameters, variants, presets, and the function a worker calls for one variant.

Declaring an experiment imports no TensorFlow; only ``worker`` (a ``"module:function"`` path) does, inside the
spawned worker process. The worker function's contract::

    def run_variant(params: dict, variant: str, ctx: WorkerContext) -> dict:
        # params: every parameter of the experiment, validated, defaults filled in
        # ctx.device: "CPU" or "GPU" (resolved); ctx.tf_device: "/CPU:0" or "/GPU:0"
        # ctx.phase("build") etc. reports progress; raise VariantUnsupported("why") for a clean error record
        return {"metrics": {name: float},       # only what was measured; never zeros for "not measured"
                "details": {name: jsonable},    # kernel that ran, captured errors, small arrays for heatmaps...
                "outputs": {name: np.ndarray}}  # optional: compared against the reference variant's outputs

The harness adds ``peak_mem_mb`` (measured around the call), ``max_abs_diff`` (outputs against the reference
variant) and ``gflops``/``roofline_frac`` when the function returns ``details["fwd_flops"]`` and ``fwd_ms``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from rnnlab.core.params import ParamSet


@dataclass(frozen=True)
class Experiment:
    name: str
    version: int  # bump when the measuring code changes what it measures: old records stop matching
    title: str
    summary: str
    params: ParamSet
    variants: tuple[str, ...]
    worker: str
    default_variants: tuple[str, ...] = ()
    reference: str | None = None
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    check: Callable[[dict, tuple], None] | None = None  # raises RnnlabError for impossible configs (memory...)
    metrics_doc: Mapping[str, str] = field(default_factory=dict)  # experiment-specific metric names
    page: str = ""  # the app page that shows it (``rnnlab.present.<page>``): its navigation, deck and export topic
    work_s: float = 20.0  # a variant's seconds at the seed configuration: the run estimate before this machine timed one
    # caps a hosted demo puts on the int params this experiment alone has (``engine.hosted``; shared ones are there)
    hosted: Mapping[str, int] = field(default_factory=dict)
    # imported by the worker before its memory baseline is taken, so peak_mem_mb is the variant's own
    preload: tuple[str, ...] = ("tensorflow", "keras")

    def __post_init__(self):
        if not self.default_variants:
            object.__setattr__(self, "default_variants", self.variants)
