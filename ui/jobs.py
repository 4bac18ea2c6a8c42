"""Background runs in the app: one process-global ``JobManager`` (``api.JobManager``); progress, Cancel, and the outcome.

A run lives outside the script run that started it (a thread of the manager, one worker process per variant), so
it survives reruns, widget clicks and other tabs; two tabs that ask for the same plan share one run. Pages call::

    if st.button("Run"):
        jobs.start(plan, watch="unroll.")          # RnnlabError (another run going) -> st.error
    jobs.panel(watch="unroll.", mine={plan_key})   # progress + Cancel while any run goes; its outcome once after

Hosted, a run belongs to the session that started it (``session_id``): only that session sees Cancel; every other
visitor sees the server busy and when the run should end (``api.estimate`` at its start).
"""

from __future__ import annotations

import contextlib
from typing import Collection, Iterable

import streamlit as st

from rnnlab.engine import api
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import fmt_left, fmt_seconds
from rnnlab.core.store import Store, default_path
from rnnlab.tf.variants import label as variant_label

from . import common
from .common import md_escape

__all__ = ["manager", "start", "panel", "measuring", "waiting", "hosted_mode", "hosted_limits", "refusal",
           "refusals", "refused_caption", "heavy_slot"]


def _run(plan, **kw):
    # Looked up at call time, so tests can patch ``rnnlab.engine.api.run`` with a fake.
    return api.run(plan, **kw)


def _run_store() -> Store:
    """The store a run writes to. Hosted, ``keep_stored``: a visitor's run never replaces a stored record of any
    origin (an imported record under this machine's key stands); it adds only what was not stored."""
    return Store(default_path(), warn=lambda msg: None, keep_stored=hosted_mode())


@st.cache_resource(show_spinner=False)
def manager() -> api.JobManager:
    """The one ``JobManager`` of this server process (shared by every session and tab)."""
    return api.JobManager(runner=_run, max_active=1, store_factory=_run_store)


def _watch_key(watch: str) -> str:
    return watch + "_job"


def hosted_mode() -> bool:
    """``RNNLAB_HOSTED=1`` or ``hosted = true`` in the app's secrets: visitors' runs are capped
    (rnnlab.engine.hosted), one heavy process at a time, and stored results are read-only."""
    flag = None
    try:
        flag = st.secrets.get("hosted")
    except Exception:  # no secrets file: that is the usual local case
        flag = None
    return api.hosted.enabled(flag)


def hosted_limits() -> api.hosted.Limits:
    """The hosted caps (``RNNLAB_HOSTED_MAX_<NAME>`` applied); the defaults if a variable is not an integer (the
    run itself then says so)."""
    try:
        return api.hosted.limits()
    except RnnlabError:
        return api.hosted.Limits()


def refusal(plan: api.Plan | None) -> str | None:
    """In hosted mode, why this plan would be refused (``api.hosted.check``): pages disable or hide its Run button and
    say why. None outside hosted mode or when it may run."""
    if plan is None or not hosted_mode():
        return None
    try:
        return api.hosted.refusal(plan, api.hosted.limits())
    except RnnlabError as e:  # a bad RNNLAB_HOSTED_MAX_* variable
        return str(e)


FRESH_REFUSED = "stored results are read-only in this demo: measuring them again would replace them"


def fresh_refusal() -> str | None:
    """In hosted mode, why "Measure all again" (a run that replaces stored records) is not offered."""
    return FRESH_REFUSED if hosted_mode() else None


def refusals(plans: dict) -> dict:
    """``refusal`` of each named plan, only those refused: {name: why}."""
    return {name: why for name, p in plans.items() if (why := refusal(p))}


def refused_caption(why: str, plan: api.Plan) -> str:
    """What a page shows instead of a live Run button in hosted mode: the reason and the command to run locally."""
    return md_escape(f"Not in this demo: {why}.") + f" On your own machine: `{plan.command()}`"


CLUSTER_KEY = "run.cluster"  # the sidebar's "Ray cluster" field (never shown in hosted mode)


