"""The claims page's and ``python -m rnnlab claims``'s views: records in, TableViews, Altair charts and text out.

Pure (no Streamlit, no TensorFlow, no store): the page, the CLI and the exports call the same functions, so what a
terminal prints, what the screen shows and what a slide holds agree. The page imports nothing else from rnnlab but
``rnnlab.engine.api``: what it needs of the judges and the experiments comes through here.

- :func:`evaluate` / :func:`claims_view` / :func:`claims_text` / :func:`counts` / :func:`select`: the verdicts of
  ``rnnlab.judge.claims`` as a table, as terminal text, counted per status, filtered by seed and status.
- :func:`parse_settings`: the page's URL settings that are not experiment parameters (filters, N steps, mode),
  with one problem line per bad value (the page shows them as warnings and uses the default).
- :func:`configurations`: one experiment's records as comparable sets (``select.groups``: one configuration, device
  and machine each; the headline first), and :func:`knobs_view` / :func:`precision_view` / :func:`training_view`
  with their charts.
- :func:`knobs_notes`, :func:`dtype_note` / :func:`precision_notes` / :func:`precision_notes_intro` and
  :func:`summarize` / :func:`training_summary`: the sections' sentences, composed here from the records' numbers and
  facts (the workers store no prose for the screen), saying on whose machine they were measured
  (``rnnlab.judge.select``: "this CPU" only for this machine's records).
- :func:`recommendation` / :func:`recommendation_view` / :func:`measure_command`: ``rnnlab.judge.recommend`` as a
  table, and the run that makes the records it needs.
- :func:`report`: the page as a Report (``python -m rnnlab export --experiment claims``): the claims table first,
  exactly as the page shows it, then the knobs, precision and training tables and charts.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from rnnlab import experiments
from rnnlab.core import envinfo, rules, stats, wording
from rnnlab.core import format as fmt
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record
from rnnlab.core.views import ChartView, Report, TableView
from rnnlab.experiments import seeds
from rnnlab.judge import claims as judge_claims
from rnnlab.judge import findings, recommend
from rnnlab.judge import select as sel
from rnnlab.judge.claims import Claim, Verdict
from rnnlab.judge.recommend import GOALS, Recommendation
from rnnlab.present import style, tables

Result = tuple[Claim, Verdict]
STATUSES = rules.STATUSES

# ---------------------------------------------------------------------------------------------------------------------
# claims

SEEDS = tuple(seeds.SEED_FILES)  # "000", "001", "003", "004"
# what the page and the CLI say beside each status
STATUS_HELP = {
    "holds": "the records agree with the seed",
    "does not hold": "the records contradict the seed",
    "depends": "it holds in some measured configurations or measures and not in others (the 'why' says where)",
    "too noisy to call": "the interval of a ratio it rests on reaches across the margin: the rounds (or the timed "
                         "steps of one round) disagree too much to decide; more rounds would call it",
    "not measured": "no usable record yet: run the command shown",
    "not measurable here": "the seed's figure is about a GPU and this machine has none (import GPU records)",
}


def evaluate(records: Sequence[Record]) -> list[Result]:
    """Every claim judged on ``records`` (``rnnlab.judge.claims.evaluate``)."""
    return judge_claims.evaluate(records)


def here(records: Sequence[Record]) -> bool:
    """Every record was measured on this machine (only then may a page say "measured here")."""
    return sel.is_here(records)


def source_note(records: Sequence[Record]) -> str:
    """"measured here on CPU: ..." or "bundled results (not measured here) from CPU: ..." (``select``)."""
    return sel.source_note(records)


def measured_column(records: Sequence[Record]) -> str:
    """The claims table's column of what was measured: "measured here" only when every record is this machine's."""
    return "measured here" if here(records) else "measured"


def claim_columns(records: Sequence[Record] = ()) -> tuple[str, ...]:
    return ("verdict", "claim (the seed's words and figure)", "seed", "tested by", measured_column(records),
            "why / depends on", "command")


def page_title(records: Sequence[Record]) -> str:
    """The Claims page's title: "measured here" only when every record is this machine's."""
    if here(records):
        return "Claims: what the seeds say, measured here"
    return "Claims: what the seeds say, against the stored results"


def claims_title(records: Sequence[Record]) -> str:
    """The claims table's title (and the export's heading), said as the records' provenance allows."""
    if here(records):
        return "The seeds' claims, measured on this machine"
    if not records:
        return "The seeds' claims (nothing measured yet)"
    srcs = {r.source for r in records}
    if srcs == {"baseline"}:
        return "The seeds' claims, judged on bundled results"
    if srcs == {"imported"}:
        return "The seeds' claims, judged on imported results"
    return "The seeds' claims, judged on this machine's and other machines' results"


