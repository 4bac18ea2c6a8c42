"""``python -m rnnlab export --format FORMAT (an exporter's name: ``rnnlab.exporters``) [--experiment E | --view PAGE[?QUERY]]
[--columns A,B,C] [--full] --out PATH``.

``--view`` writes what a page shows for its URL settings (``rnnlab.present.<page>.view``); as ``pptx`` that is a
talk deck (``rnnlab.present.deck.talk``: a title slide, the takeaways, per table at most six chosen columns with
its charts). ``--full`` (or ``--experiment``) writes the appendix: every configuration stored, every column.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rnnlab import experiments, exporters
from rnnlab.core import outpath
from rnnlab.core.params import device_asked
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip
from rnnlab.core.store import Store
from rnnlab.present import pages



def topic_pages() -> list[str]:
    return [p.name for p in pages.pages() if p.topic]


def setup_arguments(sub) -> None:
    p = sub.add_parser("export", help="export stored results as slides, tables or chart images")
    p.add_argument("--format", required=True, choices=tuple(exporters.EXPORTERS))
    p.add_argument("--experiment", help="every stored configuration of one experiment (or page topic): "
                                        f"{', '.join(experiments.names())}, or {', '.join(topic_pages())}")
    p.add_argument("--view", metavar="PAGE[?QUERY]",
                   help="what a page shows for its URL settings, e.g. 'unrolling?cell=lstm&ref=keras'; as pptx a "
                        f"short talk deck. Pages: {', '.join(pages.viewed())}")
    p.add_argument("--columns", metavar="A,B,C",
                   help="the talk deck's table columns (at most 6; default: variant, metric, its ratio to the "
                        "reference with its interval)")
    p.add_argument("--full", action="store_true",
                   help="with --view: the full appendix of the page's experiment (every configuration and column)")
    p.add_argument("--out", required=True)
    p.add_argument("--force", action="store_true", help="write through a symbolic link or to a device given as --out")
    p.add_argument("--mkdir", action="store_true", help="create the folders --out names that do not exist yet")
    p.add_argument("--no-baseline", action="store_true")
    p.set_defaults(func=main)


def run(*, fmt: str, out: str, experiment: str | None = None, view: str | None = None, columns: str | None = None,
        full: bool = False, include_baseline: bool = True, store: Store | None = None,
        force: bool = False, mkdir: bool = False) -> list[Path]:
    from rnnlab.judge import select
    from rnnlab.present import deck, report  # heavy imports only when exporting

    if view is not None and experiment is not None:
        raise RnnlabError("--view and --experiment: pass one (--view PAGE --full writes the page's experiment)")
    if columns is not None and (view is None or full or fmt != "pptx"):
        raise RnnlabError("--columns chooses a talk deck's columns: use it with --format pptx --view PAGE")
    if full and view is None:
        raise RnnlabError("--full goes with --view PAGE (without --view every export is the full appendix)")
    chosen = deck.parse_columns(columns)
    outpath.check(out, force=force, mkdir=mkdir)  # before reading or rendering anything
    store = store or Store(readonly=True)  # reading never writes (nor waits for a writer to finish)
    if view is not None:
        page, query = deck.parse_view(view)  # refuse a bad spec before reading anything
        if full:
            experiment = report.appendix(page)
    if experiment is not None and experiment not in experiments.names() and experiment not in report.TOPICS:
        raise RnnlabError(f"unknown experiment or page {clip(repr(experiment))}; known: "
                          f"{', '.join(dict.fromkeys([*experiments.names(), *report.TOPICS]))}")
    recs = select.combined(store, bundled=include_baseline)
    if view is not None and not full:
        from rnnlab.engine import api

        device = device_asked(query)
        try:
            env = api.known_env(store, device)
        except RnnlabError:
            env = None

        def show(rs):
            rep = deck.page_view(view, rs, env=env)
            return deck.talk(rep, chosen) if fmt == "pptx" else rep
        return exporters.export(select.survive(show, recs, what=f"the {page} page"), fmt, out)
    # an experiment's export is its page's report: every experiment that page shows (varlen, padding and seed003
    # share one page); the Claims page ("claims") reads every experiment's records, knobs|precision|training their own
    shown = None if experiment is None else report.shown(experiment)
    if shown is not None:
        recs = [r for r in recs if r.experiment in shown]
    rep = select.survive(lambda rs: report.build(rs, experiment=experiment), recs, what="the export")
    return exporters.export(rep, fmt, out)  # a str: a trailing "/" means "a folder"


def main(args) -> int:
    paths = run(fmt=args.format, out=args.out, experiment=args.experiment, view=args.view, columns=args.columns,
                full=args.full, include_baseline=not args.no_baseline, force=args.force, mkdir=args.mkdir)
    for p in paths:
        print(p)
    folders = {p.parent for p in paths}
    if len(paths) > 1 and len(folders) == 1:  # a folder as --out: say plainly what went into it
        print(f"rnnlab: wrote {len(paths)} {args.format} files into {folders.pop()}", file=sys.stderr)
    return 0
