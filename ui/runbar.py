"""The run bar every page with a Run button shares: what a run here would be (:func:`plan`, :func:`known_env`), the
Run / Measure all again row of one plan (:func:`run_bar`), and the runs' progress at the top of the sidebar
(:func:`progress`). Pages keep their own buttons where they run several plans (pitfalls, migrate, claims) and show
the progress through :func:`progress` all the same.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import streamlit as st

from rnnlab.engine import api

from . import jobs, sidebar
from .common import md_escape, store


def plan(experiment: str, **kw: Any) -> api.Plan:
    """``api.plan``: the run of ``experiment`` a page offers, validated before anything runs (``RnnlabError``)."""
    return api.plan(experiment, **kw)


def known_env(device: str = "auto") -> dict | None:
    """The environment a run here would record (``api.known_env``; None: not known without a worker)."""
    return api.known_env(store(), device)


def progress(watch: str, plans: Iterable[api.Plan | None] = ()) -> None:
    """The progress, Cancel and outcome of the runs going on (this page's ``plans`` said as its own), with their
    estimate, at the top of the sidebar: in view however far the page is scrolled."""
    with sidebar.run_area():
        jobs.panel(watch=watch, mine={api.plan_key(p) for p in plans if p is not None})
        sidebar.run_estimate()


def run_bar(plan: api.Plan, missing: Sequence[str], *, prefix: str, watch: str, settings: str,
            also: Iterable[api.Plan | None] = (), refused_below: bool = False) -> bool:
    """Run (the ``missing`` variants) and Measure all again for ``plan``, with what is stored beside them; a press
    starts the run in the background. Then :func:`progress` (``also``: the page's other plans, said as its own).
    ``settings``: what the stored results are of, in the Measure-again help ("this configuration"). Hosted, a plan
    over the demo's caps is not offered: the reason and the command instead, beside the buttons or (``refused_below``)
    under them. Returns whether a run was going on (the page says so where its results will be)."""
    busy = jobs.manager().busy()
    refused = jobs.refusal(plan)  # hosted mode: over the demo's caps, so not offered as a live button
    r1, r2, r3 = st.columns([3, 2, 4])
    if missing:
        n = len(missing)
        go = r1.button(f"Run: measure {n} variant{'s' if n != 1 else ''} not stored", type="primary",
                       disabled=busy or bool(refused), key=prefix + "run", icon=":material/play_arrow:",
                       help=md_escape(refused) if refused else None)
    else:
        r1.button("Run: everything is stored", disabled=True, key=prefix + "run", icon=":material/check:")
        go = False
    no_again = refused or jobs.fresh_refusal()  # hosted mode: stored results are read-only
    again = r2.button("Measure all again", disabled=busy or bool(no_again), key=prefix + "fresh",
                      icon=":material/refresh:", help=md_escape(no_again) if no_again else
                      f"ignore the stored results of {settings} and measure every chosen variant again")
    if refused and not refused_below:
        r3.caption(jobs.refused_caption(refused, plan))
    elif missing:
        r3.caption(f"Not stored for this environment: {', '.join(missing)}. Each variant takes a fresh TensorFlow "
                   "process (about 10 s to start) plus its measurement.")
    else:
        r3.caption(f"All {len(plan.variants)} chosen variants are stored: shown below.")
    if refused and refused_below:
        st.caption(jobs.refused_caption(refused, plan))
    if go or again:
        if jobs.start(plan, watch=watch, fresh=bool(again)):
            st.rerun()
    progress(watch, (plan, *also))
    return busy
