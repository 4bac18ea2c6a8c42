"""The judges of the variable-length claims (seed 000 section 3.3 and 4.1, seed 001, seed 003): static_rnn with
sequence_length, the steps a loop runs, and seed 003's speed and build rates."""

from __future__ import annotations

from rnnlab.core.rules import Status
from rnnlab.core import format as fmt
from rnnlab.core import rules
from rnnlab.experiments import seeds
from rnnlab.judge import findings
from rnnlab.judge.claim import Verdict, status_of
from rnnlab.judge.claim_records import (DYN, NOISY, WHY_NOISY, at_config, at_record, call_of, focus_of, interval_text,
                                        noise_note, not_measured, pairs_of, records_of, spot_of, successful, val,
                                        whose, why_by)


def judge_static_varlen(records, c):
    st = [r for r in successful(records, "varlen", "tf1_static") if "checks_passed" in r.metrics]
    if not st:
        failed = [r for r in records_of(records, "varlen", "tf1_static") if not r.ok]
        if failed:
            return Verdict(Status.HOLDS, f"static_rnn with sequence_length failed{whose(failed[0])}: {failed[0].error}",
                           "static_rnn could not take the lengths here.")
        return not_measured(c, "no varlen record for tf1_static")
    nolen = {spot_of(r): r for r in reversed(successful(records, "varlen", "tf1_static_nolen", "final_state_err"))}
    outcomes, parts = [], []
    for r in st:
        ok = r.metrics["checks_passed"] >= 3
        outcomes.append(not ok)
        part = (f"{at_record(r)}: static_rnn(sequence_length=...) passed {int(r.metrics['checks_passed'])}/3 checks "
                f"(outputs zero past the length, state carried, final state = last real step), final state "
                f"{fmt.fmt_diff(r.metrics.get('final_state_err'))} from the float64 reference with lengths")
        n = nolen.get(spot_of(r))  # the same configuration on the same machine
        if n is not None:
            part += f"; without sequence_length its final state drifts by " \
                    f"{fmt.fmt_diff(n.metrics['final_state_err'])}"
        parts.append(part)
    status = rules.aggregate(outcomes)
    return Verdict(status, "; ".join(parts) + ".", why_by(
        status, "static_rnn did not handle the lengths correctly here.",
        "static_rnn takes sequence_length (as tf.nn.rnn did): it zeroes outputs past each row's length and carries "
        "the state, exactly like dynamic_rnn; what it cannot take is a sequence longer than the steps it was "
        "unrolled for.", "it handled the lengths in some configurations only (see measured)"))


def _loop_steps(records, variant):
    return [r for r in successful(records, "seed003", variant)
            if "cell_steps_run" in r.metrics and "loop_steps_max" in r.metrics]


def _stopped_early(records, c, variant, says, holds: str, does_not_hold: str, otherwise: str) -> Verdict:
    """The verdict on whether ``variant``'s loop ran no further than its batch's longest row (and short of the padded
    length) in every seed003 record: what each record shows in words (``says(steps_run, longest, padded)``), and the
    why for its status (``why_by``)."""
    rs = _loop_steps(records, variant)
    if not rs:
        return not_measured(c, f"no seed003 record for {variant} with cell_steps_run")
    outcomes, parts = [], []
    for r in rs:
        ran, mx, t = r.metrics["cell_steps_run"], r.metrics["loop_steps_max"], int(r.params.get("seq_len", 0))
        outcomes.append(ran <= mx < t)
        parts.append(f"{at_record(r)}: {says(int(ran), int(mx), t)}")
    st = rules.aggregate(outcomes)
    return Verdict(st, "; ".join(parts) + ".", why_by(st, holds, does_not_hold, otherwise))


def judge_dynamic_skips(records, c):
    return _stopped_early(
        records, c, "dynamic", lambda ran, mx, t: f"dynamic_rnn ran {ran} cell steps per forward pass for sequences "
                                                  f"padded to {t} steps whose longest row is {mx}",
        "dynamic_rnn's while_loop stops at max(sequence_length) of the batch, so the padded tail past the "
        "longest row is never computed. Shorter rows inside the batch still run every step up to the longest (their "
        "state is copied through), so padding within a batch is computed; only bucketing by length avoids that.",
        "the while_loop ran past the longest row: the padding is computed.",
        "it stopped early in some configurations only (see measured)")


def judge_seqlen_correctness(records, c):
    base = judge_dynamic_skips(records, c)
    if base.status == Status.NOT_MEASURED:
        return base
    inv = {Status.HOLDS: Status.DOES_NOT_HOLD, Status.DOES_NOT_HOLD: Status.HOLDS}.get(base.status, base.status)
    extra = ""
    # unroll records: tf1_dynamic with lengths vs full at an otherwise equal configuration, on the same machine
    dyn = successful(records, "unroll", DYN, "fwd_ms")
    full = {spot_of(r, ("lengths",)): r for r in reversed(dyn) if r.params.get("lengths", "full") == "full"}
    for r in dyn:
        f = full.get(spot_of(r, ("lengths",)))
        if r.params.get("lengths", "full") != "full" and f is not None:
            extra += (f" unroll {at_record(f, ('lengths',))}: dynamic_rnn forward "
                      f"{val('fwd_ms', f.metrics['fwd_ms'])} with full lengths vs "
                      f"{val('fwd_ms', r.metrics['fwd_ms'])} with lengths {r.params['lengths']}.")
    why = ("in this TensorFlow dynamic_rnn's sequence_length is also a performance feature: its while_loop stops at "
           "the batch's longest row, so it saves the padded steps past it (the old documentation's 'more for "
           "correctness than performance' was written against the per-row cost: rows shorter than the longest are "
           "still stepped, with their state copied through)." if inv == Status.DOES_NOT_HOLD else
           "sequence_length did not shorten dynamic_rnn's loop here: it only affects correctness.")
    return Verdict(inv, base.measured + extra, why)


