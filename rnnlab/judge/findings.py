"""Headline findings, computed from records: what the overview page says, each pointing at the page that shows it.

Pure functions of records (no Streamlit, no TensorFlow). A finding is one sentence with its numbers, e.g.
"On this CPU, static_rnn builds 6.5x slower and runs a forward step 1.5x faster than dynamic_rnn at 100 steps",
plus the configuration and where the numbers came from, and the query parameters that open that configuration on its
page. Each question rnnlab answers is a ``Question`` with a finder; where no record answers it, ``answer`` returns
it with no findings and the page says how to get one (``Question.how``).

Which configuration a finding quotes: this machine's records before imported or bundled ones, the seed
configuration (``unroll`` preset ``seed``) before others, then the newest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from rnnlab import experiments
from rnnlab.core import urlstate
from rnnlab.core import format as fmt
from rnnlab.judge.select import SOURCE_RANK
from rnnlab.core.record import Record
from rnnlab.present.tables import group_by_config, source_note
from rnnlab.tf.variants import VARIANTS

# The unrolling page's controls: what a finding's link sets (the rest of the params keep their defaults)
UNROLL_CONTROLS = ("cell", "layers", "units", "batch", "seq_len", "input_dim", "dtype", "repeats", "warmup", "device")
SWEEP_VALUES = (25, 50, 100, 200, 400)


@dataclass(frozen=True)
class Finding:
    experiment: str
    page: str  # url_path of the page that shows it
    headline: str  # one sentence with the numbers
    detail: str  # configuration and where the numbers came from
    query: Mapping[str, str] = field(default_factory=dict)  # opens this configuration on its page
    numbers: Mapping[str, float] = field(default_factory=dict)  # the ratios/values quoted, for tests and exports
    source: str = "local"


@dataclass(frozen=True)
class Question:
    key: str
    experiment: str
    page: str  # url_path of the page that answers it
    text: str  # the question, as the overview shows it
    how: str  # the CLI command that produces the records it needs
    finder: Callable[[Sequence[Record]], list[Finding]]


# -- wording -------------------------------------------------------------------------------------------------------
def where(records: Sequence[Record]) -> str:
    """"On this CPU", "On the bundled results' GPU (A100)", "On Xeon, 2 cores (imported)"."""
    r = records[0]
    device = str(r.env.get("device") or "device")
    srcs = {x.source for x in records}
    if srcs == {"local"}:
        return f"On this {device}"
    if srcs == {"baseline"}:
        return f"On the bundled results' {device} ({r.machine})"
    if srcs == {"imported"}:
        return f"On {r.machine} ({device}, imported)"
    return f"On {r.machine} ({device})"


def compare(ratio: float, slower: str = "slower", faster: str = "faster") -> str:
    """Time ratio a/b -> "6.5x slower" (>1), "1.5x faster" (<1), "about as fast" (within 5%)."""
    if not math.isfinite(ratio) or ratio <= 0:
        return "–"
    if 0.95 <= ratio <= 1.05:
        return "about as fast"
    if ratio > 1:
        return f"{fmt.fmt_ratio(ratio)} {slower}"
    return f"{fmt.fmt_ratio(1 / ratio)} {faster}"


def _ratio(a: Record, b: Record, metric: str) -> float | None:
    x, y = a.metrics.get(metric), b.metrics.get(metric)
    if x is None or y is None or y <= 0 or x <= 0:
        return None
    return x / y


# -- choosing what to quote ------------------------------------------------------------------------------------------
def _seed_params() -> dict:
    try:
        return dict(experiments.get("unroll").presets.get("seed", {}))
    except Exception:  # the registry is others' code; a finding never fails the overview
        return {}


def _is_seed(params: Mapping) -> bool:
    seed = _seed_params()
    return bool(seed) and all(params.get(k) == v for k, v in seed.items() if k != "variants")


def _latest(records: Sequence[Record]) -> dict[str, Record]:
    """One record per variant: best source, then newest."""
    out: dict[str, Record] = {}
    for r in sorted(records, key=lambda r: r.created_at, reverse=True):
        cur = out.get(r.variant)
        if cur is None or SOURCE_RANK.get(r.source, 3) < SOURCE_RANK.get(cur.source, 3):
            out[r.variant] = r
    return out


def _groups_with(records: Sequence[Record], variants: Sequence[str], *, ignore: Sequence[str] = ()
                 ) -> list[dict[str, Record]]:
    """Configurations (one machine each) where every one of ``variants`` has a successful record, best first."""
    found = []
    for group in group_by_config(records, ignore=ignore).values():
        by = _latest([r for r in group if r.ok])
        if all(v in by for v in variants):
            found.append(by)

    def rank(by: dict[str, Record]):
        rs = [by[v] for v in variants]
        src = max(SOURCE_RANK.get(r.source, 3) for r in rs)
        newest = max(r.created_at for r in rs)
        return (src, 0 if _is_seed(rs[0].params) else 1, _neg(newest))

    return sorted(found, key=rank)


def _neg(ts: str) -> tuple:
    return tuple(-ord(c) for c in ts)  # newest first in an ascending sort


def unroll_query(params: Mapping, variants: Sequence[str], *, ref: str | None = None,
                 extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The unrolling page's query parameters for a configuration (see ``rnnlab.core.urlstate``)."""
    variants = sorted(dict.fromkeys(variants), key=lambda v: list(VARIANTS).index(v) if v in VARIANTS else 99)
    values = {k: params[k] for k in UNROLL_CONTROLS if k in params}
    if values.get("device") in ("cpu", "gpu"):
        values["device"] = "auto"  # records hold the resolved device; the page asks for auto
    return urlstate.encode(values, variants=list(variants), extra={"ref": ref, **(extra or {})})


