"""The claims page's and ``python -m rnnlab claims``'s views: records in, TableViews, Altair charts and text out.

Pure (no Streamlit, no TensorFlow, no store): the page, the CLI and the exports call the same functions, so what a
terminal prints, what the screen shows and what a slide holds agree.

- :func:`claims_view` / :func:`claims_text` / :func:`counts` / :func:`select`: the verdicts of
  ``rnnlab.judge.claims.evaluate`` as a table, as terminal text, counted per status, filtered by seed and status.
- :func:`parse_settings`: the page's URL settings that are not experiment parameters (filters, N steps, mode),
  with one problem line per bad value (the page shows them as warnings and uses the default).
- :func:`configurations`: one experiment's records grouped by configuration (seed preset first), and
  :func:`knobs_view` / :func:`precision_view` / :func:`training_view` with their charts.
- :func:`recommendation_view` / :func:`measure_command`: ``rnnlab.judge.recommend`` as a table, and how to get the records
  it needs.
"""

from __future__ import annotations

import shlex
import textwrap
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from rnnlab.judge import select
from rnnlab.core import format as fmt
from rnnlab.present import tables
from rnnlab.judge.claims import SEED_FILES, STATUSES, Claim, Verdict
from rnnlab.core.record import Record
from rnnlab.judge.recommend import GOALS, Recommendation
from rnnlab.core.views import TableView

Result = tuple[Claim, Verdict]

# ---------------------------------------------------------------------------------------------------------------------
# claims

SEED_TITLES = {
    "000": "CSDN blog: dynamic_rnn vs static_rnn at sequence length 100",
    "001": "Stack Overflow: what does it mean to unroll an RNN dynamically?",
    "003": "blog: static_rnn builds slower but runs faster (Estimator log)",
    "004": "blog: RNNCell performance, 'cuDNN-based' LSTMCell + tf.function",
}
SEEDS = tuple(SEED_FILES)  # "000", "001", "003", "004"
# what the page and the CLI say beside each status
STATUS_HELP = {
    "holds": "the records agree with the seed",
    "does not hold": "the records contradict the seed",
    "depends": "it holds in some measured configurations or measures and not in others (the 'why' says where)",
    "not measured": "no usable record yet: run the command shown",
    "not measurable here": "the seed's figure is about a GPU and this machine has none (import GPU records)",
}
CLAIM_COLUMNS = ("verdict", "claim (the seed's words and figure)", "seed", "tested by", "measured here",
                 "why / depends on", "command")


def seed_number(claim: Claim) -> str:
    return claim.seed[:3]


def seed_label(claim: Claim) -> str:
    """"seed 000 §3.1" or "seed 001, question"."""
    sec = claim.section
    return f"seed {seed_number(claim)} " + (f"§{sec}" if sec[:1].isdigit() else f"({sec})")


def seed_title(claim: Claim) -> str:
    return SEED_TITLES.get(seed_number(claim), claim.seed)


def status_slug(status: str) -> str:
    """The URL and CLI spelling of a status: ``does-not-hold``."""
    return status.replace(" ", "-")


def parse_status(text: str) -> str:
    """``does-not-hold``, ``"does not hold"`` or ``DOES_NOT_HOLD`` -> ``"does not hold"``; ValueError otherwise."""
    s = " ".join(str(text).strip().lower().replace("-", " ").replace("_", " ").split())
    if s not in STATUSES:
        raise ValueError(f"status {text!r} is not one of {', '.join(status_slug(x) for x in STATUSES)}")
    return s


def tested_by(claim: Claim) -> str:
    """"unroll (seed preset): tf1_static, tf1_dynamic"."""
    return f"{claim.experiment} ({claim.preset} preset): {', '.join(claim.variants)}"


def counts(results: Sequence[Result]) -> dict[str, int]:
    """Claims per status, every status present (0 included), in ``STATUSES`` order."""
    out = {s: 0 for s in STATUSES}
    for _, v in results:
        out[v.status] += 1
    return out


def select(results: Sequence[Result], *, seeds: Iterable[str] = (), statuses: Iterable[str] = ()) -> list[Result]:
    """The results of the given seeds ("000"...) and statuses; an empty filter keeps everything."""
    seeds, statuses = set(seeds), set(statuses)
    return [(c, v) for c, v in results if (not seeds or seed_number(c) in seeds)
            and (not statuses or v.status in statuses)]


