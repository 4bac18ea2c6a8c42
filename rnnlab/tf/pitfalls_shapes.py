"""The shape pitfalls (time-major data, 2-D input, zero_state batch, LSTM state, sequence lengths): the wrong
program run as shown, the right one checked against the float64 NumPy reference."""

from __future__ import annotations

import contextlib

from rnnlab.tf.pitfall_programs import PITFALLS
from rnnlab.tf.pitfalls_harness import TF1Run, layer_groups, maxdiff, np_stack, program_name, tf1_ns
from rnnlab.tf.program import err_fields, error_summary


TOL = 1e-4  # the right code against the float64 NumPy reference: every check's "max abs diff < 1e-4"


@contextlib.contextmanager
def _shape_pair(p, variant, tf, np, kind=None):
    """(wrong, right): the pitfall's two programs, run; both closed on the way out."""
    spec = PITFALLS[variant]
    wrong = TF1Run(tf, spec["wrong_code"], tf1_ns(tf, np, p, kind), program_name(variant, "wrong"), p["seed"])
    try:
        right = TF1Run(tf, spec["right_code"], tf1_ns(tf, np, p, kind), program_name(variant, "right"), p["seed"])
        try:
            yield wrong, right
        finally:
            right.close()
    finally:
        wrong.close()


def _error(run) -> str:
    """What a program that failed raised, in one line: "<type>: <summary>"."""
    return f"{run.err['error_type']}: {error_summary(run.err['error'])}"


def _matches(out, ref, np, also: bool = True) -> tuple[bool, dict]:
    """A right program's check: (``also`` and ``out`` within TOL of the NumPy ``ref``, its metric)."""
    d = maxdiff(out, ref, np)
    return also and d < TOL, {"right_ref_abs_diff": d}


def _variations(p, variant, tf, np, kind=None) -> list[dict]:
    out = []
    for label, src in PITFALLS[variant].get("variations", {}).items():
        r = TF1Run(tf, src, tf1_ns(tf, np, p, kind), program_name(variant, label), p["seed"])
        try:
            c = {"case": label, "code": src, **err_fields(r.err)}
            if r.ok and "out" in r.ns:
                c["out_shape"] = list(np.shape(r.ns["out"]))
            c["result"] = ("runs" + (f"; result shape {c['out_shape']}" if "out_shape" in c else "")) if r.ok else \
                f"{c['error_type']}: {error_summary(c['error'])}"
            out.append(c)
        finally:
            r.close()
    return out


def _shape_details(variant: str, wrong, main_result: str, check_ok: bool, check: str, extra_cases: list,
                   main_extra: dict | None = None) -> dict:
    main = {"case": "wrong code as shown", "code": PITFALLS[variant]["wrong_code"], **err_fields(wrong.err),
            "result": main_result, **(main_extra or {})}
    return {**err_fields(wrong.err), "result": main_result, "check_passed": bool(check_ok), "check": check,
            "cases": [main] + extra_cases}


def _cell_weights(run) -> list:
    return [run.values(run.trainable())]


def _state_shapes(tf, state) -> list:
    return [list(s.shape) for s in tf.nest.flatten(state)]


def _run_time_major(p, variant, ctx, tf, np) -> dict:
    kind = p["cell"]
    with _shape_pair(p, variant, tf, np) as (wrong, right):
        feed_key = "data_tm" if variant == "shape_time_major" else "data"
        if not right.ok:
            raise RuntimeError(f"right code failed: {right.err['error']}")
        w = _cell_weights(right)
        ref, _ = np_stack(kind, w, right.ns["data"])  # batch-major reference
        right_out = np.asarray(right.ns["out"])
        right_bm = right_out.transpose(1, 0, 2) if variant == "shape_time_major" else right_out
        ref_diff = maxdiff(right_bm, ref, np)
        metrics = {"right_ref_abs_diff": ref_diff, "wrong_builds": int(wrong.ok)}
        extra = {}
        if wrong.ok:
            wrong.load(wrong.trainable(), w[0])  # the same weights as the right code
            wout, wstate = wrong.run([wrong.ns["outputs"], wrong.ns["state"]], {"x": wrong.ns[feed_key]})
            rstate = right.sess.run(right.ns["state"], {right.ns["x"]: right.ns[feed_key]})
            diff = maxdiff(wout, right_out, np)
            metrics["max_abs_diff_vs_correct"] = diff
            extra = {"out_shape_wrong": list(np.shape(wout)), "out_shape_right": list(right_out.shape),
                     "state_shapes_wrong": _state_shapes(tf, wstate), "state_shapes_right": _state_shapes(tf, rstate),
                     "max_abs_diff_vs_correct": diff}
            result = (f"runs without an error: outputs {extra['out_shape_wrong']} (right code: "
                      f"{extra['out_shape_right']}), final state {extra['state_shapes_wrong']} (right code: "
                      f"{extra['state_shapes_right']}); outputs differ from the right code's by up to {diff:.3g} "
                      f"with the same weights")
        else:
            result = f"fails: {_error(wrong)}"
        check_ok = ref_diff < TOL
        metrics["check_passed"] = int(check_ok)
        check = ("the right code's outputs, read in its own layout, match a float64 NumPy unroll of the batch-major "
                 "data with the same weights (max abs diff < 1e-4)")
        return {"metrics": metrics, "details": _shape_details(variant, wrong, result, check_ok, check, [], extra)}


