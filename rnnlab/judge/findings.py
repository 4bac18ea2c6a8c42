"""Headline findings, computed from records: what the overview page says, each pointing at the page that shows it.

Pure functions of records (no Streamlit, no TensorFlow). A finding is one sentence with its numbers, e.g.
"On this CPU, static_rnn builds 6.5x slower and runs a forward step 1.5x faster than dynamic_rnn at 100 steps",
its machine ("On this CPU", ``select.where``) and its call (the status of the difference it is about) kept apart
from its words (``Finding.sentence``, a ``core.wording.Sentence``), plus the configuration and where the numbers
came from (``at``, ``provenance``, ``busy``), and the query parameters that open that configuration on its page.
Each question rnnlab answers is a ``Question`` with a finder; where no record answers it, ``answer`` returns it with
no findings and the page says how to get one (``Question.how``, the command of a plan).

Which records a finding quotes is decided by ``rnnlab.judge.select``, never here: records are grouped into
comparable sets (one configuration on one machine: :func:`select.groups`, :func:`select.series`), and every card
quotes the group :func:`select.headline` names (the seed 000 configuration when measured, else the one with the
most variants, then the best source, then the newest). So no finding puts two machines in one ratio, and a newer run
at another configuration does not move the headline. Every difference is said by ``core.wording.difference`` (a
direction only when the interval clears the margin, "about as fast" only when it lies inside it).

Every ratio quoted carries its interval (``core.stats.ratio_interval``: the 95% prediction interval of the per-round
ratios when both records have two rounds or more, else the quartiles of the timed steps): "1.59x faster (1.52–1.66x)"; ``Finding.numbers`` holds
``<name>_lo`` / ``<name>_hi`` beside each ratio. ``core.format``'s fmt_ratio_cell and fmt_span are how every table and sentence
writes such an interval.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from rnnlab import experiments
from rnnlab.core import format as fmt
from rnnlab.core import condition, rules, stats, urlstate, wording
from rnnlab.core.record import Record
from rnnlab.core.stats import Interval
from rnnlab.core.wording import Sentence
from rnnlab.experiments import seeds
from rnnlab.judge import select
from rnnlab.judge.select import Group, source_note, where
from rnnlab.tf.variants import VARIANTS

# The unrolling page's controls: what a finding's link sets (the rest of the params keep their defaults)
UNROLL_CONTROLS = ("cell", "layers", "units", "batch", "seq_len", "input_dim", "dtype", "repeats", "warmup", "rounds",
                   "threads", "device")
SWEEP_VALUES = (25, 50, 100, 200, 400)
# The configuration a headline prefers: seed 000's, as far as the unroll experiment has its parameters
SEED = seeds.for_params(seeds.SEED_000, experiments.get("unroll").params.names())


@dataclass(frozen=True)
class Finding:
    experiment: str
    page: str  # url_path of the page that shows it
    sentence: Sentence  # one sentence with the numbers: its machine (``where``) and its call (``status``) as data
    at: str  # the configuration and what else was measured there ("rnn, 3x128, ...; training step ...")
    query: Mapping[str, str] = field(default_factory=dict)  # opens this configuration on its page
    numbers: Mapping[str, float] = field(default_factory=dict)  # the ratios/values quoted, for tests and exports
    source: str = "local"
    provenance: str = ""  # where the numbers came from (``select.source_note``: origin, machine, busy)
    busy: str = ""  # ``select.busy_note`` (in ``provenance`` too): said even where the machine is said once

    @property
    def detail(self) -> str:
        """The configuration and where the numbers came from: "rnn, 3x128, ...; measured here on CPU: ..."."""
        return "; ".join(x for x in (self.at, self.provenance) if x)

    @property
    def headline(self) -> str:
        """The whole sentence, "On this CPU, static_rnn builds ..." (``Sentence.text``)."""
        return self.sentence.text


@dataclass(frozen=True)
class Question:
    key: str
    experiment: str
    page: str  # url_path of the page that answers it
    text: str  # the question, as the overview shows it
    how: str  # the CLI command that produces the records it needs
    finder: Callable[[Sequence[Record]], list[Finding]]


# -- wording -------------------------------------------------------------------------------------------------------
def paired(a: Record, b: Record, metric: str) -> Interval | None:
    """``a``/``b`` of ``metric`` from windows timed side by side (``stats.paired_interval``) when both records
    were measured in one interleaved session (``details["paired"]``: session -> metric -> windows per round);
    None otherwise."""
    pa, pb = a.details.get("paired"), b.details.get("paired")
    if not isinstance(pa, dict) or not isinstance(pb, dict):
        return None
    for sid in pa:
        wa, wb = pa.get(sid), pb.get(sid)
        if isinstance(wa, dict) and isinstance(wb, dict) and metric in wa and metric in wb:
            try:
                return stats.session_interval(wa, wb, metric)
            except (TypeError, ValueError, ZeroDivisionError):
                return None  # windows of a shape no run writes: not paired
    return None


def interval(a: Record, b: Record, metric: str) -> Interval | None:
    """``a``/``b`` of ``metric`` with its interval: from paired windows (:func:`paired`) when both records were
    timed side by side, else ``stats.ratio_interval`` over both records' rounds; None when
    either lacks the metric or ``b``'s is zero. A zero on ``a``'s side (no memory above the baseline) has no
    interval but is still a ratio: 0, no spread known. The caller makes sure both come from one machine
    (``select``)."""
    iv = paired(a, b, metric)
    if iv is None:
        iv = stats.ratio_interval(a.round_metrics, b.round_metrics, metric)
        why = apart(a, b) if iv is not None and metric.endswith(("_ms", "_s")) else ""
        iv = dataclasses.replace(iv, unsettled=why) if why else iv
    if iv is None and a.metrics.get(metric) == 0 and (b.metrics.get(metric) or 0) > 0:
        return Interval(0.0, 0.0, 0.0, "none", 1)
    return iv


def apart(a: Record, b: Record) -> str:
    """Why two records timed in different sessions make no call on a time: other processes took different shares of
    the machine while each was timed (``rules.same_load``); "" when alike or either read nothing. A ratio across
    two conditions is a difference of condition, not of the variants."""
    ca, cb = (condition.Condition.of(r.details.get("condition")) for r in (a, b))
    if ca is None or cb is None or rules.same_load(ca.other, cb.other):
        return ""
    return (f"timed under different loads ({ca.free:.1f} and {cb.free:.1f} of {ca.cores} cores free): a difference "
            "of condition, not of the variants")


def compare(iv: Interval | None, other: str, *, kind: str = "time", named: bool = False) -> str:
    """A/B of ``iv`` against ``other`` in the one sentence rule's words (``core.wording``): "1.59x faster than B
    (1.52–1.66x)", "about as fast as B (0.95–1.04x)", "at 1.11x B's time (0.59–1.86x), too noisy to call".
    ``named``: B is named earlier in the sentence, so a direction leaves it out ("1.57x faster (1.43–1.73x)");
    any other phrase still says it, as its words lean on it ("about as fast as B", "at 1.07x its time")."""
    phrase = wording.difference(iv, kind=kind)
    if phrase is None:
        return fmt.MISSING
    return phrase.text() if named and phrase.status in (rules.LOWER, rules.HIGHER) else phrase.against(other)


def _numbers(name: str, iv: Interval) -> dict[str, float]:
    """``{name: mid, name_lo: lo, name_hi: hi}`` for ``Finding.numbers``."""
    return {name: iv.mid, f"{name}_lo": iv.lo, f"{name}_hi": iv.hi}


# -- choosing what to quote: select.groups + select.headline -----------------------------------------------------------
def _groups(records: Sequence[Record]) -> list[Group]:
    return select.groups(records, experiment="unroll")


def _only(g: Group, keep: Callable[[Record], bool]) -> Group:
    """The group with only its successful records that ``keep`` accepts."""
    return dataclasses.replace(g, records={v: r for v, r in g.ok().items() if keep(r)})


def unroll_query(params: Mapping, variants: Sequence[str], *, ref: str | None = None,
                 extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The unrolling page's query parameters for a configuration (see ``rnnlab.core.urlstate``)."""
    variants = sorted(dict.fromkeys(variants), key=lambda v: list(VARIANTS).index(v) if v in VARIANTS else 99)
    values = {k: params[k] for k in UNROLL_CONTROLS if k in params}
    if values.get("device") in ("cpu", "gpu"):
        values["device"] = "auto"  # records hold the resolved device; the page asks for auto
    return urlstate.encode(values, variants=list(variants), extra={"ref": ref, **(extra or {})})


