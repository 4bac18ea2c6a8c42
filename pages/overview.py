"""Overview: what rnnlab answers, and the headline findings computed from the stored records."""

import re

import pandas as pd
import streamlit as st

import ui
from rnnlab import experiments
from rnnlab.judge import findings

ui.nav.routed()  # first: a direct link right after a server start goes through the router


def _emphasise(text: str) -> str:
    """Bold the quoted ratios: "builds **2.74x slower**"."""
    return re.sub(r"(\d[\d,.]*x (?:slower|faster)|about as fast)", r"**\1**", text)


st.title("rnnlab: how TensorFlow unrolls recurrent networks")
st.markdown(
    "An RNN over *T* steps can be built as **one graph node per step** (`static_rnn`, a Python loop in "
    "`tf.function`, Keras `unroll=True`) or as **a loop inside the graph** (`dynamic_rnn`, `tf.while_loop`, Keras "
    "layers, cuDNN). The first costs build time, graph size and memory; the second costs per-step overhead. "
    "rnnlab measures both, every TensorFlow 1, TensorFlow 2 and Keras 3 variant with the same weights and inputs, "
    "**on this machine**: build and first-call time, forward and training step, peak memory, achieved GFLOP/s, "
    "and whether the outputs agree.")

with ui.guard("Reading the stored results"):
    records = ui.records()
    answered = findings.answer(records)
    found = [(q, fs) for q, fs in answered if fs]
    open_qs = [q for q, fs in answered if not fs]

    st.header("Findings", divider="gray")
    if not found:
        st.info("No results yet. Measure a first, small configuration (about a minute on 2 cores): in a terminal "
                "`python -m rnnlab run unroll --preset quick`, or open **Unrolling**, press **Quick** and then "
                "**Run**.", icon=":material/info:")
        ui.page_link("unrolling", "Open Unrolling")
    cols = st.columns(2)
    for i, (q, fs) in enumerate(found):
        with cols[i % 2].container(border=True):
            st.markdown(f"**{q.text}**")
            for f in fs:
                st.markdown(_emphasise(f.headline))
                st.caption(f.detail)
                ui.page_link(f.page, f"Show this configuration on {ui.nav.title(f.page)}", query=dict(f.query))

    if open_qs:
        st.subheader("Not measured yet")
        for q in open_qs:
            with st.expander(q.text):
                ui.how_to_get(q.how, page=q.page)
                ui.page_link(q.page, f"Open {ui.nav.title(q.page)}")

    st.header("Experiments", divider="gray")
    st.caption("Everything rnnlab can measure. Pages not listed in the sidebar yet: use the command line.")
    counts: dict[str, int] = {}
    for r in records:
        counts[r.experiment] = counts.get(r.experiment, 0) + 1
    rows = [{"experiment": e.name, "what it answers": e.title, "stored records": counts.get(e.name, 0),
             "page": ui.nav.title(e.page) if e.page and ui.nav.page_file(e.page) else "",
             "measure with": f"python -m rnnlab run {e.name} --preset quick"}
            for e in experiments.all_experiments()]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={"what it answers": st.column_config.TextColumn(width="large")})
