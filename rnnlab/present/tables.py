"""Pure functions from records to tables: what the app shows, what the CLI prints, what the exports save.

Every number is formatted by ``rnnlab.core.format``; the raw values travel alongside for CSV/JSON. Which records
belong together is ``rnnlab.judge.select``'s call (``select.groups``); a ratio is only ever taken between two records
of one machine (``select.machine_key``).

How far a figure can be trusted shows in the cells, with the rules of ``rnnlab.core.rules`` and the statistics of
``rnnlab.core.stats``:

- every ratio carries its interval (``stats.ratio_interval``: across rounds, else the timed steps' quartiles):
  "0.63x (0.60–0.66)"; the raw values keep the ratio in its column and add ``"<column> (low)"`` / ``"(high)"``
  columns (``Column.bounds``, role "bound") for CSV/JSON, which a screen or a terminal leaves out
  (:func:`without_bounds`);
- a figure whose rounds disagree by more than ``rules.NOISE`` is flagged as torch.utils.benchmark's Compare does:
  "13.7 (! 23%)" (the spread across rounds, ``stats.spread``);
- a record whose figures cannot be true (``rules.impossible``) is flagged in a "check" column, shown only when a
  row has a flag;
- a record measured while the machine was busy (``rules.busy`` of ``details.loadavg``) says so in the caption
  (``select.source_note``, which every caption, chart and verdict carries).
"""

from __future__ import annotations

from typing import Iterable, Sequence

from rnnlab.core import format as fmt
from rnnlab.core import condition, rules, stats
from rnnlab.core.record import Record
from rnnlab.core.stats import Interval
from rnnlab.experiments import variant_label
from rnnlab.core.views import Column, TableView, without_bounds  # noqa: F401 (without_bounds: callers' name)
from rnnlab.judge import findings, select
from rnnlab.judge.select import provenance, source_note

# The comparison table's metric columns, in order
UNROLL_METRICS = ("fwd_ms", "train_ms", "build_s", "first_call_s", "graph_nodes", "peak_mem_mb", "max_abs_diff",
                  "gflops", "roofline_frac")
# Ratios against the reference: (metric, column label). >1 means the variant takes more than the reference.
RATIO_METRICS = (("fwd_ms", "forward vs ref"), ("train_ms", "train vs ref"), ("build_s", "build vs ref"),
                 ("peak_mem_mb", "memory vs ref"))


CHECK = "check"  # the column of rules.impossible's sentences
# The columns every records table shares: the row's name, what it runs, whose machine, the checks, the error
VARIANT = Column("variant", "text", "name")
WHAT_RUNS = Column("what runs", "prose")
MACHINE = Column("measured on", "text", "machine")
CHECK_COLUMN = Column(CHECK, "prose", "check")
ERROR = Column("error", "prose", "error")


def metric_column(metric: str) -> Column:
    """A metric's column: its label with its unit (``format.label``), a number, keyed by the metric."""
    return Column(fmt.label(metric), "number", "metric", key=metric, unit=fmt.unit(metric))


def ratio_column(metric: str, label: str, reference: str) -> Column:
    """A ratio's column: ``label`` ("forward vs ref", its key) against ``reference``, of ``metric``."""
    return Column(label.replace(" vs ref", f" vs {reference}"), "ratio", "ratio", key=label, unit="x", of=metric,
                  against=reference)


def interval(rec: Record, ref: Record | None, metric: str) -> Interval | None:
    """``rec``'s metric over ``ref``'s with its interval (``findings.interval``: ``stats.ratio_interval`` over the
    rounds); None when either is missing or failed, or they come from two machines. The reference against itself
    is 1, with no spread."""
    if ref is None or not rec.ok or not ref.ok or select.machine_key(rec) != select.machine_key(ref):
        return None
    if rec is ref:
        return Interval(1.0, 1.0, 1.0, "none", 1) if (rec.metrics.get(metric) or 0) > 0 else None
    return findings.interval(rec, ref, metric)


def ratio(rec: Record, ref: Record | None, metric: str) -> float | None:
    """``rec``'s metric over ``ref``'s (the middle of :func:`interval`); None when either is missing or failed, or
    they come from two machines."""
    iv = interval(rec, ref, metric)
    return None if iv is None else iv.mid


def noise(rec: Record, metric: str) -> float | None:
    """The spread of ``metric`` across ``rec``'s rounds when it exceeds ``rules.NOISE`` (else None)."""
    s = stats.spread(stats.round_values(rec.round_metrics, metric))
    return s if rules.noisy(s) else None