def claims_view(results: Sequence[Result], *, records: Sequence[Record] = (),
                title: str = "The seeds' claims, measured on this machine") -> TableView:
    """One row per claim: verdict, claim, seed, experiment, what was measured, why, the command that measures it."""
    rows, raw = [], []
    for c, v in results:
        cells = [v.status, c.text, seed_label(c), tested_by(c), v.measured, v.why, c.command]
        rows.append(cells)
        raw.append([v.status, c.text, c.seed, c.experiment, v.measured, v.why, c.command])
    n = counts(results)
    caption = ("; ".join(f"{k}: {n[k]}" for k in STATUSES if n[k]) or "no claims") + (
        f". Judged on {len(records)} records: {select.source_note(records)}" if records else
        ". No records yet: every claim is 'not measured'")
    return TableView(title=title, caption=caption, columns=CLAIM_COLUMNS, rows=tuple(map(tuple, rows)),
                     raw=tuple(map(tuple, raw)), provenance=select.provenance(list(records)) if records else {})


def summary_line(results: Sequence[Result]) -> str:
    n = counts(results)
    return " · ".join(f"{s} {n[s]}" for s in STATUSES)


def claims_text(results: Sequence[Result], *, width: int = 110) -> str:
    """The claims for a terminal: a line per claim (verdict, seed, claim), then what was measured and why, wrapped."""
    w_status = max(len(s) for s in STATUSES)
    w_seed = max([len(seed_label(c)) for c, _ in results] or [4])
    indent = " " * (w_status + w_seed + 4)
    body = max(40, width - len(indent))
    out = [f"{'VERDICT'.ljust(w_status)}  {'SEED'.ljust(w_seed)}  CLAIM"]
    for c, v in results:
        claim = textwrap.wrap(c.text, body) or [""]
        out.append(f"{v.status.ljust(w_status)}  {seed_label(c).ljust(w_seed)}  {claim[0]}")
        out += [indent + line for line in claim[1:]]
        for head, text in (("measured", v.measured), ("why", v.why)):
            lines = textwrap.wrap(f"{head}: {text}", body, subsequent_indent="  ") or [""]
            out += [indent + line for line in lines]
        if v.status == "not measured":
            out.append(indent + f"measure: {c.command}")
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------------------------
# the page's URL settings that are not experiment parameters

MODES = ("train", "forward")
N_STEPS = (1, 10_000_000)
SETTING_DEFAULTS = {"n_steps": "1000", "mode": "train", "seeds": "", "status": ""}


