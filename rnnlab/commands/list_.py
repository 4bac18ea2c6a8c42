"""``python -m rnnlab list [--json]``: experiments, their variants, presets and every parameter's type, default
and limits."""

from __future__ import annotations

import json
import textwrap

from rnnlab import experiments
from rnnlab.commands._output import WIDTH, heading, wrap, width_of
from rnnlab.engine import api
from rnnlab.tf.variants import label


def setup_arguments(sub) -> None:
    p = sub.add_parser("list", help="list experiments, variants, presets and parameters with their limits")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=main)


def run() -> list[dict]:
    out = []
    for e in experiments.all_experiments():
        out.append({
            "name": e.name, "title": e.title, "summary": e.summary, "reference": e.reference,
            "variants": [{"name": v, "label": label(v)} for v in e.variants],
            "default_variants": list(e.default_variants),
            "own_run": api.own_run_words(e.name),
            "presets": {k: dict(v) for k, v in e.presets.items()},
            "params": [{"name": p.name, "type": p.kind, "default": p.default, "limits": p.limits(), "help": p.help}
                       for p in e.params.params],
            "metrics": dict(e.metrics_doc),
        })
    return out


DEFAULT_MAX = 18  # the defaults column's width at most: a longer default takes its own line, the columns stay put
LIMITS_MIN = 30  # the limits column's width at least; narrower, the limits start on the next line, under the name
GAP = "  "


def text(data: list[dict], width: int | None = WIDTH) -> str:
    """:func:`run`'s experiments as text, wrapped to ``width`` columns (None: one line each, however long). The
    parameters are one table for every experiment: name, type, default and limits at the same columns throughout,
    a parameter's limits continued under its limits column (:func:`_param_lines`)."""
    params = [p for e in data for p in e["params"]]
    name_w = max([len(p["name"]) for p in params] + [4])
    type_w = max([len(p["type"]) for p in params] + [4])
    default_w = min(DEFAULT_MAX, max([len(str(p["default"])) for p in params] + [4]))
    out: list[str] = []
    for e in data:
        out += heading(f"{e['name']}: {e['title']}", width)
        out += wrap(f"  {e['summary']}", width, "  ")
        out += wrap("  variants: " + ", ".join(v["name"] for v in e["variants"]), width, " " * 12)
        out += wrap("  presets:  " + ", ".join(e["presets"]), width, " " * 12)
        if e.get("own_run"):
            out += wrap("  " + e["own_run"], width, "  ")
        for p in e["params"]:
            out += _param_lines(p, (name_w, type_w, default_w), width)
        out.append("")
    return "\n".join(out)


def _param_lines(p: dict, widths: tuple[int, int, int], width: int | None) -> list[str]:
    """One parameter's row: name, type, "default X", limits. A default wider than its column is written whole and
    the limits go on the next line under their column; limits that would have fewer than ``LIMITS_MIN`` columns
    start on the next line, indented under the type (the columns never shift from one row to the next)."""
    name_w, type_w, default_w = widths
    default = str(p["default"])
    lead = f"    {p['name']:<{name_w}}{GAP}{p['type']:<{type_w}}{GAP}default "
    col = len(lead) + default_w + len(GAP)
    limits = str(p["limits"])
    if width is None:
        return [f"{lead}{default:<{default_w}}{GAP}{limits}"]
    if width - col < LIMITS_MIN:  # a narrow terminal: the limits under the row, indented
        col = 4 + name_w + len(GAP)
        return wrap(f"{lead}{default}", width, " " * col) + _under(limits, col, width)
    if len(default) > default_w:
        return wrap(f"{lead}{default}", width, " " * len(lead)) + _under(limits, col, width)
    return textwrap.wrap(f"{lead}{default:<{default_w}}{GAP}{limits}", width, subsequent_indent=" " * col,
                         break_on_hyphens=False, break_long_words=True)


def _under(text: str, col: int, width: int) -> list[str]:
    """``text`` wrapped into the columns from ``col`` to ``width``."""
    return textwrap.wrap(text, width, initial_indent=" " * col, subsequent_indent=" " * col, break_on_hyphens=False)


def main(args) -> int:
    data = run()
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(text(data, width_of(args)))
    return 0
