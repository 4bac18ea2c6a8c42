"""``python -m rnnlab claims [--format table|md|json] [--status S] [--seed NNN] [--no-baseline]``.

Every claim of the seeds judged on this machine's store plus the bundled results (``rnnlab.judge.claims``): the same
verdicts the app's Claims page shows.
"""

from __future__ import annotations

import json

from rnnlab.commands._output import WIDTH, fit_lines, heading, printable, width_of
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip
from rnnlab.core.store import Store


def setup_arguments(sub) -> None:
    p = sub.add_parser("claims", help="the seeds' claims, judged on the stored and bundled results")
    p.add_argument("--format", default="table", choices=("table", "md", "json"))
    p.add_argument("--status", action="append", default=[], metavar="S",
                   help="only claims with this verdict (repeatable): holds, does-not-hold, depends, "
                        "too-noisy-to-call, not-measured, not-measurable-here (spaces also work: \"too noisy to "
                        "call\")")
    p.add_argument("--seed", action="append", default=[], metavar="NNN", help="only this seed's claims (000, 001, "
                   "003, 004; repeatable)")
    p.add_argument("--no-baseline", action="store_true", help="only this machine's store, not the bundled results")
    p.set_defaults(func=main)


def run(*, fmt: str = "table", status: str | list[str] | tuple[str, ...] | None = None,
        seed: str | list[str] | tuple[str, ...] | None = None, include_baseline: bool = True,
        store: Store | None = None, width: int | None = WIDTH) -> str:
    """The claims as text (``table``, wrapped to ``width`` columns; None: the lines as long as they come), a
    Markdown table (``md``) or a JSON document (``json``)."""
    from rnnlab.judge import select
    from rnnlab.present import claims as claim_views

    if fmt not in ("table", "md", "json"):
        raise RnnlabError(f"format {fmt!r}: expected table, md or json")
    statuses = [status] if isinstance(status, str) else list(status or ())
    seeds = [seed] if isinstance(seed, str) else list(seed or ())
    for s in statuses:
        try:
            claim_views.parse_status(s)
        except ValueError as e:  # the message quotes the value: cut it to 80 characters
            raise RnnlabError(str(e).replace(repr(s), clip(repr(s)))) from None
    statuses = [claim_views.parse_status(s) for s in statuses]
    bad = [s for s in seeds if s not in claim_views.SEEDS]
    if bad:
        raise RnnlabError(f"seed {clip(repr(bad[0]))} has no claims; known seeds: {', '.join(claim_views.SEEDS)}")
    store = store or Store(readonly=True)  # reading never writes (nor waits for a writer to finish)
    records = select.combined(store, bundled=include_baseline)
    return select.survive(
        lambda recs: printable(_text(recs, fmt=fmt, seeds=seeds, statuses=statuses, width=width)), records,
        what="claims")


def _text(records, *, fmt: str, seeds: list[str], statuses: list, width: int | None) -> str:
    from rnnlab.judge import claims, select
    from rnnlab.present import claims as claim_views

    everything = claims.evaluate(records)
    results = claim_views.select(everything, seeds=seeds, statuses=statuses)
    where = (f"{len(records)} records ({select.source_note(records)})" if records else
             "no records yet (measure with the commands shown)")
    if fmt == "json":
        return json.dumps({"schema": 1, "records": len(records), "source": select.source_note(records),
                           "counts": claim_views.counts(everything), "claims": claims.table_rows(results)}, indent=1)
    if fmt == "md":
        from rnnlab.exporters import md

        view = claim_views.claims_view(results, records=records)
        return (md.render_tables([view], level=2) + "\n\n" + f"All claims: {claim_views.summary_line(everything)}. "
                f"Judged on {where}.")
    head = [f"The seeds' claims, judged on {where}", f"All claims: {claim_views.summary_line(everything)}"]
    if statuses or seeds:
        head.append(f"Shown: {len(results)} of {len(everything)}"
                    + (f" with verdict {', '.join(statuses)}" if statuses else "")
                    + (f" from seed {', '.join(seeds)}" if seeds else ""))
    body = (claim_views.claims_text(results, **({} if width is None else {"width": width})) if results else
            "No claim matches.")
    head = [x for line in head for x in heading(line, width)]
    return fit_lines("\n".join(head) + "\n\n" + body, width)


def main(args) -> int:
    print(run(fmt=args.format, status=args.status, seed=args.seed, include_baseline=not args.no_baseline,
              width=width_of(args)))
    return 0
