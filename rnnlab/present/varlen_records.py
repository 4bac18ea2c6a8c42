"""The Variable lengths page's shared ground: its experiments and their labels, the true lengths a person types
(:func:`normalize_lengths`, :func:`lengths_note`), and which records one tab shows (:func:`standing`,
:func:`selection`: ``rnnlab.judge.select``'s choice, one configuration on one machine per table and chart).
Pure: no Streamlit, no TensorFlow. ``rnnlab.present.varlen`` names all of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from rnnlab import experiments
from rnnlab.core import envinfo
from rnnlab.core import format as fmt
from rnnlab.core.errors import RnnlabError
from rnnlab.core.params import PARAMS, lengths_for
from rnnlab.core.record import Record
from rnnlab.core.views import TableView
from rnnlab.experiments import padding as padding_exp
from rnnlab.experiments import seed003 as seed003_exp
from rnnlab.experiments import seeds
from rnnlab.experiments import varlen as varlen_exp
from rnnlab.judge import select
from rnnlab.judge.select import provenance, source_note

DASH = fmt.MISSING
EXPERIMENTS = ("varlen", "padding", "seed003")  # the page's tabs, in order
VARIANTS = {"varlen": varlen_exp.VARIANTS, "padding": padding_exp.VARIANTS, "seed003": seed003_exp.VARIANTS}
LABELS = {"varlen": varlen_exp.LABELS, "padding": padding_exp.LABELS, "seed003": seed003_exp.LABELS}


def experiment(name: str):
    """The declaration of one of the page's experiments."""
    return experiments.get(name)


def seed_config(name: str) -> Mapping[str, Any] | None:
    """The seed configuration a headline prefers: seed 003's for ``seed003``, the ``seed`` preset (seed 001's
    example) for ``varlen`` and ``padding``."""
    if name == "seed003":
        return seeds.SEED_003
    preset = experiments.get(name).presets.get("seed")
    return None if preset is None else {k: v for k, v in preset.items() if k != "variants"}


def is_seed_config(params: Mapping[str, Any]) -> bool:
    """``params`` are at seed 003's configuration (``seeds.SEED_003``)."""
    return seeds.matches(params, seeds.SEED_003)


def row_lengths(values: Mapping[str, Any]) -> list[int]:
    """The true length of each batch row the page's settings give."""
    return lengths_for(values["lengths"], values["batch"], values["seq_len"], values.get("seed", 0))


def gpu_visible() -> bool:
    """TensorFlow can (probably) see a GPU on this machine (without importing TensorFlow)."""
    return bool(envinfo.static_env().get("gpu_hint"))


# -- lengths -----------------------------------------------------------------------------------------------------------
_BARE_ROWS = re.compile(r"^\d+(?:\s*[/,;\s]\s*\d+)+$")
_BARE_RANGE = re.compile(r"^(\d+)\s*-\s*(\d+)$")


def normalize_lengths(text: str) -> str:
    """What a person types for the true lengths -> the ``lengths`` value: ``"12 9 5"``, ``"12,9,5"`` or
    ``"12/9/5"`` -> ``"rows:12/9/5"``; ``"20"`` -> ``"fixed:20"``; ``"5-100"`` -> ``"uniform:5-100"``; a value
    already in one of the forms (``full``, ``fixed:N``, ``uniform:A-B``, ``rows:a/b/c``) stays. Refused with the
    forms it takes."""
    raw = " ".join(str(text).split()).strip().lower()
    if raw.isdigit():
        raw = f"fixed:{raw}"
    elif _BARE_RANGE.match(raw):
        a, b = _BARE_RANGE.match(raw).groups()
        raw = f"uniform:{a}-{b}"
    elif _BARE_ROWS.match(raw):
        raw = "rows:" + "/".join(re.split(r"[/,;\s]+", raw))
    elif raw.startswith("rows:"):
        raw = "rows:" + "/".join(x for x in re.split(r"[/,;\s]+", raw[5:]) if x)
    else:
        raw = raw.replace(" ", "")
    try:
        return PARAMS["lengths"].validate(raw)
    except RnnlabError:
        raise RnnlabError(f"lengths {text!r} is not understood: type one length per row (12 9 5 3), one length for "
                          "every row (20), a range drawn at random (5-100), or full") from None


def lengths_note(spec: str, rows: int, seq_len: int, seed: int = 0, *, what: str = "row") -> str:
    """The true lengths a ``lengths`` value gives, in words: each row's when there are few, else the spread; and
    how much of the padded batch is padding."""
    lens = lengths_for(spec, rows, seq_len, seed)
    clipped = "" if not _asks_longer(spec, seq_len) else f"; lengths above seq_len={seq_len} are cut to it"
    pad = 100.0 * (1 - sum(lens) / (len(lens) * seq_len))
    if len(set(lens)) == 1:
        head = f"{len(lens):,} {what}{'s' if len(lens) != 1 else ''}, every true length {lens[0]}"
    elif len(lens) <= 12:
        head = f"true length of each {what}: {', '.join(map(str, lens))}"
    else:
        head = (f"{len(lens):,} {what}s, true lengths {min(lens)} to {max(lens)} (mean "
                f"{sum(lens) / len(lens):.1f})")
    return f"{head}; padded to {seq_len} steps, {pad:.0f}% of the padded steps are padding{clipped}"


