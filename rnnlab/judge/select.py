"""Which record stands for a measurement, where it came from, and which records may be compared (pure).

This module is the one home of the read path's choices; claims, findings, the recommendation, the tables, the
charts and the pages ask it and never decide on their own:

- **Configuration.** What a network and its inputs are: the params minus ``PROTOCOL_PARAMS`` (how long or how
  often it is timed) and minus ``device`` (the requested one; the resolved device is part of the machine).
  :func:`config_of`, :func:`config_key`.
- **Machine.** Records are comparable only when they come from one machine: the same origin (this machine's store,
  bundled, imported), the same environment fingerprint (versions, CPU, cores, device, GPU) and the same class of
  measured matmul rate (within a factor of two: two VMs with one CPU name but 60 and 307 GFLOP/s are two
  machines). :func:`machine_key`. Nothing joins two machines in one chart line, ratio or verdict.
- **Source ranking.** Among several records of one variant at one configuration and machine: this machine's
  store first, then imported, then bundled (``SOURCE_RANK``); then this environment's; then a successful one
  before a failed one; then the newest. :func:`best`, :func:`dedupe`.
- **Provenance words.** "measured here" only for this machine's records; bundled and imported records say whose
  machine. :func:`origin`, :func:`source_note`, :func:`where`.
- **Which configuration a headline quotes.** The seed configuration when it was measured, else the one with the
  most variants; then the best source; then the newest (:func:`headline`), never simply the latest run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

from rnnlab.core import condition, envinfo
from rnnlab.core.params import IMPLIED
from rnnlab.core.record import Record, canonical_json
from rnnlab.engine.api import NOT_KEYED

PROTOCOL_PARAMS = ("repeats", "warmup", "timeout_s", "rounds", "protocol", "budget_s", "live", "deadline_s")  # how a measurement is taken, not what is measured
T = TypeVar("T")
STANDS_IN = ("rounds", "protocol", "budget_s", "live", "deadline_s")  # a record differing from a plan only in these still stands for it on screen (see pick)
SOURCE_RANK = {"local": 0, "imported": 1, "baseline": 2}
ORIGIN_WORDS = {"local": "this machine", "imported": "imported", "baseline": "bundled"}


# -- configuration -------------------------------------------------------------------------------------------------
def _params(r: Record | Mapping[str, Any]) -> Mapping[str, Any]:
    return r.params if isinstance(r, Record) else r


def config_of(r: Record | Mapping[str, Any], ignore: Iterable[str] = ()) -> dict[str, Any]:
    """The configuration a record (or a params mapping) measures: params minus protocol params, device, ``ignore``;
    a param at the value ``core.params.IMPLIED`` gives a record without it (``threads`` 0) is left out, so a record
    stored before the param existed and one that names its default are one configuration."""
    skip = set(PROTOCOL_PARAMS) | {"device"} | set(ignore)
    return {k: v for k, v in _params(r).items() if k not in skip and not (k in IMPLIED and v == IMPLIED[k])}


def config_key(r: Record | Mapping[str, Any], ignore: Iterable[str] = ()) -> str:
    """A hashable, canonical form of :func:`config_of`."""
    return canonical_json(config_of(r, ignore))


def device_of(r: Record) -> str:
    """The device the record ran on: "CPU", "GPU" ("?" when unknown)."""
    return str(r.env.get("device") or "?").upper()


# -- machines ------------------------------------------------------------------------------------------------------
def matmul_rate(r: Record | Mapping[str, Any]) -> float | None:
    """The machine's float32 matmul rate in GFLOP/s, as probed once per machine (``env.matmul_gflops``), of a record
    or of an ``env`` block (``api.known_env``: what a run here would record).

    This is the rate the sidebar shows and chart titles quote; a variant's ``roofline_frac`` uses the rate its own
    worker measured right after it (``details.matmul_gflops``), under the same load.
    """
    env = r.env if isinstance(r, Record) else r
    try:
        v = float(env.get("matmul_gflops") or 0)
    except (TypeError, ValueError):
        return None
    return v if v > 0 and math.isfinite(v) else None


def rate_class(r: Record) -> int | None:
    """The matmul rate rounded to a power of two: records a factor of two apart come from different machines."""
    v = matmul_rate(r)
    return None if v is None else round(math.log2(v))


def machine_key(r: Record) -> str:
    """Who measured it: origin, environment fingerprint, matmul-rate class. Equal keys: comparable records."""
    return canonical_json([r.source, envinfo.fingerprint(dict(r.env)), rate_class(r)])


def comparable(records: Iterable[Record]) -> bool:
    """True when every record comes from one machine (see :func:`machine_key`)."""
    return len({machine_key(r) for r in records}) <= 1


def origin(r: Record) -> str:
    """"this machine", "bundled from <machine>", "imported from <machine>"."""
    if r.source == "local":
        return "this machine"
    return f"{ORIGIN_WORDS.get(r.source, r.source)} from {r.machine}"


def is_here(records: Iterable[Record]) -> bool:
    """Every record was measured on this machine (its own store)."""
    recs = list(records)
    return bool(recs) and all(r.source == "local" for r in recs)


def busy_note(records: Sequence[Record]) -> str:
    """The condition the records were timed under, and whether it was busy: ``core.condition.words_of``, opened by
    "measured on a busy machine: " when other processes took more than ``rules.BUSY_CORES`` cores while a record was
    timed (``rules.busy_cores``). Records from before rnnlab read its condition: "measured on a busy machine: load
    3.1 on 2 cores" when their 1-minute loads say so (``rules.busy_run``: above what the run's own workers can
    explain; the busiest such record), "" otherwise. Part of
    :func:`source_note`, so every table, chart, verdict and slide that says where its figures come from says this
    too."""
    from rnnlab.core import rules

    words = condition.words_of(records)
    conds = [c for c in (condition.Condition.of(r.details.get("condition")) for r in records) if c is not None]
    if any(c.other is not None for c in conds):
        busy = any(rules.busy_cores(c.other) for c in conds)
        return f"measured on a busy machine: {words}" if busy else words
    load = condition.busiest_load(records)
    return "; ".join(x for x in (words, load) if x)


def source_note(records: Sequence[Record]) -> str:
    """"measured here on CPU: <machine>" or "bundled results (not measured here) from CPU: <machine>": beside every
    table, chart and verdict. Only this machine's records are "measured here". Records measured on a busy machine
    add ":func:`busy_note`"."""
    if not records:
        return ""
    by = _by_machine(records)
    if len(by) > 1:  # each machine with its own condition: never one condition said for two machines
        return _origin_note(records, "; ".join(f"{m} ({b})" if (b := busy_note(rs)) else m
                                               for m, rs in by.items()))
    busy = busy_note(records)
    note = _origin_note(records, next(iter(by)))
    return f"{note}; {busy}" if busy else note


def _origin_note(records: Sequence[Record], machines: str) -> str:
    srcs = {r.source for r in records}
    dev = "/".join(sorted({device_of(r) for r in records}))
    if srcs == {"local"}:
        return f"measured here on {dev}: {machines}"
    if srcs == {"baseline"}:
        return f"bundled results (not measured here) from {dev}: {machines}"
    if srcs == {"imported"}:
        return f"imported results (not measured here) from {dev}: {machines}"
    return f"{', '.join(ORIGIN_WORDS.get(s, s) for s in sorted(srcs, key=lambda s: SOURCE_RANK.get(s, 3)))} " \
           f"results on {dev}: {machines}"


def where(records: Sequence[Record], *, with_condition: bool = True) -> str:
    """A sentence opener: "On this CPU", "On the bundled results' CPU (<machine>)", "On <machine> (CPU, imported)",
    with the condition the records were timed under (``core.condition.words_of``): "On this CPU (2 threads; 1.9 of 2
    cores free while timed" in brackets. A verdict says where and how its figures were measured (``with_condition``
    False: a sentence that names each figure's condition itself)."""
    r = records[0]
    device = device_of(r)
    srcs = {x.source for x in records}
    if srcs == {"local"}:
        head = f"On this {device}"
    elif srcs == {"baseline"}:
        head = f"On the bundled results' {device} ({r.machine})"
    elif srcs == {"imported"}:
        head = f"On {r.machine} ({device}, imported)"
    else:
        head = f"On {r.machine} ({device})"
    how = condition.words_of(records) if with_condition else ""
    if not how:
        return head
    return f"{head[:-1]}; {how})" if head.endswith(")") else f"{head} ({how})"


