"""The default unrolling deck as a renderer draws it: LibreOffice -> PDF -> one PNG per slide under
``artifacts/screenshots/deck-unrolling-N.png`` (look at them), and the PDF's text shows every number of every table
on one line: the estimate of column widths holds in a real renderer, not only in python-pptx's model."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rnnlab.core import baseline
from rnnlab.core.views import NUMERIC
from rnnlab.exporters import render_bytes
from rnnlab.exporters.pptx_layout import _WORDS as WORDS
from rnnlab.present import deck
from rnnlab.present import unrolling as U

pytestmark = [pytest.mark.slow,  # LibreOffice takes seconds
              pytest.mark.skipif(not (shutil.which("soffice") and shutil.which("pdftoppm") and
                                      shutil.which("pdftotext")),
                                 reason="needs Debian's libreoffice-impress and poppler-utils (.ci/run installs them)")]

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"


def _pdf(pptx: Path) -> Path:
    profile = pptx.parent / "lo-profile"  # its own profile: no clash with another LibreOffice, nothing in $HOME
    res = subprocess.run(["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--convert-to", "pdf",
                          "--outdir", str(pptx.parent), str(pptx)], capture_output=True, text=True, timeout=180)
    pdf = pptx.with_suffix(".pdf")
    assert pdf.exists(), res.stdout + res.stderr
    return pdf


def test_default_unrolling_deck_renders_and_no_number_wraps(tmp_path):
    talk = deck.talk(U.view(baseline.load(ROOT / "data" / "baseline"), {}))
    # header -> a column of figures (its Column's kind), whose cells without words never wrap
    figures = {c.label: c.kind in NUMERIC for t in talk.tables for c in t.cols}
    pptx = tmp_path / "unrolling.pptx"
    pptx.write_bytes(render_bytes(talk, "pptx")[1])
    from pptx import Presentation

    slides = list(Presentation(str(pptx)).slides)
    pdf = _pdf(pptx)

    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("deck-unrolling-*.png"):
        old.unlink()
    subprocess.run(["pdftoppm", "-png", "-r", "72", str(pdf), str(SHOTS / "deck-unrolling")], check=True, timeout=120)
    pngs = sorted(SHOTS.glob("deck-unrolling-*.png"))
    assert len(pngs) == len(slides) <= 14  # with the 1-thread / every-core table and its takeaways

    # every token of every numeric cell ("0.63x", "(0.58–0.70)") whole on one line of its slide's text; every
    # interval of the takeaways whole on one line of the takeaways' slides (one, or continued on the next)
    said = [k for k, slide in enumerate(slides, 1)
            if slide.shapes.title is not None and slide.shapes.title.text.startswith("Takeaways")]
    told = [re.sub(r"\s+", " ", line.replace("\u2060", "")) for k in said for line in subprocess.run(
        ["pdftotext", "-layout", "-f", str(k), "-l", str(k), str(pdf), "-"], capture_output=True, text=True,
        check=True).stdout.splitlines()]
    ranges = [m for t in talk.takeaways for m in re.findall(r"\(\d[\d.]*–\d[\d.]*x\)", t.text)]
    assert said and ranges and all(any(r in line for line in told) for r in ranges), (ranges, told)
    for k, slide in enumerate(slides, 1):
        text = subprocess.run(["pdftotext", "-layout", "-f", str(k), "-l", str(k), str(pdf), "-"],
                              capture_output=True, text=True, check=True).stdout
        lines = [re.sub(r"\s+", " ", line.replace("\u2060", "")) for line in text.splitlines()]
        for shape in slide.shapes:
            if not shape.has_table:
                continue
            grid = shape.table
            for i in range(1, len(grid.rows)):
                for j in range(len(grid.columns)):
                    cell = grid.cell(i, j).text
                    if figures.get(grid.cell(0, j).text) and not WORDS.search(cell):
                        for token in cell.split():
                            assert any(token in line for line in lines), (k, cell, token)