def metric_cell(rec: Record, metric: str) -> str:
    """A metric as a table shows it, flagged when its rounds disagree: "13.7 (! 23%)"."""
    text = fmt.fmt_metric(metric, rec.metrics.get(metric))
    s = noise(rec, metric) if metric in rec.metrics else None
    return f"{text} (! {fmt.fmt_percent(s)})" if s is not None else text


def check(rec: Record) -> str:
    """What cannot be true of a successful record's figures (``rules.impossible``), as one sentence; "" if none."""
    if not rec.ok:
        return ""
    found = rules.impossible(rec.metrics)
    return ("impossible: " + "; ".join(found)) if found else ""


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
    ivs = [[interval(r, refs.get(select.machine_key(r)), m) for m, _ in ratios] for r in recs]
    # the interval columns (raw low/high) of the ratios that have a known spread in some row
    spread = [j for j in range(len(ratios)) if any(row[j] is not None and row[j].known for row in ivs)]
    checks = [check(r) for r in recs]
    flagged = any(checks)
    ratio_cols = [ratio_column(m, lab, reference) for m, lab in ratios]
    columns = [VARIANT, WHAT_RUNS] + ([MACHINE] if mixed else []) + [metric_column(m) for m in present] + \
              ratio_cols + [b for j in spread for b in ratio_cols[j].bounds()] + ([CHECK_COLUMN] if flagged else []) + \
              [ERROR]
    rows, raw = [], []
    for r, row_ivs, chk in zip(recs, ivs, checks):
        vals = [r.metrics.get(m) for m in present]
        rats = [None if iv is None else iv.mid for iv in row_ivs]
        bounds = [x for j in spread for x in ((None, None) if row_ivs[j] is None else (row_ivs[j].lo, row_ivs[j].hi))]
        names = [r.variant, variant_label(r.experiment, r.variant)] + ([labels[select.machine_key(r)]] if mixed else [])
        rows.append(names + [metric_cell(r, m) for m in present]
                    + [fmt.fmt_ratio_cell(iv) for iv in row_ivs] + [fmt.fmt_ratio(x) for x in bounds]
                    + ([chk] if flagged else []) + [r.error or ""])
        raw.append(names + vals + rats + bounds + ([chk or None] if flagged else []) + [r.error])
    p = recs[0].params if recs else {}
    return TableView(
        title=title or f"{recs[0].experiment if recs else ''}: {fmt.fmt_params(p)}",
        caption=_comparison_caption(recs, present, _ratio_note(reference, ratios, mixed, ivs, spread), checks),
        columns=tuple(columns), rows=tuple(map(tuple, rows)), raw=tuple(map(tuple, raw)),
        provenance=provenance(recs))


def _ratio_note(reference: str, ratios: Sequence, mixed: bool, ivs: Sequence[Sequence[Interval | None]],
                spread: Sequence[int]) -> str:
    """What a comparison's ratios are against, and where their intervals come from."""
    if not ratios:
        return ""
    if mixed:
        note = f"ratios against {reference} measured on the same machine (– where that machine has none)"
    else:
        note = f"ratios against {reference}"
    if spread:
        flat = [row[j] for row in ivs for j in spread]
        note += ", in brackets " + _how(flat)
        hows = [w for how, w in (("paired", "window-by-window"), ("rounds", "round-by-round"))
                if any(iv is not None and iv.how == how for iv in flat)]
        if hows:
            note += (f"; a ratio is the median of the {' or '.join(hows)} ratios, so it can differ from the "
                     "ratio of the two medians beside it")
    return note


def _comparison_caption(recs: Sequence[Record], present: Sequence[str], ratio_note: str,
                        checks: Sequence[str]) -> str:
    p = recs[0].params if recs else {}
    n_flag = sum(bool(c) for c in checks)
    return "; ".join(x for x in (
        fmt.fmt_params(p),
        f"median of {p['repeats']} steps after {p.get('warmup', 0)} warm-up" if "repeats" in p else "",
        _rounds_note(recs), ratio_note, _noise_note(recs, present),
        f"{n_flag} row{'s' if n_flag != 1 else ''} with figures that cannot be true (see {CHECK})" if n_flag
        else "", source_note(recs)) if x)


def _how(ivs: Sequence[Interval | None]) -> str:
    """Where the ratios' intervals come from, for a caption (``stats.HOW_WORDS``)."""
    hows = {iv.how for iv in ivs if iv is not None and iv.known}
    return " or ".join(words for how, words in stats.HOW_WORDS.items() if how in hows)


