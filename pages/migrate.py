"""Migrate TF1 to Keras 3: the mapping checked live here, the converter (a demo run and the user's own checkpoint),
and seed 004's "cuDNN-based" construct corrected (experiment ``migrate``).

Nothing here imports TensorFlow: stored records show at once, Run measures in workers (ui.jobs), and an uploaded
checkpoint is converted by ``python -m rnnlab convert`` in a subprocess. The settings live in the URL.
"""

import hashlib
import sys

import streamlit as st

import ui
from rnnlab.engine import api
from rnnlab.present import migrate as MV

ui.nav.routed()  # first: a direct link right after a server start goes through the router

P = "migrate."
ROWS = MV.ROWS
PRESET_LABELS = {"quick": "quick: units 8, batch 3, 6 steps", "seed": "seed 004: units 32, batch 32, 28 steps"}

sync = ui.UrlSync(P, experiment="migrate", names=["cell", "layers"], defaults={"cell": "lstm", "layers": 2},
                  default_variants=list(ROWS)[:1], extra_defaults={"preset": "quick", **MV.CUDNN_DEFAULTS},
                  allowed_variants=list(ROWS))

st.title("Migrating TF1 RNN cells to Keras 3")
answer_box = st.container()
st.caption(MV.SUMMARY)

before = st.session_state.get(P + "variants")
sync.apply()
if st.session_state.get(P + "variants") is not before or st.session_state.get(P + "row") not in ROWS:
    st.session_state[P + "row"] = (st.session_state.get(P + "variants") or list(ROWS)[:1])[0]
bad = [k for k, opts in {"preset": MV.PRESETS, **MV.CUDNN_OPTIONS}.items() if st.session_state.get(P + k) not in opts]
if bad:
    st.warning("This link holds settings that cannot be used; the defaults replace them:\n" + "\n".join(
        f"- {k}={ui.md_escape(repr(st.session_state.get(P + k)))}" for k in bad), icon=":material/link_off:")
    for k in bad:
        st.session_state[P + k] = "quick" if k == "preset" else MV.CUDNN_DEFAULTS[k]

# -- settings of the runs ------------------------------------------------------------------------------------------
c1, c2, c3 = st.columns([6, 2, 2])
c1.radio("sizes", MV.PRESETS, format_func=PRESET_LABELS.get, key=P + "preset", horizontal=True,
         help="the live checks and the converter demo run at these sizes")
c2.selectbox("cell", MV.CELLS, key=P + "cell", help="the TF1 cell of the checks and the demo")
c3.number_input("layers", min_value=1, max_value=8, step=1, key=P + "layers",
                help="stacked cells (MultiRNNCell) in the converter demo and the multi-layer checks")
preset, cell, layers = st.session_state[P + "preset"], st.session_state[P + "cell"], int(st.session_state[P + "layers"])
params = MV.preset_params(preset, cell, layers)

records = env = None
with ui.guard("Reading the stored results"):
    records = ui.records("migrate")
    env = ui.runbar.known_env()
if records is None:
    st.stop()
checks, sel, s004 = ui.shared(records, MV.selection, records, params, env)  # once per records' version
said = MV.answer(checks, sel.shown.get("convert_verify"), s004)  # the answer first, the evidence below
if said:
    answer_box.markdown(said)
busy = ui.jobs.manager().busy()
plans = {}
with ui.guard("These settings cannot run"):
    plans = MV.plans(preset, cell, layers)
