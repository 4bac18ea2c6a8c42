"""``python -m rnnlab calibrate [--variant tf1_dynamic] [--trials 10] [--set KEY=VALUE] [--rounds 3]``.

A test of the measuring method on this machine, not of TensorFlow: each trial is one interleaved point
(``engine.interleave.run_point``, exactly as a run measures) with four arms of ONE variant: the reference ``A``, a copy
``A/A`` that should come out the same, and ``+10%`` / ``+20%``, whose workers do extra CPU work inside every timed
step, calibrated in the worker to 10% / 20% of that step's own median time (``WorkerContext.inject``): a slowdown of
known size. Per trial and timed series
(``fwd_ms``, ``train_ms``) each arm's paired interval against ``A`` (``stats.paired_interval``) and its call
(``rules.direction``). What it prints: how often A/A's interval excludes 1 (a false difference), whether A/A was ever
called faster or slower, how often +20% was called slower (its interval clears the margin), how often +10%'s interval
excludes 1, and the median half-width of the intervals. A scratch nothing: no record is stored.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from rnnlab import experiments
from rnnlab.commands._output import WIDTH, wrap
from rnnlab.core import envinfo, outpath, rules, stats
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import fmt_seconds
from rnnlab.engine import api, interleave
from rnnlab.engine import runner as _runner

ARMS = {"A": 0.0, "A/A": 0.0, "+10%": 0.10, "+20%": 0.20}  # arm -> extra work inside each timed step
SERIES = ("fwd_ms", "train_ms")  # the series with injected work (builds are not injected)
TARGETS = {  # what the method must show on this kind of machine (issue: "verdicts that decide on a noisy machine")
    "A/A": "interval excludes 1 in at most 5% of pairs; never called faster or slower",
    "+20%": "called slower (interval clears the margin) in at least 95%",
    "+10%": "interval excludes 1 in at least 80%",
}
DEFAULT_SET = {"budget_s": 60}


def setup_arguments(sub) -> None:
    p = sub.add_parser("calibrate", help="A/A and injected-slowdown trials of the interleaved protocol on this "
                                         "machine: false-difference rate, detection rates, interval widths")
    p.add_argument("--experiment", default="unroll", help="an experiment whose worker times series (default: unroll)")
    p.add_argument("--preset", default="seed", help="its configuration (default: seed)")
    p.add_argument("--variant", default=None, help="the variant every arm runs (default: the experiment's reference)")
    p.add_argument("--trials", type=int, default=10, help="independent trials, each its own workers (default: 10)")
    p.add_argument("--rounds", type=int, default=None, help="rounds per trial (default: the preset's)")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of the experiment (one value each)")
    p.add_argument("--keep", metavar="PATH", help="also write every trial's windows and intervals to PATH (JSON)")
    p.add_argument("--force", action="store_true", help="let --keep write through a symbolic link or to a device")
    p.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    p.set_defaults(func=main)


@dataclass
class Summary:
    """Per arm (against A) over every trial and series: the intervals and calls."""

    trials: int
    pairs: dict = field(default_factory=dict)  # arm -> [(series, Interval, call)]
    seconds: float = 0.0
    machine: str = ""
    load: list = field(default_factory=list)  # 1-minute load before each trial

    def rate(self, arm: str, test: Callable) -> tuple[int, int]:
        got = self.pairs.get(arm, [])
        return sum(1 for _, iv, call in got if test(iv, call)), len(got)

    def half_width(self, arm: str) -> float | None:
        ws = [(iv.hi / iv.lo) ** 0.5 - 1 for _, iv, _ in self.pairs.get(arm, [])]
        return statistics.median(ws) if ws else None

    def checks(self) -> list[tuple[str, int, int, bool]]:
        """(what, count, of, passes): the three targets."""
        excl = self.rate("A/A", lambda iv, c: iv.lo > 1 or iv.hi < 1)
        dirs = self.rate("A/A", lambda iv, c: c in (rules.LOWER, rules.HIGHER))
        slow20 = self.rate("+20%", lambda iv, c: c == rules.HIGHER)
        excl10 = self.rate("+10%", lambda iv, c: iv.lo > 1)
        return [("A/A: interval excludes 1", *excl, excl[1] > 0 and excl[0] <= 0.05 * excl[1]),
                ("A/A: called faster or slower", *dirs, dirs[1] > 0 and dirs[0] == 0),
                ("+20%: called slower", *slow20, slow20[1] > 0 and slow20[0] >= 0.95 * slow20[1]),
                ("+10%: interval above 1", *excl10, excl10[1] > 0 and excl10[0] >= 0.80 * excl10[1])]

    def lines(self, width: int | None = WIDTH) -> list[str]:
        out = wrap(f"calibrate: {self.trials} trials on {self.machine}, {fmt_seconds(self.seconds)}; load before "
                   f"each trial {min(self.load, default=0):.1f}-{max(self.load, default=0):.1f}", width)
        out.append(f"{'arm vs A':<8} {'pairs':>5} {'faster':>6} {'same':>5} {'slower':>6} {'noisy':>6} "
                   f"{'median ratio':>12} {'median half-width':>17}")
        for arm in list(ARMS)[1:]:
            got = self.pairs.get(arm, [])
            calls = [c for _, _, c in got]
            mid = statistics.median(iv.mid for _, iv, _ in got) if got else None
            hw = self.half_width(arm)
            out.append(f"{arm:<8} {len(got):>5} {calls.count(rules.LOWER):>6} {calls.count(rules.SAME):>5} "
                       f"{calls.count(rules.HIGHER):>6} {calls.count(rules.NOISY):>6} "
                       f"{'-' if mid is None else f'{mid:.3f}x':>12} {'-' if hw is None else f'{hw:.1%}':>17}")
        for what, n, of, ok in self.checks():
            out.append(f"{'PASS' if ok else 'FAIL'}  {what}: {n} of {of}")
        return out

    def to_json(self) -> dict:
        return {"trials": self.trials, "seconds": round(self.seconds, 1), "machine": self.machine,
                "load": self.load,
                "arms": {arm: {"pairs": len(self.pairs.get(arm, [])),
                               "calls": {c: [x for _, _, x in self.pairs.get(arm, [])].count(c)
                                         for c in (rules.LOWER, rules.SAME, rules.HIGHER, rules.NOISY)},
                               "median_half_width": self.half_width(arm)} for arm in list(ARMS)[1:]},
                "checks": [{"what": w, "count": n, "of": of, "pass": ok} for w, n, of, ok in self.checks()]}


def run(*, experiment: str = "unroll", preset: str | None = "seed", variant: str | None = None, trials: int = 10,
        rounds: int | None = None, sets: Sequence[str] = (), launcher=_runner.launch_subprocess,
        env: dict | None = None, say: Callable[[str], None] = lambda s: None, keep: list | None = None,
        clock: Callable[[], float] = time.monotonic) -> Summary:
    """``trials`` interleaved points of four arms (``ARMS``) of one variant; nothing is stored."""
    if trials < 1 or trials > 200:
        raise RnnlabError(f"--trials {trials}: between 1 and 200")
    exp = experiments.get(experiment)
    if "protocol" not in exp.params.names():
        raise RnnlabError(f"{experiment} has no interleaved protocol; calibrate needs one that times series "
                          f"(unroll, knobs, precision)")
    overrides = {k: [v] for k, v in DEFAULT_SET.items()}
    overrides.update(exp.params.parse_assignments(sets))
    if rounds is not None:
        overrides["rounds"] = [exp.params["rounds"].parse(rounds)]
    overrides["protocol"] = ["interleaved"]
    v = variant or exp.reference or exp.variants[0]
    plan = api.plan(experiment, preset=preset, overrides=overrides, variants=[v])
    if len(plan.points) != 1:
        raise RnnlabError("calibrate measures one configuration: give each --set one value")
    point = dict(plan.points[0])
    env = env or api.environment(point.get("device", "auto"))
    point["device"] = env["device"].lower()
    limit = envinfo.available_mb() * 0.9
    summary = Summary(trials, {arm: [] for arm in list(ARMS)[1:]}, machine=str(env.get("machine") or env["cpu"]))
    t0 = clock()
    for t in range(trials):
        load = api._loadavg()
        summary.load.append(load or 0.0)
        say(f"calibrate: trial {t + 1}/{trials} ({v}, {len(ARMS)} arms, load {load})")
        task = api.variant_task(exp, v, point, env)
        tasks = {arm: {**task, "inject": extra} for arm, extra in ARMS.items()}
        history = interleave.run_point(lambda r: tasks, ref="A", rounds=int(point.get("rounds", 1)),
                                       budget_s=float(point.get("budget_s", 60)), on_round=lambda r, got, last: None,
                                       on_phase=lambda r, a, ph: None, rng=random.Random(f"calibrate-{t}"),
                                       launcher=launcher, timeout_s=point.get("timeout_s", 900), mem_limit_mb=limit,
                                       cancel=None, clock=clock)
        row = {"trial": t + 1, "load": load, "windows": history, "pairs": {}}
        for arm in list(ARMS)[1:]:
            for s in SERIES:
                iv = stats.session_interval(history.get(arm, {}), history.get("A", {}), s)
                if iv is None:
                    continue
                call = rules.direction(iv)
                summary.pairs[arm].append((s, iv, call))
                row["pairs"].setdefault(arm, {})[s] = {"lo": iv.lo, "mid": iv.mid, "hi": iv.hi, "call": call}
        if keep is not None:
            keep.append(row)
        said = {arm: [f"{s} {iv.mid:.3f} ({iv.lo:.3f}-{iv.hi:.3f}) {c}" for s, iv, c in summary.pairs[arm][-2:]]
                for arm in summary.pairs}
        say("calibrate: " + "; ".join(f"{arm}: {', '.join(x)}" for arm, x in said.items()))
    summary.seconds = clock() - t0
    return summary


def main(args) -> int:
    if args.keep:  # before any measuring: a path that cannot be written loses nothing
        outpath.check(args.keep, flag="--keep", force=args.force)
    kept: list = []
    summary = run(experiment=args.experiment, preset=args.preset, variant=args.variant, trials=args.trials,
                  rounds=args.rounds, sets=args.sets, keep=kept if args.keep else None,
                  say=lambda s: print("\n".join(wrap("rnnlab: " + s, WIDTH, " " * 8)), file=sys.stderr, flush=True))
    if args.keep:
        with open(args.keep, "w") as f:
            json.dump({"summary": summary.to_json(), "trials": kept}, f, indent=1)
    if args.json:
        print(json.dumps(summary.to_json(), indent=1))
    else:
        print("\n".join(summary.lines()))
    return 0