def rule_text() -> str:
    """The judging rule in one sentence, with ``rules.MARGIN``."""
    return (f"A speed or memory claim holds when the winner saves at least {fmt.fmt_percent(rules.MARGIN)} over the "
            "whole interval of the ratio (across rounds, or the quartiles of the timed steps of one round); an "
            "interval reaching across the margin is too noisy to call; records of two machines are never compared; "
            "each verdict says what was measured, and on whose machine.")


def seed_number(claim: Claim) -> str:
    return claim.seed[:3]


def seed_label(claim: Claim) -> str:
    """"seed 000 §3.1" or "seed 001 (question)"."""
    sec = claim.section
    return f"seed {seed_number(claim)} " + (f"§{sec}" if sec[:1].isdigit() else f"({sec})")


def seed_name(number: str) -> str:
    """What seed ``number`` is ("000" -> "a blog post comparing ...")."""
    return seeds.SEED_TITLES.get(number, seeds.SEED_FILES.get(number, number))


def seed_title(claim: Claim) -> str:
    return seed_name(seed_number(claim))


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


def claims_view(results: Sequence[Result], *, records: Sequence[Record] = (), title: str | None = None) -> TableView:
    """One row per claim: verdict, claim, seed, experiment, what was measured, why, the command that measures it.
    The page shows it, its downloads save it, ``rnnlab claims --format md`` and ``export --experiment claims`` print
    it."""
    rows, raw = [], []
    for c, v in results:
        rows.append([v.status, c.text, seed_label(c), tested_by(c), v.measured, v.why, c.command])
        raw.append([v.status, c.text, c.seed, c.experiment, v.measured, v.why, c.command])
    n = counts(results)
    caption = ("; ".join(f"{k}: {n[k]}" for k in STATUSES if n[k]) or "no claims") + (
        f". Judged on {len(records)} records: {sel.source_note(records)}" if records else
        ". No records yet: every claim is 'not measured'")
    return TableView(title=title or claims_title(records), caption=caption, columns=claim_columns(records),
                     rows=tuple(map(tuple, rows)), raw=tuple(map(tuple, raw)),
                     provenance=sel.provenance(list(records)) if records else {})


def claims_frame(view: TableView, results: Sequence[Result]):
    """The page's on-screen table: ``view`` without the long why and command columns, "tested by" as the
    experiment's name (the rest of every cell as in ``view``)."""
    from rnnlab.core.views import to_frame

    frame = to_frame(view).drop(columns=["why / depends on", "command"])
    frame["tested by"] = [c.experiment for c, _ in results]
    return frame


def summary_line(results: Sequence[Result]) -> str:
    n = counts(results)
    return " · ".join(f"{s} {n[s]}" for s in STATUSES)