refused = ui.jobs.refusals(plans)  # hosted mode: plans over the demo's caps are not offered as live buttons
n_checks = sum(v in sel.missing for v in MV.CHECK_VARIANTS)
r1 = r2 = r3 = r4 = st.container(horizontal=True, gap="small", vertical_alignment="center")  # labels never cut
go = {
    "checks": r1.button(f"Run the live checks: {n_checks} not stored" if n_checks else "Live checks stored",
                        key=P + "run_checks", disabled=busy or not n_checks or not plans or "checks" in refused,
                        icon=":material/fact_check:", type="primary" if n_checks else "secondary",
                        help=ui.md_escape(refused["checks"]) if "checks" in refused else
                        "one worker per mapping row: the TF1 construct against its Keras 3 replacement"),
    "demo": r2.button("Run the converter demo" if "convert_verify" in sel.missing else "Converter demo stored",
                      key=P + "run_demo",
                      disabled=busy or "convert_verify" not in sel.missing or not plans or "demo" in refused,
                      icon=":material/swap_horiz:", help=ui.md_escape(refused["demo"]) if "demo" in refused else None),
    "seed004": r3.button("Run seed 004's construct" if "seed004_construct" in sel.missing else
                         "Seed 004's construct stored", key=P + "run_seed004",
                         disabled=busy or "seed004_construct" not in sel.missing or not plans or "seed004" in refused,
                         icon=":material/science:",
                         help=ui.md_escape(refused["seed004"]) if "seed004" in refused else None),
}
r4.caption("Each runs in fresh TensorFlow workers (about 10 s each to start); results are stored.")
for name, why in refused.items():
    st.caption(ui.jobs.refused_caption(why, plans[name]))
for name, pressed in go.items():
    if pressed and ui.jobs.start(plans[name], watch=P):
        st.rerun()
ui.runbar.progress(P, plans.values())  # in the sidebar: in view wherever the page is scrolled

# -- the mapping ---------------------------------------------------------------------------------------------------
st.header("TF1 constructs and their Keras 3 replacements", divider="gray")
view = MV.mapping_table(checks, params)
ui.frame_table(ui.view_frame(view), columns=("TF1 construct", "Keras 3 code", "checked live"), key=P + "mapping",
               max_lines=4, height="content", config={
    "TF1 construct": st.column_config.TextColumn(width=330),
    "checked live": st.column_config.TextColumn(width=130, help="pass/FAIL (max abs diff)")})
st.caption(view.caption + ". Each row's traps and what has no Keras 3 equivalent: pick the row under "
           "**Before and after**; the downloads hold them too.")
if not any(lv.record for lv in checks.values()) and "checks" in plans:
    ui.how_to_get(plans["checks"].command(), page="migrate", button="Run the live checks", here=True)
# what `export --view migrate?...` writes too
ui.downloads.buttons(ui.shared(records, MV.mapping_report, checks, params, sel.shown.get("convert_verify"), s004),
                     key=P + "mapping", formats=("csv", "md", "pptx"),
                     label="Download the mapping:")

# -- one row, before and after -------------------------------------------------------------------------------------
st.header("Before and after", divider="gray")
st.selectbox("construct", list(ROWS), format_func=lambda v: ROWS[v].tf1.split("(")[0], key=P + "row")
row_variant = st.session_state[P + "row"]
row = ROWS[row_variant]
b, a = st.columns(2)
b.markdown("**TF1**")
b.code(row.tf1, language="python", wrap_lines=True)
a.markdown("**Keras 3**")
a.code(row.keras3_code, language="python", wrap_lines=True)
st.markdown("**Traps**\n" + "\n".join(f"- {t}" for t in row.traps))
if row.no_equivalent:
    st.markdown("**No Keras 3 equivalent**\n" + "\n".join(f"- {t}" for t in row.no_equivalent))
st.caption(f"Converter: {row.converter}." + (f" Not checkable here: {' '.join(row.not_checked)}"
                                               if row.not_checked else ""))
lv = checks[row_variant]
seen = ""  # the machine the page has named: said once
if lv.record is None:
    with ui.guard("This check cannot run"):
        ui.how_to_get(MV.cli_command(preset, cell, layers, [row_variant]), page="migrate",
                      button="Run the live checks", here=True)
