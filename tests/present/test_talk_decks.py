"""Every page's talk deck (``export --format pptx --view PAGE``) from the bundled results, as a speaker and a newcomer
use it without a guide: every slide titled in its title placeholder, the Claims deck with its measured figures,
no row or cell that only says "not run yet", code set monospaced, takeaways as real bullets, the Overview with a
chart. Charts are drawn as a stub picture here (vl_convert takes seconds a chart; test_deck_render draws them)."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import pytest

from rnnlab.core import baseline
from rnnlab.core.format import NOT_RUN
from rnnlab.exporters import pptx as P
from rnnlab.exporters import render_bytes
from rnnlab.present import deck

pytestmark = pytest.mark.slow  # every page's deck from every bundled result

BUNDLED = Path(__file__).resolve().parents[2] / "data" / "baseline"
VIEWS = ("unrolling", "varlen?tab=semantics", "varlen?tab=cost", "varlen?tab=seed003", "pitfalls", "migrate",
         "claims", "overview")


def _png(w: int = 680, h: int = 300) -> bytes:
    """A blank PNG of ``w`` x ``h`` px."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\xff" * (3 * w) for _ in range(h))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@pytest.fixture(scope="module")
def decks():
    """{view: (talk Report, Presentation)} for every page's default talk deck."""
    from pptx import Presentation

    records = baseline.load(BUNDLED)
    png = _png()
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(P, "chart_png", lambda chart, scale=2: png)
        for v in VIEWS:
            talk = deck.talk(deck.page_view(v, records))
            out[v] = (talk, Presentation(io.BytesIO(render_bytes(talk, "pptx")[1])))
    return out


def _texts(slide) -> list[str]:
    out = []
    for shape in slide.shapes:
        if shape.has_text_frame:
            out.append(shape.text_frame.text)
        if shape.has_table:
            grid = shape.table
            out += [grid.cell(i, j).text for i in range(len(grid.rows)) for j in range(len(grid.columns))]
    return out


@pytest.mark.parametrize("view", VIEWS)
def test_every_slide_has_a_title_in_its_title_placeholder_and_nothing_not_run(decks, view):
    talk, prs = decks[view]
    for k, slide in enumerate(prs.slides, 1):
        title = slide.shapes.title
        assert title is not None and title.text.strip(), f"{view}: slide {k} has no title placeholder with text"
        text = "\n".join(_texts(slide))
        assert NOT_RUN not in text, f"{view}: slide {k} says {NOT_RUN!r}"
    first = "\n".join(_texts(prs.slides[0]))
    machine = talk.provenance.get("machine", "")
    assert machine and first.count(machine) == 1, f"{view}: the title slide names its machine {first.count(machine)}x"


@pytest.mark.parametrize("view", VIEWS)
def test_takeaways_are_real_bullets_with_a_hanging_indent(decks, view):
    from pptx.oxml.ns import qn

    talk, prs = decks[view]
    if not talk.takeaways:
        return
    slide = prs.slides[1]
    assert slide.shapes.title.text.startswith("Takeaways")
    paras = [p for s in slide.shapes if s.has_text_frame and s != slide.shapes.title
             for p in s.text_frame.paragraphs if p.text.startswith(talk.takeaways[0].text[:20])]
    assert paras, f"{view}: the first takeaway is not on slide 2"
    p_pr = paras[0]._p.pPr
    assert p_pr is not None and p_pr.find(qn("a:buChar")) is not None and int(p_pr.get("indent")) < 0
    assert not paras[0].text.startswith("•")  # the bullet is the paragraph's, not a typed character


