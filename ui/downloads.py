"""Download buttons for a Report (the tables and charts a page shows), one per export format.

A download must survive a busy server. Streamlit's deferred downloads (``data=`` a callable) did not: the file made
on the click is kept for no session, so the next two script runs of any session deleted it before the browser
fetched it (11 of 21 PowerPoint downloads under load: "404 /media/<id>.pptx"), and a rerun of the page dropped the
callable itself ("Deferred file not found"). So every button here holds its bytes, which Streamlit keeps for the
session while the button is shown. Cheap formats are made with the page; a PowerPoint or PNGs (seconds) are made
when "Make ..." is clicked, then kept, process-wide, for every session showing the same view (``BYTES``). The
PowerPoint is a talk deck of the page's view (``rnnlab.present.deck.talk``:
the takeaways, per table at most six columns with its charts, the same deck as ``export --format pptx --view``); a
"Slides" popover beside the buttons chooses the columns, or the full tables.
"""

from __future__ import annotations

import functools
from typing import Sequence

import streamlit as st

from rnnlab.core.memo import Memo

from rnnlab.judge import select
from rnnlab import exporters
from rnnlab.present import deck
from rnnlab.present import report as report_mod
from rnnlab.exporters.base import slug
from rnnlab.core.record import Record
from rnnlab.core.views import ChartView, Report, TableView

from . import turns

# the formats a page's view downloads as: each exporter's ``button`` (json is offered by the results page as records)
FORMATS: tuple[str, ...] = tuple(exporters.buttons())


@functools.lru_cache(maxsize=1)
def commit() -> str:
    return report_mod.commit()


def make_report(title: str, subtitle: str, table_views: Sequence[TableView], chart_views: Sequence[ChartView],
                records: Sequence[Record]) -> Report:
    prov = select.provenance(list(records)) | {"commit": commit()}
    return Report(title=title, subtitle=subtitle, tables=tuple(table_views), charts=tuple(chart_views),
                  provenance=prov)


def file_name(rep: Report, fmt: str) -> tuple[str, str]:
    """The name and MIME type ``render_bytes`` will produce: one file, or a zip when a per-table/chart format has
    several."""
    ex = exporters.exporter(fmt)
    n = len(rep.tables) if ex.per == "table" else len(rep.charts) if ex.per == "chart" else 1
    base = slug(rep.title, "report")
    if n == 1:
        return base + ex.suffix, ex.mime
    return f"{base}-{ex.name}.zip", "application/zip"


def _render(rep: Report, fmt: str) -> bytes:
    return exporters.render_bytes(rep, fmt)[1]


def slides(rep: Report, columns: Sequence[str] = (), full: bool = False) -> Report:
    """What the PowerPoint button saves: the talk deck of ``rep`` (``columns``: the slides' table columns, empty for
    each table's defaults), or ``rep`` itself with every column (``full``)."""
    return rep if full else deck.talk(rep, list(columns) or None)


def _render_slides(rep: Report, columns: tuple[str, ...], full: bool) -> bytes:
    return exporters.render_bytes(slides(rep, columns, full), "pptx")[1]


def _slide_options(row, rep: Report, key: str) -> tuple[tuple[str, ...], bool]:
    """The "Slides" popover: which columns the deck's tables show (at most six), or the full tables."""
    options = deck.choices(rep)
    with row.popover("Slides", icon=":material/tune:", help="what the PowerPoint shows"):
        # the placeholder fits the box (a longer one was cut: "ratio to the refe"); the caption says it all, wrapped
        cols = st.multiselect("table columns", options, key=f"{key}-deck-columns", max_selections=deck.MAX_COLUMNS,
                              placeholder="each table's defaults",
                              help=f"at most {deck.MAX_COLUMNS}; empty: each table's own defaults")
        st.caption("Left empty, each table shows its defaults: its name, the metric and its ratio to the reference "
                   "(the interval in brackets).")
        full = st.checkbox("every column (the full tables)", key=f"{key}-deck-full")
    return tuple(c for c in cols if c in options), bool(full)


EXPENSIVE = ("pptx", "png")  # made on a click (seconds each), then kept for every session; the rest with the page
BYTES = Memo(size=64)  # a report's bytes per format and deck options, per report object (``Memo.of``)


def buttons(rep: Report, *, key: str, formats: Sequence[str] = FORMATS,
            label: str = "Download") -> None:
    """A row of download buttons; a format the report has nothing for (PNG without charts) is disabled. A
    PowerPoint or PNGs not made yet for this view is a "Make ..." button first; its click makes them (kept for every
    session showing this view) and the download button takes its place."""
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    if label:
        row.caption(label)
    for fmt in formats:
        ex = exporters.exporter(fmt)
        text = ex.button or ex.name
        empty = (ex.per == "chart" and not rep.charts) or (ex.per == "table" and not rep.tables)
        name, mime = file_name(rep, fmt)
        options: tuple = ()
        make = functools.partial(_render, rep, fmt)
        if fmt == "pptx" and rep.tables:
            options = _slide_options(row, rep, key)
            make = functools.partial(_render_slides, rep, *options)
        common = dict(key=f"{key}-dl-{fmt}", help=f"{ex.description}" if not empty else "no charts to export")
        if empty:
            row.download_button(text, data=b"", file_name=name, mime=mime, disabled=True, on_click="ignore",
                                icon=":material/download:", **common)
            continue
        data = BYTES.peek_of(rep, fmt, options) if fmt in EXPENSIVE else BYTES.of(rep, make, fmt, options)
        if data is None:
            if row.button(f"Make {text}", key=f"{key}-make-{fmt}", icon=":material/build:",
                          help=f"{ex.description}: made now (a few seconds), then offered for download"):
                with st.spinner(f"Making the {text}…"), turns.aside():  # seconds: the others render meanwhile
                    data = BYTES.of(rep, make, fmt, options)
            else:
                continue
        row.download_button(text, data=data, file_name=name, mime=mime, on_click="ignore",
                            icon=":material/download:", **common)