def claims_text(results: Sequence[Result], *, width: int = 110) -> str:
    """The claims for a terminal: a line per claim (verdict, seed, claim), then what was measured and why, wrapped."""
    w_status = max(len(s) for s in STATUSES)
    w_seed = max([len(seed_label(c)) for c, _ in results] or [4])
    indent = " " * (w_status + w_seed + 4)
    out = [f"{'VERDICT'.ljust(w_status)}  {'SEED'.ljust(w_seed)}  CLAIM"]
    if width - len(indent) < 40:  # a narrow terminal: the claim's text under its verdict, not in a sliver beside it
        indent = "    "
        out = [f"{'VERDICT'.ljust(w_status)}  SEED", f"{indent}CLAIM"]
    body = max(40, width - len(indent))
    for c, v in results:
        claim = textwrap.wrap(c.text, body) or [""]
        if len(indent) == 4:
            out.append(f"{v.status.ljust(w_status)}  {seed_label(c)}")
            out += [indent + line for line in claim]
        else:
            out.append(f"{v.status.ljust(w_status)}  {seed_label(c).ljust(w_seed)}  {claim[0]}")
            out += [indent + line for line in claim[1:]]
        for head, text in (("measured", v.measured), ("why", v.why)):
            lines = textwrap.wrap(f"{head}: {text}", body, subsequent_indent="  ") or [""]
            out += [indent + line for line in lines]
        if v.status == "not measured":
            out.append(indent + f"measure: {c.command}")
    return "\n".join(out)


def claim_params(claim: Claim) -> dict[str, Any]:
    """The configuration a claim's run measures: its preset's values with its overrides over them (a swept
    parameter keeps the preset's value). For a link that opens the claim's configuration on its page."""
    exp = experiments.get(claim.experiment)
    params = {k: v for k, v in exp.presets.get(claim.preset, {}).items() if k != "variants"}
    for k, v in claim.plan_args["overrides"].items():
        if not isinstance(v, list):
            params[k] = v
    return params


def claim_query(claim: Claim) -> dict[str, str] | None:
    """The Unrolling page's query for an unroll claim's configuration and variants (None for other experiments)."""
    if claim.experiment != "unroll":
        return None
    return findings.unroll_query(claim_params(claim), claim.variants)


def gpu_machines(records: Sequence[Record], experiment: str) -> list[str]:
    """The machines with GPU records of ``experiment`` (for "not measurable here")."""
    return sorted({r.machine for r in records if r.experiment == experiment and sel.device_of(r) == "GPU"})


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

SECTIONS = ("knobs", "precision", "training")
_LABEL = 220  # px for a variant name on a chart axis


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


def _table(title: str, caption: str, columns: Sequence[str], rows: list[list], raw: list[list],
           records: Sequence[Record]) -> TableView:
    if not any(str(r[-1]) for r in rows):  # no failure: no error column
        columns, rows, raw = list(columns)[:-1], [r[:-1] for r in rows], [r[:-1] for r in raw]
    return TableView(title=title, caption=caption, columns=tuple(columns), rows=tuple(map(tuple, rows)),
                     raw=tuple(map(tuple, raw)), provenance=sel.provenance(list(records)))


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
        ivs = [tables.interval(r, ref, m) for m in ("fwd_ms", "train_ms", "peak_mem_mb")]
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


# What each dtype is for, and the CPU flags that give native arithmetic in it (for the words below).
_NATIVE = {"float16": ("avx512_fp16", "amx_fp16"), "bfloat16": ("avx512_bf16", "amx_bf16")}
_MADE_FOR = {"mixed_float16": "mixed_float16 is made for NVIDIA GPUs with compute capability >= 7.0 (Tensor Cores).",
             "bfloat16": "bfloat16 is made for CPUs with AMX / AVX512-BF16, TPUs and recent GPUs."}


def _device_ref(records: Sequence[Record]) -> str:
    """"this CPU" for this machine's records only; "the measuring CPU" for bundled and imported ones (the sentence
    before names whose machine, ``select.where``)."""
    dev = sel.device_of(records[0]) if records else "?"
    dev = "device" if dev == "?" else dev
    return f"this {dev}" if sel.is_here(records) else f"the measuring {dev}"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _matmul_words(comp: str, ratio: float | None, error: str | None, dev: str) -> str:
    """The 512 x 512 matmul in ``comp`` against float32, from ``matmul_vs_float32`` (or the matmul's error)."""
    if ratio is None:
        return (f"A plain {comp} matmul cannot run on {dev}: {error}" if error else
                f"A {comp} matmul was not timed")
    r = fmt.fmt_ratio(ratio)
    if ratio < 0.8:
        return (f"A 512 x 512 {comp} matmul runs at {r} float32's rate: SLOW (converted to and from float32 around "
                "the arithmetic, it only adds work)")
    if ratio < 1.2:
        return f"A 512 x 512 {comp} matmul runs at about float32's rate ({r})"
    return f"A 512 x 512 {comp} matmul is FASTER than float32's ({r} the rate)"


