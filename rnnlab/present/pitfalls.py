"""The pitfalls page's content as data: ``pitfalls`` records -> what happened, as text and TableViews.

No Streamlit and no TensorFlow here: the code of every pitfall comes from ``rnnlab.experiments.pitfalls.PITFALLS``
(importable without TensorFlow), what it did from the records a worker stored. Numbers go through
``rnnlab.core.format``; which record stands for a pitfall is ``rnnlab.judge.select``'s choice, and where it was
measured is ``select``'s wording; commands come from ``Plan.command()``.

The sharing pitfalls record two sub-cases each (``input_dim == units`` and not); their top-level ``builds``/``error``
describe the sub-case of the params as given, their metrics (distinct variables, output differences) the
``input_dim == units`` one, where the shared stack builds. The tables here say which is which.

:func:`report` gathers the page's tables for every configuration stored (``python -m rnnlab export --experiment
pitfalls``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from rnnlab.core import envinfo, format as fmt
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record, canonical_json
from rnnlab.core.views import Column, Report, TableView
from rnnlab.engine import api
from rnnlab.experiments.pitfalls import EXPERIMENT, PITFALLS, error_summary
from rnnlab.judge import select
from rnnlab.judge.select import provenance, source_note
from rnnlab.present.pages import Page

PAGE = Page("pitfalls", "Pitfalls", ":material/report:", order=3, about="multi-layer and shape pitfalls")

EXP = "pitfalls"
SUMMARY = EXPERIMENT.summary
CELL_HELP = EXPERIMENT.params["cell"].help
VARIANTS = tuple(PITFALLS)
SHARING_TF1 = ("tf1_shared_dynamic", "tf1_shared_static")
SHARING_KERAS = ("keras_shared_sequential", "keras_shared_stacked_cells")
SHARING = SHARING_TF1 + SHARING_KERAS
CONSTRUCT = {"tf1_shared_dynamic": "dynamic_rnn", "tf1_shared_static": "static_rnn",  # over MultiRNNCell
             "keras_shared_sequential": "Sequential", "keras_shared_stacked_cells": "StackedRNNCells"}
CELLS = ("rnn", "lstm", "gru")
SIZES = ("units", "input_dim", "batch", "seq_len")  # what the presets set; the cell is chosen on its own
PRESETS = ("quick", "seed")
_STAGE = {"build": "while building", "run": "when run"}


def title(variant: str) -> str:
    return PITFALLS[variant]["title"] if variant in PITFALLS else variant


def family(variant: str) -> tuple[str, ...]:
    """The sharing variants run together for the per-cell table (TF1 pair or Keras pair); () for the others."""
    for fam in (SHARING_TF1, SHARING_KERAS):
        if variant in fam:
            return fam
    return ()


def preset_params(preset: str, cell: str) -> dict:
    """Every param of the experiment for a preset's sizes and a chosen cell (what a run at that setting records)."""
    if preset not in PRESETS:
        raise RnnlabError(f"preset={preset!r}: expected one of {', '.join(PRESETS)}")
    sizes = {k: v for k, v in EXPERIMENT.presets[preset].items() if k in SIZES}
    return EXPERIMENT.params.fill({**sizes, "cell": cell})


def plan(preset: str, cell: str | Sequence[str], variants: Sequence[str]) -> api.Plan:
    """The run of ``variants`` at a preset's sizes and one cell (or a sweep over ``cell`` given as a list)."""
    params: dict[str, Any] = preset_params(preset, cell if isinstance(cell, str) else cell[0])
    if not isinstance(cell, str):
        params["cell"] = list(cell)
    return api.plan(EXP, preset=preset, overrides=params, variants=list(variants))


def plans(preset: str, cell: str, pitfall: str) -> dict[str, api.Plan]:
    """The page's runs: ``one`` (this pitfall), ``all`` (every pitfall) and, for a sharing pitfall, ``cells`` (its
    family for every cell at these sizes)."""
    out = {"one": plan(preset, cell, [pitfall]), "all": plan(preset, cell, VARIANTS)}
    fam = family(pitfall)
    if fam:
        out["cells"] = plan(preset, CELLS, fam)
    return out


