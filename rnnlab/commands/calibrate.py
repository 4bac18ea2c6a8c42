"""``python -m rnnlab calibrate [--variant tf1_dynamic] [--trials 10] [--set KEY=VALUE] [--rounds 3]
[--shape preset|user] [--contend 0,1,2,4]``.

A test of the measuring method on this machine, not of TensorFlow: each trial is one interleaved point
(``api.run_arms``, exactly as a run measures) with four arms of ONE variant: the reference ``A``, a copy
``A/A`` that should come out the same, and ``+10%`` / ``+20%``, whose workers do extra CPU work inside every timed
step, calibrated in the worker to 10% / 20% of that step's own median time (``WorkerContext.inject``): a slowdown of
known size. ``--shape user`` times each trial as a user's own run is timed (the experiment's default rounds,
budget and deadline: ``core.params.USER_RUN``) at the preset's configuration; ``preset`` as the preset is.
``--contend N,M``: the whole test again beside N CPU-bound processes it starts and stops itself
(``engine.contend``), a table row per N. Per trial and timed series
(``fwd_ms``, ``train_ms``) each arm's paired interval against ``A`` (``stats.paired_interval``) and what a sentence may say of it
(``rules.bound``: a call, one side of the margin ruled out, or too noisy). What it prints: how often A/A's interval
excludes 1 (a false difference), whether A/A was ever called faster or slower, how often +20% was called slower (its
interval clears the margin), every statement that rules out where an arm's true ratio lies (``TRUTH``: a wrong call),
and the median half-width of the intervals. A scratch nothing: no record is stored.
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
from rnnlab.core import condition, envinfo, outpath, rules, stats
from rnnlab.core.params import INTERLEAVED, USER_RUN, device_asked
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip, fmt_seconds
from rnnlab.engine import api

ARMS = {"A": 0.0, "A/A": 0.0, "+10%": 0.10, "+20%": 0.20}  # arm -> extra work inside each timed step
SERIES = ("fwd_ms", "train_ms")  # the series with injected work (builds are not injected)
TARGETS = {  # what the method must show on this kind of machine, quiet or beside competing load
    "A/A": "interval excludes 1 in at most 5% of pairs; never called faster or slower, at any load",
    "+20%": "called slower in at least 80% with at most one other process busy; at any load never called faster "
            "or about the same, nor slower ruled out (too busy to decide is allowed)",
    "+10%": "never called faster",
}
# arm -> the zones of the margin its true ratio may lie in (``rules.ZONES``): a statement that rules all of them out
# is a wrong call. +10% sits at the margin's edge (1.11): about the same or slower
TRUTH = {"A/A": frozenset({rules.SAME}), "+10%": frozenset({rules.SAME, rules.HIGHER}),
         "+20%": frozenset({rules.HIGHER})}
# each statement ``rules.bound`` makes, and its column in the per-arm table (and key in ``--json``)
COLUMNS = ((rules.LOWER, "faster"), (rules.SAME, "same"), (rules.HIGHER, "slower"), (rules.NOT_HIGHER, "not slower"),
           (rules.NOT_LOWER, "not faster"), (rules.NOISY, "noisy"), (rules.TOO_BUSY, "busy"))
QUIET_UP_TO = 1  # competing processes up to which +20% must be called slower (above: "too busy" is allowed)


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
    p.add_argument("--shape", choices=("preset", "user"), default="preset",
                   help="time each trial as the preset is (default) or as a user's own run is (the experiment's "
                        "default rounds, budget and deadline) at the preset's configuration")
    p.add_argument("--contend", default="0", metavar="N[,N...]",
                   help="run the test beside N CPU-bound processes started and stopped here, once per N "
                        "(e.g. 0,1,2,4; default 0: whatever else the machine is doing)")
    p.add_argument("--from", dest="kept", metavar="PATH",
                   help="measure nothing: score again the trials a run with --keep wrote (by today's interval rule)")
    p.add_argument("--keep", metavar="PATH", help="also write every trial's windows and intervals to PATH (JSON)")
    p.add_argument("--force", action="store_true", help="let --keep write through a symbolic link or to a device")
    p.add_argument("--json", action="store_true", help="print the summary as JSON on stdout")
    p.set_defaults(func=main)


@dataclass
class Summary:
    """Per arm (against A) over every trial and series: the intervals and calls; ``contend`` competing processes."""

    trials: int
    pairs: dict = field(default_factory=dict)  # arm -> [(series, Interval, call)]
    seconds: float = 0.0
    machine: str = ""
    contend: int = 0
    shape: str = "preset"
    others: list = field(default_factory=list)  # other processes' cores just before each trial
    free: list = field(default_factory=list)  # the cores free while each trial's windows were timed (median)

    def rate(self, arm: str, test: Callable) -> tuple[int, int]:
        got = self.pairs.get(arm, [])
        return sum(1 for _, iv, call in got if test(iv, call)), len(got)

    def calls(self, arm: str) -> list[str]:
        return [c for _, _, c in self.pairs.get(arm, [])]

    def half_width(self, arm: str) -> float | None:
        ws = [(iv.hi / iv.lo) ** 0.5 - 1 for _, iv, _ in self.pairs.get(arm, [])]
        return statistics.median(ws) if ws else None

    def wrong(self, arm: str) -> tuple[int, int]:
        """(statements that rule out where ``arm``'s true ratio lies, ``TRUTH``; of how many): its wrong calls."""
        return self.rate(arm, lambda iv, c: rules.excludes(c, TRUTH[arm]))

    def checks(self) -> list[tuple[str, int, int, bool]]:
        """(what, count, of, passes): ``TARGETS`` at this load."""
        excl = self.rate("A/A", lambda iv, c: iv.lo > 1 or iv.hi < 1)
        dirs, wrong20, wrong10 = (self.wrong(arm) for arm in ("A/A", "+20%", "+10%"))
        slow20 = self.rate("+20%", lambda iv, c: c == rules.HIGHER)
        out = [("A/A: interval excludes 1", *excl, excl[1] > 0 and excl[0] <= 0.05 * excl[1]),
               ("A/A: called faster or slower", *dirs, dirs[1] > 0 and dirs[0] == 0),
               ("+20%: called faster, about the same or not slower", *wrong20, wrong20[0] == 0),
               ("+10%: called faster", *wrong10, wrong10[0] == 0)]
        if self.contend <= QUIET_UP_TO:
            out.insert(2, ("+20%: called slower", *slow20, slow20[1] > 0 and slow20[0] >= 0.80 * slow20[1]))
        return out

    def condition(self) -> str:
        """"1.9 of 2 cores free while timed" (the trials' range) or "" when no window read it."""
        if not self.free:
            return ""
        lo, hi = min(self.free), max(self.free)
        span = f"{lo:.1f}" if hi - lo < 0.05 else f"{lo:.1f}-{hi:.1f}"
        return f"{span} cores free while timed"

    def lines(self, width: int | None = WIDTH) -> list[str]:
        where = "; ".join(x for x in (f"{self.contend} competing process{'es' if self.contend != 1 else ''}",
                                      self.condition(), f"{self.shape} shape") if x)
        out = wrap(f"calibrate: {self.trials} trials on {self.machine}, {fmt_seconds(self.seconds)} ({where})", width)
        out.append(f"{'arm vs A':<8} {'pairs':>5} " + " ".join(f"{w:>{max(5, len(w))}}" for _, w in COLUMNS)
                   + f" {'median ratio':>12} {'median half-width':>17}")
        for arm in list(ARMS)[1:]:
            got, calls = self.pairs.get(arm, []), self.calls(arm)
            mid = statistics.median(iv.mid for _, iv, _ in got) if got else None
            hw = self.half_width(arm)
            out.append(f"{arm:<8} {len(got):>5} " + " ".join(f"{calls.count(c):>{max(5, len(w))}}" for c, w in COLUMNS)
                       + f" {'-' if mid is None else f'{mid:.3f}x':>12} {'-' if hw is None else f'{hw:.1%}':>17}")
        for what, n, of, ok in self.checks():
            out.append(f"{'PASS' if ok else 'FAIL'}  {what}: {n} of {of}")
        return out

    def to_json(self) -> dict:
        return {"trials": self.trials, "seconds": round(self.seconds, 1), "machine": self.machine,
                "contend": self.contend, "shape": self.shape, "others_before": self.others, "free": self.free,
                "arms": {arm: {"pairs": len(self.pairs.get(arm, [])),
                               "calls": {c: self.calls(arm).count(c)
                                         for c, _ in COLUMNS},
                               "median_half_width": self.half_width(arm)} for arm in list(ARMS)[1:]},
                "checks": [{"what": w, "count": n, "of": of, "pass": ok} for w, n, of, ok in self.checks()]}


def table(summaries: Sequence[Summary]) -> list[str]:
    """One row per competing load: A/A's false differences, +20%'s calls, every check passed or not."""
    out = [f"{'contend':>7} {'free while timed':>16} {'A/A excl. 1':>11} {'A/A called':>10} {'+20% slower':>11} "
           f"{'+20% busy':>9} {'wrong calls':>11}  result"]
    for s in summaries:
        excl, dirs = s.rate("A/A", lambda iv, c: iv.lo > 1 or iv.hi < 1), s.wrong("A/A")
        slow, busy = (s.rate("+20%", lambda iv, c, w=w: c == w) for w in (rules.HIGHER, rules.TOO_BUSY))
        wrong = sum(s.wrong(arm)[0] for arm in TRUTH)
        ok = all(c[3] for c in s.checks())
        out.append(f"{s.contend:>7} {s.condition().replace(' cores free while timed', '') or '-':>16} "
                   f"{excl[0]:>4} of {excl[1]:<3} {dirs[0]:>3} of {dirs[1]:<3} {slow[0]:>4} of {slow[1]:<3} "
                   f"{busy[0]:>2} of {busy[1]:<3} {wrong:>11}  {'PASS' if ok else 'FAIL'}")
    return out


def _plan_point(experiment: str, preset: str | None, variant: str | None, rounds: int | None, sets, shape: str):
    """The one configuration every trial measures, in the shape asked for, and the variant its arms run."""
    exp = experiments.get(experiment)
    if "protocol" not in exp.params.names():
        raise RnnlabError(f"{experiment} has no interleaved protocol; calibrate needs one that times series "
                          f"(unroll, knobs, precision)")
    overrides: dict = {}  # "preset": the preset's own shape (``core.params.PRESET_RUN``)
    if shape == "user":  # a user's own run: the experiment's defaults for how long and how often, never the preset's
        overrides.update({k: [exp.params[k].default] for k in USER_RUN if k in exp.params.names()})
    overrides.update(exp.params.parse_assignments(sets))
    if rounds is not None:
        overrides["rounds"] = [exp.params["rounds"].parse(rounds)]
    overrides["protocol"] = [INTERLEAVED]
    v = variant or exp.reference or exp.variants[0]
    plan = api.plan(experiment, preset=preset, overrides=overrides, variants=[v])
    if len(plan.points) != 1:
        raise RnnlabError("calibrate measures one configuration: give each --set one value")
    return exp, v, dict(plan.points[0])


def run(*, experiment: str = "unroll", preset: str | None = "seed", variant: str | None = None, trials: int = 10,
        rounds: int | None = None, sets: Sequence[str] = (), launcher=None,
        env: dict | None = None, say: Callable[[str], None] = lambda s: None, keep: list | None = None,
        clock: Callable[[], float] = time.monotonic, contend: int = 0, shape: str = "preset") -> Summary:
    """``trials`` interleaved points of four arms (``ARMS``) of one variant, beside ``contend`` competing
    processes; nothing is stored."""
    if trials < 1 or trials > 200:
        raise RnnlabError(f"--trials {trials}: between 1 and 200")
    exp, v, point = _plan_point(experiment, preset, variant, rounds, sets, shape)
    env = env or api.environment(device_asked(point))
    point["device"] = env["device"].lower()
    limit = envinfo.available_mb() * 0.9
    summary = Summary(trials, {arm: [] for arm in list(ARMS)[1:]}, machine=str(env.get("machine") or env["cpu"]),
                      contend=contend, shape=shape)
    t0 = clock()
    with api.competing(contend):
        for t in range(trials):
            others = round(condition.others_now(), 2)
            summary.others.append(others)
            say(f"calibrate: trial {t + 1}/{trials} ({v}, {len(ARMS)} arms, {contend} competing, other processes "
                f"{others:.1f} cores)")
            task = api.variant_task(exp, v, point, env, matmul=False)  # no roofline: nothing is stored
            tasks = {arm: {**task, "inject": extra} for arm, extra in ARMS.items()}
            history = api.run_arms(tasks, ref="A", rounds=int(point.get("rounds", 1)),
                                   budget_s=float(point.get("budget_s", 60)), deadline_s=float(point.get("deadline_s") or 0),
                                   rng=random.Random(f"calibrate-{contend}-{t}"), launcher=launcher,
                                   timeout_s=point.get("timeout_s", 900), mem_limit_mb=limit, clock=clock)
            _score(summary, history, t, keep, say, int(env.get("cores") or 1))
    summary.seconds = clock() - t0
    return summary


def _score(summary: Summary, history: dict, t: int, keep: list | None, say, cores: int) -> None:
    """One trial's intervals and calls against A, into ``summary`` (and ``keep``)."""
    row = {"trial": t + 1, "contend": summary.contend, "windows": history, "pairs": {}}
    readings = [x for a in history.values() for k, rs in a.items() if k.endswith(stats.OTHER) for r in rs for x in r]
    if readings:
        summary.free.append(round(max(0.0, cores - statistics.median(readings)), 2))
    for arm in list(ARMS)[1:]:
        for s in SERIES:
            iv = stats.session_interval(history.get(arm, {}), history.get("A", {}), s)
            if iv is None:
                continue
            call = rules.bound(iv)
            summary.pairs[arm].append((s, iv, call))
            row["pairs"].setdefault(arm, {})[s] = {"lo": iv.lo, "mid": iv.mid, "hi": iv.hi, "call": call,
                                                   "unsettled": iv.unsettled}
    if keep is not None:
        keep.append(row)
    said = {arm: [f"{s} {iv.mid:.3f} ({iv.lo:.3f}-{iv.hi:.3f}) {c}" for s, iv, c in summary.pairs[arm][-2:]]
            for arm in summary.pairs}
    say("calibrate: " + "; ".join(f"{arm}: {', '.join(x)}" for arm, x in said.items()))


def contend_levels(text: str) -> list[int]:
    """``--contend 0,1,2,4`` -> [0, 1, 2, 4]; one line naming the rule otherwise."""
    try:
        levels = [int(x) for x in str(text).split(",")]
    except ValueError:
        levels = []
    if not levels or any(n < 0 or n > 64 for n in levels):
        raise RnnlabError(f"--contend {clip(str(text))}: competing processes, whole numbers from 0 to 64, "
                          "separated by commas (e.g. 0,1,2,4)")
    return levels


def rescore(path: str) -> list[Summary]:
    """The trials a run with ``--keep`` wrote, scored again with today's intervals and calls, a Summary per load."""
    try:
        with open(path) as f:
            kept = json.load(f)
        trials, first = kept["trials"], (kept.get("summaries") or [kept.get("summary") or {}])[0]
    except OSError as e:
        raise RnnlabError(f"--from {clip(path)}: {e.strerror or e}") from None
    except (ValueError, KeyError, TypeError, IndexError) as e:
        raise RnnlabError(f"--from {clip(path)}: not what calibrate --keep writes ({clip(str(e), 80)})") from None
    out: dict[int, Summary] = {}
    cores = int(envinfo.static_env()["cores"] or 1)
    for t in trials:
        n = int(t.get("contend", 0))
        s = out.setdefault(n, Summary(0, {arm: [] for arm in list(ARMS)[1:]}, machine=str(first.get("machine", "")),
                                      contend=n, shape=str(first.get("shape", "preset"))))
        s.trials += 1
        _score(s, t["windows"], s.trials - 1, None, lambda x: None, cores)
    return [out[n] for n in sorted(out)]


def main(args) -> int:
    if args.kept:
        summaries = rescore(args.kept)
        print("\n".join(line for s in summaries for line in s.lines()))
        if len(summaries) > 1:
            print("\n".join(table(summaries)))
        return 0
    levels = contend_levels(args.contend)
    if args.keep:  # before any measuring: a path that cannot be written loses nothing
        outpath.check(args.keep, flag="--keep", force=args.force)
    kept: list = []
    summaries = []
    for n in levels:
        summaries.append(run(experiment=args.experiment, preset=args.preset, variant=args.variant,
                             trials=args.trials, rounds=args.rounds, sets=args.sets, contend=n, shape=args.shape,
                             keep=kept if args.keep else None,
                             say=lambda s: print("\n".join(wrap("rnnlab: " + s, WIDTH, " " * 8)), file=sys.stderr,
                                                 flush=True)))
    if args.keep:
        with open(args.keep, "w") as f:
            json.dump({"summaries": [s.to_json() for s in summaries], "trials": kept}, f, indent=1)
    if args.json:
        print(json.dumps([s.to_json() for s in summaries] if len(summaries) > 1 else summaries[0].to_json(), indent=1))
        return 0
    for s in summaries:
        print("\n".join(s.lines()))
    if len(summaries) > 1:
        print("\n".join(table(summaries)))
    return 0
