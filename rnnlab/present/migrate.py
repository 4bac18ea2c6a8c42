"""The migrate page's content as data (no Streamlit, no TensorFlow).

- the TF1 -> Keras 3 mapping (``mapping.ROWS``) with what the stored ``migrate`` records say about each row;
- the differences a check or the converter measured, against the one tolerance (``rnnlab.core.rules.ATOL``);
- seed 004's construct as the ``seed004_construct`` worker saw it;
- an uploaded TF1 checkpoint: the file names checked before anything runs (``api.convert.check_upload``), the command that
  converts it in another process (``convert_argv``) and its answer read back (``parse_convert_output``):
  ``rnnlab.engine.convert``'s, named here for the page;
- the cuDNN question on the user's settings (:func:`cudnn_question`, Keras 3's rules from ``rnnlab.tf.cudnn``) and
  the unrolling page's configuration that measures the cost of seed 004's construct against the layer that replaces
  it (:func:`cost_query`, :func:`cost_table`);
- :func:`report`: the page's tables for every configuration stored (``python -m rnnlab export --experiment migrate``).

Seed 004's sections and the cuDNN question are ``migrate_seed004``'s, the presets and plans ``migrate_common``'s;
this module holds the mapping and its live checks and names the rest.

Which record stands for a check is ``rnnlab.judge.select``'s choice, where it ran is ``select``'s wording ("here" only
for this machine's records), and commands come from ``Plan.command()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from rnnlab.core import format as fmt
from rnnlab.core.record import Record, canonical_json
from rnnlab.core.rules import ATOL
from rnnlab.core.views import Column, Report, TableView
from rnnlab.judge import select
from rnnlab.judge.select import provenance
from rnnlab.present.migrate_common import (CELLS, CHECK_VARIANTS, EXP, PRESETS, ROWS, SIZES, SUMMARY,  # noqa: F401
                                           _short_params, cli_command, fingerprint, plan, plans, preset_params,
                                           seen_on, where)
from rnnlab.present.migrate_seed004 import (CPU_PATH, CUDNN_DEFAULTS, CUDNN_OPTIONS, LAYERS, SEED004_CONFIG,  # noqa: F401
                                            RULE_SOURCES, SCENARIOS, cost_intro, cost_point, cost_query,
                                            cost_table, cudnn_question, gpu_here, keras_code, keras_version,
                                            seed004_findings, seed004_heading, seed004_table)
from rnnlab.tf import mapping
from rnnlab.present.pages import Page

PAGE = Page("migrate", "Migrate TF1 to Keras", ":material/swap_horiz:", order=4, about="TF1 to Keras 3 mapping")

# ----------------------------------------------------------------------------------------------- live checks

@dataclass(frozen=True)
class Live:
    record: Record | None
    exact: bool  # at the page's configuration (else: the best record of another configuration)


def live(records: Sequence[Record], params: Mapping[str, Any], variants: Sequence[str], *,
         fingerprint: Mapping[str, Any] | None = None) -> dict[str, Live]:
    """Per variant, the record at this configuration, else the best one at any configuration (a check that passed
    at other sizes on this install still says the mapping holds here)."""
    sel = select.pick(records, params, variants, fingerprint=fingerprint, experiment=EXP)
    out = {}
    for v in variants:
        if v in sel.shown:
            out[v] = Live(sel.shown[v], True)
        else:
            out[v] = Live(select.best([r for r in records if r.experiment == EXP and r.variant == v], fingerprint),
                          False)
    return out


def verdict(rec: Record | None, *, exact: bool = True) -> str:
    """"pass (1.2e-07)" (the max abs diff) / "FAIL (...)" / "worker failed: ..." / "not run yet"."""
    if rec is None:
        return fmt.NOT_RUN
    if not rec.ok:
        return f"worker failed: {rec.error}"
    m = rec.metrics
    passed = bool(m.get("passed"))
    text = f"{'pass' if passed else 'FAIL'} ({fmt.fmt_value(m.get('max_abs_diff'), 'sci')})"
    if not exact:
        text += f" (at {_short_params(rec.params)})"
    return text


def mapping_table(checks: Mapping[str, Live], params: Mapping[str, Any] | None = None) -> TableView:
    """The mapping, one row per TF1 construct; "checked live" from the stored check records (``params``: the
    configuration they were chosen for, in the title)."""
    rows, raw, recs = [], [], []
    for r in mapping.ROWS:
        lv = checks.get(r.variant) if r.variant else None
        rec = lv.record if lv else None
        if rec is not None:
            recs.append(rec)
        live_text = verdict(rec, exact=lv.exact if lv else True) if r.check else "no live check"
        traps = "\n".join(f"• {t}" for t in r.traps)
        none = "\n".join(f"• {t}" for t in r.no_equivalent) or fmt.MISSING
        rows.append((r.tf1, r.keras3_code, traps, none, live_text))
        raw.append((r.tf1, r.keras3_code, list(r.traps), list(r.no_equivalent),
                    None if rec is None or not rec.ok else bool(rec.metrics.get("passed"))))
    return TableView(title="TF1 RNN constructs -> Keras 3" + (f" ({_short_params(params)})" if params else ""),
                     caption=("checked live: the TF1 construct and its Keras 3 replacement run on identical weights "
                              f"and inputs, max abs difference of outputs and final states against {ATOL:g}; "
                              + (seen_on(recs) if recs else "no check stored yet")),
                     # "checked live" says pass/FAIL and where in words, whatever the bool behind it
                     columns=(Column("TF1 construct", "prose", "name"), Column("Keras 3 code", "code"),
                              Column("traps", "prose"), Column("no Keras 3 equivalent", "prose"),
                              Column("checked live", "text")),
                     rows=tuple(rows), raw=tuple(raw), provenance=provenance(recs))


_CASES = {"full": "max |diff|, full lengths", "sequence_length": "max |diff|, with sequence_length",
          "": "max |diff|"}


def diffs_table(diffs: Mapping[str, float], *, atol: float = ATOL, title: str = "differences",
                caption: str = "") -> TableView:
    """``{"full/outputs": d, "sequence_length/cell_0/h": d}`` (or ``{"outputs": d}``) -> one row per tensor, one
    column per case, and whether all of the row is within ``atol``."""
    cells: dict[str, dict[str, float]] = {}
    cases: list[str] = []
    for key, d in diffs.items():
        head, _, rest = key.partition("/")
        case, tensor = (head, rest) if head in ("full", "sequence_length") and rest else ("", key)
        if case not in cases:
            cases.append(case)
        cells.setdefault(tensor, {})[case] = d
    rows, raw = [], []
    for tensor, by_case in cells.items():
        vals = [by_case.get(c) for c in cases]
        ok = all(v is not None and v <= atol for v in vals)
        rows.append((tensor, *[fmt.fmt_value(v, "sci") for v in vals], "pass" if ok else "FAIL"))
        raw.append((tensor, *vals, ok))
    return TableView(title=title, caption=caption,
                     columns=("tensor", *[_CASES[c] for c in cases], Column(f"within {atol:g}", "text")),
                     rows=tuple(rows),
                     raw=tuple(raw))


def ran_note(rec: Record) -> str:
    """What a check or the demo ran: the stack it detected (the cell checks use their own cell, whatever ``cell``
    says), the batch and steps."""
    d = rec.details or {}
    p = rec.params
    sizes = f"batch {p.get('batch')}, {p.get('seq_len')} steps"
    if d.get("lengths") is not None:
        sizes += f", sequence_length {d['lengths']}"
    if d.get("spec"):
        return f"{describe_spec(d['spec'])}; {sizes}"
    return f"{_short_params(p)}; {sizes}"


def check_table(rec: Record) -> TableView:
    """A check's differences, TF1 construct vs its Keras 3 replacement (one row per tensor)."""
    row = ROWS.get(rec.variant)
    name = row.key if row is not None else rec.variant
    return diffs_table(rec.details.get("diffs") or {}, title=f"{name}: TF1 vs Keras 3 ({_short_params(rec.params)})",
                       caption=f"Ran {ran_note(rec)}; {seen_on([rec])}")