def _simple_error_pitfall(p, variant, ctx, tf, np, check_fn, check_text, kind=None) -> dict:
    """Wrong code expected to fail (or not: whatever happens is recorded); the right code checked by ``check_fn``."""
    with _shape_pair(p, variant, tf, np, kind) as (wrong, right):
        if wrong.ok:
            shape = list(np.shape(wrong.ns.get("out"))) if "out" in wrong.ns else None
            result = "runs without an error" + (f"; result shape {shape}" if shape else "")
        else:
            result = f"fails: {_error(wrong)}"
        metrics = {"wrong_builds": int(wrong.ok)}
        if right.ok:
            ok, m = check_fn(right)
        else:
            ok, m = False, {}
            result += f" (right code failed too: {_error(right)})"
        metrics.update(m)
        metrics["check_passed"] = int(ok)
        return {"metrics": metrics, "details": _shape_details(variant, wrong, result, ok, check_text,
                                                              _variations(p, variant, tf, np, kind))}


def _run_2d(p, variant, ctx, tf, np) -> dict:
    kind = p["cell"]

    def check(right):
        w = _cell_weights(right)
        ref, _ = np_stack(kind, w, right.ns["data"][:, :1])
        out = np.asarray(right.ns["out"])
        return _matches(out, ref, np, out.shape == (p["batch"], 1, p["units"]))

    return _simple_error_pitfall(p, variant, ctx, tf, np, check,
                                 "the right code returns [batch, 1, units] equal to one NumPy cell step on the first "
                                 "time step of the data (max abs diff < 1e-4)")


def _run_zero_state(p, variant, ctx, tf, np) -> dict:
    kind = p["cell"]

    def check(right):
        w = _cell_weights(right)
        diffs = []
        for n in (p["batch"], 2 * p["batch"]):  # the same graph, fed two batch sizes
            data = np.resize(right.ns["data"], (n,) + right.ns["data"].shape[1:]).astype(np.float32)
            out = right.run(right.ns["outputs"], {"x": data})
            ref, _ = np_stack(kind, w, data)
            diffs.append(maxdiff(out, ref, np))
        return max(diffs) < TOL, {"right_ref_abs_diff": max(diffs)}

    return _simple_error_pitfall(p, variant, ctx, tf, np, check,
                                 "the right graph runs for batch and for 2 * batch and matches a NumPy unroll from a "
                                 "zero state both times (max abs diff < 1e-4)")


def _run_state_is_tuple(p, variant, ctx, tf, np) -> dict:
    def check(right):
        w = _cell_weights(right)
        ns = right.ns
        ref, _ = np_stack("lstm", w, ns["data"], states=[(ns["c_init"], ns["h_init"])])
        return _matches(ns["out"], ref, np)

    return _simple_error_pitfall(p, variant, ctx, tf, np, check,
                                 "with LSTMStateTuple(c=c_init, h=h_init) the outputs match a NumPy LSTM started from "
                                 "that (c, h) (max abs diff < 1e-4)", kind="lstm")


def _run_state_order(p, variant, ctx, tf, np) -> dict:
    with _shape_pair(p, variant, tf, np, "lstm") as (wrong, right):
        metrics = {"wrong_builds": int(wrong.ok)}
        extra = {}
        if not right.ok:
            raise RuntimeError(f"right code failed: {right.err['error']}")
        w = _cell_weights(right)
        ref, st = np_stack("lstm", w, right.ns["data"])
        ref_last = ref[:, -1]
        d_right = maxdiff(right.ns["out"], ref_last, np)
        metrics["right_ref_abs_diff"] = d_right
        if wrong.ok:
            wrong.load(wrong.trainable(), w[0])
            wlast = wrong.run(wrong.ns["last"], {"x": wrong.ns["data"]})
            d = maxdiff(wlast, ref_last, np)
            d_c = maxdiff(wlast, st[0][0], np)
            metrics["max_abs_diff_vs_correct"] = d
            extra = {"max_abs_diff_vs_correct": d, "max_abs_diff_vs_c": d_c, "out_shape_wrong": list(np.shape(wlast))}
            result = (f"runs without an error; state[0] has shape {list(np.shape(wlast))} like h, but differs from "
                      f"the last output by up to {d:.3g} (it equals the cell memory c: diff {d_c:.2g})")
        else:
            result = f"fails: {_error(wrong)}"
        ok = d_right < TOL
        metrics["check_passed"] = int(ok)
        check = "state.h equals the NumPy LSTM's last output (= outputs[:, -1]) (max abs diff < 1e-4)"
        return {"metrics": metrics, "details": _shape_details(variant, wrong, result, ok, check,
                                                              _variations(p, variant, tf, np, "lstm"), extra)}


