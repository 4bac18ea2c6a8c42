"""Glossary: the words the pages use (seed, variant names, zofm, roofline, the notation), from
``rnnlab.present.glossary``; every page links here from the sidebar."""

import streamlit as st

import ui
from rnnlab.present import glossary as G

ui.nav.routed()  # first: a direct link right after a server start goes through the router

st.title(G.TITLE)
st.markdown(G.INTRO)
records = []
with ui.guard("Reading the stored results"):
    records = ui.records("unroll")
sections = G.sections(records)
st.markdown("On this page: " + " · ".join(f"[{s.title}](#{ui.anchor(s.title)})" for s in sections))
for s in sections:
    st.header(s.title, anchor=ui.anchor(s.title), divider="gray")
    st.markdown(G.as_markdown(s))