def demo_table(rec: Record) -> TableView:
    """The converter demo's differences: the TF1 graph vs the .keras file it wrote."""
    return diffs_table(rec.details.get("diffs") or {}, title=f"converter demo ({_short_params(rec.params)})",
                       caption=f"Ran {ran_note(rec)}; {seen_on([rec])}")


def check_headline(rec: Record, *, exact: bool = True) -> str:
    """"Checked live here: passed; max abs diff ... 1.2e-07, tolerance 1e-05" (whose machine, when not this one)."""
    passed = bool(rec.metrics.get("passed"))
    return (f"Checked live {where([rec])}: {'passed' if passed else 'FAILED'}; max abs diff of outputs and final "
            f"states {rec.metrics.get('max_abs_diff', float('nan')):.1e}, tolerance {ATOL:g}"
            + ("" if exact else f" (measured at {_short_params(rec.params)}, not at the sizes chosen)"))


def demo_headline(rec: Record) -> str:
    m = rec.metrics
    return (f"{'Pass' if m.get('passed') else 'FAIL'}: max abs diff {m.get('max_abs_diff', float('nan')):.1e} "
            f"(outputs {m.get('max_abs_diff_outputs', float('nan')):.1e}, final states "
            f"{m.get('max_abs_diff_states', float('nan')):.1e}) against {ATOL:g}")


