"""The one validator of a record's content (``experiments.problems``): what ``import`` refuses and what the read
path (``judge.select.combined``) leaves out. ``core.record.Record.from_dict`` checks the structure (fields, types,
JSON numbers); this module checks every value against the registry and against what the workers write:

- **Text.** Every string (keys included, at any depth) is Unicode without lone surrogates, control characters or
  invisible format characters (bidi overrides U+202A-202E, U+2066-2069, marks U+200E/F, zero-width U+200B-200D,
  U+FEFF: Unicode's category Cf), which could make a machine name read as something it is not in a table, a slide or
  the terminal. This is the one rule for such text: refused here, at the door (``import``), and left out by the read
  path, so no output format needs to escape it. ``details`` strings and ``error`` may hold newlines and tabs
  (captured code and errors), nothing else may. Names and env fields are at most ``LINE_CHARS`` characters,
  ``details`` strings at most ``TEXT_CHARS``.
- **Numbers.** Each metric within the bounds of its unit (``bounds``): a time at least a nanosecond (a build may
  take zero: an eager model builds nothing) and under a day, a rate above zero, a share 0..1 or 0..100, a count or
  difference never negative; nothing near a float's overflow or underflow. Each round's metric names are the
  record's (``max_abs_diff`` is added after the rounds: ``AFTER_ROUNDS``), each round's values obey the same bounds,
  the record's figure lies within its rounds' range (their median) and the rounds agree within ``ROUND_SPREAD``.
- **Shapes** (``experiments.schema``, the schema defined once): env fields (``ENV``), params beyond the
  experiment's own (``EXTRA_PARAMS``), ``rounds`` (at most ``params.rounds`` of them), ``details.paired``
  (``PAIRED``) and the details keys readers read (``DETAILS``); other details keys are only checked as text and
  numbers. Depth and size are bounded. A problem quotes a value or key cut to ``NAME_CHARS`` characters.

Each problem starts with the field it is about ("metrics.fwd_ms: ...", "env.machine: ...") so the import's message
names it and the read path's warning groups by it.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any

from rnnlab.core.errors import RnnlabError
from rnnlab.core.params import IMPLIED
from rnnlab.core.format import METRICS, clip
from rnnlab.core.record import Record, finite_number
from rnnlab.experiments.schema import (ANY, DETAILS, ENV, ENV_OTHER, EXTRA_PARAMS, INT, MAX_WINDOWS, NUM, PAIRED,
                                       Closed, Map, Or, Range)

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
NAME_CHARS = 40  # a key or name quoted in a problem
_MULTILINE_OK = {"\n", "\t"}
_MULTILINE_DROP = str.maketrans(dict.fromkeys(_MULTILINE_OK))


# -- text --------------------------------------------------------------------------------------------------------
def text_problem(s: str, *, multiline: bool = False, limit: int = LINE_CHARS) -> str | None:
    """Why ``s`` cannot be shown and exported as it is (None: it can)."""
    if len(s) > limit:
        return f"longer than {limit} characters"
    if (s.translate(_MULTILINE_DROP) if multiline else s).isprintable():
        return None  # at C speed: str.isprintable is False for every character of the categories refused below
    for ch in s:
        cat = unicodedata.category(ch)
        if cat == "Cs":
            return f"a lone surrogate (U+{ord(ch):04X}) is not valid Unicode"
        if cat in ("Cc", "Zl", "Zp") and not (multiline and ch in _MULTILINE_OK):
            return f"holds a control character (U+{ord(ch):04X})"
        if cat == "Cf":
            return f"holds an invisible format character (U+{ord(ch):04X}, bidi or zero-width)"
    return None


def _name(k: Any) -> str:
    """A key or value as a problem quotes it: at most ``NAME_CHARS`` characters."""
    return clip(k, NAME_CHARS)


# -- numbers -----------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1024)  # a few dozen metric names, asked about for every figure of every record
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
def _quote(v: Any) -> str:
    """`` 1e+308``, `` [1, 2]``, `` '0.1'``: a short value after its kind, cut to ``NAME_CHARS``."""
    return "" if v is None or isinstance(v, dict) else f" {_name(repr(v))}"


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
    if isinstance(shape, Range):
        return shape.holds(v)
    if isinstance(shape, Closed) and isinstance(v, dict) and set(v) - set(shape):
        return False
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
    if isinstance(v, dict) and isinstance(shape, Closed) and set(v) - set(shape):
        return f"{where}.{_name(sorted(set(v) - set(shape))[0])}: not a field of {where} ({', '.join(shape)})"
    if isinstance(shape, Range) and not isinstance(v, (list, dict, str)):
        return f"{where}: {_name(v)} is not {shape.words()}"
    if isinstance(v, dict) and isinstance(shape, (Map, dict)):
        for k, x in v.items():
            s = shape.value if isinstance(shape, Map) else shape.get(k, ANY)
            if not _fits(x, s):
                return _shape_problem(x, s, f"{where}.{_name(k)}")
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
    elif (isinstance(v, list) and depth <= MAX_DEPTH and count[0] + len(v) <= MAX_ITEMS
          and all(type(x) is float for x in v)):
        count[0] += len(v)  # a series of numbers (windows, a heatmap's row): each counted, a place named only when
        for i, x in enumerate(v):  # one is wrong
            if abs(x) > 1e38:
                out.append(f"{where}[{i}]: {_num(x)} is not plausible (at most 1e38 in size)")
                return
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
            _walk(x, f"{where}.{_name(k)}" if isinstance(v, dict) else f"{where}[{k}]", depth + 1, out, count,
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


def paired_problems(record: Record) -> list[str]:
    """``details.paired``: {session: {series: [[window, ...] per round]}}, exactly that deep; a series is one of
    the record's metrics (or ``format.METRICS``) with a suffix of ``PAIRED``; at most ``params.rounds`` rounds."""
    paired = record.details.get("paired")
    if paired is None and "paired" not in record.details:
        return []
    if not isinstance(paired, dict):
        return [f"details.paired: {_kind(paired)}, not {{session: {{metric: [[windows] per round]}}}}"]
    known, cap = set(record.metrics) | set(METRICS), _planned_rounds(record)
    for sid, series in paired.items():
        where = f"details.paired.{_name(sid)}"
        if not isinstance(series, dict):
            return [f"{where}: {_kind(series)}, not {{metric: [[windows] per round]}}"]
        for name, per_round in series.items():
            p = _series_problem(name, per_round, known, cap)
            if p:
                return [f"{where}.{_name(name)}{p}"]
    return []