def cli_command(preset: str, cell: str | Sequence[str], variants: Sequence[str]) -> str:
    """The same run from a terminal (``Plan.command()``)."""
    return plan(preset, cell, variants).command()


def sizes_note(params: Mapping[str, Any]) -> str:
    return (f"cell={params.get('cell')}, units={params.get('units')}, input_dim={params.get('input_dim')}, "
            f"batch={params.get('batch')}, seq_len={params.get('seq_len')}")


def seen_on(rec: Record) -> str:
    """"TensorFlow 2.21.0, Keras 3.15.1; measured here on CPU: <machine>, 2025-12-02"."""
    d = rec.details or {}
    tf = d.get("tf_version") or rec.env.get("tf") or "?"
    parts = [f"TensorFlow {tf}"]
    keras = d.get("keras_version") or rec.env.get("keras")
    if keras:
        parts.append(f"Keras {keras}")
    return ", ".join(parts) + f"; {source_note([rec])}, {rec.created_at[:10]}"


# ----------------------------------------------------------------------------------------------- one pitfall

@dataclass(frozen=True)
class Outcome:
    """What the wrong code did in one stored run, and whether the right code passed its check."""

    ran: bool  # the worker produced a result (False: the record holds the worker's error)
    builds: bool | None  # the wrong code ran to its end without an exception
    headline: str
    case_note: str  # for the sharing pitfalls: which sub-case the headline is about
    error_type: str | None
    error: str | None  # TensorFlow's message, verbatim
    error_line: str | None  # the statement of the wrong code that raised it
    error_lineno: int | None
    result: str  # the experiment's own sentence(s)
    check_passed: bool | None
    check: str
    seen_on: str
    cell_used: str | None


def outcome(rec: Record) -> Outcome:
    d = rec.details or {}
    if not rec.ok:
        return Outcome(False, None, f"The worker did not finish: {rec.error}", "", None, None, None, None, "", None,
                       "", seen_on(rec), None)
    builds = bool(d.get("builds"))
    lineno = d.get("error_lineno")
    if builds:
        headline = "The wrong code runs to its end: no exception, no warning."
    else:
        where = _STAGE.get(d.get("stage") or "", "")
        at = f", at line {lineno} of the wrong code" if lineno else ""
        headline = f"The wrong code fails {where}{at}: {d.get('error_type')}.".replace("fails ,", "fails,")
    note = ""
    if rec.variant in SHARING:
        p = rec.params
        same = p.get("input_dim") == p.get("units")
        note = (f"With the sizes as given (input_dim={p.get('input_dim')}, units={p.get('units')}: input_dim "
                f"{'==' if same else '!='} units). The worker also tried input_dim "
                f"{'!=' if same else '=='} units: both are in the table below.")
    return Outcome(True, builds, headline, note, d.get("error_type"), d.get("error"), d.get("error_line"), lineno,
                   str(d.get("result") or ""), None if d.get("check_passed") is None else bool(d["check_passed"]),
                   str(d.get("check") or ""), seen_on(rec), d.get("cell_used"))


# (label, metric of the wrong code, metric of the right code); rows appear only when a value is stored
_FACTS = (
    ("distinct trainable variables", "distinct_vars_wrong", "distinct_vars_right"),
    ("distinct kernels", "distinct_kernels_wrong", "distinct_kernels_right"),
    ("parameters", "params_wrong", "params_right"),
    ("max |diff| of the outputs vs the right code", "max_abs_diff_vs_correct", None),
    ("max |diff| vs the correct stack given the shared weights in every layer", "max_abs_diff_vs_tied", None),
    ("weights at positions 2-3 moved by one SGD step on position 1", "others_changed_wrong", "others_changed_right"),
    ("rows that silently lose steps", "rows_short", None),
    ("max |diff| of the right code vs a float64 NumPy reference", None, "right_ref_abs_diff"),
)
_INT = {"distinct_vars_wrong", "distinct_vars_right", "distinct_kernels_wrong", "distinct_kernels_right",
        "params_wrong", "params_right", "rows_short"}


