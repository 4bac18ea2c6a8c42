"""Numbers and units, in one place: the app, the CLI and every export format through these functions, so slides
match the screen."""

from __future__ import annotations

import math
import re
from typing import Any

# metric name -> (column label with unit, how to format)
METRICS: dict[str, tuple[str, str]] = {
    "build_s": ("build (s)", "s"),
    "first_build_s": ("first build (s)", "s"),
    "graph_nodes": ("graph nodes", "int"),
    "first_call_s": ("first call (s)", "s"),
    "fwd_ms": ("forward (ms)", "ms"),
    "fwd_ms_p25": ("forward p25 (ms)", "ms"),
    "fwd_ms_p75": ("forward p75 (ms)", "ms"),
    "train_ms": ("train step (ms)", "ms"),
    "train_ms_p25": ("train p25 (ms)", "ms"),
    "train_ms_p75": ("train p75 (ms)", "ms"),
    "train_build_s": ("train build (s)", "s"),
    "train_first_call_s": ("train first call (s)", "s"),
    "peak_mem_mb": ("peak memory (MB)", "mb"),
    "max_abs_diff": ("max |diff| vs ref", "sci"),
    "ref_abs_diff": ("max |diff| vs NumPy", "sci"),
    "gflops": ("GFLOP/s", "g"),
    "roofline_frac": ("of matmul peak", "pct"),
}

MISSING = "–"  # a value not measured, not applicable or unknown: every table, sentence and export writes this
NOT_RUN = "not run yet"  # a table's cell for something no record holds yet (a talk deck leaves such rows out)


# A chart axis's tick labels, by the rule of :func:`fmt_value`'s "sci" kind, as a Vega expression: one rule for every
# tick of an axis (Vega's own default mixed "1e-7" and "0.000001" on one log axis): plain from 0.001 up, thousands
# separated ("0.002", "25", "2,500"), scientific below ("1e-7"); never a number between 0.001 and 1000 in scientific.
# A tick Vega leaves unlabelled (a log axis labels only some of its ticks) stays unlabelled.
AXIS_LABELS = ("!datum.label ? '' : datum.value == 0 ? '0' : abs(datum.value) < 0.001 ? format(datum.value, '.0e') "
               ": format(datum.value, ',~r')")


def label(metric: str) -> str:
    return METRICS.get(metric, (metric.replace("_", " "), "g"))[0]


_UNITS = {"s": "s", "ms": "ms", "mb": "MB", "pct": "%"}  # a metric's format -> the unit its figures are in


def unit(metric: str) -> str:
    """The unit a metric's figures are in ("ms", "MB"); "" for a count or a plain number."""
    return _UNITS.get(METRICS.get(metric, ("", ""))[1], "")


def fmt_value(value: Any, kind: str = "g") -> str:
    """One number as text. ``None`` (not measured) is :data:`MISSING`, never zero."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, (int, float)):
        return str(value)
    v = float(value)
    if kind == "int":
        return f"{int(round(v)):,}"
    if kind == "sci":  # a tiny difference in scientific notation; a figure a person reads plainly (0.6, 1.4) not
        return "0" if v == 0 else _sig(v) if 1e-3 <= abs(v) < 1e3 else f"{v:.1e}"
    if kind == "pct":
        return f"{v * 100:.1f}%" if v >= 0.001 else f"{v * 100:.2f}%"
    if kind == "mb":
        return f"{v:,.0f}" if abs(v) >= 10 else f"{v:.1f}"
    return _sig(v)


def _sig(v: float) -> str:
    """Three significant digits, thousands separated: 0.0123, 1.23, 12.3, 123, 1,234."""
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    digits = max(2, -int(math.floor(math.log10(a))) + 2)
    return f"{v:.{digits}f}"


def fmt_metric(metric: str, value: Any) -> str:
    return fmt_value(value, METRICS.get(metric, ("", "g"))[1])


def fmt_ratio(r: float | None) -> str:
    """``1.53`` -> ``"1.53x"``; missing -> en dash."""
    if r is None or not math.isfinite(r):
        return MISSING
    return f"{r:.2f}x" if r < 10 else f"{r:.1f}x" if r < 100 else f"{r:,.0f}x"


def fmt_diff(value: float | None) -> str:
    """A max |difference| in a sentence: three significant digits from 0.001 up (0.599, 1.32), scientific below
    (2.7e-07); missing -> en dash."""
    if value is None or not math.isfinite(value):
        return MISSING
    return fmt_value(value) if abs(value) >= 1e-3 else fmt_value(value, "sci")


def fmt_percent(share: float | None) -> str:
    """A share as a whole percentage, as sentences say it: ``0.197`` -> ``"20%"``; missing -> en dash."""
    if share is None or not math.isfinite(share):
        return MISSING
    return f"{share * 100:.0f}%"


def fmt_seconds(s: float) -> str:
    return f"{s:.1f} s" if s < 120 else f"{s / 60:.1f} min"


def fmt_left(expected_s: float | None, elapsed_s: float) -> str:
    """The time a run has left by its estimate: "about 40 s left", "about 3.5 min left"; "taking longer than
    estimated" once past it (never a negative time); "" without an estimate. An estimate is rough: whole seconds."""
    if expected_s is None:
        return ""
    left = expected_s - elapsed_s
    if left <= 0:
        return "taking longer than estimated"
    return f"about {max(1, round(left))} s left" if left < 120 else f"about {left / 60:.1f} min left"


