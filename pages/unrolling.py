"""Unrolling: every way TensorFlow can unroll an RNN, at one configuration (experiment ``unroll``).

The settings live in the URL (a copied link opens the same view). Stored results show at once; Run measures only
what this machine has not stored, in the background (progress and Cancel below the controls).
"""

import streamlit as st

import ui
from rnnlab.present import unrolling as U

ui.nav.routed()  # first: a direct link right after a server start goes through the router

EXP = U.EXP
P = "unroll."  # widget keys and session keys of this page
BASE = U.BASE  # the seven variants without XLA
SEED = U.SEED
DEFAULT_REF = U.REFERENCE

sync = ui.UrlSync(P, experiment="unroll", names=U.UNROLL_CONTROLS, defaults=SEED, default_variants=BASE,
                  extra_defaults={"ref": DEFAULT_REF}, allowed_variants=U.VARIANTS)


def _preset(name: str) -> None:  # on_click: runs before the script, so it may set the widgets
    values, variants = U.PRESETS[name]
    sync.set_widgets(values, variants, {"ref": U.reference_for(None, variants)})


st.title("Static vs dynamic unrolling")
st.caption(EXP.summary + " Each variant runs in its own fresh TensorFlow process, on the same weights and inputs.")

answer = st.container()  # the answer first: this configuration's findings, filled in once they are known
sync.apply()

# -- controls ------------------------------------------------------------------------------------------------------
b1, b2, _ = st.columns([2, 2, 5])
b1.button("Seed configuration", on_click=_preset, args=("seed",), icon=":material/restart_alt:",
          help="rnn, 3 layers x 128 units, batch 32, 100 steps, 64 inputs, float32: the seed's own configuration",
          key=P + "preset_seed")
b2.button("Quick (under a minute)", on_click=_preset, args=("quick",), icon=":material/bolt:",
          help="rnn, 1x32, batch 8, 20 steps, 4 variants, 5 timed steps: a first look", key=P + "preset_quick")

ps = EXP.params
c = st.columns(7)
c[0].selectbox("cell", ps["cell"].choices, key=P + "cell", help=ps["cell"].help)
for col, name in zip(c[1:6], ("layers", "units", "batch", "seq_len", "input_dim")):
    p = ps[name]
    col.number_input(name, min_value=int(p.lo), max_value=int(p.hi), step=1, key=P + name,
                     help=f"{p.help} ({int(p.lo)} to {int(p.hi)})")
c[6].selectbox("dtype", ps["dtype"].choices, key=P + "dtype", help=ps["dtype"].help)
st.multiselect("variants", U.VARIANTS, format_func=lambda v: f"{v}: {U.variant_label(v)}",
               key=P + "variants", help="tf1_dynamic is the reference: it runs with every measurement so the "
                                        "outputs of the others can be compared against it")
_timing = ("repeats", "warmup", "rounds", "threads", "device")
with st.expander("Timing, threads and device", expanded=any(st.session_state.get(P + n) != SEED[n] for n in _timing)):
    t = st.columns(5)
    for col, name in zip(t[:4], ("repeats", "warmup", "rounds", "threads")):
        p = ps[name]
        col.number_input(name, min_value=int(p.lo), max_value=int(p.hi), step=1, key=P + name,
                         help=f"{p.help} ({int(p.lo)} to {int(p.hi)})")
    t[4].selectbox("device", ps["device"].choices, key=P + "device", help=ps["device"].help)
    st.caption(U.run_shape_words())

values = {n: st.session_state[P + n] for n in U.UNROLL_CONTROLS}
if values["device"] == "gpu" and U.no_gpu_here():
    st.warning("device=gpu: TensorFlow cannot see a GPU on this machine (no NVIDIA device), so a run would fail. "
               "Stored or bundled GPU results still show below; choose auto or cpu to measure here.",
               icon=":material/memory:")
chosen = [v for v in U.VARIANTS if v in st.session_state[P + "variants"]]  # canonical order

# The reference of the ratios: kept in the URL; it must be one of the chosen variants.
ref = st.session_state.get(P + "ref") or DEFAULT_REF
if chosen and ref not in chosen:
    if sync.extra.get("ref") == ref and ref != DEFAULT_REF:
        st.warning(f"URL: reference {ui.md_escape(repr(ref))} is not among the chosen variants; using "
                   f"{U.reference_for(None, chosen)}", icon=":material/link_off:")
    ref = U.reference_for(None, chosen)
    st.session_state[P + "ref"] = ref
sync.extra = {}
sync.write(values, chosen, {"ref": ref})

if not chosen:
    st.info("Pick at least one variant to compare.", icon=":material/info:")
    st.stop()

plan = None
with ui.guard("These settings cannot run"):
    plan = ui.runbar.plan("unroll", overrides=values, variants=chosen)
if plan is None:
    st.stop()
sweep_plan, sweep_problem = U.sweep_plan(values, chosen)

