"""``python -m rnnlab list [--json]``: experiments, their variants, presets and every parameter's type, default
and limits."""

from __future__ import annotations

import json

from rnnlab import experiments
from rnnlab.commands._output import WIDTH, wrap, width_of
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
            "presets": {k: dict(v) for k, v in e.presets.items()},
            "params": [{"name": p.name, "type": p.kind, "default": p.default, "limits": p.limits(), "help": p.help}
                       for p in e.params.params],
            "metrics": dict(e.metrics_doc),
        })
    return out


def text(data: list[dict], width: int | None = WIDTH) -> str:
    """:func:`run`'s experiments as text, wrapped to ``width`` columns (None: one line each, however long); a
    parameter's limits continue under its limits column."""
    out: list[str] = []
    for e in data:
        out += wrap(f"{e['name']}: {e['title']}", width)
        out += wrap(f"  {e['summary']}", width, "  ")
        out += wrap("  variants: " + ", ".join(v["name"] for v in e["variants"]), width, " " * 12)
        out += wrap("  presets:  " + ", ".join(e["presets"]), width, " " * 12)
        # columns as wide as this experiment's longest name, type and default: a long default never shifts a row
        name_w = max([len(p["name"]) for p in e["params"]] + [20])
        type_w = max([len(p["type"]) for p in e["params"]] + [8])
        default_w = max([len(str(p["default"])) for p in e["params"]] + [10])
        for p in e["params"]:
            head = f"    {p['name']:<{name_w}} {p['type']:<{type_w}} default {str(p['default']):<{default_w}} "
            out += wrap(head + str(p["limits"]), width, " " * len(head))
        out.append("")
    return "\n".join(out)


def main(args) -> int:
    data = run()
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(text(data, width_of(args)))
    return 0
