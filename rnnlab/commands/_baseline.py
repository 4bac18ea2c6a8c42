"""``python -m scripts.make_baseline``: regenerate the bundled results on this machine, on the current protocol, as a long job
that resumes (``Step``s of ``PLAN``, each a ``python -m rnnlab run`` into one persistent store per machine; a rerun
serves what that store holds), reports its progress and time left, and ends with a summary per page.

The plan, and what each experiment cost when it last ran whole (minutes of wall time on the 2-core AMD EPYC VM,
2026-12-07, quiet; a 2-core Xeon VM took about 1.6x as long; the rounds are as the preset's points took them):

    unroll     23   seed point (12 variants) 3.5; the same at 1 thread (7 variants) 3.1; sequence length on a log
                    grid 25 / 100 / 400 (100 is the seed point; 7 variants) 7.6; LSTM and GRU at the seed (6) 8.0;
                    the quick sweep 25 / 50 / 100 the page opens on 1.1
    knobs       2.2 quick, seed (7 variants)
    precision   3.0 quick, seed (10 variants)
    varlen      0.7 quick, seed
    padding     4.2 quick, seed (6 variants, 3 rounds)
    pitfalls    0.8 every variant at the quick and seed sizes
    migrate     1.0 every variant at the quick size, the seed's three
    training    1.8 quick, seed (3 rounds)
    seed003    12.4 seed (3 rounds; the static graph alone 3.7-4.1 min a round)
    total      50   (the cut from the sequential bundle: seq_len 50 and 200, and the sweep's XLA variants)

Before a machine has timed a step itself, its "time left" prices each configuration from the bundled records' own
rounds of the same configuration (``engine.estimates``): 49.3 minutes for the whole plan on a fresh store of the
bundled machine (the bundle's own rounds priced back; its run took 49.5); from a bundle without rounds' costs, its
figures modelled, it said 25.
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

from rnnlab.core import format as fmt
from rnnlab.core import rules
from rnnlab.core.params import SEQUENTIAL

ROOT = Path(__file__).resolve().parents[2]
SWEEP = ("tf1_static", "tf1_dynamic", "tf2_unrolled", "tf2_while", "keras", "keras_unroll", "keras_cell")
CELLS = ("tf1_static", "tf1_dynamic", "tf2_while", "keras", "keras_unroll", "keras_cell")
ALL = None  # every variant of the experiment (pitfalls, migrate: their pages show each one)


@dataclass(frozen=True)
class Step:
    """One ``python -m rnnlab run``: ``api.plan``'s arguments, and why it is in the bundle."""

    experiment: str
    preset: str
    why: str
    overrides: tuple[tuple[str, Any], ...] = ()
    variants: tuple[str, ...] | None | str = "preset"  # "preset": the preset's; ALL: every variant
    needs: str | None = None  # a parameter this rnnlab must know, else the step is skipped (said so)

    def plan_args(self, all_variants: Callable[[str], Sequence[str]]) -> dict[str, Any]:
        variants = (None if self.variants == "preset" else list(all_variants(self.experiment))
                    if self.variants is ALL else list(self.variants))
        return {"experiment": self.experiment, "preset": self.preset, "variants": variants,
                "overrides": {k: list(v) if isinstance(v, tuple) else v for k, v in self.overrides}}


PLAN: tuple[Step, ...] = (
    Step("unroll", "seed", "the seed point, every variant, all threads"),
    Step("unroll", "seed", "the seed point at 1 thread", (("threads", 1),), SWEEP, needs="threads"),
    Step("unroll", "seed", "sequence length (log grid; 100 is the seed point)", (("seq_len", (25, 400)),), SWEEP),
    Step("unroll", "seed", "LSTM and GRU at the seed", (("cell", ("lstm", "gru")),), CELLS),
    Step("unroll", "quick", "the quick sweep", (("seq_len", (25, 50, 100)),)),
    *(s for e in ("varlen", "padding", "pitfalls", "migrate", "knobs", "precision", "training")
      for s in (Step(e, "quick", "the quick size", variants=ALL if e in ("pitfalls", "migrate") else "preset"),
                Step(e, "seed", "the seed's configuration"))),
    Step("seed003", "seed", "seed 003's configuration"),
)


