"""The sidebar every page shares: this machine's environment and where the shown results come from.

Never starts a worker or imports TensorFlow: versions come from package metadata (``envinfo.static_env``), the
device and matmul rate from a probe only if one is already cached in the store. The rate is
``select.matmul_rate`` of the environment a run here records (``api.known_env``): the number every chart of this
machine's records quotes.
"""

from __future__ import annotations

import streamlit as st


from rnnlab.core import baseline, envinfo
from rnnlab.core.errors import RnnlabError
from rnnlab.core.memo import Memo
from rnnlab.engine import api
from rnnlab.judge import select
from rnnlab.core.format import fmt_rate, fmt_seconds

from . import jobs, nav
from .common import store


def _device_line(static: dict, s) -> tuple[str, str | None]:
    gpu_probe = api.cached_probe(s, "GPU") if static["gpu_hint"] else None
    gpus = (gpu_probe or {}).get("gpus") or []
    if gpus:
        device = f"GPU: {gpus[0]}" + (f" (+{len(gpus) - 1} more)" if len(gpus) > 1 else "")
    elif static["gpu_hint"] and gpu_probe is None:
        device = "CPU, or a GPU not probed yet (the first run probes it)"
    else:
        device = "CPU"
    env = api.known_env(s, "auto")
    rate = select.matmul_rate(env) if env else None
    return device, (f"matmul rate {fmt_rate(rate)} (this machine's probe)" if rate else None)


_MACHINE = Memo(size=8)  # the lines about this machine and its store, read once per version of the store


def _machine(static: dict, s) -> tuple[str, str | None, int]:
    """The device line, the matmul rate line and this store's record count: every view of every session showed them,
    and read the store's meta table and counted its records each time (5% of a hosted server's CPU under load)."""
    return _MACHINE.get(("machine", str(s.path), s.version()), lambda: (*_device_line(static, s), s.count()))


RUN_AREA = "_run_area"  # session_state: this script run's container at the top of the sidebar


def run_area():
    """Where a page shows the progress, Cancel and outcome of a run (``jobs.panel``): the top of the sidebar, in
    view however far the page is scrolled (a Run button sits low on a long page, the main column's top is then out of
    view). The progress line says the time left, live (``jobs.describe``); ``run_estimate`` under it says what that
    estimate rests on."""
    area = st.session_state.get(RUN_AREA)
    return area if area is not None else st.container()


def run_estimate() -> None:
    """Under the progress lines: what each run's time left rests on (its estimate when it started, ``api.estimate``:
    this machine's earlier runs, or a rough guess). The time left itself is on the progress line, live."""
    for job in jobs.manager().active():
        try:
            est = api.estimate(job.plan, store=store())
        except RnnlabError:
            continue
        total = job.expected_s if job.expected_s is not None else est.seconds
        st.caption(f"Estimated at about {fmt_seconds(total)} in all, "
                   + ("by this machine's earlier runs." if est.from_timings else "a rough guess: no earlier run "
                                                                                 "of these variants here."))


def render() -> None:
    static = envinfo.static_env()
    with st.sidebar:
        st.session_state[RUN_AREA] = st.container()  # filled by the page (run_area), above everything else
        if nav.page_file("glossary"):  # the words every page uses: seed, variant names, zofm, roofline
            st.page_link(nav.page_file("glossary"), label="Words used here", icon=":material/menu_book:",
                         help="The Glossary: seeds and 'seed 000 §3.1', the variant names, zofm, roofline, ratios "
                              "and verdicts")
        st.markdown("**This machine**")
        try:
            s = store()
            device, rate, n_local = _machine(static, s)
        except RnnlabError as e:
            st.error(str(e), icon=":material/error:")
            return
        lines = [f"Device: {device}", f"{static['cpu']}, {static['cores']} core{'s' if static['cores'] != 1 else ''}",
                 f"TensorFlow {static['tf'] or 'not installed'} · Keras {static['keras'] or '–'} · "
                 f"Python {static['python']}"]
        if rate:
            lines.append(rate)
        st.caption("  \n".join(lines))
        st.markdown("**Results shown**")
        bundled = baseline.load()
        parts = []
        parts.append(f"This machine's store: {n_local} record{'s' if n_local != 1 else ''} (its own runs and "
                     "imports)")
        if bundled:
            machines = sorted({r.machine for r in bundled})
            alike = all(r.env.get("cpu") == static["cpu"] and r.env.get("cores") == static["cores"] for r in bundled)
            whose = ("a machine with this CPU model, not this store's runs" if alike else "another machine's")
            parts.append(f"Bundled (read-only): {len(bundled)} records from {'; '.join(machines)}, {whose}; "
                         "shown where this store has none")
        else:
            parts.append("No bundled results in this checkout")
        st.caption("  \n".join(parts))
        hosted = jobs.hosted_mode()
        st.caption(("" if hosted else f"Store: `{s.path}`. ") + "Every table says which source its numbers come from.")
        if not hosted:  # a demo's visitors run on the server alone
            st.text_input("Runs go to", key=jobs.CLUSTER_KEY, placeholder="this machine",
                          help="empty: this machine, one worker at a time. A Ray cluster's address (auto, "
                               "host:6379, ray://host:10001) or `local` (Ray on this machine's cores): every "
                               "measurement a Ray task on a node of its own (README, 'Running on a Ray cluster'); "
                               "the same as `python -m rnnlab run ... --cluster ADDRESS`.")
