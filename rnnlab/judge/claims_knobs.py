"""The judges of the knobs' and precision's claims (seed 000 sections 5.3 and 6.3): parallel_iterations,
swap_memory, time_major, tf.unstack(num=...), mixed precision."""

from __future__ import annotations

from rnnlab.core.rules import Status
from rnnlab.core import format as fmt
from rnnlab.core import rules
from rnnlab.experiments import seeds
from rnnlab.judge import findings, select
from rnnlab.judge.claim import Verdict
from rnnlab.judge.claim_records import (MARGIN_PCT, METRIC_WORDS, at_record, call_of, focus_of, gpu_guard,
                                        not_measured, pairs_of, records_of, spot_of, successful, val, whose)
from rnnlab.judge.claim_speed import speed_claim


def _knob_pair(records, c, winner, loser, metrics, names, why_holds, why_not, at_least=rules.MARGIN):
    return speed_claim(records, c, experiment="knobs", winner=winner, loser=loser, metrics=metrics,
                       seed_cfg=seeds.SEED_000, names=names, at_least=at_least, why_holds=why_holds, why_not=why_not)


def judge_pi(records, c):
    v = _knob_pair(records, c, "dynamic_default", "dynamic_pi1", ("fwd_ms", "train_ms"),
                   ("parallel_iterations=32", "parallel_iterations=1"),
                   why_holds="overlapping iterations helps here; note 32 is dynamic_rnn's default, so writing it "
                             "out changes nothing.",
                   why_not="an RNN step depends on the previous one, so iterations cannot overlap much: "
                           "parallel_iterations only lets independent work (input projections, gradient "
                           "accumulation) run ahead. And 32 is already dynamic_rnn's default: setting it changes "
                           "nothing.")
    if v.status == Status.NOT_MEASURED:
        return v
    # parallel_iterations=128 beside the judged pairs: at the same configuration, on the same machine
    judged = {(p.spot, p.machine) for m in ("fwd_ms", "train_ms")
              for p in focus_of(pairs_of(records, "knobs", "dynamic_default", "dynamic_pi1", metric=m),
                              seeds.SEED_000)[0]}
    hi = [p for p in pairs_of(records, "knobs", "dynamic_pi128", "dynamic_default", metric="fwd_ms")
          if (p.spot, p.machine) in judged]
    if hi:
        p = hi[0]
        a = p.a if p.a.variant == "dynamic_pi128" else p.b
        b = p.b if a is p.a else p.a
        v = Verdict(v.status, v.measured + f" parallel_iterations=128: forward {val('fwd_ms', a.metrics['fwd_ms'])}"
                    + (f", train step {val('train_ms', a.metrics['train_ms'])}" if "train_ms" in a.metrics else "")
                    + f" (vs {val('fwd_ms', b.metrics['fwd_ms'])} at 32).", v.why)
    return v


def judge_swap(records, c):
    cpu = pairs_of(records, "knobs", "dynamic_swap", "dynamic_default", metric="peak_mem_mb", device="CPU")
    cpu_text = ""
    if cpu:
        p = cpu[0]
        s = p.a if p.a.variant == "dynamic_swap" else p.b
        d = p.b if s is p.a else p.a
        cpu_text = (f"on CPU{whose(s)} swap_memory=True: peak {val('peak_mem_mb', s.metrics['peak_mem_mb'])}, "
                    f"train step {val('train_ms', s.metrics.get('train_ms'))} vs off: "
                    f"{val('peak_mem_mb', d.metrics['peak_mem_mb'])}, {val('train_ms', d.metrics.get('train_ms'))}"
                    " -- on a CPU there is no device memory to swap from")
    g = gpu_guard(records, c, cpu_text)
    if g is not None:
        return g
    return _knob_pair(records, c, "dynamic_swap", "dynamic_default", ("peak_mem_mb",),
                      ("swap_memory=True", "swap_memory=False"),
                      why_holds="with swap_memory=True the while_loop's stacked activations go to host memory "
                                "between the forward and backward pass, lowering GPU peak memory.",
                      why_not=f"GPU peak memory did not drop by {MARGIN_PCT}: TensorFlow swaps only when it decides "
                              "to, and at this size the activations are small next to the rest.")


def judge_time_major(records, c):
    return _knob_pair(records, c, "dynamic_default", "dynamic_time_major", ("fwd_ms", "train_ms"),
                      ("time_major=False", "time_major=True"),
                      why_holds="batch-major input was faster here.",
                      why_not="time_major=False is no speed-up: dynamic_rnn works time-major inside and transposes "
                              "batch-major input (and its outputs) for you; TensorFlow's own documentation calls "
                              "time_major=True 'a bit more efficient'. Use batch-major for convenience, not speed.")


