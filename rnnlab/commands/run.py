"""``python -m rnnlab run EXPERIMENT [--preset NAME] [--set KEY=VALUE ...] [--variants A,B] [--fresh] [--json]``.

Progress goes to stderr; ``--json`` prints the records as one JSON array on stdout and nothing else there.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
import threading
import time

from rnnlab.commands import _output
from rnnlab.engine import api
from rnnlab import experiments
from rnnlab.judge import select
from rnnlab.present import tables
from rnnlab.core import envinfo
from rnnlab.core.format import clip, fmt_ratio, fmt_seconds
from rnnlab.core.errors import RnnlabError
from rnnlab.core.store import Store
from rnnlab.core.wording import Sentence, shared_opening


def setup_arguments(sub) -> None:
    p = sub.add_parser("run", help="measure an experiment (served from the store where already measured)")
    p.add_argument("experiment")
    p.add_argument("--preset", help="quick, seed or full")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter; a comma-separated list sweeps it (seq_len=25,50,100)")
    p.add_argument("--variants", help="comma-separated variant names (default: the experiment's or preset's)")
    p.add_argument("--ref", metavar="VARIANT",
                   help="the variant the others are timed beside and compared with (default: the experiment's "
                        "reference, tf1_dynamic for unroll, added when not among --variants)")
    p.add_argument("--fresh", action="store_true", help="measure again even when stored")
    p.add_argument("--json", action="store_true", help="print the records as one JSON array on stdout")
    p.add_argument("--allow-long", action="store_true",
                   help=f"run even past {api.MAX_WORKERS:,} worker processes or {api.MAX_RUN_S / 3600:g} h estimated "
                        "(a larger run is refused before it starts)")
    p.add_argument("--cluster", metavar="ADDRESS",
                   help="run the tasks on a Ray cluster (ADDRESS: auto, host:6379, ray://host:10001) or 'local' "
                        "(a Ray instance on this machine's cores); see README")
    p.set_defaults(func=main)


class ProgressBar:
    """A progress line on stderr: redrawn in place on a terminal, one line per change otherwise; no line wider than
    the terminal (120 columns when not a terminal: cut, or wrapped for a run-wide line). Run-wide lines (a warning,
    the environment probe) are always lines of their own."""

    def __init__(self, stream=None, width: int = 24):
        self.stream, self.width = stream or sys.stderr, width
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.cols = _output.width(stream=self.stream) - (1 if self.tty else 0)  # a full terminal line wraps
        self._last = None
        self._lock = threading.Lock()

    def __call__(self, pr: api.Progress) -> None:
        with self._lock:
            if not pr.variant:  # about the whole run: "warning: machine busy ...", "measuring this machine ..."
                said = "\n".join(_output.wrap(f"rnnlab: {pr.phase}", self.cols, " " * 8))
                self.stream.write(("\r" + " " * self.cols + "\r" if self.tty else "") + said + "\n")
                self.stream.flush()
                return
            filled = int(round(pr.fraction * self.width))
            bar = "#" * filled + "." * (self.width - filled)
            pt = f" point {pr.point + 1}/{pr.n_points}" if pr.n_points > 1 else ""
            rd = f" round {pr.round + 1}/{pr.n_rounds}" if pr.n_rounds > 1 else ""
            rd += f" on {pr.where}" if pr.where else ""
            text = (f"[{bar}] {min(pr.index + 1, pr.total)}/{pr.total}{pt}{rd} {pr.experiment}/{pr.variant}:"
                    f" {pr.phase} ({fmt_seconds(pr.elapsed_s)})")
            if self.tty:
                self.stream.write("\r" + clip(text, self.cols).ljust(min(100, self.cols)))
                if pr.index + 1 >= pr.total and pr.phase in ("done", "failed", "cached"):
                    self.stream.write("\n")
            elif (pr.variant, pr.round, pr.phase) != self._last:
                self.stream.write(clip(text, self.cols) + "\n")
            self._last = (pr.variant, pr.round, pr.phase)
            self.stream.flush()


def _n(k: int, word: str, plural: str | None = None) -> str:
    return f"{k} {word if k == 1 else plural or word + 's'}"


def announce(plan: api.Plan, est: api.Estimate, *, fresh: bool = False) -> str:
    """The first line of a run: what is about to happen and about how long it takes here, e.g. ``unroll: 12
    variants x 1 point x 3 rounds = 36 worker processes, about 4.2 min on this machine``."""
    rounds = sorted({int(pt.get("rounds", 1)) for pt in plan.points})
    rd = _n(rounds[0], "round") if len(rounds) == 1 else f"{rounds[0]}-{rounds[-1]} rounds"
    ref = f" (+ the reference {plan.companion})" if plan.companion else ""
    if plan.companion and plan.ref is None and len(plan.variants) > 1:  # a question among the plan's own variants
        ref = f" (+ the reference {plan.companion}; --ref {plan.variants[0]} compares them with {plan.variants[0]} instead)"
    text = f"{plan.experiment}: {_n(len(plan.variants), 'variant')}{ref} x {_n(len(plan.points), 'point')} x {rd}"
    if est.workers == 0:
        return text + ": everything is stored, nothing to measure"
    when = "" if est.from_timings else " (rough)"
    text += f" = {_n(est.workers, 'worker process', 'worker processes')}, about {fmt_seconds(est.seconds)}{when} on this machine"
    if est.slowdown > 1.05:
        text += (f" (other processes use {est.others:.1f} of {envinfo.static_env()['cores']} cores: "
                 f"{fmt_ratio(est.slowdown)} as long)")
    if est.stored:
        text += f"; {_n(est.stored, 'record')} served from the store"
    elif not fresh and not est.known:
        text += "; less for what is already stored"
    return text


def run(*, experiment: str, preset: str | None = None, sets: list[str] = (), variants: str | None = None,
        fresh: bool = False, store: Store | None = None, on_progress=None, launcher=None, on_plan=None,
        cluster: str | None = None, allow_long: bool = False, ref: str | None = None) -> list:
    """Plan, then run. ``on_plan(plan, store, estimate)`` is called between the two, before anything slow (the CLI
    prints what is about to happen there); a run past ``api.check_cost``'s caps is refused then unless
    ``allow_long``. ``cluster``: a Ray address or "local" (``engine.cluster``; Ray is imported only then)."""
    exp = experiments.get(experiment)
    overrides = exp.params.parse_assignments(sets)
    names = [v.strip() for v in variants.split(",") if v.strip()] if variants is not None else None
    if names == []:  # `--variants ""` or `--variants ,,`: say so rather than run the defaults
        raise RnnlabError(f"--variants: no variant names given; known: {', '.join(exp.variants)}")
    plan = api.plan(experiment, preset=preset, overrides=overrides, variants=names, ref=ref)
    store = store or Store()
    others = None if cluster else api.others_now()  # a cluster's nodes are not this machine
    est = api.estimate(plan, store=store, fresh=fresh, others=others)
    if on_plan is not None:
        on_plan(plan, store, est)
    api.check_cost(est, allow_long=allow_long)
    kw = {"launcher": launcher} if launcher is not None else {}
    if cluster is None:
        return api.run(plan, store=store, fresh=fresh, on_progress=on_progress, others=others, **kw)
    with api.cluster(cluster) as c:
        if on_progress is not None:
            names = ", ".join(f"{n.name} ({n.cpus:g} CPUs" + (f", {n.gpus:g} GPUs)" if n.gpus else ")")
                              for n in c.nodes)
            on_progress(api.Progress(experiment, "", f"Ray cluster {cluster}: {len(c.nodes)} node(s): {names}; one "
                                             "measurement per node at a time", 0, plan.n_runs, 0.0))
        return api.run(plan, store=store, fresh=fresh, on_progress=on_progress, cluster=c)


def spoken(group: select.Group) -> list[Sentence]:
    """What the page of the group's experiment says of these records first (its "In short" and the findings after
    it: ``present.<page>.findings_text``); [] for a page that says nothing of a run's records."""
    exp = experiments.get(group.experiment)
    if not exp.page:
        return []
    say = getattr(importlib.import_module(f"rnnlab.present.{exp.page}"), "findings_text", None)
    return list(say(list(group.records.values()))) if say is not None else []


