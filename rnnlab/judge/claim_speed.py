""""A beats B" claims on speed, memory, graph size or build time: ``speed_claim`` judges every pair of records
of the two variants on the interval of their ratio (``rules.call``) and says what it measured and why."""

from __future__ import annotations

from typing import Mapping, Sequence

from rnnlab.core.rules import Status
from rnnlab.core import format as fmt, rules
from rnnlab.core.record import Record
from rnnlab.core.stats import Interval
from rnnlab.judge import findings
from rnnlab.judge.claim import Claim, Verdict, status_of
from rnnlab.judge.claim_records import (METRIC_WORDS, NOISY, Pair, WHY_NOISY, at_config, call_of, compare_text,
                                        focus_of, gpu_guard, not_measured, others_note, pairs_of)


def speed_claim(records, claim: Claim, *, experiment: str, winner: str, loser: str, metrics: Sequence[str],
                seed_cfg: Mapping | None, at_least: float = rules.MARGIN, names: tuple[str, str] | None = None,
                why_holds: str, why_not: str, why_depends: str = "") -> Verdict:
    """``winner`` beats ``loser`` by ``at_least`` in each of ``metrics`` (``rules.call`` on the interval of
    winner/loser, ``stats.ratio_interval``) -- negative ``at_least`` means "not more than that much worse"."""
    if claim.device == "GPU":
        g = gpu_guard(records, claim)
        if g is not None:
            return g
    uniq, by_cfg = _pairs_by_record(records, claim, experiment, winner, loser, metrics)
    if not uniq:
        return not_measured(claim, f"no {experiment} records with both {winner} and {loser}"
                            + ("" if claim.device == "any" else f" on {claim.device}"))
    focus, at_seed = focus_of(uniq, seed_cfg)
    wn, ln = names or (winner, loser)
    outcomes, parts, per_metric = [], [], {}

    def sides(p: Pair) -> tuple[Record, Record]:
        return (p.a, p.b) if p.a.variant == winner else (p.b, p.a)

    def called(p: Pair, m: str) -> tuple[str, Interval | None]:
        w, lose = sides(p)
        iv = findings.interval(w, lose, m)
        return call_of(iv, at_least), iv

    for p in focus:
        i = uniq.index(p)
        texts = []
        w, lose = sides(p)
        for m in by_cfg[i]:
            call, iv = called(p, m)
            outcomes.append(call)
            per_metric.setdefault(METRIC_WORDS.get(m, m), []).append(call)
            texts.append(compare_text(m, wn, ln, w, lose, iv, call))
        parts.append(f"{at_config(p, at_seed, seed_cfg)}: " + "; ".join(texts))

    def holds(p: Pair) -> bool:
        return all(called(p, m)[0] == Status.HOLDS for m in by_cfg[uniq.index(p)])

    status = status_of(outcomes)
    # one sentence a configuration: the first goes on from "Measured:", each after it starts with a capital
    measured = ". ".join(parts[:1] + [fmt.sentence_start(x) for x in parts[1:]]) + "." + others_note(uniq, focus, holds)
    return Verdict(status, measured, _why(status, per_metric, why_holds, why_not, why_depends))


def _pairs_by_record(records, claim: Claim, experiment: str, winner: str, loser: str,
                     metrics: Sequence[str]) -> tuple[list[Pair], dict[int, list]]:
    """The pairs measuring any of ``metrics``, each pair of records once, and the metrics each one has."""
    pairs = []
    for m in metrics:
        pairs += [(m, p) for p in pairs_of(records, experiment, winner, loser, device=claim.device, metric=m)]
    by_cfg: dict[int, list] = {}
    uniq: list[Pair] = []
    for m, p in pairs:
        for i, q in enumerate(uniq):
            if q.a.key == p.a.key and q.b.key == p.b.key:
                by_cfg.setdefault(i, []).append(m)
                break
        else:
            uniq.append(p)
            by_cfg.setdefault(len(uniq) - 1, []).append(m)
    return uniq, by_cfg


def _why(status: str, per_metric: dict[str, list], why_holds: str, why_not: str, why_depends: str) -> str:
    """Why the status; where the measures split, which way each went."""
    split = ""
    if status in (Status.DEPENDS, NOISY, Status.DOES_NOT_HOLD) and len(per_metric) > 1:
        yes = [k for k, v in per_metric.items() if all(x == Status.HOLDS for x in v)]
        no = [k for k, v in per_metric.items() if all(x == Status.DOES_NOT_HOLD for x in v)]
        noisy = [k for k, v in per_metric.items() if NOISY in v]
        if yes and no:
            split = f"It holds for the {' and '.join(yes)} but not for the {' and '.join(no)}. "
        elif noisy and (yes or no):
            split = (f"It {'holds' if yes else 'does not hold'} for the {' and '.join(yes or no)}; the "
                     f"{' and '.join(noisy)} is too noisy to call. ")
    if status == NOISY:
        return split + (WHY_NOISY[:1].upper() + WHY_NOISY[1:] if split else WHY_NOISY)
    if status == Status.DOES_NOT_HOLD:
        return split + (fmt.sentence_start(why_not) if split else why_not)
    return {Status.HOLDS: why_holds}.get(status) or (
        split + (why_depends or "the measures or configurations disagree (see measured)"))
