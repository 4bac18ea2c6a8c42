"""One look for every chart, on screen and in exports: a colour per variant, a mark shape and dash per source.

Colours are fixed per variant name (not by the order variants happen to appear in a selection), so a variant keeps
its colour across pages, reruns and exported PNGs and slides. Sources: this machine's records are filled circles and
solid lines; bundled and imported records (other machines) are open shapes and dashed lines.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Iterable

# Tableau 10 and its lighter companions: distinct on screen and in print
_PALETTE = ("#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d",
            "#bab0ac", "#1f77b4", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f", "#d62728")

SOURCE_SHAPES = {"local": "circle", "imported": "triangle-up", "baseline": "square"}
SOURCE_DASH = {"local": [1, 0], "imported": [6, 3], "baseline": [4, 4]}
SOURCE_WORDS = {"local": "this machine", "imported": "imported", "baseline": "bundled"}


@functools.lru_cache(maxsize=1)
def _assigned() -> dict[str, str]:
    """Every known variant name -> its colour: the unroll variants first, then each experiment's variants in
    order, each taking the next colour not yet used by a variant of the same experiment."""
    from rnnlab import experiments
    from rnnlab.tf.variants import VARIANTS

    out: dict[str, str] = {}
    lists = [list(VARIANTS)] + [list(e.variants) for e in experiments.all_experiments()]
    for names in lists:
        used = {out[v] for v in names if v in out}
        free = [c for c in _PALETTE if c not in used]
        for v in names:
            if v not in out:
                out[v] = free.pop(0) if free else _hashed(v)
    return out


def _hashed(name: str) -> str:
    return _PALETTE[int(hashlib.sha256(name.encode()).hexdigest(), 16) % len(_PALETTE)]


def variant_color(name: str) -> str:
    """The colour of a variant everywhere: fixed per name, distinct within one experiment's variants."""
    return _assigned().get(name) or _hashed(name)


def color_scale(variants: Iterable[str]):
    """An Altair colour scale mapping each of ``variants`` to its own colour."""
    import altair as alt

    names = list(dict.fromkeys(variants))
    return alt.Scale(domain=names, range=[variant_color(v) for v in names])


def shape_scale(sources: Iterable[str]):
    import altair as alt

    names = list(dict.fromkeys(sources))
    return alt.Scale(domain=[SOURCE_WORDS.get(s, s) for s in names], range=[SOURCE_SHAPES.get(s, "diamond")
                                                                            for s in names])


def dash_scale(sources: Iterable[str]):
    import altair as alt

    names = list(dict.fromkeys(sources))
    return alt.Scale(domain=[SOURCE_WORDS.get(s, s) for s in names], range=[SOURCE_DASH.get(s, [2, 2]) for s in names])


def tooltips(*fields) -> list:
    """A tooltip's fields, each an ``alt.Tooltip`` (a plain name given as one): Altair turns a plain string of an
    encoding into its channel class by hashing all of its ~560 schema classes again (9 ms a string on a 2-core Xeon:
    8 of the quick test loop's 22 s, and every chart a page draws)."""
    import altair as alt

    return [alt.Tooltip(f) if isinstance(f, str) else f for f in fields]