def answer_text(words: list[Sentence], width: int | None) -> str:
    """The findings as the page's "In short" says them: the machine they share once, then one bullet each."""
    head, rest = shared_opening(words)
    lead = f"In short, {head[0].lower()}{head[1:]}:" if head else "In short:"
    lines = [lead]
    for s in rest:
        lines += _output.wrap(f"- {s.text}", width, "  ")
    return "\n".join(lines)


def main(args) -> int:
    t0 = time.monotonic()

    width = _output.width_of(args)

    plans: list = []

    def on_plan(plan, store, est):
        plans.append(plan)
        said = "rnnlab: " + announce(plan, est, fresh=args.fresh)
        print("\n".join(_output.wrap(said, _output.width(stream=sys.stderr), " " * 8)), file=sys.stderr, flush=True)

    with _output.native_logs_off(getattr(args, "verbose", False)) if args.cluster else contextlib.nullcontext():
        records = run(experiment=args.experiment, preset=args.preset, sets=args.sets, variants=args.variants,
                      fresh=args.fresh, on_progress=ProgressBar(), on_plan=on_plan, cluster=args.cluster,
                      allow_long=args.allow_long, ref=args.ref)
    plan = plans[0]
    exp = experiments.get(args.experiment)
    shown = records + api.reference_records(plan, records)  # the reference's row when it ran beside them
    answers = [(g, spoken(g)) for g in select.groups(shown)]  # one table and answer per configuration (and machine)
    if args.json:
        said = {r.key: [s.to_json() for s in words] for g, words in answers for r in g.records.values()}
        print(json.dumps([{**r.to_dict(), "findings": said.get(r.key, [])} for r in records], indent=1))
    else:
        for group, words in answers:
            recs = list(group.records.values())
            if plan.reference:
                view = tables.comparison(recs, reference=plan.reference)
            else:
                view = tables.generic(recs, title=f"{exp.name}: {recs[0].params.get('cell', '')}")
            print(_output.table(view, width))
            print()
            if words:
                print(answer_text(words, width))
                print()
    failed = sum(1 for r in records if not r.ok)
    cached = sum(1 for r in records if r.cached)
    print(f"rnnlab: {len(records)} records ({cached} from the store, {failed} failed) in "
          f"{fmt_seconds(time.monotonic() - t0)}", file=sys.stderr)
    return 0