def machine_labels(records: Sequence[Record]) -> dict[str, str]:
    """machine_key -> a short name, unique among ``records``: "this machine", "bundled from <machine>", with the
    TensorFlow version and matmul rate added where two machines would otherwise read the same."""
    from rnnlab.core.format import fmt_rate

    first: dict[str, Record] = {}
    for r in records:
        first.setdefault(machine_key(r), r)
    labels = {k: origin(r) for k, r in first.items()}
    if len(set(labels.values())) < len(labels):
        for k, r in first.items():
            rate = matmul_rate(r)
            labels[k] = f"{origin(r)}, TF {r.env.get('tf') or '?'}" + (f", {fmt_rate(rate)}" if rate else "")
    if len(set(labels.values())) < len(labels):
        seen: dict[str, int] = {}
        for k in labels:
            n = seen[labels[k]] = seen.get(labels[k], 0) + 1
            labels[k] += f" #{n}"
    return labels


def provenance(records: Sequence[Record]) -> dict[str, str]:
    """Machine, device, versions, source and measurement time of a set of records (joined when they differ)."""
    def join(vals):
        return "; ".join(sorted({str(v) for v in vals if v not in (None, "")}))

    times = sorted({r.created_at for r in records})
    return {
        "machine": join(r.machine for r in records),
        "device": join(r.env.get("device") for r in records),
        "tf": join(r.env.get("tf") for r in records),
        "keras": join(r.env.get("keras") for r in records),
        "python": join(r.env.get("python") for r in records),
        "rnnlab": join(r.env.get("rnnlab") for r in records),
        "created_at": "; ".join(times) if len(times) <= 2 else f"{times[0]} .. {times[-1]}",
        "condition": _conditions(records),  # threads and cores free while timed
        "source": source_note(records),
    }


