"""The cell-sharing pitfalls (one cell object for three layers), TF1 and Keras 3: each tried with input_dim ==
units and input_dim != units, the wrong stack compared with the right one."""

from __future__ import annotations

from rnnlab.tf.pitfall_programs import PITFALLS
from rnnlab.tf.pitfalls_harness import (KERAS_CLASSES, TF1Run, as_batch_major, inputs, is_kernel, layer_groups,
                                        maxdiff, n_params, np_stack, program_name, tf1_ns)
from rnnlab.tf.program import err_fields, error_summary, run_source

_ASKED = ("builds", "error_type", "error", "error_summary", "error_line", "error_lineno", "stage")
_TF1_METRICS = ("distinct_vars_wrong", "distinct_kernels_wrong", "params_wrong", "max_abs_diff_vs_correct",
                "max_abs_diff_vs_tied", "distinct_vars_right", "distinct_kernels_right", "params_right",
                "right_ref_abs_diff")
_TF1_CHECK = ("the right code builds in both sub-cases, has 3 separate layers with their own kernels, and "
              "its outputs match a float64 NumPy stack with the same weights (max abs diff < 1e-4)")
_KERAS_METRICS = ("distinct_vars_wrong", "distinct_kernels_wrong", "params_wrong", "distinct_vars_right",
                  "distinct_kernels_right", "params_right", "max_abs_diff_vs_correct", "max_abs_diff_vs_tied",
                  "others_changed_wrong", "others_changed_right")
_KERAS_CHECK = ("the right code runs in both sub-cases, count_params equals 3 separate layers' parameters, "
                "the 3 positions are distinct objects, and one SGD step on a model holding only position 1 "
                "changes position 1 and leaves positions 2-3 exactly unchanged")


def _sub_cases(p: dict) -> tuple[int, tuple]:
    """The input_dim of the input_dim != units sub-case, and both sub-cases as (label, input_dim)."""
    units = p["units"]
    ne_dim = p["input_dim"] if p["input_dim"] != units else units + p["input_dim"]
    return ne_dim, (("input_dim == units", units), ("input_dim != units", ne_dim))


def _summary(cases: list[dict], p: dict, ne_dim: int, keys: tuple, check: str) -> dict:
    """The record of a sharing variant: the sub-case with the params as given decides ``builds`` and the error;
    the metrics that need a built stack come from the input_dim == units sub-case."""
    eq, ne = cases
    asked = eq if p["input_dim"] == p["units"] else ne
    metrics = {"wrong_builds_same_dim": int(eq["builds"]), "wrong_builds_diff_dim": int(ne["builds"]),
               "wrong_builds": int(asked["builds"])}
    for k in keys:
        if k in eq:
            metrics[k] = eq[k]
    if "params_right" in ne:
        metrics["params_right_diff_dim"] = ne["params_right"]
    check_passed = all(c["check_passed"] for c in cases)
    metrics["check_passed"] = int(check_passed)
    details = {**{k: asked[k] for k in _ASKED},
               "result": " | ".join(f"{c['case']}: {c['result']}" for c in cases),
               "check_passed": check_passed, "check": check, "cases": cases, "input_dim_diff_case": ne_dim}
    return {"metrics": metrics, "details": details}


# --- TF1 cell sharing -------------------------------------------------------------------------------------------------

def run_tf1_shared(p: dict, variant: str, ctx, tf, np) -> dict:
    ne_dim, sub_cases = _sub_cases(p)
    cases = []
    for label, idim in sub_cases:
        ctx.phase(f"build {label}")
        cases.append(_tf1_case(p, variant, label, idim, tf, np))
    return _summary(cases, p, ne_dim, _TF1_METRICS, _TF1_CHECK)


def _tf1_case(p: dict, variant: str, label: str, idim: int, tf, np) -> dict:
    kind, units = p["cell"], p["units"]
    mode = "dynamic_rnn" if variant.endswith("dynamic") else "static_rnn"
    spec = PITFALLS[variant]
    case = {"case": label, "cell": kind, "mode": mode, "input_dim": idim, "units": units}
    wrong = TF1Run(tf, spec["wrong_code"], tf1_ns(tf, np, p, input_dim=idim), program_name(variant, "wrong"),
                   p["seed"])
    right = TF1Run(tf, spec["right_code"], tf1_ns(tf, np, p, input_dim=idim), program_name(variant, "right"),
                   p["seed"])
    try:
        case.update(err_fields(wrong.err))
        _tf1_right_facts(case, right, kind, np)
        if wrong.ok:
            _tf1_wrong_facts(case, wrong, right, np)
        else:
            case["result"] = f"does not build: {case['error_type']}: {error_summary(case['error'])}"
    finally:
        wrong.close()
        right.close()
    return case