def _num(metric: str | None, value: Any) -> str:
    if metric is None or value is None:
        return fmt.MISSING
    return fmt.fmt_value(value, "int" if metric in _INT else "sci")


def facts(rec: Record) -> TableView | None:
    """Measured facts of the wrong and the right code (None when nothing of the kind was stored)."""
    m = rec.metrics
    rows, raw = [], []
    for label, w, r in _FACTS:
        wv = m.get(w) if w else None
        rv = m.get(r) if r else None
        if wv is None and rv is None:
            continue
        rows.append((label, _num(w, wv), _num(r, rv)))
        raw.append((label, wv, rv))
    if not rows:
        return None
    caption = source_note([rec])
    if rec.variant in SHARING:
        caption = f"Sub-case input_dim == units = {rec.params.get('units')} (the shared stack builds there); " + caption
    return TableView(title=f"{title(rec.variant)} ({sizes_note(rec.params)}): measured", caption=caption,
                     columns=(Column("measure", "prose", "name"), "wrong code", "right code"), rows=tuple(rows),
                     raw=tuple(raw),
                     provenance=provenance([rec]))


def _yes_no(v: Any) -> str:
    return fmt.MISSING if v is None else "yes" if v else "no"


def _err_cell(c: Mapping[str, Any]) -> str:
    if not c.get("error_type"):
        return ""
    return f"{c['error_type']}: {c.get('error_summary') or error_summary(c.get('error'))}"


def _sharing_case_row(rec: Record, c: Mapping[str, Any], *, with_cell: bool) -> tuple[list, list]:
    one_kernel = c.get("kernels_same_tensor", c.get("weights_same_objects"))
    if c.get("builds"):
        wrong = "builds and runs"
    elif c.get("constructed"):
        wrong = f"constructed; fails {_STAGE.get(c.get('stage') or '', '')}".rstrip()
    else:
        wrong = f"fails {_STAGE.get(c.get('stage') or '', '')}".rstrip()
    vals = [c.get("case"), c.get("input_dim"), wrong, c.get("distinct_vars_wrong"),
            c.get("distinct_vars_right"), c.get("params_wrong"), c.get("params_right"), one_kernel,
            c.get("max_abs_diff_vs_correct"), c.get("check_passed"), _err_cell(c)]
    shown = [str(c.get("case")), fmt.fmt_value(c.get("input_dim"), "int"), wrong,
             _num("distinct_vars_wrong", c.get("distinct_vars_wrong")),
             _num("distinct_vars_right", c.get("distinct_vars_right")), _num("params_wrong", c.get("params_wrong")),
             _num("params_right", c.get("params_right")), _yes_no(one_kernel),
             _num("max_abs_diff_vs_correct", c.get("max_abs_diff_vs_correct")),
             "pass" if c.get("check_passed") else "FAIL", _err_cell(c)]
    if with_cell:
        vals = [rec.params.get("cell"), CONSTRUCT.get(rec.variant, rec.variant)] + vals
        shown = [str(rec.params.get("cell")), CONSTRUCT.get(rec.variant, rec.variant)] + shown
    return shown, vals


# a check's pass/FAIL is a word, whatever the bool behind it; an error's first line is a sentence
_CHECK_WORDS = Column("right code check", "text")
_ERROR_LINE = Column("error (first line)", "prose", "error")
_SHARING_COLUMNS = ("sub-case", "input_dim", Column("wrong code", "text"), "vars (wrong)", "vars (right)",
                    "params (wrong)", "params (right)", "one kernel, 3 layers", "max |diff| vs right", _CHECK_WORDS,
                    _ERROR_LINE)