def machine_name(cores: int | None = None, cpu: str | None = None) -> str:
    """``cpu-<vendor>-<cores>core`` (the bundle's file names), from the CPU's name."""
    cores = cores or os.cpu_count() or 1
    if cpu is None:
        from rnnlab.core.envinfo import cpu_model  # /proc/cpuinfo's model name (platform.processor() is often empty)

        cpu = cpu_model()
    cpu = (cpu or platform.processor() or "").lower()
    vendor = next((v for v in ("epyc", "xeon", "ryzen", "core", "graviton", "apple") if v in cpu), "")
    return f"cpu-{vendor + '-' if vendor else ''}{cores}core"


def runnable(steps: Iterable[Step], known: Callable[[str, str], bool]) -> tuple[list[Step], list[Step]]:
    """The steps this rnnlab can run, and those it skips (a parameter it does not know)."""
    run, skip = [], []
    for s in steps:
        (skip if s.needs and not known(s.experiment, s.needs) else run).append(s)
    return run, skip


def progress_line(k: int, n: int, step: Step, left_s: float | None) -> str:
    """"step 3 of 20, about 40 min left: unroll seed (sequence length ...)" between commands."""
    left = f", {fmt.fmt_left(left_s, 0.0)}" if left_s is not None else ""
    return f"step {k} of {n}{left}: {step.experiment} {step.preset} ({step.why})"


@dataclass
class Walls:
    """Wall seconds per step, kept beside the store so a resumed run's summary still adds up every step."""

    path: Path
    seconds: dict[str, float] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> "Walls":
        try:
            return cls(path, {k: float(v) for k, v in json.loads(path.read_text()).items()})
        except (OSError, ValueError, AttributeError):
            return cls(path)

    def add(self, command: str, seconds: float) -> None:
        self.seconds[command] = self.seconds.get(command, 0.0) + seconds
        self.path.write_text(json.dumps(self.seconds, indent=1))


class Calls(NamedTuple):
    """A page's ratio statements against the reference: decided (``rules.direction``), one side of the margin ruled
    out (``rules.BOUNDED``), too noisy to call or too busy to decide."""

    decided: int = 0
    bounded: int = 0
    noisy: int = 0


METRICS = ("fwd_ms", "train_ms", "build_s", "peak_mem_mb")  # every ratio the appendix gives an interval


def noisy_share(records: Sequence, reference: Callable[[str], str | None],
                interval: Callable, statement: Callable) -> Calls:
    """Each record against its experiment's reference at one configuration and machine, for every metric of
    ``METRICS`` both have, by what ``statement`` (``rules.bound``) lets a sentence say of its interval."""
    from rnnlab.judge import select

    said = {"decided": 0, "bounded": 0, "noisy": 0}
    groups: dict[tuple, list] = {}
    for r in records:
        if r.ok:
            groups.setdefault((r.experiment, select.config_key(r), select.machine_key(r)), []).append(r)
    for (exp, *_), rs in groups.items():
        ref = next((r for r in rs if r.variant == reference(exp)), None)
        for r in rs:
            if ref is None or r is ref:
                continue
            for m in METRICS:
                if m in r.metrics and m in ref.metrics:
                    iv = interval(r, ref, m)
                    if iv is None:
                        continue
                    st = statement(iv)
                    said["decided" if rules.decided(st) else "bounded" if rules.bounded(st) else "noisy"] += 1
    return Calls(**said)


def _experiment_of(command: str) -> str:
    """The experiment of a step's command as ``Walls`` keeps it ("run unroll --preset seed" -> "unroll")."""
    words = command.split()
    return words[1] if len(words) > 1 and words[0] == "run" else words[0] if words else ""


