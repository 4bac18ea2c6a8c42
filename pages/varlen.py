"""Variable lengths: what each implementation does with a padded batch (experiment ``varlen``), what padding costs
(``padding``, with seed 001's static-fixed vs dynamic-bucketed pair), and seed 003's benchmark reproduced
(``seed003``).

One tab per experiment, each with its own settings; only the open tab runs. The open tab and its settings live in
the URL (a copied link opens the same view); switching tabs brings back that tab's last settings. Stored results
show at once; Run measures what this machine has not stored, in the background.
"""

import streamlit as st

import ui
from rnnlab.present import varlen as vv

ui.nav.routed()  # first: a direct link right after a server start goes through the router

P = "varlen."  # widget and session keys of this page; also the watch key of its runs

# tab name in the URL -> (tab label, experiment, key prefix, main controls, controls in "More settings",
#                         preset buttons: (preset, label, help), variant labels)
SECTIONS = {
    "semantics": ("What padding does", "varlen", P + "sem.",
                  ("cell", "units", "batch", "seq_len", "input_dim", "lengths"),
                  ("zero_output_for_mask", "device", "seed"),
                  (("seed", "Seed 001's example", "lstm 32 units, 4 rows of true lengths 50/35/20/5 padded to 50 "
                                                  "steps: seed 001's 'the longest input is 50, the others shorter'"),
                   ("quick", "Quick (under a minute)", "lstm 8 units, 4 rows 8/5/2/1 padded to 8, one variant per "
                                                       "behaviour")),
                  vv.LABELS["varlen"]),
    "cost": ("What padding costs", "padding", P + "pad.",
             ("cell", "units", "batch", "seq_len", "input_dim", "lengths", "n_sequences", "buckets"),
             ("repeats", "warmup", "rounds", "parallel_iterations", "n_classes", "device", "seed"),
             (("seed", "Seed 001's data", "1,024 sequences of true length 1 to 50, lstm 128 units, batch 32, 4 "
                                          "buckets: a few minutes"),
              ("quick", "Quick (under a minute)", "48 sequences of length 2 to 20, lstm 16 units, 4 strategies")),
             vv.LABELS["padding"]),
    "seed003": ("Seed 003 reproduced", "seed003", P + "s003.",
                ("units", "batch", "seq_len", "input_dim", "lengths", "parallel_iterations"),
                ("interval", "steps", "n_data", "rounds", "device", "seed"),
                (("seed", "Seed 003's exact configuration", "BasicLSTMCell(200), batch 200, 300 steps of 16 "
                                                            "features, every true length 20, Adam; 100 + 100 timed "
                                                            "steps: several minutes on a CPU"),
                 ("quick", "Quick (seconds)", "32 units, batch 32, 16 steps, lengths 4, 5 + 10 steps")),
                vv.LABELS["seed003"]),
}
TAB_HELP = {
    "semantics": "One padded batch through static_rnn / dynamic_rnn with and without sequence_length and Keras 3 "
                 "layers with Masking, mask= or no mask: are the outputs past each row's length zero, is the state "
                 "carried through, is the final state the last real step's?",
    "cost": "A data set of variable-length sequences batched four ways (padded to the longest overall, to each "
            "batch's longest, by length buckets, sorted) through a Keras 3 layer with a mask, and seed 001's "
            "static_rnn at one fixed length against dynamic_rnn over buckets: throughput, padding fed, traces.",
    "seed003": "Seed 003's training benchmark exactly, beside the figures in its own 2017 log: "
               f"{vv.seed003_in_short()}. Does that hold in today's TensorFlow, and why?",
}


class Section:
    """One tab's settings: its UrlSync, presets and widgets (state in st.session_state under its prefix)."""

    def __init__(self, name: str):
        self.name = name
        (self.label, exp_name, self.prefix, self.main, self.more, self.buttons, self.labels) = SECTIONS[name]
        self.exp = vv.experiment(exp_name)
        self.records = None  # what ``stored`` read: the views of this tab are shared per its version
        self.names = list(self.main) + list(self.more)
        defaults = self.exp.params.defaults()
        self.presets = {}
        for preset in ("seed", "quick"):
            pv = self.exp.presets[preset]
            values = {n: pv.get(n, defaults[n]) for n in self.names}
            self.presets[preset] = (values, list(pv.get("variants") or self.exp.default_variants))
        self.sync = ui.UrlSync(self.prefix, experiment=exp_name, names=self.names,
                               defaults=self.presets["seed"][0], default_variants=self.presets["seed"][1],
                               extra_defaults={"tab": name})

    def preset(self, name: str) -> None:  # on_click: before the script, so it may set the widgets
        values, variants = self.presets[name]
        self.sync.set_widgets(values, variants)

    def widget(self, col, name: str) -> None:
        p = self.exp.params[name]
        key = self.prefix + name
        if name == "lengths":
            col.text_input("true lengths", key=key, on_change=_normalize, args=(key,),
                           help="one length per row (12 9 5 3, repeated over the rows), one length for every row "
                                "(20), a range drawn at random (5-100), or full; stored as rows:12/9/5/3, fixed:20, "
                                "uniform:5-100")
        elif p.kind == "choice":
            col.selectbox(name, p.choices, key=key, help=p.help)
        elif p.kind == "bool":
            col.checkbox(name, key=key, help=p.help)
        else:
            col.number_input(name, min_value=int(p.lo), max_value=int(p.hi), step=1, key=key,
                             help=f"{p.help} ({int(p.lo)} to {int(p.hi):,})")

    def values(self) -> dict:
        return {n: st.session_state[self.prefix + n] for n in self.names}


