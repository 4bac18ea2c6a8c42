"""The record's schema, defined once: what each field and nested field of a record may hold, as data. The validator
(``experiments.validate``) checks records against it; the fuzzer (``python -m scripts.fuzz_records``) generates records from
it. ``core.record.Record.from_dict`` checks the outer structure (fields present, ``rounds`` a list of objects,
``details`` an object, metrics finite numbers); everything inside is declared here:

- ``ENV``: each env field (DESIGN.md's record) text or null, the numeric ones within ``Range``; an env field not
  listed is short text or null (a list, a boolean or a number there is refused).
- ``EXTRA_PARAMS``: parameters a record may carry beyond its experiment's own (``threads``, the machine's condition
  while timed: an int, 0 for all threads).
- ``DETAILS``: the details keys readers read, with the shapes the workers write; ``CONDITION`` among them.
- ``PAIRED``: ``details.paired`` = {session: {series: [[window, ...] per round]}}; a series is a metric's windows
  (its name), the reference brackets around them (``<metric>@ref``, ``core.stats.REF``) or the machine's condition
  while each window ran (``<metric>@other``): each with its own ``Range``.
"""

from __future__ import annotations

from typing import Any


class Map:
    """A JSON object whose keys are free text and whose values all have one shape."""

    def __init__(self, value):
        self.value = value


class Or:
    def __init__(self, *shapes):
        self.shapes = shapes


class Range:
    """A JSON number (never a boolean) from ``lo`` to ``hi``; ``open_low``: above ``lo``; ``integer``: whole."""

    def __init__(self, lo: float, hi: float, *, open_low: bool = False, integer: bool = False):
        self.lo, self.hi, self.open_low, self.integer = lo, hi, open_low, integer

    def holds(self, v: Any) -> bool:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return False
        if self.integer and not (isinstance(v, int) or float(v).is_integer()):
            return False
        try:
            f = float(v)
        except OverflowError:
            return False
        return (self.lo < f if self.open_low else self.lo <= f) and f <= self.hi

    def words(self) -> str:
        """"a number in (0, 8.64e+07]", "a whole number in [1, 100000]"."""
        return f"{'a whole number' if self.integer else 'a number'} in {'(' if self.open_low else '['}{self.lo:g}," \
               f" {self.hi:g}]"


class Closed(dict):
    """A JSON object with these keys only (each optional), each of its shape: another key is refused."""


from rnnlab.core.params import PARAMS as _PARAMS  # noqa: E402

ANY = object()
NUM, INT, STR, BOOL, NULL = float, int, str, bool, type(None)
OPT_STR = Or(STR, NULL)

# -- env ----------------------------------------------------------------------------------------------------------
ENV_TEXT = ("tf", "keras", "tf_keras", "python", "rnnlab", "device", "device_name", "cpu", "gpu", "cudnn", "cuda",
            "machine", "os")  # core/envinfo.py's run_env: text, or null where a version or device is unknown
ENV: dict[str, Any] = {**{k: OPT_STR for k in ENV_TEXT},
                       "cores": Or(Range(1, 1e5, integer=True), NULL),
                       "matmul_gflops": Or(Range(0, 1e9, open_low=True), NULL)}
ENV_OTHER = OPT_STR  # an env field not listed above

# -- params beyond an experiment's own ----------------------------------------------------------------------------
# ``threads`` is a parameter of every timing experiment (core.params); a record of another experiment may carry it
# within the same limits
EXTRA_PARAMS: dict[str, Range] = {"threads": Range(_PARAMS["threads"].lo, _PARAMS["threads"].hi, integer=True)}

# -- details.paired -----------------------------------------------------------------------------------------------
WINDOW = Range(0, 86400e3, open_low=True)  # one window's figure (a time): finite and positive
PAIRED: dict[str, Range] = {"": WINDOW, "@ref": WINDOW,
                            "@other": Range(0, 1e5)}  # suffix -> its values; @other: other work's cores, >= 0
MAX_WINDOWS = 10_000  # windows in one round of one series

# -- details ------------------------------------------------------------------------------------------------------
COUNT = Range(0, 1e5)
CONDITION = Closed({"threads": COUNT, "cores": COUNT, "other_cores": COUNT, "own_cores": COUNT, "free_cores": COUNT,
                    "changed": BOOL, "note": STR})  # the machine's condition while timed (core.condition.Condition)
_CHECK = {"checked": INT, "ok": BOOL, "row": Or(INT, NULL), "step": Or(INT, NULL), "worst": NUM}
_NOTES = {"RNN": STR, "keras": STR, "tf1_cell_weights": [STR], "loop_ops": [STR], "cudnn_ops": [STR],
          "keras3_layer_trainable_weights": Or(NUM, STR), "symbolic_shape": [Or(NUM, NULL)]}
_SCENARIO = {"TF_USE_LEGACY_KERAS": OPT_STR, "error": OPT_STR, "error_type": OPT_STR, "failed_at": OPT_STR,
             "notes": _NOTES, "result": STR, "steps": [STR], "versions": Map(STR)}