def summary(records: Sequence, walls: Mapping[str, float], page_of: Callable[[str], str],
            calls: Callable[[Sequence], Sequence[int]], claim_counts: Mapping[str, int]) -> str:
    """Per page: records, ratio statements decided, one side ruled out and too noisy (:class:`Calls`), wall time of
    its experiments; then the claims."""
    lines = [f"{'page':<12} {'experiment':<10} {'records':>7} {'decided':>7} {'one side':>8} {'noisy':>5} "
             f"{'noisy %':>7} {'wall':>9}"]
    by_exp: dict[str, list] = {}
    for r in records:
        by_exp.setdefault(r.experiment, []).append(r)
    rows = sorted(set(by_exp) | {_experiment_of(k) for k in walls}, key=lambda e: (page_of(e), e))
    for e in rows:
        rs = by_exp.get(e, [])
        c = Calls(*calls(rs))
        n = sum(c)
        share = fmt.fmt_percent(c.noisy / n) if n else fmt.MISSING
        wall = sum(s for k, s in walls.items() if _experiment_of(k) == e)
        lines.append(f"{page_of(e):<12} {e:<10} {len(rs):>7} {c.decided:>7} {c.bounded:>8} {c.noisy:>5} {share:>7} "
                     f"{_minutes(wall):>9}")
    lines.append(f"total wall {_minutes(sum(walls.values()))}; claims: "
                 + ", ".join(f"{n} {st}" for st, n in claim_counts.items()))
    return "\n".join(lines)


def _minutes(s: float) -> str:
    return f"{s / 60:.1f} min" if s else fmt.MISSING


def old_protocol(record: Mapping, interleaved: Iterable[str]) -> bool:
    """A record of an experiment that has the interleaved protocol (``interleaved``), measured the old, sequential
    way (a record without the ``protocol`` parameter was: ``params.IMPLIED``)."""
    return (record.get("experiment") in set(interleaved)
            and (record.get("params") or {}).get("protocol", SEQUENTIAL) == SEQUENTIAL)


def prune_old(bundle_dir: Path, keep: str, interleaved: Iterable[str]) -> list[str]:
    """Take old-protocol records out of the other machines' files (a file left empty goes); what it did, in words."""
    said = []
    for f in sorted(bundle_dir.glob("*.json")):
        if f.name == keep:
            continue
        rs = json.loads(f.read_text())
        kept = [r for r in rs if not old_protocol(r, interleaved)]
        if len(kept) == len(rs):
            continue
        if kept:
            f.write_text(json.dumps(kept, indent=1) + "\n")
            said.append(f"{f.name}: {len(rs) - len(kept)} old-protocol records left the bundle, {len(kept)} kept")
        else:
            f.unlink()
            said.append(f"{f.name}: every record was old-protocol; the file left the bundle")
    return said


def chosen_steps(text: str | None) -> set[int] | None:
    """``--steps 1,2`` -> {1, 2}; None: every step."""
    if not text:
        return None
    try:
        got = {int(x) for x in text.split(",")}
    except ValueError:
        got = set()
    if not got or not got <= set(range(1, len(PLAN) + 1)):
        raise SystemExit(f"make_baseline: --steps {fmt.clip(text)}: step numbers from 1 to {len(PLAN)}, e.g. 1,2")
    return got


def with_rest(new: Sequence[Mapping], old: Sequence[Mapping]) -> list[Mapping]:
    """``new`` plus the ``old`` records of every (experiment, variant, configuration, machine) ``new`` lacks: a
    partial regeneration replaces what it measured and leaves the rest of the machine's file as it was."""
    from rnnlab.core.record import Record
    from rnnlab.judge import select

    def key(d: Mapping) -> tuple:
        r = Record.from_dict({k: v for k, v in d.items() if k != "cached"})
        return r.experiment, r.variant, select.config_key(r, ignore=select.STANDS_IN), select.device_of(r)

    have = {key(d) for d in new}
    return [*new, *(d for d in old if key(d) not in have)]


