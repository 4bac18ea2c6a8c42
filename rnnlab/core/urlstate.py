"""A page's settings as URL query parameters, so a copied link opens the same view (no Streamlit here).

The names are DESIGN.md's parameter names (the CLI's ``--set`` names), plus ``variants`` (comma-separated variant
names) and ``ref`` (the reference variant of the ratios)::

    encode({"cell": "lstm", "units": 64}, variants=["tf1_static", "tf1_dynamic"], extra={"ref": "tf1_dynamic"})
    -> {"cell": "lstm", "units": "64", "variants": "tf1_static,tf1_dynamic", "ref": "tf1_dynamic"}

``decode`` never raises for a bad value: it falls back to the default and says why in ``problems`` (the page shows
them as warnings), because a URL is user input that may be old, hand-edited or truncated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from rnnlab.core.errors import RnnlabError

VARIANTS_KEY = "variants"
REF_KEY = "ref"


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def encode(values: Mapping[str, Any], *, variants: Sequence[str] | None = None,
           extra: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Query parameters (all strings) for ``values`` (param name -> value), the variants and extra keys."""
    out = {k: _text(v) for k, v in values.items()}
    if variants is not None:
        out[VARIANTS_KEY] = ",".join(variants)
    for k, v in (extra or {}).items():
        if v is not None:
            out[k] = _text(v)
    return out


@dataclass(frozen=True)
class Decoded:
    values: dict[str, Any]  # every name asked for: parsed from the URL, or its default
    variants: list[str]  # from the URL (in the order of the allowed variants), or the default list
    extra: dict[str, str]  # raw text of the extra keys that were present
    problems: list[str] = field(default_factory=list)  # one line per ignored value: what was wrong, what is used
    present: bool = False  # whether the URL held any of the page's keys at all


def _one(raw: Any) -> str:
    """``st.query_params`` gives strings; a repeated key (AppTest, hand-written URLs) may give a list: last wins."""
    if isinstance(raw, (list, tuple)):
        return str(raw[-1]) if raw else ""
    return str(raw)


def decode(query: Mapping[str, Any], *, experiment: Any, names: Iterable[str], defaults: Mapping[str, Any],
           default_variants: Sequence[str], extra_keys: Iterable[str] = (), allowed_variants: Iterable[str] | None = None
           ) -> Decoded:
    """Parse the page's keys out of ``query``; bad values fall back to ``defaults`` with a problem line each.
    ``experiment``: the page's ``Experiment`` (its ``params`` parse the values, its ``variants`` are allowed)."""
    exp = experiment
    names = list(names)
    extra_keys = list(extra_keys)
    allowed = list(allowed_variants) if allowed_variants is not None else list(exp.variants)
    problems: list[str] = []
    values: dict[str, Any] = {}
    for name in names:
        default = defaults[name]
        if name not in query:
            values[name] = default
            continue
        text = _one(query[name])
        try:
            values[name] = exp.params[name].parse(text)
        except RnnlabError as e:
            problems.append(f"URL: {e}; using {name}={_text(default)}")
            values[name] = default
    variants = list(default_variants)
    if VARIANTS_KEY in query:
        asked = [v.strip() for v in _one(query[VARIANTS_KEY]).split(",") if v.strip()]
        unknown = [v for v in asked if v not in allowed]
        good = [v for v in allowed if v in asked]  # the canonical order, whatever the URL's
        if good:
            variants = good
        if unknown or not good:
            what = f"unknown variant(s) {', '.join(repr(v) for v in unknown)}" if unknown else "no variant given"
            problems.append(f"URL: {what}; " + ("ignored" if good else "using the default variants"))
    extra = {k: _one(query[k]) for k in extra_keys if k in query}
    present = any(k in query for k in [*names, VARIANTS_KEY, *extra_keys])
    return Decoded(values=values, variants=variants, extra=extra, problems=problems, present=present)