def judge_unstack(records, c):
    rs = [r for r in successful(records, "knobs", "static_first_n") if "seed_code_runs" in r.metrics]
    if not rs:
        return not_measured(c, "no knobs record for static_first_n")
    # the seed's configuration (its num of its steps) first, then one with a static_full beside it (same machine)
    fulls = {spot_of(f, ("first_n",)): f for f in reversed(successful(records, "knobs", "static_full"))}
    num = seeds.SEED_000_FIGURES["unstack_num"]
    rs.sort(key=lambda r: (not seeds.matches(r.params, {**seeds.SEED_000, "first_n": num}),
                           spot_of(r, ("first_n",)) not in fulls))
    r = rs[0]
    f = fulls.get(spot_of(r, ("first_n",)))
    n = r.params.get("first_n", r.details.get("first_n", "N"))
    t = r.params.get("seq_len")
    parts = []
    runs = r.metrics["seed_code_runs"] >= 1
    err = r.details.get("seed_code_error") or ""
    parts.append(f"{at_record(r, ('first_n',))}: the seed's line tf.unstack(inputs, num={n}, "
                 f"axis=1) on {t} steps " + ("runs" if runs else f"fails: {err.rstrip('.')}"))
    if f is not None:
        for m in ("peak_mem_mb", "graph_nodes", "build_s", "train_ms"):
            if m in r.metrics and m in f.metrics:
                parts.append(f"{METRIC_WORDS.get(m, m)}: full {t} steps {val(m, f.metrics[m])} vs "
                             f"first {n} (sliced, then unstacked) {val(m, r.metrics[m])}")
    if "final_state_vs_full" in r.metrics:
        parts.append("final state differs from the full sequence's by up to "
                     f"{fmt.fmt_diff(r.metrics['final_state_vs_full'])}")
    iv = findings.interval(r, f, "peak_mem_mb") if f is not None else None
    saved = call_of(iv) == Status.HOLDS
    if not runs:
        st = Status.DOES_NOT_HOLD
        why = ("as written the line raises: with a known time axis tf.unstack checks num against it ('Dimension "
               f"must be {num} but is {seeds.SEED_000['seq_len']}'), and with an unknown one it fails when run. What "
               "works is slicing first, tf.unstack(inputs[:, :N], axis=1); that "
               + ("does save memory" if saved else "saves little memory here")
               + ", but it is a different model: steps after N are never seen.")
    else:
        st = Status.DEPENDS if saved else Status.DOES_NOT_HOLD
        why = ("it saves memory only by computing something else: the steps after N are dropped." if saved else
               "it does not save meaningful memory here, and it drops the steps after N.")
    return Verdict(st, "; ".join(parts) + ".", why)


def judge_mixed(records, c):
    rs = records_of(records, "precision", "tf1_dynamic_policy")
    if not rs:
        return not_measured(c, "no precision record for tf1_dynamic_policy")
    r = sorted(rs, key=lambda r: not r.ok)[0]  # a successful record first, then select.rank
    if not r.ok:
        return Verdict(Status.DOES_NOT_HOLD, f"under a mixed_float16 global policy dynamic_rnn failed{whose(r)}: "
                                        f"{r.error}", "the policy breaks the TF1 graph instead of applying to it.")
    runs = r.metrics.get("policy_runs", 0) >= 1
    f16 = int(r.metrics.get("policy_float16_matmuls", 0))
    f32 = int(r.metrics.get("policy_float32_matmuls", 0))
    measured = (f"{at_record(r)}: after tf.keras.mixed_precision.set_global_policy('mixed_float16'),"
                f" dynamic_rnn {'ran' if runs else 'failed: ' + str(r.details.get('policy_error', ''))}; matmuls in "
                f"its graph: {f16} float16, {f32} float32; output dtype {r.details.get('policy_output_dtype', '?')}")
    # rnnlab's own cast-based float16 dynamic_rnn, at the same configuration on the same machine
    cast = [x for x in successful(records, "precision", "tf1_dynamic_mixed_float16", "fwd_ms")
            if spot_of(x) == spot_of(r)]
    if cast:
        cm = cast[0].metrics
        measured += (f"; an explicit cast-based float16 dynamic_rnn (rnnlab's own) runs forward in "
                     f"{val('fwd_ms', cm['fwd_ms'])}"
                     + (f", {fmt.fmt_ratio(cm['fwd_vs_float32'])} its float32 time on the same "
                        f"{select.device_of(cast[0])}" if "fwd_vs_float32" in cm else "")
                     + (f", drifting {fmt.fmt_diff(cm['max_abs_diff'])} from float32"
                        if "max_abs_diff" in cm else ""))
    if runs and f16 > 0:
        return Verdict(Status.HOLDS, measured + ".", "the TF1 cells picked up the global policy and computed in float16.")
    return Verdict(Status.DOES_NOT_HOLD, measured + ".",
                   "the global policy applies to Keras layers; the TF1 cells behind dynamic_rnn (legacy tf-keras "
                   "cells, created inside a v1 graph) ignore it and compute in float32, silently. Mixed precision "
                   "with dynamic_rnn needs explicit casts (inputs and weights to float16, a float32 loss); the "
                   "precision experiment's tf1_dynamic_mixed_float16 does that." if runs else
                   "dynamic_rnn does not run under the policy.")