_CASE = {"builds": BOOL, "case": STR, "cell": STR, "check_passed": BOOL, "constructed": BOOL, "error": OPT_STR,
         "error_line": OPT_STR, "error_lineno": Or(INT, NULL), "error_summary": OPT_STR, "error_type": OPT_STR,
         "code": STR, "result": STR, "input_dim": INT}
_SPEC = {"cell": STR, "scope": STR, "input_dim": NUM, "units": NUM, "layers": NUM, "multi_rnn_cell": BOOL,
         "ignored": [STR], "other_stacks": [STR],
         "cells": [{"cell": STR, "index": NUM, "input_dim": NUM, "scope": STR, "tf1_class": STR, "units": NUM,
                    "unsupported": [STR], "variables": Map(STR)}]}  # tf/convert.py's Stack.to_dict

# details key -> the shape its workers write (rnnlab/experiments/*.py, rnnlab/tf/*; read by rnnlab/present and
# rnnlab/judge). One table for every experiment: a key means the same wherever it appears. ``paired`` is checked
# against ``PAIRED`` (its series' names depend on the record's metrics).
DETAILS: dict[str, Any] = {
    # every measuring experiment (engine/api.py, tf/measure.py)
    "device": STR, "dtype": STR, "kernel": STR, "label": STR, "peak_mem_method": STR, "keras_dtype_policy": STR,
    "fwd_flops": NUM, "graph_nodes_functions": NUM, "graph_nodes_top": NUM, "matmul_gflops": NUM, "repeats": NUM,
    "warmup": NUM, "rounds": NUM, "worker_wall_s": NUM, "parallel_iterations": NUM, "seq_len": NUM, "first_n": NUM,
    "masked": BOOL, "swap_memory": BOOL, "time_major": BOOL, "xla": BOOL, "transient": BOOL,
    "lengths": Or([NUM], {"max": NUM, "mean": NUM, "min": NUM}), "loadavg": [[NUM]],
    "failed_rounds": Or(NUM, [ANY]), "nonfinite_metrics": Map(STR), "protocol": STR, "condition": CONDITION,
    "matmul_other": COUNT, "roofline_note": STR,  # the matmul probe's load reading; why no roofline is shown
    # varlen
    "checks": Map(_CHECK), "zero_output_for_mask_true": Map(BOOL), "gpu_kernel": STR, "reference": STR,
    "cudnn_mask": Map({"note": STR, "ok": BOOL, "reason": STR}),
    "heatmap": {"axes": [STR], "lengths": [NUM], "rows": [NUM], "steps": [NUM], "z": [[NUM]]},
    "implementation": Map(STR), "observed_steps": Or([NUM], STR), "past_length_outputs": STR,
    # padding, seed003, training
    "bucket_boundaries": [NUM], "epoch_fwd_s": [NUM], "epoch_train_s": [NUM], "model": STR,
    "plan": {"batches": NUM, "loop_steps": NUM, "loop_wasted_pct": NUM, "padded_steps": NUM, "real_steps": NUM,
             "sequences": NUM, "shapes": [[NUM]], "strategy": STR, "wasted_pct": NUM},
    "traces": Map(Map(NUM)), "probe": Map(NUM), "seed_claims": Map(NUM), "control_flow_v2": BOOL,
    "global_step": NUM, "loss_first": NUM, "loss_last": NUM, "not_reproduced": STR,
    "acc_curve": [NUM], "loss_curve": [NUM], "epoch_times_s": [NUM], "batches": STR, "target_acc": NUM,
    "dataset": {"classes": NUM, "features": NUM, "n_test": NUM, "n_train": NUM, "name": STR, "source": STR,
                "steps": NUM},
    "optimizer": {"beta1": NUM, "beta2": NUM, "epsilon": NUM, "lr": NUM, "name": STR},
    # pitfalls
    "builds": BOOL, "cases": [_CASE], "cell_used": STR, "check": STR, "check_passed": BOOL, "error": OPT_STR,
    "error_line": OPT_STR, "error_lineno": Or(INT, NULL), "error_summary": OPT_STR, "error_type": OPT_STR,
    "explanation": STR, "input_dim_diff_case": NUM, "keras_version": STR, "result": STR, "stage": OPT_STR,
    "tf_version": STR,
    # migrate
    "atol": NUM, "checkpoint_variables": [STR], "correction": STR, "cpu_path": STR,
    "cudnn_rules": {"eligible": BOOL, "reasons": [STR]}, "diffs": Map(NUM), "keras3_code": STR,
    "keras_file_mb": NUM, "keras_while_loop": STR, "no_equivalent": [STR], "not_checked": [STR],
    "refused": Map(STR), "scenarios": Map(_SCENARIO), "spec": _SPEC, "summary": STR, "tf1": STR,
    # knobs, precision
    "knob": Or(STR, Map(Or(NUM, BOOL, STR))), "max_abs_diff_note": STR, "seed_code": STR, "seed_code_error": STR,
    "seed_code_error_unknown_time": STR, "what_runs": STR, "compute_dtype": STR, "cpu_flags_checked": [STR],
    "cpu_flags_read": BOOL, "loss_scale": NUM, "path": STR, "policy_code": STR, "policy_keras": STR,
    "policy_output_dtype": STR, "policy_variable_dtypes": [STR], "policy_error": STR,
}
