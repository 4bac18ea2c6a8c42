"""What every claim's judge shares: records of an experiment and variant, pairs of variants measured at one
configuration and device on one machine (``pairs_of``), where a record comes from, and a comparison in words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from rnnlab.core.rules import Status
from rnnlab.core import format as fmt
from rnnlab.core import wording
from rnnlab.core import rules
from rnnlab.core.record import Record
from rnnlab.core.stats import Interval
from rnnlab.experiments import seeds
from rnnlab.judge import select
from rnnlab.judge.claim import Claim, Verdict


def successful(records: Sequence[Record], experiment: str, variant: str | None = None, metric: str | None = None):
    """Successful records, the preferred first (``select.rank``)."""
    return sorted((r for r in records if r.experiment == experiment and r.ok
                   and (variant is None or r.variant == variant) and (metric is None or metric in r.metrics)),
                  key=select.rank)


def records_of(records: Sequence[Record], experiment: str, variant: str | None = None):
    return sorted((r for r in records if r.experiment == experiment and (variant is None or r.variant == variant)),
                  key=select.rank)


def spot_of(r: Record, ignore: Sequence[str] = ()) -> tuple[str, str, str]:
    """Where a record stands: configuration (without ``ignore``), device, machine. Equal spots: comparable."""
    return select.config_key(r, ignore), select.device_of(r), select.machine_key(r)


def prefer_here(items: list, spot: Callable[[Any], tuple[str, str]], local: Callable[[Any], bool]) -> list:
    """Where this machine's store has an item at a configuration and device, other machines' items there go."""
    here = {spot(x) for x in items if local(x)}
    return [x for x in items if local(x) or spot(x) not in here]


def describe(params: Mapping, device: str) -> str:
    """A configuration in words, as every table caption says it (``format.fmt_params``), plus data set and device."""
    parts = [fmt.fmt_params(dict(params))]
    if "dataset" in params:
        parts.append(f"dataset {params['dataset']}" + (f", {params['epochs']} epochs" if "epochs" in params else ""))
    parts.append(device)
    return ", ".join(p for p in parts if p)


def whose(r: Record, timed: Sequence[Record] = ()) -> str:
    """Whose the record is, " [bundled from <machine>]" ("" for this machine's), and for a figure of ``timed``
    records the condition they were timed under (``select.busy_note``): " [bundled from <machine>; 2 threads; 2 of 2
    cores free while timed]". The seed point at 1 thread and at every core read apart, never as one."""
    parts = ([] if r.source == "local" else [select.origin(r)]) + ([select.busy_note(timed)] if timed else [])
    parts = [x for x in parts if x]
    return f" [{'; '.join(parts)}]" if parts else ""


def at_record(r: Record, ignore: Sequence[str] = ()) -> str:
    """One record's configuration, device, origin and condition: "rnn, 3x128, ..., CPU [bundled from ...; 2
    threads; ...]"."""
    return describe(select.config_of(r, ignore), select.device_of(r)) + whose(r, [r])


def device_ok(r: Record, device: str) -> bool:
    return device == "any" or select.device_of(r) == device


def no_gpu_here(records: Sequence[Record]) -> bool:
    """True when the records show a machine without a GPU (and none with one)."""
    envs = [r.env for r in records if r.source == "local"] or [r.env for r in records]
    return bool(envs) and not any(e.get("gpu") or str(e.get("device", "")).upper() == "GPU" for e in envs)


def why_by(status: str, holds: str, does_not_hold: str, otherwise: str) -> str:
    """A verdict's why, said by its status: ``otherwise`` when it neither holds nor does not (it depends)."""
    return {Status.HOLDS: holds, Status.DOES_NOT_HOLD: does_not_hold}.get(status, otherwise)


def not_measured(claim: Claim, what: str) -> Verdict:
    return Verdict(Status.NOT_MEASURED, what, f"no usable records yet; run: {claim.command}")


def gpu_guard(records: Sequence[Record], claim: Claim, cpu_text: str = "") -> Verdict | None:
    """For a GPU claim without GPU records: "not measurable here" (CPU-only machine) or "not measured"."""
    if any(select.device_of(r) == "GPU" and r.ok for r in records if r.experiment == claim.experiment):
        return None
    if no_gpu_here(records):
        whose = "this machine has no GPU" if any(r.source == "local" for r in records) else \
            "the stored records' machines have none"
        return Verdict(Status.NOT_MEASURABLE,
                       f"no GPU records; {whose}" + (f" ({cpu_text})" if cpu_text else ""),
                       "the seed's figure is about a GPU: import GPU records (python -m rnnlab import FILE) or run "
                       f"on a machine with one: {claim.command}")
    return not_measured(claim, "no GPU records")


@dataclass
class Pair:
    params: dict  # select.config_of
    device: str
    machine: str  # select.machine_key: both records' (they are never from two machines)
    a: Record
    b: Record

    @property
    def spot(self) -> tuple[str, str]:
        return select.config_key(self.params), self.device