def _by_machine(records: Sequence[Record]) -> dict[str, list[Record]]:
    """The records per machine name (``Record.machine``), in name order: captions say each machine's condition apart."""
    return {m: [r for r in records if r.machine == m] for m in sorted({r.machine for r in records})}


def _conditions(records: Sequence[Record]) -> str:
    """``condition.words_of`` of the records, each machine's said apart when there are several."""
    by = _by_machine(records)
    if len(by) <= 1:
        return condition.words_of(records)
    return "; ".join(f"{m}: {w}" for m, rs in by.items() if (w := condition.words_of(rs)))


# -- which record stands -------------------------------------------------------------------------------------------
def _newest_first(ts: str) -> tuple:
    return tuple(-ord(c) for c in ts)


def rank(r: Record, here: Mapping[str, Any] | None = None) -> tuple:
    """The one ordering of records of one measurement (smaller is preferred)."""
    current = here is not None and r.source == "local" and envinfo.fingerprint(dict(r.env)) == dict(here)
    return (SOURCE_RANK.get(r.source, 3), 0 if current else 1, 0 if r.ok else 1, _newest_first(r.created_at))


def best(records: Iterable[Record], here: Mapping[str, Any] | None = None) -> Record | None:
    """The record that stands for one variant at one configuration (``here``: this environment's fingerprint)."""
    recs = list(records)
    return min(recs, key=lambda r: rank(r, here)) if recs else None


