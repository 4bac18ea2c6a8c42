"""The Claims page's sections on the knobs, precision and training experiments: their records as comparable sets
(:func:`configurations`), each set as a table (:func:`knobs_view`, :func:`precision_view`, :func:`training_view`) and
the words over them (:func:`knobs_notes`, :func:`summarize`). Pure: no Streamlit, no TensorFlow. The dtype notes are
``claims_precision``'s, the charts ``claims_charts``'; ``rnnlab.present.claims`` re-exports all of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from rnnlab import experiments
from rnnlab.core import format as fmt
from rnnlab.core.record import Record
from rnnlab.core.views import Column, TableView
from rnnlab.experiments import seeds
from rnnlab.judge import findings
from rnnlab.judge import select as sel
from rnnlab.present import tables
from rnnlab.present.claims_runs import quick_command

SECTIONS = ("knobs", "precision", "training")


def experiment(name: str):
    """The experiment's declaration (title, summary, presets, parameters, page)."""
    return experiments.get(name)


@dataclass(frozen=True)
class Configuration:
    label: str  # "seed preset: rnn, 3x128, batch 32, 100 steps, 64 in; bundled results (not measured here) from ..."
    params: dict  # select.config_of: what the records measure
    records: tuple[Record, ...]  # one per variant (select.best), all from one machine
    device: str
    is_seed: bool
    source: str  # select.source_note


def describe(params: Mapping[str, Any], records: Sequence[Record] = ()) -> str:
    """A configuration in a few words, for any of rnnlab's experiments."""
    text = fmt.fmt_params(dict(params))
    extra = []
    if "first_n" in params:
        extra.append(f"first_n {params['first_n']}")
    if "dataset" in params:
        ds = params["dataset"]
        real = next((r.details.get("dataset", {}).get("name") for r in records
                     if isinstance(r.details.get("dataset"), Mapping)), None)
        extra.append(f"{real} (dataset={ds})" if real and real != ds else str(real or ds))
    if "epochs" in params:
        extra.append(f"{params['epochs']} epochs")
    if "lr" in params:
        extra.append(f"lr {params['lr']:g}")
    if "n_train" in params and params["n_train"]:
        extra.append(f"n_train {params['n_train']:,}")
    return ", ".join(x for x in [text, *extra] if x)