def _tf1_right_facts(case: dict, right: TF1Run, kind: str, np) -> None:
    rv = right.trainable()
    case["right_builds"] = right.ok
    case["right_error"] = None if right.ok else right.err["error"]
    case["distinct_vars_right"] = len(rv)
    case["distinct_kernels_right"] = sum(is_kernel(v.name) for v in rv)
    case["params_right"] = n_params(rv)
    check_ok = False
    if right.ok:
        groups = layer_groups(rv)
        layer_w = [right.values(g) for g in groups]
        ref, _ = np_stack(kind, layer_w, right.ns["data"])
        case["right_ref_abs_diff"] = maxdiff(right.ns["out"], ref, np)
        check_ok = (len(groups) == 3 and case["distinct_kernels_right"] ==
                    3 * (2 if kind == "gru" else 1) and case["right_ref_abs_diff"] < 1e-4)
    case["check_passed"] = bool(check_ok)


def _tf1_wrong_facts(case: dict, wrong: TF1Run, right: TF1Run, np) -> None:
    wv = wrong.trainable()
    stack = wrong.ns["cell"]
    layers = list(getattr(stack, "_cells", []))
    case["distinct_vars_wrong"] = len(wv)
    case["distinct_kernels_wrong"] = sum(is_kernel(v.name) for v in wv)
    case["params_wrong"] = n_params(wv)
    case["variable_names_wrong"] = [v.name for v in wv]
    case["layers_same_object"] = bool(layers) and all(c is layers[0] for c in layers)
    case["kernels_same_tensor"] = bool(layers) and all(
        [id(w) for w in c.trainable_weights] == [id(w) for w in layers[0].trainable_weights]
        for c in layers)
    out_wrong = as_batch_major(wrong.ns["out"], np)
    if right.ok:
        out_own = as_batch_major(right.ns["out"], np)
        case["max_abs_diff_vs_correct"] = maxdiff(out_wrong, out_own, np)
        shared_w = wrong.values(wv)
        for g in layer_groups(right.trainable()):  # the correct stack, every layer given the shared weights
            right.load(g, shared_w)
        tied = as_batch_major(right.run(right.ns["outputs"], {"x": right.ns["data"]}), np)
        case["max_abs_diff_vs_tied"] = maxdiff(out_wrong, tied, np)
    case["result"] = (
        f"builds; {case['distinct_vars_wrong']} distinct variables ({case['params_wrong']:,} parameters) "
        f"against {case['distinct_vars_right']} ({case['params_right']:,}) in the correct stack; all 3 "
        f"layers use the same kernel: {case['kernels_same_tensor']}; outputs differ from the correct "
        f"stack by up to {case.get('max_abs_diff_vs_correct', float('nan')):.3g} with its own weights and "
        f"{case.get('max_abs_diff_vs_tied', float('nan')):.3g} given the shared weights in every layer")


# --- Keras 3 sharing --------------------------------------------------------------------------------------------------

def _keras_ns(p: dict, np, input_dim: int) -> dict:
    import keras

    layer_name, cell_name = KERAS_CLASSES[p["cell"]]
    ns = {"keras": keras, "np": np, "Layer": getattr(keras.layers, layer_name),
          "Cell": getattr(keras.layers, cell_name)}
    ns.update({k: v for k, v in inputs(p, np, input_dim).items()
               if k in ("units", "batch", "seq_len", "input_dim", "data")})
    return ns


def _positions(variant: str, ns: dict) -> list:
    """The three layer positions of the stack: layer objects (Sequential) or cell objects (StackedRNNCells)."""
    model = ns["model"]
    if variant == "keras_shared_sequential":
        return list(model.layers)
    return list(ns["rnn"].cell.cells)


def _keras_probe_step(variant: str, ns: dict, np) -> dict:
    """One SGD step on a model holding only position 1; how much positions 2 and 3 and the stack's output moved."""
    import keras
    import tensorflow as tf

    pos = _positions(variant, ns)
    data, seq_len, input_dim = ns["data"], ns["seq_len"], ns["input_dim"]
    first = pos[0] if variant == "keras_shared_sequential" else keras.layers.RNN(pos[0], return_sequences=True)
    probe = keras.Sequential([keras.Input((seq_len, input_dim)), first])
    before_w = [[np.array(w.numpy()) for w in q.trainable_weights] for q in pos]
    before_out = np.asarray(ns["model"](data))
    target = np.ones_like(np.asarray(probe(data)))
    opt = keras.optimizers.SGD(learning_rate=0.5)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(probe(data) - target))
    grads = tape.gradient(loss, probe.trainable_variables)
    opt.apply(grads, probe.trainable_variables)
    after_w = [[np.array(w.numpy()) for w in q.trainable_weights] for q in pos]
    changes = [max(float(np.max(np.abs(a - b))) for a, b in zip(aw, bw)) for aw, bw in zip(after_w, before_w)]
    after_out = np.asarray(ns["model"](data))
    return {"changed_position_1": changes[0], "changed_others": max(changes[1:]),
            "stack_output_change": maxdiff(after_out, before_out, np)}



def run_keras_shared(p: dict, variant: str, ctx, tf, np) -> dict:
    ne_dim, sub_cases = _sub_cases(p)
    cases = []
    for label, idim in sub_cases:
        ctx.phase(f"build {label}")
        cases.append(_keras_case(p, variant, label, idim, np))
    return _summary(cases, p, ne_dim, _KERAS_METRICS, _KERAS_CHECK)


