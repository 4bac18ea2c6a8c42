"""Results: every record (this machine's store and the bundled ones), filter, delete, download, import."""

import hashlib

import streamlit as st

import ui
from rnnlab.present import results as R

ui.nav.routed()  # first: a direct link right after a server start goes through the router

P = "results."

st.title("Results")
HOSTED = ui.jobs.hosted_mode()
if HOSTED:
    st.caption("Every record: bundled with rnnlab, run by visitors of this demo, or imported by you in this visit. "
               "Filter them and download what the filters show.")
    st.info("Stored results are read-only in this demo: nothing here can be deleted or overwritten. A results file "
            "you import is checked and shown to you only, for this visit; it is not stored.", icon=":material/lock:")
else:
    st.caption("Every record: measured in this machine's store, imported from another machine, or bundled with "
               "rnnlab. Select rows to delete them (bundled ones are read-only); download what the filters show; "
               "import a results file from another machine.")

# -- import (first: a file imported now shows in the table below) ---------------------------------------------------
with st.expander("Import a results file", icon=":material/upload_file:"):
    lim = ui.jobs.hosted_limits() if HOSTED else None
    st.caption("A JSON array or JSONL of rnnlab records, e.g. from `python -m rnnlab results --format json` or the "
               "JSON download below. Every record is checked first: a file with one bad record imports nothing."
               + (f" In this demo the records are shown to you only and are not stored; at most {lim.import_mb:g} MB "
                  f"and {lim.import_records:,} records per visit." if HOSTED else ""))
    # no type filter and no size cap of the widget's own below the server's: any file reaches the check below, which
    # says in words what is wrong with it (over this demo's cap too: the widget's own refusal is a red chip whose
    # reason only a tooltip shows); the server's maxUploadSize still bounds what arrives
    up = st.file_uploader("results file", key=P + "upload", label_visibility="collapsed")
    if up is not None:
        done = st.session_state.setdefault(P + "imported", {})
        seen = (up.file_id, up.name, up.size)
        if seen not in done:  # import once per uploaded file, not on every rerun
            if HOSTED:  # booked against every visitor's uploads before it is read; its bytes dropped once read
                ok, n = ui.uploads.import_results(up, lim)
            else:
                with ui.turns.aside():  # a large file takes seconds to check and store: the others render meanwhile
                    ok, n = R.import_upload(up.getvalue(), name=up.name, store=ui.store())
            if ok:
                where = " for this visit (not stored)" if HOSTED else ""
                kept = getattr(n, "message", "")  # "imported 3 records; kept 2 already measured here"
                done[seen] = ("ok", f"Imported {n} record{'s' if n != 1 else ''} from "
                                          f"{ui.md_escape(up.name)}{where}."
                                          + (f" ({ui.md_escape(kept)})" if "kept" in kept else ""))
            else:
                done[seen] = ("error", f"Nothing imported: {ui.md_escape(n)}. Check that it is an rnnlab "
                                             "results file (JSON or JSONL written by `python -m rnnlab results "
                                             "--format json`).")
            st.session_state[P + "outcome"] = done[seen]
# the outcome under the expander, where it is seen whether the expander is open or not (hosted, the file itself is
# gone from the server once read: the outcome stays)
outcome = ((st.session_state.get(P + "imported") or {}).get((up.file_id, up.name, up.size)) if up is not None
           else None) or (
    st.session_state.get(P + "outcome") if HOSTED else None)
if outcome is not None:
    kind, msg = outcome
    (st.success if kind == "ok" else st.error)(msg, icon=":material/check_circle:" if kind == "ok"
                                               else ":material/error:")

records = []
with ui.guard("Reading the stored results"):
    records = ui.records()
if not records:
    ui.how_to_get(R.first_command(), page="unrolling")
    st.stop()

VIEWS = ("records", "by machine")
view = st.segmented_control("view", VIEWS, default=VIEWS[0], key=P + "view", label_visibility="collapsed",
                            help="records: every record, to filter, delete and download; by machine: one column per "
                                 "machine that measured the same configuration, side by side")
if view == "by machine":
    m = st.columns([2, 5])
    metric = m[0].selectbox("metric", R.MACHINE_METRICS, format_func=R.metric_label, key=P + "machine-metric")
    exps = m[1].multiselect("experiment", sorted({r.experiment for r in records}), key=P + "machine-experiment",
                            placeholder="all experiments")
    mv = ui.shared(records, R.by_machine, [r for r in records if not exps or r.experiment in exps], metric)
    ui.table(mv, key=P + "by-machine", max_lines=1, height=min(600, 35 * (len(mv.rows) + 1) + 3))
    st.stop()

df = ui.shared(records, R.frame, records)  # once per records' version, for every session
by_key = ui.shared(records, R.by_id, records)

# -- filters -------------------------------------------------------------------------------------------------------
f = st.columns([2, 3, 2, 3])
exps = f[0].multiselect("experiment", sorted(df["experiment"].unique()), key=P + "experiment",
                        placeholder="all experiments")
