"""Small Streamlit helpers every page uses: error guard, the store, Markdown, links and hints.

Shared views are in ``ui.shared``, tables that fit the page in ``ui.tables``, charts in ``ui.charts``."""

from __future__ import annotations

import contextlib
import re
from typing import Iterator

import streamlit as st

from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import md_escape  # noqa: F401 -- pages import it from here
from rnnlab.core.store import Store, default_path

from . import nav



@contextlib.contextmanager
def guard(what: str = "") -> Iterator[None]:
    """``with guard("Run"):`` -- an RnnlabError (the user's mistake) becomes st.error and the page goes on.

    Anything else is a bug and keeps its traceback; Streamlit's own control flow (st.stop, st.rerun) passes.
    """
    try:
        yield
    except RnnlabError as e:
        st.error(md_escape(f"{what}: {e}" if what else e), icon=":material/error:")


@st.cache_resource(show_spinner=False)
def _store(path: str) -> Store:
    return Store(path, warn=lambda msg: None)


READ_KEY = "_store_version_read"  # the store's version this session's page last read its records at


def note_read(version: tuple) -> None:
    """``shared.records`` read the store at ``version`` in this script run (``jobs.panel`` compares)."""
    st.session_state[READ_KEY] = version


def read_stale() -> bool:
    """The records this page read are older than the store: a run wrote its last records after the page read them."""
    seen = st.session_state.get(READ_KEY)
    return seen is not None and seen != store().version()


def store() -> Store:
    """This machine's store (``RNNLAB_STORE`` or the default path), opened once per process and path."""
    s = _store(str(default_path()))
    for w in s.warnings:  # e.g. a corrupt file moved aside: say it once per session
        seen = st.session_state.setdefault("_store_warnings_seen", set())
        if w not in seen:
            seen.add(w)
            st.warning(w, icon=":material/warning:")
    return s


def findings_md(lines, *, lead: str = "") -> str:
    """Findings (``Sentence``s) as Markdown bullets, the machine they share (``where``) said once in the lead-in
    (``present.overview.shared_opening``) instead of in every line."""
    from rnnlab.present.overview import emphasise, shared_opening

    head, rest = shared_opening(list(lines))
    intro = " ".join(x for x in (lead, f"{head}:" if head else "") if x)
    return (intro + "\n\n" if intro else "") + "\n".join(f"- {emphasise(x.text)}" for x in rest)


def anchor(title: str) -> str:
    """A header's anchor for an in-page link: "Measures and columns" -> "measures-and-columns"."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def page_link(url_path: str, label: str, *, query: dict | None = None, icon: str = ":material/arrow_forward:"
              ) -> bool:
    """A link to another page (with query parameters: a configuration). False if that page does not exist yet."""
    f = nav.page_file(url_path)
    if f is None:
        return False
    st.page_link(f, label=label, icon=icon, query_params=query or None)
    return True


def how_to_get(cli: str, *, page: str | None = None, button: str = "Run", here: bool = False) -> None:
    """Where no record exists: the CLI command, and the button (``here``: on this page, above)."""
    text = f"Not measured yet. In a terminal: `{cli}`"
    if page and nav.page_file(page):
        text += f", or press **{button}**" + (" above." if here else f" on the {nav.title(page)} page.")
    st.info(text, icon=":material/info:")