def _at(recs: Sequence[Record], extra: str = "") -> str:
    """``Finding.at``: the records' configuration, then ``extra``."""
    return "; ".join([fmt.fmt_params(dict(recs[0].params))] + [extra] * bool(extra))


def _from(recs: Sequence[Record]) -> dict[str, str]:
    """``Finding.provenance`` and ``Finding.busy`` of a finding quoting ``recs``."""
    return {"provenance": source_note(recs), "busy": select.busy_note(recs)}


# -- unroll: pairs of variants ---------------------------------------------------------------------------------------
def _apart(clause: str) -> str:
    """The comma that keeps the next "and ..." one clause apart from a call left undecided: "..., too noisy to call,
    and runs", "..., too noisy to call, and a training step"."""
    return "," if clause.endswith(str(rules.NOISY)) else ""


def pair_finding(records: Sequence[Record], a: str, b: str, a_name: str, b_name: str, *,
                 build: bool = True, train: bool = False) -> list[Finding]:
    """``a`` against ``b`` at the configuration the headline rule picks among those where both ran (one machine):
    build time and forward step, training in the detail (``train``: in the sentence too, the Keras answer)."""
    g = select.headline(_groups(records), seed=SEED, need=(a, b))
    if g is None:
        return []
    ra, rb = g.ok()[a], g.ok()[b]
    iv_fwd = interval(ra, rb, "fwd_ms")
    if iv_fwd is None:
        return []
    numbers = _numbers("fwd_ratio", iv_fwd)
    iv_bld = interval(ra, rb, "build_s") if build else None
    steps = ra.params.get("seq_len")
    if iv_bld is not None:
        numbers.update(_numbers("build_ratio", iv_bld))
        built = compare(iv_bld, b_name)
        head = (f"{a_name} builds {built}{_apart(built)} and runs a forward step "
                f"{compare(iv_fwd, b_name, named=True)} at {steps} steps.")
    else:
        head = f"{a_name} runs a forward step {compare(iv_fwd, b_name)} at {steps} steps."
    extra = []
    iv_trn = interval(ra, rb, "train_ms")
    if iv_trn is not None:
        numbers.update(_numbers("train_ratio", iv_trn))
        if train:
            head = head.removesuffix(f" at {steps} steps.")
            head += f"{_apart(head)} and a training step {compare(iv_trn, b_name, named=True)} at {steps} steps."
        else:
            extra.append(f"training step {compare(iv_trn, b_name)}")
    na, nb = ra.metrics.get("graph_nodes"), rb.metrics.get("graph_nodes")
    iv_graph = interval(ra, rb, "graph_nodes")
    if na and nb and iv_graph is not None:
        numbers.update(_numbers("graph_ratio", iv_graph))
        extra.append(f"graph {fmt.fmt_metric('graph_nodes', na)} vs {fmt.fmt_metric('graph_nodes', nb)} nodes")
    ma, mb = ra.metrics.get("peak_mem_mb"), rb.metrics.get("peak_mem_mb")
    iv_mem = interval(ra, rb, "peak_mem_mb")
    if ma and mb and iv_mem is not None:
        numbers.update(_numbers("mem_ratio", iv_mem))
        extra.append(f"peak memory {fmt.fmt_metric('peak_mem_mb', ma)} vs {fmt.fmt_metric('peak_mem_mb', mb)} MB")
    said = Sentence(head, where([ra, rb]), wording.status_of(iv_fwd))  # its call: the forward step's
    return [Finding(experiment="unroll", page="unrolling", sentence=said, at=_at([ra, rb], ", ".join(extra)),
                    query=unroll_query(ra.params, [a, b], ref=b), numbers=numbers, source=g.source, **_from([ra, rb]))]