def _detail(recs: Sequence[Record], extra: str = "") -> str:
    p = dict(recs[0].params)
    parts = [fmt.fmt_params(p)]
    if extra:
        parts.append(extra)
    parts.append(source_note(recs))
    return "; ".join(parts)


# -- unroll: pairs of variants ---------------------------------------------------------------------------------------
def pair_finding(records: Sequence[Record], a: str, b: str, a_name: str, b_name: str, *,
                 build: bool = True) -> list[Finding]:
    """``a`` against ``b`` at the best configuration where both ran: build time and forward step, training in
    the detail."""
    recs = [r for r in records if r.experiment == "unroll"]
    groups = _groups_with(recs, [a, b])
    if not groups:
        return []
    by = groups[0]
    ra, rb = by[a], by[b]
    fwd = _ratio(ra, rb, "fwd_ms")
    if fwd is None:
        return []
    numbers = {"fwd_ratio": fwd}
    bld = _ratio(ra, rb, "build_s") if build else None
    steps = ra.params.get("seq_len")
    if bld is not None:
        numbers["build_ratio"] = bld
        head = (f"{where([ra, rb])}, {a_name} builds {compare(bld)} and runs a forward step {compare(fwd)} than "
                f"{b_name} at {steps} steps.")
    else:
        head = f"{where([ra, rb])}, {a_name} runs a forward step {compare(fwd)} than {b_name} at {steps} steps."
    extra = []
    trn = _ratio(ra, rb, "train_ms")
    if trn is not None:
        numbers["train_ratio"] = trn
        extra.append(f"training step {compare(trn)}")
    na, nb = ra.metrics.get("graph_nodes"), rb.metrics.get("graph_nodes")
    if na and nb:
        numbers["graph_ratio"] = na / nb
        extra.append(f"graph {fmt.fmt_metric('graph_nodes', na)} vs {fmt.fmt_metric('graph_nodes', nb)} nodes")
    ma, mb = ra.metrics.get("peak_mem_mb"), rb.metrics.get("peak_mem_mb")
    if ma and mb:
        numbers["mem_ratio"] = ma / mb
        extra.append(f"peak memory {fmt.fmt_metric('peak_mem_mb', ma)} vs {fmt.fmt_metric('peak_mem_mb', mb)} MB")
    return [Finding(experiment="unroll", page="unrolling", headline=head,
                    detail=_detail([ra, rb], ", ".join(extra)),
                    query=unroll_query(ra.params, [a, b], ref=b), numbers=numbers,
                    source=ra.source if ra.source == rb.source else "mixed")]