def _hardware_words(comp: str, device: str, details: Mapping[str, Any], dev: str) -> tuple[str, bool]:
    """What the device offers for ``comp`` arithmetic, from the stored CPU flags ("" when they were not read), and
    whether it has native ``comp`` arithmetic."""
    if device == "GPU":
        return (f"on a GPU it computes in {comp}, fast with Tensor Cores (NVIDIA compute capability >= 7.0 for "
                "float16, >= 8.0 for bfloat16)"), False
    flags = details.get("cpu_flags_checked")
    if device != "CPU" or comp not in _NATIVE or not isinstance(flags, (list, tuple)) \
            or details.get("cpu_flags_read") is False:
        return "", False
    has = [f for f in _NATIVE[comp] if f in flags]
    return (f"{dev} has {', '.join(has)}" if has else
            f"{dev} has no native {comp} arithmetic ({' / '.join(_NATIVE[comp])} absent)"), bool(has)


def _count(n: float, noun: str) -> str:
    return f"{fmt.fmt_value(n, 'int')} {noun}{'' if round(n) == 1 else 's'}"


def _policy_note(r: Record, dev: str) -> str:
    """tf1_dynamic_policy: what the global mixed_float16 policy did to dynamic_rnn (``policy_*`` metrics/details)."""
    m, d = r.metrics, r.details
    runs, n16, n32 = m.get("policy_runs"), m.get("policy_float16_matmuls"), m.get("policy_float32_matmuls")
    parts = []
    if runs == 0:
        err = d.get("policy_error")
        parts.append("dynamic_rnn did not run under the global mixed_float16 policy" + (f": {err}." if err else "."))
    elif runs and not n16:
        facts = [f"{_count(n32, 'float32 matmul')}, none in float16" if n32 is not None else "no float16 matmuls"]
        if d.get("policy_output_dtype"):
            facts.append(f"outputs {d['policy_output_dtype']}")
        parts.append(f"Under the global mixed_float16 policy dynamic_rnn still computed in float32 "
                     f"({'; '.join(facts)}): the policy applies to Keras layers, and dynamic_rnn's TF1 cells "
                     "ignored it.")
    elif runs:
        parts.append(f"Under the global mixed_float16 policy dynamic_rnn computed in float16 "
                     f"({_count(n16, 'float16 matmul')}, {fmt.fmt_value(n32, 'int')} in float32).")
    ratio = m.get("matmul_vs_float32")
    if ratio is not None:
        parts.append(f"What float16 would give: a 512 x 512 float16 matmul runs at {fmt.fmt_ratio(ratio)} float32's "
                     f"rate on {dev}.")
    return " ".join(parts)


