"""Small Streamlit helpers every page uses: error guard, store and records, tables, hints."""

from __future__ import annotations

import contextlib
import re
from typing import Iterator

import streamlit as st

from rnnlab.judge import select
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record
from rnnlab.core.store import Store, default_path
from rnnlab.core.views import TableView, to_frame

from . import nav


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def md_escape(text: object) -> str:
    """Text from a URL, a file or an error, shown literally inside Markdown (no links, images, emphasis)."""
    return _MD_SPECIAL.sub(r"\\\1", str(text))


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


def store() -> Store:
    """This machine's store (``RNNLAB_STORE`` or the default path), opened once per process and path."""
    s = _store(str(default_path()))
    for w in s.warnings:  # e.g. a corrupt file moved aside: say it once per session
        seen = st.session_state.setdefault("_store_warnings_seen", set())
        if w not in seen:
            seen.add(w)
            st.warning(w, icon=":material/warning:")
    return s


SESSION_IMPORTS = "_session_imports"  # session_state: {"records": [Record], "bytes": int, "files": {file_id: msg}}


def session_imports() -> dict:
    """What this session uploaded in hosted mode (never stored; gone with the session)."""
    return st.session_state.setdefault(SESSION_IMPORTS, {"records": [], "bytes": 0, "files": {}})


def records(experiment: str | None = None) -> list[Record]:
    """This machine's records plus bundled ones for configurations not measured here; in hosted mode, plus the
    records this session uploaded (source "imported", for this session only)."""
    mine = st.session_state.get(SESSION_IMPORTS, {}).get("records") or []
    if not mine:
        return select.combined(store(), experiment=experiment)
    local = store().records(experiment) + [r for r in mine if experiment is None or r.experiment == experiment]
    return select.combined(store(), experiment=experiment, local=local)


def table(view: TableView, *, key: str | None = None, caption: bool = True) -> None:
    """A TableView as on screen: formatted strings, the caption (configuration, source) under it."""
    st.dataframe(to_frame(view), hide_index=True, key=key, width="stretch")
    if caption and view.caption:
        st.caption(view.caption)


def comparison_frame(view: TableView):
    """A comparison table for the screen: each ratio beside its metric, the error column only when a variant
    failed (exports keep the view's own layout)."""
    frame = to_frame(view)
    cols = list(frame.columns)
    ratio_of = {"forward (ms)": "forward vs", "train step (ms)": "train vs", "build (s)": "build vs",
                "peak memory (MB)": "memory vs"}
    order = []
    for c in cols:
        if any(c.startswith(p) for p in ratio_of.values()):
            continue
        order.append(c)
        if c in ratio_of:
            order += [r for r in cols if r.startswith(ratio_of[c])]
    if "error" in order and not frame["error"].astype(str).str.strip().any():
        order.remove("error")
    elif "error" in order:  # a failure's reason right after the names, where it is seen
        order.remove("error")
        order.insert(2, "error")
    return frame[order]


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