else:
    rec = lv.record
    if not rec.ok:
        st.error(ui.md_escape(f"The check's worker failed: {rec.error}"), icon=":material/error:")
    else:
        (st.success if rec.metrics.get("passed") else st.error)(MV.check_headline(rec, exact=lv.exact),
                                                                 icon=":material/fact_check:")
    seen = MV.seen_on([rec])
    st.caption(f"Ran {MV.ran_note(rec)}. Seen on {seen}.")
    if rec.ok:
        ui.table(MV.check_table(rec), caption=False)
        facts = MV.extra_facts(rec)
        if facts:
            with st.expander("What else the check measured"):
                st.markdown("\n".join(f"- **{ui.md_escape(k)}**: {ui.md_escape(v)}" for k, v in facts))
# the cuDNN settings below go into the URL only where they differ from Keras's defaults (a shorter link)
sync.write({"cell": cell, "layers": layers}, [row_variant], {"preset": preset, **{
    k: st.session_state.get(P + k) if st.session_state.get(P + k) != MV.CUDNN_DEFAULTS[k] else None
    for k in MV.CUDNN_OPTIONS}})

# -- the converter demo --------------------------------------------------------------------------------------------
st.header("The converter, end to end", divider="gray")
how_demo = st.expander("What the demo does")
how_demo.markdown("A worker builds a TF1 `dynamic_rnn` over the chosen cell and layers with random weights, saves "
                  "it with `tf.compat.v1.train.Saver`, reads the checkpoint back "
                  "(`rnnlab.tf.convert.read_tf1_checkpoint`), converts it to Keras 3 layers, writes a `.keras` file, "
                  "loads it with `keras.models.load_model` and runs it against the TF1 graph on the same inputs, with "
                  f"full lengths and with `sequence_length`; tolerance {MV.ATOL:g}.")
demo = sel.shown.get("convert_verify")
if demo is None:
    if "demo" in plans:
        ui.how_to_get(plans["demo"].command(), page="migrate", button="Run the converter demo", here=True)
elif not demo.ok:
    st.error(ui.md_escape(f"The demo's worker failed: {demo.error}"), icon=":material/error:")
else:
    passed = bool(demo.metrics.get("passed"))
    (st.success if passed else st.error)(MV.demo_headline(demo),
                                         icon=":material/check_circle:" if passed else ":material/cancel:")
    how_demo.caption(f"Ran {MV.ran_note(demo)}; checkpoint variables: "
                     f"{', '.join(demo.details.get('checkpoint_variables') or [])}; .keras file "
                     f"{demo.details.get('keras_file_mb', 0) * 1024:.0f} KB."
                     + (f" Seen on {MV.seen_on([demo])}." if MV.seen_on([demo]) != seen else ""))
    ui.table(MV.demo_table(demo), caption=False)


# -- the user's checkpoint -----------------------------------------------------------------------------------------
st.header("Convert your own TF1 checkpoint", divider="gray")
st.markdown(f"Upload the files `tf.compat.v1.train.Saver` wrote: `PREFIX.index` and every `PREFIX.data-*` shard "
            f"(the `checkpoint` file may come along; `.meta` is not needed). Up to {api.convert.MAX_UPLOAD_MB} MB in total. "
            "They are converted in a separate process (`python -m rnnlab convert PREFIX --out model.keras --json`), "
            f"verified against the TF1 graph to {MV.ATOL:g}, and deleted afterwards.")
files = st.file_uploader("TF1 checkpoint files", accept_multiple_files=True, key=P + "upload",
                         max_upload_size=api.convert.MAX_UPLOAD_MB)
if ui.jobs.hosted_mode():  # size and count checked, and booked against every visitor's uploads, before any is read
    booked = st.session_state.get(P + "booked", [])
    ui.uploads.unbook([f for f in booked if f not in {x.file_id for x in files or []}])
    with ui.guard("These files cannot be held here"):
        ui.uploads.book(files or [], what="this checkpoint", max_files=ui.jobs.hosted_limits().checkpoint_files,
                        max_mb=api.convert.MAX_UPLOAD_MB)
        st.session_state[P + "booked"] = [f.file_id for f in files or []]
    if set(st.session_state.get(P + "booked", [])) != {f.file_id for f in files or []}:
        files = []  # refused: dropped from the server's memory, nothing to convert
