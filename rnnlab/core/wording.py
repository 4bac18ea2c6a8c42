"""The one sentence rule: how rnnlab says a difference, from the interval of a ratio and nothing else (pure).

Every sentence that states a difference (findings, headlines, verdict boxes, the claims' "measured", the
recommendation, decks, CLI) takes its words from :func:`difference`, which asks ``rules.direction``:

- a direction ("1.59x faster", "5.8x slower") and bold only when the whole interval clears the margin;
- "about as fast" only when the whole interval lies inside the margin;
- an interval that reaches across one side of the margin only says the side it rules out, never bold: "about as
  fast as B or slower (at 1.07x its time, 1.01–1.12x)" (``rules.bound``: no gain of the margin or more);
- otherwise "too noisy to call", with the ratio and its interval; "too busy to decide" when the interval's rounds
  were timed under different loads (``Interval.unsettled``), however narrow it is; "no interval (one round)", with
  the ratio, when no spread is known (one round of a figure timed once: a build, a first call, peak memory).

Ratios are said as ratios ("5.8x"), never as percentages: a percentage of a ratio of 2x or more reads wrong ("83%
faster" for 5.8x), and one word form for every size keeps sentences comparable. A faster or smaller side is said
by the reciprocal ("1.59x faster": B takes 1.59x A's time), with its interval inverted to match.

A sentence that opens with its machine ("On this CPU, ...") is a :class:`Sentence`: the machine and the call of its
difference travel beside the words, so a list says a shared machine once (:func:`shared_opening`) and no reader
parses either back out of the text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from rnnlab.core import format as fmt
from rnnlab.core import rules

# kind -> (lower, higher, same, "A in 1.11x B's <noun>", (or lower, or higher)) for a ratio A/B where lower is
# better (time, size), or, for ``rate``, higher is better (steps per second); the last pair ends a bound's words
# ("about as fast as B or slower": ``rules.NOT_LOWER``)
KINDS = {
    "time": ("faster", "slower", "about as fast", "time", ("faster", "slower")),
    "size": ("smaller", "larger", "about the same size", "size", ("smaller", "larger")),
    "memory": ("less memory", "more memory", "about the same memory", "memory", ("less", "more")),
    "rate": ("slower", "faster", "about as fast", "rate", ("slower", "faster")),
}


@dataclass(frozen=True)
class Phrase:
    """A difference as words: ``status`` (``rules.bound``), ``words`` ("1.59x faster", "about as fast", "too noisy
    to call"; a bound's "about as fast", with ``side``), ``span`` (the interval as the words read it, "1.52–1.66x"; "" when none is known), ``ratio`` (A/B).
    ``bold`` only when decided."""

    status: str
    words: str
    span: str
    ratio: float
    noun: str
    side: str = ""  # a bound's other side, "slower" in "about as fast as B or slower" ("" for any other status)

    @property
    def decided(self) -> bool:
        return rules.decided(self.status)

    @property
    def bounded(self) -> bool:
        return rules.bounded(self.status)

    @property
    def bold(self) -> bool:
        return self.decided

    def text(self, *, md: bool = False) -> str:
        """"1.59x faster (1.52–1.66x)"; "about as fast or slower (1.07x, 1.01–1.12x)"; "too noisy to call (1.11x,
        0.59–1.86x)"."""
        words = f"**{self.words}**" if md and self.bold else self.words
        if self.bounded:
            words = f"{words} or {self.side}"
        if not self.decided:
            inner = ", ".join(x for x in (fmt.fmt_ratio(self.ratio), self.span) if x)
            return f"{words} ({inner})"
        return f"{words} ({self.span})" if self.span else words

    def against(self, other: str, *, md: bool = False) -> str:
        """The phrase with the other side named: "1.59x faster than B (1.52–1.66x)", "about as fast as B (0.95–1.04x)",
        "about as fast as B or slower (at 1.07x its time, 1.01–1.12x)", "at 1.11x B's time (0.59–1.86x), too noisy
        to call"."""
        words = f"**{self.words}**" if md and self.bold else self.words
        tail = f" ({self.span})" if self.span else ""
        if self.bounded:
            inner = ", ".join(x for x in (f"at {fmt.fmt_ratio(self.ratio)} its {self.noun}", self.span) if x)
            return f"{words} as {other} or {self.side} ({inner})"
        if not self.decided:
            return f"at {fmt.fmt_ratio(self.ratio)} {other}'s {self.noun}{tail}, {words}"
        if self.status == rules.SAME:
            return f"{words} as {other}{tail}"
        return f"{words} than {other}{tail}"