def dedupe(records: Iterable[Record], here: Mapping[str, Any] | None = None) -> list[Record]:
    """One record per (experiment, variant, configuration, device, machine), the preferred one."""
    groups: dict[tuple, list[Record]] = {}
    for r in records:
        groups.setdefault((r.experiment, r.variant, config_key(r), device_of(r), machine_key(r)), []).append(r)
    return [best(g, here) for g in groups.values()]


# -- comparable sets -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Group:
    """One experiment's records at one configuration on one machine and device: one record per variant."""
    experiment: str
    config: Mapping[str, Any]  # config_of(...) minus ``ignore``
    device: str
    machine: str  # machine_key
    records: Mapping[str, Record]  # variant -> the record that stands

    @property
    def source(self) -> str:
        return next(iter(self.records.values())).source

    @property
    def rank(self) -> int:
        return min(SOURCE_RANK.get(r.source, 3) for r in self.records.values())

    @property
    def newest(self) -> str:
        return max(r.created_at for r in self.records.values())

    def ok(self) -> dict[str, Record]:
        return {v: r for v, r in self.records.items() if r.ok}

    def note(self) -> str:
        return source_note(list(self.records.values()))


def groups(records: Iterable[Record], *, experiment: str | None = None, ignore: Sequence[str] = (),
           here: Mapping[str, Any] | None = None) -> list[Group]:
    """Records grouped into comparable sets (one configuration, device and machine), one record per variant.

    With ``ignore`` (e.g. ``("seq_len",)``) a group spans the values of those params, and holds one record per
    variant *and* value: use :func:`series` for that."""
    by: dict[tuple, list[Record]] = {}
    for r in records:
        if experiment is not None and r.experiment != experiment:
            continue
        by.setdefault((r.experiment, config_key(r, ignore), device_of(r), machine_key(r)), []).append(r)
    out = []
    for (exp, _, dev, mach), rs in by.items():
        per: dict[str, list[Record]] = {}
        for r in rs:
            per.setdefault(r.variant, []).append(r)
        out.append(Group(exp, config_of(rs[0], ignore), dev, mach, {v: best(g, here) for v, g in per.items()}))
    return out


def headline(candidates: Sequence[Group], *, seed: Mapping[str, Any] | None = None,
             need: Sequence[str] = ()) -> Group | None:
    """The group a headline quotes: among groups holding every variant of ``need`` (successful), the seed
    configuration when measured, else the one with the most variants; then the best source; then the newest."""
    from rnnlab.experiments.seeds import matches

    ok = [g for g in candidates if all(v in g.ok() for v in need)]
    if not ok:
        return None
    return min(ok, key=lambda g: (0 if seed is not None and matches(g.config, seed) else 1, -len(g.ok()), g.rank,
                                  _newest_first(g.newest)))


def series(records: Iterable[Record], x: str, *, experiment: str | None = None,
           here: Mapping[str, Any] | None = None) -> list[Group]:
    """Sweep series: per machine and configuration with ``x`` free, one record per (variant, value of ``x``).

    Each returned Group's ``records`` maps ``f"{variant}@{value}"`` -> record; a chart draws one line per
    (variant, group), so a line never runs through two machines."""
    by: dict[tuple, list[Record]] = {}
    for r in records:
        if (experiment is not None and r.experiment != experiment) or x not in r.params:
            continue
        by.setdefault((r.experiment, config_key(r, (x,)), device_of(r), machine_key(r)), []).append(r)
    out = []
    for (exp, _, dev, mach), rs in by.items():
        per: dict[str, list[Record]] = {}
        for r in rs:
            per.setdefault(f"{r.variant}@{r.params[x]}", []).append(r)
        out.append(Group(exp, config_of(rs[0], (x,)), dev, mach, {k: best(g, here) for k, g in per.items()}))
    return out