def cases(rec: Record) -> TableView | None:
    """The sub-cases one record holds: both input_dim cases (sharing) or the variations tried (shape pitfalls)."""
    cs = list((rec.details or {}).get("cases") or [])
    if not rec.ok or not cs:
        return None
    if rec.variant in SHARING:
        pairs = [_sharing_case_row(rec, c, with_cell=False) for c in cs]
        columns = _SHARING_COLUMNS
    else:
        pairs = []
        for c in cs:
            vals = [c.get("case"), "runs" if c.get("builds") else "fails", _err_cell(c), c.get("error_lineno")]
            pairs.append(([str(vals[0]), vals[1], vals[2], fmt.fmt_value(vals[3], "int")], vals))
        columns = ("code", "outcome", Column("error", "prose", "error"), "line")
    return TableView(title=f"{title(rec.variant)} ({sizes_note(rec.params)}): sub-cases",
                     caption=f"{sizes_note(rec.params)} (the input_dim "
                     "column: what each sub-case used); vars: distinct trainable variables; "
                     f"{source_note([rec])}", columns=columns, rows=tuple(s for s, _ in pairs),
                     raw=tuple(v for _, v in pairs), provenance=provenance([rec]))


def variations(rec: Record) -> list[dict]:
    """The extra programs a shape pitfall tried beside its wrong code: code, outcome and the verbatim error."""
    out = []
    for c in list((rec.details or {}).get("cases") or [])[1:]:
        if "code" in c:
            out.append({"case": c.get("case"), "code": c["code"], "builds": bool(c.get("builds")),
                        "result": c.get("result") or "", "error_type": c.get("error_type"), "error": c.get("error"),
                        "error_line": c.get("error_line"), "error_lineno": c.get("error_lineno")})
    return out


def code_table(variant: str) -> TableView:
    """The pitfall's wrong and right code side by side (one row), set as code on a slide."""
    spec = PITFALLS[variant]
    return TableView(title=f"{title(variant)}: the code", caption=spec.get("given", ""),
                     columns=(Column("wrong", "code"), Column("right", "code")),
                     rows=((spec["wrong_code"].strip("\n"), spec["right_code"].strip("\n")),),
                     raw=((spec["wrong_code"], spec["right_code"]),))


def sharing_matrix(records: Iterable[Record], variants: Sequence[str] = SHARING_TF1) -> TableView | None:
    """One row per cell x input_dim sub-case x construct, from every stored sharing record given (one per cell and
    variant; the caller picks them at one set of sizes)."""
    recs = [r for r in records if r.variant in variants and r.ok and (r.details or {}).get("cases")]
    if not recs:
        return None
    pairs = []
    for r in recs:
        for c in r.details["cases"]:
            pairs.append((r, c, _sharing_case_row(r, c, with_cell=True)))
    corder = {c: i for i, c in enumerate(CELLS)}
    vorder = {v: i for i, v in enumerate(variants)}
    pairs.sort(key=lambda t: (corder.get(t[0].params.get("cell"), 9), 0 if t[1].get("case") == "input_dim == units"
                              else 1, vorder.get(t[0].variant, 9)))
    cells = sorted({r.params.get("cell") for r in recs}, key=lambda c: corder.get(c, 9))
    missing = [c for c in CELLS if c not in cells]
    p = recs[0].params
    caption = (f"units={p.get('units')}, batch={p.get('batch')}, seq_len={p.get('seq_len')}; vars: distinct trainable "
               "variables; one kernel: every layer calls the same kernel object; max |diff|: outputs vs the right "
               "code on the same inputs; "
               + (f"cells measured: {', '.join(cells)}; " if missing else "") + source_note(recs))
    constructs = " / ".join(CONSTRUCT.get(v, v) for v in variants)
    return TableView(title=f"Sharing one cell object ({constructs}): every cell, both input widths; "
                           f"units={p.get('units')}, batch={p.get('batch')}, seq_len={p.get('seq_len')}",
                     caption=caption, columns=("cell", "construct") + _SHARING_COLUMNS,
                     rows=tuple(s for _, _, (s, _) in pairs), raw=tuple(v for _, _, (_, v) in pairs),
                     provenance=provenance(recs))


