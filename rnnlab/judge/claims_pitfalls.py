"""The judges of the pitfalls' claims (seed 000 section 6): shared cells, state_is_tuple, input shapes."""

from __future__ import annotations

from rnnlab.core.rules import Status
from rnnlab.core import format as fmt
from rnnlab.core import rules
from rnnlab.experiments import seeds
from rnnlab.judge.claim import Verdict
from rnnlab.judge.claim_records import not_measured, successful, whose, why_by


def judge_shared(records, c):
    rs = [r for r in successful(records, "pitfalls") if r.variant in ("tf1_shared_dynamic", "tf1_shared_static")
          and "wrong_builds_same_dim" in r.metrics]
    if not rs:
        return not_measured(c, "no pitfalls record for tf1_shared_dynamic or tf1_shared_static")
    parts, outcomes = [], []
    for r in rs:
        m = r.metrics
        shares = m.get("wrong_builds_same_dim", 0) >= 1 and m.get("distinct_kernels_wrong", 1) < \
            m.get("distinct_kernels_right", 0)
        outcomes.append((shares, m.get("wrong_builds_diff_dim", 0) >= 1))
        parts.append(f"{r.variant} ({r.params.get('cell')}, {r.params.get('units')} units){whose(r)}: with "
                     f"input_dim == units it {'builds' if m.get('wrong_builds_same_dim') else 'fails'}"
                     + (f" with {int(m['distinct_kernels_wrong'])} kernel(s) against "
                        f"{int(m['distinct_kernels_right'])} in a correct stack"
                        if "distinct_kernels_wrong" in m else "")
                     + "; with input_dim != units it "
                     + ("builds" if m.get("wrong_builds_diff_dim") else "fails to build"))
    d, u = seeds.SEED_000["input_dim"], seeds.SEED_000["units"]
    if all(s and d_ for s, d_ in outcomes):
        st, why = Status.HOLDS, "one cell object means one set of weights for every layer."
    elif all(s and not d_ for s, d_ in outcomes):
        st, why = Status.DEPENDS, ("the layers do share one set of weights, but only when input_dim == units; otherwise "
                              f"(the seed's own sizes: {d} inputs, {u} units) the first layer builds the kernel for "
                              f"{d} + {u} rows and the second layer's {u} + {u} do not fit: a MatMul shape error, "
                              "not silent sharing.")
    elif not any(s for s, _ in outcomes):
        st, why = Status.DOES_NOT_HOLD, "the shared stack did not end up with shared weights here."
    else:
        st, why = Status.DEPENDS, "it differs between the measured cases (see measured)"
    return Verdict(st, "; ".join(parts) + ".", why)


def judge_state_tuple(records, c):
    rs = [r for r in successful(records, "pitfalls", "shape_state_is_tuple") if "wrong_builds" in r.metrics]
    if not rs:
        return not_measured(c, "no pitfalls record for shape_state_is_tuple")
    r = rs[0]
    wrong_fails = r.metrics["wrong_builds"] < 1
    right_ok = r.metrics.get("check_passed", 0) >= 1
    measured = (f"a concatenated [c, h] tensor as an LSTM initial_state: {'fails' if wrong_fails else 'runs'}"
                + (f" ({r.details.get('error_summary') or r.details.get('error_type')})" if wrong_fails else "")
                + f"; LSTMStateTuple(c, h): {'works and matches the reference' if right_ok else 'fails its check'}"
                + f"{whose(r)}.")
    st = Status.HOLDS if wrong_fails and right_ok else Status.DOES_NOT_HOLD
    return Verdict(st, measured, "with state_is_tuple=True (the default) an LSTM state is LSTMStateTuple(c, h); a "
                   "single tensor is refused, with a message that does not mention the state." if st == Status.HOLDS else
                   "the tuple layout was not required here (see measured).")


def judge_input_shape(records, c):
    tm = [r for r in successful(records, "pitfalls", "shape_time_major") if "wrong_builds" in r.metrics]
    d2 = [r for r in successful(records, "pitfalls", "shape_2d_input") if "wrong_builds" in r.metrics]
    if not tm and not d2:
        return not_measured(c, "no pitfalls record for shape_time_major or shape_2d_input")
    parts, outcomes = [], []
    if tm:
        silent = tm[0].metrics["wrong_builds"] >= 1
        outcomes.append(not silent)
        parts.append("time-major data given to a batch-major dynamic_rnn "
                     + ("runs without any error" + (f" (outputs off by up to "
                                                    f"{fmt.fmt_diff(tm[0].metrics['max_abs_diff_vs_correct'])})"
                                                    if "max_abs_diff_vs_correct" in tm[0].metrics else "")
                        if silent else "raises an error") + whose(tm[0]))
    if d2:
        err = d2[0].metrics["wrong_builds"] < 1
        outcomes.append(err)
        parts.append("a 2-D [batch, features] input " + ("raises a shape error" if err else "runs") + whose(d2[0]))
    st = rules.aggregate(outcomes)
    return Verdict(st, "; ".join(parts) + ".", why_by(
        st, "shape mistakes are caught with an error.", "shape mistakes run silently.",
        "a wrong rank is caught, but a wrong layout of the right rank is not: dynamic_rnn reads the first axis as "
        "the batch whatever it holds, so [time, batch, features] data runs silently with wrong results. Checking "
        "shapes is on you."))