def test_the_claims_deck_shows_the_verdicts_on_three_slides_and_what_was_measured_in_its_appendix(decks):
    talk, prs = decks["claims"]
    tabled = [slide for slide in prs.slides if any(s.has_table for s in slide.shapes)]
    assert 1 <= len(tabled) <= 3
    for slide in tabled:
        [grid] = [s.table for s in slide.shapes if s.has_table]
        header = [grid.cell(0, j).text for j in range(len(grid.columns))]
        assert header[0] == "verdict" and not any(h.startswith("measured") for h in header), header
    [(title, bullets)] = talk.appendix
    assert title.startswith("Appendix: measured")
    appendix = "\n".join(t for slide in prs.slides if slide.shapes.title.text.startswith("Appendix")
                         for t in _texts(slide))
    assert len(bullets) == sum(len(t.rows) for t in talk.tables) and all(b in appendix for b in bullets)
    assert sum(any(ch.isdigit() for ch in b) for b in bullets) >= len(bullets) // 2, bullets


def test_no_cell_holds_a_paragraph_and_captions_are_two_lines_at_most(decks):
    from pptx.util import Inches

    for view, (talk, prs) in decks.items():
        for table in talk.tables:
            for j, c in enumerate(table.cols):  # the row's name (a claim, a construct) and code are whole
                if c.kind != "code" and c.role != "name" and j != deck.head_column(table):
                    assert all(len(r[j]) <= deck.CELL_MAX for r in table.rows), (view, c.label)
        for k, slide in enumerate(prs.slides, 1):
            top = Inches(P.TITLE_TOP + P.TITLE_H)  # where a caption sits, under the title
            boxes = [s for s in slide.shapes
                     if s.has_text_frame and s != slide.shapes.title and abs(s.top - top) < 9e3]
            assert k == 1 or boxes or not any(s.has_table for s in slide.shapes), (view, k)
            for box in boxes:
                assert P.line_count(box.text_frame.text, P.BODY_W - 0.2, P.CAPTION_PT) <= 2, (view, k)
        last = prs.slides[len(prs.slides) - 1]
        assert last.shapes.title.text.startswith("Provenance") and talk.provenance["machine"] in "\n".join(
            _texts(last))


def test_code_on_slides_is_monospaced(decks):
    seen = []
    for view in ("migrate", "pitfalls"):
        talk, prs = decks[view]
        code = {c for t in talk.tables for c in t.code}
        assert code, f"{view}: no table declares a code column"
        for slide in prs.slides:
            for shape in slide.shapes:
                if not shape.has_table:
                    continue
                grid = shape.table
                header = [grid.cell(0, j).text for j in range(len(grid.columns))]
                for j, h in enumerate(header):
                    if h not in code:
                        continue
                    for i in range(1, len(grid.rows)):
                        runs = [r for p in grid.cell(i, j).text_frame.paragraphs for r in p.runs if r.text.strip()]
                        assert runs and all(r.font.name == P.MONO for r in runs), (view, h, i)
                        seen.append(grid.cell(i, j).text)
    assert seen and any(line.startswith("    ") for text in seen for line in text.split("\n"))  # indentation kept


def test_the_migrate_deck_has_the_converter_and_seed_004(decks):
    talk, prs = decks["migrate"]
    titles = [s.shapes.title.text for s in prs.slides]
    assert any(t.startswith("converter demo") for t in titles), titles
    assert any("Seed 004" in t for t in titles), titles
    said = [t.text for t in talk.takeaways]
    assert any("converted" in t for t in said) and any("Seed 004" in t for t in said)
    assert not any("above" in t for t in said)  # a deck has no "above"


def test_the_pitfalls_deck_shows_the_wrong_and_the_right_code(decks):
    _, prs = decks["pitfalls"]
    heads = [[s.table.cell(0, j).text for j in range(len(s.table.columns))]
             for slide in prs.slides for s in slide.shapes if s.has_table]
    assert ["wrong", "right"] in heads


def test_the_overview_deck_has_a_chart(decks):
    _, prs = decks["overview"]
    assert sum(s.shape_type == 13 for slide in prs.slides for s in slide.shapes) >= 1


def test_the_title_slide_says_the_configuration_once(decks):
    talk, prs = decks["unrolling"]
    first = "\n".join(_texts(prs.slides[0]))
    config = talk.title.split(": ", 1)[-1]  # "rnn, 3x128, batch 32, 100 steps, 64 in"
    assert first.count(config) == 1, first
    assert "median of" not in first  # the method is on the table's slide
