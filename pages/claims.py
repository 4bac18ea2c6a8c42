"""Claims: every checkable claim of the four seeds, judged on the stored records (the page people link to).

Sections: the claims (summary, filters, table, downloads, one expander per claim); tuning knobs, mixed precision and
a real training task (the experiments only this page shows); fastest for you (``rnnlab.judge.recommend`` at the
reader's configuration). The filters and the recommendation's configuration live in the URL. Verdicts, tables,
charts, provenance words and plans come through ``rnnlab.present.claims`` (runs through ``ui.runbar``); this page only
lays them out, and says "measured here" only when every record shown was measured on this machine.
"""

import streamlit as st

import ui
from rnnlab.present import claims as CV

ui.nav.routed()  # first: a direct link right after a server start goes through the router

P = "claims."  # widget and session keys of this page
UNROLL = CV.experiment("unroll")
REC_NAMES = CV.REC_NAMES
REC_DEFAULTS = CV.REC_DEFAULTS  # seed 000's configuration
BASE = CV.base_variants()
VARIANTS = CV.unroll_variants()
STATUSES = CV.STATUSES
SECTIONS = {"knobs": ("Tuning knobs", "tuning-knobs", "seed 000 §5.3"),
            "precision": ("Mixed precision", "mixed-precision", "seed 000 §6.3"),
            "training": ("A real training task", "training", "seed 004")}
RUN_WHERE = P + "run_section"  # the section whose Run button started the run: it says "Measuring" there
ICON = {s: f":{s.colour}[{s.icon}]" for s in STATUSES}  # each status's badge (core.rules.Status)
CELL = {s: s.cell for s in STATUSES}

sync = ui.UrlSync(P, experiment="unroll", names=REC_NAMES, defaults=REC_DEFAULTS, default_variants=BASE,
                  extra_defaults=CV.SETTING_DEFAULTS, allowed_variants=list(VARIANTS))

records = None
with ui.guard("Reading the stored results"):
    records = ui.records()
st.title(CV.page_title(records or []))
st.caption("Every checkable statement of the four seed articles (the *seeds*: see the Glossary), with the seed's own "
           "figure, judged on the stored records: this machine's, and bundled results for what it has not measured.")
if records is None:
    st.stop()

sync.apply()
if sync.extra:  # the URL was applied (a link, a return to this page): its non-parameter settings too
    settings, problems = CV.parse_settings(sync.extra)
    st.session_state[P + "w_seeds"] = settings["seeds"]
    st.session_state[P + "w_status"] = settings["status"]
    st.session_state[P + "w_n_steps"] = settings["n_steps"]
    st.session_state[P + "w_mode"] = settings["mode"]
    if problems:
        st.warning("This link holds settings that cannot be used; the defaults replace them:\n"
                   + "\n".join(f"- {ui.md_escape(p)}" for p in problems), icon=":material/link_off:")
    sync.extra = {}

results = ui.shared(records, CV.evaluate, records)  # once per records' version, for every session
said = ui.shared(records, CV.answer, results, records)  # the answer first; the evidence below
if said:
    st.markdown(said)
with st.expander("How a claim is judged"):
    st.markdown(CV.rule_text() + "\n\n" + "\n".join(f"- **{s}**: {CV.STATUS_HELP[s]}" for s in STATUSES))
busy = ui.jobs.manager().busy()


def start(plan, section: str) -> None:
    if ui.jobs.start(plan, watch=P):
        st.session_state[RUN_WHERE] = section
        st.rerun()


def plan_of(claim):
    """A claim's run as a Plan (None, with a message, when it cannot run here)."""
    with ui.guard("This claim's run cannot start"):
        return ui.runbar.plan(**claim.plan_args)
    return None


# -- summary -------------------------------------------------------------------------------------------------------
n = ui.shared(records, CV.counts, results)
row = st.container(horizontal=True, gap="small")  # each card as wide as its label: never cut
for s in STATUSES:
    row.metric(f"{ICON[s]} {s}", n[s], help=CV.STATUS_HELP[s], border=True, width="content")
if not records:  # (with records, the answer above says on which records the verdicts stand)
    st.info("Nothing is measured yet, so every claim is *not measured*. A first look at the unrolling claims takes "
            f"under a minute: `{CV.quick_command('unroll')}` in a terminal, or press **Run** in a "
            "claim's row below; each claim names the command that measures it.", icon=":material/info:")