def fastest(records: Sequence[Record]) -> list[Finding]:
    """The fastest and slowest training step among the variants measured together at one configuration."""
    recs = [r for r in records if r.experiment == "unroll"]
    best_group = None
    for group in group_by_config(recs).values():
        by = {v: r for v, r in _latest([r for r in group if r.ok]).items() if r.metrics.get("train_ms")}
        if len(by) < 3:
            continue
        rs = list(by.values())
        rank = (max(SOURCE_RANK.get(r.source, 3) for r in rs), 0 if _is_seed(rs[0].params) else 1, -len(by),
                _neg(max(r.created_at for r in rs)))
        if best_group is None or rank < best_group[0]:
            best_group = (rank, by)
    if best_group is None:
        return []
    by = best_group[1]
    order = sorted(by.values(), key=lambda r: r.metrics["train_ms"])
    lo, hi = order[0], order[-1]
    spread = hi.metrics["train_ms"] / lo.metrics["train_ms"]
    head = (f"{where(order)}, the fastest training step of {len(order)} variants is {lo.variant} "
            f"({fmt.fmt_metric('train_ms', lo.metrics['train_ms'])} ms), {fmt.fmt_ratio(spread)} faster than the "
            f"slowest, {hi.variant} ({fmt.fmt_metric('train_ms', hi.metrics['train_ms'])} ms).")
    return [Finding(experiment="unroll", page="unrolling", headline=head, detail=_detail(order),
                    query=unroll_query(lo.params, list(by), ref="tf1_dynamic" if "tf1_dynamic" in by else None),
                    numbers={"spread": spread, "fastest_ms": lo.metrics["train_ms"],
                             "slowest_ms": hi.metrics["train_ms"]},
                    source=lo.source)]


def xla(records: Sequence[Record]) -> list[Finding]:
    """What jit_compile=True changes, for the variant where it helps most at one configuration."""
    recs = [r for r in records if r.experiment == "unroll"]
    out = []
    for group in group_by_config(recs).values():
        by = _latest([r for r in group if r.ok])
        for v, r in by.items():
            if v.endswith("+xla") and v[:-4] in by:
                t = _ratio(r, by[v[:-4]], "train_ms") or _ratio(r, by[v[:-4]], "fwd_ms")
                if t is not None:
                    out.append((SOURCE_RANK.get(r.source, 3), 0 if _is_seed(r.params) else 1, t, r, by[v[:-4]]))
    if not out:
        return []
    out.sort(key=lambda x: (x[0], x[1], x[2]))
    _, _, t, rx, rb = out[0]
    metric = "training step" if _ratio(rx, rb, "train_ms") is not None else "forward step"
    head = f"{where([rx, rb])}, XLA (jit_compile=True) makes {rb.variant}'s {metric} {compare(t)}."
    return [Finding(experiment="unroll", page="unrolling", headline=head, detail=_detail([rx, rb]),
                    query=unroll_query(rx.params, [rb.variant, rx.variant], ref=rb.variant), numbers={"ratio": t},
                    source=rx.source)]


def _slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of log(y) on log(x): the exponent k of y ~ x^k."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / den if den else float("nan")