def dtype_note(r: Record) -> str:
    """Plain words on one precision record: is its dtype fast, slow or unsupported on the device that measured it,
    and why. Composed from the record's numbers and facts (``fwd_vs_float32``, ``matmul_vs_float32``,
    ``cpu_flags_checked``, ``policy_*``), never from prose a worker stored; "this CPU" only for this machine's
    records (others say "the measuring CPU": :func:`precision_notes_intro` names whose machine)."""
    from rnnlab.experiments.precision import COMPUTE

    path, dtype = precision_label(r.variant)
    m, d = r.metrics, r.details
    dev = _device_ref([r])
    if dtype == "policy":
        return _policy_note(r, dev)
    if dtype == "float32":
        return "float32: the native dtype; the other dtypes of this path are timed against it."
    comp = str(d.get("compute_dtype") or COMPUTE.get(dtype, dtype))
    out = []
    slow = m.get("fwd_vs_float32")
    if slow is not None:
        n = len(r.round_metrics)  # its rounds: each timed both dtypes in one worker
        iv = stats.ratio_interval(r.round_metrics, [{"fwd_vs_float32": 1.0}] * n, "fwd_vs_float32")
        phrase = wording.difference(iv)
        how = fmt.interval_words(iv)
        out.append(f"{path} in {dtype} runs its forward pass {phrase.against('float32')} on the same path"
                   f"{f' ({how})' if how else ''}." if phrase is not None else
                   f"{path} in {dtype} takes {fmt.fmt_ratio(slow)} the float32 time of the same path (one round: "
                   "no interval, so no call).")
    device = sel.device_of(r)
    ratio = m.get("matmul_vs_float32")
    hw, native = _hardware_words(comp, device, d, dev)
    sep = ", even though " if native and ratio is not None and ratio < 0.8 else "; "
    out.append(_matmul_words(comp, ratio, d.get("matmul_error"), dev) + (f"{sep}{hw}." if hw else "."))
    if device != "GPU" and dtype in _MADE_FOR:
        out.append(_MADE_FOR[dtype])
    if slow is None:
        out.append("At RNN sizes casts and elementwise ops weigh as much as the matmuls: compare the forward and "
                   "train step columns with the float32 row.")
    return " ".join(out)


def precision_notes(cfg: Configuration) -> list[tuple[str, str]]:
    """(variant, :func:`dtype_note`) for every successful record, in the table's order (failures: the table's error
    column)."""
    from rnnlab.experiments.precision import VARIANTS

    return [(r.variant, dtype_note(r)) for r in _order(cfg.records, VARIANTS) if r.ok]


def precision_notes_intro(cfg: Configuration) -> str:
    """The sentence before the dtype notes: whose machine measured them (``select.where``) and how."""
    return (f"{sel.where(list(cfg.records))}, each variant's worker timed a 512 x 512 matmul in its compute dtype "
            "against float32 and, for mixed_float16 and bfloat16, the same path's forward pass in float32:")


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


# -- charts (every variant in its own colour: ``style.color_scale``) -------------------------------------------------

def _alt():
    import altair as alt  # loaded only when a chart is drawn: the CLI's claims table does not need it
    import pandas as pd

    return alt, pd


def _variant_color(alt, df, legend: bool = False):
    return alt.Color("variant:N", scale=style.color_scale(df["variant"]), title="variant",
                     legend=alt.Legend(orient="bottom", columns=3) if legend else None)