def fastest(records: Sequence[Record]) -> list[Finding]:
    """The fastest and slowest training step among the variants measured together at one configuration (at least
    three of them; the configuration the headline rule picks)."""
    timed = [_only(g, lambda r: (r.metrics.get("train_ms") or 0) > 0) for g in _groups(records)]
    g = select.headline([g for g in timed if len(g.records) >= 3], seed=SEED)
    if g is None:
        return []
    by = g.ok()
    order = sorted(by.values(), key=lambda r: r.metrics["train_ms"])
    lo, hi = order[0], order[-1]
    iv = interval(lo, hi, "train_ms")
    if iv is None:  # no ratio to quote (a time that is not positive, rounds without it): no finding, no crash
        return []
    head = (f"of {len(order)} variants {lo.variant} has the shortest median training step "
            f"({fmt.fmt_metric('train_ms', lo.metrics['train_ms'])} ms) and {hi.variant} the longest "
            f"({fmt.fmt_metric('train_ms', hi.metrics['train_ms'])} ms): {lo.variant} is "
            f"{compare(iv, hi.variant)}.")
    said = Sentence(head, where(order), wording.status_of(iv))
    iv = interval(hi, lo, "train_ms")
    return [Finding(experiment="unroll", page="unrolling", sentence=said, at=_at(order), **_from(order),
                    query=unroll_query(lo.params, list(by), ref="tf1_dynamic" if "tf1_dynamic" in by else None),
                    numbers={**_numbers("spread", iv), "fastest_ms": lo.metrics["train_ms"],
                             "slowest_ms": hi.metrics["train_ms"]},
                    source=g.source)]