records = None
with ui.guard("Reading the stored results"):
    records = ui.records("unroll")
    env = ui.runbar.known_env(values["device"])
if records is None:
    st.stop()
sel = ui.shared(records, U.selection, records, plan, env)  # computed once per records and settings
point = sel.point

# -- run -----------------------------------------------------------------------------------------------------------
st.divider()
busy = ui.runbar.run_bar(plan, sel.missing, prefix=P, watch=P, settings="this configuration", also=(sweep_plan,))

sweep_made = ui.shared(records, U.sweep_views, sel.sweep, point)

# -- results -------------------------------------------------------------------------------------------------------
shown = list(sel.shown)
st.header("Comparison", divider="gray")
if not shown and busy:
    ui.jobs.measuring("the table and charts", (plan, sweep_plan))
elif not shown:
    ui.how_to_get(U.command(values, list(plan.variants)), page="unrolling", button="Run", here=True)
    st.caption(f"Configuration: {U.describe(point)}.")
else:
    options = [r.variant for r in shown]
    st.session_state[P + "ref"] = U.reference_for(st.session_state.get(P + "ref"), options)
    st.selectbox("ratios against", options, format_func=lambda v: f"{v}: {U.variant_label(v)}", key=P + "ref",
                 width=420, help="each ratio column divides the row's value by this variant's (>1: takes more); "
                                 "in brackets its interval, across rounds or from the timed steps' quartiles")
    ref = st.session_state[P + "ref"]
    sync.write(values, chosen, {"ref": ref})
    pv = ui.shared(records, U.page_view, records, plan, env, ref)  # as `export --view unrolling?...` builds it
    view = pv.table
    ui.comparison_tables(U.screen(view), key=P + "table")  # tables that fit the page, the caption under them

    said = list(pv.said)
    if said:
        answer.markdown(ui.findings_md(said[:2], lead="**In short.**"))
        rest = U.more_said(said)  # the machine was said with "In short"; each finding once
        if rest:
            st.markdown(ui.findings_md(rest, lead="**More of what these numbers say** (the Overview's findings, "
                                                  "for this configuration)."))

    made = list(pv.charts)
    rep = pv.report
    ui.downloads.buttons(rep, key=P + "report", label="Download this table and its charts:")

    st.header("Charts", divider="gray")
    if not made:
        st.info("No successful variant to chart yet.", icon=":material/info:")
    by_title = {cv.title: cv for _, cv in made}
    for row in U.CHART_ROWS:
        present = [t for t in row if t in by_title]
        if not present:
            continue
        cols = st.columns(len(row))
        for col, t in zip(cols, present):
            with col:
                ui.chart(by_title[t], width="stretch")  # two per row, each its column's width
    if any(cv.title == "Achieved GFLOP/s" for _, cv in made):
        st.caption(U.gflops_note(shown))

    st.header("On one core, and on every core", divider="gray")
    if pv.threads is not None:
        ui.comparison_tables(U.screen(pv.threads), key=P + "threads")
        st.markdown(ui.findings_md(list(pv.threads_said), lead="**What moves with the cores.**")
                    if pv.threads_said else "No ratio moves between the thread counts: every pair of intervals overlaps.")
    else:
        st.caption(U.threads_missing(U.command({**values, 'threads': 0 if values['threads'] else 1}, chosen)))

# -- sweep ---------------------------------------------------------------------------------------------------------
st.header("Scaling with the sequence length", divider="gray")
n_missing = ui.shared(records, U.sweep_missing, records, sweep_plan, env)
s1 = s2 = st.container(horizontal=True, gap="small", vertical_alignment="center")  # the label is never cut
label = (f"Run this sweep: {n_missing} measurement{'s' if n_missing != 1 else ''} not stored" if n_missing
         else "Run this sweep: everything is stored" if sweep_plan is not None else "Run this sweep")
sweep_refused = ui.jobs.refusal(sweep_plan)  # hosted mode: the sweep is over the demo's caps
if sweep_refused:  # not offered: the command that runs it on the visitor's own machine instead
    s1.caption(ui.jobs.refused_caption(sweep_refused, sweep_plan))
elif s1.button(label, disabled=busy or not n_missing, key=P + "sweep", icon=":material/stacked_line_chart:"):
    if ui.jobs.start(sweep_plan, watch=P):
        st.rerun()
s2.caption(f"seq_len {', '.join(map(str, U.SWEEP_VALUES))} at the configuration above, the chosen variants; log axes."
           + (f" Cannot run here: {sweep_problem}" if sweep_problem else ""))
if sweep_made:
    tabs = st.tabs([name for name, _, _ in sweep_made])
    for tab, (_, _, cv) in zip(tabs, sweep_made):
        ui.chart(cv, where=tab)
    st.caption(U.sweep_caption(sel.sweep, point) + ". One line per variant and machine: a line never joins two "
               "machines' points.")
else:
    st.caption("No sweep stored for this configuration yet (at least two sequence lengths are needed).")