# ----------------------------------------------------------------------------------------------- all pitfalls

def summary(shown: Mapping[str, Record], params: Mapping[str, Any]) -> TableView:
    """One row per pitfall: what its wrong code did and whether the fix passed ("not run yet" without a record);
    the caption says where it ran (``select.source_note``)."""
    rows, raw = [], []
    for v in PITFALLS:
        r = shown.get(v)
        if r is None:
            rows.append((title(v), fmt.NOT_RUN, fmt.MISSING, "", ""))
            raw.append((v, None, None, None, None))
            continue
        o = outcome(r)
        if not o.ran:
            what = "worker failed"
        elif o.builds:
            what = "runs (silently)"
        else:
            what = f"fails {_STAGE.get((r.details or {}).get('stage') or '', '')}".rstrip()
        err = f"{o.error_type}: {error_summary(o.error)}" if o.error_type else (r.error or "")
        line = fmt.fmt_value(o.error_lineno, "int") if o.error_lineno else ""
        check = fmt.MISSING if o.check_passed is None else "pass" if o.check_passed else "FAIL"
        rows.append((title(v), what, check, line, err))
        raw.append((v, o.builds, o.check_passed, o.error_lineno, err))
    recs = [r for r in shown.values() if r is not None]
    return TableView(title=f"Pitfalls: {sizes_note(params)}",
                     caption=(f"{sizes_note(params)}; " + (source_note(recs) if recs else "nothing stored yet")),
                     columns=(Column("pitfall", "prose", "name"), Column("wrong code", "text"), _CHECK_WORDS, "line",
                              _ERROR_LINE),
                     rows=tuple(rows), raw=tuple(raw), provenance=provenance(recs))


# ----------------------------------------------------------------------------------------------- choosing records

def fingerprint(env: Mapping[str, Any] | None) -> dict | None:
    """This environment's fingerprint from ``api.known_env`` (None: unknown, any record of this store counts)."""
    return envinfo.fingerprint(dict(env)) if env else None


def choose(records: Sequence[Record], params: Mapping[str, Any], env: Mapping[str, Any] | None = None
           ) -> select.Selection:
    """Per pitfall, the record that stands for exactly these params, and which ones a run would still measure."""
    return select.pick(records, params, VARIANTS, fingerprint=fingerprint(env), experiment=EXP)


def family_records(records: Sequence[Record], params: Mapping[str, Any], variants: Sequence[str],
                   env: Mapping[str, Any] | None = None) -> tuple[list[Record], int]:
    """The sharing family ``variants`` for every cell at these sizes: the records that stand (one per cell and
    variant, for :func:`sharing_matrix`) and how many a run would still measure."""
    shown: list[Record] = []
    missing = 0
    for c in CELLS:
        s = select.pick(records, {**params, "cell": c}, variants, fingerprint=fingerprint(env), experiment=EXP)
        shown += list(s.shown.values())
        missing += len(s.missing)
    return shown, missing


def stored_elsewhere(records: Sequence[Record], variant: str) -> list[str]:
    """The other settings ``variant`` is stored for ("lstm, units 16, input_dim 8")."""
    return sorted({f"{r.params.get('cell')}, units {r.params.get('units')}, input_dim {r.params.get('input_dim')}"
                   for r in records if r.experiment == EXP and r.variant == variant})


def happened_heading(rec: Record | None) -> str:
    """"What happened here" for this machine's record (or none yet), else whose machine it happened on."""
    if rec is None or select.is_here([rec]):
        return "What happened here"
    return f"What happened ({select.origin(rec)})"


# ----------------------------------------------------------------------------------------------- export

def _config_order(params: Mapping[str, Any]) -> tuple:
    cell = {c: i for i, c in enumerate(CELLS)}
    return tuple(int(params.get(k) or 0) for k in SIZES) + (cell.get(params.get("cell"), 9),
                                                            canonical_json(dict(params)))