def _run_initial_state_stack(p, variant, ctx, tf, np) -> dict:
    kind = p["cell"]

    def check(right):
        groups = layer_groups(right.trainable())
        w = [right.values(g) for g in groups]
        ref, _ = np_stack(kind, w, right.ns["data"])
        return _matches(right.ns["out"], ref, np, len(groups) == 3)

    return _simple_error_pitfall(p, variant, ctx, tf, np, check,
                                 "with the stack's own zero_state (one state per layer) the outputs match a NumPy "
                                 "3-layer stack with the same weights (max abs diff < 1e-4)")


def _effective_lengths(out, np) -> list[int]:
    nz = np.any(np.asarray(out) != 0, axis=2)  # [batch, time]
    return [int(np.max(np.nonzero(r)[0]) + 1) if r.any() else 0 for r in nz]


def _run_seq_len_wrong(p, variant, ctx, tf, np) -> dict:
    kind = p["cell"]

    def check(right):
        w = _cell_weights(right)
        lengths = right.ns["true_lengths"]
        ref, _ = np_stack(kind, w, right.ns["data"], lengths=lengths)
        return _matches(right.ns["out"], ref, np, _effective_lengths(right.ns["out"], np) == [int(v) for v in lengths])

    return _simple_error_pitfall(p, variant, ctx, tf, np, check,
                                 "with one length per row the outputs match a NumPy unroll that stops each row at "
                                 "its length, and are zero past it (max abs diff < 1e-4)")


def _run_seq_len_dtype(p, variant, ctx, tf, np) -> dict:
    kind = p["cell"]
    with _shape_pair(p, variant, tf, np) as (wrong, right):
        if not right.ok:
            raise RuntimeError(f"right code failed: {right.err['error']}")
        ns = right.ns
        intended = [int(v) for v in np.round(ns["frac_lengths"])]
        w = _cell_weights(right)
        ref, _ = np_stack(kind, w, ns["data"], lengths=intended)
        d_right = maxdiff(ns["out"], ref, np)
        eff_right = _effective_lengths(ns["out"], np)
        metrics = {"wrong_builds": int(wrong.ok), "right_ref_abs_diff": d_right}
        extra = {"frac_lengths": [float(v) for v in ns["frac_lengths"]], "intended_lengths": intended,
                 "effective_lengths_right": eff_right}
        if wrong.ok:
            wrong.load(wrong.trainable(), w[0])
            wout = wrong.run(wrong.ns["outputs"], {"x": wrong.ns["data"]})
            eff = _effective_lengths(wout, np)
            short = sum(a < b for a, b in zip(eff, intended))
            d = maxdiff(wout, ns["out"], np)
            metrics.update({"max_abs_diff_vs_correct": d, "rows_short": short})
            extra.update({"effective_lengths_wrong": eff, "max_abs_diff_vs_correct": d, "rows_short": short})
            result = (f"runs without an error or warning; lengths {extra['frac_lengths']} were used as {eff} "
                      f"(truncated), not {intended}: {short} of {len(eff)} rows lose steps; outputs differ by up to "
                      f"{d:.3g}")
        else:
            result = f"fails: {_error(wrong)}"
        ok = d_right < TOL and eff_right == intended
        metrics["check_passed"] = int(ok)
        check = ("with explicitly rounded int32 lengths every row runs for its intended length (read back from where "
                 "the outputs turn zero) and the outputs match a NumPy unroll with those lengths (max abs diff < 1e-4)")
        return {"metrics": metrics, "details": _shape_details(variant, wrong, result, ok, check, [], extra)}


SHAPE_RUNNERS = {
    "shape_time_major": _run_time_major,
    "shape_batch_major": _run_time_major,
    "shape_2d_input": _run_2d,
    "shape_zero_state_batch": _run_zero_state,
    "shape_state_is_tuple": _run_state_is_tuple,
    "shape_lstm_state_order": _run_state_order,
    "shape_initial_state_stack": _run_initial_state_stack,
    "shape_seq_len_wrong": _run_seq_len_wrong,
    "shape_seq_len_dtype": _run_seq_len_dtype,
}