def extra_facts(rec: Record) -> list[tuple[str, str]]:
    """The numbers and notes a check stored beside its diffs (traps it demonstrated), as (label, text)."""
    skip = {"diffs", "atol", "spec", "tf1", "keras3_code", "no_equivalent", "not_checked", "lengths", "refused"}
    out = []
    for k, v in (rec.details or {}).items():
        if k in skip:
            continue
        if isinstance(v, bool):
            out.append((k, fmt.fmt_value(v)))
        elif isinstance(v, (int, float)):
            out.append((k, fmt.fmt_value(v, "sci")))
        elif isinstance(v, str):
            out.append((k, v))
    for k, v in ((rec.details or {}).get("refused") or {}).items():
        out.append((f"refused: {k}", str(v)))
    return out


def describe_spec(spec: Mapping[str, Any]) -> str:
    """"2 x BasicLSTMCell (lstm) in scope 'rnn', units 8, input features 4"."""
    cells = spec.get("cells") or []
    classes = sorted({c.get("tf1_class") for c in cells if c.get("tf1_class")})
    units = sorted({c.get("units") for c in cells if c.get("units") is not None})
    return (f"{spec.get('layers')} x {'/'.join(classes)} ({spec.get('cell')}) in scope "
            f"'{spec.get('scope') or ''}', units {'/'.join(map(str, units))}, input features {spec.get('input_dim')}")



def convert_diffs(res: Mapping[str, Any]) -> TableView:
    """The converter's verification (TF1 graph vs the written .keras file), one row per case and tensor."""
    v = res["verification"]
    diffs = {f"{case}/{k}": d for case, c in v["cases"].items() for k, d in c["diffs"].items()}
    lengths = (v["cases"].get("sequence_length") or {}).get("lengths")
    cap = (f"TF1 dynamic_rnn with the checkpoint's weights vs the written .keras file, batch {v.get('batch')}, "
           f"{v.get('seq_len')} steps of random inputs" + (f"; sequence_length = {lengths}" if lengths else ""))
    return diffs_table(diffs, atol=float(v.get("atol", ATOL)), title="Verification of the converted file",
                       caption=cap)


# ----------------------------------------------------------------------------------------------- page helpers

def selection(records: Sequence[Record], params: Mapping[str, Any], env: Mapping[str, Any] | None = None
              ) -> tuple[dict[str, Live], select.Selection, Record | None]:
    """What the page shows at ``params``: the live check per mapping row (:func:`live`), the selection of every
    migrate variant (what stands, what a run would still measure) and seed 004's record (at these params, else the
    best one stored)."""
    fp = fingerprint(env)
    checks = live(records, params, CHECK_VARIANTS, fingerprint=fp)
    sel = select.pick(records, params, ["convert_verify", "seed004_construct", *CHECK_VARIANTS], fingerprint=fp,
                      experiment=EXP)
    s004 = live(records, params, ["seed004_construct"], fingerprint=fp)["seed004_construct"].record
    return checks, sel, s004



# ----------------------------------------------------------------------------------------------- export

def _config_order(params: Mapping[str, Any]) -> tuple:
    cell = {c: i for i, c in enumerate(CELLS)}
    return (cell.get(params.get("cell"), 9), int(params.get("layers") or 0),
            tuple(str(params.get(k)) for k in SIZES), canonical_json(dict(params)))


def tables(records: Sequence[Record], env: Mapping[str, Any] | None = None) -> list[TableView]:
    """Every table the page shows from migrate records, for every configuration stored: the mapping with its live
    checks, each check's differences, the converter demo's, and seed 004's construct."""
    recs = [r for r in records if r.experiment == EXP]
    configs: dict[str, dict] = {}
    for r in recs:
        configs.setdefault(select.config_key(r), dict(r.params))
    out: list[TableView] = []
    for params in sorted(configs.values(), key=_config_order):
        checks, sel, _ = selection(recs, params, env)
        out.append(mapping_table(checks, params))
        for v in CHECK_VARIANTS:
            rec = sel.shown.get(v)
            if rec is not None and rec.ok:
                out.append(check_table(rec))
        for v, make in (("convert_verify", demo_table), ("seed004_construct", seed004_table)):
            rec = sel.shown.get(v)
            if rec is not None and rec.ok:
                out.append(make(rec))
    return out


def report(records: Sequence[Record]) -> Report:
    """The page's tables as a Report: ``python -m rnnlab export --experiment migrate``."""
    from rnnlab.present.report import checks_report

    return checks_report(records, EXP, "rnnlab: migrating TF1 RNN cells to Keras 3", tables)