def _seed_point(preset: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A seed preset's single-valued parameters (its configuration), or None."""
    if not preset:
        return None
    return {k: v for k, v in preset.items() if k != "variants" and not isinstance(v, (list, tuple))}


def configurations(records: Sequence[Record], experiment: str, *, seed_preset: Mapping[str, Any] | None = None
                   ) -> list[Configuration]:
    """``experiment``'s records as comparable sets (``select.groups``: one configuration, device and machine each),
    in ``select.headline``'s order: the seed preset's configuration, then the most variants, then the best source
    (this machine's first), then the newest."""
    seed = _seed_point(seed_preset)
    rest = sel.groups(records, experiment=experiment)
    ordered = []
    while rest:  # headline, then the headline of the rest, ...: one ordering, select's
        g = sel.headline(rest, seed=seed)
        ordered.append(g)
        rest = [x for x in rest if x is not g]
    out = []
    for g in ordered:
        chosen = tuple(g.records.values())
        params = dict(g.config)
        is_seed = seeds.matches(params, seed)
        src = g.note()
        label = f"{'seed preset: ' if is_seed else ''}{describe(params, chosen)}; {src}"
        out.append(Configuration(label, params, chosen, g.device, is_seed, src))
    return out


def _order(records: Sequence[Record], variants: Sequence[str]) -> list[Record]:
    pos = {v: i for i, v in enumerate(variants)}
    return sorted(records, key=lambda r: pos.get(r.variant, len(pos)))


def _table(title: str, caption: str, columns: Sequence, rows: list[list], raw: list[list],
           records: Sequence[Record]) -> TableView:
    if not any(str(r[-1]) for r in rows):  # no failure: no error column
        columns, rows, raw = list(columns)[:-1], [r[:-1] for r in rows], [r[:-1] for r in raw]
    return TableView(title=title, caption=caption, columns=tuple(columns), rows=tuple(map(tuple, rows)),
                     raw=tuple(map(tuple, raw)), provenance=sel.provenance(list(records)))


_KNOB_RATIOS = ("fwd_ms", "train_ms", "peak_mem_mb")  # what every knob is measured against dynamic_rnn's defaults by


def knobs_view(cfg: Configuration) -> TableView:
    """One row per knob: speed, build and memory, each against dynamic_rnn's defaults."""
    from rnnlab.experiments.knobs import LABELS, VARIANTS

    recs = _order(cfg.records, VARIANTS)
    ref = next((r for r in recs if r.variant == "dynamic_default" and r.ok), None)
    metrics = ("fwd_ms", "train_ms", "build_s", "train_build_s", "peak_mem_mb", "graph_nodes")
    ratios = [tables.ratio_column(m, label, "defaults") for m, label in tables.RATIO_METRICS if m in _KNOB_RATIOS]
    cols = [tables.VARIANT, Column("what changes", "prose")] + [tables.metric_column(m) for m in metrics] + ratios + \
           [tables.ERROR]
    rows, raw = [], []
    for r in recs:
        vals = [r.metrics.get(m) for m in metrics]
        ivs = [tables.interval(r, ref, c.of) for c in ratios]
        rats = [None if iv is None else iv.mid for iv in ivs]
        rows.append([r.variant, LABELS.get(r.variant, r.variant)] + [tables.metric_cell(r, m) for m in metrics]
                    + [fmt.fmt_ratio_cell(iv) for iv in ivs] + [r.error or ""])
        raw.append([r.variant, LABELS.get(r.variant, r.variant)] + vals + rats + [r.error])
    return _table(f"Tuning knobs: {describe(cfg.params)}",
                  "; ".join(x for x in (
                      f"{describe(cfg.params)}; medians after warm-up; ratios against dynamic_default (>1: takes "
                      "more), in brackets their interval (across rounds, or from the timed steps' quartiles)",
                      cfg.source) if x), cols, rows, raw, recs)


def knobs_notes(cfg: Configuration) -> list[str]:
    """What the static_first_n row means (the seed's own line, and what dropping steps changes)."""
    out = []
    for r in cfg.records:
        if r.variant != "static_first_n" or not r.ok:
            continue
        m, d = r.metrics, r.details
        n, t = cfg.params.get("first_n"), cfg.params.get("seq_len")
        if m.get("seed_code_runs") == 0 and d.get("seed_code_error"):
            out.append(f"The seed's line tf.unstack(inputs, num={n}, axis=1) on {t} steps fails: "
                       f"{d['seed_code_error']}")
        elif m.get("seed_code_runs") == 1:
            out.append(f"The seed's line tf.unstack(inputs, num={n}, axis=1) on {t} steps runs.")
        if "final_state_vs_full" in m:
            out.append(f"static_first_n unrolls {n} of {t} steps: its first {n} outputs match the full run "
                       f"(max |diff| {fmt.fmt_diff(m.get('outputs_first_n_vs_full'))}), but its final state "
                       f"differs by up to {fmt.fmt_diff(m['final_state_vs_full'])}: it is a different model, "
                       "not a cheaper way to compute the same one.")
    return out


def precision_label(variant: str) -> tuple[str, str]:
    """(path, dtype) of a precision variant: ("keras", "bfloat16"); the policy variant's dtype is "policy"."""
    from rnnlab.experiments.precision import split

    try:
        return split(variant)
    except ValueError:
        return variant, "?"


def precision_view(cfg: Configuration) -> TableView:
    """One row per path and dtype: speed against the same path in float32, drift against float32, memory."""
    from rnnlab.experiments.precision import VARIANTS

    recs = _order(cfg.records, VARIANTS)
    cols = [tables.VARIANT, "path", "dtype", tables.metric_column("fwd_ms"), tables.metric_column("train_ms"),
            tables.ratio_column("fwd_ms", "forward vs ref", "float32"),
            Column("matmul rate vs float32", "ratio", "ratio", key="matmul rate vs ref", unit="x", of="matmul_rate",
                   against="float32"),
            "drift vs float32 (max |diff|)", "max |diff| vs float64", tables.metric_column("peak_mem_mb"), tables.ERROR]
    rows, raw = [], []
    for r in recs:
        path, dtype = precision_label(r.variant)
        m = r.metrics
        vals = [m.get("fwd_ms"), m.get("train_ms"), m.get("fwd_vs_float32"), m.get("matmul_vs_float32"),
                m.get("max_abs_diff"), m.get("ref_abs_diff"), m.get("peak_mem_mb")]
        rows.append([r.variant, path, "global mixed_float16 policy" if dtype == "policy" else dtype,
                     fmt.fmt_metric("fwd_ms", vals[0]), fmt.fmt_metric("train_ms", vals[1]), fmt.fmt_ratio(vals[2]),
                     fmt.fmt_ratio(vals[3]), fmt.fmt_value(vals[4], "sci"), fmt.fmt_value(vals[5], "sci"),
                     fmt.fmt_metric("peak_mem_mb", vals[6]), r.error or ""])
        raw.append([r.variant, path, dtype, *vals, r.error])
    return _table(f"Mixed precision: {describe(cfg.params)}",
                  f"{describe(cfg.params)}; 'vs float32' times the same path in float32 in the same worker (>1: "
                  f"slower); drift on identical weights and inputs against keras_float32; {cfg.source}",
                  cols, rows, raw, recs)


def training_view(cfg: Configuration) -> TableView:
    """One row per strategy: time (build, epochs, to the target accuracy), accuracy, agreement with tf1_dynamic."""
    from rnnlab.experiments.training import LABELS, VARIANTS

    recs = _order(cfg.records, VARIANTS)
    target = cfg.params.get("target_acc")
    cols = [tables.VARIANT, "strategy", tables.metric_column("build_s"), "first epoch (s)", "epoch (s)", "step (ms)",
            "final accuracy", "best accuracy",
            f"time to {target:.0%} (s)" if isinstance(target, float) else "time to target (s)",
            "epochs to target", tables.metric_column("peak_mem_mb"), "max |diff| vs tf1_dynamic", tables.ERROR]
    rows, raw = [], []
    for r in recs:
        m = r.metrics
        vals = [m.get(k) for k in ("build_s", "first_epoch_s", "epoch_s", "step_ms", "final_acc", "best_acc",
                                   "time_to_target_s", "epochs_to_target", "peak_mem_mb", "max_abs_diff")]
        rows.append([r.variant, LABELS.get(r.variant, r.variant), fmt.fmt_value(vals[0]), fmt.fmt_value(vals[1]),
                     fmt.fmt_value(vals[2]), fmt.fmt_value(vals[3]), fmt.fmt_value(vals[4], "pct"),
                     fmt.fmt_value(vals[5], "pct"),
                     "not reached" if r.ok and vals[6] is None else fmt.fmt_value(vals[6]),
                     fmt.fmt_value(vals[7], "int"), fmt.fmt_metric("peak_mem_mb", vals[8]),
                     fmt.fmt_value(vals[9], "sci"), r.error or ""])
        raw.append([r.variant, LABELS.get(r.variant, r.variant), *vals, r.error])
    return _table(f"Training: {describe(cfg.params, cfg.records)}",
                  f"{describe(cfg.params, cfg.records)}; same initial weights and batches for every strategy; "
                  f"epoch = training steps only (median after the first); {cfg.source}", cols, rows, raw, recs)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def summarize(records: Sequence[Record]) -> str:
    """Plain words over one configuration's training records (pure): do the strategies end in the same place from
    the same seed, which is fastest per epoch and to the target accuracy, and on whose machine (``select.where``)."""
    ok = [r for r in records if r.experiment == "training" and r.ok and "final_acc" in r.metrics]
    if not ok:
        return f"No training records yet ({quick_command('training')})."
    accs = {r.variant: r.metrics["final_acc"] for r in ok}
    curves = {r.variant: tuple(r.details.get("acc_curve") or ()) for r in ok}
    init = {round(r.metrics.get("initial_acc", -1), 6) for r in ok}
    lo, hi = min(accs.values()), max(accs.values())
    lines = []
    same_curve = len(set(curves.values())) == 1
    if hi - lo < 1e-9:
        lines.append(f"All {len(ok)} strategies end at the same test accuracy, {fmt.fmt_value(hi, 'pct')}"
                     + (", with identical per-epoch curves" if same_curve else ", their per-epoch curves differing "
                        "only by rounding") + (" from the same initial accuracy." if len(init) == 1 else "."))
    else:
        lines.append(f"Final test accuracy ranges from {fmt.fmt_value(lo, 'pct')} ({min(accs, key=accs.get)}) to "
                     f"{fmt.fmt_value(hi, 'pct')} ({max(accs, key=accs.get)}): the same start, different rounding "
                     "along the way.")
    diffs = {r.variant: r.metrics["max_abs_diff"] for r in ok if "max_abs_diff" in r.metrics and
             r.variant != "tf1_dynamic"}
    if diffs:
        v = max(diffs, key=diffs.get)
        lines.append("Test-set probabilities after training are identical to tf1_dynamic's." if diffs[v] == 0 else
                     f"Test-set probabilities after training differ from tf1_dynamic's by at most "
                     f"{fmt.fmt_diff(diffs[v])} ({v}).")
    fast = min(ok, key=lambda r: r.metrics["epoch_s"])
    slow = max(ok, key=lambda r: r.metrics["epoch_s"])
    ratio = findings.interval(slow, fast, "epoch_s")  # with its interval across rounds, when they have several
    lines.append(f"Fastest epoch {_lower_first(sel.where(ok))}: {fast.variant} "
                 f"{fmt.fmt_value(fast.metrics['epoch_s'])} s; slowest: {slow.variant} "
                 f"{fmt.fmt_value(slow.metrics['epoch_s'])} s ({fmt.fmt_ratio_cell(ratio)}).")
    reached = [r for r in ok if "time_to_target_s" in r.metrics]
    if reached:
        best = min(reached, key=lambda r: r.metrics["time_to_target_s"])
        lines.append(f"First to {fmt.fmt_percent(best.params.get('target_acc', 0))} test accuracy (build included): "
                     f"{best.variant} in {fmt.fmt_value(best.metrics['time_to_target_s'])} s; "
                     f"{len(reached)} of {len(ok)} strategies reached it.")
    else:
        target = next((r.params["target_acc"] for r in ok if isinstance(r.params.get("target_acc"), (int, float))),
                      None)
        lines.append(f"No strategy reached {fmt.fmt_percent(target)} test accuracy." if target is not None else
                     "No strategy reached the target accuracy.")
    return " ".join(lines)


def training_summary(cfg: Configuration) -> str:
    """Plain words over one configuration's training records (:func:`summarize`)."""
    return summarize(cfg.records)