o1, o2, o3 = st.columns(3)
o1.number_input("forget_bias of the TF1 LSTM cells", value=1.0, step=0.1, key=P + "forget_bias",
                help="TF1 adds it at run time and never stores it: give the value the model was built with")
o2.selectbox("cell type", ["detect from the names", "lstm", "gru", "rnn"], key=P + "up_cell",
             help="only needed when the variable names do not say which cell it was")
o3.text_input("scope", key=P + "scope", placeholder="e.g. bidirectional_rnn/fw",
              help="which RNN, when the checkpoint holds several")
options = {"cell": None if st.session_state[P + "up_cell"].startswith("detect") else st.session_state[P + "up_cell"],
           "forget_bias": float(st.session_state[P + "forget_bias"]),
           "scope": (st.session_state[P + "scope"] or "").strip() or None}
signature = hashlib.sha256(repr((sorted((f.name, f.size, f.file_id) for f in files or []),
                                 sorted(options.items()))).encode()).hexdigest()
hosted = ui.jobs.hosted_mode()
limits = ui.jobs.hosted_limits() if hosted else None
if hosted:
    st.caption(f"In this demo one conversion or run goes at a time, limited to {limits.convert_mb} MB and "
               f"{limits.convert_timeout_s} s.")
if st.button("Convert and verify", key=P + "convert", disabled=not files or (hosted and busy),
             icon=":material/upload_file:",
             help="wait for the run or conversion going on to finish" if hosted and busy else None):
    st.session_state.pop(P + "converted", None)
    with ui.guard("These files cannot be converted"), st.spinner("Converting in a separate process (TensorFlow "
                                                                 "starts there: about 10 s)..."):
        # hosted: one heavy process at a time, process-wide (a run or another visitor's conversion refuses this)
        with ui.jobs.heavy_slot("a checkpoint conversion"), ui.turns.aside():  # the others render meanwhile
            limit = {"timeout_s": limits.convert_timeout_s, "mem_limit_mb": limits.convert_mb} if hosted else {}
            st.session_state[P + "converted"] = {
                **api.convert.convert_upload([(f.name, f.getvalue()) for f in files], python=sys.executable,
                                    root=str(ui.nav.ROOT), **options, **limit), "signature": signature}
done = st.session_state.get(P + "converted")
if done and done["signature"] == signature:
    res = done["res"]
    v = res["verification"]
    (st.success if res["pass"] else st.error)(
        f"{'Verified' if res['pass'] else 'Converted, but NOT within tolerance'}: max abs diff "
        f"{v['max_abs_diff']:.1e} against {v['atol']:g}", icon=":material/check_circle:" if res["pass"] else
        ":material/cancel:")
    st.markdown(f"Found {ui.md_escape(MV.describe_spec(res['spec']))}"
                + (f"; forget_bias {res['forget_bias']:g} folded into the forget-gate bias"
                   if any(c.get("cell") == "lstm" for c in res["spec"].get("cells", [])) else "")
                + (f". Other RNNs in the checkpoint, not converted: {', '.join(res['spec']['other_stacks'])}"
                   if res["spec"].get("other_stacks") else "") + ".")
    ui.table(MV.convert_diffs(res))
    st.download_button(f"Download {done['name']}", data=done["keras"], file_name=done["name"],
                       mime="application/octet-stream", key=P + "download", icon=":material/download:",
                       on_click="ignore")
    if done["ignored"]:
        st.caption(f"Not needed and not used: {', '.join(done['ignored'])}.")