def cluster_address() -> str | None:
    """Where this session's runs go: a Ray address or "local" from the sidebar; None (this machine) when empty,
    and always in hosted mode."""
    if hosted_mode():
        return None
    return str(st.session_state.get(CLUSTER_KEY) or "").strip() or None


def session_id() -> str | None:
    """This browser session's id (Streamlit's), or None outside a script run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else None


def owner() -> str | None:
    """Who a run started here belongs to (``api.JobManager.submit(owner=...)``): hosted, this session, so no other
    visitor can cancel it; on one's own machine nobody in particular (any tab may cancel)."""
    return session_id() if hosted_mode() else None


def _expected_s(plan: api.Plan, fresh: bool) -> float | None:
    """The run's estimated length; ``RnnlabError`` past the caps a run starts without asking (``api.check_cost``,
    the CLI's check: here the command with ``--allow-long`` is the way past them)."""
    try:
        est = api.estimate(plan, store=common.store(), fresh=fresh, others=api.others_now())
    except RnnlabError:
        return None
    api.check_cost(est, how=f"to run it anyway, use the command line: {plan.command()} --allow-long")
    return est.seconds


def start(plan: api.Plan, *, watch: str, fresh: bool = False) -> api.Job | None:
    """Start (or join) the run of ``plan``; the page named by ``watch`` shows its outcome when it ends."""
    try:
        if hosted_mode():
            if fresh:
                raise RnnlabError(FRESH_REFUSED)
            plan = api.hosted.check(plan)  # RnnlabError over the caps; time limit and rounds lowered to theirs
        job = manager().submit(plan, fresh=fresh, cluster=cluster_address(), owner=owner(),
                               expected_s=_expected_s(plan, fresh))
    except RnnlabError as e:
        st.error(md_escape(f"Cannot start the run: {e}"), icon=":material/error:")
        return None
    st.session_state[_watch_key(watch)] = job.key
    return job


def heavy_slot(what: str):
    """``with jobs.heavy_slot("a checkpoint conversion"):`` -- in hosted mode, heavy work outside a run takes the
    one slot runs take (``api.JobManager.hold``): refused with an ``RnnlabError`` while a run or another conversion is
    going, and runs are refused while it lasts. Outside hosted mode it takes nothing."""
    return manager().hold(what) if hosted_mode() else contextlib.nullcontext()


def describe(job: api.Job, now: float | None = None) -> str:
    """"variant 2/7: tf1_static (...), build; 12.3 s elapsed, about 40 s left" (with the sweep point when there are
    several; the time left from the run's estimate, ``format.fmt_left``, refreshed with the progress line)."""
    pr = job.progress
    spent = job.elapsed(now)
    left = fmt_left(job.expected_s, spent)
    elapsed = fmt_seconds(spent) + (f" elapsed, {left}" if left else " elapsed")
    note = job.note
    if note:  # a run-wide phase: the first run on a machine measures its matmul rate
        return f"{note}; {elapsed}"
    if pr is None:  # before the first variant: the first run on a machine also measures its matmul rate
        return f"preparing (a first run here also measures this machine's matmul rate); {elapsed}"
    point = f"point {pr.point + 1}/{pr.n_points}, " if pr.n_points > 1 else ""
    n_rounds = pr.n_rounds
    rnd = f"round {pr.round + 1}/{n_rounds}, " if n_rounds > 1 else ""
    unit = "worker" if n_rounds > 1 else "variant"  # the total counts (point, variant, round) workers
    return (f"{point}{rnd}{unit} {min(pr.index + 1, pr.total)}/{pr.total}: {pr.variant} "
            f"({variant_label(pr.variant)}), {pr.phase}; {elapsed}")


