"""The seeds' claims, each checked against the stored records (pure: no TensorFlow, no store).

Every quantitative or checkable statement of the four seeds in ``/work/shared/seeds`` is one :class:`Claim`: what the
seed says (with its own figure, from ``rnnlab.experiments.seeds``), which experiment, preset and variants test it,
the run that produces the records (:meth:`Claim.plan`, :attr:`Claim.command`), and a pure
``verdict(records) -> Verdict``. :func:`evaluate` judges them all.

Statuses (``rnnlab.core.rules.STATUSES``):

- ``holds`` / ``does not hold``: the records decide it, every configuration judged agrees;
- ``depends``: the records show it holds in some measured configurations or measures and not in others
  (``measured`` says where);
- ``too noisy to call``: the interval of a ratio the claim rests on reaches across the margin (its spread across
  rounds, or the quartiles of a one-round record's timed steps), and nothing measured contradicts it either way;
- ``not measured``: no usable record (``why`` gives the command that makes them);
- ``not measurable here``: a GPU claim and only CPU records (this machine has no GPU). GPU records from
  anywhere (bundled ``data/baseline`` files, ``python -m rnnlab import``) are used when present.

Judging rules, the same for every claim (the margins and "A beats B" are ``rnnlab.core.rules``'; which record stands
and which records may be compared is ``rnnlab.judge.select``'s):

- Machines. Two records are compared only when they come from one machine (``select.machine_key``: origin,
  environment fingerprint, matmul-rate class); a verdict never sets one machine's record against another's. Where
  this machine's store has a pair at a configuration, other machines' (bundled, imported) pairs of that
  configuration are left out. A record that was not measured here says whose it is ("[bundled from ...]").
- Configuration. A claim about a seed's own configuration is judged on records at exactly that configuration when
  there are any (the other configurations are then summarised in ``measured``); otherwise on every configuration
  measured, said as "not the seed configuration".
- Speed and memory (``rules.call(stats.ratio_interval(...))``). "A is faster / smaller than B" holds when A saves
  at least ``rules.MARGIN`` (10%) of B's time or memory over the whole interval of A/B; "A is not slower than B"
  holds when A is not more than 10% worse over the whole interval. The interval is the 95% prediction interval of the
  per-round ratios when both records have two rounds or more, else the quartiles of the timed steps (``fwd_ms_p25``/``_p75`` ...: A.p25/B.p75
  .. A.p75/B.p25), else the ratio alone. An interval on both sides of the margin is "too noisy to call" (never a
  loss). Forward and training steps are judged separately; if they disagree the claim depends. ``measured`` always
  gives the numbers and the interval, so a reader can see how close a call was.
- Several records of one variant at one configuration and machine: ``select.best`` (this machine's, then imported,
  then bundled; a successful one before a failed one; then the newest).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Iterable, Mapping, Sequence

from rnnlab.core import format as fmt
from rnnlab.core import wording
from rnnlab.core import rules
from rnnlab.core.rules import Status
from rnnlab.core.record import Record
from rnnlab.core.stats import Interval
from rnnlab.experiments import seeds
from rnnlab.judge import findings, select


@dataclass(frozen=True)
class Verdict:
    status: Status  # (its words, as a str, are taken too)
    measured: str  # what the records show, with numbers and whose records they are
    why: str  # why that status; what to run when not measured

    def __post_init__(self):
        if self.status not in rules.STATUSES:
            raise ValueError(f"status {str(self.status)!r} is not one of {tuple(map(str, rules.STATUSES))}")
        object.__setattr__(self, "status", Status(self.status))


@dataclass(frozen=True)
class Claim:
    id: str
    seed: str  # the seed file
    section: str  # where in the seed
    text: str  # the claim in a few words, with the seed's own figure
    experiment: str
    preset: str
    variants: tuple[str, ...]  # the variants the claim is about
    judge: Callable[[Sequence[Record], "Claim"], Verdict]
    device: str = "any"  # "any", "CPU" or "GPU": the device the seed's figure is about
    overrides: tuple[tuple[str, Any], ...] = ()  # the run's parameters over the preset's (a tuple value: a sweep)
    run_variants: tuple[str, ...] | None = None  # the variants the run measures (None: the preset's)

    @property
    def plan_args(self) -> dict[str, Any]:
        """``rnnlab.engine.api.plan``'s arguments for the run that produces this claim's records."""
        return {"experiment": self.experiment, "preset": self.preset,
                "overrides": {k: list(v) if isinstance(v, tuple) else v for k, v in self.overrides},
                "variants": None if self.run_variants is None else list(self.run_variants)}

    def plan(self, **kw):
        """That run as an ``api.Plan`` (``available_mb`` etc. as ``api.plan`` takes them; no TensorFlow)."""
        from rnnlab.engine import api

        return api.plan(**self.plan_args, **kw)

    @cached_property
    def command(self) -> str:
        """The CLI command that produces the records (``Plan.command()``; the memory check is the run's own)."""
        return self.plan(available_mb=math.inf).command()

    def verdict(self, records: Iterable[Record]) -> Verdict:
        """This claim judged on ``records`` (any experiments; the judge picks what it needs)."""
        return self.judge(select.dedupe(records), self)


# ---------------------------------------------------------------------------------------------------------------------
# helpers over records (each judge gets ``select.dedupe``d records: one per variant, configuration and machine)

def _ok(records: Sequence[Record], experiment: str, variant: str | None = None, metric: str | None = None):
    """Successful records, the preferred first (``select.rank``)."""
    return sorted((r for r in records if r.experiment == experiment and r.ok
                   and (variant is None or r.variant == variant) and (metric is None or metric in r.metrics)),
                  key=select.rank)


def _any(records: Sequence[Record], experiment: str, variant: str | None = None):
    return sorted((r for r in records if r.experiment == experiment and (variant is None or r.variant == variant)),
                  key=select.rank)


def _spot(r: Record, ignore: Sequence[str] = ()) -> tuple[str, str, str]:
    """Where a record stands: configuration (without ``ignore``), device, machine. Equal spots: comparable."""
    return select.config_key(r, ignore), select.device_of(r), select.machine_key(r)


def _prefer_here(items: list, spot: Callable[[Any], tuple[str, str]], local: Callable[[Any], bool]) -> list:
    """Where this machine's store has an item at a configuration and device, other machines' items there go."""
    here = {spot(x) for x in items if local(x)}
    return [x for x in items if local(x) or spot(x) not in here]


def _describe(params: Mapping, device: str) -> str:
    """A configuration in words, as every table caption says it (``format.fmt_params``), plus data set and device."""
    parts = [fmt.fmt_params(dict(params))]
    if "dataset" in params:
        parts.append(f"dataset {params['dataset']}" + (f", {params['epochs']} epochs" if "epochs" in params else ""))
    parts.append(device)
    return ", ".join(p for p in parts if p)


def _where(r: Record) -> str:
    """"" for this machine's record, else whose it is: " [bundled from <machine>]"."""
    return "" if r.source == "local" else f" [{select.origin(r)}]"


def _at_record(r: Record, ignore: Sequence[str] = ()) -> str:
    """One record's configuration, device and origin: "rnn, 3x128, ..., CPU [bundled from ...]"."""
    return _describe(select.config_of(r, ignore), select.device_of(r)) + _where(r)


def _device_ok(r: Record, device: str) -> bool:
    return device == "any" or select.device_of(r) == device


def _no_gpu_here(records: Sequence[Record]) -> bool:
    """True when the records show a machine without a GPU (and none with one)."""
    envs = [r.env for r in records if r.source == "local"] or [r.env for r in records]
    return bool(envs) and not any(e.get("gpu") or str(e.get("device", "")).upper() == "GPU" for e in envs)


def _not_measured(claim: Claim, what: str) -> Verdict:
    return Verdict(Status.NOT_MEASURED, what, f"no usable records yet; run: {claim.command}")


def _gpu_guard(records: Sequence[Record], claim: Claim, cpu_text: str = "") -> Verdict | None:
    """For a GPU claim without GPU records: "not measurable here" (CPU-only machine) or "not measured"."""
    if any(select.device_of(r) == "GPU" and r.ok for r in records if r.experiment == claim.experiment):
        return None
    if _no_gpu_here(records):
        whose = "this machine has no GPU" if any(r.source == "local" for r in records) else \
            "the stored records' machines have none"
        return Verdict(Status.NOT_MEASURABLE,
                       f"no GPU records; {whose}" + (f" ({cpu_text})" if cpu_text else ""),
                       "the seed's figure is about a GPU: import GPU records (python -m rnnlab import FILE) or run "
                       f"on a machine with one: {claim.command}")
    return _not_measured(claim, "no GPU records")


@dataclass
class _Pair:
    params: dict  # select.config_of
    device: str
    machine: str  # select.machine_key: both records' (they are never from two machines)
    a: Record
    b: Record

    @property
    def spot(self) -> tuple[str, str]:
        return select.config_key(self.params), self.device


def _pairs(records: Sequence[Record], experiment: str, a: str, b: str, *, device: str = "any",
           metric: str | None = None) -> list[_Pair]:
    """Records of variants ``a`` and ``b`` at one configuration and device on one machine (``select.groups``);
    where this machine has the pair, other machines' (bundled, imported) pairs of that configuration are left out."""
    recs = [r for r in records if r.experiment == experiment and r.ok and r.variant in (a, b)
            and (metric is None or metric in r.metrics) and _device_ok(r, device)]
    out = [_Pair(dict(g.config), g.device, g.machine, g.records[a], g.records[b])
           for g in select.groups(recs) if a in g.records and b in g.records]
    out = _prefer_here(out, lambda p: p.spot, lambda p: p.a.source == "local")
    return sorted(out, key=lambda p: (p.device, select.config_key(p.params), p.machine))


def _focus(pairs: list, seed_cfg: Mapping | None) -> tuple[list, bool]:
    """The pairs at the seed's configuration if any, else all of them; and whether they are the seed's."""
    at_seed = [p for p in pairs if seeds.matches(p.params, seed_cfg)]
    return (at_seed, True) if at_seed else (pairs, False)


def _at(p: _Pair, at_seed: bool, seed_cfg: Mapping | None) -> str:
    cfg = _describe(p.params, p.device)
    if at_seed:
        return f"at the seed's configuration ({cfg}){_where(p.a)}"
    return f"at {cfg}{'' if seed_cfg is None else ' (not the seed configuration)'}{_where(p.a)}"


def _others(pairs: list, focus: list, test: Callable[[_Pair], bool]) -> str:
    rest = [p for p in pairs if p not in focus]
    if not rest:
        return ""
    k = sum(bool(test(p)) for p in rest)
    return f" Other configurations measured: it holds in {k} of {len(rest)}."


_METRIC_WORDS = {"fwd_ms": "forward", "train_ms": "train step", "peak_mem_mb": "peak memory", "build_s": "build",
                 "graph_nodes": "graph nodes", "epoch_s": "epoch"}
_UNITS = {"fwd_ms": " ms", "train_ms": " ms", "peak_mem_mb": " MB", "build_s": " s", "graph_nodes": "",
          "epoch_s": " s"}


def _val(metric: str, v: float | None) -> str:
    """A metric's value with its unit, formatted as every table formats it."""
    return fmt.fmt_metric(metric, v) + _UNITS.get(metric, "")


_interval = findings.interval  # a/b of a metric with its interval (core.stats.ratio_interval over the rounds)


NOISY = rules.NOISY


def _call(iv: Interval | None, at_least: float = rules.MARGIN) -> str:
    """``rules.call`` on an interval; no ratio (a metric missing or zero on the losing side) does not hold."""
    return rules.call(iv, at_least) if iv is not None else Status.DOES_NOT_HOLD


def _interval_text(names: str, iv: Interval | None) -> str:
    """"dynamic_rnn/static_rnn 0.80x (0.75–0.86) from the timed steps' quartiles" ("" without a known spread)."""
    if iv is None or not iv.known:
        return ""
    return f"{names} {fmt.fmt_ratio_cell(iv)} {fmt.interval_words(iv)}"


def _compare_text(metric: str, win_name: str, lose_name: str, win: Record, lose: Record,
                  iv: Interval | None = None, call: str = "") -> str:
    """"forward static_rnn 4.92 ms vs dynamic_rnn 6.89 ms (dynamic_rnn 1.40x slower than static_rnn (1.21–1.62x)
    from 40 paired windows)": the words are ``core.wording``'s, decided by the interval alone."""
    w, l = win.metrics[metric], lose.metrics[metric]
    kind = "memory" if metric == "peak_mem_mb" else "size" if metric == "graph_nodes" else "time"
    phrase = wording.difference(iv, kind=kind) if iv is not None else None
    how = fmt.interval_words(iv)
    rel = f"{win_name} {phrase.against(lose_name)}{' ' + how if how else ''}" if phrase else \
        f"{win_name}/{lose_name} {fmt.fmt_ratio(w / l) if l > 0 else fmt.MISSING}, no interval known"
    return f"{_METRIC_WORDS.get(metric, metric)} {lose_name} {_val(metric, l)} vs {win_name} {_val(metric, w)} ({rel})"


def _noise_note(call: str) -> str:
    """What a "too noisy to call" comparison adds after its interval ("" for any other call)."""
    return f", reaching across the {fmt.fmt_percent(rules.MARGIN)} margin: too noisy to call" if call == NOISY else ""


def _speed_claim(records, claim: Claim, *, experiment: str, winner: str, loser: str, metrics: Sequence[str],
                 seed_cfg: Mapping | None, at_least: float = rules.MARGIN, names: tuple[str, str] | None = None,
                 why_holds: str, why_not: str, why_depends: str = "") -> Verdict:
    """``winner`` beats ``loser`` by ``at_least`` in each of ``metrics`` (``rules.call`` on the interval of
    winner/loser, ``stats.ratio_interval``) -- negative ``at_least`` means "not more than that much worse"."""
    if claim.device == "GPU":
        g = _gpu_guard(records, claim)
        if g is not None:
            return g
    pairs = []
    for m in metrics:
        pairs += [(m, p) for p in _pairs(records, experiment, winner, loser, device=claim.device, metric=m)]
    if not pairs:
        return _not_measured(claim, f"no {experiment} records with both {winner} and {loser}"
                             + ("" if claim.device == "any" else f" on {claim.device}"))
    by_cfg: dict[int, list] = {}
    uniq: list[_Pair] = []
    for m, p in pairs:
        for i, q in enumerate(uniq):
            if q.a.key == p.a.key and q.b.key == p.b.key:
                by_cfg.setdefault(i, []).append(m)
                break
        else:
            uniq.append(p)
            by_cfg.setdefault(len(uniq) - 1, []).append(m)
    focus, at_seed = _focus(uniq, seed_cfg)
    wn, ln = names or (winner, loser)
    outcomes, parts, per_metric = [], [], {}

    def sides(p: _Pair) -> tuple[Record, Record]:
        return (p.a, p.b) if p.a.variant == winner else (p.b, p.a)

    def called(p: _Pair, m: str) -> tuple[str, Interval | None]:
        w, l = sides(p)
        iv = _interval(w, l, m)
        return _call(iv, at_least), iv

    for p in focus:
        i = uniq.index(p)
        texts = []
        w, l = sides(p)
        for m in by_cfg[i]:
            call, iv = called(p, m)
            outcomes.append(call)
            per_metric.setdefault(_METRIC_WORDS.get(m, m), []).append(call)
            texts.append(_compare_text(m, wn, ln, w, l, iv, call))
        parts.append(f"{_at(p, at_seed, seed_cfg)}: " + "; ".join(texts))

    def holds(p: _Pair) -> bool:
        return all(called(p, m)[0] == Status.HOLDS for m in by_cfg[uniq.index(p)])

    status = rules.combine(outcomes)
    measured = ". ".join(parts) + "." + _others(uniq, focus, holds)
    split = ""
    if status in (Status.DEPENDS, NOISY) and len(per_metric) > 1:
        yes = [k for k, v in per_metric.items() if all(x == Status.HOLDS for x in v)]
        no = [k for k, v in per_metric.items() if all(x == Status.DOES_NOT_HOLD for x in v)]
        noisy = [k for k, v in per_metric.items() if NOISY in v]
        if yes and no:
            split = f"It holds for the {' and '.join(yes)} but not for the {' and '.join(no)}. "
        elif noisy and (yes or no):
            split = (f"It {'holds' if yes else 'does not hold'} for the {' and '.join(yes or no)}; the "
                     f"{' and '.join(noisy)} is too noisy to call. ")
    if status == NOISY:
        why = split + (_WHY_NOISY[:1].upper() + _WHY_NOISY[1:] if split else _WHY_NOISY)
    else:
        why = {Status.HOLDS: why_holds, Status.DOES_NOT_HOLD: why_not}.get(status) or (
            split + (why_depends or "the measures or configurations disagree (see measured)"))
    return Verdict(status, measured, why)


_WHY_NOISY = (f"the interval of a ratio reaches across the {fmt.fmt_percent(rules.MARGIN)} margin (see measured): the "
              "rounds, or the timed steps within a round, disagree too much to decide. More rounds, more repeats or a "
              "quieter machine would call it.")


# ---------------------------------------------------------------------------------------------------------------------
# judges, one per claim (each gets the deduplicated records and its Claim)

_STATIC, _DYN = "tf1_static", "tf1_dynamic"
_MARGIN = fmt.fmt_percent(rules.MARGIN)  # "10%", as the texts say it


def _j_memory(records, c):
    return _speed_claim(
        records, c, experiment="unroll", winner=_DYN, loser=_STATIC, metrics=("peak_mem_mb",), seed_cfg=seeds.SEED_000,
        names=("dynamic_rnn", "static_rnn"),
        why_holds="dynamic_rnn keeps one step's graph and a TensorArray; static_rnn's unrolled graph holds every "
                  "step's intermediates for the backward pass at once. (On CPU, peak memory is the worker's RSS "
                  "high-water mark over building, forward and training steps, above TensorFlow's own baseline.)",
        why_not="the unrolled graph does not cost meaningfully more memory here: both keep every step's activations "
                "for the backward pass (a while_loop stacks them in TensorArrays), so the difference is the graph "
                "itself. (On CPU, peak memory is the worker's RSS high-water mark above TensorFlow's own baseline; "
                "the seed's figure is most likely GPU memory.)")


def _j_memory_long(records, c):
    # static/dynamic peak memory per sequence length, one series per configuration (but seq_len), device and machine
    recs = [r for r in _ok(records, "unroll", metric="peak_mem_mb")
            if r.variant in (_STATIC, _DYN) and r.params.get("lengths", "full") == "full"]
    found = []
    for g in select.series(recs, "seq_len"):
        pts = []
        for t in sorted({r.params["seq_len"] for r in g.records.values()}):
            s, d = g.records.get(f"{_STATIC}@{t}"), g.records.get(f"{_DYN}@{t}")
            iv = _interval(s, d, "peak_mem_mb") if s is not None and d is not None else None
            if iv is not None:
                pts.append((int(t), iv, s.metrics["peak_mem_mb"], d.metrics["peak_mem_mb"]))
        if len(pts) >= 2:
            found.append((g, pts))
    found = _prefer_here(found, lambda x: (select.config_key(x[0].config), x[0].device),
                         lambda x: x[0].source == "local")
    if not found:
        return _not_measured(c, "static_rnn and dynamic_rnn peak memory at fewer than two sequence lengths of one "
                                "configuration")
    outcomes, parts = [], []
    for g, pts in found:
        first_r, last_r = pts[0][1].mid, pts[-1][1].mid
        grows = last_r > 1 + rules.MARGIN and last_r >= first_r * (1 + rules.MARGIN)
        outcomes.append(grows)
        first = next(iter(g.records.values()))
        parts.append(f"{_describe(g.config, g.device)}{_where(first)}: "
                     + ", ".join(f"{t} steps static {_val('peak_mem_mb', s)} vs dynamic {_val('peak_mem_mb', d)}"
                                 for t, _, s, d in pts)
                     + f" (static/dynamic {fmt.fmt_ratio_cell(pts[0][1])} at {pts[0][0]} steps, "
                       f"{fmt.fmt_ratio_cell(pts[-1][1])} at {pts[-1][0]})")
    status = rules.aggregate(outcomes)
    return Verdict(status, "; ".join(parts) + ".",
                   "static_rnn's extra memory grows with the number of unrolled steps" if status == Status.HOLDS else
                   "static_rnn's memory relative to dynamic_rnn's does not grow with sequence length here: both "
                   "store every step's activations for the backward pass" if status == Status.DOES_NOT_HOLD else
                   "the trend differs between configurations (see measured)")


def _j_speed(records, c):
    gpu = c.device == "GPU"
    return _speed_claim(
        records, c, experiment="unroll", winner=_DYN, loser=_STATIC, metrics=("fwd_ms", "train_ms"),
        seed_cfg=seeds.SEED_000, names=("dynamic_rnn", "static_rnn"),
        why_holds="dynamic_rnn's while_loop is faster here than the unrolled graph"
                  + (" on the GPU" if gpu else "") + ", as the seed says.",
        why_not="static_rnn is as fast or faster here: with the whole sequence unrolled the runtime can overlap "
                "independent ops and there is no per-iteration loop overhead (frame bookkeeping, TensorArray reads "
                "and writes), so the seed's 'dynamic is faster' does not carry over to this TensorFlow/device.",
        why_depends="A forward pass and a training step (forward, backward through the loop, Adam) stress different "
                    "things: the backward pass of a while_loop reads every step back from TensorArrays, the "
                    "unrolled graph has it all in place.")


def _j_graph(records, c):
    return _speed_claim(
        records, c, experiment="unroll", winner=_DYN, loser=_STATIC, metrics=("graph_nodes",), seed_cfg=seeds.SEED_000,
        at_least=0.5, names=("dynamic_rnn", "static_rnn"),
        why_holds="static_rnn adds every time step's ops to the graph (graph_nodes grows with seq_len); the "
                  "while_loop body counts once.",
        why_not="the graphs are of similar size here")


def _j_build(records, c):
    return _speed_claim(
        records, c, experiment="unroll", winner=_DYN, loser=_STATIC, metrics=("build_s",), seed_cfg=seeds.SEED_000,
        names=("dynamic_rnn", "static_rnn"),
        why_holds="building an unrolled graph creates every step's ops in Python; the while_loop builds one body.",
        why_not="building is not meaningfully slower for static_rnn here (short sequences build fast either way).")


def _j_not_slower(records, c):
    return _speed_claim(
        records, c, experiment="unroll", winner=_DYN, loser=_STATIC, metrics=("fwd_ms", "train_ms"),
        seed_cfg=seeds.SEED_000, at_least=-rules.MARGIN, names=("dynamic_rnn", "static_rnn"),
        why_holds=f"dynamic_rnn is faster, or slower by less than the noise ({_MARGIN}, or overlapping quartiles of "
                  "the timed steps).",
        why_not=f"static_rnn is faster here, past the {_MARGIN} margin: the unrolled graph avoids the while_loop's "
                "per-iteration overhead.",
        why_depends="Where dynamic_rnn falls behind, it is the while_loop's per-iteration overhead (frame bookkeeping, "
                    "TensorArray reads and writes) that the unrolled graph does not pay.")


def _j_short_static(records, c):
    short = [r for r in records if r.experiment != "unroll" or int(r.params.get("seq_len", 10**6)) <= 25]
    return _speed_claim(
        short, c, experiment="unroll", winner=_STATIC, loser=_DYN, metrics=("fwd_ms", "train_ms"), seed_cfg=None,
        at_least=-rules.MARGIN, names=("static_rnn", "dynamic_rnn"),
        why_holds=f"for short sequences (<= 25 steps) static_rnn is at least as fast as dynamic_rnn (within "
                  f"{_MARGIN}), so choosing it costs nothing.",
        why_not=f"even for short sequences static_rnn is slower than dynamic_rnn here, past the {_MARGIN} margin.")


def _j_keras(records, c):
    a = _speed_claim(records, c, experiment="unroll", winner="keras", loser=_DYN, metrics=("fwd_ms", "train_ms"),
                     seed_cfg=seeds.SEED_000, names=("Keras layer", "dynamic_rnn"), why_holds="", why_not="")
    b = _speed_claim(records, c, experiment="unroll", winner="keras", loser=_STATIC, metrics=("fwd_ms", "train_ms"),
                     seed_cfg=seeds.SEED_000, names=("Keras layer", "static_rnn"), why_holds="", why_not="")
    if a.status == Status.NOT_MEASURED or b.status == Status.NOT_MEASURED:
        return _not_measured(c, "no unroll records with keras, tf1_dynamic and tf1_static at one configuration")
    st = rules.combine([a.status, b.status])
    why = {Status.HOLDS: "the Keras 3 layer (on CPU the generic loop, on a GPU cuDNN where eligible) beats both TF1 paths "
                    f"by {_MARGIN} or more.",
           Status.DOES_NOT_HOLD: f"the Keras 3 layer is not faster than the TF1 paths here by the {_MARGIN} margin; on a CPU it has no "
                            "fused kernel (cuDNN is GPU-only), so it runs a while_loop much like dynamic_rnn.",
           NOISY: _WHY_NOISY,
           }.get(st, "faster than one TF1 path or in one measure, not in all (see measured)")
    return Verdict(st, f"vs dynamic_rnn: {a.measured} vs static_rnn: {b.measured}", why)


def _j_static_varlen(records, c):
    st = [r for r in _ok(records, "varlen", "tf1_static") if "checks_passed" in r.metrics]
    if not st:
        failed = [r for r in _any(records, "varlen", "tf1_static") if not r.ok]
        if failed:
            return Verdict(Status.HOLDS, f"static_rnn with sequence_length failed{_where(failed[0])}: {failed[0].error}",
                           "static_rnn could not take the lengths here.")
        return _not_measured(c, "no varlen record for tf1_static")
    nolen = {_spot(r): r for r in reversed(_ok(records, "varlen", "tf1_static_nolen", "final_state_err"))}
    outcomes, parts = [], []
    for r in st:
        ok = r.metrics["checks_passed"] >= 3
        outcomes.append(not ok)
        part = (f"{_at_record(r)}: static_rnn(sequence_length=...) passed {int(r.metrics['checks_passed'])}/3 checks "
                f"(outputs zero past the length, state carried, final state = last real step), final state "
                f"{fmt.fmt_diff(r.metrics.get('final_state_err'))} from the float64 reference with lengths")
        n = nolen.get(_spot(r))  # the same configuration on the same machine
        if n is not None:
            part += f"; without sequence_length its final state drifts by " \
                    f"{fmt.fmt_diff(n.metrics['final_state_err'])}"
        parts.append(part)
    status = rules.aggregate(outcomes)
    return Verdict(status, "; ".join(parts) + ".",
                   "static_rnn takes sequence_length (as tf.nn.rnn did): it zeroes outputs past each row's length "
                   "and carries the state, exactly like dynamic_rnn; what it cannot take is a sequence longer than "
                   "the steps it was unrolled for." if status == Status.DOES_NOT_HOLD else
                   "static_rnn did not handle the lengths correctly here." if status == Status.HOLDS else
                   "it handled the lengths in some configurations only (see measured)")


def _loop_steps(records, variant):
    return [r for r in _ok(records, "seed003", variant)
            if "cell_steps_run" in r.metrics and "loop_steps_max" in r.metrics]


def _j_dynamic_skips(records, c):
    rs = _loop_steps(records, "dynamic")
    if not rs:
        return _not_measured(c, "no seed003 record for dynamic with cell_steps_run")
    outcomes, parts = [], []
    for r in rs:
        ran, mx, t = r.metrics["cell_steps_run"], r.metrics["loop_steps_max"], int(r.params.get("seq_len", 0))
        outcomes.append(ran <= mx < t)
        parts.append(f"{_at_record(r)}: dynamic_rnn ran {int(ran)} cell steps per forward pass "
                     f"for sequences padded to {t} steps whose longest row is {int(mx)}")
    st = rules.aggregate(outcomes)
    return Verdict(st, "; ".join(parts) + ".",
                   "dynamic_rnn's while_loop stops at max(sequence_length) of the batch, so the padded tail past "
                   "the longest row is never computed. Shorter rows inside the batch still run every step up to "
                   "the longest (their state is copied through), so padding within a batch is computed; only "
                   "bucketing by length avoids that." if st == Status.HOLDS else
                   "the while_loop ran past the longest row: the padding is computed." if st == Status.DOES_NOT_HOLD
                   else "it stopped early in some configurations only (see measured)")


def _j_seqlen_correctness(records, c):
    base = _j_dynamic_skips(records, c)
    if base.status == Status.NOT_MEASURED:
        return base
    inv = {Status.HOLDS: Status.DOES_NOT_HOLD, Status.DOES_NOT_HOLD: Status.HOLDS}.get(base.status, base.status)
    extra = ""
    # unroll records: tf1_dynamic with lengths vs full at an otherwise equal configuration, on the same machine
    dyn = _ok(records, "unroll", _DYN, "fwd_ms")
    full = {_spot(r, ("lengths",)): r for r in reversed(dyn) if r.params.get("lengths", "full") == "full"}
    for r in dyn:
        f = full.get(_spot(r, ("lengths",)))
        if r.params.get("lengths", "full") != "full" and f is not None:
            extra += (f" unroll {_at_record(f, ('lengths',))}: dynamic_rnn forward "
                      f"{_val('fwd_ms', f.metrics['fwd_ms'])} with full lengths vs "
                      f"{_val('fwd_ms', r.metrics['fwd_ms'])} with lengths {r.params['lengths']}.")
    why = ("in this TensorFlow dynamic_rnn's sequence_length is also a performance feature: its while_loop stops at "
           "the batch's longest row, so it saves the padded steps past it (the old documentation's 'more for "
           "correctness than performance' was written against the per-row cost: rows shorter than the longest are "
           "still stepped, with their state copied through)." if inv == Status.DOES_NOT_HOLD else
           "sequence_length did not shorten dynamic_rnn's loop here: it only affects correctness.")
    return Verdict(inv, base.measured + extra, why)


def _j_static_seqlen_skip(records, c):
    rs = _loop_steps(records, "static")
    if not rs:
        return _not_measured(c, "no seed003 record for static with cell_steps_run")
    outcomes, parts = [], []
    for r in rs:
        ran, mx, t = r.metrics["cell_steps_run"], r.metrics["loop_steps_max"], int(r.params.get("seq_len", 0))
        outcomes.append(ran <= mx < t)
        parts.append(f"{_at_record(r)}: static_rnn with sequence_length ran {int(ran)} cell steps "
                     f"per forward pass of the {t} it built (longest row {int(mx)})")
    st = rules.aggregate(outcomes)
    return Verdict(st, "; ".join(parts) + ".",
                   "static_rnn wraps each step past the batch's longest row in a cond that skips the cell: the "
                   "steps are built (graph size and build time still grow with seq_len) but not computed." if
                   st == Status.HOLDS else "static_rnn computed past the longest row here." if st == Status.DOES_NOT_HOLD
                   else "see measured")


def _j_dynamic_no_skip(records, c):
    base = _j_dynamic_skips(records, c)
    if base.status == Status.NOT_MEASURED:
        return base
    inv = {Status.HOLDS: Status.DOES_NOT_HOLD, Status.DOES_NOT_HOLD: Status.HOLDS}.get(base.status, base.status)
    rows = str(seeds.SEED_003["lengths"]).split(":")[-1]
    return Verdict(inv, base.measured,
                   "the seed's inference does not hold in this TensorFlow: dynamic_rnn stops at the longest row of "
                   f"the batch (all rows are {rows} long in its benchmark), so it computes only the first n steps. "
                   "Its slow dynamic_rnn is better explained by per-iteration loop overhead (see the seed003 "
                   "experiment's verdict)." if inv == Status.DOES_NOT_HOLD else base.why)


def _j_ref_lstm(records, c):
    rs = [r for r in _ok(records, "unroll", _DYN, "ref_abs_diff") if r.params.get("cell") == "lstm"]
    if not rs:
        others = _ok(records, "unroll", _DYN, "ref_abs_diff")
        return _not_measured(c, "no unroll record of tf1_dynamic with cell=lstm"
                             + (" (other cells: ref_abs_diff "
                                + ", ".join(fmt.fmt_diff(r.metrics["ref_abs_diff"]) for r in others) + ")"
                                if others else ""))
    outcomes = [rules.agrees(r.metrics["ref_abs_diff"]) for r in rs]
    parts = [f"{_at_record(r)}: max |dynamic_rnn - float64 NumPy LSTM| = "
             f"{fmt.fmt_diff(r.metrics['ref_abs_diff'])} over outputs and final states" for r in rs]
    st = rules.aggregate(outcomes)
    return Verdict(st, "; ".join(parts) + ".",
                   f"BasicLSTMCell + dynamic_rnn agrees with a textbook LSTM to float32 rounding (<= {rules.ATOL:g}), "
                   "given BasicLSTMCell's conventions: gate order i, j, f, o in one kernel over [x, h], forget_bias "
                   "1.0 added to the forget gate, no peepholes or projection. No approximation." if st == Status.HOLDS else
                   f"the difference exceeds {rules.ATOL:g} (see measured)" if st == Status.DOES_NOT_HOLD else "see measured")


def _knob_pair(records, c, winner, loser, metrics, names, why_holds, why_not, at_least=rules.MARGIN):
    return _speed_claim(records, c, experiment="knobs", winner=winner, loser=loser, metrics=metrics,
                        seed_cfg=seeds.SEED_000, names=names, at_least=at_least, why_holds=why_holds, why_not=why_not)


def _j_pi(records, c):
    v = _knob_pair(records, c, "dynamic_default", "dynamic_pi1", ("fwd_ms", "train_ms"),
                   ("parallel_iterations=32", "parallel_iterations=1"),
                   why_holds="overlapping iterations helps here; note 32 is dynamic_rnn's default, so writing it "
                             "out changes nothing.",
                   why_not="an RNN step depends on the previous one, so iterations cannot overlap much: "
                           "parallel_iterations only lets independent work (input projections, gradient "
                           "accumulation) run ahead. And 32 is already dynamic_rnn's default: setting it changes "
                           "nothing.")
    if v.status == Status.NOT_MEASURED:
        return v
    # parallel_iterations=128 beside the judged pairs: at the same configuration, on the same machine
    judged = {(p.spot, p.machine) for m in ("fwd_ms", "train_ms")
              for p in _focus(_pairs(records, "knobs", "dynamic_default", "dynamic_pi1", metric=m),
                              seeds.SEED_000)[0]}
    hi = [p for p in _pairs(records, "knobs", "dynamic_pi128", "dynamic_default", metric="fwd_ms")
          if (p.spot, p.machine) in judged]
    if hi:
        p = hi[0]
        a = p.a if p.a.variant == "dynamic_pi128" else p.b
        b = p.b if a is p.a else p.a
        v = Verdict(v.status, v.measured + f" parallel_iterations=128: forward {_val('fwd_ms', a.metrics['fwd_ms'])}"
                    + (f", train step {_val('train_ms', a.metrics['train_ms'])}" if "train_ms" in a.metrics else "")
                    + f" (vs {_val('fwd_ms', b.metrics['fwd_ms'])} at 32).", v.why)
    return v


def _j_swap(records, c):
    cpu = _pairs(records, "knobs", "dynamic_swap", "dynamic_default", metric="peak_mem_mb", device="CPU")
    cpu_text = ""
    if cpu:
        p = cpu[0]
        s = p.a if p.a.variant == "dynamic_swap" else p.b
        d = p.b if s is p.a else p.a
        cpu_text = (f"on CPU{_where(s)} swap_memory=True: peak {_val('peak_mem_mb', s.metrics['peak_mem_mb'])}, "
                    f"train step {_val('train_ms', s.metrics.get('train_ms'))} vs off: "
                    f"{_val('peak_mem_mb', d.metrics['peak_mem_mb'])}, {_val('train_ms', d.metrics.get('train_ms'))}"
                    " -- on a CPU there is no device memory to swap from")
    g = _gpu_guard(records, c, cpu_text)
    if g is not None:
        return g
    return _knob_pair(records, c, "dynamic_swap", "dynamic_default", ("peak_mem_mb",),
                      ("swap_memory=True", "swap_memory=False"),
                      why_holds="with swap_memory=True the while_loop's stacked activations go to host memory "
                                "between the forward and backward pass, lowering GPU peak memory.",
                      why_not=f"GPU peak memory did not drop by {_MARGIN}: TensorFlow swaps only when it decides to, "
                              "and at this size the activations are small next to the rest.")


def _j_time_major(records, c):
    return _knob_pair(records, c, "dynamic_default", "dynamic_time_major", ("fwd_ms", "train_ms"),
                      ("time_major=False", "time_major=True"),
                      why_holds="batch-major input was faster here.",
                      why_not="time_major=False is no speed-up: dynamic_rnn works time-major inside and transposes "
                              "batch-major input (and its outputs) for you; TensorFlow's own documentation calls "
                              "time_major=True 'a bit more efficient'. Use batch-major for convenience, not speed.")


def _j_unstack(records, c):
    rs = [r for r in _ok(records, "knobs", "static_first_n") if "seed_code_runs" in r.metrics]
    if not rs:
        return _not_measured(c, "no knobs record for static_first_n")
    # the seed's configuration (its num of its steps) first, then one with a static_full beside it (same machine)
    fulls = {_spot(f, ("first_n",)): f for f in reversed(_ok(records, "knobs", "static_full"))}
    num = seeds.SEED_000_FIGURES["unstack_num"]
    rs.sort(key=lambda r: (not seeds.matches(r.params, {**seeds.SEED_000, "first_n": num}),
                           _spot(r, ("first_n",)) not in fulls))
    r = rs[0]
    f = fulls.get(_spot(r, ("first_n",)))
    n = r.params.get("first_n", r.details.get("first_n", "N"))
    t = r.params.get("seq_len")
    parts = []
    runs = r.metrics["seed_code_runs"] >= 1
    err = r.details.get("seed_code_error") or ""
    parts.append(f"{_at_record(r, ('first_n',))}: the seed's line tf.unstack(inputs, num={n}, "
                 f"axis=1) on {t} steps " + ("runs" if runs else f"fails: {err.rstrip('.')}"))
    if f is not None:
        for m in ("peak_mem_mb", "graph_nodes", "build_s", "train_ms"):
            if m in r.metrics and m in f.metrics:
                parts.append(f"{_METRIC_WORDS.get(m, m)}: full {t} steps {_val(m, f.metrics[m])} vs "
                             f"first {n} (sliced, then unstacked) {_val(m, r.metrics[m])}")
    if "final_state_vs_full" in r.metrics:
        parts.append("final state differs from the full sequence's by up to "
                     f"{fmt.fmt_diff(r.metrics['final_state_vs_full'])}")
    iv = _interval(r, f, "peak_mem_mb") if f is not None else None
    saved = _call(iv) == Status.HOLDS
    if not runs:
        st = Status.DOES_NOT_HOLD
        why = ("as written the line raises: with a known time axis tf.unstack checks num against it ('Dimension "
               f"must be {num} but is {seeds.SEED_000['seq_len']}'), and with an unknown one it fails when run. What "
               "works is slicing first, tf.unstack(inputs[:, :N], axis=1); that "
               + ("does save memory" if saved else "saves little memory here")
               + ", but it is a different model: steps after N are never seen.")
    else:
        st = Status.DEPENDS if saved else Status.DOES_NOT_HOLD
        why = ("it saves memory only by computing something else: the steps after N are dropped." if saved else
               "it does not save meaningful memory here, and it drops the steps after N.")
    return Verdict(st, "; ".join(parts) + ".", why)


def _j_mixed(records, c):
    rs = _any(records, "precision", "tf1_dynamic_policy")
    if not rs:
        return _not_measured(c, "no precision record for tf1_dynamic_policy")
    r = sorted(rs, key=lambda r: not r.ok)[0]  # a successful record first, then select.rank
    if not r.ok:
        return Verdict(Status.DOES_NOT_HOLD, f"under a mixed_float16 global policy dynamic_rnn failed{_where(r)}: "
                                        f"{r.error}", "the policy breaks the TF1 graph instead of applying to it.")
    runs = r.metrics.get("policy_runs", 0) >= 1
    f16 = int(r.metrics.get("policy_float16_matmuls", 0))
    f32 = int(r.metrics.get("policy_float32_matmuls", 0))
    measured = (f"{_at_record(r)}: after tf.keras.mixed_precision.set_global_policy('mixed_float16'),"
                f" dynamic_rnn {'ran' if runs else 'failed: ' + str(r.details.get('policy_error', ''))}; matmuls in "
                f"its graph: {f16} float16, {f32} float32; output dtype {r.details.get('policy_output_dtype', '?')}")
    # rnnlab's own cast-based float16 dynamic_rnn, at the same configuration on the same machine
    cast = [x for x in _ok(records, "precision", "tf1_dynamic_mixed_float16", "fwd_ms") if _spot(x) == _spot(r)]
    if cast:
        cm = cast[0].metrics
        measured += (f"; an explicit cast-based float16 dynamic_rnn (rnnlab's own) runs forward in "
                     f"{_val('fwd_ms', cm['fwd_ms'])}"
                     + (f", {fmt.fmt_ratio(cm['fwd_vs_float32'])} its float32 time on the same "
                        f"{select.device_of(cast[0])}" if "fwd_vs_float32" in cm else "")
                     + (f", drifting {fmt.fmt_diff(cm['max_abs_diff'])} from float32"
                        if "max_abs_diff" in cm else ""))
    if runs and f16 > 0:
        return Verdict(Status.HOLDS, measured + ".", "the TF1 cells picked up the global policy and computed in float16.")
    return Verdict(Status.DOES_NOT_HOLD, measured + ".",
                   "the global policy applies to Keras layers; the TF1 cells behind dynamic_rnn (legacy tf-keras "
                   "cells, created inside a v1 graph) ignore it and compute in float32, silently. Mixed precision "
                   "with dynamic_rnn needs explicit casts (inputs and weights to float16, a float32 loss); the "
                   "precision experiment's tf1_dynamic_mixed_float16 does that." if runs else
                   "dynamic_rnn does not run under the policy.")


def _j_shared(records, c):
    rs = [r for r in _ok(records, "pitfalls") if r.variant in ("tf1_shared_dynamic", "tf1_shared_static")
          and "wrong_builds_same_dim" in r.metrics]
    if not rs:
        return _not_measured(c, "no pitfalls record for tf1_shared_dynamic or tf1_shared_static")
    parts, outcomes = [], []
    for r in rs:
        m = r.metrics
        shares = m.get("wrong_builds_same_dim", 0) >= 1 and m.get("distinct_kernels_wrong", 1) < \
            m.get("distinct_kernels_right", 0)
        outcomes.append((shares, m.get("wrong_builds_diff_dim", 0) >= 1))
        parts.append(f"{r.variant} ({r.params.get('cell')}, {r.params.get('units')} units){_where(r)}: with "
                     f"input_dim == units it {'builds' if m.get('wrong_builds_same_dim') else 'fails'}"
                     + (f" with {int(m['distinct_kernels_wrong'])} kernel(s) against "
                        f"{int(m['distinct_kernels_right'])} in a correct stack"
                        if "distinct_kernels_wrong" in m else "")
                     + "; with input_dim != units it "
                     + ("builds" if m.get("wrong_builds_diff_dim") else "fails to build"))
    d, u = seeds.SEED_000["input_dim"], seeds.SEED_000["units"]
    if all(s and d_ for s, d_ in outcomes):
        st, why = Status.HOLDS, "one cell object means one set of weights for every layer."
    elif all(s and not d_ for s, d_ in outcomes):
        st, why = Status.DEPENDS, ("the layers do share one set of weights, but only when input_dim == units; otherwise "
                              f"(the seed's own sizes: {d} inputs, {u} units) the first layer builds the kernel for "
                              f"{d} + {u} rows and the second layer's {u} + {u} do not fit: a MatMul shape error, "
                              "not silent sharing.")
    elif not any(s for s, _ in outcomes):
        st, why = Status.DOES_NOT_HOLD, "the shared stack did not end up with shared weights here."
    else:
        st, why = Status.DEPENDS, "it differs between the measured cases (see measured)"
    return Verdict(st, "; ".join(parts) + ".", why)


def _j_state_tuple(records, c):
    rs = [r for r in _ok(records, "pitfalls", "shape_state_is_tuple") if "wrong_builds" in r.metrics]
    if not rs:
        return _not_measured(c, "no pitfalls record for shape_state_is_tuple")
    r = rs[0]
    wrong_fails = r.metrics["wrong_builds"] < 1
    right_ok = r.metrics.get("check_passed", 0) >= 1
    measured = (f"a concatenated [c, h] tensor as an LSTM initial_state: {'fails' if wrong_fails else 'runs'}"
                + (f" ({r.details.get('error_summary') or r.details.get('error_type')})" if wrong_fails else "")
                + f"; LSTMStateTuple(c, h): {'works and matches the reference' if right_ok else 'fails its check'}"
                + f"{_where(r)}.")
    st = Status.HOLDS if wrong_fails and right_ok else Status.DOES_NOT_HOLD
    return Verdict(st, measured, "with state_is_tuple=True (the default) an LSTM state is LSTMStateTuple(c, h); a "
                   "single tensor is refused, with a message that does not mention the state." if st == Status.HOLDS else
                   "the tuple layout was not required here (see measured).")


def _j_input_shape(records, c):
    tm = [r for r in _ok(records, "pitfalls", "shape_time_major") if "wrong_builds" in r.metrics]
    d2 = [r for r in _ok(records, "pitfalls", "shape_2d_input") if "wrong_builds" in r.metrics]
    if not tm and not d2:
        return _not_measured(c, "no pitfalls record for shape_time_major or shape_2d_input")
    parts, outcomes = [], []
    if tm:
        silent = tm[0].metrics["wrong_builds"] >= 1
        outcomes.append(not silent)
        parts.append("time-major data given to a batch-major dynamic_rnn "
                     + ("runs without any error" + (f" (outputs off by up to "
                                                    f"{fmt.fmt_diff(tm[0].metrics['max_abs_diff_vs_correct'])})"
                                                    if "max_abs_diff_vs_correct" in tm[0].metrics else "")
                        if silent else "raises an error") + _where(tm[0]))
    if d2:
        err = d2[0].metrics["wrong_builds"] < 1
        outcomes.append(err)
        parts.append("a 2-D [batch, features] input " + ("raises a shape error" if err else "runs") + _where(d2[0]))
    st = rules.aggregate(outcomes)
    return Verdict(st, "; ".join(parts) + ".",
                   "a wrong rank is caught, but a wrong layout of the right rank is not: dynamic_rnn reads the "
                   "first axis as the batch whatever it holds, so [time, batch, features] data runs silently with "
                   "wrong results. Checking shapes is on you." if st == Status.DEPENDS else
                   "shape mistakes are caught with an error." if st == Status.HOLDS else
                   "shape mistakes run silently.")


def _j_seed003_run(records, c):
    rows = str(seeds.SEED_003["lengths"]).split(":")[-1]
    return _seed003(records, c, "steps_per_s", higher=True,
                    why_holds="static_rnn runs training steps faster once warm.",
                    why_not="once warm static_rnn is not meaningfully faster here; see the seed003 experiment's "
                            f"verdict: both loops stop at the longest row ({rows}), so what separates them is "
                            "per-step overhead, not padding.")


def _j_seed003_build(records, c):
    return _seed003(records, c, "build_s", higher=False,
                    why_holds="building the unrolled graph (every step, and its gradients) takes longer than the "
                              "while_loop's single body; the first steps pay for optimising that big graph too.",
                    why_not="static_rnn is not meaningfully slower to build here.")


_S3 = seeds.SEED_003_FIGURES


def _seed003(records, c, metric, *, higher, why_holds, why_not):
    """Static against dynamic in the seed003 experiment, by ``rules.call`` on the interval of the time ratio (the
    Variable-lengths page asks ``verdict("s003_...", records)`` for the same answer)."""
    pairs = _pairs(records, "seed003", "static", "dynamic", metric=metric)
    if not pairs:
        return _not_measured(c, f"no seed003 records with both static and dynamic {metric}")
    focus, at_seed = _focus(pairs, seeds.SEED_003)
    outcomes, parts = [], []
    for p in focus:
        s = p.a if p.a.variant == "static" else p.b
        d = p.b if s is p.a else p.a
        vs, vd = s.metrics[metric], d.metrics[metric]
        if higher:  # steps/s, a rate: static runs faster when its time per step (dynamic/static of the rate) is lower
            iv = _interval(d, s, metric)
            call = _call(iv)
            rate = _interval(s, d, metric)  # static/dynamic of the rate, as the seed says it
            seed_s, seed_d = _S3["static"]["steps_per_s"], _S3["dynamic"]["steps_per_s"]
            parts.append(f"{_at(p, at_seed, seeds.SEED_003)}: static {fmt.fmt_value(vs)} vs dynamic "
                         f"{fmt.fmt_value(vd)} steps/s once warm (static/dynamic {fmt.fmt_ratio_cell(rate)}"
                         f"{' ' + fmt.interval_words(rate) if rate is not None and rate.known else ''}{_noise_note(call)}; "
                         f"the seed: {fmt.fmt_value(seed_s)} vs {fmt.fmt_value(seed_d)}, "
                         f"{fmt.fmt_ratio(seed_s / seed_d)})")
        else:  # build seconds: static builds slower, i.e. dynamic saves at least the margin
            iv = _interval(d, s, metric)
            call = _call(iv)
            key = "first_interval_steps_per_s"
            spread = _interval_text("dynamic/static", iv)
            parts.append(f"{_at(p, at_seed, seeds.SEED_003)}: building static {_val('build_s', vs)} vs dynamic "
                         f"{_val('build_s', vd)}{f' ({spread}{_noise_note(call)})' if spread else ''}"
                         + (f"; first interval {fmt.fmt_value(s.metrics[key])} vs {fmt.fmt_value(d.metrics[key])} "
                            f"steps/s (the seed: {fmt.fmt_value(_S3['static'][key])} vs "
                            f"{fmt.fmt_value(_S3['dynamic'][key])})" if key in s.metrics and key in d.metrics
                            else ""))
        outcomes.append(call)
    st = rules.combine(outcomes)
    return Verdict(st, "; ".join(parts) + ".", why_holds if st == Status.HOLDS else why_not if st == Status.DOES_NOT_HOLD
                   else _WHY_NOISY if st == NOISY else "the configurations disagree (see measured)")


def _j_cudnn(records, c):
    rs = [r for r in _ok(records, "migrate", "seed004_construct") if "cudnn_eligible" in r.metrics]
    if not rs:
        return _not_measured(c, "no migrate record for seed004_construct")
    r = rs[0]
    m = r.metrics
    measured = (f"keras.layers.RNN(tf.compat.v1.nn.rnn_cell.LSTMCell(n)) under Keras 3: call "
                f"{'runs' if m.get('keras3_call_ok') else 'fails'}; cuDNN-eligible by Keras 3's rules: "
                f"{'yes' if m.get('cudnn_eligible') else 'no'}"
                + (f"; trainable weights Keras sees: {int(m['keras3_trainable_weights'])}"
                   if "keras3_trainable_weights" in m else "") + f" ({select.device_of(r)}){_where(r)}.")
    st = Status.HOLDS if m.get("cudnn_eligible") and m.get("keras3_call_ok") else Status.DOES_NOT_HOLD
    return Verdict(st, measured, "keras.layers.RNN(cell) always runs the generic step loop; only keras.layers.LSTM/GRU "
                   "with default activations on a GPU can take the cuDNN kernel, and a TF1 cell is no Keras 3 cell at "
                   "all." if st == Status.DOES_NOT_HOLD else "the construct runs on cuDNN here.")


def _j_tf_function(records, c):
    return _speed_claim(
        records, c, experiment="training", winner="keras", loser="keras_eager", metrics=("epoch_s",),
        seed_cfg=None, names=("tf.function train step", "eager train step"),
        why_holds="a traced train step skips Python and eager op dispatch per op, per time step.",
        why_not="the traced train step is not meaningfully faster here.")

# ---------------------------------------------------------------------------------------------------------------------
# the claims (their runs are plans: ``Claim.plan()``; ``Claim.command`` is the plan's CLI command)

_SAME = object()  # the run measures exactly the claim's variants
_F0 = seeds.SEED_000_FIGURES
_F3 = seeds.SEED_003_FIGURES


def _c(id, seed, section, text, experiment, preset, variants, judge, device="any", *,
       sets: Mapping[str, Any] | None = None, run: Any = _SAME) -> Claim:
    """A claim; ``sets``: the run's parameters over the preset's (a list: a sweep); ``run``: the variants the run
    measures (default the claim's; None: the preset's)."""
    overrides = tuple((k, tuple(v) if isinstance(v, (list, tuple)) else v) for k, v in (sets or {}).items())
    run_variants = tuple(variants) if run is _SAME else None if run is None else tuple(run)
    return Claim(id, seeds.SEED_FILES[seed], section, text, experiment, preset, tuple(variants), judge, device,
                 overrides, run_variants)


def _v(x: float) -> str:
    return fmt.fmt_value(x)


CLAIMS: tuple[Claim, ...] = (
    _c("s000_memory", "000", "3.1", f"static_rnn peak memory {_v(_F0['peak_mb'][_STATIC])} MB vs dynamic_rnn "
       f"{_v(_F0['peak_mb'][_DYN])} MB (dynamic ~30% less)", "unroll", "seed", (_STATIC, _DYN), _j_memory),
    _c("s000_memory_long", "000", "3.1", "dynamic_rnn's memory advantage is largest for long sequences",
       "unroll", "seed", (_STATIC, _DYN), _j_memory_long, sets={"seq_len": [25, 50, 100, 200]}),
    _c("s000_cpu_speed", "000", "3.2", f"dynamic_rnn about 20% faster on CPU (static {_v(_F0['cpu_ms'][_STATIC])} ms "
       f"vs dynamic {_v(_F0['cpu_ms'][_DYN])} ms)", "unroll", "seed", (_STATIC, _DYN), _j_speed, "CPU"),
    _c("s000_gpu_speed", "000", "3.2", f"dynamic_rnn about 28% faster on GPU (static {_v(_F0['gpu_ms'][_STATIC])} ms "
       f"vs dynamic {_v(_F0['gpu_ms'][_DYN])} ms)", "unroll", "seed", (_STATIC, _DYN), _j_speed, "GPU",
       sets={"device": "gpu"}),
    _c("s000_graph_size", "000", "4.2", "static_rnn makes every time step a graph node: large graphs for long "
       "sequences; dynamic_rnn's while_loop keeps the graph small", "unroll", "seed", (_STATIC, _DYN), _j_graph),
    _c("s000_static_no_varlen", "000", "3.3", "static_rnn cannot take variable-length sequences directly (padding "
       "and masking by hand)", "varlen", "quick", ("tf1_static", "tf1_static_nolen"), _j_static_varlen,
       run=("tf1_static", "tf1_static_nolen", "tf1_dynamic")),
    _c("s000_dynamic_skips_padding", "000", "4.1", "dynamic_rnn handles sequence lengths automatically, skipping "
       "the padded part of the computation", "seed003", "seed", ("dynamic",), _j_dynamic_skips),
    _c("s000_parallel_iterations", "000", "5.3", "parallel_iterations=32 increases parallelism (a speed-up for "
       "dynamic_rnn)", "knobs", "seed", ("dynamic_pi1", "dynamic_default", "dynamic_pi128"), _j_pi),
    _c("s000_swap_memory", "000", "5.3", "swap_memory=True lets dynamic_rnn swap GPU memory to the CPU (less GPU "
       "memory)", "knobs", "seed", ("dynamic_default", "dynamic_swap"), _j_swap, "GPU", sets={"device": "gpu"}),
    _c("s000_time_major", "000", "5.3", "time_major=False ((batch, time, features)) is a dynamic_rnn performance "
       "setting", "knobs", "seed", ("dynamic_default", "dynamic_time_major"), _j_time_major),
    _c("s000_unstack_num", "000", "5.3", f"tf.unstack(inputs, num={_F0['unstack_num']}, axis=1) unrolls only the "
       f"first {_F0['unstack_num']} steps and saves static_rnn memory", "knobs", "seed",
       ("static_full", "static_first_n"), _j_unstack),
    _c("s000_shared_cells", "000", "6.1", "MultiRNNCell([cell] * 3) makes all layers share parameters",
       "pitfalls", "quick", ("tf1_shared_dynamic", "tf1_shared_static"), _j_shared),
    _c("s000_input_shape", "000", "6.2", "input shape mistakes show up as dimension errors: feed [batch_size, "
       "time_steps, input_dim]", "pitfalls", "quick", ("shape_time_major", "shape_2d_input"), _j_input_shape),
    _c("s000_state_is_tuple", "000", "6.2", "for LSTMCell make sure state_is_tuple=True (state is (c, h))",
       "pitfalls", "quick", ("shape_state_is_tuple",), _j_state_tuple),
    _c("s000_mixed_precision", "000", "6.3", "with a mixed_float16 global policy dynamic_rnn supports mixed "
       "precision automatically", "precision", "quick", ("tf1_dynamic_policy", "tf1_dynamic_mixed_float16"),
       _j_mixed, run=None),
    _c("s000_short_static", "000", "5.2", "static_rnn is a fine choice for very short, fixed-length sequences",
       "unroll", "quick", (_STATIC, _DYN), _j_short_static),
    _c("s000_keras_faster", "000", "7", "TF2's Keras LSTM/GRU/RNN layers perform better than dynamic_rnn and "
       "static_rnn", "unroll", "seed", (_STATIC, _DYN, "keras"), _j_keras),
    _c("s001_seqlen_correctness", "001", "question", "dynamic_rnn's sequence_length is for correctness, not "
       "performance (unlike rnn())", "seed003", "seed", ("dynamic",), _j_seqlen_correctness),
    _c("s001_static_seqlen_skip", "001", "question", "static rnn() with sequence_length does not compute steps "
       "past the minibatch's longest sequence, saving time", "seed003", "seed", ("static",), _j_static_seqlen_skip),
    _c("s001_ref_lstm", "001", "question", "BasicLSTMCell + dynamic_rnn computes the same as a reference LSTM "
       "(no approximation)", "unroll", "quick", (_DYN,), _j_ref_lstm, sets={"cell": "lstm"}, run=(_DYN, _STATIC)),
    _c("s001_static_build_slow", "001", "answer 1", "static rnn graph creation is slow; dynamic_rnn builds faster",
       "unroll", "seed", (_STATIC, _DYN), _j_build),
    _c("s001_dynamic_not_slower", "001", "answer 1", "dynamic_rnn is as fast as static_rnn or faster",
       "unroll", "seed", (_STATIC, _DYN), _j_not_slower),
    _c("s003_static_runs_faster", "003", "conclusion", "for variable-length batches static_rnn runs faster: "
       f"{_v(_F3['static']['steps_per_s'])} vs {_v(_F3['dynamic']['steps_per_s'])} steps/s once warm "
       f"({fmt.fmt_ratio(_F3['static']['steps_per_s'] / _F3['dynamic']['steps_per_s'])})", "seed003", "seed",
       ("static", "dynamic"), _j_seed003_run, run=None),
    _c("s003_static_builds_slower", "003", "conclusion", "static_rnn builds slower (first 100 steps: "
       f"{_v(_F3['static']['first_interval_steps_per_s'])} vs {_v(_F3['dynamic']['first_interval_steps_per_s'])} "
       "steps/s)", "seed003", "seed", ("static", "dynamic"), _j_seed003_build, run=None),
    _c("s003_dynamic_no_skip", "003", "text", "dynamic_rnn does not compute only the first n steps of a length-n "
       "sequence ('it is not the case')", "seed003", "seed", ("dynamic",), _j_dynamic_no_skip),
    _c("s004_cudnn", "004", "model", "keras RNN(tf.compat.v1 LSTMCell) is cuDNN-based and greatly speeds up "
       "training", "migrate", "seed", ("seed004_construct",), _j_cudnn),
    _c("s004_tf_function", "004", "train_step", "tf.function compiles the train step into an efficient graph: "
       "noticeably faster training", "training", "seed", ("keras", "keras_eager"), _j_tf_function),
)
BY_ID: dict[str, Claim] = {c.id: c for c in CLAIMS}


def get(claim_id: str) -> Claim:
    from rnnlab.core.errors import RnnlabError

    if claim_id not in BY_ID:
        raise RnnlabError(f"unknown claim {claim_id!r}; known: {', '.join(BY_ID)}")
    return BY_ID[claim_id]


def verdict(claim_id: str, records: Iterable[Record]) -> Verdict:
    """One claim judged on ``records`` (the Claims table's verdict for it, on the same records)."""
    return get(claim_id).verdict(records)


def evaluate(records: Iterable[Record], claims: Sequence[Claim] = CLAIMS) -> list[tuple[Claim, Verdict]]:
    """Every claim judged on the same records (typically ``select.combined(store)``)."""
    recs = select.dedupe(records)
    return [(c, c.judge(recs, c)) for c in claims]


def table_rows(results: Sequence[tuple[Claim, Verdict]]) -> list[dict[str, Any]]:
    """Flat rows for tables and exports: id, seed, claim, status, measured, why, command."""
    return [{"id": c.id, "seed": c.seed[:3], "section": c.section, "claim": c.text, "status": v.status,
             "measured": v.measured, "why": v.why, "experiment": c.experiment, "command": c.command}
            for c, v in results]