# -- what a page reads ---------------------------------------------------------------------------------------------
def combined(store=None, *, experiment: str | None = None, bundled_dir=None,
             local: Sequence[Record] | None = None, warn=None, bundled: bool = True) -> list[Record]:
    """This machine's records, plus the bundled ones (``core.baseline``) of every experiment, variant and
    configuration this machine has not measured: what pages, claims and exports read. A record that does not fit
    the experiment registry (``experiments.problems``: an unknown experiment or variant, a param out of limits...;
    a param the experiment does not take is let through) is left out, with one warning line per kind of problem
    (``warn``, default stderr). ``bundled=False``: this store's records alone, checked the same way."""
    from rnnlab.core import baseline
    from rnnlab.core.store import Store

    if local is None:
        local = (store or Store()).records(experiment)
    local = [r for r in local if experiment is None or r.experiment == experiment]
    theirs = [r for r in baseline.load(bundled_dir) if experiment is None or r.experiment == experiment] \
        if bundled else []
    local, theirs = _valid(local, theirs, warn=warn)
    have = {(r.experiment, r.variant, config_key(r)) for r in local}
    extra = [r for r in theirs if (r.experiment, r.variant, config_key(r)) not in have]
    return list(local) + extra


def _valid(*groups: Sequence[Record], warn=None) -> tuple[list[Record], ...]:
    """Each group without the records ``experiments.problems`` finds fault with; one warning per kind of problem
    (the field it is about: ``experiment``, ``variant``, ``params.units``...) with a count and the first case."""
    from rnnlab import experiments
    from rnnlab.core.format import clip
    from rnnlab.experiments.validate import first_field
    from rnnlab.core.store import warn_stderr

    kinds: dict[str, list] = {}
    out = []
    for group in groups:
        kept = []
        for r in group:
            found = experiments.problems(r, unknown_params=False)
            if found:
                kind = first_field(found[0])
                where = {"local": "stored", "baseline": "bundled"}.get(r.source, r.source)
                kinds.setdefault((where, kind), [0, found[0]])[0] += 1
            else:
                kept.append(r)
        out.append(kept)
    for (where, kind), (n, first) in kinds.items():
        (warn or warn_stderr)(f"skipped {n} {where} record{'s' if n != 1 else ''} not fitting the experiments"
                              f" ({kind}): {clip(first)}")
    return tuple(out)


def survive(show: Callable[[Sequence[Record]], T], records: Sequence[Record], *, what: str = "this view",
            warn=None, tries: int = 8) -> T:
    """``show(records)``, where a record the reader cannot show is left out with one warning instead of failing the
    whole view (the validator, ``experiments.problems``, should already have refused it: this is the net under it).
    The culprit is found by bisecting for the shortest failing prefix; after ``tries`` culprits, or when no
    single record is to blame, the failure is one ``RnnlabError`` line, never a traceback."""
    from rnnlab.core.errors import RnnlabError
    from rnnlab.core.format import clip
    from rnnlab.core.store import warn_stderr

    recs = list(records)
    skipped: list[tuple[Record, str]] = []
    while True:
        try:
            out = show(recs)
            break
        except RnnlabError:
            raise
        except Exception as e:  # noqa: BLE001 -- a record the reader cannot show; found and left out below
            why = f"{type(e).__name__}: {e}"
            bad = _first_breaking(show, recs) if len(skipped) < tries else None
            if bad is None:
                raise RnnlabError(f"cannot show {what}: {clip(why, 120)}") from None
            skipped.append((recs[bad], why))
            recs = recs[:bad] + recs[bad + 1:]
    if skipped:
        r, why = skipped[0]
        (warn or warn_stderr)(f"skipped {len(skipped)} record{'s' if len(skipped) != 1 else ''} {what} cannot show"
                              f" (first: {clip(r.experiment, 20)}/{clip(r.variant, 30)} from {clip(r.machine, 40)}:"
                              f" {clip(why, 100)})")
    return out