def _keras_case(p: dict, variant: str, label: str, idim: int, np) -> dict:
    import keras

    spec = PITFALLS[variant]
    case = {"case": label, "cell": p["cell"], "input_dim": idim, "units": p["units"]}
    keras.utils.set_random_seed(p["seed"])
    wns = _keras_ns(p, np, idim)
    werr = run_source(spec["wrong_code"], wns, program_name(variant, "wrong"))
    keras.utils.set_random_seed(p["seed"])
    rns = _keras_ns(p, np, idim)
    rerr = run_source(spec["right_code"], rns, program_name(variant, "right"))
    case.update(err_fields(werr))
    case["right_builds"] = rerr is None
    case["right_error"] = None if rerr is None else rerr["error"]
    _keras_constructed(case, variant, wns)
    case["check_passed"] = _keras_right_facts(case, variant, p, idim, rns, np) if rerr is None else False
    if werr is None:
        _keras_wrong_runs(case, variant, wns, rns if rerr is None else None, np)
    elif case["constructed"]:
        case["result"] = (f"the model is constructed (count_params {case['params_wrong']:,}, weights built for "
                          f"input_dim={idim}) but the first call fails: {case['error_type']}: "
                          f"{error_summary(case['error'])}")
    else:
        case["result"] = f"construction fails: {case['error_type']}: {error_summary(case['error'])}"
    return case


def _keras_constructed(case: dict, variant: str, wns: dict) -> None:
    """What the wrong program built, when it constructed its model (even if calling it failed)."""
    if "model" not in wns:
        case["constructed"] = False
        return
    wmodel = wns["model"]
    pos = _positions(variant, wns)
    case["constructed"] = True
    case["params_wrong"] = int(wmodel.count_params())
    case["distinct_vars_wrong"] = len({id(w) for w in wmodel.trainable_weights})
    case["distinct_kernels_wrong"] = len({id(w) for w in wmodel.trainable_weights if w.name == "kernel"})
    case["positions"] = len(pos)
    case["positions_same_object"] = all(q is pos[0] for q in pos)
    case["weights_same_objects"] = all(
        [id(w) for w in q.trainable_weights] == [id(w) for w in pos[0].trainable_weights] for q in pos)


def _keras_expected_params(cell: str, units: int, idim: int) -> int:
    """count_params of three separate layers, the first fed input_dim ``idim``."""
    g = {"rnn": 1, "lstm": 4, "gru": 3}[cell]

    def per_layer(f: int) -> int:
        return g * (f * units + units * units + units) + (3 * units if cell == "gru" else 0)

    return per_layer(idim) + 2 * per_layer(units)


def _keras_right_facts(case: dict, variant: str, p: dict, idim: int, rns: dict, np) -> bool:
    """The right program's stack, counted and probed; whether it passes the check."""
    expected_right = _keras_expected_params(p["cell"], p["units"], idim)
    rmodel = rns["model"]
    rpos = _positions(variant, rns)
    case["params_right"] = int(rmodel.count_params())
    case["distinct_vars_right"] = len({id(w) for w in rmodel.trainable_weights})
    case["distinct_kernels_right"] = len({id(w) for w in rmodel.trainable_weights if w.name == "kernel"})
    case["expected_params_right"] = expected_right
    rprobe = _keras_probe_step(variant, rns, np)
    case["others_changed_right"] = rprobe["changed_others"]
    case["position_1_changed_right"] = rprobe["changed_position_1"]
    return bool(case["params_right"] == expected_right and len({id(q) for q in rpos}) == 3
                and rprobe["changed_position_1"] > 0 and rprobe["changed_others"] == 0.0)


def _keras_wrong_runs(case: dict, variant: str, wns: dict, rns: dict | None, np) -> None:
    """The wrong stack ran: against the right one (``rns``, None when it failed) and one SGD step's reach."""
    if rns is not None:
        # same inputs; the correct stack with its own weights (from the same seed)
        case["max_abs_diff_vs_correct"] = maxdiff(wns["out"], rns["out"], np)
        # the correct stack given the shared weights at every position
        shared = [np.array(w.numpy()) for w in _positions(variant, wns)[0].trainable_weights]
        for q in _positions(variant, rns):
            for w, a in zip(q.trainable_weights, shared):
                w.assign(a)
        case["max_abs_diff_vs_tied"] = maxdiff(wns["out"], np.asarray(rns["model"](rns["data"])), np)
    wprobe = _keras_probe_step(variant, wns, np)
    case["others_changed_wrong"] = wprobe["changed_others"]
    case["stack_output_change_wrong"] = wprobe["stack_output_change"]
    case["result"] = (
        f"builds and runs; count_params {case['params_wrong']:,} against {case.get('params_right', 0):,} "
        f"for fresh objects; {case['positions']} positions, same object: {case['positions_same_object']}; "
        f"one SGD step on a model holding only position 1 changed positions 2-3 by up to "
        f"{wprobe['changed_others']:.3g} (fresh objects: {case.get('others_changed_right', float('nan')):.3g})")
