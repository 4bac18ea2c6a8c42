"""Tabs whose open one lives in the URL (``tab``): a copied link opens the same tab, and switching tabs brings back
that tab's last settings (each tab's query kept in the session). Only the open tab's script part runs.

    state = ui.tabstate.TabState(P, {"semantics": "What padding does", "cost": "What padding costs"})
    name, tab = state.open()        # follows the URL, draws the tabs
    with tab:
        ...                         # the tab's widgets write the URL (UrlSync)
        state.remember(name)        # this tab's settings, for a return to it
"""

from __future__ import annotations

from typing import Mapping

import streamlit as st

from .common import md_escape


class TabState:
    """The tabs ``labels`` (URL name -> label, the first the default) under session keys starting ``prefix``:
    ``prefix + "tab"`` (the tabs widget), ``prefix + "_url_tab"`` (the tab the URL named last) and
    ``prefix + "_q." + name`` (each tab's last query)."""

    def __init__(self, prefix: str, labels: Mapping[str, str]):
        self.prefix = prefix
        self.labels = dict(labels)
        self.first = next(iter(self.labels))

    def _changed(self) -> None:
        """A tab click: the URL shows that tab with the settings it had (or its defaults on a first visit)."""
        by_label = {label: name for name, label in self.labels.items()}
        name = by_label[st.session_state[self.prefix + "tab"]]
        st.session_state[self.prefix + "_url_tab"] = name
        st.query_params.from_dict(st.session_state.get(self.prefix + "_q." + name) or {"tab": name})

    def follow_url(self) -> None:
        """Open the tab the URL names (a shared link, a page link); a URL without one asks for the first tab, one
        with an unknown tab gets a warning and the first."""
        query = st.query_params.to_dict()
        url_tab = query.get("tab") or (self.first if query else None)
        if url_tab is None or url_tab == st.session_state.get(self.prefix + "_url_tab"):
            return
        st.session_state[self.prefix + "_url_tab"] = url_tab
        if url_tab in self.labels:
            st.session_state[self.prefix + "tab"] = self.labels[url_tab]
        else:
            st.warning(f"This link names an unknown tab {md_escape(repr(url_tab))}; known: "
                       f"{', '.join(self.labels)}. Showing the first.", icon=":material/link_off:")
            st.session_state[self.prefix + "tab"] = self.labels[self.first]

    def open(self):
        """:meth:`follow_url`, then the tabs: (the open tab's name, its container)."""
        self.follow_url()
        tabs = st.tabs(list(self.labels.values()), key=self.prefix + "tab", on_change=self._changed)
        return next(((n, t) for n, t in zip(self.labels, tabs) if t.open), (self.first, tabs[0]))

    def remember(self, name: str) -> None:
        """Keep the URL's query as tab ``name``'s settings (after its widgets wrote it)."""
        st.session_state[self.prefix + "_q." + name] = st.query_params.to_dict()
