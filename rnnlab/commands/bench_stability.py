"""``python -m rnnlab bench-stability [--experiment unroll] [--preset seed] [--variants A,B] [--rounds 3]``.

A benchmark of the measurement itself, not a test: it runs the same plan twice (``fresh``, into a scratch store,
never the user's) and shows how far the two runs' figures lie apart. Per variant and metric: each run's median over
its rounds, their spread ``|m1 - m2| / mean``, and whether run 1's ratio-to-reference interval
(``judge.findings.interval``: paired windows of an interleaved run, else the rounds) holds run 2's ratio, and
whether the two runs make the same statement (``rules.bound``). Last lines: the largest spread, how many intervals
held, how many calls agree and how many contradict each other. Progress goes to stderr, the report to stdout.
"""

from __future__ import annotations

import errno
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from rnnlab import experiments
from rnnlab.commands._output import WIDTH, wrap, width_of
from rnnlab.commands._replication import replication
from rnnlab.core import condition, outpath, rules, stats
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip, fmt_seconds
from rnnlab.core.record import Record
from rnnlab.core.store import Store, default_path
from rnnlab.engine import api
from rnnlab.judge import findings

METRICS = ("fwd_ms", "train_ms", "build_s")


def setup_arguments(sub) -> None:
    p = sub.add_parser("bench-stability", help="run a preset twice (fresh, into a scratch store) and show how far "
                                               "the two runs' figures lie apart")
    p.add_argument("--experiment", default="unroll", help="an experiment that times something (default: unroll)")
    p.add_argument("--preset", default="seed", help="quick, seed or full (default: seed); none: a user's own run "
                                                     "(the experiment's defaults with --set)")
    p.add_argument("--variants", help="comma-separated variant names (default: the preset's)")
    p.add_argument("--ref", metavar="VARIANT", help="the reference the others are timed beside and compared with "
                                                    "(default: the experiment's; as run --ref)")
    p.add_argument("--rounds", type=int, default=None, help="rounds per run (default: the preset's, or a user's own "
                                                            "run's with --preset none)")
    p.add_argument("--runs", type=int, default=2, help="runs of the plan (default: 2); every pair of runs under one "
                                                       "stated condition is compared")
    p.add_argument("--contend", default="0", metavar="N[,N...]",
                   help="competing CPU-bound processes beside the runs, taken in turn (e.g. 0,1 with --runs 6: "
                        "quiet, loaded, quiet, ...); default 0: whatever else the machine is doing")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter of the experiment (one value each)")
    p.add_argument("--metrics", default=",".join(METRICS), help=f"comma-separated (default: {','.join(METRICS)})")
    p.add_argument("--keep", metavar="PATH", help="also write both runs' records to PATH (JSON: [{run, record}]), "
                                                  "to study the rounds later")
    p.add_argument("--from", dest="kept", metavar="PATH",
                   help="measure nothing: report on the records a run with --keep wrote")
    p.add_argument("--force", action="store_true", help="let --keep write through a symbolic link or to a device")
    p.set_defaults(func=main)


@dataclass
class Result:
    lines: list[str]
    max_spread: float | None  # percent
    held: int  # run 1's intervals that hold run 2's ratio
    intervals: int  # intervals compared
    runs: tuple[list[Record], ...] = field(default_factory=lambda: ([], []))
    loads: list = field(default_factory=list)  # each run's competing processes


def _spread(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or a + b == 0:
        return None
    return abs(a - b) / ((a + b) / 2) * 100.0


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.3e}"


@dataclass
class _Tally:
    """What :func:`report` counts over its rows, for its last lines."""

    spreads: list[tuple[float, str]] = field(default_factory=list)
    held: int = 0
    compared: int = 0
    calls: list[tuple[str, str]] = field(default_factory=list)  # (run 1's call, run 2's) of each ratio
    other: dict[str, list[tuple[bool, float]]] = field(  # (held, hi / lo) per candidate interval rule
        default_factory=lambda: {name: [] for name in stats.CANDIDATES})


HEAD = (f"{'variant':<22} {'metric':<9} {'run 1':>10} {'run 2':>10} {'spread':>7}  "
        f"{'ratio to reference, run 1 [interval]':<38} {'run 2':>7} {'held':>5}")


