"""Unrolling: every way TensorFlow can unroll an RNN, at one configuration (experiment ``unroll``).

The settings live in the URL (a copied link opens the same view). Stored results show at once; Run measures only
what this machine has not stored, in the background (progress and Cancel below the controls).
"""

import streamlit as st

import ui
from rnnlab.engine import api
from rnnlab.present import charts, tables
from rnnlab.core import envinfo
from rnnlab import experiments
from rnnlab.judge import select
from rnnlab.tf import variants as V
from rnnlab.core.errors import RnnlabError
from rnnlab.judge.findings import SWEEP_VALUES, UNROLL_CONTROLS
from rnnlab.core.format import fmt_params
from rnnlab.present.report import chart_view
from rnnlab.tf.variants import label as variant_label

ui.nav.routed()  # first: a direct link right after a server start goes through the router

EXP = experiments.get("unroll")
P = "unroll."  # widget keys and session keys of this page
BASE = list(V.BASE_VARIANTS)  # the seven variants without XLA
_defaults = EXP.params.defaults()
SEED = {**{k: _defaults[k] for k in UNROLL_CONTROLS}, **{k: v for k, v in EXP.presets["seed"].items()
                                                          if k != "variants"}}
QUICK = {**{k: _defaults[k] for k in UNROLL_CONTROLS}, **{k: v for k, v in EXP.presets["quick"].items()
                                                           if k != "variants"}}
PRESETS = {"seed": (SEED, list(EXP.presets["seed"].get("variants") or BASE)),
           "quick": (QUICK, list(EXP.presets["quick"].get("variants") or BASE))}
DEFAULT_REF = V.REFERENCE

sync = ui.UrlSync(P, experiment="unroll", names=UNROLL_CONTROLS, defaults=SEED, default_variants=BASE,
                  extra_defaults={"ref": DEFAULT_REF}, allowed_variants=list(V.VARIANTS))


def cli_command(values: dict, variants: list[str]) -> str:
    """The same measurement from a terminal, as short as the presets allow."""
    for name, (preset, _) in PRESETS.items():
        if values == preset:
            cli_variants = list(EXP.presets[name].get("variants") or EXP.default_variants)
            extra = "" if variants == cli_variants else f" --variants {','.join(variants)}"
            return f"python -m rnnlab run unroll --preset {name}{extra}"
    sets = " ".join(f"--set {k}={v}" for k, v in values.items() if v != _defaults[k])
    return f"python -m rnnlab run unroll {sets} --variants {','.join(variants)}".replace("  ", " ")


def _preset(name: str) -> None:  # on_click: runs before the script, so it may set the widgets
    values, variants = PRESETS[name]
    sync.set_widgets(values, variants, {"ref": DEFAULT_REF if DEFAULT_REF in variants else variants[0]})


st.title("Static vs dynamic unrolling")
st.caption(EXP.summary + " Each variant runs in its own fresh TensorFlow process, on the same weights and inputs.")

sync.apply()

# -- controls ------------------------------------------------------------------------------------------------------
b1, b2, _ = st.columns([2, 2, 5])
b1.button("Seed configuration", on_click=_preset, args=("seed",), icon=":material/restart_alt:",
          help="rnn, 3 layers x 128 units, batch 32, 100 steps, 64 inputs, float32: the seed's own configuration",
          key=P + "preset_seed")
b2.button("Quick (about a minute)", on_click=_preset, args=("quick",), icon=":material/bolt:",
          help="rnn, 1x32, batch 8, 20 steps, 4 variants, 5 timed steps: a first look", key=P + "preset_quick")

ps = EXP.params
c = st.columns(7)
c[0].selectbox("cell", ps["cell"].choices, key=P + "cell", help=ps["cell"].help)
for col, name in zip(c[1:6], ("layers", "units", "batch", "seq_len", "input_dim")):
    p = ps[name]
    col.number_input(name, min_value=int(p.lo), max_value=int(p.hi), step=1, key=P + name,
                     help=f"{p.help} ({int(p.lo)} to {int(p.hi)})")
c[6].selectbox("dtype", ps["dtype"].choices, key=P + "dtype", help=ps["dtype"].help)
st.multiselect("variants", list(V.VARIANTS), format_func=lambda v: f"{v}: {variant_label(v)}",
               key=P + "variants", help="tf1_dynamic is the reference: it runs with every measurement so the "
                                        "outputs of the others can be compared against it")