def view(records: Sequence[Record], query: Mapping[str, Any], env: Mapping[str, Any] | None = None) -> Report:
    """What the page shows for its URL settings (``preset``, ``cell``, ``layers``; the chosen row and the cuDNN
    questions do not change the mapping) as a Report: the mapping with its live checks, the checks' headlines as
    takeaways. ``python -m rnnlab export --view migrate?...``; bad settings raise ``RnnlabError``."""
    from rnnlab.core import urlstate
    from rnnlab import experiments
    from rnnlab.present.deck import known, refused

    known(query, ("cell", "layers", "preset", "variants", *CUDNN_OPTIONS), "migrate")
    d = urlstate.decode(query, experiment=experiments.get(EXP), names=["cell", "layers"], defaults={"cell": "lstm", "layers": 2},
                        default_variants=list(ROWS)[:1], extra_keys=["preset", *CUDNN_OPTIONS],
                        allowed_variants=list(ROWS))
    bad = [f"{k}={v!r} is not one of {', '.join(opts)}"
           for k, opts in {"preset": PRESETS, **CUDNN_OPTIONS}.items() if (v := d.extra.get(k, opts[0])) not in opts]
    if d.problems or bad:
        raise refused("migrate", d.problems[0] if d.problems else bad[0])
    params = preset_params(d.extra.get("preset", "quick"), d.values["cell"], d.values["layers"])
    recs = [r for r in records if r.experiment == EXP]
    checks, sel, s004 = selection(recs, params, env)
    return mapping_report(checks, params, sel.shown.get("convert_verify"), s004)


def mapping_report(checks: Mapping[str, Live], params: Mapping[str, Any], demo: Record | None = None,
                   s004: Record | None = None) -> Report:
    """The mapping with its live checks, then the converter's result (``demo``) and seed 004's construct
    (``s004``) when stored; the page's answer and each check's headline are the takeaways: the page's download
    and :func:`view`."""
    from rnnlab.present.report import page_report

    table = mapping_table(checks, params)
    used = [lv.record for lv in checks.values() if lv.record is not None]
    said = answer_lines(checks, demo, s004)
    said += [f"{r.tf1.split('(')[0]}: {check_headline(checks[r.variant].record, exact=checks[r.variant].exact)}."
             for r in mapping.ROWS if r.variant in checks and checks[r.variant].record is not None
             and checks[r.variant].record.ok]
    tables = [table]
    for rec, make in ((demo, demo_table), (s004, seed004_table)):
        if rec is not None and rec.ok:
            tables.append(make(rec))
            used.append(rec)
    rep = page_report("rnnlab: TF1 to Keras 3 mapping", table.caption, used, tables)
    return Report(rep.title, rep.subtitle, rep.tables, rep.charts, rep.provenance, takeaways=tuple(said))


def answer(checks: Mapping[str, Any], demo: Record | None, s004: Record | None) -> str:
    """The page's answer first, in two or three sentences from the records: how many TF1 constructs matched their
    Keras 3 replacement live (and on whose machine), whether the converter round trip passed, and what seed 004's
    construct does; "" when nothing is stored."""
    return " ".join(answer_lines(checks, demo, s004))


def answer_lines(checks: Mapping[str, Any], demo: Record | None, s004: Record | None) -> list[str]:
    """:func:`answer`'s sentences, one a line (a talk deck's takeaways)."""
    recs = [lv.record for lv in checks.values() if lv.record is not None and lv.record.ok]
    said = []
    if recs:
        n_pass = sum(bool(r.metrics.get("passed")) for r in recs)
        left = len(checks) - len(recs)
        said.append(f"Checked live {where(recs)}: **{n_pass} of {len(recs)}** TF1 constructs give the same outputs "
                    f"and final states as their Keras 3 replacement (within {ATOL:g})"
                    + (f"; the other {left} are not stored at these sizes." if left else "."))
    if demo is not None and demo.ok:
        ok = bool(demo.metrics.get("passed"))
        said.append(f"A TF1 checkpoint converted to a .keras file {'matches' if ok else 'does NOT match'} its TF1 "
                    f"graph (max abs diff {demo.metrics.get('max_abs_diff', float('nan')):.1e}).")
    if s004 is not None and s004.ok and (s004.details or {}).get("correction"):
        sentences = s004.details["correction"].split(". ")  # "Seed 004 wraps ...", "It is not: ...", ...
        why = sentences[1] if len(sentences) > 1 else sentences[0]
        said.append(f"Seed 004's \"cuDNN-based\" construct is not what it says: "
                    f"{why.removeprefix('It is not: ').rstrip('.')}.")
    return said