def _asks_longer(spec: str, seq_len: int) -> bool:
    nums = [int(x) for x in re.findall(r"\d+", spec)]
    return any(n > seq_len for n in nums)


# -- which records stand -----------------------------------------------------------------------------------------------
def _order(records: Iterable[Record], variants: Sequence[str]) -> list[Record]:
    rank = {v: i for i, v in enumerate(variants)}
    return sorted(records, key=lambda r: rank.get(r.variant, len(rank)))


def _experiment_of(records: Sequence[Record]) -> str | None:
    return records[0].experiment if records else None


def ordered_groups(records: Iterable[Record], name: str, *,
                   here: Mapping[str, Any] | None = None) -> list[select.Group]:
    """``name``'s records as comparable sets (one configuration on one machine each), the one a headline quotes
    first (``select.headline``, asked again for the rest)."""
    left = select.groups(records, experiment=name, here=here)
    out = []
    while left:
        g = select.headline(left, seed=seed_config(name))
        out.append(g)
        left = [x for x in left if x is not g]
    return out


def standing(records: Iterable[Record], name: str | None = None) -> list[Record]:
    """The records one table or chart shows: ``select.headline``'s group among ``records`` (of experiment ``name``,
    by default the first record's), one record per variant, in the experiment's variant order. Records of several
    configurations or machines never share a view."""
    recs = list(records)
    name = name or _experiment_of(recs)
    if name is None:
        return []
    gs = ordered_groups(recs, name)
    return _order(gs[0].records.values(), VARIANTS.get(name, ())) if gs else []


@dataclass(frozen=True)
class Shown:
    """What the page shows for one tab's settings."""
    records: list[Record]  # one configuration on one machine, in the plan's variant order (empty: nothing stored)
    missing: tuple[str, ...]  # variants a run would measure (nothing from this environment)
    others: tuple[str, ...]  # the other machines' stored results for these settings (source notes), not shown


def selection(records: Sequence[Record], plan, env: Mapping[str, Any] | None = None) -> Shown:
    """The records standing for ``plan``'s settings (``select.pick``'s configuration, ``select.headline``'s machine)
    and what a run would measure. ``env``: this machine's known environment (None: unknown)."""
    fp = envinfo.fingerprint(dict(env)) if env else None
    params = plan.points[0]
    sel = select.pick(records, params, plan.variants, fingerprint=fp, experiment=plan.experiment)
    cands = [r for r in records if r.experiment == plan.experiment and r.variant in plan.variants
             and select.same_config(r.params, params, ignore=select.STANDS_IN)]
    gs = ordered_groups(cands, plan.experiment, here=fp)
    if not gs:
        return Shown([], sel.missing, ())
    order = {v: i for i, v in enumerate(plan.variants)}
    shown = sorted(gs[0].records.values(), key=lambda r: order[r.variant])
    return Shown(shown, sel.missing, tuple(g.note() for g in gs[1:]))


def not_here_note(records: Sequence[Record]) -> str | None:
    """For records from another machine (bundled, imported): whose they are, and that Run measures them here."""
    if not records or select.is_here(records):
        return None
    machines = "; ".join(sorted({r.machine for r in records}))
    kind = "Bundled" if {r.source for r in records} == {"baseline"} else "Imported"
    return (f"{kind} results from {machines}: measured on that machine, not on this one. **Run** measures them on "
            "this one.")


def _caption(records: Sequence[Record], *extra: str) -> str:
    p = dict(records[0].params) if records else {}
    return "; ".join(x for x in (fmt.fmt_params(p), *extra, source_note(records)) if x)


def _view(title: str, caption: str, columns: list, rows: list[list], raw: list[list],
          records: Sequence[Record]) -> TableView:
    if not any(r[-1] for r in raw):  # the error column only when something failed
        columns, rows, raw = columns[:-1], [r[:-1] for r in rows], [r[:-1] for r in raw]
    return TableView(title=title, caption=caption, columns=tuple(columns), rows=tuple(map(tuple, rows)),
                     raw=tuple(map(tuple, raw)), provenance=provenance(records))


def _num(value: Any, kind: str = "g") -> str:
    if kind == "pct100":  # a metric already in percent
        return fmt.fmt_value(None if value is None else value / 100.0, "pct")
    return fmt.fmt_value(value, kind)


def _source_words(records: Sequence[Record]) -> str:
    """Whose records, in a legend or a column header: "this machine", "bundled", "imported"."""
    srcs = list(dict.fromkeys(r.source for r in records))
    return "/".join(select.ORIGIN_WORDS.get(s, s) for s in srcs) or "measured"