variants = f[1].multiselect("variant", sorted(df["variant"].unique()), key=P + "variant", placeholder="all variants")
sources = f[2].multiselect("source", R.source_choices(df), key=P + "source", placeholder="all sources")
text = f[3].text_input("contains", key=P + "text", placeholder="config, device, machine, status…",
                       help="case-insensitive, in the config, device, machine and status of each record (the "
                            "device and status are in the CSV)")
shown = R.filtered(df, experiments=exps, variants=variants, sources=sources, text=text)

st.caption(f"{len(shown)} of {len(df)} records" + ("." if HOSTED else "; select rows with the boxes on the left."))
# The selection is by row position: a key that changes with the rows shown drops a selection that would now point
# at other records (after a filter change, a delete or an import).
rows_sig = hashlib.sha256("|".join(shown["_id"]).encode()).hexdigest()[:10]
COLUMNS = list(R.GRID)  # the date, device, source and status: in the filters, the caption and the downloads
if not shown["flag"].astype(str).str.strip().any():  # no flag in any row: the column only takes room
    COLUMNS.remove("flag")
event = ui.frame_table(
    shown, columns=COLUMNS, key=P + "table-" + rows_sig, on_select="ignore" if HOSTED else "rerun",
    selection_mode="multi-row", budget=ui.tables.FULL - (0 if HOSTED else 40),  # the selection boxes' column
    whole=R.GRID_WHOLE, max_lines=3, height=None if len(shown) <= 8 else 600, config={  # a config wraps: rows grow
        "fwd_ms": st.column_config.NumberColumn("forward (ms)", format="%.3g", width=96),
        "train_ms": st.column_config.NumberColumn("train (ms)", format="%.3g", width=86,
                                                  help="train step: forward, backward and an Adam update"),
        "flag": st.column_config.TextColumn("check", help=R.CHECK_HELP),
        "on": st.column_config.TextColumn("machine", help="where the record was measured (its source) and on which "
                                                          "machine: each is named in full under the table"),
    })
if len(shown):
    st.caption(R.machines_caption(shown))
rows = event.selection.rows if not HOSTED and event is not None else []  # hosted: nothing to select rows for
picked = [shown.loc[i, "_id"] for i in rows if i < len(shown)]
picked_recs = [by_key[k] for k in picked if k in by_key]
flagged = R.details(shown)
picked_flags = R.details(shown.loc[[i for i in rows if i < len(shown)]])


def bullets(pairs) -> str:
    return "\n".join(f"- {ui.md_escape(name)}: {ui.md_escape(text)}" for name, text in pairs)


if picked_flags:  # the selected rows' full checks, right under the table
    st.markdown(f"The check of the selected row{'s' if len(picked_flags) != 1 else ''}:\n" + bullets(picked_flags))
if flagged:  # the grid's "check" holds a word: every flagged row's sentence, whole
    with st.expander(f"The full check of the {len(flagged)} flagged row{'s' if len(flagged) != 1 else ''} shown",
                     icon=":material/flag:"):
        st.markdown(bullets(flagged))
deletable = [r for r in picked_recs if r.source != "baseline"]
bundled = len(picked_recs) - len(deletable)

# -- actions -------------------------------------------------------------------------------------------------------
a = st.columns([2, 1, 1, 5], vertical_alignment="center")
if HOSTED:  # a stranger's visit deletes nothing: no Delete control at all
    a[0].caption("Read-only in this demo.")
else:
    with a[0]:
        with st.popover(f"Delete {len(deletable)} selected" if deletable else "Delete selected",
                        disabled=not deletable, icon=":material/delete:",
                        help="select local or imported records in the table first"):
            st.markdown(f"Delete {len(deletable)} record{'s' if len(deletable) != 1 else ''} from this machine's "
                        "store? A deleted measurement is measured again by the next run that needs it.")
            if st.button("Delete permanently", type="primary", key=P + "delete"):
                with ui.guard("Delete"):
                    n = ui.store().delete([r.key for r in deletable])
                    st.session_state[P + "deleted"] = n
                    st.rerun()
if st.session_state.get(P + "deleted") is not None:
    n = st.session_state.pop(P + "deleted")
    st.toast(f"Deleted {n} record{'s' if n != 1 else ''}.", icon=":material/delete:")
a[3].caption((f"{bundled} bundled record{'s' if bundled != 1 else ''} selected: bundled results are read-only. "
              if bundled else "") + "CSV and JSON hold the records the filters show.")

sel_recs = [by_key[k] for k in shown["_id"]]
csv_data = ui.shared(records, R.csv_bytes, sel_recs)
a[1].download_button("CSV", csv_data, file_name="rnnlab-results.csv", mime="text/csv",
                     key=P + "csv", on_click="ignore", icon=":material/download:", disabled=not csv_data,
                     help="the rows the filters show, one per record")
a[2].download_button("JSON", ui.shared(records, R.json_bytes, sel_recs), file_name="rnnlab-results.json", mime="application/json",
                     key=P + "json", on_click="ignore", icon=":material/download:", disabled=not sel_recs,
                     help="the full records the filters show; importable here or with `python -m rnnlab import`")