def _series_problem(name: str, per_round: Any, known: set, cap: int) -> str | None:
    base, at, suffix = name.partition("@")
    shape = PAIRED.get(at + suffix)
    if shape is None or base not in known:
        return f": not a metric's windows (or {', '.join(s for s in PAIRED if s)})"
    if not isinstance(per_round, list):
        return f": {_kind(per_round)}, not a list of rounds' windows"
    if len(per_round) > cap:
        return f": {len(per_round):,} rounds of windows, more than params.rounds={cap}"
    for i, windows in enumerate(per_round):
        if not isinstance(windows, list):
            return f"[{i}]: {_kind(windows)}, not a round's list of windows"
        if len(windows) > MAX_WINDOWS:
            return f"[{i}]: more than {MAX_WINDOWS:,} windows"
        for j, x in enumerate(windows):
            if not shape.holds(x) or finite_number(x) is None:
                got = _name(x) if finite_number(x) is not None else _kind(x) + _quote(x)
                return f"[{i}][{j}]: {got} is not {shape.words()}"
    return None


def _planned_rounds(record: Record) -> int:
    """The rounds the record's params asked for (``IMPLIED``'s 1 when it predates rounds)."""
    n = record.params.get("rounds", IMPLIED["rounds"])
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 1 else IMPLIED["rounds"]


# -- the record --------------------------------------------------------------------------------------------------
def problems(record: Record, registry: dict, *, unknown_params: bool = True) -> list[str]:
    """See ``experiments.problems`` (which passes the registry)."""
    for name in ("key", "experiment", "variant", "created_at"):
        p = text_problem(getattr(record, name))
        if p:
            return [f"{name}: {p}"]
    exp = registry.get(record.experiment)
    if exp is None:
        return [f"experiment={_name(repr(record.experiment))} is not known; known: {', '.join(registry)}"]
    out = []
    if record.variant not in exp.variants:
        out.append(f"variant={_name(repr(record.variant))} is not a variant of {exp.name}")
    known = set(exp.params.names())
    if unknown_params:  # an import: records carry every param, defaults filled in (DESIGN.md)
        missing = [k for k in exp.params.names() if k not in record.params and k not in IMPLIED]
        if missing:
            out.append(f"params.{missing[0]}: missing (a record holds every param of {exp.name})")
    for k, v in record.params.items():
        p = text_problem(k) or (text_problem(v) if isinstance(v, str) else None)
        if p:
            out.append(f"params.{_name(k)}: {p}")
            continue
        if k not in known and k in EXTRA_PARAMS:
            if not EXTRA_PARAMS[k].holds(v):
                out.append(f"params.{k}: {_name(v)} is not {EXTRA_PARAMS[k].words()}")
            continue
        if k not in known:
            if unknown_params:
                out.append(f"params.{_name(k)}: not a parameter of {exp.name}")
            elif not _scalar(v):
                out.append(f"params.{_name(k)}: not a string, number or boolean")
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
    out += details_problems(dict(record.details)) or paired_problems(record)
    return out


def metric_problems(record: Record) -> list[str]:
    out = []
    for k, v in record.metrics.items():
        p = text_problem(k) or number_problem(k, v)
        if p:
            out.append(f"metrics.{_name(k)}: {p}")
    names = set(record.metrics)
    if len(record.rounds) > _planned_rounds(record):
        return out + [f"rounds: {len(record.rounds):,} rounds, more than params.rounds={_planned_rounds(record)}"]
    for i, rnd in enumerate(record.rounds, 1):
        extra = sorted(set(rnd) - names)
        if extra:
            out.append(f"rounds[{i}].{_name(extra[0])}: not among the record's metrics")
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
    """Each env field of ``ENV`` (text or null; ``cores`` and ``matmul_gflops`` numbers within their ``Range``),
    any other text or null: never a list, an object, a boolean or a number where text belongs."""
    for k, v in env.items():
        p = text_problem(k)
        if p:
            return [f"env: a key {p}"]
        shape = ENV.get(k, ENV_OTHER)
        if not _fits(v, shape):
            ranges = [s for s in shape.shapes if isinstance(s, Range)]
            if not ranges:
                return [f"env.{_name(k)}: not text or null (got {_kind(v)}{_quote(v)})"]
            f = finite_number(v)
            what = "not a finite number:" if f is None else f"{_num(f)} is not"
            return [f"env.{k}: {what} {ranges[0].words()} or null"]
        p = text_problem(v) if isinstance(v, str) else None
        if p:
            return [f"env.{k}: {p}"]
    return []


def _scalar(v) -> bool:
    return v is None or isinstance(v, (str, bool, int, float))


def first_field(problem: str) -> str:
    """The field a problem is about ("params.units", "metrics.fwd_ms", "details.heatmap"): the read path's
    warnings count by it."""
    return re.split(r"[=: \[]", problem, maxsplit=1)[0]