def _first_breaking(show, recs: list[Record]) -> int | None:
    """The index ``i`` such that ``show(recs[:i + 1])`` fails and ``show(recs[:i])`` does not (None: none)."""
    if not recs or _breaks(show, []):
        return None  # it fails without any record: no record is to blame
    lo, hi = 0, len(recs)  # show(recs[:lo]) works (or is a user error), show(recs[:hi]) fails
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _breaks(show, recs[:mid]):
            hi = mid
        else:
            lo = mid
    return hi - 1


def _breaks(show, recs: list[Record]) -> bool:
    from rnnlab.core.errors import RnnlabError

    try:
        show(recs)
    except RnnlabError:
        return False
    except Exception:  # noqa: BLE001
        return True
    return False


# -- what is stored for a plan -------------------------------------------------------------------------------------
def same_config(a: Mapping[str, Any], b: Mapping[str, Any], *, ignore: Iterable[str] = ()) -> bool:
    """Params equal as a run would key them (every param but ``engine.api.NOT_KEYED``), except ``ignore`` and a requested
    ``device`` of ``auto`` (records hold the resolved one). A param one side lacks counts as its
    ``core.params.IMPLIED`` value (a record stored before ``rounds`` existed ran one round)."""
    skip = set(ignore) | set(NOT_KEYED)
    if a.get("device") == "auto" or b.get("device") == "auto":
        skip.add("device")
    keys = (set(a) | set(b)) - skip
    return all(a.get(k, IMPLIED.get(k)) == b.get(k, IMPLIED.get(k)) for k in keys)


@dataclass(frozen=True)
class Selection:
    shown: dict[str, Record]  # variant -> the record to show (in the order asked for)
    missing: tuple[str, ...]  # variants a run would measure: no record from this environment


def pick(records: Sequence[Record], params: Mapping[str, Any], variants: Sequence[str], *,
         fingerprint: Mapping[str, Any] | None = None, experiment: str | None = None) -> Selection:
    """Per variant, the record that stands for exactly this run's params; and what a run would still measure.

    A record that differs only in ``rounds`` stands in when none has this run's rounds (the same measurement,
    repeated fewer or more times; its spread says how often); a run still counts it as missing.
    With ``fingerprint`` None (environment unknown), any record of this machine's store counts as present.
    """
    shown: dict[str, Record] = {}
    missing: list[str] = []
    for v in variants:
        near = [r for r in records if r.variant == v and (experiment is None or r.experiment == experiment)
                and same_config(r.params, params, ignore=STANDS_IN)]
        cands = [r for r in near if same_config(r.params, params)]
        b = best(cands, fingerprint) or best(near, fingerprint)
        if b is not None:
            shown[v] = b
        # what a run would serve: not bundled, not a crash/time-out it would try again, this environment
        served = [r for r in cands if r.source == "local" and not r.details.get("transient")]  # as api.run serves
        if fingerprint is None:
            have = bool(served)
        else:
            have = any(envinfo.fingerprint(dict(r.env)) == dict(fingerprint) for r in served)
        if not have:
            missing.append(v)
    return Selection(shown=shown, missing=tuple(missing))


def sweep(records: Sequence[Record], params: Mapping[str, Any], variants: Sequence[str], *, x: str = "seq_len",
          fingerprint: Mapping[str, Any] | None = None, experiment: str | None = None) -> list[Record]:
    """A sweep's points for this run's params with ``x`` free: one record per (variant, value, machine)."""
    recs = [r for r in records if r.variant in variants and (experiment is None or r.experiment == experiment)
            and x in r.params and same_config(r.params, params, ignore=(x, *STANDS_IN))]
    order = {v: i for i, v in enumerate(variants)}
    out = [r for g in series(recs, x, here=fingerprint) for r in g.records.values()]
    return sorted(out, key=lambda r: (order[r.variant], rank(r)[0], machine_key(r), r.params[x]))