@st.fragment(run_every=1)
def _live(job_key: str, mine: bool) -> None:
    job = manager().get(job_key)
    if job is None:
        return
    if not job.active:
        st.rerun(scope="app")  # the records are in the store now: redraw the page with them
    pr = job.progress
    me = owner()
    if not job.owned_by(me):  # another visitor's run: busy, and its time left (describe); never their Cancel
        st.progress(pr.fraction if pr else 0.0,
                    text=f"Busy: another visitor's run is going ({describe(job)})"
                         + ". Runs here go one at a time; yours can start when it ends.")
        return
    who = "Measuring" if mine else "Another run is going (started from another tab or configuration)"
    for w in job.warnings:
        st.warning(md_escape(w[:1].upper() + w[1:]), icon=":material/warning:")
    st.progress(pr.fraction if pr else 0.0, text=f"{who}: {describe(job)}")
    cancelling = job.cancel.is_set()
    st.button("Cancelling…" if cancelling else "Cancel run", key=f"cancel-{job_key}", disabled=cancelling,
              icon=":material/stop_circle:", on_click=manager().cancel, args=(job_key, me),
              help="stops the variant being measured; the variants that finished stay stored")


def _outcome(job: api.Job) -> None:
    if job.state == "done":
        fresh = [r for r in job.records if not r.cached]
        failed = [r for r in job.records if not r.ok]
        msg = (f"Run finished in {fmt_seconds(job.elapsed())}: {len(fresh)} measured, "
               f"{len(job.records) - len(fresh)} already stored")
        if failed:
            st.warning(msg + f", {len(failed)} failed (the table says why).", icon=":material/warning:")
        else:
            st.success(msg + ".", icon=":material/check_circle:")
    elif job.state == "cancelled":
        st.warning("Run cancelled; the variants that finished are stored and shown.", icon=":material/stop_circle:")
    elif job.state == "failed":
        st.error(md_escape(f"The run stopped: {job.error}"), icon=":material/error:")


def waiting(plans: Iterable[api.Plan | None] = ()) -> str | None:
    """Why this visitor's results are not here yet while a run or a conversion goes, and when to try again (``None``
    when nothing goes): its own run measuring; another visitor's run of these same settings (``plans``: this page's,
    as a run of them would go: hosted, ``api.hosted.clamp``-ed), whose results will show here; or another visitor's run of
    something else holding the one slot."""
    on = hosted_mode()
    mine = {api.plan_key(api.hosted.clamp(p) if on else p) for p in plans if p is not None}
    mgr = manager()
    active = mgr.active()
    if not active:
        held = mgr.held()
        return (f"{held[0][:1].upper() + held[0][1:]} is going, and runs here go one heavy process at a time: "
                "try again in a minute or two." if held else None)
    job = active[0]
    if job.owned_by(owner()):
        return "Measuring: {what} appear here when the run ends."
    if job.key in mine:
        return ("Another visitor's run is measuring these same settings: {what} appear here when it ends ("
                + (fmt_left(job.expected_s, job.elapsed()) or "in a few minutes") + ").")
    return ("Another visitor's run is measuring, and this demo runs one heavy process at a time, so yours has not "
            f"started: {api.try_again(job)}.")


def measuring(what: str, plans: Iterable[api.Plan | None] = ()) -> None:
    """Where a page's results will be, while a run or a conversion goes: :func:`waiting`'s words."""
    said = waiting(plans)
    if said:
        st.info(said.replace("{what}", what), icon=":material/hourglass_top:")


_REDRAWN = "_jobs_redrawn"  # the job whose end this session redrew the page for (once per job)


def panel(*, watch: str, mine: Collection[str] = ()) -> bool:
    """Progress and Cancel of the run going on (if any); the outcome of the run this page started, once it ended.

    Returns True while a run is going (pages disable their Run buttons then).
    """
    mgr = manager()
    watched = st.session_state.get(_watch_key(watch))
    if watched:
        job = mgr.get(watched)
        if job is not None and not job.active:
            if common.read_stale() and st.session_state.get(_REDRAWN) != job.key:
                # it ended between this page reading its records and now: "Run finished" above a table without
                # its last records would stand until the next click; redraw once, with them
                st.session_state[_REDRAWN] = job.key
                st.rerun(scope="app")
            _outcome(job)
            del st.session_state[_watch_key(watch)]
    active = mgr.active()
    mine = set(mine) | ({watched} if watched else set())
    for job in active:
        _live(job.key, job.key in mine)
    held = mgr.held()
    for what in held:
        st.info(f"{what[:1].upper() + what[1:]} is going (started from another tab or page): one heavy "
                "process at a time here, so runs can start when it ends.", icon=":material/hourglass_top:")
    return bool(active or held)
