"""The app's pages, in sidebar order, from the page registry (``rnnlab.present.pages``). A page appears only once its
file exists."""

from __future__ import annotations

from pathlib import Path

from rnnlab.present import pages
from rnnlab.present.pages import Page

ROOT = Path(__file__).resolve().parent.parent  # the folder of streamlit_app.py
ICON = str(Path(__file__).resolve().parent / "icon.png")  # the app's page icon, served by the app itself


# every page's entry is its ``rnnlab.present.<name>.PAGE`` (rnnlab.present.pages): title, icon, place, home page
PAGES: tuple[Page, ...] = pages.pages()


def routed() -> None:
    """Call first in every page: make sure the page runs under the router (streamlit_app.py).

    Streamlit starts in its legacy mode when a ``pages/`` folder exists, until ``st.navigation`` has run once: the
    first run after a server start that asks for ``/unrolling?...`` (a shared link) would run pages/unrolling.py
    alone, without the router's layout and sidebar. Leaving that mode and rerunning sends the same request (page
    and query parameters) through the router.
    """
    import streamlit as st

    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # a Streamlit without it has no legacy mode to leave
        return
    from streamlit import config

    if config.get_option("global.appTest"):  # (AppTest patches config.get_option, not st.get_option)
        # AppTest restarts in the legacy mode on every run(); a rerun there would drop the click being tested.
        # Its runs of a page stay direct (the router is tested by the main run and the browser test).
        return
    if getattr(PagesManager, "uses_pages_directory", False):
        PagesManager.uses_pages_directory = False
        st.rerun()


def existing() -> list[Page]:
    return [p for p in PAGES if (ROOT / p.file).is_file()]


def page_file(url_path: str) -> str | None:
    """The file of the page at ``url_path`` if it exists (for ``st.page_link``), else None."""
    for p in existing():
        if p.name == url_path:
            return p.file
    return None


def title(url_path: str) -> str:
    return next((p.title for p in PAGES if p.name == url_path), url_path)