def _normalize(key: str) -> None:
    """What the user typed for the lengths -> the lengths value (left as typed when not understood: the page says
    why)."""
    try:
        st.session_state[key] = vv.normalize_lengths(st.session_state[key])
    except vv.RnnlabError:
        pass


st.title("Variable-length sequences")
st.caption("Padded batches in TensorFlow: what each implementation does with the padding, what the padding costs, "
           "and seed 003's static-vs-dynamic benchmark reproduced. Every variant runs in its own fresh "
           "TensorFlow process on the same weights and inputs.")

# The open tab and each tab's last settings live in the URL (a shared link, a page link).
tab_state = ui.tabstate.TabState(P, {name: sec[0] for name, sec in SECTIONS.items()})
open_name, open_tab = tab_state.open()


def controls(sec: Section) -> tuple[dict, list[str]]:
    """Presets, widgets, the URL; returns the settings and the chosen variants (canonical order)."""
    st.caption(TAB_HELP[sec.name])
    sec.sync.apply()
    row = st.container(horizontal=True, gap="small")
    for preset, label, help_ in sec.buttons:
        row.button(label, on_click=sec.preset, args=(preset,), key=sec.prefix + "preset_" + preset, help=help_,
                   icon=":material/restart_alt:" if preset == "seed" else ":material/bolt:")
    cols = st.columns(len(sec.main))
    for col, name in zip(cols, sec.main):
        sec.widget(col, name)
    st.multiselect("variants", list(sec.exp.variants), key=sec.prefix + "variants",
                   help="; ".join(f"{v}: {sec.labels.get(v, v)}" for v in sec.exp.variants))
    changed = any(st.session_state.get(sec.prefix + n) != sec.presets["seed"][0][n] for n in sec.more)
    with st.expander("More settings: " + ", ".join(sec.more), expanded=changed):
        more = st.columns(len(sec.more))
        for col, name in zip(more, sec.more):
            sec.widget(col, name)
    values = sec.values()
    chosen = [v for v in sec.exp.variants if v in st.session_state[sec.prefix + "variants"]]
    return values, chosen


def lengths_ok(sec: Section, values: dict) -> bool:
    """Say what the lengths mean (or what is wrong with them) under the controls."""
    rows = values.get("n_sequences") or values.get("n_data") or values["batch"]
    what = "sequence" if sec.name in ("cost", "seed003") else "row"
    try:
        spec = vv.normalize_lengths(values["lengths"])  # what it takes, when it is not understood
        st.caption(vv.lengths_note(spec, rows, values["seq_len"], values.get("seed", 0), what=what) + ".")
        return True
    except vv.RnnlabError as e:
        st.error(ui.md_escape(e), icon=":material/error:")
        return False


def stored(sec: Section, values: dict, chosen: list[str]):
    """The plan of these settings, what is stored for it, and the Run buttons; None when it cannot run."""
    plan = None
    with ui.guard("These settings cannot run"):
        plan = ui.runbar.plan(sec.exp.name, overrides=values, variants=chosen)
    if plan is None:
        return None
    records, env = None, None
    with ui.guard("Reading the stored results"):
        records = ui.records(sec.exp.name)
        env = ui.runbar.known_env(values["device"])
    if records is None:
        return None
    sec.records = records
    sel = ui.shared(records, vv.selection, records, plan, env)  # once per records' version, for every session
    if values["device"] == "gpu" and not vv.gpu_visible():
        st.warning("device=gpu: TensorFlow sees no GPU where this app runs, so a run would fail. Stored or bundled "
                   "GPU results still show; choose auto or cpu to run.", icon=":material/memory:")

    busy = ui.runbar.run_bar(plan, sel.missing, prefix=sec.prefix, watch=P, settings="these settings",
                             refused_below=True)
    shown = sel.records
    if not shown:
        if busy:
            ui.jobs.measuring("the results", (plan,))
        else:
            ui.how_to_get(vv.cli_command(sec.exp.name, values, list(plan.variants)), page="varlen", button="Run",
                          here=True)
            st.caption(f"Settings: {vv.fmt_params(plan.points[0])}.")
        return None
    note = vv.not_here_note(shown)
    if note:
        st.info(note, icon=":material/inventory_2:")
    if sel.others:
        st.caption("Also stored for these settings, not shown (one machine per table and chart): "
                   + "; ".join(sel.others) + ".")
    return shown


def styled_checks(view):
    """The checks table with pass green and FAIL red (the view itself stays plain text for the exports)."""
    colour = {"pass": "color: #1b7a3a; font-weight: 600", "FAIL": "color: #c62828; font-weight: 600"}
    return ui.view_frame(view).style.map(lambda v: colour.get(v, ""))


