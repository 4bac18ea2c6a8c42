"""``python -m rnnlab results [--experiment E] [--format table|csv|md|json] [--no-baseline]``."""

from __future__ import annotations

import json

from rnnlab.commands._output import WIDTH, printable, width_of
from rnnlab.commands._output import tables as tables_text
from rnnlab.core.errors import RnnlabError
from rnnlab.core.store import Store


def setup_arguments(sub) -> None:
    p = sub.add_parser("results", help="print stored results")
    p.add_argument("--experiment")
    p.add_argument("--format", default="table", choices=("table", "csv", "md", "json"))
    p.add_argument("--no-baseline", action="store_true", help="only this machine's store, not the bundled results")
    p.set_defaults(func=main)


def run(*, experiment: str | None = None, fmt: str = "table", include_baseline: bool = True,
        store: Store | None = None, width: int | None = WIDTH) -> str:
    """The records as text: a table per configuration fitted to ``width`` columns (None: every column, unclipped;
    ``commands._output.fit``), or CSV, Markdown or JSON (whole, whatever the width)."""
    from rnnlab.engine.api import first_run_command
    from rnnlab.judge import select  # altair and pandas load only when results are printed (in _text)

    store = store or Store(readonly=True)  # reading never writes (nor waits for a writer to finish)
    if experiment is not None:
        from rnnlab import experiments

        experiments.get(experiment)
    recs = select.combined(store, experiment=experiment, bundled=include_baseline)
    if not recs and fmt != "json":
        raise RnnlabError("no stored records" + (f" for {experiment}" if experiment else "") +
                          "; run one first, e.g. " + first_run_command(experiment))
    return select.survive(lambda rs: printable(_text(rs, fmt=fmt, width=width)), recs, what="results")


def _text(recs, *, fmt: str, width: int | None) -> str:
    from rnnlab.present import report, tables

    if fmt == "json":
        return json.dumps([r.to_dict(with_transient=False) | {"source": r.source} for r in recs], indent=1)
    if fmt == "csv":
        from rnnlab.present.results import csv_bytes

        return csv_bytes(recs).decode()
    views, _ = [], None
    for name in dict.fromkeys(r.experiment for r in recs):
        views += report.experiment_views([r for r in recs if r.experiment == name], with_charts=False)[0]
    # the cells a screen shows: each ratio with its interval in its text, noise flags, a "check" column where a row
    # cannot be true; the raw interval columns (for CSV/JSON exports) left out
    views = [tables.without_bounds(v) for v in views]
    if fmt == "md":
        from rnnlab.exporters import md

        return md.render_tables(views) if hasattr(md, "render_tables") else "\n\n".join(_md(v) for v in views)
    return tables_text(views, width)  # tables of one kind show the same columns


def _md(view) -> str:
    head = "| " + " | ".join(view.columns) + " |\n|" + "---|" * len(view.columns)
    body = "\n".join("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in view.rows)
    return f"### {view.title}\n\n{head}\n{body}\n\n{view.caption}"


def main(args) -> int:
    print(run(experiment=args.experiment, fmt=args.format, include_baseline=not args.no_baseline,
              width=width_of(args)))
    return 0