def judge_static_seqlen_skip(records, c):
    return _stopped_early(
        records, c, "static", lambda ran, mx, t: f"static_rnn with sequence_length ran {ran} cell steps per "
                                                 f"forward pass of the {t} it built (longest row {mx})",
        "static_rnn wraps each step past the batch's longest row in a cond that skips the cell: the steps are "
        "built (graph size and build time still grow with seq_len) but not computed.",
        "static_rnn computed past the longest row here.", "see measured")


def judge_dynamic_no_skip(records, c):
    base = judge_dynamic_skips(records, c)
    if base.status == Status.NOT_MEASURED:
        return base
    inv = {Status.HOLDS: Status.DOES_NOT_HOLD, Status.DOES_NOT_HOLD: Status.HOLDS}.get(base.status, base.status)
    rows = str(seeds.SEED_003["lengths"]).split(":")[-1]
    return Verdict(inv, base.measured,
                   "the seed's inference does not hold in this TensorFlow: dynamic_rnn stops at the longest row of "
                   f"the batch (all rows are {rows} long in its benchmark), so it computes only the first n steps. "
                   "Its slow dynamic_rnn is better explained by per-iteration loop overhead (see the seed003 "
                   "experiment's verdict)." if inv == Status.DOES_NOT_HOLD else base.why)


def judge_seed003_run(records, c):
    rows = str(seeds.SEED_003["lengths"]).split(":")[-1]
    return _seed003(records, c, "steps_per_s", higher=True,
                    why_holds="static_rnn runs training steps faster once warm.",
                    why_not="once warm static_rnn is not meaningfully faster here; see the seed003 experiment's "
                            f"verdict: both loops stop at the longest row ({rows}), so what separates them is "
                            "per-step overhead, not padding.")


def judge_seed003_build(records, c):
    return _seed003(records, c, "build_s", higher=False,
                    why_holds="building the unrolled graph (every step, and its gradients) takes longer than the "
                              "while_loop's single body; the first steps pay for optimising that big graph too.",
                    why_not="static_rnn is not meaningfully slower to build here.")


_S3 = seeds.SEED_003_FIGURES


def _seed003(records, c, metric, *, higher, why_holds, why_not):
    """Static against dynamic in the seed003 experiment, by ``rules.call`` on the interval of the time ratio (the
    Variable-lengths page asks ``verdict("s003_...", records)`` for the same answer)."""
    pairs = pairs_of(records, "seed003", "static", "dynamic", metric=metric)
    if not pairs:
        return not_measured(c, f"no seed003 records with both static and dynamic {metric}")
    focus, at_seed = focus_of(pairs, seeds.SEED_003)
    outcomes, parts = [], []
    for p in focus:
        s = p.a if p.a.variant == "static" else p.b
        d = p.b if s is p.a else p.a
        vs, vd = s.metrics[metric], d.metrics[metric]
        if higher:  # steps/s, a rate: static runs faster when its time per step (dynamic/static of the rate) is lower
            iv = findings.interval(d, s, metric)
            call = call_of(iv)
            rate = findings.interval(s, d, metric)  # static/dynamic of the rate, as the seed says it
            seed_s, seed_d = _S3["static"]["steps_per_s"], _S3["dynamic"]["steps_per_s"]
            parts.append(f"{at_config(p, at_seed, seeds.SEED_003)}: static {fmt.fmt_value(vs)} vs dynamic "
                         f"{fmt.fmt_value(vd)} steps/s once warm (static/dynamic {fmt.fmt_ratio_cell(rate)}"
                         f"{' ' + fmt.interval_words(rate) if rate is not None and rate.known else ''}"
                         f"{noise_note(call)}; "
                         f"the seed: {fmt.fmt_value(seed_s)} vs {fmt.fmt_value(seed_d)}, "
                         f"{fmt.fmt_ratio(seed_s / seed_d)})")
        else:  # build seconds: static builds slower, i.e. dynamic saves at least the margin
            iv = findings.interval(d, s, metric)
            call = call_of(iv)
            key = "first_interval_steps_per_s"
            spread = interval_text("dynamic/static", iv)
            parts.append(f"{at_config(p, at_seed, seeds.SEED_003)}: building static {val('build_s', vs)} vs dynamic "
                         f"{val('build_s', vd)}{f' ({spread}{noise_note(call)})' if spread else ''}"
                         + (f"; first interval {fmt.fmt_value(s.metrics[key])} vs {fmt.fmt_value(d.metrics[key])} "
                            f"steps/s (the seed: {fmt.fmt_value(_S3['static'][key])} vs "
                            f"{fmt.fmt_value(_S3['dynamic'][key])})" if key in s.metrics and key in d.metrics
                            else ""))
        outcomes.append(call)
    st = status_of(outcomes)
    return Verdict(st, "; ".join(parts) + ".", why_holds if st == Status.HOLDS else why_not if st == Status.DOES_NOT_HOLD
                   else WHY_NOISY if st == NOISY else "the configurations disagree (see measured)")