def report(plan: api.Plan, run1: Sequence[Record], run2: Sequence[Record], *, reference: str | None,
           metrics: Sequence[str] = METRICS, width: int | None = WIDTH) -> Result:
    """The comparison of two runs of ``plan`` (records in plan order, one per (point, variant)); lines cut or
    wrapped to ``width`` columns (None: as long as they come)."""

    def cut(line: str) -> str:
        return line if width is None else clip(line, width)

    nv = len(plan.variants)
    lines: list[str] = []
    tally = _Tally()
    for pi, point in enumerate(plan.points):
        a = {r.variant: r for r in run1[pi * nv:(pi + 1) * nv]}
        b = {r.variant: r for r in run2[pi * nv:(pi + 1) * nv]}
        where = f"point {pi + 1}/{len(plan.points)}: " if len(plan.points) > 1 else ""
        shown = {k: v for k, v in point.items() if k in ("cell", "layers", "units", "batch", "seq_len", "lengths")}
        lines += wrap(f"{plan.experiment}, {where}{' '.join(f'{k}={v}' for k, v in shown.items())}, "
                      f"{point.get('rounds', 1)} rounds per run, reference {reference or '-'}", width)
        lines.append(HEAD)
        refs = (a.get(reference), b.get(reference))
        for v in plan.variants:
            ea, eb = a.get(v), b.get(v)
            if ea is None or eb is None or not ea.ok or not eb.ok:
                why = (ea.error if ea is not None and not ea.ok else eb.error if eb is not None else "missing")
                lines.append(cut(f"{v:<22} failed: {why}"))
                continue
            rows = [_row(v, m, (ea, eb), refs, reference, tally) for m in metrics
                    if ea.metrics.get(m) is not None or eb.metrics.get(m) is not None]
            lines += [cut((f"{v:<22}" if i == 0 else " " * 22) + row) for i, row in enumerate(rows)]
        lines.append("")
    lines += _summary(tally, reference, width)
    worst = max(tally.spreads) if tally.spreads else None
    return Result(lines, None if worst is None else worst[0], tally.held, tally.compared, (list(run1), list(run2)))


def _row(v: str, m: str, pair: tuple[Record, Record], refs: tuple, reference: str | None, tally: _Tally) -> str:
    """One (variant, metric) row after its variant column: both runs' medians, their spread, run 1's ratio to the
    reference with its interval, run 2's ratio and whether the interval held it (counted in ``tally``)."""
    ea, eb = pair
    ra, rb = refs
    m1, m2 = ea.metrics.get(m), eb.metrics.get(m)
    sp = _spread(m1, m2)
    if sp is not None:
        tally.spreads.append((sp, f"{v} {m}"))
    ratio = "(the reference)" if v == reference else "-"
    r2 = ok = ""
    if reference and v != reference and ra is not None and rb is not None and ra.ok and rb.ok:
        i1 = findings.interval(ea, ra, m)  # paired windows where the run interleaved, else rounds
        i2 = findings.interval(eb, rb, m)
        if i1 is not None:
            ratio = f"{i1.mid:.3f} [{i1.lo:.3f} - {i1.hi:.3f}] ({i1.how}, n={i1.n})"
        if i2 is not None:
            r2 = f"{i2.mid:.3f}"
        if i1 is not None and i2 is not None:
            tally.calls.append((rules.bound(i1), rules.bound(i2)))
            tally.compared += 1
            inside = i1.lo <= i2.mid <= i1.hi
            tally.held += inside
            ok = "yes" if inside else "NO"
            for name, rule in stats.CANDIDATES.items():
                span = rule(ea.round_metrics, ra.round_metrics, m)
                if span is not None:
                    tally.other[name].append((span[0] <= i2.mid <= span[1], span[1] / span[0]))
    return (f" {m:<9} {_num(m1):>10} {_num(m2):>10} "
            f"{'-' if sp is None else f'{sp:.1f}%':>7}  {ratio:<38} {r2:>7} {ok:>5}").rstrip()


def _summary(tally: _Tally, reference: str | None, width: int | None) -> list[str]:
    """The last lines: the largest spread, how many intervals held, how the two runs' calls agree, and how the other
    interval rules would have done on the same rounds (what choosing a rule rests on)."""
    worst = max(tally.spreads) if tally.spreads else None
    lines = wrap((f"max spread between the runs' medians: {worst[0]:.1f}% ({worst[1]}); " if worst else
                  "max spread between the runs' medians: - (nothing measured twice); ")
                 + f"{tally.held} of {tally.compared} ratio intervals of run 1 held run 2's ratio", width)
    if tally.calls:
        same, contra = agreement(tally.calls)
        lines += wrap(f"statements against {reference} (faster / about the same / slower / one side ruled out / too "
                      f"noisy to call): the same in {same} of {len(tally.calls)} ratios; contradicting (two that "
                      f"cannot both be true: faster in one run, about the same, slower or not faster in the other) "
                      f"{contra}", width)
    said = [f"{name} {sum(h for h, _ in got)} of {len(got)} (median width {statistics.median(w for _, w in got):.2f}x)"
            for name, got in tally.other.items() if got]
    if said:
        lines += wrap("other interval rules on the same rounds (held run 2's ratio; median hi/lo): " + "; ".join(said),
                      width)
    return lines