def _xla_pairs(g: Group) -> list[tuple[Interval, Record, Record]]:
    """(time ratio with its interval, the +xla record, its plain variant's record) for every XLA variant of a
    group: the training step where both have it, else the forward step."""
    by = g.ok()
    out = []
    for v, r in by.items():
        if v.endswith("+xla") and v[:-4] in by:
            t = interval(r, by[v[:-4]], "train_ms") or interval(r, by[v[:-4]], "fwd_ms")
            if t is not None:
                out.append((t, r, by[v[:-4]]))
    return out


def xla(records: Sequence[Record]) -> list[Finding]:
    """What jit_compile=True changes, for the variant where it helps most at one configuration (the configuration
    the headline rule picks among those with an XLA variant and its plain form)."""
    g = select.headline([g for g in _groups(records) if _xla_pairs(g)], seed=SEED)
    if g is None:
        return []
    iv, rx, rb = min(_xla_pairs(g), key=lambda x: x[0].mid)
    metric = "training step" if interval(rx, rb, "train_ms") is not None else "forward step"
    said = Sentence(f"with XLA (jit_compile=True) {rx.variant}'s {metric} is {compare(iv, rb.variant)}.",
                    where([rx, rb]), wording.status_of(iv))
    return [Finding(experiment="unroll", page="unrolling", sentence=said, at=_at([rx, rb]), **_from([rx, rb]),
                    query=unroll_query(rx.params, [rb.variant, rx.variant], ref=rb.variant),
                    numbers=_numbers("ratio", iv), source=g.source)]


def _slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of log(y) on log(x): the exponent k of y ~ x^k."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / den if den else float("nan")


def _points(g: Group, variant: str) -> dict[int, Record]:
    """seq_len -> record of ``variant`` in a sweep series (see ``select.series``)."""
    return {r.params["seq_len"]: r for r in g.records.values() if r.variant == variant}