_timing = ("repeats", "warmup", "device")
with st.expander("Timing and device", expanded=any(st.session_state.get(P + n) != SEED[n] for n in _timing)):
    t = st.columns(3)
    for col, name in zip(t[:2], ("repeats", "warmup")):
        p = ps[name]
        col.number_input(name, min_value=int(p.lo), max_value=int(p.hi), step=1, key=P + name,
                         help=f"{p.help} ({int(p.lo)} to {int(p.hi)})")
    t[2].selectbox("device", ps["device"].choices, key=P + "device", help=ps["device"].help)

values = {n: st.session_state[P + n] for n in UNROLL_CONTROLS}
if values["device"] == "gpu" and not envinfo.static_env()["gpu_hint"]:
    st.warning("device=gpu: TensorFlow cannot see a GPU on this machine (no NVIDIA device), so a run would fail. "
               "Stored or bundled GPU results still show below; choose auto or cpu to measure here.",
               icon=":material/memory:")
chosen = [v for v in V.VARIANTS if v in st.session_state[P + "variants"]]  # canonical order

# The reference of the ratios: kept in the URL; it must be one of the chosen variants.
ref = st.session_state.get(P + "ref") or DEFAULT_REF
if chosen and ref not in chosen:
    if sync.extra.get("ref") == ref and ref != DEFAULT_REF:
        st.warning(f"URL: reference {ui.md_escape(repr(ref))} is not among the chosen variants; using "
                   f"{DEFAULT_REF if DEFAULT_REF in chosen else chosen[0]}", icon=":material/link_off:")
    ref = DEFAULT_REF if DEFAULT_REF in chosen else chosen[0]
    st.session_state[P + "ref"] = ref
sync.extra = {}
sync.write(values, chosen, {"ref": ref})

if not chosen:
    st.info("Pick at least one variant to compare.", icon=":material/info:")
    st.stop()

plan = None
with ui.guard("These settings cannot run"):
    plan = api.plan("unroll", overrides=values, variants=chosen)
if plan is None:
    st.stop()
sweep_plan, sweep_problem = None, None
try:
    sweep_plan = api.plan("unroll", overrides={**values, "seq_len": list(SWEEP_VALUES)}, variants=chosen)
except RnnlabError as e:
    sweep_problem = str(e)

records = None
with ui.guard("Reading the stored results"):
    records = ui.records("unroll")
    env = api.known_env(ui.store(), values["device"])
if records is None:
    st.stop()
fp = envinfo.fingerprint(env) if env else None
point = plan.points[0]
sel = select.pick(records, point, plan.variants, fingerprint=fp, experiment="unroll")

# -- run -----------------------------------------------------------------------------------------------------------
st.divider()
busy = bool(ui.jobs.manager().active())
r1, r2, r3 = st.columns([3, 2, 4])
if sel.missing:
    n = len(sel.missing)
    go = r1.button(f"Run: measure {n} variant{'s' if n != 1 else ''} not stored", type="primary",
                   disabled=busy, key=P + "run", icon=":material/play_arrow:")
else:
    r1.button("Run: everything is stored", disabled=True, key=P + "run", icon=":material/check:")
    go = False
again = r2.button("Measure all again", disabled=busy, key=P + "fresh", icon=":material/refresh:",
                  help="ignore the stored results of this configuration and measure every chosen variant again")
if sel.missing:
    r3.caption(f"Not stored for this environment: {', '.join(sel.missing)}. Each variant takes a fresh TensorFlow "
               "process (about 10 s to start) plus its measurement.")
else:
    r3.caption(f"All {len(plan.variants)} chosen variants are stored: shown below.")
if go or again:
    if ui.jobs.start(plan, watch=P, fresh=bool(again)):
        st.rerun()
ui.jobs.panel(watch=P, mine={ui.jobs.plan_key(p) for p in (plan, sweep_plan) if p is not None})

sweep_recs = select.sweep(records, point, plan.variants, x="seq_len", fingerprint=fp, experiment="unroll")
sweep_cap = f"{fmt_params({k: v for k, v in point.items() if k != 'seq_len'})}; {select.source_note(sweep_recs)}"
sweep_made = []
for metric, name in (("fwd_ms", "forward step"), ("train_ms", "training step"), ("build_s", "build time")):
    chart = charts.sweep(sweep_recs, x="seq_len", metric=metric)
    if chart is not None:
        sweep_made.append((name, chart, chart_view(chart, f"Scaling with seq_len: {name}", sweep_cap, sweep_recs)))