def parse_settings(extra: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """``{"n_steps": int, "mode": str, "seeds": [..], "status": [..]}`` from the URL's raw text, and one problem line
    per value that cannot be used (that value falls back to its default: all seeds, all statuses, 1000, train)."""
    problems: list[str] = []
    out: dict[str, Any] = {"n_steps": int(SETTING_DEFAULTS["n_steps"]), "mode": "train", "seeds": [], "status": []}
    raw = str(extra.get("n_steps", "") or "").strip()
    if raw:
        try:
            n = int(raw.replace(",", "").replace("_", ""))
            if not N_STEPS[0] <= n <= N_STEPS[1]:
                raise ValueError
            out["n_steps"] = n
        except ValueError:
            problems.append(f"n_steps={raw!r} is not a whole number from {N_STEPS[0]:,} to {N_STEPS[1]:,}; "
                            f"using {out['n_steps']}")
    mode = str(extra.get("mode", "") or "").strip()
    if mode:
        if mode in MODES:
            out["mode"] = mode
        else:
            problems.append(f"mode={mode!r} is not one of {', '.join(MODES)}; using train")
    seeds = [s.strip() for s in str(extra.get("seeds", "") or "").split(",") if s.strip()]
    bad = [s for s in seeds if s not in SEEDS]
    out["seeds"] = [s for s in SEEDS if s in seeds]
    if bad:
        problems.append(f"seeds: {', '.join(repr(s) for s in bad)} not among {', '.join(SEEDS)}; "
                        + ("ignored" if out["seeds"] else "showing every seed"))
    good, bad = [], []
    for s in (x.strip() for x in str(extra.get("status", "") or "").split(",")):
        if not s:
            continue
        try:
            good.append(parse_status(s))
        except ValueError:
            bad.append(s)
    out["status"] = [s for s in STATUSES if s in good]
    if bad:
        problems.append(f"status: {', '.join(repr(s) for s in bad)} not among "
                        f"{', '.join(status_slug(s) for s in STATUSES)}; "
                        + ("ignored" if out["status"] else "showing every status"))
    return out, problems


def encode_settings(values: Mapping[str, Any]) -> dict[str, str | None]:
    """The inverse of :func:`parse_settings` (None: leave the key out of the URL)."""
    return {"n_steps": str(int(values["n_steps"])), "mode": str(values["mode"]),
            "seeds": ",".join(values.get("seeds") or ()) or None,
            "status": ",".join(status_slug(s) for s in values.get("status") or ()) or None}


# ---------------------------------------------------------------------------------------------------------------------
# experiments shown on the claims page: knobs, precision, training

_NOT_CONFIG = ("timeout_s", "device")
_LABEL = 220  # px for a variant name on a chart axis
_RANK = {"local": 0, "imported": 1, "baseline": 2}


@dataclass(frozen=True)
class Configuration:
    label: str  # "seed preset: rnn, 3x128, batch 32, 100 steps, 64 in; CPU, measured here"
    params: dict
    records: tuple[Record, ...]  # one per variant (the best: this machine's, then imported, then bundled; newest)
    device: str
    is_seed: bool
    source: str  # tables.source_note


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


def _is_seed(params: Mapping[str, Any], preset: Mapping[str, Any] | None) -> bool:
    if not preset:
        return False
    return all(params.get(k) == v for k, v in preset.items() if k != "variants" and not isinstance(v, list))


def configurations(records: Sequence[Record], experiment: str, *, seed_preset: Mapping[str, Any] | None = None
                   ) -> list[Configuration]:
    """``experiment``'s records grouped by configuration, device and machine: this machine's first, then the seed
    preset's configuration, then the one with most variants, then the newest."""
    groups: dict[tuple, list[Record]] = {}
    for r in records:
        if r.experiment != experiment:
            continue
        p = tuple(sorted((k, repr(v)) for k, v in r.params.items() if k not in _NOT_CONFIG))
        groups.setdefault((p, str(r.env.get("device") or "?").upper(), r.machine), []).append(r)
    out = []
    for (_, device, _), rs in groups.items():
        best: dict[str, Record] = {}
        for r in sorted(rs, key=lambda r: r.created_at, reverse=True):
            cur = best.get(r.variant)
            if cur is None or _RANK.get(r.source, 3) < _RANK.get(cur.source, 3):
                best[r.variant] = r
        chosen = tuple(best.values())
        params = {k: v for k, v in chosen[0].params.items() if k not in _NOT_CONFIG}
        seed = _is_seed(params, seed_preset)
        src = select.source_note(chosen)
        label = f"{'seed preset: ' if seed else ''}{describe(params, chosen)}; {src}"
        out.append(Configuration(label, params, chosen, device, seed, src))

    def rank(c: Configuration):
        local = all(r.source == "local" for r in c.records)
        newest = max(r.created_at for r in c.records)
        return (not local, not c.is_seed, -sum(r.ok for r in c.records), tuple(-ord(ch) for ch in newest))

    return sorted(out, key=rank)


def _order(records: Sequence[Record], variants: Sequence[str]) -> list[Record]:
    pos = {v: i for i, v in enumerate(variants)}
    return sorted(records, key=lambda r: pos.get(r.variant, len(pos)))


def _ratio(a: Record, b: Record | None, m: str) -> str:
    return fmt.fmt_ratio(tables.ratio(a, b, m)) if b is not None else "–"


def _table(title: str, caption: str, columns: Sequence[str], rows: list[list], raw: list[list],
           records: Sequence[Record]) -> TableView:
    if not any(str(r[-1]) for r in rows):  # no failure: no error column
        columns, rows, raw = list(columns)[:-1], [r[:-1] for r in rows], [r[:-1] for r in raw]
    return TableView(title=title, caption=caption, columns=tuple(columns), rows=tuple(map(tuple, rows)),
                     raw=tuple(map(tuple, raw)), provenance=select.provenance(list(records)))


def knobs_view(cfg: Configuration) -> TableView:
    """One row per knob: speed, build and memory, each against dynamic_rnn's defaults."""
    from rnnlab.experiments.knobs import LABELS, VARIANTS

    recs = _order(cfg.records, VARIANTS)
    ref = next((r for r in recs if r.variant == "dynamic_default" and r.ok), None)
    metrics = ("fwd_ms", "train_ms", "build_s", "train_build_s", "peak_mem_mb", "graph_nodes")
    cols = ["variant", "what changes"] + [fmt.label(m) for m in metrics] + \
           ["forward vs defaults", "train vs defaults", "memory vs defaults", "error"]
    rows, raw = [], []
    for r in recs:
        vals = [r.metrics.get(m) for m in metrics]
        rats = [tables.ratio(r, ref, m) for m in ("fwd_ms", "train_ms", "peak_mem_mb")]
        rows.append([r.variant, LABELS.get(r.variant, r.variant)] + [fmt.fmt_metric(m, v) for m, v in
                                                                      zip(metrics, vals)]
                    + [fmt.fmt_ratio(x) for x in rats] + [r.error or ""])
        raw.append([r.variant, LABELS.get(r.variant, r.variant)] + vals + rats + [r.error])
    return _table(f"Tuning knobs: {describe(cfg.params)}",
                  f"{describe(cfg.params)}; medians after warm-up; ratios against dynamic_default (>1: takes more); "
                  f"{cfg.source}", cols, rows, raw, recs)


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
                       f"(max |diff| {fmt.fmt_value(m.get('outputs_first_n_vs_full'), 'sci')}), but its final state "
                       f"differs by up to {fmt.fmt_value(m['final_state_vs_full'], 'sci')}: it is a different model, "
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
    cols = ["variant", "path", "dtype", "forward (ms)", "train step (ms)", "forward vs float32",
            "matmul rate vs float32", "drift vs float32 (max |diff|)", "max |diff| vs float64", "peak memory (MB)",
            "error"]
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


def precision_notes(cfg: Configuration) -> list[tuple[str, str]]:
    """(variant, the worker's note on its dtype: fast, slow or unsupported on this device, and why)."""
    from rnnlab.experiments.precision import VARIANTS

    return [(r.variant, str(r.details["dtype_note"])) for r in _order(cfg.records, VARIANTS)
            if r.details.get("dtype_note")]


def training_view(cfg: Configuration) -> TableView:
    """One row per strategy: time (build, epochs, to the target accuracy), accuracy, agreement with tf1_dynamic."""
    from rnnlab.experiments.training import LABELS, VARIANTS

    recs = _order(cfg.records, VARIANTS)
    target = cfg.params.get("target_acc")
    cols = ["variant", "strategy", "build (s)", "first epoch (s)", "epoch (s)", "step (ms)", "final accuracy",
            "best accuracy", f"time to {target:.0%} (s)" if isinstance(target, float) else "time to target (s)",
            "epochs to target", "peak memory (MB)", "max |diff| vs tf1_dynamic", "error"]
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


# -- charts ----------------------------------------------------------------------------------------------------------

def _alt():
    import altair as alt  # loaded only when a chart is drawn: the CLI's claims table does not need it
    import pandas as pd

    return alt, pd


def _speed_bars(records: Sequence[Record], labels: Mapping[str, str], *, title: str, width: int):
    alt, pd = _alt()
    rows = []
    for r in records:
        if not r.ok:
            continue
        for m, name in (("fwd_ms", "forward"), ("train_ms", "train step")):
            if m in r.metrics:
                rows.append({"variant": r.variant, "what": labels.get(r.variant, r.variant), "measure": name,
                             "ms": r.metrics[m], "p25": r.metrics.get(f"{m}_p25"), "p75": r.metrics.get(f"{m}_p75")})
    if not rows:
        return None
    df = pd.DataFrame(rows)
    order = list(dict.fromkeys(df["variant"]))
    base = alt.Chart(df).encode(y=alt.Y("variant:N", sort=order, title=None, axis=alt.Axis(labelLimit=_LABEL)),
                                yOffset=alt.YOffset("measure:N", sort=["forward", "train step"]))
    bars = base.mark_bar().encode(
        x=alt.X("ms:Q", title="median step (ms), whiskers p25-p75"),
        color=alt.Color("measure:N", title=None, sort=["forward", "train step"], legend=alt.Legend(orient="bottom")),
        tooltip=["variant", "what", "measure", alt.Tooltip("ms:Q", format=".3g"), alt.Tooltip("p25:Q", format=".3g"),
                 alt.Tooltip("p75:Q", format=".3g")])
    whiskers = base.mark_rule(color="black").encode(x="p25:Q", x2="p75:Q")
    return (bars + whiskers).properties(width=width, title=title)


def _bars(records: Sequence[Record], metric: str, *, labels: Mapping[str, str], title: str, x_title: str,
          width: int, color: Mapping[str, str] | None = None, fmt_: str = ".3g", log: bool = False):
    alt, pd = _alt()
    rows = [{"variant": r.variant, "what": labels.get(r.variant, r.variant), metric: r.metrics[metric],
             "group": (color or {}).get(r.variant, "")} for r in records if r.ok and metric in r.metrics
            and (not log or r.metrics[metric] > 0)]  # a log axis cannot show 0
    if not rows:
        return None
    df = pd.DataFrame(rows)
    enc = dict(y=alt.Y("variant:N", sort=list(df["variant"]), title=None, axis=alt.Axis(labelLimit=_LABEL)),
               x=alt.X(f"{metric}:Q", title=x_title, scale=alt.Scale(type="log") if log else alt.Undefined),
               tooltip=["variant", "what", alt.Tooltip(f"{metric}:Q", format=fmt_)])
    if color:
        enc["color"] = alt.Color("group:N", title=None, legend=alt.Legend(orient="bottom"))
    mark = alt.Chart(df).mark_circle(size=120, opacity=1) if log else alt.Chart(df).mark_bar()  # no bar from 0 on log
    return mark.encode(**enc).properties(width=width, height=alt.Step(24), title=title)


def _side_by_side(alt, *charts):
    parts = [c for c in charts if c is not None]
    if len(parts) > 1:  # each keeps its own colours and legend
        return alt.hconcat(*parts).resolve_scale(color="independent")
    return parts[0] if parts else None


def knobs_chart(cfg: Configuration, width: int = 340):
    """Step time (forward and train, with quartiles) and peak memory per knob."""
    from rnnlab.experiments.knobs import LABELS, VARIANTS

    alt, _ = _alt()
    recs = _order(cfg.records, VARIANTS)
    speed = _speed_bars(recs, LABELS, title="Step time per knob", width=width)
    mem = _bars(recs, "peak_mem_mb", labels=LABELS, title="Peak memory per knob", x_title="peak memory (MB)",
                width=width)
    return _side_by_side(alt, speed, mem)


def precision_chart(cfg: Configuration, width: int = 340):
    """Step time per path and dtype, and the drift against float32 on identical weights."""
    from rnnlab.experiments.precision import VARIANTS

    alt, _ = _alt()
    recs = _order(cfg.records, VARIANTS)
    labels = {r.variant: " ".join(precision_label(r.variant)) for r in recs}
    speed = _speed_bars(recs, labels, title="Step time per dtype", width=width)
    dtype = {r.variant: precision_label(r.variant)[1] for r in recs}
    drift = _bars(recs, "max_abs_diff", labels=labels, title="Drift against keras_float32 (same weights, inputs)",
                  x_title="max |diff| of outputs and final state (log; float32 itself: 0)", width=width,
                  color=dtype, fmt_=".2e", log=True)
    return _side_by_side(alt, speed, drift)


def training_charts(cfg: Configuration, width: int = 340):
    """(test accuracy per epoch per strategy, training time per epoch per strategy); either may be None."""
    alt, pd = _alt()
    acc, times = [], []
    for r in cfg.records:
        if not r.ok:
            continue
        for i, a in enumerate(r.details.get("acc_curve") or (), start=1):
            acc.append({"variant": r.variant, "epoch": i, "test accuracy": float(a)})
        for i, t in enumerate(r.details.get("epoch_times_s") or (), start=1):
            times.append({"variant": r.variant, "epoch": i, "seconds": float(t)})
    a_chart = t_chart = None
    if acc:
        a_chart = alt.Chart(pd.DataFrame(acc)).mark_line(point=True).encode(
            x=alt.X("epoch:Q", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("test accuracy:Q", axis=alt.Axis(format="%"), scale=alt.Scale(zero=False), title="test accuracy"),
            color=alt.Color("variant:N", legend=alt.Legend(orient="bottom", columns=3)),
            tooltip=["variant", "epoch", alt.Tooltip("test accuracy:Q", format=".1%")],
        ).properties(width=width, title="Test accuracy after each epoch")
    if times:
        t_chart = alt.Chart(pd.DataFrame(times)).mark_line(point=True).encode(
            x=alt.X("epoch:Q", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("seconds:Q", scale=alt.Scale(type="log"), title="seconds (log)"),
            color=alt.Color("variant:N", legend=alt.Legend(orient="bottom", columns=3)),
            tooltip=["variant", "epoch", alt.Tooltip("seconds:Q", format=".3g")],
        ).properties(width=width, title="Training time per epoch (the first compiles)")
    return a_chart, t_chart


# ---------------------------------------------------------------------------------------------------------------------
# fastest for you

GOAL_TITLES = {"build_plus_n": "Build + {n:,} {steps}", "steady_train": "Steady state: one {step}",
               "memory": "Memory"}


def goal_title(goal: str, n_steps: int, mode: str) -> str:
    steps, step = ("training steps", "training step") if mode == "train" else ("forward passes", "forward pass")
    return GOAL_TITLES[goal].format(n=n_steps, steps=steps, step=step)


def recommendation_view(rec: Recommendation) -> TableView | None:
    """Every measured variant ranked by build + N steps, with its steady-state step and its memory."""
    from rnnlab.tf.variants import label

    by_goal = {g: dict(rec.picks[g].ranking) for g in GOALS if g in rec.picks}
    order = [v for v, _ in rec.picks["build_plus_n"].ranking] if "build_plus_n" in rec.picks else []
    for g in GOALS:
        order += [v for v in by_goal.get(g, {}) if v not in order]
    if not order:
        return None
    step = "train step (ms)" if rec.mode == "train" else "forward (ms)"
    cols = ["variant", "what runs", f"build + {rec.n_steps:,} steps (s)", step, "peak memory (MB)"]
    rows, raw = [], []
    for v in order:
        vals = [by_goal.get(g, {}).get(v) for g in GOALS]
        rows.append([v, label(v), fmt.fmt_value(vals[0]), fmt.fmt_metric("fwd_ms", vals[1]),
                     fmt.fmt_metric("peak_mem_mb", vals[2])])
        raw.append([v, label(v), *vals])
    return TableView(title=f"Fastest for you: {describe(rec.config)}",
                     caption=f"{describe(rec.config)} on {rec.device or '?'}; {rec.mode} mode; ranked by build + "
                             f"{rec.n_steps:,} steps", columns=tuple(cols), rows=tuple(map(tuple, rows)),
                     raw=tuple(map(tuple, raw)))


def measure_command(config: Mapping[str, Any], variants: Sequence[str] = ()) -> str:
    """``python -m rnnlab run unroll --set cell=lstm ... --variants a,b``: the records a recommendation needs."""
    sets = " ".join(f"--set {k}={v}" for k, v in config.items())
    return f"python -m rnnlab run unroll {sets}" + (f" --variants {','.join(variants)}" if variants else "")


# ---------------------------------------------------------------------------------------------------------------------
# a claim's command as a plan (the page's Run button)

def command_args(command: str) -> dict[str, Any]:
    """``python -m rnnlab run E --preset P --set k=v --variants a,b`` -> {experiment, preset, sets, variants}."""
    words = shlex.split(command)
    if words[:4] != ["python", "-m", "rnnlab", "run"] or len(words) < 5:
        raise ValueError(f"not a run command: {command!r}")
    out: dict[str, Any] = {"experiment": words[4], "preset": None, "sets": [], "variants": None}
    it = iter(words[5:])
    for w in it:
        if w == "--preset":
            out["preset"] = next(it)
        elif w == "--set":
            out["sets"].append(next(it))
        elif w == "--variants":
            out["variants"] = [v for v in next(it).split(",") if v]
        else:
            raise ValueError(f"unexpected {w!r} in {command!r}")
    return out


def claim_params(claim: Claim) -> dict[str, Any]:
    """The configuration a claim's command measures: its preset's values with the ``--set`` ones over them (a swept
    parameter keeps the preset's value). For a link that opens the claim's configuration on its page."""
    from rnnlab import experiments

    args = command_args(claim.command)
    exp = experiments.get(args["experiment"])
    params = {k: v for k, v in exp.presets.get(args["preset"] or "", {}).items() if k != "variants"}
    for k, vals in exp.params.parse_assignments(args["sets"]).items():
        if len(vals) == 1:
            params[k] = vals[0]
    return params