def build_scaling(records: Sequence[Record]) -> list[Finding]:
    """How static_rnn's build time grows with seq_len (from a sweep on one machine), next to dynamic_rnn's."""
    recs = [r for r in records if r.experiment == "unroll" and r.ok and r.variant in ("tf1_static", "tf1_dynamic")
            and (r.metrics.get("build_s") or 0) > 0]  # a log-log slope: positive times only
    sweeps = [g for g in select.series(recs, "seq_len", experiment="unroll") if len(_points(g, "tf1_static")) >= 3]
    g = select.headline(sweeps, seed=SEED)
    if g is None:
        return []
    st, dyn = _points(g, "tf1_static"), _points(g, "tf1_dynamic")
    xs = sorted(st)
    k = _slope(xs, [st[x].metrics["build_s"] for x in xs])
    lo, hi = st[xs[0]], st[xs[-1]]
    head = (f"static_rnn's build time grows from "
            f"{fmt.fmt_metric('build_s', lo.metrics['build_s'])} s at {xs[0]} steps to "
            f"{fmt.fmt_metric('build_s', hi.metrics['build_s'])} s at {xs[-1]} steps (about seq_len^{k:.2f})")
    numbers = {"exponent": k, "build_lo_s": lo.metrics["build_s"], "build_hi_s": hi.metrics["build_s"]}
    if len(dyn) >= 2:
        vals = [dyn[x].metrics["build_s"] for x in sorted(dyn)]
        head += (f", while dynamic_rnn's stays between {fmt.fmt_metric('build_s', min(vals))} and "
                 f"{fmt.fmt_metric('build_s', max(vals))} s")
        numbers["dyn_exponent"] = _slope(sorted(dyn), vals)
    head += "."
    params = {k2: v for k2, v in lo.params.items() if k2 != "seq_len"}
    variants = ["tf1_static"] + (["tf1_dynamic"] if dyn else [])
    said = Sentence(head, where(list(st.values())))  # a growth, no difference said by the sentence rule
    return [Finding(experiment="unroll", page="unrolling", sentence=said,
                    at=f"{fmt.fmt_params(params)}; seq_len {', '.join(map(str, xs))}",
                    **_from(list(st.values()) + list(dyn.values())),
                    query=unroll_query(hi.params, variants, ref="tf1_dynamic" if dyn else None),
                    numbers=numbers, source=g.source)]


def _how(variants: Sequence[str] | None = None, **overrides) -> str:
    """The command that measures what a question needs: the quick preset, as a plan (``Plan.command``)."""
    from rnnlab.engine import api

    p = api.plan("unroll", preset="quick", overrides=overrides or None, variants=variants, available_mb=math.inf)
    return p.command()


QUESTIONS: list[Question] = [
    Question("tf1_static_vs_dynamic", "unroll", "unrolling",
             "TF1: what does static_rnn's unrolled graph cost to build, and what does it buy at run time?",
             _how(),
             lambda rs: pair_finding(rs, "tf1_static", "tf1_dynamic", "static_rnn", "dynamic_rnn")),
    Question("tf2_unrolled_vs_while", "unroll", "unrolling",
             "TF2: is a Python loop inside tf.function (unrolled) faster than tf.while_loop?",
             _how(["tf1_dynamic", "tf2_unrolled", "tf2_while"]),
             lambda rs: pair_finding(rs, "tf2_unrolled", "tf2_while", "a Python loop in tf.function",
                                     "tf.while_loop")),
    Question("keras_fused_vs_cell", "unroll", "unrolling",
             "Keras 3: how much does the built-in layer gain over the generic RNN(cell) path?",
             _how(["tf1_dynamic", "keras", "keras_cell"]),
             lambda rs: pair_finding(rs, "keras", "keras_cell", "the Keras layer", "RNN(cell)", train=True)),
    Question("keras_unroll", "unroll", "unrolling",
             "Keras 3: what does unroll=True change?",
             _how(["tf1_dynamic", "keras", "keras_unroll"]),
             lambda rs: pair_finding(rs, "keras_unroll", "keras", "Keras with unroll=True", "the default layer",
                                    train=True)),
    Question("fastest", "unroll", "unrolling",
             "Which way of unrolling trains fastest at one configuration?", _how(), fastest),
    Question("xla", "unroll", "unrolling", "Does XLA (jit_compile=True) help?",
             _how(["tf1_dynamic", "tf2_while", "tf2_while+xla"]), xla),
    Question("build_scaling", "unroll", "unrolling",
             "How does the unrolled graph's build time grow with the sequence length?",
             _how(seq_len=list(SWEEP_VALUES)), build_scaling),
]


def answer(records: Sequence[Record], questions: Sequence[Question] | None = None
           ) -> list[tuple[Question, list[Finding]]]:
    """Every question with the findings its records support (an empty list: not measured yet)."""
    out = []
    for q in (QUESTIONS if questions is None else questions):
        out.append((q, q.finder([r for r in records if r.experiment == q.experiment])))
    return out
