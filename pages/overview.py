"""Overview: what rnnlab answers, and the headline findings computed from the stored records."""

import pandas as pd
import streamlit as st

import ui
from rnnlab.present import overview as O

ui.nav.routed()  # first: a direct link right after a server start goes through the router

st.title(O.TITLE)
st.markdown(O.INTRO)

with ui.guard("Reading the stored results"):
    records = ui.records()
    cards = ui.shared(records, O.cards, records)  # once per records' version, for every session

    st.header("Findings", divider="gray")
    if not cards.found:
        st.info("No results yet. Measure a first, small configuration (under a minute on 2 cores): in a terminal "
                f"`{O.first_command()}`, or open **Unrolling**, press **Quick** and then **Run**.",
                icon=":material/info:")
        ui.page_link("unrolling", "Open Unrolling")
    # the machine every finding opens with ("On the bundled results' CPU (...)"), said once above the cards
    head, lines = O.shared_opening([f.sentence for _, fs in cards.found for f in fs])
    if head:
        st.markdown(f"{head}:")
    lines = iter(lines)
    cols = st.columns(2)
    said_details = set()
    for i, (q, fs) in enumerate(cards.found):
        with cols[i % 2].container(border=True):
            st.markdown(f"**{q.text}**")
            for f in fs:
                st.markdown(O.emphasise(next(lines).text))
                detail = O.detail_without_source(f) if head else f.detail  # the machine: said above
                if detail not in said_details:  # a configuration two findings share: said with the first
                    said_details.add(detail)
                    st.caption(f"At {detail}.")
                ui.page_link(f.page, f"Show this configuration on {ui.nav.title(f.page)}", query=dict(f.query))

    if cards.found:  # what `python -m rnnlab export --view overview` writes
        ui.downloads.buttons(ui.shared(records, O.view, records, {}), key="overview.report", label="Download the findings:",
                             formats=("md", "pptx", "csv"))

    if cards.open:
        st.subheader("Not measured yet")
        for q in cards.open:
            with st.expander(q.text):
                ui.how_to_get(q.how, page=q.page)
                ui.page_link(q.page, f"Open {ui.nav.title(q.page)}")

    st.header("Experiments", divider="gray")
    st.caption("Everything rnnlab can measure, each on its page; the command measures its quick preset.")
    pages = {p.url_path: p.title for p in ui.nav.existing()}
    ui.frame_table(pd.DataFrame(ui.shared(records, O.experiment_rows, records, pages)), max_lines=2,
                   config={"stored records": st.column_config.NumberColumn("records", help="stored records")})
