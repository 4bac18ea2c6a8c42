"""Pitfalls: seed 000's multi-layer and shape mistakes, run in this machine's TensorFlow (experiment ``pitfalls``).

Each pitfall: the wrong code, what it did here (stored record: the error verbatim and the line that raised it, or the
silently wrong result), the right code and its check. The code shows from ``PITFALLS`` without running anything; Run
executes it in a worker. The settings (pitfall, sizes, cell) live in the URL.
"""

import streamlit as st

import ui
from rnnlab.present import pitfalls as PV

ui.nav.routed()  # first: a direct link right after a server start goes through the router

P = "pitfalls."
PITFALLS = PV.PITFALLS
VARIANTS = list(PV.VARIANTS)
PRESET_LABELS = {"quick": "quick: units 16, input_dim 8, batch 4, 6 steps",
                 "seed": "seed 000: units 128, input_dim 64, batch 32, 100 steps"}

sync = ui.UrlSync(P, experiment="pitfalls", names=["cell"], defaults={"cell": "rnn"}, default_variants=VARIANTS[:1],
                  extra_defaults={"preset": "quick"}, allowed_variants=VARIANTS)

st.title("Multi-layer and shape pitfalls, run live")
st.caption(PV.SUMMARY)

# The chosen pitfall travels in the URL as ``variants``; UrlSync puts a new list there only when the URL changed
# from outside (a link, a return to this page): then it sets the select box.
before = st.session_state.get(P + "variants")
sync.apply()
if st.session_state.get(P + "variants") is not before or st.session_state.get(P + "pitfall") not in PITFALLS:
    st.session_state[P + "pitfall"] = (st.session_state.get(P + "variants") or VARIANTS[:1])[0]
if st.session_state.get(P + "preset") not in PV.PRESETS:
    st.warning(f"URL: preset={ui.md_escape(repr(st.session_state.get(P + 'preset')))} is not one of "
               f"{', '.join(PV.PRESETS)}; using quick", icon=":material/link_off:")
    st.session_state[P + "preset"] = "quick"

# -- controls ------------------------------------------------------------------------------------------------------
st.selectbox("pitfall", VARIANTS, format_func=PV.title, key=P + "pitfall")  # the page's width: its name whole
c2, c3 = st.columns([8, 2])
c2.radio("sizes", PV.PRESETS, format_func=PRESET_LABELS.get, key=P + "preset", horizontal=True,
         help="the experiment's quick preset, or seed 000's own sizes; the cell is chosen on its own")
c3.selectbox("cell", PV.CELLS, key=P + "cell", help=PV.CELL_HELP)
pitfall, preset, cell = (st.session_state[P + k] for k in ("pitfall", "preset", "cell"))
sync.write({"cell": cell}, [pitfall], {"preset": preset})
spec = PITFALLS[pitfall]
params = PV.preset_params(preset, cell)

records = env = None
with ui.guard("Reading the stored results"):
    records = ui.records("pitfalls")
    env = ui.runbar.known_env()
if records is None:
    st.stop()
sel = ui.shared(records, PV.choose, records, params, env)  # once per records' version, for every session
fam = PV.family(pitfall)
family_shown, missing_cells = ui.shared(records, PV.family_records, records, params, fam, env) if fam else ([], 0)

# -- run -----------------------------------------------------------------------------------------------------------
plans = {}
with ui.guard("These settings cannot run"):
    plans = PV.plans(preset, cell, pitfall)
busy = ui.jobs.manager().busy()
refused = ui.jobs.refusals(plans)  # hosted mode: plans over the demo's caps are not offered as live buttons
r1 = r2 = r3 = r4 = st.container(horizontal=True, gap="small", vertical_alignment="center")  # labels never cut
stored = pitfall not in sel.missing
go = {
    "one": r1.button("Run this pitfall" if not stored else "Run this pitfall: stored", key=P + "run",
                     type="primary" if not stored else "secondary",
                     disabled=busy or stored or "one" not in plans or "one" in refused,
                     icon=":material/play_arrow:", help=ui.md_escape(refused["one"]) if "one" in refused else None),
    "all": r2.button(f"Run all pitfalls: {len(sel.missing)} not stored" if sel.missing else "All pitfalls stored",
                     key=P + "run_all", disabled=busy or not sel.missing or "all" not in plans or "all" in refused,
                     icon=":material/playlist_play:", help=ui.md_escape(refused["all"]) if "all" in refused else None),
}
if fam:
    go["cells"] = r3.button(f"Run rnn/lstm/gru: {missing_cells} not stored" if missing_cells else
                            "rnn/lstm/gru stored", key=P + "run_cells",
                            disabled=busy or not missing_cells or "cells" not in plans or "cells" in refused,
                            icon=":material/grid_view:",
                            help=ui.md_escape(refused["cells"]) if "cells" in refused else
                            f"{', '.join(fam)} for every cell at these sizes: the table of sub-cases below")
r4.caption("Each pitfall runs its wrong and its right code in a fresh TensorFlow worker (about 10 s to start); "
           "results are stored and shown at once next time.")
for name, why in refused.items():
    if name in go:
        st.caption(ui.jobs.refused_caption(why, plans[name]))
