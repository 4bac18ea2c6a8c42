"""Every page's rendered text (Streamlit AppTest over the bundled results) read as a newcomer reads it: each fact
said once per page, sentences that start with a capital, no "?." or "..", and no exponent on a number a person
reads as a plain figure (0.001 to 1000: "0.6", not "6.0e-01").

What counts as the page's text: headers, Markdown, captions, alerts, expander and tab labels, and the cells of
its tables (a table's cells count once per table, so a column repeating "pass" is no repetition; a long cell
repeated in a sentence or an expander label is)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.apptest_util import bundled_page, no_errors, no_run_left_behind  # noqa: F401

pytestmark = pytest.mark.slow  # Streamlit pages

ROOT = Path(__file__).resolve().parents[2]
PAGES = [("overview", None), ("unrolling", None), ("varlen", None), ("varlen", {"tab": "cost"}),
         ("varlen", {"tab": "seed003"}), ("pitfalls", None), ("migrate", None), ("claims", None),
         ("results", None), ("glossary", None)]
LONG = 40  # characters: a shorter phrase ("Download", "pass", a variant's name) may well recur
_EXP = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)e([+-]?\d+)\b")


def plain(md: str) -> str:
    """Markdown as the reader sees it: no emphasis, code marks, icons, colour tags or link targets."""
    text = re.sub(r":material/[a-z_]+:", "", str(md))
    text = re.sub(r":[a-z]+\[([^\]]*)\]", r"\1", text)  # :red[Wrong]
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)  # [label](url)
    text = re.sub(r"\\(.)", r"\1", text)
    return re.sub(r"\*\*|__|`", "", text)


def page_texts(at) -> list[tuple[str, str, str]]:
    """(kind, text, block) of everything the page shows in words; ``block`` is "main" or the expander it sits in
    (each expander is a detail read on its own: two may say the same thing, an expander and the page may not)."""
    block: dict[int, str] = {}
    kinds = ("title", "header", "subheader", "markdown", "caption", "info", "warning", "success", "error", "dataframe")
    for i, exp in enumerate(at.expander):
        for kind in kinds:
            for el in getattr(exp, kind):
                block[id(el)] = f"expander {i}"
    out = []
    for kind in kinds[:-1]:
        for el in getattr(at, kind):
            value = getattr(el, "body", None) if kind in ("info", "warning", "success", "error") else None
            out.append((kind, plain(value if value is not None else el.value), block.get(id(el), "main")))
    for el in at.expander:
        out += [("label", plain(part), "main") for part in el.label.split(" · ")]
    for el in at.tabs:
        out.append(("label", plain(el.label), "main"))
    for i, el in enumerate(at.dataframe):
        frame = el.value
        cells = {str(v) for c in frame.columns for v in frame[c].tolist() if v is not None}
        out += [(f"table {i}", c, block.get(id(el), "main")) for c in sorted(cells)]
    return out


def sentences(text: str) -> list[str]:
    """A text's sentences and list items (split at . ! ? followed by a space and a capital or a digit, and at
    line breaks), stripped of bullets."""
    parts = []
    for line in str(text).split("\n"):
        line = re.sub(r"^\s*(?:[-*•]|\d+\.)\s+", "", line).strip()
        parts += [p.strip() for p in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])", line) if p.strip()]
    return parts


def _names() -> set[str]:
    """Words that are code and keep their case at the start of a sentence: cells, variants, experiments, params."""
    from rnnlab import experiments
    from rnnlab.tf import variants

    names = {"tf", "np", "keras", "python", "pip", "streamlit", "rnnlab", "rnn", "lstm", "gru", "e.g.", "vs"}
    names |= set(variants.BASE_VARIANTS)
    for name in experiments.names():
        names.add(name)
        exp = experiments.get(name)
        names |= set(exp.params.names()) | set(exp.variants)
    return names


NAMES = _names()


def _lower_start(s: str) -> bool:
    """A sentence that starts with a lowercase word that is not code (a name, ``static_rnn``, ``cuDNN``) and not a
    term being defined ("zofm: ...", "seed 000 §3.1: ...")."""
    if not s[:1].islower():
        return False
    head = re.split(r":\s| · ", s, maxsplit=1)[0]
    if head != s and len(head) <= 60 and "." not in head:  # "term: its definition", "label · text"
        return False
    first = re.split(r"[\s,;:]", s, maxsplit=1)[0].strip("\"'()")
    return not (first in NAMES or re.search(r"[_.(\[=0-9]|[a-z][A-Z]", first))


def problems(texts) -> list[str]:
    bad = []
    seen: dict[str, list[tuple[str, str]]] = {}
    for item in texts:
        kind, text, block = item if len(item) == 3 else (*item, "main")
        is_table = kind.startswith("table")
        for s in sentences(text) if not is_table else [text.strip()]:
            key = " ".join(s.split()).rstrip(".:").lower()
            if len(key) >= LONG:
                for k0, b0 in seen.get(key, []):
                    # tables share row names; a header names the row of a table that lists every such thing
                    both_tables = is_table and k0.startswith(("table", "header", "subheader"))
                    two_details = b0 != block and b0 != "main" and block != "main"
                    if not both_tables and not two_details and (k0, b0) != (kind, block) or \
                            (k0, b0) == (kind, block) and not is_table:
                        bad.append(f"said twice ({k0}, {kind}): {s[:120]!r}")
                        break
                seen.setdefault(key, []).append((kind, block))
            if not is_table and kind != "label" and _lower_start(s):
                bad.append(f"starts lowercase ({kind}): {s[:120]!r}")
        if re.search(r"\?\.|(?<!\.)\.\.(?!\.)", text):
            bad.append(f"'?.' or '..' ({kind}): {text[:160]!r}")
        for m in _EXP.finditer(text):
            value = float(m.group(0))
            if 1e-3 <= abs(value) < 1e3:
                bad.append(f"exponent on a plain figure ({kind}): {m.group(0)} in {text[:120]!r}")
    return list(dict.fromkeys(bad))


def test_the_checks_catch_what_they_should():
    texts = [("markdown", "Static is faster. Static is faster."), ("caption", "measured on a busy machine."),
             ("markdown", "Can it run dynamically?."), ("table 0", "6.0e-01"), ("table 0", "1.2e-07"),
             ("markdown", "static_rnn builds 5.8x slower. keras_cell is generic.")]
    found = problems(texts)
    assert any(p.startswith("said twice") for p in found) or len("Static is faster") < LONG
    assert any(p.startswith("starts lowercase") and "busy" in p for p in found)
    assert any(p.startswith("'?.'") for p in found)
    assert any("6.0e-01" in p for p in found) and not any("1.2e-07" in p for p in found)
    assert not any("static_rnn" in p or "keras_cell" in p for p in found)
    long = "The forward step of static_rnn takes longer than dynamic_rnn's at every length."
    assert any(p.startswith("said twice") for p in problems([("markdown", long), ("expander", long)]))


@pytest.mark.parametrize("page,query", PAGES, ids=[p + (f"-{q['tab']}" if q else "") for p, q in PAGES])
def test_page_text_says_each_thing_once_and_plainly(page, query):
    at = bundled_page(f"pages/{page}.py", query)  # the bundled results, an empty store
    no_errors(at)
    found = problems(page_texts(at))
    assert not found, "\n".join(found)