# -- results -------------------------------------------------------------------------------------------------------
shown = [sel.shown[v] for v in plan.variants if v in sel.shown]
st.header("Comparison", divider="gray")
if not shown and busy:
    st.info("Measuring: the table and charts appear here when the run ends.", icon=":material/hourglass_top:")
elif not shown:
    ui.how_to_get(cli_command(values, list(plan.variants)), page="unrolling", button="Run", here=True)
    st.caption(f"Configuration: {fmt_params(point)}.")
else:
    options = [r.variant for r in shown]
    if st.session_state.get(P + "ref") not in options:
        st.session_state[P + "ref"] = DEFAULT_REF if DEFAULT_REF in options else options[0]
    st.selectbox("ratios against", options, format_func=lambda v: f"{v}: {variant_label(v)}", key=P + "ref",
                 width=420, help="each ratio column divides the row's value by this variant's (>1: takes more)")
    ref = st.session_state[P + "ref"]
    sync.write(values, chosen, {"ref": ref})
    title = f"Unrolling: {fmt_params(point)}"
    view = tables.comparison(shown, reference=ref, title=title)
    st.dataframe(ui.comparison_frame(view), hide_index=True, key=P + "table", width="stretch",
                 column_config={"variant": st.column_config.TextColumn(pinned=True)})
    st.caption(view.caption)

    ok = [r for r in shown if r.ok]
    cap = f"{fmt_params(point)}; {select.source_note(shown)}"
    made = []
    for chart, name in ((charts.step_time(ok, "fwd_ms"), "Forward step time"),
                        (charts.step_time(ok, "train_ms"), "Training step time"),
                        (charts.build_and_graph(ok), "Build time and graph size"),
                        (charts.memory(ok), "Peak memory"), (charts.gflops(ok), "Achieved GFLOP/s")):
        if chart is not None:
            made.append((chart, chart_view(chart, name, cap, ok)))

    rep = ui.downloads.make_report(f"rnnlab {title}", view.caption, [view],
                                   [cv for _, cv in made] + [cv for _, _, cv in sweep_made], shown + sweep_recs)
    ui.downloads.buttons(rep, key=P + "report", label="Download this table and its charts:")

    st.header("Charts", divider="gray")
    if not made:
        st.info("No successful variant to chart yet.", icon=":material/info:")
    by_title = {cv.title: chart for chart, cv in made}
    for row in (("Forward step time", "Training step time"), ("Build time and graph size",),
                ("Peak memory", "Achieved GFLOP/s")):
        present = [t for t in row if t in by_title]
        if not present:
            continue
        cols = st.columns(len(row))
        for col, t in zip(cols, present):
            with col:
                # the build/graph pair is two charts side by side: it keeps its own width
                st.altair_chart(by_title[t], width="content" if t == "Build time and graph size" else "stretch")
    if any(cv.title == "Achieved GFLOP/s" for _, cv in made):
        st.caption("GFLOP/s: the forward pass's counted floating-point operations over its median time; the dashed "
                   "line is this device's matrix-multiply rate measured by the harness.")

# -- sweep ---------------------------------------------------------------------------------------------------------
st.header("Scaling with the sequence length", divider="gray")
sweep_points = sweep_plan.points if sweep_plan is not None else ()
n_missing = sum(len(select.pick(records, p, plan.variants, fingerprint=fp, experiment="unroll").missing)
                for p in sweep_points)
s1, s2 = st.columns([3, 6])
label = (f"Run this sweep: {n_missing} measurement{'s' if n_missing != 1 else ''} not stored" if n_missing
         else "Run this sweep: everything is stored" if sweep_plan is not None else "Run this sweep")
if s1.button(label, disabled=busy or not n_missing, key=P + "sweep", icon=":material/stacked_line_chart:"):
    if ui.jobs.start(sweep_plan, watch=P):
        st.rerun()
s2.caption(f"seq_len {', '.join(map(str, SWEEP_VALUES))} at the configuration above, the chosen variants; log axes."
           + (f" Cannot run here: {sweep_problem}" if sweep_problem else ""))
if sweep_made:
    tabs = st.tabs([name for name, _, _ in sweep_made])
    for tab, (_, chart, _) in zip(tabs, sweep_made):
        with tab:
            st.altair_chart(chart)
    st.caption(sweep_cap)
else:
    st.caption("No sweep stored for this configuration yet (at least two sequence lengths are needed).")