def agreement(calls: Sequence[tuple[str, str]]) -> tuple[int, int]:
    """(the same statement in both runs, contradictions): two statements that cannot both be true
    (``rules.contradict``: a direction in one run and the other direction or "about the same" in the other, or a side
    ruled out in one that the other called); "too noisy to call" and "too busy to decide" contradict nothing."""
    same = sum(a == b for a, b in calls)
    contra = sum(rules.contradict(a, b) for a, b in calls)
    return same, contra


def run(*, experiment: str = "unroll", preset: str | None = "seed", variants: str | Sequence[str] | None = None,
        rounds: int | None = 3, sets: Sequence[str] = (), metrics: Sequence[str] = METRICS, launcher=None,
        env=None, on_progress: Callable | None = None, say: Callable[[str], None] = lambda s: None,
        settle_s: float = 0.0, sleep: Callable[[float], None] = time.sleep, width: int | None = WIDTH,
        runs: int = 2, contend: Sequence[int] = (0,), ref: str | None = None) -> Result:
    """Run the plan ``runs`` times, fresh, into a scratch store, beside ``contend[i % len(contend)]`` competing
    processes in run ``i``; compare. ``launcher``/``env`` as :func:`api.run`'s.

    ``settle_s``: before each later run, wait up to this long for other processes' CPU to fall below
    ``rules.BUSY_CORES`` (the run's own workers are gone by then; competing load starts after the wait)."""
    if runs < 2 or runs > 20:
        raise RnnlabError(f"--runs {runs}: between 2 and 20")
    plan, reference = _plan(experiment, preset, variants, rounds, sets, ref)
    kw = {"launcher": launcher} if launcher is not None else {}
    if env is not None:
        kw["env"] = env
    done: list[list[Record]] = []
    loads: list[int] = []
    with tempfile.TemporaryDirectory(prefix="rnnlab-bench-") as tmp:
        store = Store(Path(tmp) / "bench.sqlite")
        user = default_path()
        if user.exists():  # read only: its cached probe saves a worker; nothing is written there
            api.copy_probes(Store(user), store)
        est = api.estimate(plan, store=store, fresh=True)
        say(f"bench-stability: {plan.experiment}, {runs} runs x {len(plan.variants)} variants x {len(plan.points)} "
            f"point(s) x {plan.points[0].get('rounds', 1)} rounds = {runs * est.workers} workers, about "
            f"{fmt_seconds(runs * est.seconds)}")
        for i in range(runs):
            if i > 0 and settle_s > 0:
                _settle(settle_s, say, sleep)
            n = int(contend[i % len(contend)])
            t0 = time.monotonic()
            with api.competing(n):
                done.append(api.run(plan, store=store, fresh=True, on_progress=on_progress, **kw))
            loads.append(n)
            say(f"bench-stability: run {i + 1}/{runs} ({n} competing; {condition.words_of(done[-1]) or '-'}) took "
                f"{fmt_seconds(time.monotonic() - t0)}")
    groups = conditions(done)
    first = next((g for g in groups if len(g) >= 2), [0, 1])
    res = report(plan, done[first[0]], done[first[1]], reference=reference, metrics=metrics, width=width)
    head = wrap(f"detail: run {first[0] + 1} against run {first[1] + 1}", width) if runs > 2 else []
    res.lines = [*head, *res.lines, "", *replication(plan, done, loads, groups, reference, metrics, width)]
    res.runs, res.loads = tuple(done), list(loads)
    return res


def _plan(experiment, preset, variants, rounds, sets, ref=None) -> tuple[api.Plan, str]:
    exp = experiments.get(experiment)
    if "rounds" not in exp.params.names():
        raise RnnlabError(f"{experiment} times nothing (it checks behaviour); bench-stability needs an "
                              "experiment that times something")
    overrides = exp.params.parse_assignments(sets)
    if rounds is not None:
        overrides["rounds"] = [exp.params["rounds"].parse(rounds)]
    names = ([v.strip() for v in variants.split(",") if v.strip()] if isinstance(variants, str) else
             list(variants) if variants else None)
    plan = api.plan(experiment, preset=preset, overrides=overrides, variants=names, ref=ref)
    reference = plan.reference or plan.variants[0]
    if reference not in plan.variants:  # the ratios need it among the records
        plan = api.plan(experiment, preset=preset, overrides=overrides, variants=[reference, *plan.variants], ref=ref)
    return plan, reference


def _other(recs: Sequence[Record]) -> float | None:
    """A run's reading of other processes' cores while it was timed (the median over its records)."""
    xs = [c.other for c in (condition.Condition.of(r.details.get("condition")) for r in recs)
          if c is not None and c.other is not None]
    return statistics.median(xs) if xs else None


