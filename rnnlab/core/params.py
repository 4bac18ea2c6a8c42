"""Parameters: names, types, defaults and limits shared by the CLI, the URL of a shared view, and records.

A ``Param`` parses text (a CLI ``--set`` value, a query parameter) and validates values; a value outside its limits is
refused with an ``RnnlabError`` that names the parameter and its limits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip

INTERLEAVED, SEQUENTIAL = "interleaved", "sequential"  # the ``protocol`` parameter's two ways of timing a point


def is_interleaved(params: Mapping[str, Any]) -> bool:
    """Whether a point (its params, or a record's details) is timed under the interleaved protocol."""
    return params.get("protocol") == INTERLEAVED


def device_asked(params: Mapping[str, Any]) -> str:
    """The device a point (or a view's query) asks for: its ``device`` ("auto", "cpu" or "gpu"), else the default."""
    return str(params.get("device", PARAMS["device"].default))


# The most points one plan may hold (the cross product of every swept list): checked from the lists' lengths,
# before the product is built, so a huge sweep is refused at once.
MAX_POINTS = 500

_LENGTHS_RE = re.compile(r"^(full|fixed:(\d+)|uniform:(\d+)-(\d+)|rows:(\d+(?:/\d+)*))$")


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "int" | "float" | "choice" | "bool" | "lengths"
    default: Any
    help: str
    lo: float | None = None
    hi: float | None = None
    choices: tuple = ()

    def limits(self) -> str:
        if self.kind in ("int", "float"):
            return f"{self.kind} in [{_num(self.lo)}, {_num(self.hi)}]"
        if self.kind == "choice":
            return "one of " + ", ".join(str(c) for c in self.choices)
        if self.kind == "bool":
            return "true or false"
        return "full, fixed:N, uniform:A-B, or rows:N/N/... (one length per batch row; 0 is an empty row)"

    def parse(self, text: Any) -> Any:
        """Parse one value (text or an already-typed value) and validate it."""
        if isinstance(text, str):
            raw = text.strip()
            try:
                if self.kind == "int":
                    value: Any = int(raw)
                elif self.kind == "float":
                    value = float(raw)
                elif self.kind == "bool":
                    low = raw.lower()
                    if low not in ("true", "false", "1", "0", "yes", "no"):
                        raise ValueError(raw)
                    value = low in ("true", "1", "yes")
                else:
                    value = raw
            except ValueError:
                raise RnnlabError(f"{self.name}={_echo(text)} is not valid: expected {self.limits()}") from None
        else:
            value = text
        return self.validate(value)

    def validate(self, value: Any) -> Any:
        bad = RnnlabError(f"{self.name}={_echo(value)} is out of limits: expected {self.limits()}")
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                else:
                    raise bad
            if not (self.lo <= value <= self.hi):
                raise bad
        elif self.kind == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (self.lo <= value <= self.hi):
                raise bad
            value = float(value)
        elif self.kind == "bool":
            if not isinstance(value, bool):
                raise bad
        elif self.kind == "choice":
            if value not in self.choices:
                raise bad
        elif self.kind == "lengths":
            if not isinstance(value, str) or not _LENGTHS_RE.match(value):
                raise bad
            m = _LENGTHS_RE.match(value)
            if m.group(3) is not None and int(m.group(3)) > int(m.group(4)):
                raise RnnlabError(f"{self.name}={_echo(value)}: in uniform:A-B, A must not exceed B")
            # A row may be empty (length 0: TensorFlow's own benchmark draws lengths in [0, T)), but a batch needs
            # at least one real step somewhere: fixed:N and the top of uniform:A-B start at 1.
            if m.group(2) is not None and int(m.group(2)) < 1:
                raise RnnlabError(f"{self.name}={_echo(value)}: fixed lengths start at 1")
            if m.group(4) is not None and int(m.group(4)) < 1:
                raise RnnlabError(f"{self.name}={_echo(value)}: in uniform:A-B, B must be at least 1")
            if m.group(5) is not None and max(int(x) for x in m.group(5).split("/")) < 1:
                raise RnnlabError(f"{self.name}={_echo(value)}: at least one row needs a length of 1 or more")
        return value


def _echo(value: Any) -> str:
    """A value as an error line quotes it: its repr, cut to 80 characters."""
    return clip(repr(value))


def sweep_size(values: Mapping[str, Any]) -> int:
    """How many points the cross product of ``values`` (name -> list, or one value) holds, from the lists' lengths
    alone: nothing is expanded."""
    n = 1
    for v in values.values():
        n *= len(v) if isinstance(v, (list, tuple)) else 1
    return n


def check_sweep(values: Mapping[str, Any]) -> None:
    """Refuse a sweep of more than ``MAX_POINTS`` points before anything builds it."""
    n = sweep_size(values)
    if n > MAX_POINTS:
        sizes = " x ".join(f"{k} {len(v)}" for k, v in values.items() if isinstance(v, (list, tuple)) and len(v) > 1)
        raise RnnlabError(f"sweep too large: {sizes} = {n:,} points, at most {MAX_POINTS} in one run;"
                          " sweep fewer values")


def _num(x: float | None) -> str:
    return "-inf" if x is None else (str(int(x)) if float(x).is_integer() else str(x))


_P = Param
PARAMS: dict[str, Param] = {p.name: p for p in [
    _P("cell", "choice", "rnn", "cell type: rnn (BasicRNNCell / SimpleRNN, tanh), lstm, gru", choices=("rnn", "lstm", "gru")),
    _P("units", "int", 128, "hidden units per layer", 1, 2048),
    _P("layers", "int", 1, "stacked layers", 1, 8),
    _P("batch", "int", 32, "batch size", 1, 4096),
    _P("seq_len", "int", 100, "time steps (padded length)", 1, 2000),
    _P("input_dim", "int", 64, "input features per step", 1, 4096),
    _P("dtype", "choice", "float32", "compute dtype policy", choices=("float32", "mixed_float16", "bfloat16")),
    _P("lengths", "lengths", "full", "true lengths within the padded batch"),
    _P("time_major", "bool", False, "feed [time, batch, features] instead of [batch, time, features]"),
    _P("parallel_iterations", "int", 32, "dynamic_rnn / while_loop parallel_iterations", 1, 1024),
    _P("swap_memory", "bool", False, "dynamic_rnn / while_loop swap_memory (GPU-CPU swapping)"),
    _P("device", "choice", "auto", "auto picks the GPU when TensorFlow sees one", choices=("auto", "cpu", "gpu")),
    _P("repeats", "int", 30, "timed steps after warm-up (median and quartiles over these)", 1, 2000),
    _P("warmup", "int", 3, "untimed steps after the first call", 0, 200),
    _P("seed", "int", 0, "seed for weights and inputs (same for every variant)", 0, 2**31 - 1),
    _P("threads", "int", 0, "threads the worker's TensorFlow may use (intra- and inter-op, TF1 sessions too); 0: "
       "every core. A ratio holds for its thread count: 1 thread answers 'on one core', whatever else the machine "
       "does", 0, 256),
    _P("timeout_s", "int", 900, "time limit per variant worker, seconds", 5, 7200),
    _P("rounds", "int", 1, "fresh worker processes per variant; the figure is the median of the rounds", 1, 20),
    _P("protocol", "choice", INTERLEAVED, "interleaved: every variant's worker alive at once, timed in short "
       "windows in a random order (paired ratios); sequential: one worker after the other",
       choices=(INTERLEAVED, SEQUENTIAL)),
    _P("live", "int", 16, "interleaved: at most this many workers alive at once; more variants run in groups, each "
       "with the reference", 2, 64),
    _P("budget_s", "int", 120, "interleaved: seconds of timed windows per point, shared by its rounds; windows are "
       "added while a comparison with the reference is too noisy to call", 5, 3600),
    _P("deadline_s", "int", 0, "interleaved: after the first two rounds, no further round starts once the point has "
       "taken this long, wall clock (0: no deadline); a limit, not part of what is measured", 0, 86400),
]}

# A user's own run of an interleaved experiment (the app's Run and ``run`` without a preset alike): up to three
# rounds of fresh processes, ending after two when every comparison is decided (between-process variance in every
# interval), windows for at most 45 s, and no third round that would end past 60 s, so a two-variant question is
# answered, or said to be too busy to decide, within a minute on 2 cores (two rounds of about 25 s at the seed
# configuration). A preset keeps its own shape.
USER_RUN: dict[str, Any] = {"rounds": 3, "budget_s": 45, "deadline_s": 60}
# A preset's run shape: a user's windows (45 s), and no third round that would end past 180 s. The seed preset's twelve
# arms spend about 55 s a round alone (cold builds, first calls, XLA compiles of the training step), which no window
# budget shortens; its 120 s of windows and a third round took 5.7 min on a 2-core Xeon, this shape 3.1-3.3 min.
PRESET_RUN: dict[str, Any] = {"rounds": 3, "budget_s": 45, "deadline_s": 180}
# What an interleaved timing experiment (unroll, knobs, precision) is timed with, after its own configuration.
TIMED = ("device", "repeats", "warmup", "seed", "rounds", "threads", "protocol", "budget_s", "deadline_s", "live",
         "timeout_s")

# Params added after records were first stored, with the value a record without them was measured with: a stored
# record lacking ``rounds`` ran one round (schema 1). Comparisons of params fill these in (judge.select.same_config).
IMPLIED: dict[str, Any] = {"rounds": 1, "protocol": SEQUENTIAL, "budget_s": 120, "live": 16, "threads": 0,
                           "deadline_s": 0}


@dataclass(frozen=True)
class ParamSet:
    """The parameters one experiment takes: global ones (with its own defaults) plus its own."""

    params: tuple[Param, ...]
    _by_name: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "_by_name", {p.name: p for p in self.params})

    def __getitem__(self, name: str) -> Param:
        try:
            return self._by_name[name]
        except KeyError:
            raise RnnlabError(f"unknown parameter {_echo(name)}; known: {', '.join(self._by_name)}") from None

    def names(self) -> list[str]:
        return [p.name for p in self.params]

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def fill(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """All params, defaults filled in, every value validated."""
        out = self.defaults()
        for k, v in values.items():
            out[k] = self[k].parse(v)
        return out

    def parse_assignments(self, assignments: Iterable[str]) -> dict[str, list[Any]]:
        """``["seq_len=25,50", "cell=lstm"]`` -> ``{"seq_len": [25, 50], "cell": ["lstm"]}`` (a list = a sweep)."""
        out: dict[str, list[Any]] = {}
        for a in assignments:
            if "=" not in a:
                raise RnnlabError(f"--set {_echo(a)}: expected KEY=VALUE (e.g. seq_len=100 or seq_len=25,50,100)")
            key, _, text = a.partition("=")
            param = self[key.strip()]
            parts = [t for t in text.split(",")]
            if not text.strip() or any(not t.strip() for t in parts):
                raise RnnlabError(f"--set {param.name}=: empty value; expected {param.limits()}")
            check_sweep({**out, param.name: parts})  # before parsing thousands of values
            out[param.name] = [param.parse(t) for t in parts]
        return out


def param_set(names: Iterable[str], defaults: Mapping[str, Any] | None = None, extra: Iterable[Param] = ()) -> ParamSet:
    """Build an experiment's ParamSet from global names, its own defaults, and its own extra params."""
    defaults = dict(defaults or {})
    ps = []
    for n in names:
        p = PARAMS[n]
        if n in defaults:
            p = Param(p.name, p.kind, p.validate(defaults.pop(n)), p.help, p.lo, p.hi, p.choices)
        ps.append(p)
    for p in extra:
        if p.name in defaults:
            p = Param(p.name, p.kind, p.validate(defaults.pop(p.name)), p.help, p.lo, p.hi, p.choices)
        ps.append(p)
    if defaults:
        raise ValueError(f"defaults for unknown params: {sorted(defaults)}")
    return ParamSet(tuple(ps))


def lengths_for(spec: str, batch: int, seq_len: int, seed: int = 0) -> list[int]:
    """The true length of each batch row for a ``lengths`` value (deterministic from ``seed``).

    Lengths are clipped to ``seq_len``; ``rows:a/b/c`` repeats its list over the batch.
    """
    import random

    m = _LENGTHS_RE.match(spec)
    if not m:
        raise RnnlabError(f"lengths={_echo(spec)}: expected {PARAMS['lengths'].limits()}")
    if spec == "full":
        return [seq_len] * batch
    if m.group(2) is not None:
        return [min(int(m.group(2)), seq_len)] * batch
    if m.group(3) is not None:
        rng = random.Random(seed)
        a, b = int(m.group(3)), int(m.group(4))
        return [min(rng.randint(a, b), seq_len) for _ in range(batch)]
    rows = [int(x) for x in m.group(5).split("/")]
    return [min(rows[i % len(rows)], seq_len) for i in range(batch)]