def fmt_params(params: dict, names: tuple[str, ...] = ("cell", "layers", "units", "batch", "seq_len",
                                                       "input_dim", "dtype", "lengths")) -> str:
    """``cell=rnn, 3x128, batch 32, 100 steps, 64 in, float32``: a configuration in a caption."""
    parts = []
    if "cell" in params:
        parts.append(str(params["cell"]))
    if "layers" in params and "units" in params:
        parts.append(f"{params['layers']}x{params['units']}")
    elif "units" in params:
        parts.append(f"{params['units']} units")
    if "batch" in params:
        parts.append(f"batch {params['batch']}")
    if "seq_len" in params:
        parts.append(f"{params['seq_len']} steps")
    if "input_dim" in params:
        parts.append(f"{params['input_dim']} in")
    if params.get("dtype") not in (None, "float32"):
        parts.append(str(params["dtype"]))
    if params.get("lengths") not in (None, "full"):
        parts.append(f"lengths {params['lengths']}")
    return ", ".join(parts)


def fmt_rate(gflops: float) -> str:
    """A matmul rate as the sidebar, chart titles and tables write it: "307 GFLOP/s"."""
    return f"{gflops:,.0f} GFLOP/s"


# -- intervals (core.stats.Interval: lo, mid, hi, how, n, known) ---------------------------------------------
def _bare(x: float) -> str:
    return fmt_ratio(x).removesuffix("x")  # "0.60"


def fmt_span(iv, *, invert: bool = False) -> str:
    """An interval's bounds, "0.60–0.66" ("" when no spread is known); ``invert``: of the reciprocal ratio."""
    if iv is None or not iv.known:
        return ""
    lo, hi = (1 / iv.hi, 1 / iv.lo) if invert else (iv.lo, iv.hi)
    return f"{_bare(lo)}–{_bare(hi)}"


def fmt_ratio_cell(iv) -> str:
    """A ratio as every table writes it: "0.63x (0.60–0.66)"; "0.63x" without a known spread; "–" without a ratio."""
    if iv is None:
        return MISSING
    return fmt_ratio(iv.mid) + (f" ({fmt_span(iv)})" if iv.known else "")


def interval_words(iv) -> str:
    """Where an interval comes from, for a sentence: "from 40 paired windows", "across 5 rounds", "from the timed
    steps' quartiles", "exact: a count", ""."""
    if iv is None or not iv.known:
        return ""
    if iv.how == "paired":
        return f"from {iv.n} paired windows"
    if iv.how == "exact":
        return "exact: a count"
    return f"across {iv.n} rounds" if iv.how == "rounds" else "from the timed steps' quartiles"


def clip(text: object, limit: int = 80) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis as the last one when cut: a value echoed back in an error
    line, a property with a length limit."""
    text = str(text)
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value: object) -> object:
    """A CSV cell that a spreadsheet will not run as a formula: text starting with = + - @ (or a tab or carriage
    return) gets a leading single quote (OWASP's advice); numbers, and text that reads as one ("-1.5"), stay as they
    are. Every CSV rnnlab writes goes through this."""
    if not isinstance(value, str) or not value.startswith(_FORMULA_START):
        return value
    try:
        float(value)
        return value
    except ValueError:
        return "'" + value


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")
_MD_RAW = re.compile(r"<|(?<=\])\(|&(?=#?\w+;)|(?<![\w\\])(?:[=@](?=\S)|\+(?=[A-Za-z]))")
_MD_ENTITY = {"<": "&lt;", "&": "&amp;"}  # no tag opens without "<" (so "->" stays as it is)


def md_escape(text: object) -> str:
    """Text from a URL, a file or an error shown literally inside Markdown that a page renders (no links, images,
    emphasis, HTML): a backslash before every Markdown sign."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


def md_text(text: object) -> str:
    """Text written into an exported Markdown file (``exporters.md``: every title, caption, cell, takeaway and
    provenance line): readable as it is, yet never raw HTML (``<script>`` as ``&lt;script>``), never a link or an
    image (``[x]\\(url)``), and a word starting like a spreadsheet formula (``=HYPERLINK(``, ``+cmd``, ``@SUM``; not ``-``, which starts
    every command-line flag) gets a backslash, which Markdown does not show and a spreadsheet the table is pasted into does not run."""
    return _MD_RAW.sub(lambda m: _MD_ENTITY.get(m.group(), "\\" + m.group()), str(text))


def sentence_start(text: str) -> str:
    """A sentence that now stands on its own ("the Keras layer builds ..." after its "On <machine>, " went to a
    lead-in) with a capital, unless it starts with code (``static_rnn``, ``tf.function``, ``keras_cell``), which
    keeps its case."""
    text = text.strip()
    first = text.split(" ", 1)[0]
    if not text[:1].islower() or re.search(r"[_.(\[=0-9]|[a-z][A-Z]", first):
        return text
    return text[0].upper() + text[1:]
