"""Pure functions from records to tables: what the app shows, what the CLI prints, what the exports save.

Every number is formatted by ``rnnlab.core.format``; the raw values travel alongside for CSV/JSON. Which records
belong together is ``rnnlab.judge.select``'s call (``select.groups``); a ratio is only ever taken between two records
of one machine (``select.machine_key``).
"""

from __future__ import annotations

from typing import Iterable, Sequence

from rnnlab.core import format as fmt
from rnnlab.core.record import Record
from rnnlab.experiments import variant_label
from rnnlab.core.views import TableView
from rnnlab.judge import select
from rnnlab.judge.select import provenance, source_note

# The comparison table's metric columns, in order
UNROLL_METRICS = ("fwd_ms", "train_ms", "build_s", "first_call_s", "graph_nodes", "peak_mem_mb", "max_abs_diff",
                  "gflops", "roofline_frac")
# Ratios against the reference: (metric, column label). >1 means the variant takes more than the reference.
RATIO_METRICS = (("fwd_ms", "forward vs ref"), ("train_ms", "train vs ref"), ("build_s", "build vs ref"),
                 ("peak_mem_mb", "memory vs ref"))


def ratio(rec: Record, ref: Record | None, metric: str) -> float | None:
    """``rec``'s metric over ``ref``'s; None when either is missing or failed, or they come from two machines."""
    if ref is None or not rec.ok or not ref.ok or select.machine_key(rec) != select.machine_key(ref):
        return None
    a, b = rec.metrics.get(metric), ref.metrics.get(metric)
    if a is None or b is None or b == 0:
        return None
    return a / b


def _metric_order(recs: Sequence[Record]) -> list[str]:
    """The unroll metrics first (in their order), then any other metric the records hold; quartiles stay in the
    charts."""
    seen: dict[str, None] = {}
    for r in recs:
        for m in r.metrics:
            if not m.endswith(("_p25", "_p75")):
                seen.setdefault(m, None)
    return [m for m in UNROLL_METRICS if m in seen] + [m for m in seen if m not in UNROLL_METRICS]


def comparison(records: Sequence[Record], *, reference: str = "tf1_dynamic",
               metrics: Sequence[str] | None = None, title: str | None = None) -> TableView:
    """One row per variant of one configuration; every metric in human units; ratios to ``reference``.

    A row's ratios are against the reference measured on the row's own machine (``select.machine_key``), never
    another's: a row whose machine has no reference record gets "–". When the records come from more than one
    machine a "measured on" column says whose each row is. Failed variants keep their row, with the reason in the
    "error" column.
    """
    recs = list(records)
    refs: dict[str, Record] = {}
    for r in recs:
        if r.variant == reference and r.ok:
            refs.setdefault(select.machine_key(r), r)
    metrics = _metric_order(recs) if metrics is None else metrics
    present = [m for m in metrics if any(m in r.metrics for r in recs)]
    ratios = [(m, lab) for m, lab in RATIO_METRICS if m in present] if refs else []
    machines = {select.machine_key(r) for r in recs}
    mixed = len(machines) > 1
    labels = select.machine_labels(recs)
    columns = ["variant", "what runs"] + (["measured on"] if mixed else []) + [fmt.label(m) for m in present] + \
              [lab.replace("ref", reference) for _, lab in ratios] + ["error"]
    rows, raw = [], []
    for r in recs:
        vals = [r.metrics.get(m) for m in present]
        ref = refs.get(select.machine_key(r))
        rats = [ratio(r, ref, m) for m, _ in ratios]
        names = [r.variant, variant_label(r.experiment, r.variant)] + ([labels[select.machine_key(r)]] if mixed else [])
        rows.append(names + [fmt.fmt_metric(m, v) for m, v in zip(present, vals)]
                    + [fmt.fmt_ratio(x) for x in rats] + [r.error or ""])
        raw.append(names + vals + rats + [r.error])
    p = recs[0].params if recs else {}
    if not ratios:
        ratio_note = ""
    elif mixed:
        ratio_note = f"ratios against {reference} measured on the same machine (– where that machine has none)"
    else:
        ratio_note = f"ratios against {reference}"
    return TableView(
        title=title or f"{recs[0].experiment if recs else ''}: {fmt.fmt_params(p)}",
        caption="; ".join(x for x in (
            fmt.fmt_params(p),
            f"median of {p['repeats']} steps after {p.get('warmup', 0)} warm-up" if "repeats" in p else "",
            ratio_note, source_note(recs)) if x),
        columns=tuple(columns), rows=tuple(map(tuple, rows)), raw=tuple(map(tuple, raw)),
        provenance=provenance(recs))


def generic(records: Sequence[Record], *, title: str, metrics: Sequence[str] | None = None,
            key_params: Sequence[str] = ()) -> TableView:
    """Any experiment's records: variant, chosen params, every metric present (or the given ones), error."""
    recs = list(records)
    if metrics is None:
        seen: dict[str, None] = {}
        for r in recs:
            for m in r.metrics:
                seen.setdefault(m, None)
        metrics = list(seen)
    columns = ["variant"] + list(key_params) + [fmt.label(m) for m in metrics] + ["error"]
    rows, raw = [], []
    for r in recs:
        vals = [r.metrics.get(m) for m in metrics]
        kp = [r.params.get(k) for k in key_params]
        rows.append([r.variant] + [fmt.fmt_value(v) for v in kp] + [fmt.fmt_metric(m, v) for m, v in
                                                                     zip(metrics, vals)] + [r.error or ""])
        raw.append([r.variant] + kp + vals + [r.error])
    return TableView(title=title, caption=source_note(recs), columns=tuple(columns), rows=tuple(map(tuple, rows)),
                     raw=tuple(map(tuple, raw)), provenance=provenance(recs))


def results_rows(records: Iterable[Record]) -> list[dict]:
    """The results browser: one flat row per record (what the filterable table shows)."""
    out = []
    for r in records:
        out.append({
            "experiment": r.experiment, "variant": r.variant, "config": fmt.fmt_params(dict(r.params)),
            "device": r.env.get("device"), "machine": r.machine, "created_at": r.created_at, "source": r.source,
            "status": "failed: " + r.error if r.error else "ok",
            "fwd_ms": r.metrics.get("fwd_ms"), "train_ms": r.metrics.get("train_ms"), "key": r.key,
        })
    return out


def text_table(view: TableView, *, max_width: int = 40) -> str:
    """A plain aligned table for the terminal."""
    cols = list(view.columns)
    rows = [[c if len(c) <= max_width else c[: max_width - 1] + "…" for c in row] for row in view.rows]
    widths = [max([len(cols[i])] + [len(r[i]) for r in rows]) for i in range(len(cols))]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    out = [view.title, line(cols), line(["-" * w for w in widths])] + [line(r) for r in rows]
    if view.caption:
        out.append(view.caption)
    return "\n".join(out)