def difference(iv, *, kind: str = "time", margin: float = rules.MARGIN) -> Phrase | None:
    """The words for the interval ``iv`` of A/B (``core.stats.Interval``); None without a usable ratio."""
    if iv is None or not (iv.mid > 0) or iv.mid != iv.mid or iv.mid == float("inf"):
        return None
    lower, higher, same, noun, (or_lower, or_higher) = KINDS[kind]
    status = rules.bound(iv, margin)
    if not rules.spread_known(iv):  # a ratio from one round of a figure timed once: no spread to call it from
        return Phrase(status, NO_INTERVAL, "", iv.mid, noun)
    if status == rules.LOWER:
        return Phrase(status, f"{fmt.fmt_ratio(1 / iv.mid)} {lower}", _span(iv, invert=True), iv.mid, noun)
    if status == rules.HIGHER:
        return Phrase(status, f"{fmt.fmt_ratio(iv.mid)} {higher}", _span(iv), iv.mid, noun)
    if status == rules.SAME:
        return Phrase(status, same, _span(iv), iv.mid, noun)
    if rules.bounded(status):
        return Phrase(status, same, _span(iv), iv.mid, noun, or_higher if status == rules.NOT_LOWER else or_lower)
    return Phrase(status, status, _span(iv), iv.mid, noun)  # too noisy to call, or too busy to decide


def bold(text: str) -> str:
    """Markdown bold on every decided phrase of ``text`` ("**1.59x faster**", "**about as fast**"): only
    :func:`difference` writes these words, and only when the interval decides them, so bolding them is the rule."""
    import re

    words = sorted({w for k in KINDS.values() for w in k[:3]}, key=len, reverse=True)
    ratio = "|".join(re.escape(w) for w in words if not w.startswith("about"))
    same = "|".join(re.escape(w) for w in words if w.startswith("about"))
    sides = "|".join(sorted({re.escape(w) for k in KINDS.values() for w in k[4]}))
    # a bound ("about as fast as RNN(cell) or slower (at ...") is never bold: " or <side>" before the clause ends
    # (a comma, a semicolon, or the interval's bracket " (0.9" / " (at")
    bounded = rf"(?!(?:(?!,|;| \((?:\d|at )).)*? or (?:{sides})\b)"
    return re.sub(rf"(?<!\*)(\d[\d,.]*x (?:{ratio})|(?:{same}){bounded})(?!\*)", r"**\1**", text)


NO_INTERVAL = "no interval (one round)"  # what a ratio without a known spread is said as: never a call


def _span(iv, *, invert: bool = False) -> str:
    s = fmt.fmt_span(iv, invert=invert)
    return f"{s}x" if s else ""


@dataclass(frozen=True)
class Sentence:
    """A sentence with its machine and its call as data, so nothing downstream reads them out of the words:
    ``where`` ("On this CPU", ``select.where``; "" for a sentence that names no machine first), ``body`` (the rest,
    as it reads after "<where>, "), ``status`` (the call of the difference it states, ``rules.bound`` through
    :func:`difference`: lower, higher, about the same, one side ruled out, too noisy to call; None when it states
    none).
    :attr:`text` is the one place the whole sentence is put together."""

    body: str
    where: str = ""
    status: str | None = None

    @property
    def text(self) -> str:
        return f"{self.where}, {self.body}" if self.where else self.body

    def to_json(self) -> dict:
        """The sentence for ``--json``: its whole text, its machine and its call."""
        return {"text": self.text, "where": self.where, "status": self.status}

    @property
    def alone(self) -> "Sentence":
        """The sentence without its machine (said once elsewhere): its body, as a sentence of its own."""
        return Sentence(fmt.sentence_start(self.body), "", self.status) if self.where else self


def status_of(iv, *, kind: str = "time") -> str | None:
    """The status of :func:`difference` for ``iv`` (what a :class:`Sentence` stating it carries); None without a
    usable ratio."""
    phrase = difference(iv, kind=kind)
    return phrase.status if phrase is not None else None


def shared_opening(sentences: Sequence[Sentence]) -> tuple[str, list[Sentence]]:
    """When every sentence opens with the same machine (``Sentence.where``), that opener once and the sentences
    without it (a list of findings reads without the repeated provenance); else ("", the sentences)."""
    heads = {s.where for s in sentences}
    if len(sentences) < 2 or len(heads) != 1 or "" in heads:
        return "", list(sentences)
    return heads.pop(), [s.alone for s in sentences]