def build_scaling(records: Sequence[Record]) -> list[Finding]:
    """How static_rnn's build time grows with seq_len (from a sweep), next to dynamic_rnn's."""
    recs = [r for r in records if r.experiment == "unroll" and r.ok and r.variant in ("tf1_static", "tf1_dynamic")
            and r.metrics.get("build_s")]
    best = None
    for group in group_by_config(recs, ignore=("seq_len",)).values():
        pts: dict[str, dict[int, Record]] = {}
        for r in sorted(group, key=lambda r: r.created_at):
            pts.setdefault(r.variant, {})[r.params["seq_len"]] = r
        st = pts.get("tf1_static", {})
        if len(st) < 3:
            continue
        rank = (max(SOURCE_RANK.get(r.source, 3) for r in st.values()), -len(st))
        if best is None or rank < best[0]:
            best = (rank, pts)
    if best is None:
        return []
    pts = best[1]
    st = pts["tf1_static"]
    xs = sorted(st)
    k = _slope(xs, [st[x].metrics["build_s"] for x in xs])
    lo, hi = st[xs[0]], st[xs[-1]]
    head = (f"{where(list(st.values()))}, static_rnn's build time grows from "
            f"{fmt.fmt_metric('build_s', lo.metrics['build_s'])} s at {xs[0]} steps to "
            f"{fmt.fmt_metric('build_s', hi.metrics['build_s'])} s at {xs[-1]} steps (about seq_len^{k:.2f})")
    numbers = {"exponent": k, "build_lo_s": lo.metrics["build_s"], "build_hi_s": hi.metrics["build_s"]}
    dyn = pts.get("tf1_dynamic", {})
    if len(dyn) >= 2:
        vals = [dyn[x].metrics["build_s"] for x in sorted(dyn)]
        head += (f", while dynamic_rnn's stays between {fmt.fmt_metric('build_s', min(vals))} and "
                 f"{fmt.fmt_metric('build_s', max(vals))} s")
        numbers["dyn_exponent"] = _slope(sorted(dyn), vals)
    head += "."
    params = {k2: v for k2, v in lo.params.items() if k2 != "seq_len"}
    variants = [v for v in ("tf1_static", "tf1_dynamic") if v in pts]
    return [Finding(experiment="unroll", page="unrolling", headline=head,
                    detail=f"{fmt.fmt_params(params)}; seq_len {', '.join(map(str, xs))}; "
                           f"{source_note(list(st.values()))}",
                    query=unroll_query(hi.params, variants, ref="tf1_dynamic" if "tf1_dynamic" in pts else None),
                    numbers=numbers, source=lo.source)]


_HOW_QUICK = "python -m rnnlab run unroll --preset quick"

QUESTIONS: list[Question] = [
    Question("tf1_static_vs_dynamic", "unroll", "unrolling",
             "TF1: what does static_rnn's unrolled graph cost to build, and what does it buy at run time?",
             _HOW_QUICK,
             lambda rs: pair_finding(rs, "tf1_static", "tf1_dynamic", "static_rnn", "dynamic_rnn")),
    Question("tf2_unrolled_vs_while", "unroll", "unrolling",
             "TF2: is a Python loop inside tf.function (unrolled) faster than tf.while_loop?",
             "python -m rnnlab run unroll --preset quick --variants tf1_dynamic,tf2_unrolled,tf2_while",
             lambda rs: pair_finding(rs, "tf2_unrolled", "tf2_while", "a Python loop in tf.function",
                                     "tf.while_loop")),
    Question("keras_fused_vs_cell", "unroll", "unrolling",
             "Keras 3: how much does the built-in layer gain over the generic RNN(cell) path?",
             "python -m rnnlab run unroll --preset quick --variants tf1_dynamic,keras,keras_cell",
             lambda rs: pair_finding(rs, "keras", "keras_cell", "the Keras layer", "RNN(cell)")),
    Question("keras_unroll", "unroll", "unrolling",
             "Keras 3: what does unroll=True change?",
             "python -m rnnlab run unroll --preset quick --variants tf1_dynamic,keras,keras_unroll",
             lambda rs: pair_finding(rs, "keras_unroll", "keras", "Keras with unroll=True", "the default layer")),
    Question("fastest", "unroll", "unrolling",
             "Which way of unrolling trains fastest at one configuration?", _HOW_QUICK, fastest),
    Question("xla", "unroll", "unrolling", "Does XLA (jit_compile=True) help?",
             "python -m rnnlab run unroll --preset quick --variants tf1_dynamic,tf2_while,tf2_while+xla", xla),
    Question("build_scaling", "unroll", "unrolling",
             "How does the unrolled graph's build time grow with the sequence length?",
             "python -m rnnlab run unroll --preset quick --set seq_len=" + ",".join(map(str, SWEEP_VALUES)),
             build_scaling),
]


def answer(records: Sequence[Record], questions: Sequence[Question] | None = None
           ) -> list[tuple[Question, list[Finding]]]:
    """Every question with the findings its records support (an empty list: not measured yet)."""
    out = []
    for q in (QUESTIONS if questions is None else questions):
        out.append((q, q.finder([r for r in records if r.experiment == q.experiment])))
    return out
