"""``python -m rnnlab list [--json]``: experiments, their variants, presets and every parameter's type, default
and limits."""

from __future__ import annotations

import json

from rnnlab import experiments
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


def main(args) -> int:
    data = run()
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    for e in data:
        print(f"{e['name']}: {e['title']}\n  {e['summary']}")
        print("  variants: " + ", ".join(v["name"] for v in e["variants"]))
        print("  presets:  " + ", ".join(e["presets"]))
        for p in e["params"]:
            print(f"    {p['name']:<20} {p['type']:<8} default {str(p['default']):<10} {p['limits']}")
        print()
    return 0