def conditions(runs: Sequence[Sequence[Record]]) -> list[list[int]]:
    """The runs grouped by the condition their records state (one thread count, loads within ``rules.SAME_LOAD`` of
    the group's first run), in run order."""
    groups: list[list[int]] = []
    for i, recs in enumerate(runs):
        for g in groups:
            if rules.same_load(_other(runs[g[0]]), _other(recs)):
                g.append(i)
                break
        else:
            groups.append([i])
    return groups


def _settle(limit_s: float, say: Callable[[str], None], sleep: Callable[[float], None], step_s: float = 5.0) -> None:
    """Wait (at most ``limit_s``) until ``api.busy_warning`` has nothing to say."""
    waited = 0.0
    while api.busy_warning() is not None and waited < limit_s:
        if waited == 0:
            say(f"bench-stability: waiting up to {fmt_seconds(limit_s)} for the load of run 1 to settle")
        sleep(step_s)
        waited += step_s


def main(args) -> int:
    from rnnlab.commands.run import ProgressBar

    if args.kept:
        plan, runs, loads = load_all(args.kept)
        exp = experiments.get(plan.experiment)
        reference = args.ref or exp.reference or plan.variants[0]
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
        res = report(plan, runs[0], runs[1], reference=reference, width=width_of(args), metrics=metrics)
        print("\n".join(res.lines + [""] + replication(plan, runs, loads, conditions(runs), reference, metrics,
                                                         width_of(args))))
        return 0
    if args.keep:
        outpath.check(args.keep, flag="--keep", force=args.force)  # before minutes of measuring, not after
    from rnnlab.commands.calibrate import contend_levels

    preset = None if args.preset in ("none", "") else args.preset
    res = run(experiment=args.experiment, preset=preset, variants=args.variants, rounds=args.rounds,
              runs=args.runs, contend=contend_levels(args.contend), ref=args.ref,
              sets=args.sets, metrics=[m.strip() for m in args.metrics.split(",") if m.strip()], settle_s=90.0,
              on_progress=ProgressBar(), width=width_of(args),
              say=lambda s: print("\n".join(wrap("rnnlab: " + s, WIDTH, " " * 8)), file=sys.stderr, flush=True))
    print("\n".join(res.lines))
    if args.keep:
        keep(res, args.keep)
    return 0


def keep(res: Result, path: str) -> None:
    """Both runs' records as JSON, ``[{"run": 1|2, "record": {...}}]``; a path that cannot be written: RnnlabError."""
    import json

    rows = [{"run": i, "contend": res.loads[i - 1] if i <= len(res.loads) else None, "record": r.to_dict()}
            for i, recs in enumerate(res.runs, 1) for r in recs]
    try:
        Path(path).write_text(json.dumps(rows, indent=1))
    except OSError as e:
        why = e.strerror or str(e)
        if e.errno == errno.ENOSPC:
            why = f"the disk is full ({why})"
        raise RnnlabError(f"--keep {clip(path)}: {why}") from None



def load(path: str) -> tuple[api.Plan, list[Record], list[Record]]:
    """What :func:`keep` wrote, back as (the plan both runs ran, run 1's records, run 2's), in plan order."""
    plan, runs, _ = load_all(path)
    return plan, runs[0], runs[1]


def load_all(path: str) -> tuple[api.Plan, list[list[Record]], list[int | None]]:
    """What :func:`keep` wrote: the plan, every run's records in plan order, and each run's competing processes
    (None where the file does not say)."""
    import json

    try:
        rows = json.loads(Path(path).read_text())
        n = max(int(r["run"]) for r in rows)
        runs = {i: [Record.from_dict(r["record"]) for r in rows if r["run"] == i] for i in range(1, n + 1)}
        loads = [next((r.get("contend") for r in rows if r["run"] == i), None) for i in range(1, n + 1)]
    except OSError as e:
        raise RnnlabError(f"--from {clip(path)}: {e.strerror or e}") from None
    except (ValueError, TypeError, KeyError) as e:
        raise RnnlabError(f"--from {clip(path)}: not what --keep writes ({clip(str(e), 80)})") from None
    if n < 2 or not all(runs.values()):
        raise RnnlabError(f"--from {clip(path)}: needs the records of two runs or more")
    first = runs[1][0]
    values: dict[str, list] = {}
    for r in runs[1]:
        for k, v in r.params.items():
            values.setdefault(k, [])
            if v not in values[k]:
                values[k].append(v)
    plan = api.plan(first.experiment, overrides=values, variants=list(dict.fromkeys(r.variant for r in runs[1])))

    def ordered(recs: list[Record]) -> list[Record]:
        by = {(repr(sorted(r.params.items())), r.variant): r for r in recs}
        return [by[key] for point in plan.points for v in plan.variants
                if (key := (repr(sorted(point.items())), v)) in by]

    return plan, [ordered(runs[i]) for i in range(1, n + 1)], loads