# -- seed 004 ------------------------------------------------------------------------------------------------------
st.header("Seed 004, corrected: what takes the fused cuDNN kernel", divider="gray")
st.markdown("Seed 004 calls `RNN(tf.compat.v1.nn.rnn_cell.LSTMCell(rnn_units))` \"cuDNN-based\". Keras 3's own rules "
            "(read from its source; this machine cannot run cuDNN) decide per layer and arguments:")
LSTM_GRU_ONLY = ("activation", "recurrent_activation", "recurrent_dropout", "unroll", "use_bias", "mask")
kind = MV.LAYERS[st.session_state.get(P + "keras_layer", MV.CUDNN_DEFAULTS["keras_layer"])][0]
cols = st.columns(5)
for i, (k, opts) in enumerate(MV.CUDNN_OPTIONS.items()):
    off = (k in LSTM_GRU_ONLY and kind not in ("LSTM", "GRU")) or (k == "reset_after" and kind != "GRU")
    label = {"gpu": "GPU visible to TensorFlow", "keras_layer": "layer"}.get(k, k)
    cols[i % 5].selectbox(label, opts, key=P + k, disabled=off,
                          help="applies to LSTM and GRU only" if k in LSTM_GRU_ONLY else None)
choice = {k: st.session_state[P + k] for k in MV.CUDNN_OPTIONS}
q = None
with ui.guard("These settings cannot be judged"):
    q = MV.cudnn_question(choice)
if q is not None:
    st.code(MV.keras_code(choice), language="python")
    if q["eligible"]:
        st.success(f"Fused cuDNN kernel on a GPU: {ui.md_escape(q['path'])}.", icon=":material/bolt:")
    else:
        st.warning("No cuDNN kernel:\n" + "\n".join(f"- {ui.md_escape(r)}" for r in q["reasons"]),
                   icon=":material/block:")
    for n in q["notes"]:
        st.caption(n)
st.markdown(f"**The CPU path** ({'used when no GPU is visible' if MV.gpu_here() else 'no GPU on this machine'}): "
            f"{ui.md_escape(MV.CPU_PATH)}")
st.caption(f"Rules from Keras {MV.keras_version()}: {', '.join(MV.RULE_SOURCES)}.")

st.subheader(MV.seed004_heading(s004))
if s004 is None:
    if "seed004" in plans:
        ui.how_to_get(plans["seed004"].command(), page="migrate", button="Run seed 004's construct", here=True)
elif not s004.ok:
    st.error(ui.md_escape(f"The worker failed: {s004.error}"), icon=":material/error:")
else:
    d = s004.details
    st.markdown("\n".join(f"- {ui.md_escape(f)}" for f in MV.seed004_findings(s004)))  # the table's rows, said
    # the correction, but for the sentence the answer above quotes already
    rest = [x for x in str(d.get("correction", "")).split(". ")
            if x.strip() and x.removeprefix("It is not: ").rstrip(".") not in said]
    if rest:
        st.markdown(f"**Corrected:** {ui.md_escape('. '.join(rest).rstrip('.') + '.')}")
    with st.expander("Every error, verbatim"):
        for name, s in (d.get("scenarios") or {}).items():
            if s.get("error"):
                st.caption(f"{MV.SCENARIOS.get(name, name)}: at `{s.get('failed_at')}`, {s.get('error_type')}")
                st.code(s["error"], language=None, wrap_lines=True)

# -- the cost ------------------------------------------------------------------------------------------------------
st.subheader("The cost, before and after")
st.markdown(MV.cost_intro(choice))
unroll_recs = None
with ui.guard("Reading the stored unrolling results"):
    unroll_recs = ui.records("unroll")
if unroll_recs is not None:
    cmp = ui.shared(unroll_recs, MV.cost_table, unroll_recs, choice, env)
    if cmp is not None:
        ui.comparison_tables(cmp, key=P + "cost")
    else:
        st.caption("Not measured at these sizes yet.")
ui.page_link("unrolling", "Measure or compare it on the Unrolling page (same configuration)",
             query=MV.cost_query(choice))