def pairs_of(records: Sequence[Record], experiment: str, a: str, b: str, *, device: str = "any",
           metric: str | None = None) -> list[Pair]:
    """Records of variants ``a`` and ``b`` at one configuration and device on one machine (``select.groups``);
    where this machine has the pair, other machines' (bundled, imported) pairs of that configuration are left out."""
    recs = [r for r in records if r.experiment == experiment and r.ok and r.variant in (a, b)
            and (metric is None or metric in r.metrics) and device_ok(r, device)]
    out = [Pair(dict(g.config), g.device, g.machine, g.records[a], g.records[b])
           for g in select.groups(recs) if a in g.records and b in g.records]
    out = prefer_here(out, lambda p: p.spot, lambda p: p.a.source == "local")
    # every core (the seeds' own setting) before a pair pinned to fewer threads
    return sorted(out, key=lambda p: (p.device, bool(p.params.get("threads")), select.config_key(p.params), p.machine))


def focus_of(pairs: list, seed_cfg: Mapping | None) -> tuple[list, bool]:
    """The pairs at the seed's configuration if any, else all of them; and whether they are the seed's."""
    at_seed = [p for p in pairs if seeds.matches(p.params, seed_cfg)]
    return (at_seed, True) if at_seed else (pairs, False)


def at_config(p: Pair, at_seed: bool, seed_cfg: Mapping | None) -> str:
    cfg = describe(p.params, p.device)
    if at_seed:
        return f"at the seed's configuration ({cfg}){whose(p.a, [p.a, p.b])}"
    return f"at {cfg}{'' if seed_cfg is None else ' (not the seed configuration)'}{whose(p.a, [p.a, p.b])}"


def others_note(pairs: list, focus: list, test: Callable[[Pair], bool]) -> str:
    rest = [p for p in pairs if p not in focus]
    if not rest:
        return ""
    k = sum(bool(test(p)) for p in rest)
    return f" Other configurations measured: it holds in {k} of {len(rest)}."


METRIC_WORDS = {"fwd_ms": "forward", "train_ms": "train step", "peak_mem_mb": "peak memory", "build_s": "build",
                 "graph_nodes": "graph nodes", "epoch_s": "epoch"}


UNITS = {"fwd_ms": " ms", "train_ms": " ms", "peak_mem_mb": " MB", "build_s": " s", "graph_nodes": "",
          "epoch_s": " s"}


def val(metric: str, v: float | None) -> str:
    """A metric's value with its unit, formatted as every table formats it."""
    return fmt.fmt_metric(metric, v) + UNITS.get(metric, "")


NOISY = rules.NOISY


def call_of(iv: Interval | None, at_least: float = rules.MARGIN) -> str:
    """``rules.call`` on an interval; no ratio (a metric missing or zero on the losing side) does not hold."""
    return rules.call(iv, at_least) if iv is not None else Status.DOES_NOT_HOLD


def interval_text(names: str, iv: Interval | None) -> str:
    """"dynamic_rnn/static_rnn 0.80x (0.75–0.86) from the timed steps' quartiles" ("" without a known spread)."""
    if iv is None or not iv.known:
        return ""
    return f"{names} {fmt.fmt_ratio_cell(iv)} {fmt.interval_words(iv)}"


def compare_text(metric: str, win_name: str, lose_name: str, win: Record, lose: Record,
                  iv: Interval | None = None, call: str = "") -> str:
    """"forward static_rnn 4.92 ms vs dynamic_rnn 6.89 ms (dynamic_rnn 1.40x slower than static_rnn (1.21–1.62x)
    from 40 paired windows)": the words are ``core.wording``'s, decided by the interval alone."""
    w, lv = win.metrics[metric], lose.metrics[metric]  # the winner's and the loser's value
    kind = "memory" if metric == "peak_mem_mb" else "size" if metric == "graph_nodes" else "time"
    phrase = wording.difference(iv, kind=kind) if iv is not None else None
    how = fmt.interval_words(iv)
    rel = f"{win_name} {phrase.against(lose_name)}{' ' + how if how else ''}" if phrase else \
        f"{win_name}/{lose_name} {fmt.fmt_ratio(w / lv) if lv > 0 else fmt.MISSING}, no interval known"
    return f"{METRIC_WORDS.get(metric, metric)} {lose_name} {val(metric, lv)} vs {win_name} {val(metric, w)} ({rel})"


def noise_note(call: str) -> str:
    """What a "too noisy to call" comparison adds after its interval ("" for any other call)."""
    return f", reaching across the {fmt.fmt_percent(rules.MARGIN)} margin: too noisy to call" if call == NOISY else ""


WHY_NOISY = (f"the interval of a ratio reaches across the {fmt.fmt_percent(rules.MARGIN)} margin (see measured): the "
              "rounds, or the timed steps within a round, disagree too much to decide; or a figure timed once in one "
              "round has no interval at all. More rounds, more repeats or a quieter machine would call it.")


STATIC, DYN = "tf1_static", "tf1_dynamic"


MARGIN_PCT = fmt.fmt_percent(rules.MARGIN)  # "10%", as the texts say it