st.markdown("On this page: [the claims](#the-claims) · " + " · ".join(f"[{t}](#{a})" for t, a, _ in SECTIONS.values())
            + " · [fastest for you](#fastest-for-you)")

# -- the claims ----------------------------------------------------------------------------------------------------
st.header("The claims", anchor="the-claims", divider="gray")
f1, f2 = st.columns(2)
f1.multiselect("seed", CV.SEEDS, format_func=lambda s: f"{s}: {CV.seed_name(s)}", key=P + "w_seeds",
               placeholder="every seed")
f2.multiselect("verdict", STATUSES, key=P + "w_status",
               placeholder="every verdict")
shown = ui.shared(records, CV.select, results, seeds=st.session_state[P + "w_seeds"],
                  statuses=st.session_state[P + "w_status"])
if not shown:
    st.info("No claim matches these filters.", icon=":material/filter_alt_off:")
else:
    view = ui.shared(records, CV.claims_view, shown, records=records)
    frame = ui.shared(records, CV.claims_frame, view, shown)
    measured_col = ui.shared(records, CV.measured_column, records)
    ui.frame_table(frame.style.map(lambda s: CELL.get(s, ""), subset=["verdict"]), key=P + "table", max_lines=3,
                   config={"verdict": st.column_config.TextColumn(width=130),
                           "seed": st.column_config.TextColumn(
                               width=120, help="which seed and where in it: seed 000 §3.1 is section 3.1 of seed "
                                               "000 (see the Glossary)"),
                           "tested by": st.column_config.TextColumn(width=80,
                                                                    help="the experiment that measures it")})
    st.caption(f"{len(shown)} of {len(results)} claims; a cell that ends in … goes on in the claim's detail below "
               "(pick the claim there) or when you click it.")
    rep = ui.shared(records, CV.claims_report, shown, results, records)  # what `export --view claims?...` writes too
    ui.downloads.buttons(rep, key=P + "claims", formats=("md", "csv", "pptx"),
                         label="Download this table:")

    st.subheader("One claim in detail")  # one at a time: the table above lists them all
    ids = [c.id for c, _ in shown]
    if st.session_state.get(P + "detail") not in ids:
        st.session_state[P + "detail"] = ids[0]
    by_id = {c.id: (c, v) for c, v in shown}
    st.selectbox("claim", ids, key=P + "detail", width=700,
                 format_func=lambda i: f"{by_id[i][1].status} · {by_id[i][0].text}",
                 help="its seed, what was measured and why, the command that measures it")
    for c, v in [by_id[st.session_state[P + "detail"]]]:
        with st.container(border=True):
            st.markdown(f"**Seed:** {CV.seed_label(c)}: {ui.md_escape(CV.seed_title(c))} (`{c.seed}`)")
            st.markdown(f"**{measured_col.capitalize()}:** {ui.md_escape(v.measured)}")
            st.markdown(f"**{'Depends on' if v.status == CV.Status.DEPENDS else 'Why'}:** {ui.md_escape(v.why)}")
            exp = CV.experiment(c.experiment)
            st.markdown(f"**Tested by:** `{c.experiment}` ({ui.md_escape(exp.title)}), {c.preset} preset, "
                        f"variants {', '.join(f'`{x}`' for x in c.variants)}. From a terminal:")
            st.code(c.command, language="bash")
            if exp.page == "claims":
                title, anchor, _ = SECTIONS[c.experiment]
                st.markdown(f":material/arrow_downward: [{title}, below on this page](#{anchor})")
            elif not ui.page_link(exp.page, f"Open the {ui.nav.title(exp.page)} page" + (
                    " at this configuration" if c.experiment == "unroll" else ""),
                    query=CV.claim_query(c)):
                st.caption(f"The {c.experiment} experiment has no page yet: use the command above.")
            if v.status == "not measured":
                plan = plan_of(c)
                refused = ui.jobs.refusal(plan)  # hosted mode: over the demo's caps, not offered
                if plan is not None and refused:
                    st.caption(ui.jobs.refused_caption(refused, plan))
                elif plan is not None and st.button(
                        f"Run: {plan.n_tasks} measurement{'s' * (plan.n_tasks != 1)}", key=P + "run_" + c.id,
                        disabled=busy, icon=":material/play_arrow:",
                        help="measures in the background; every variant in a fresh TensorFlow process"):
                    start(plan, "claims")
            elif v.status == "not measurable here":
                gpu = CV.gpu_machines(records, c.experiment)
                st.caption("The seed's figure is about a GPU. " + (
                    f"GPU results are stored from {', '.join(gpu)}, but not for this "
                    "claim's variants and configuration." if gpu else
                    "No GPU results are bundled or imported: `python -m rnnlab import FILE` with records from a GPU "
                    "machine judges it."))


