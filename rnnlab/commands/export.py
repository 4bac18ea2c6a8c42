"""``python -m rnnlab export --format pptx|csv|md|tex|png|svg|json [--experiment E] --out PATH``."""

from __future__ import annotations

from pathlib import Path

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
    from rnnlab.core import baseline
    from rnnlab import exporters
    from rnnlab.present import report  # heavy imports only when exporting

    store = store or Store()
    recs = baseline.combined(store, experiment=experiment) if include_baseline else store.records(experiment)
    rep = report.build(recs, experiment=experiment)
    return exporters.export(rep, fmt, Path(out))


def main(args) -> int:
    paths = run(fmt=args.format, out=args.out, experiment=args.experiment, include_baseline=not args.no_baseline)
    for p in paths:
        print(p)
    return 0
