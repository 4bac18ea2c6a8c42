"""One look for every chart, on screen and in exports: a colour per variant, a mark shape and dash per source.

Colours are fixed per variant name (not by the order variants happen to appear in a selection), so a variant keeps
its colour across pages, reruns and exported PNGs and slides. Sources: this machine's records are filled circles and
solid lines; bundled and imported records (other machines) are open shapes and dashed lines.
"""

from __future__ import annotations

import hashlib
from typing import Iterable

# Tableau 10 and its lighter companions: distinct on screen and in print
_PALETTE = ("#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d",
            "#bab0ac", "#1f77b4", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f", "#d62728")
# the unroll variants and their +xla forms first, so they never collide; other experiments' variants are hashed
_FIXED = ("tf1_static", "tf1_dynamic", "tf2_unrolled", "tf2_while", "keras", "keras_unroll", "keras_cell")

SOURCE_SHAPES = {"local": "circle", "imported": "triangle-up", "baseline": "square"}
SOURCE_DASH = {"local": [1, 0], "imported": [6, 3], "baseline": [4, 4]}
SOURCE_WORDS = {"local": "this machine", "imported": "imported", "baseline": "bundled"}


def variant_color(name: str) -> str:
    """The colour of a variant everywhere (``"keras+xla"`` shares ``"keras"``'s hue family but not its colour)."""
    if name in _FIXED:
        return _PALETTE[_FIXED.index(name)]
    base, xla = (name[:-4], True) if name.endswith("+xla") else (name, False)
    if xla and base in _FIXED:
        return _PALETTE[len(_FIXED) + _FIXED.index(base) % (len(_PALETTE) - len(_FIXED))]
    h = int(hashlib.sha256(name.encode()).hexdigest(), 16)
    return _PALETTE[h % len(_PALETTE)]


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