for name, pressed in go.items():
    if pressed and ui.jobs.start(plans[name], watch=P):
        st.rerun()
ui.runbar.progress(P, plans.values())  # in the sidebar: in view wherever the page is scrolled

# -- the chosen pitfall --------------------------------------------------------------------------------------------
st.header(ui.md_escape(spec["title"]), divider="gray")
rec = sel.shown.get(pitfall)
o = PV.outcome(rec) if rec is not None else None
if o is not None:  # the answer first: what the wrong code does (whose machine: under "What happened")
    if not o.ran:
        st.error(ui.md_escape(o.headline), icon=":material/error:")
    elif o.builds:
        st.warning(o.headline, icon=":material/visibility_off:")
    else:
        st.markdown(f"**{ui.md_escape(o.headline)}**")
st.markdown(spec["explanation"])
w = r = st.container()  # one above the other: each line of code has the page's width and is never cut
w.markdown(":red[**Wrong**]")
w.code(spec["wrong_code"], language="python", line_numbers=True, wrap_lines=True)
r.markdown(":green[**Right**]")
r.code(spec["right_code"], language="python", line_numbers=True, wrap_lines=True)
with st.expander("What both programs are given"):
    st.caption(spec["given"])

_said: set[str] = set()


def caption(text: str) -> None:
    """A table's caption without the clauses this page said already (the sizes, the machine): each fact once."""
    clauses = [c for c in text.split("; ") if c.strip()]
    new = [c for c in clauses if c.strip().rstrip(".") not in _said]
    _said.update(c.strip().rstrip(".") for c in clauses)
    if new:
        line = "; ".join(new)
        st.caption(line[:1].upper() + line[1:])


st.subheader(PV.happened_heading(rec))
if rec is None:
    if busy:
        st.info("Measuring: the result shows here when the run ends.", icon=":material/hourglass_top:")
    elif "one" in plans:
        ui.how_to_get(plans["one"].command(), page="pitfalls", button="Run this pitfall", here=True)
    elsewhere = PV.stored_elsewhere(records, pitfall)
    if elsewhere:
        st.caption("Stored for other settings: " + "; ".join(elsewhere) + ". Choose them above to see them.")
else:  # (its headline opens the section above)
    st.caption(f"Seen on {o.seen_on}. Sizes: {PV.sizes_note(rec.params)}"
               + (f"; this pitfall always uses the {o.cell_used} cell" if o.cell_used and o.cell_used != cell else ""))
    if o.case_note:
        st.caption(o.case_note)
    if o.ran and not o.builds:
        st.markdown(f"The statement of the wrong code that raised it (line {o.error_lineno}):")
        st.code(o.error_line or "", language="python", wrap_lines=True)
        with st.expander(f"TensorFlow's message, verbatim ({o.error_type})"):
            st.code(o.error or "", language=None, wrap_lines=True,
                    height=320 if len(o.error or "") > 1500 else "content")
    if o.ran and o.builds and o.result:  # a failure is said above; a silent run needs its numbers in words
        st.markdown("In words:\n" + "\n".join(f"- {ui.md_escape(part.strip())}" for part in o.result.split(" | ")))
    for view in (PV.facts(rec), PV.cases(rec)):
        if view is not None:
            ui.table(view, max_lines=4, caption=False)
            caption(view.caption)
    for v in PV.variations(rec):
        with st.expander(f"Also tried: {v['case']} ({'runs' if v['builds'] else v['error_type']})"):
            st.code(v["code"], language="python", line_numbers=True)
            if v["builds"]:
                st.markdown(ui.md_escape(v["result"]))
            else:
                st.caption(f"Line {v['error_lineno']} raised {v['error_type']}, verbatim:")
                st.code(v["error"] or "", language=None, wrap_lines=True)

    st.subheader("Check of the right code")
    if o.check_passed:
        st.success(f"Passed: {ui.md_escape(o.check)}.", icon=":material/check_circle:")
    elif o.check_passed is False:
        st.error(f"Failed: {ui.md_escape(o.check)}.", icon=":material/cancel:")
    else:
        st.info("No check result stored.", icon=":material/info:")

if fam:
    st.subheader("Every cell, both input widths")
    matrix = PV.sharing_matrix(family_shown, fam)
    if matrix is None:
        st.info("Not run yet at these sizes: press **Run rnn/lstm/gru** above"
                + (f", or in a terminal: `{plans['cells'].command()}`" if "cells" in plans else "."),
                icon=":material/info:")
    else:
        ui.frame_table(ui.view_frame(matrix), height="content", key=P + "matrix", max_lines=4)
        caption(matrix.caption)

# -- all pitfalls --------------------------------------------------------------------------------------------------
st.header("All pitfalls at these settings", divider="gray")
summary = PV.summary(sel.shown, params)
ui.frame_table(ui.view_frame(summary), height="content", key=P + "summary", max_lines=4)
caption(summary.caption)
if sel.shown:  # what `python -m rnnlab export --view pitfalls?...` writes: this pitfall, its family, the summary
    with ui.guard("Preparing the downloads"):
        ui.downloads.buttons(ui.shared(records, PV.view, records,
                                       {"cell": cell, "preset": preset, "variants": pitfall}, env), key=P + "report", label="Download this pitfall and the summary:")