def _parse(argv):
    import argparse

    ap = argparse.ArgumentParser(prog="python -m scripts.make_baseline", description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--machine", help="the bundle file's name (default: cpu-<vendor>-<cores>core from this CPU)")
    ap.add_argument("--experiment", action="append", help="run only this experiment's steps (repeatable)")
    ap.add_argument("--plan", action="store_true", help="print the steps and the engine's estimate; run nothing")
    ap.add_argument("--no-write", action="store_true", help="measure only; do not write data/baseline")
    ap.add_argument("--steps", help="run only these steps of the plan (numbers as --plan prints them, e.g. 1,2)")
    ap.add_argument("--keep-rest", action="store_true",
                    help="a partial regeneration: the machine's file keeps its records of every configuration the "
                         "store does not hold (old-protocol ones too, until their steps run)")
    return ap.parse_args(argv)


def _known(experiment: str, param: str) -> bool:
    from rnnlab import experiments

    return any(p.name == param for p in experiments.get(experiment).params.params)


def _left(steps: Sequence[Step], store) -> float:
    """The engine's estimate of the steps still to run (what the store holds counts nothing)."""
    from rnnlab import experiments
    from rnnlab.engine import api

    total = 0.0
    for s in steps:
        p = api.plan(**s.plan_args(lambda e: experiments.get(e).variants), available_mb=math.inf)
        total += api.estimate(p, store=store).seconds
    return total


def _command(step: Step) -> list[str]:
    from rnnlab import experiments
    from rnnlab.engine import api

    p = api.plan(**step.plan_args(lambda e: experiments.get(e).variants), available_mb=math.inf)
    return p.command().split()[3:]  # after "python -m rnnlab"


def main(argv: Sequence[str] | None = None) -> int:
    from rnnlab import experiments
    from rnnlab.core import rules
    from rnnlab.core.store import Store
    from rnnlab.judge import claims, findings

    a = _parse(argv)
    name = a.machine or machine_name()
    cache = ROOT / "data" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    store_path = cache / f"baseline-{name}.sqlite"
    os.environ["RNNLAB_STORE"] = str(store_path)
    chosen = chosen_steps(a.steps)
    steps, skipped = runnable([s for i, s in enumerate(PLAN, 1) if (not a.experiment or s.experiment in a.experiment)
                               and (chosen is None or i in chosen)], _known)
    for s in skipped:
        print(f"skipped: {s.experiment} {s.preset} ({s.why}): this rnnlab has no {s.needs} parameter", file=sys.stderr)
    store, walls = Store(store_path), Walls.load(cache / f"baseline-{name}.walls.json")
    for k, s in enumerate(steps, 1):
        cmd = _command(s)
        print(progress_line(k, len(steps), s, _left(steps[k - 1:], store)), file=sys.stderr)
        print("+ python -m rnnlab " + " ".join(cmd), file=sys.stderr)
        if a.plan:
            continue
        t0 = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "rnnlab", *cmd], cwd=ROOT, stdout=subprocess.DEVNULL)
        walls.add(" ".join(cmd), time.monotonic() - t0)
        if done.returncode:
            print(f"stopped: step {k} exited {done.returncode}; run again to resume", file=sys.stderr)
            return done.returncode
    if a.plan:
        return 0
    records = store.records()
    interleaved = [e for e in experiments.names() if _known(e, "protocol")]
    records = [r for r in records if not old_protocol({"experiment": r.experiment, "params": r.params}, interleaved)]
    counts: dict[str, int] = {}
    for _, v in claims.evaluate(records):
        counts[str(v.status)] = counts.get(str(v.status), 0) + 1
    print(summary(records, walls.seconds, lambda e: experiments.get(e).page,
                  lambda rs: noisy_share(rs, lambda e: experiments.get(e).reference, findings.interval,
                                         rules.bound), counts))
    if not a.no_write:
        from rnnlab.commands import results

        out = ROOT / "data" / "baseline" / f"{name}.json"
        bundle = [r for r in json.loads(results.run(fmt="json", include_baseline=False, store=store))
                  if not old_protocol(r, interleaved)]
        if a.keep_rest and out.exists():
            bundle = with_rest(bundle, json.loads(out.read_text()))
        out.write_text(json.dumps(bundle, indent=1) + "\n")
        print(f"wrote {out.relative_to(ROOT)} ({len(bundle)} records)", file=sys.stderr)
        if not a.keep_rest:
            for line in prune_old(out.parent, out.name, interleaved):
                print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