# -- knobs, precision, training --------------------------------------------------------------------------------------
_said: set[str] = set()


def once(write, text: str) -> None:
    """``write(text)`` unless this page said it already (the sections share a device and a source): each fact once."""
    if text not in _said:
        _said.add(text)
        write(text)

def run_buttons(name: str) -> None:
    """Run buttons for the quick and seed presets, each saying what is not stored yet, and the device."""
    env = None
    with ui.guard("Reading this machine's environment"):
        env = ui.runbar.known_env("auto")
    cols = st.columns([3, 3, 4])
    for col, run in zip(cols, ui.shared(records, CV.preset_runs, records, name, env)):
        preset, plan, missing = run.preset, run.plan, run.missing
        if plan is None:
            col.button(f"{preset} preset", disabled=True, key=f"{P}run_{name}_{preset}", help=run.problem)
            continue
        label = (f"Run {preset} preset ({missing} to measure)" if missing else f"{preset.capitalize()} preset: stored")
        refused = ui.jobs.refusal(plan) if missing else None  # hosted mode: over the demo's caps
        if col.button(label, key=f"{P}run_{name}_{preset}", disabled=busy or not missing or bool(refused),
                      icon=":material/play_arrow:" if missing else ":material/check:", type="secondary",
                      help=ui.md_escape(refused) if refused else
                      f"{CV.describe(run.point)}; variants {', '.join(plan.variants)}"):
            start(plan, name)
        if refused:
            col.caption(ui.jobs.refused_caption(refused, plan))
    once(cols[2].caption, f"Runs measure on this machine's {CV.run_device(env)}, each variant in a fresh "
                          "TensorFlow process. Quick: small sizes, a first look; seed: the seed's own configuration.")


def experiment_section(name: str) -> None:
    title, anchor, ref = SECTIONS[name]
    exp = CV.experiment(name)
    st.header(f"{title} ({ref})", anchor=anchor, divider="gray")
    st.caption(exp.summary)
    tested = [(c, v) for c, v in results if c.experiment == name]
    if tested:
        st.markdown("Claims this experiment tests:\n"
                    + "\n".join(f"- {ICON[v.status]} **{v.status}**: {ui.md_escape(c.text)}" for c, v in tested))
    run_buttons(name)
    configs = ui.shared(records, CV.configurations, records, name, seed_preset=exp.presets.get("seed"))
    if not configs and busy and st.session_state.get(RUN_WHERE) == name:
        ui.jobs.measuring("the table and charts")
        return
    if not configs:
        ui.how_to_get(CV.quick_command(name), page="claims", button="Run quick preset",
                      here=True)
        return
    cfg = configs[0]
    if len(configs) > 1:
        i = st.selectbox("configuration", range(len(configs)), format_func=lambda k: configs[k].label.split("; ")[0],  # its source: the Device line
                         key=f"{P}{name}_cfg", help="every configuration stored for this experiment")
        cfg = configs[i if i is not None and i < len(configs) else 0]
    once(st.markdown, f"**Device: {cfg.device}** ({ui.md_escape(cfg.source)})")
    if name == "knobs":
        ui.table(ui.shared(records, CV.knobs_view, cfg), key=f"{P}{name}_table")
        for note in ui.shared(records, CV.knobs_notes, cfg):
            st.caption(ui.md_escape(note))
        chart = ui.shared(records, CV.knobs_chart, cfg, width=290)  # two panels side by side within the page
        if chart is not None:
            ui.chart(chart)
    elif name == "precision":
        ui.table(ui.shared(records, CV.precision_view, cfg), key=f"{P}{name}_table")
        chart = ui.shared(records, CV.precision_chart, cfg, width=270)
        if chart is not None:
            ui.chart(chart)
        notes = ui.shared(records, CV.precision_notes, cfg)  # from the records' numbers, with whose machine timed them
        if notes:
            st.markdown(f"**What each dtype does.** {ui.md_escape(ui.shared(records, CV.precision_notes_intro, cfg))}\n"
                        + "\n".join(f"- `{v}`: {ui.md_escape(t)}" for v, t in notes))
    else:
        st.markdown(ui.md_escape(ui.shared(records, CV.training_summary, cfg)))
        ui.table(ui.shared(records, CV.training_view, cfg), key=f"{P}{name}_table")
        acc, times = ui.shared(records, CV.training_charts, cfg)
        cols = st.columns(2)
        for col, chart in zip(cols, (acc, times)):
            if chart is not None:
                ui.chart(chart, where=col)


