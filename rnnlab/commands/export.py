"""``python -m rnnlab export --format pptx|csv|md|tex|png|svg|json [--experiment E] --out PATH``."""

from __future__ import annotations

from pathlib import Path

from rnnlab.core.errors import RnnlabError
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
    from rnnlab.core import baseline
    from rnnlab.present import report  # heavy imports only when exporting

    store = store or Store()
    # a page topic that is not one experiment ("claims") reads every experiment's records
    only = experiment if experiment is None or experiment in experiments.names() else None
    if experiment is not None and only is None and experiment not in report.TOPICS:
        raise RnnlabError(f"unknown experiment or page {experiment!r}; known: "
                          f"{', '.join(dict.fromkeys([*experiments.names(), *report.TOPICS]))}")
    recs = baseline.combined(store, experiment=only) if include_baseline else store.records(only)
    rep = report.build(recs, experiment=experiment)
    return exporters.export(rep, fmt, out)  # a str: a trailing "/" means "a folder"


def main(args) -> int:
    paths = run(fmt=args.format, out=args.out, experiment=args.experiment, include_baseline=not args.no_baseline)
    for p in paths:
        print(p)
    return 0
