"""The claims page's and ``python -m rnnlab claims``'s views: records in, TableViews, Altair charts and text out.

Pure (no Streamlit, no TensorFlow, no store): the page, the CLI and the exports call the same functions, so what a
terminal prints, what the screen shows and what a slide holds agree. The page imports nothing else from rnnlab but
``rnnlab.engine.api``: what it needs of the judges and the experiments comes through here (this module names what its
topic modules hold, so ``CV.<name>`` reaches all of it).

- here: :func:`evaluate` / :func:`claims_view` / :func:`claims_text` / :func:`counts` / :func:`select`: the verdicts
  of ``rnnlab.judge.claims`` as a table, as terminal text, counted per status, filtered by seed and status;
  :func:`parse_settings`: the page's URL settings that are not experiment parameters (filters, N steps, mode), with
  one problem line per bad value (the page shows them as warnings and uses the default); :func:`report` and
  :func:`view`: the page as a Report (``python -m rnnlab export --experiment claims`` / ``--view claims``): the
  claims table first, exactly as the page shows it, then the knobs, precision and training tables and charts.
- ``claims_sections``: :func:`configurations` (one experiment's records as comparable sets, ``select.groups``, the
  headline first), :func:`knobs_view` / :func:`precision_view` / :func:`training_view`, :func:`knobs_notes` and
  :func:`summarize`; ``claims_precision``: :func:`dtype_note` and the precision notes; ``claims_charts``: their
  charts. The words are composed from the records' numbers and facts (the workers store no prose for the screen),
  saying on whose machine they were measured (``rnnlab.judge.select``: "this CPU" only for this machine's records).
- ``claims_fastest``: :func:`recommendation` / :func:`recommendation_view` / :func:`measure_command`:
  ``rnnlab.judge.recommend`` as a table, and the run that makes the records it needs; ``claims_runs``: the page's
  Run buttons (:func:`preset_runs`).
"""

from __future__ import annotations

import textwrap
from typing import Any, Iterable, Mapping, Sequence

from rnnlab import experiments
from rnnlab.core import rules
from rnnlab.core import format as fmt
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record
from rnnlab.core.views import ChartView, Column, Report, TableView
from rnnlab.experiments import seeds
from rnnlab.judge import claims as judge_claims
from rnnlab.judge import findings
from rnnlab.judge import select as sel
from rnnlab.judge.claims import Claim, Verdict
# the page's sections, "Fastest for you" and Run buttons, each in its own module; named here for the page, the CLI and
# the tests
from rnnlab.present.claims_charts import knobs_chart, precision_chart, training_charts  # noqa: F401
from rnnlab.present.claims_fastest import (GOAL_TITLES, GOALS, REC_DEFAULTS, REC_NAMES, ahead_text,  # noqa: F401
                                           base_variants, goal_title, measure_command, recommendation,
                                           recommendation_view, unroll_query, unroll_variants, variant_label)
from rnnlab.present.claims_precision import dtype_note, precision_notes, precision_notes_intro  # noqa: F401
from rnnlab.present.claims_runs import PresetRun, preset_runs, quick_command, run_device  # noqa: F401
from rnnlab.present.claims_sections import (SECTIONS, Configuration, configurations, describe,  # noqa: F401
                                            experiment, knobs_notes, knobs_view, precision_label, precision_view,
                                            summarize, training_summary, training_view)
from rnnlab.present.pages import Page
from rnnlab.core.rules import Status  # noqa: F401 (pages read it from here)

PAGE = Page("claims", "Claims", ":material/fact_check:", order=5, about="the seeds' claims", topic=True)

Result = tuple[Claim, Verdict]
STATUSES = rules.STATUSES

# ---------------------------------------------------------------------------------------------------------------------
# claims

SEEDS = tuple(seeds.SEED_FILES)  # "000", "001", "003", "004"
# what the page and the CLI say beside each status
STATUS_HELP = {
    Status.HOLDS: "the records agree with the seed",
    Status.DOES_NOT_HOLD: "the records contradict the seed (one measure decided against it is enough, whatever "
                          "the noisy ones show)",
    Status.DEPENDS: "it holds in some measured configurations or measures and not in others (the 'why' says where)",
    Status.NOISY: "the interval of a ratio it rests on reaches across the margin: the rounds (or the timed "
                         "steps of one round) disagree too much to decide, or one round gave no interval at all; more "
                         "rounds would call it",
    Status.NOT_MEASURED: "no usable record yet: run the command shown",
    Status.NOT_MEASURABLE: "the seed's figure is about a GPU and this machine has none (import GPU records)",
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


def claim_columns(records: Sequence[Record] = ()) -> tuple[Column, ...]:
    return (Column("verdict", "text", "name"), Column("claim (the seed's words and figure)", "prose"),
            Column("seed", "text"), Column("tested by", "prose"), Column(measured_column(records), "prose", "figures"),
            Column("why / depends on", "prose"), Column("command", "prose"))


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
        if v.status == Status.NOT_MEASURED:
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


def gpu_machines(records: Sequence[Record], experiment: str) -> list[str]:  # noqa: F811 (a name, not the function)
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
            + "."] + per_seed(shown)
    rep = page_report("rnnlab: the seeds' claims", table.caption, records, [table])
    return Report(rep.title, rep.subtitle, rep.tables, rep.charts, rep.provenance, takeaways=tuple(said))


def per_seed(results: Sequence[Result]) -> list[str]:
    """One sentence per seed with more than one claim among ``results``: what the seed is and its claims' verdicts
    ("Seed 000 (a blog post ...): 13 claims; holds 6, does not hold 5, not measurable here 2.")."""
    out = []
    for number in dict.fromkeys(seed_number(c) for c, _ in results):
        mine = [(c, v) for c, v in results if seed_number(c) == number]
        if len(mine) > 1 and len(mine) < len(results):
            out.append(f"Seed {number} ({seed_name(number)}): {len(mine)} claims; "
                       + ", ".join(f"{k} {n}" for k, n in counts(mine).items() if n) + ".")
    return out


# a status as a count says it: (one, several)
_COUNTED = {"holds": (Status.HOLDS, "hold"), Status.DOES_NOT_HOLD: (Status.DOES_NOT_HOLD, "do not hold"),
            Status.DEPENDS: ("depends on the configuration", "depend on the configuration"),
            Status.NOISY: ("is too noisy to call", "are too noisy to call"),
            Status.NOT_MEASURED: ("is not measured yet", "are not measured yet"),
            Status.NOT_MEASURABLE: ("is not measurable here", "are not measurable here")}


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
    wrong = next((c for c, v in results if v.status == Status.DOES_NOT_HOLD), None)
    if wrong is not None:
        said += f" For one, {seed_label(wrong)} says “{fmt.clip(wrong.text, 140)}”: the records say otherwise."
    return said