def _rounds_note(recs: Sequence[Record]) -> str:
    """"median of 5 rounds (each a fresh worker)" when some record has several rounds."""
    ns = sorted({len(r.rounds) for r in recs if len(r.rounds) >= 2})
    if not ns:
        return ""
    n = str(ns[0]) if len(ns) == 1 else f"{ns[0]}–{ns[-1]}"
    return f"each figure the median of {n} rounds (each a fresh worker)"


def _noise_note(recs: Sequence[Record], metrics: Sequence[str]) -> str:
    """What the "(! 23%)" flag means, when a cell has one."""
    if not any(noise(r, m) is not None for r in recs for m in metrics if m in r.metrics):
        return ""
    return (f"(! N%): its rounds disagree by N% of their median, more than {fmt.fmt_percent(rules.NOISE)}: "
            "a noisy figure")


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
    checks = [check(r) for r in recs]
    flagged = any(checks)
    columns = [VARIANT] + list(key_params) + [metric_column(m) for m in metrics] + \
              ([CHECK_COLUMN] if flagged else []) + [ERROR]
    rows, raw = [], []
    for r, chk in zip(recs, checks):
        vals = [r.metrics.get(m) for m in metrics]
        kp = [r.params.get(k) for k in key_params]
        rows.append([r.variant] + [fmt.fmt_value(v) for v in kp] + [metric_cell(r, m) for m in metrics]
                    + ([chk] if flagged else []) + [r.error or ""])
        raw.append([r.variant] + kp + vals + ([chk or None] if flagged else []) + [r.error])
    caption = "; ".join(x for x in (_rounds_note(recs), _noise_note(recs, metrics), source_note(recs))
                        if x)
    return TableView(title=title, caption=caption, columns=tuple(columns), rows=tuple(map(tuple, rows)),
                     raw=tuple(map(tuple, raw)), provenance=provenance(recs))


def noisy_metrics(rec: Record) -> dict[str, float]:
    """metric -> its rounds' spread, for the metrics whose rounds disagree by more than ``rules.NOISE``."""
    return {m: s for m in _metric_order([rec]) if (s := noise(rec, m)) is not None}


def _noisy_words(rec: Record) -> str:
    """"noisy: forward (ms) ! 23%" for the metrics whose rounds disagree by more than ``rules.NOISE``; ""."""
    flags = [f"{fmt.label(m)} ! {fmt.fmt_percent(s)}" for m, s in noisy_metrics(rec).items()]
    return ("noisy: " + ", ".join(flags)) if flags else ""


def check_flag(rec: Record) -> str:
    """The "check" column in a word, for a grid too narrow for its sentence: "failed", "impossible", "noisy (! 23%)"
    (the largest spread of its noisy metrics), or "" (the sentence: ``results_rows``)."""
    if not rec.ok:
        return "failed"
    if check(rec):
        return "impossible"
    spreads = noisy_metrics(rec)
    return f"noisy (! {fmt.fmt_percent(max(spreads.values()))})" if spreads else ""


def results_rows(records: Iterable[Record]) -> list[dict]:
    """The results browser: one flat row per record (what the filterable table shows). A timed record's
    configuration says the threads it was timed with: the seed point at 1 thread and at every core are two rows."""
    out = []
    for r in records:
        threads = condition.threads_words([r]) if "threads" in r.params else ""
        out.append({
            "experiment": r.experiment, "variant": r.variant,
            "config": ", ".join(x for x in (fmt.fmt_params(dict(r.params)), threads) if x),
            "device": r.env.get("device"), "machine": r.machine, "created_at": r.created_at, "source": r.source,
            "status": "failed: " + r.error if r.error else "ok",
            "fwd_ms": r.metrics.get("fwd_ms"), "train_ms": r.metrics.get("train_ms"), "key": r.key,
            "rounds": len(r.round_metrics), CHECK: check(r) or _noisy_words(r),
        })
    return out


def text_table(view: TableView, *, max_width: int = 40) -> str:
    """A plain aligned table for the terminal: the cells the screen shows (the ratios with their intervals, the
    noise flags, the "check" column; not the raw interval columns, :func:`without_bounds`). A "check" sentence is
    never cut."""
    view = without_bounds(view)
    cols = list(view.columns)
    keep = set(view.role("check"))
    rows = [[c if len(c) <= max_width or i in keep else c[: max_width - 1] + "…" for i, c in enumerate(row)]
            for row in view.rows]
    widths = [max([len(cols[i])] + [len(r[i]) for r in rows]) for i in range(len(cols))]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    out = [view.title, line(cols), line(["-" * w for w in widths])] + [line(r) for r in rows]
    if view.caption:
        out.append(view.caption)
    return "\n".join(out)