for section in SECTIONS:
    experiment_section(section)

# -- fastest for you -------------------------------------------------------------------------------------------------
st.header("Fastest for you", anchor="fastest-for-you", divider="gray")
st.caption("Which unrolling variant to use at your configuration, from the stored unroll records of one machine and "
           "device (two machines' records are never ranked together): the least time to build and then run N steps, "
           "the fastest step once warm, and the least memory, each with its margin over the runner-up.")
c = st.columns([2, 1, 1, 1, 1, 2, 3])
c[0].selectbox("cell", UNROLL.params["cell"].choices, key=P + "cell", help=UNROLL.params["cell"].help)
for col, name in zip(c[1:5], REC_NAMES[1:]):
    p = UNROLL.params[name]
    col.number_input(name, min_value=int(p.lo), max_value=int(p.hi), step=1, key=P + name,
                     help=f"{p.help} ({int(p.lo)} to {int(p.hi)})")
c[5].number_input("N steps", min_value=CV.N_STEPS[0], max_value=CV.N_STEPS[1], step=100, key=P + "w_n_steps",
                  help="how many steps you will run after building: few steps favour a cheap build, many a fast step")
c[6].radio("mode", CV.MODES, key=P + "w_mode", horizontal=True,
           format_func=lambda m: "training" if m == "train" else "inference (forward only)")
st.multiselect("variants to consider", list(VARIANTS), format_func=lambda v: f"{v}: {VARIANTS[v]}",
               key=P + "variants")
values = {k: st.session_state[P + k] for k in REC_NAMES}
chosen = [v for v in VARIANTS if v in st.session_state[P + "variants"]]
n_steps, mode = int(st.session_state[P + "w_n_steps"]), st.session_state[P + "w_mode"]
sync.write(values, chosen, CV.encode_settings({"n_steps": n_steps, "mode": mode,
                                               "seeds": st.session_state[P + "w_seeds"],
                                               "status": st.session_state[P + "w_status"]}))

rec = ui.shared(records, CV.recommendation, records, values, n_steps=n_steps, mode=mode, variants=chosen or None)
link_query = CV.unroll_query(values, chosen or BASE)
if not chosen:
    st.info("Pick at least one variant to compare.", icon=":material/info:")
elif all(rec.picks[g].variant is None for g in CV.GOALS):
    st.info(f"Nothing stored at {ui.md_escape(CV.describe(values))} yet. Measure it in a terminal: "
            f"`{CV.measure_command(values, chosen)}`, or open the Unrolling page with this configuration and press "
            "**Run** there.", icon=":material/info:")
    ui.page_link("unrolling", "Measure this configuration on the Unrolling page", query=link_query)
else:
    st.markdown(f"On **{rec.device}**, at {ui.md_escape(CV.describe(rec.config))}:")
    for col, goal in zip(st.columns(len(CV.GOALS)), CV.GOALS):
        pick = rec.picks[goal]
        with col.container(border=True):
            st.metric(CV.goal_title(goal, n_steps, mode), pick.variant or ui.MISSING,
                      delta=CV.ahead_text(pick),
                      delta_color="off" if pick.tie else "normal")
            st.caption(ui.md_escape(pick.text))
    table = CV.recommendation_view(rec)
    if table is not None:
        ui.table(table, key=P + "rec_table")
    notes = []
    if rec.failed:
        notes.append("Failed: " + "; ".join(f"{v} ({why})" for v, why in rec.failed.items()) + ".")
    notes += list(rec.notes)
    for line in notes:
        st.caption(ui.md_escape(line))
    if rec.missing:
        st.caption(f"Not measured at this configuration: {', '.join(rec.missing)}. In a terminal: "
                   f"`{CV.measure_command(values, rec.missing)}`")
        ui.page_link("unrolling", "Measure the missing variants on the Unrolling page", query=link_query)

# the run's progress and outcome
ui.runbar.progress(P)  # in the sidebar: in view wherever the page is scrolled (the Run buttons sit low here)
