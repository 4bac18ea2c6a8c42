"""Exporters: every format written from a hand-built Report, then read back and compared with the views."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from datetime import datetime, timezone

import pandas as pd
import pytest

from rnnlab.core.errors import RnnlabError
from rnnlab.exporters import EXPORTERS, export, render_bytes
from rnnlab.exporters.pptx import plan_table
from dataclasses import replace

from rnnlab.core.views import Column, Report, TableView, to_frame, without_bounds
from tests.factories import PROV, make_report

NOW = datetime(2025, 3, 4, 5, 6, 7, tzinfo=timezone.utc)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def report():
    return make_report()


def _cell(value):
    return "" if value is None else value


# ---------------------------------------------------------------------------------------------------- views

def test_views_freeze_and_frame(report):
    short = report.tables[0]
    assert isinstance(short.rows, tuple) and all(isinstance(r, tuple) for r in short.rows)
    frame = to_frame(short)
    assert list(frame.columns) == list(short.columns) and frame.values.tolist() == [list(r) for r in short.rows]
    with pytest.raises(ValueError, match="row 0 has 1 cells"):
        TableView("t", "", ("a", "b"), (("x",),))


def test_a_column_kind_comes_from_its_declaration_or_the_raw_types_never_the_cells():
    view = TableView("t", "", ("flag", "count", "name", Column("setting", "text"), "bare"),
                     (("yes", "12", "3.5", "1", "4"),), ((True, 12, "3.5", "1", None),))
    assert [c.kind for c in view.cols] == ["yesno", "number", "text", "text", "text"]  # no raw numbers: text
    assert view.numeric == (False, True, False, False, False)
    assert replace(view, title="u").cols == view.cols  # dataclasses.replace keeps the columns' kinds
    with pytest.raises(ValueError, match="kind 'numbr'"):
        Column("a", "numbr")
    with pytest.raises(ValueError, match="role 'ratios'"):
        Column("a", "ratio", "ratios")


def test_without_bounds_drops_the_bound_columns_by_role_whatever_their_labels():
    ratio = Column("speed-up", "ratio", "ratio", key="speed-up vs ref", of="fwd_ms", against="keras")
    lower = Column("lower end", "ratio", "bound", of="fwd_ms", against="keras")
    view = TableView("t", "", ("variant", ratio, lower, *ratio.bounds(), "plain (low)"),
                     (("a", "0.6x (0.5–0.7)", "0.5x", "0.5x", "0.7x", "q"),), (("a", 0.6, 0.5, 0.5, 0.7, "q"),))
    assert [c.label for c in ratio.bounds()] == ["speed-up (low)", "speed-up (high)"]
    shown = without_bounds(view)
    assert shown.columns == ("variant", "speed-up", "plain (low)")  # a label ending "(low)" alone is no bound
    assert shown.cols[1] == ratio and shown.raw == (("a", 0.6, "q"),)


# ---------------------------------------------------------------------------------------------------- pptx

@pytest.mark.slow  # Altair charts of a whole report
def test_pptx_tables_charts_title(report, tmp_path):
    from pptx import Presentation
    from pptx.util import Emu

    [path] = export(report, "pptx", tmp_path / "deck", now=NOW)
    assert path == tmp_path / "deck.pptx"
    deck = Presentation(str(path))
    assert abs(deck.slide_width / deck.slide_height - 16 / 9) < 0.01
    slides = list(deck.slides)

    def texts(slide):
        return [s.text_frame.text for s in slide.shapes if s.has_text_frame]

    title_text = "\n".join(texts(slides[0]))
    assert "bench-box-7" in title_text and "2.21.0" in title_text and report.title in title_text

    # Tables: every slide holding a native table, in order, must rebuild each TableView exactly.
    got: dict[str, list] = {}
    for slide in slides[1:]:
        tables = [s.table for s in slide.shapes if s.has_table]
        if not tables:
            continue
        [grid] = tables
        title = texts(slide)[0]
        base = title.removesuffix(" (cont.)")
        cells = [[grid.cell(i, j).text for j in range(len(grid.columns))] for i in range(len(grid.rows))]
        view = next(t for t in report.tables if t.title == base)
        assert tuple(cells[0]) == view.columns  # header repeated on every continued slide
        assert (title.endswith(" (cont.)")) == (base in got)
        got.setdefault(base, []).extend(tuple(r) for r in cells[1:])
        # Nothing runs off the slide.
        frame = next(s for s in slide.shapes if s.has_table)
        assert frame.left >= 0 and frame.left + frame.width <= deck.slide_width
        assert frame.top + sum(r.height for r in grid.rows) <= deck.slide_height - Emu(914400 * 0.45)
    for view in report.tables:
        assert got[view.title] == list(view.rows)
    long_slides = [s for s in slides if any(t.startswith(report.tables[1].title) for t in texts(s)[:1])]
    assert len(long_slides) >= 2

    # Charts: one picture each, under the chart's title, inside the slide.
    for chart in report.charts:
        [slide] = [s for s in slides if texts(s) and texts(s)[0] == chart.title]
        pictures = [s for s in slide.shapes if s.shape_type == 13]  # MSO_SHAPE_TYPE.PICTURE
        assert len(pictures) == 1 and pictures[0].image.blob.startswith(PNG_MAGIC)
        pic = pictures[0]
        assert pic.left >= 0 and pic.left + pic.width <= deck.slide_width and pic.top + pic.height <= deck.slide_height
        assert chart.caption in "\n".join(texts(slide))

    # Provenance once, on the closing slide (not a footer on every slide), and in every slide's notes.
    closing = "\n".join(texts(slides[-1]))
    assert closing.startswith("Provenance") and "rnnlab: 0.1.0" in closing and "2025-03-04T05:06:07Z" in closing
    for slide in slides[1:-1]:
        assert "exported 2025-03-04T05:06:07Z" not in "\n".join(texts(slide))
    for slide in slides:
        assert "machine:" in slide.notes_slide.notes_text_frame.text
    baseline = [s for s in slides if texts(s) and texts(s)[0].startswith(report.tables[1].title)]
    assert all("baseline-gpu-1" in "\n".join(texts(s)) for s in baseline)


def test_wide_table_shrinks_font_and_long_table_paginates():
    wide = TableView("wide", "", tuple(f"a rather long column header number {i} (ms)" for i in range(12)),
                     (tuple(f"{1234.5678 * i:,.4f}" for i in range(12)),) * 3)
    plan = plan_table(wide, 5.0)
    assert plan.font < 14 and sum(plan.widths) <= 12.34
    assert plan.row_h[0] == plan.row_h[1] and len(set(plan.row_h)) == 1  # numbers never wrap: one line per row
    tall = TableView("tall", "", ("a", "b"), tuple((str(i), "x") for i in range(100)))
    plan = plan_table(tall, 5.0)
    assert plan.font >= 12 and len(plan.pages) >= 5
    sizes = [b - a for a, b in plan.pages]
    assert max(sizes) - min(sizes) <= 1 and plan.pages[0][0] == 0 and plan.pages[-1][1] == 100


# ---------------------------------------------------------------------------------------------------- text formats

def _read_csv(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    comments = [ln for ln in lines if ln.startswith("#")]
    assert lines[: len(comments)] == comments  # comments form the header
    return comments, list(csv.reader(lines[len(comments):]))


def test_alignment_follows_the_column_kind_not_the_cells():
    """A text column whose cells look like numbers stays left; a number column whose cells hold words goes right."""
    view = TableView("Kinds", "", (Column("TF_USE_LEGACY_KERAS", "text"), Column("time to 90% (s)", "number"),
                                   "ratio"),
                     (("1", "not reached", "0.5x"), ("unset", "not reached", "0.6x")),
                     (("1", None, "0.5x"), (None, None, "0.6x")))
    rep = Report("Kinds", "", (view,), (), PROV)
    assert "| :--- | ---: | :--- |" in render_bytes(rep, "md", now=NOW)[1].decode()
    assert r"\begin{tabular}{lrl}" in render_bytes(rep, "tex", now=NOW)[1].decode()


def test_csv_one_file_per_table_with_raw_values(report, tmp_path):
    paths = export(report, "csv", tmp_path / "out" / "results.csv", now=NOW)
    assert [p.name for p in paths] == ["results-unrolling-rnn-3x128-batch-32-100-steps.csv",
                                       "results-sequence-length-sweep-lstm-1x256.csv"]
    comments, rows = _read_csv(paths[0])
    text = "\n".join(comments)
    assert "machine: bench-box-7" in text and "tf: 2.21.0" in text and "exported_at: 2025-03-04T05:06:07Z" in text
    short = report.tables[0]
    assert tuple(rows[0]) == short.columns
    for got, raw in zip(rows[1:], short.raw):
        assert got[0] == raw[0] and got[3] == raw[3]
        for cell, value in zip(got[1:3], raw[1:3]):
            assert (cell == "") if value is None else float(cell) == value  # full precision, not the 2 decimals
    # No raw values: the formatted strings; the table's own provenance overrides the report's.
    comments, rows = _read_csv(paths[1])
    assert "machine: baseline-gpu-1" in "\n".join(comments)
    assert [tuple(r) for r in rows[1:]] == list(report.tables[1].rows)
    frame = pd.read_csv(paths[0], comment="#")
    assert frame["forward (ms)"].iloc[0] == 12.3456

    # A directory gets one file per table named after it; one table into a stem gets exactly that file.
    (tmp_path / "dir").mkdir()
    assert len(export(report, "csv", tmp_path / "dir", now=NOW)) == 2
    one = Report(report.title, report.subtitle, report.tables[:1], (), report.provenance)
    assert export(one, "csv", tmp_path / "single", now=NOW) == [tmp_path / "single.csv"]


def test_markdown_round_trip(report, tmp_path):
    [path] = export(report, "md", tmp_path / "report.md", now=NOW)
    text = path.read_text(encoding="utf-8")
    assert "bench-box-7" in text and "2.21.0" in text and "2025-03-04T05:06:07Z" in text
    tables, current = [], None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if current is None:
                current = [cells]
                tables.append(current)
            elif not all(re.fullmatch(r":?-+:?", c) for c in cells):
                current.append(cells)
        else:
            current = None
    assert len(tables) == 2
    for view, parsed in zip(report.tables, tables):
        assert tuple(parsed[0]) == view.columns and [tuple(r) for r in parsed[1:]] == list(view.rows)
    assert "| ---: |" in text or "---: |" in text  # numbers right-aligned
    # An existing directory gets the file named after the report.
    (tmp_path / "d").mkdir()
    assert export(report, "md", tmp_path / "d", now=NOW) == [tmp_path / "d" / "rnnlab-static-vs-dynamic-unrolling.md"]


def _unescape_tex(s: str) -> str:
    for esc, ch in ((r"\ensuremath{\times}", "×"), (r"\textbackslash{}", "\\"), (r"\&", "&"), (r"\%", "%"),
                    (r"\#", "#"), (r"\_", "_"), (r"\$", "$"), (r"\{", "{"), (r"\}", "}")):
        s = s.replace(esc, ch)
    return s


def test_latex_escaped_and_round_trip(report, tmp_path):
    [path] = export(report, "tex", tmp_path / "tables.tex", now=NOW)
    text = path.read_text(encoding="utf-8")
    assert text.count(r"\begin{tabular}") == 2 and r"\toprule" in text and r"\bottomrule" in text
    assert "% machine: bench-box-7" in text
    assert r"50\% of runs \& \#1 reference\_variant" in text and r"vs static (\ensuremath{\times})" in text
    body = [ln for ln in text.splitlines() if not ln.lstrip().startswith("%")]
    for ln in body:  # no unescaped special characters outside commands
        assert not re.search(r"(?<!\\)[%#&_]", ln.replace(r" & ", " ")), ln
    blocks = re.findall(r"\\midrule\n(.*?)\n\s*\\bottomrule", text, re.S)
    heads = re.findall(r"\\toprule\n(.*?)\\\\\n", text)
    for view, block, head in zip(report.tables, blocks, heads):
        assert tuple(_unescape_tex(c.strip()) for c in head.split(" & ")) == view.columns
        rows = [tuple(_unescape_tex(c.strip()) for c in ln.strip().removesuffix(r"\\").split(" & "))
                for ln in block.splitlines()]
        assert rows == list(view.rows)


def test_json_tables_and_provenance(report, tmp_path):
    [path] = export(report, "json", tmp_path / "r.json", now=NOW)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["schema"] == 1 and doc["provenance"]["exported_at"] == "2025-03-04T05:06:07Z"
    short = doc["tables"][0]
    assert [tuple(r) for r in short["rows"]] == list(report.tables[0].rows)
    assert short["raw"][4][1] is None and short["raw"][0][1] == 12.3456
    assert doc["tables"][1]["raw"] is None and doc["charts"][0]["spec"]["mark"]


# ---------------------------------------------------------------------------------------------------- images

def test_png_and_svg_per_chart(report, tmp_path):
    pngs = export(report, "png", tmp_path / "charts", now=NOW)  # not a directory yet: a stem
    assert len(pngs) == 2 and all(p.read_bytes().startswith(PNG_MAGIC) for p in pngs)
    assert b"bench-box-7" in pngs[0].read_bytes()  # provenance in an iTXt chunk
    svgs = export(report, "svg", str(tmp_path / "svg") + "/", now=NOW)  # trailing slash: a directory
    assert [p.parent for p in svgs] == [tmp_path / "svg"] * 2
    text = svgs[0].read_text(encoding="utf-8")
    assert "<svg" in text and "machine: bench-box-7" in text


@pytest.mark.slow  # every export format of a report, PNG and SVG rendered
def test_render_bytes(report):
    name, data, mime = render_bytes(report, "md", now=NOW)
    assert name.endswith(".md") and mime == "text/markdown" and b"bench-box-7" in data
    name, data, mime = render_bytes(report, "csv", now=NOW)
    assert name.endswith(".zip") and mime == "application/zip"
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert len(zf.namelist()) == 2 and zf.read(zf.namelist()[0]).startswith(b"# rnnlab export")
    name, data, mime = render_bytes(report, "PPTX", now=NOW)
    assert name.endswith(".pptx") and data[:2] == b"PK"


# ---------------------------------------------------------------------------------------------------- errors

def test_errors(report, tmp_path):
    assert set(EXPORTERS) == {"pptx", "csv", "md", "tex", "png", "svg", "json"}
    with pytest.raises(RnnlabError, match="unknown export format 'docx'"):
        export(report, "docx", tmp_path / "x.docx")
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(RnnlabError, match="cannot write") as info:
        export(report, "md", blocker / "sub" / "r.md", now=NOW)
    assert "\n" not in str(info.value)
    no_charts = Report(report.title, report.subtitle, report.tables, (), report.provenance)
    with pytest.raises(RnnlabError, match="no charts"):
        export(no_charts, "png", tmp_path / "p")


def test_pptx_long_provenance_is_cut_in_the_core_properties_and_whole_on_the_slides():
    """Bundled + imported + local records make a provenance longer than python-pptx's 255-character core property."""
    from pptx import Presentation

    machine = ("this machine (Intel Xeon 2 cores); imported: gpu-box-a100 (NVIDIA A100-SXM4-80GB, CUDA 12.3); "
               "bundled: cpu-xeon-2core (Intel(R) Xeon(R) CPU @ 2.20GHz, 2 cores, 60 GFLOP/s)")
    prov = {**PROV, "machine": machine, "device": "CPU (2 cores) · GPU (A100)"}
    base = make_report()
    long = Report("t" * 300, "s " * 200, base.tables[:1], (), prov)
    assert len("; ".join(f"{k}: {v}" for k, v in prov.items())) > 255
    _, data, _ = render_bytes(long, "pptx", now=NOW)
    deck = Presentation(io.BytesIO(data))
    props = deck.core_properties
    for text in (props.title, props.subject, props.comments):
        assert len(text) <= 255
    assert props.comments.endswith("…") and len(props.comments) == 255
    assert props.title == "t" * 254 + "…"
    notes = [s.notes_slide.notes_text_frame.text for s in deck.slides]
    assert all(f"machine: {machine}" in n for n in notes)  # the full text stays on the slides
