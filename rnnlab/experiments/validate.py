"""The one validator of a record's content (``experiments.problems``): what ``import`` refuses and what the read
path (``judge.select.combined``) leaves out. ``core.record.Record.from_dict`` checks the structure (fields, types,
JSON numbers); this module checks every value against the registry and against what the workers write:

- **Text.** Every string (keys included, at any depth) is Unicode without lone surrogates or control characters;
  ``details`` strings and ``error`` may hold newlines and tabs (captured code and errors), nothing else may. Names
  and env fields are at most ``LINE_CHARS`` characters, ``details`` strings at most ``TEXT_CHARS``.
- **Numbers.** Each metric within the bounds of its unit (``bounds``): a time at least a nanosecond (a build may
  take zero: an eager model builds nothing) and under a day, a rate above zero, a share 0..1 or 0..100, a count or
  difference never negative; nothing near a float's overflow or underflow. Each round's metric names are the
  record's (``max_abs_diff`` is added after the rounds: ``AFTER_ROUNDS``), each round's values obey the same bounds,
  the record's figure lies within its rounds' range (their median) and the rounds agree within ``ROUND_SPREAD``.
- **details.** The keys readers read have the shapes the workers write (``DETAILS``); other keys are only checked
  as text and numbers. Depth and size are bounded.

Each problem starts with the field it is about ("metrics.fwd_ms: ...", "env.machine: ...") so the import's message
names it and the read path's warning groups by it.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from rnnlab.core.errors import RnnlabError
from rnnlab.core.params import IMPLIED
from rnnlab.core.record import Record, finite_number

LINE_CHARS = 200  # a name, a param's or an env field's text
ERROR_CHARS = 4000  # a failed variant's reason
TEXT_CHARS = 20000  # a details string (captured code, an error's full text)
MAX_DEPTH = 8  # details nesting
MAX_ITEMS = 100_000  # numbers and strings in one record's details
DAY_S = 86400.0
TINY = 1e-9  # the shortest time (s) or the lowest rate a measurement can plausibly report: a ratio of two stays finite
SMALLEST = 1e-30  # a nonzero figure below this is no measurement (and its ratios overflow)
ROUND_SPREAD = 1000.0  # how far apart one measurement's rounds may plausibly be
AFTER_ROUNDS = ("max_abs_diff",)  # metrics computed from the rounds' outputs, so absent from each round
_ENV_NUMBERS = {"cores": (1, 1e5), "matmul_gflops": (0, 1e9)}  # env fields read as numbers (machine classes)
_MULTILINE_OK = {"\n", "\t"}


# -- text --------------------------------------------------------------------------------------------------------
def text_problem(s: str, *, multiline: bool = False, limit: int = LINE_CHARS) -> str | None:
    """Why ``s`` cannot be shown and exported as it is (None: it can)."""
    if len(s) > limit:
        return f"longer than {limit} characters"
    for ch in s:
        cat = unicodedata.category(ch)
        if cat == "Cs":
            return f"a lone surrogate (U+{ord(ch):04X}) is not valid Unicode"
        if cat in ("Cc", "Zl", "Zp") and not (multiline and ch in _MULTILINE_OK):
            return f"holds a control character (U+{ord(ch):04X})"
    return None


# -- numbers -----------------------------------------------------------------------------------------------------
def bounds(metric: str) -> tuple[float, float, bool]:
    """``(low, high, low_open)`` a metric's value must lie in, from its unit (the end of its name). ``low_open``:
    the low bound itself is refused. A time is at least ``TINY`` (a build may take zero: an eager model builds
    nothing)."""
    if metric.endswith("_per_s") or metric in ("gflops", "matmul_gflops"):
        return TINY, 1e9, False  # a rate
    if re.search(r"(^|_)s(_|$)", metric):
        return (0.0, DAY_S, False) if "build" in metric else (TINY, DAY_S, False)
    if re.search(r"(^|_)ms(_|$)", metric):
        return TINY * 1e3, DAY_S * 1e3, False
    if metric.endswith("_pct"):
        return 0.0, 100.0, False
    if metric == "roofline_frac":
        return 0.0, 100.0, False  # over 1 when a noisy round beats the probe; flagged on screen, not refused
    if metric.endswith(("_acc", "_frac")):
        return 0.0, 1.0, False
    if metric.endswith("_vs_float32"):
        return 0.0, 1e6, True  # a ratio to the float32 run
    if metric.endswith("_mb"):
        return 0.0, 1e8, False
    return 0.0, 1e38, False  # counts, checks (0/1), differences, losses: never negative, within float32's range


def number_problem(metric: str, v: Any) -> str | None:
    f = finite_number(v)
    if f is None:
        return "not a finite number"
    if f != 0 and abs(f) < SMALLEST:
        return f"{_num(f)} is too small to be a measurement (0, or at least {SMALLEST:g})"
    low, high, low_open = bounds(metric)
    if f < low or (low_open and f == low) or f > high:
        side = f"above {low:g}" if low_open else f"at least {low:g}"
        return f"{_num(f)} is not plausible (expected {side} and at most {high:g})"
    return None


def _num(f: float) -> str:
    return f"{f:.4g}"


# -- details -----------------------------------------------------------------------------------------------------
class Map:
    """A JSON object whose keys are free text and whose values all have one shape."""

    def __init__(self, value):
        self.value = value


class Or:
    def __init__(self, *shapes):
        self.shapes = shapes


ANY = object()
NUM, INT, STR, BOOL, NULL = float, int, str, bool, type(None)
OPT_STR = Or(STR, NULL)
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
# rnnlab/judge). One table for every experiment: a key means the same wherever it appears.
DETAILS: dict[str, Any] = {
    # every measuring experiment (engine/api.py, tf/measure.py)
    "device": STR, "dtype": STR, "kernel": STR, "label": STR, "peak_mem_method": STR, "keras_dtype_policy": STR,
    "fwd_flops": NUM, "graph_nodes_functions": NUM, "graph_nodes_top": NUM, "matmul_gflops": NUM, "repeats": NUM,
    "warmup": NUM, "rounds": NUM, "worker_wall_s": NUM, "parallel_iterations": NUM, "seq_len": NUM, "first_n": NUM,
    "masked": BOOL, "swap_memory": BOOL, "time_major": BOOL, "xla": BOOL, "transient": BOOL,
    "lengths": Or([NUM], {"max": NUM, "mean": NUM, "min": NUM}), "loadavg": [[NUM]],
    "failed_rounds": Or(NUM, [ANY]), "nonfinite_metrics": Map(STR),
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


def _kind(v: Any) -> str:
    return {bool: "a boolean", int: "a number", float: "a number", str: "text", list: "a list", dict: "an object",
            type(None): "null"}.get(type(v), type(v).__name__)


def _fits(v: Any, shape: Any) -> bool:
    """``v`` has ``shape`` (the outer layers only; ``_shape_problem`` walks in)."""
    if shape is ANY:
        return True
    if isinstance(shape, Or):
        return any(_fits(v, s) for s in shape.shapes)
    if shape is NUM:
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if shape is INT:
        return isinstance(v, int) and not isinstance(v, bool)
    if isinstance(shape, type):
        return isinstance(v, shape)
    if isinstance(shape, list):
        return isinstance(v, list) and all(_fits(x, shape[0]) for x in v)
    if isinstance(shape, Map):
        return isinstance(v, dict) and all(_fits(x, shape.value) for x in v.values())
    if isinstance(shape, dict):
        return isinstance(v, dict) and all(_fits(v[k], s) for k, s in shape.items() if k in v)
    return False


def _shape_problem(v: Any, shape: Any, where: str) -> str | None:
    if _fits(v, shape):
        return None
    if isinstance(shape, Or):  # descend into the alternative of v's own kind (a list into the list shape)
        same = [s for s in shape.shapes if isinstance(v, list) and isinstance(s, list)
                or isinstance(v, dict) and isinstance(s, (Map, dict))]
        if same:
            return _shape_problem(v, same[0], where)
    if isinstance(shape, list) and isinstance(v, list):
        for i, x in enumerate(v):
            if not _fits(x, shape[0]):
                return _shape_problem(x, shape[0], f"{where}[{i}]")
    if isinstance(v, dict) and isinstance(shape, (Map, dict)):
        for k, x in v.items():
            s = shape.value if isinstance(shape, Map) else shape.get(k, ANY)
            if not _fits(x, s):
                return _shape_problem(x, s, f"{where}.{k}")
    return f"{where}: {_kind(v)} is not what the experiment writes here"


def _walk(v: Any, where: str, depth: int, out: list[str], count: list[int], *, multiline: bool) -> None:
    """Text and numbers at any depth: the first problem found goes to ``out``."""
    count[0] += 1
    if out:
        return
    if count[0] > MAX_ITEMS:
        out.append(f"{where}: more than {MAX_ITEMS:,} values")
    elif isinstance(v, str):
        p = text_problem(v, multiline=multiline, limit=TEXT_CHARS if multiline else LINE_CHARS)
        if p:
            out.append(f"{where}: {p}")
    elif isinstance(v, float) and abs(v) > 1e38:
        out.append(f"{where}: {_num(v)} is not plausible (at most 1e38 in size)")
    elif isinstance(v, int) and not isinstance(v, bool) and abs(v) > 10**18:
        out.append(f"{where}: a number too large")
    elif isinstance(v, (list, dict)):
        if depth > MAX_DEPTH:
            out.append(f"{where}: nested deeper than {MAX_DEPTH}")
            return
        items = v.items() if isinstance(v, dict) else enumerate(v)
        for k, x in items:
            if isinstance(k, str):
                p = text_problem(k)
                if p:
                    out.append(f"{where}: a key {p}")
                    return
            _walk(x, f"{where}.{k}" if isinstance(v, dict) else f"{where}[{k}]", depth + 1, out, count,
                  multiline=multiline)


def details_problems(details: dict) -> list[str]:
    out: list[str] = []
    _walk(details, "details", 0, out, [0], multiline=True)
    if out:
        return out
    for k, v in details.items():
        shape = DETAILS.get(k)
        if shape is not None:
            p = _shape_problem(v, shape, f"details.{k}")
            if p:
                return [p]
    return []


# -- the record --------------------------------------------------------------------------------------------------
def problems(record: Record, registry: dict, *, unknown_params: bool = True) -> list[str]:
    """See ``experiments.problems`` (which passes the registry)."""
    for name in ("key", "experiment", "variant", "created_at"):
        p = text_problem(getattr(record, name))
        if p:
            return [f"{name}: {p}"]
    exp = registry.get(record.experiment)
    if exp is None:
        return [f"experiment={record.experiment!r} is not known; known: {', '.join(registry)}"]
    out = []
    if record.variant not in exp.variants:
        out.append(f"variant={record.variant!r} is not a variant of {exp.name}")
    known = set(exp.params.names())
    if unknown_params:  # an import: records carry every param, defaults filled in (DESIGN.md)
        missing = [k for k in exp.params.names() if k not in record.params and k not in IMPLIED]
        if missing:
            out.append(f"params.{missing[0]}: missing (a record holds every param of {exp.name})")
    for k, v in record.params.items():
        p = text_problem(k) or (text_problem(v) if isinstance(v, str) else None)
        if p:
            out.append(f"params.{k}: {p}")
            continue
        if k not in known:
            if unknown_params:
                out.append(f"params.{k}: not a parameter of {exp.name}")
            elif not _scalar(v):
                out.append(f"params.{k}: not a string, number or boolean")
            continue
        try:
            exp.params[k].validate(v)
        except RnnlabError as e:
            out.append(f"params.{e}")
    if record.error is not None:
        p = text_problem(record.error, multiline=True, limit=ERROR_CHARS)
        if p:
            out.append(f"error: {p}")
    out += metric_problems(record)
    out += env_problems(record.env)
    out += details_problems(dict(record.details))
    return out


def metric_problems(record: Record) -> list[str]:
    out = []
    for k, v in record.metrics.items():
        p = text_problem(k) or number_problem(k, v)
        if p:
            out.append(f"metrics.{k}: {p}")
    names = set(record.metrics)
    for i, rnd in enumerate(record.rounds, 1):
        extra = sorted(set(rnd) - names)
        if extra:
            out.append(f"rounds[{i}].{extra[0]}: not among the record's metrics")
            break
        for k, v in rnd.items():
            p = number_problem(k, v)
            if p:
                out.append(f"rounds[{i}].{k}: {p}")
                break
    if record.rounds and not out:
        missing = sorted(names - set().union(*map(set, record.rounds)) - set(AFTER_ROUNDS))
        if missing:
            out.append(f"rounds: no round holds the metric {missing[0]}")
        out += _round_spread(record)[:1]
    return out


def _round_spread(record: Record) -> list[str]:
    """A record's figure is the median of its rounds, so it lies within their range; and the rounds of one
    measurement agree within ``ROUND_SPREAD`` (the bundled ones within 3x). Ratios of such rounds stay finite."""
    out = []
    for k, v in record.metrics.items():
        vals = [float(r[k]) for r in record.rounds if k in r]
        if not vals:
            continue
        lo, hi = min(vals), max(vals)
        slack = 1e-9 * max(abs(lo), abs(hi), 1e-300)
        if not lo - slack <= v <= hi + slack:
            out.append(f"metrics.{k}: {_num(v)} is not the median of its rounds ({_num(lo)} to {_num(hi)})")
        pos = [x for x in vals if x > 0]
        if pos and max(pos) > ROUND_SPREAD * min(pos):
            out.append(f"rounds: {k} ranges from {_num(min(pos))} to {_num(max(pos))}, more than {ROUND_SPREAD:g}x")
    return out


def env_problems(env: dict) -> list[str]:
    out = []
    for k, v in env.items():
        p = text_problem(k)
        if p:
            out.append(f"env: a key {p}")
            continue
        if k in _ENV_NUMBERS and v is not None:
            f = finite_number(v)
            low, high = _ENV_NUMBERS[k]
            if f is None:
                out.append(f"env.{k}: not a finite number")
            elif not low <= f <= high or (k == "matmul_gflops" and f == 0):
                out.append(f"env.{k}: {_num(f)} is not plausible (expected {low:g} to {high:g})")
            continue
        values = v if isinstance(v, list) else [v]
        if not all(_scalar(x) for x in values):
            out.append(f"env.{k}: not a string, number or list of them")
            continue
        for x in values:
            p = text_problem(x) if isinstance(x, str) else (None if finite_number(x) is not None or x is None
                                                            or isinstance(x, bool) else "not a finite number")
            if p:
                out.append(f"env.{k}: {p}")
                break
    return out


def _scalar(v) -> bool:
    return v is None or isinstance(v, (str, bool, int, float))


def first_field(problem: str) -> str:
    """The field a problem is about ("params.units", "metrics.fwd_ms", "details.heatmap"): the read path's
    warnings count by it."""
    return re.split(r"[=: \[]", problem, maxsplit=1)[0]