def _speed_bars(records: Sequence[Record], labels: Mapping[str, str], *, title: str, width: int):
    """Median forward and training step per variant (the training step lighter), whiskers p25-p75."""
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
    measures = ["forward", "train step"]
    base = alt.Chart(df).encode(y=alt.Y("variant:N", sort=order, title=None, axis=alt.Axis(labelLimit=_LABEL)),
                                yOffset=alt.YOffset("measure:N", sort=measures))
    bars = base.mark_bar().encode(
        x=alt.X("ms:Q", title="median step (ms), whiskers p25-p75"), color=_variant_color(alt, df),
        opacity=alt.Opacity("measure:N", sort=measures, scale=alt.Scale(domain=measures, range=[1.0, 0.5]),
                            title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["variant", "what", "measure", alt.Tooltip("ms:Q", format=".3g"), alt.Tooltip("p25:Q", format=".3g"),
                 alt.Tooltip("p75:Q", format=".3g")])
    whiskers = base.mark_rule(color="black").encode(x="p25:Q", x2="p75:Q")
    return (bars + whiskers).properties(width=width, title=title)


def _bars(records: Sequence[Record], metric: str, *, labels: Mapping[str, str], title: str, x_title: str,
          width: int, fmt_: str = ".3g", log: bool = False):
    alt, pd = _alt()
    rows = [{"variant": r.variant, "what": labels.get(r.variant, r.variant), metric: r.metrics[metric]}
            for r in records if r.ok and metric in r.metrics
            and (not log or r.metrics[metric] > 0)]  # a log axis cannot show 0
    if not rows:
        return None
    df = pd.DataFrame(rows)
    enc = dict(y=alt.Y("variant:N", sort=list(df["variant"]), title=None, axis=alt.Axis(labelLimit=_LABEL)),
               x=alt.X(f"{metric}:Q", title=x_title, scale=alt.Scale(type="log") if log else alt.Undefined),
               color=_variant_color(alt, df), tooltip=["variant", "what", alt.Tooltip(f"{metric}:Q", format=fmt_)])
    mark = alt.Chart(df).mark_circle(size=120, opacity=1) if log else alt.Chart(df).mark_bar()  # no bar from 0 on log
    return mark.encode(**enc).properties(width=width, height=alt.Step(24), title=title)


def _side_by_side(alt, *charts):
    parts = [c for c in charts if c is not None]
    if len(parts) > 1:  # each its own explicit variant -> colour scale (style.color_scale: the same colours)
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
    drift = _bars(recs, "max_abs_diff", labels=labels, title="Drift against keras_float32 (same weights, inputs)",
                  x_title="max |diff| of outputs and final state (log; float32 itself: 0)", width=width,
                  fmt_=".2e", log=True)
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
        df = pd.DataFrame(acc)
        a_chart = alt.Chart(df).mark_line(point=True).encode(
            x=alt.X("epoch:Q", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("test accuracy:Q", axis=alt.Axis(format="%"), scale=alt.Scale(zero=False), title="test accuracy"),
            color=_variant_color(alt, df, legend=True),
            tooltip=["variant", "epoch", alt.Tooltip("test accuracy:Q", format=".1%")],
        ).properties(width=width, title="Test accuracy after each epoch")
    if times:
        df = pd.DataFrame(times)
        t_chart = alt.Chart(df).mark_line(point=True).encode(
            x=alt.X("epoch:Q", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("seconds:Q", scale=alt.Scale(type="log"), title="seconds (log)"),
            color=_variant_color(alt, df, legend=True),
            tooltip=["variant", "epoch", alt.Tooltip("seconds:Q", format=".3g")],
        ).properties(width=width, title="Training time per epoch (the first compiles)")
    return a_chart, t_chart


def section_views(records: Sequence[Record], name: str) -> tuple[list[TableView], list[ChartView]]:
    """One section's table and charts at the configuration the page shows first (the headline one)."""
    from rnnlab.present.report import chart_view

    exp = experiments.get(name)
    configs = configurations(records, name, seed_preset=exp.presets.get("seed"))
    if not configs:
        return [], []
    cfg = configs[0]
    view = {"knobs": knobs_view, "precision": precision_view, "training": training_view}[name](cfg)
    charts = {"knobs": lambda: [(knobs_chart(cfg), "Step time and peak memory per knob")],
              "precision": lambda: [(precision_chart(cfg), "Step time and drift per dtype")],
              "training": lambda: list(zip(training_charts(cfg), ("Test accuracy per epoch",
                                                                   "Training time per epoch")))}[name]()
    cvs = [chart_view(c, t, f"{describe(cfg.params, cfg.records)}; {cfg.source}", cfg.records) for c, t in charts]
    return [view], [c for c in cvs if c is not None]


def report(records: Sequence[Record]) -> Report:
    """The Claims page as a Report (``python -m rnnlab export --experiment claims``): the claims table the page shows
    (every claim, judged on ``records``), then the knobs, precision and training tables and charts.

    Given only some of the page's own experiments' records (``export --experiment knobs`` reads the knobs records
    alone), the claims table holds the claims those experiments test and only their sections follow."""
    from rnnlab.present.report import page_report

    records = list(records)
    results = evaluate(records)
    exps = {r.experiment for r in records}
    sections = SECTIONS
    if records and exps <= set(SECTIONS):
        results = [(c, v) for c, v in results if c.experiment in exps]
        sections = tuple(s for s in SECTIONS if s in exps)
    view = claims_view(results, records=records)
    tvs, cvs = [view], []
    for name in sections:
        t, c = section_views(records, name)
        tvs += t
        cvs += c
    where = f"judged on {len(records)} records: {sel.source_note(records)}" if records else "no records yet"
    return page_report("rnnlab: the seeds' claims", f"{summary_line(results)}; {where}", records, tvs, cvs)


# ---------------------------------------------------------------------------------------------------------------------
# fastest for you

GOAL_TITLES = {"build_plus_n": "Build + {n:,} {steps}", "steady_train": "Steady state: one {step}",
               "memory": "Memory"}
REC_NAMES = ("cell", "layers", "units", "batch", "seq_len")  # the recommendation's configuration on the page
REC_DEFAULTS = {k: seeds.SEED_000[k] for k in REC_NAMES}  # seed 000's configuration


def unroll_variants() -> dict[str, str]:
    """Every unroll variant (with +xla forms) -> what it runs."""
    from rnnlab.tf.variants import VARIANTS

    return dict(VARIANTS)


def base_variants() -> list[str]:
    from rnnlab.tf.variants import BASE_VARIANTS

    return list(BASE_VARIANTS)


def variant_label(variant: str) -> str:
    from rnnlab.tf.variants import label

    return label(variant)


def recommendation(records: Sequence[Record], config: Mapping[str, Any], *, n_steps: int, mode: str,
                   variants: Sequence[str] | None) -> Recommendation:
    """``rnnlab.judge.recommend.recommend`` over the unroll records (one machine's, see there)."""
    return recommend.recommend([r for r in records if r.experiment == "unroll"], config=config, n_steps=n_steps,
                               mode=mode, variants=variants)


def goal_title(goal: str, n_steps: int, mode: str) -> str:
    steps, step = ("training steps", "training step") if mode == "train" else ("forward passes", "forward pass")
    return GOAL_TITLES[goal].format(n=n_steps, steps=steps, step=step)


def ahead_text(pick: recommend.Pick) -> str | None:
    """The winner against the runner-up in the one sentence rule's words (``core.wording``): "1.5x faster than keras
    (1.4–1.6x)", "at 0.99x keras's time (0.81–1.19x), too noisy to call" (None without a runner-up or an interval)."""
    iv = pick.interval
    if pick.runner_up is None or iv is None or not iv.known or iv.lo <= 0:
        return None
    kind = "memory" if pick.goal == "memory" else "time"
    return wording.difference(iv.inverse(), kind=kind).against(pick.runner_up)


def recommendation_view(rec: Recommendation) -> TableView | None:
    """Every measured variant ranked by build + N steps, with its steady-state step and its memory."""
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
        rows.append([v, variant_label(v), fmt.fmt_value(vals[0]), fmt.fmt_metric("fwd_ms", vals[1]),
                     fmt.fmt_metric("peak_mem_mb", vals[2])])
        raw.append([v, variant_label(v), *vals])
    return TableView(title=f"Fastest for you: {describe(rec.config)}",
                     caption=f"{describe(rec.config)} on {rec.device or '?'}; {rec.mode} mode; ranked by build + "
                             f"{rec.n_steps:,} steps" + (f"; {rec.source}" if rec.source else ""),
                     columns=tuple(cols), rows=tuple(map(tuple, rows)), raw=tuple(map(tuple, raw)))


def measure_command(config: Mapping[str, Any], variants: Sequence[str] = ()) -> str:
    """The run that makes the records a recommendation at ``config`` needs (``Plan.command()``)."""
    return recommend.measure_plan(config, variants).command()


def unroll_query(config: Mapping[str, Any], variants: Sequence[str]) -> dict[str, str]:
    """The Unrolling page's query for a configuration and variants."""
    return findings.unroll_query(config, variants)


# ---------------------------------------------------------------------------------------------------------------------
# the page's Run buttons

def quick_command(name: str) -> str:
    """The command that makes a first look at experiment ``name``: its quick preset (``Plan.command()``)."""
    from rnnlab.engine import api

    return api.first_run_command(name)


@dataclass(frozen=True)
class PresetRun:
    preset: str
    plan: Any  # api.Plan, or None when it cannot run here (``problem`` says why)
    missing: int  # measurements not yet stored for this environment
    point: dict  # the preset's configuration
    problem: str = ""


def preset_runs(records: Sequence[Record], name: str, env: Mapping[str, Any] | None,
                presets: Sequence[str] = ("quick", "seed")) -> list[PresetRun]:
    """Per preset of experiment ``name``: its plan and how many of its measurements this environment (``env``, as
    ``api.known_env`` gives it; None: unknown) has not stored yet."""
    from rnnlab.engine import api

    exp = experiments.get(name)
    fp = envinfo.fingerprint(dict(env)) if env else None
    out = []
    for preset in presets:
        point = {k: v for k, v in exp.presets[preset].items() if k != "variants"}
        try:
            plan = api.plan(name, preset=preset)
        except RnnlabError as e:
            out.append(PresetRun(preset, None, 0, point, str(e)))
            continue
        missing = sum(len(sel.pick(records, p, plan.variants, fingerprint=fp, experiment=name).missing)
                      for p in plan.points)
        out.append(PresetRun(preset, plan, missing, point))
    return out


def run_device(env: Mapping[str, Any] | None) -> str:
    """The device a run here would measure on, in words."""
    return (env or {}).get("device") or ("GPU if TensorFlow sees one, else CPU" if envinfo.gpu_hint() else "CPU")


def view(records: Sequence[Record], query: Mapping[str, Any], env: Mapping[str, Any] | None = None) -> Report:
    """The claims table as the page shows it for its URL filters (``seeds``, ``status``; the page's other settings
    are accepted and do not change it), with the verdict counts as a takeaway: ``python -m rnnlab export --view
    claims?status=holds``. Bad settings raise ``RnnlabError``."""
    from rnnlab.present.deck import known, refused

    known(query, (*REC_NAMES, "variants", *SETTING_DEFAULTS), "claims")
    settings, problems = parse_settings({k: v for k, v in query.items() if k in SETTING_DEFAULTS})
    if problems:
        raise refused("claims", problems[0])
    results = evaluate(records)
    shown = select(results, seeds=settings["seeds"], statuses=settings["status"])
    if not shown:
        raise RnnlabError("--view claims: no claim matches these filters")
    return claims_report(shown, results, records)


def claims_report(shown: Sequence[Result], results: Sequence[Result], records: Sequence[Record]) -> Report:
    """The claims table of ``shown`` (of ``results``) with the verdict counts as the takeaway: the page's download
    and :func:`view`."""
    from rnnlab.present.report import page_report

    table = claims_view(shown, records=records)
    said = [f"{len(shown)} of {len(results)} claims: " + ", ".join(f"{k} {n}" for k, n in counts(shown).items() if n)
            + "."]
    rep = page_report("rnnlab: the seeds' claims", table.caption, records, [table])
    return Report(rep.title, rep.subtitle, rep.tables, rep.charts, rep.provenance, takeaways=tuple(said))


# a status as a count says it: (one, several)
_COUNTED = {"holds": ("holds", "hold"), "does not hold": ("does not hold", "do not hold"),
            "depends": ("depends on the configuration", "depend on the configuration"),
            "too noisy to call": ("is too noisy to call", "are too noisy to call"),
            "not measured": ("is not measured yet", "are not measured yet"),
            "not measurable here": ("is not measurable here", "are not measurable here")}


def answer(results: Sequence[Result], records: Sequence[Record]) -> str:
    """The page's answer first, in two or three sentences: how many of the seeds' claims hold, on whose records,
    and one that does not hold (the surprise), in the seed's words."""
    if not records:
        return ""
    n = counts(results)
    parts = [f"**{n[s]} {_COUNTED[s][n[s] != 1]}**" for s in STATUSES if n[s]]
    said = (f"Of the {len(results)} checkable claims in the seeds, " + ", ".join(parts[:-1])
            + (" and " if len(parts) > 1 else "") + parts[-1] + f", judged on {len(records)} records: "
            f"{source_note(records)}.")
    wrong = next((c for c, v in results if v.status == "does not hold"), None)
    if wrong is not None:
        said += f" For one, {seed_label(wrong)} says “{fmt.clip(wrong.text, 140)}”: the records say otherwise."
    return said