def tables(records: Sequence[Record], env: Mapping[str, Any] | None = None) -> list[TableView]:
    """Every table the page shows, for every configuration stored: per configuration the summary of all pitfalls and
    each stored pitfall's measured facts and sub-cases; per set of sizes, the sharing matrix of each family."""
    recs = [r for r in records if r.experiment == EXP]
    configs: dict[str, dict] = {}
    for r in recs:
        configs.setdefault(select.config_key(r), dict(r.params))
    out: list[TableView] = []
    sizes_done: set[str] = set()
    for params in sorted(configs.values(), key=_config_order):
        sel = choose(recs, params, env)
        out.append(summary(sel.shown, params))
        for v in VARIANTS:
            rec = sel.shown.get(v)
            if rec is not None:
                out += [t for t in (facts(rec), cases(rec)) if t is not None]
        sizes = select.config_key(params, ignore=("cell",))
        if sizes in sizes_done:
            continue
        sizes_done.add(sizes)
        for fam in (SHARING_TF1, SHARING_KERAS):
            matrix = sharing_matrix(family_records(recs, params, fam, env)[0], fam)
            if matrix is not None:
                out.append(matrix)
    return out


def report(records: Sequence[Record]) -> Report:
    """The page's tables as a Report: ``python -m rnnlab export --experiment pitfalls``."""
    from rnnlab.present.report import checks_report

    return checks_report(records, EXP, "rnnlab: multi-layer and shape pitfalls, run live", tables)


def view(records: Sequence[Record], query: Mapping[str, Any], env: Mapping[str, Any] | None = None) -> Report:
    """What the page shows for its URL settings (``cell``, ``preset``, ``variants``: the chosen pitfall) as a Report:
    the pitfall's measured facts and sub-cases, its family's matrix, the summary of every pitfall at these sizes; its
    outcome as the takeaways. ``python -m rnnlab export --view pitfalls?...``; bad settings raise ``RnnlabError``."""
    from rnnlab.core import urlstate
    from rnnlab.present.deck import known, refused
    from rnnlab.present.report import page_report

    known(query, ("cell", "preset", "variants"), "pitfalls")
    d = urlstate.decode(query, experiment=EXPERIMENT, names=["cell"], defaults={"cell": "rnn"},
                        default_variants=VARIANTS[:1], extra_keys=["preset"], allowed_variants=VARIANTS)
    preset = d.extra.get("preset", "quick")
    if d.problems or preset not in PRESETS:
        raise refused("pitfalls", d.problems[0] if d.problems else
                      f"preset={preset!r} is not one of {', '.join(PRESETS)}")
    pitfall, params = d.variants[0], preset_params(preset, d.values["cell"])
    recs = [r for r in records if r.experiment == EXP]
    sel = choose(recs, params, env)
    rec = sel.shown.get(pitfall)
    said, out = [], [code_table(pitfall)]
    if rec is not None:
        o = outcome(rec)
        said.append(f"{title(pitfall)}: {o.headline}")
        if o.check_passed is not None:
            said.append(f"Check of the right code: {'passed' if o.check_passed else 'failed'}: {o.check}.")
        out += [t for t in (facts(rec), cases(rec)) if t is not None]
    fam = family(pitfall)
    matrix = sharing_matrix(family_records(recs, params, fam, env)[0], fam) if fam else None
    out += [matrix] if matrix is not None else []
    out.append(summary(sel.shown, params))
    if not sel.shown:
        raise RnnlabError(f"nothing stored for pitfalls at {sizes_note(params)}; measure it with "
                          f"{cli_command(preset, d.values['cell'], VARIANTS)}")
    shown = list(sel.shown.values())
    rep = page_report(f"rnnlab: {title(pitfall)}", f"{sizes_note(params)}; {source_note(shown)}", shown, out)
    return Report(rep.title, rep.subtitle, rep.tables, rep.charts, rep.provenance, takeaways=tuple(said))
