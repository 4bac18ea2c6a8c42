"""``python -m rnnlab export --format pptx|csv|md|tex|png|svg|json [--experiment E] --out PATH``."""

from __future__ import annotations

from pathlib import Path

from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip
from rnnlab.core.store import Store


def setup_arguments(sub) -> None:
    p = sub.add_parser("export", help="export stored results as slides, tables or chart images")
    p.add_argument("--format", required=True, choices=("pptx", "csv", "md", "tex", "png", "svg", "json"))
    p.add_argument("--experiment")
    p.add_argument("--out", required=True)
    p.add_argument("--no-baseline", action="store_true")
    p.set_defaults(func=main)


def run(*, fmt: str, out: str, experiment: str | None = None, include_baseline: bool = True,
        store: Store | None = None) -> list[Path]:
    from rnnlab import experiments, exporters
    from rnnlab.judge import select
    from rnnlab.present import report  # heavy imports only when exporting

    store = store or Store()
    if experiment is not None and experiment not in experiments.names() and experiment not in report.TOPICS:
        raise RnnlabError(f"unknown experiment or page {clip(repr(experiment))}; known: "
                          f"{', '.join(dict.fromkeys([*experiments.names(), *report.TOPICS]))}")
    recs = select.combined(store) if include_baseline else store.records()
    # an experiment's export is its page's report: every experiment that page shows (varlen, padding and seed003
    # share one page); the Claims page ("claims") reads every experiment's records, knobs|precision|training their own
    topic = report.TOPICS.get(experiment)
    if experiment is not None and experiment != "claims":
        shown = {experiment} if topic == "claims" else {e for e, t in report.TOPICS.items() if t == topic}
        recs = [r for r in recs if r.experiment in shown]
    rep = report.build(recs, experiment=experiment)
    return exporters.export(rep, fmt, out)  # a str: a trailing "/" means "a folder"


def main(args) -> int:
    paths = run(fmt=args.format, out=args.out, experiment=args.experiment, include_baseline=not args.no_baseline)
    for p in paths:
        print(p)
    return 0
