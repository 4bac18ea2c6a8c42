"""``python -m rnnlab run EXPERIMENT [--preset NAME] [--set KEY=VALUE ...] [--variants A,B] [--fresh] [--json]``.

Progress goes to stderr; ``--json`` prints the records as one JSON array on stdout and nothing else there.
"""

from __future__ import annotations

import json
import sys
import threading
import time

from rnnlab.engine import api
from rnnlab import experiments
from rnnlab.judge import select
from rnnlab.present import tables
from rnnlab.core.format import fmt_seconds
from rnnlab.engine.runner import Progress
from rnnlab.core.store import Store


def setup_arguments(sub) -> None:
    p = sub.add_parser("run", help="measure an experiment (served from the store where already measured)")
    p.add_argument("experiment")
    p.add_argument("--preset", help="quick, seed or full")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter; a comma-separated list sweeps it (seq_len=25,50,100)")
    p.add_argument("--variants", help="comma-separated variant names (default: the experiment's or preset's)")
    p.add_argument("--fresh", action="store_true", help="measure again even when stored")
    p.add_argument("--json", action="store_true", help="print the records as one JSON array on stdout")
    p.set_defaults(func=main)


class ProgressBar:
    """A progress line on stderr: redrawn in place on a terminal, one line per change otherwise."""

    def __init__(self, stream=None, width: int = 24):
        self.stream, self.width = stream or sys.stderr, width
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self._last = None
        self._lock = threading.Lock()

    def __call__(self, pr: Progress) -> None:
        filled = int(round(pr.fraction * self.width))
        bar = "#" * filled + "." * (self.width - filled)
        pt = f" point {pr.point + 1}/{pr.n_points}" if pr.n_points > 1 else ""
        text = (f"[{bar}] {min(pr.index + 1, pr.total)}/{pr.total}{pt} {pr.experiment}/{pr.variant}: {pr.phase}"
                f" ({fmt_seconds(pr.elapsed_s)})")
        with self._lock:
            if self.tty:
                self.stream.write("\r" + text.ljust(100)[:120])
                if pr.index + 1 >= pr.total and pr.phase in ("done", "failed", "cached"):
                    self.stream.write("\n")
            elif (pr.variant, pr.phase) != self._last:
                self.stream.write(text + "\n")
            self._last = (pr.variant, pr.phase)
            self.stream.flush()


def run(*, experiment: str, preset: str | None = None, sets: list[str] = (), variants: str | None = None,
        fresh: bool = False, store: Store | None = None, on_progress=None, launcher=None) -> list:
    exp = experiments.get(experiment)
    overrides = exp.params.parse_assignments(sets)
    names = [v.strip() for v in variants.split(",") if v.strip()] if variants else None
    plan = api.plan(experiment, preset=preset, overrides=overrides, variants=names)
    kw = {"launcher": launcher} if launcher is not None else {}
    return api.run(plan, store=store or Store(), fresh=fresh, on_progress=on_progress, **kw)


def main(args) -> int:
    t0 = time.monotonic()
    records = run(experiment=args.experiment, preset=args.preset, sets=args.sets, variants=args.variants,
                  fresh=args.fresh, on_progress=ProgressBar())
    if args.json:
        print(json.dumps([r.to_dict() for r in records], indent=1))
    else:
        exp = experiments.get(args.experiment)
        for group in select.groups(records):  # one table per configuration (and machine)
            recs = list(group.records.values())
            if exp.reference:
                view = tables.comparison(recs, reference=exp.reference)
            else:
                view = tables.generic(recs, title=f"{exp.name}: {recs[0].params.get('cell', '')}")
            print(tables.text_table(view))
            print()
    failed = sum(1 for r in records if not r.ok)
    cached = sum(1 for r in records if r.cached)
    print(f"rnnlab: {len(records)} records ({cached} from the store, {failed} failed) in "
          f"{fmt_seconds(time.monotonic() - t0)}", file=sys.stderr)
    return 0