def tab_report(name: str, shown):
    return vv.tab_report(vv.views(name, shown))


def downloads(sec: Section, name: str, shown, key: str) -> None:
    """The tab's table and chart (``vv.views``: what ``python -m rnnlab export`` writes too) as downloads."""
    rep = ui.shared(sec.records, tab_report, name, shown)  # what `export --view varlen?tab=...` writes too
    ui.downloads.buttons(rep, key=key, label="Download these tables and charts:")


# -- the open tab ------------------------------------------------------------------------------------------------------
with open_tab:
    answer = st.container()  # the tab's answer first (filled in once the records are read), the evidence below
    sec = Section(open_name)
    values, chosen = controls(sec)
    if not lengths_ok(sec, values):
        st.stop()
    sec.sync.write(values, chosen, {"tab": open_name})
    tab_state.remember(open_name)
    if not chosen:
        st.info("Pick at least one variant.", icon=":material/info:")
        st.stop()
    shown = stored(sec, values, chosen)
    cap = f"{vv.fmt_params(dict(shown[0].params))}; {vv.source_note(shown)}" if shown else ""

    if open_name == "semantics":
        if shown:
            tab = ui.shared(sec.records, vv.views, "varlen", shown)
            st.header("The checks, per variant", divider="gray")
            view = tab.table
            config = {"what runs": st.column_config.TextColumn(width=150), vv.ZOFM_COLUMN: st.column_config.TextColumn(
                help="zofm = zero_output_for_mask (see the Glossary): the checks the same Keras layer passes with "
                     "zero_output_for_mask=True")}
            ui.frame_table(styled_checks(view), key=sec.prefix + "table", config=config)
            st.caption(view.caption + ".")
            answer.markdown("\n".join("- " + line for line in vv.checks_findings(shown)))
            st.header("Output norms: where the padding is", divider="gray")
            if tab.chart is not None:
                ui.chart(tab.chart, width="stretch")
                st.caption("White is an output of zero. Right of each red bar the row is padding: TF1 with "
                           "sequence_length writes zeros there, Keras with a mask repeats the last real output "
                           "(the same colour continues), and a variant told no lengths keeps running the cell on "
                           "the zero inputs (its outputs drift toward the cell's resting value, so they may look "
                           "steady: the table's final-state drift says how far they moved). " + cap)
            downloads(sec, "varlen", shown, sec.prefix + "report")
        st.header("On a GPU: can Keras' fused cuDNN kernel take this mask?", divider="gray")
        notes = vv.cudnn_notes(shown or [], lengths=vv.row_lengths(values), seq_len=values["seq_len"])
        for ok, text in notes:
            if ok is None:
                st.caption(text)
            else:
                st.markdown((":green[:material/check_circle:] " if ok else ":red[:material/cancel:] ") + text)

    elif open_name == "cost" and shown:
        tab = ui.shared(sec.records, vv.views, "padding", shown)
        st.header("What each padding strategy costs", divider="gray")
        view = tab.table
        ui.frame_table(ui.view_frame(view), key=sec.prefix + "table", max_lines=2)
        st.caption(view.caption + ".")
        if tab.chart is not None:  # three panels side by side: each narrowed to fit the page
            ui.chart(tab.chart, panels=175)
        comparison = vv.seed001_comparison(shown)
        if comparison:
            answer.markdown(comparison)
        elif not {"static_fixed", "dynamic_bucket"} <= {r.variant for r in shown}:
            st.caption("Seed 001's comparison needs static_fixed and dynamic_bucket: add them to the variants.")
        downloads(sec, "padding", shown, sec.prefix + "report")

    elif open_name == "seed003":
        recs = shown or []
        tab = ui.shared(sec.records, vv.views, "seed003", recs)
        st.header("The seed's figures beside the measurements", divider="gray")
        verdict = vv.seed003_verdict(recs) if recs else None
        if verdict is not None:
            show = {vv.Status.HOLDS: answer.success, vv.Status.NOT_MEASURED: answer.info,
                    vv.Status.NOT_MEASURABLE: answer.info}.get(
                verdict.status, answer.warning)
            show(verdict.headline, icon=":material/gavel:")
            if not vv.is_seed_config(recs[0].params):
                st.caption("Not the seed's configuration: **Seed 003's exact configuration** above compares like "
                           "with like (several minutes on a CPU).")
        ui.table(tab.table, key=sec.prefix + "table")
        left, right = st.columns([5, 4]) if tab.chart is not None else (None, st.container())
        if tab.chart is not None:
            ui.chart(tab.chart, where=left, width="stretch")
        paragraphs = list(verdict.paragraphs) if verdict is not None else []
        if paragraphs:  # the seed's figures against the measurements first; the longer why in an expander
            right.markdown(paragraphs[0])
        if len(paragraphs) > 1:
            with right.expander("The measurements, the Claims table and why"):
                for text in paragraphs[1:]:
                    st.markdown(text)
        if recs:
            downloads(sec, "seed003", recs, sec.prefix + "report")
