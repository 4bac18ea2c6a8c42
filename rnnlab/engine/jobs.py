"""Background runs for a long-lived process (the app): a run outlives the script run that started it.

One ``JobManager`` per process. A job is keyed by its plan, so two callers (two browser tabs) asking for the same
plan share one run. Each job has a cancel event and a progress snapshot that callers poll; the state is a plain
dataclass kept apart from any rendering.

A run belongs to the caller that started it (``owner``: the app's session id): only the owner may cancel it
(``cancel(key, owner=...)``); everyone else sees it busy, with its estimated end (``Job.expected_end``).
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from rnnlab.engine.plan import Plan
from rnnlab.engine.running import run
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import fmt_left
from rnnlab.engine.runner import Cancelled, Progress
from rnnlab.core.record import Record, canonical_json


@dataclass
class Job:
    key: str
    plan: Plan
    started: float
    state: str = "running"  # running | done | failed | cancelled
    progress: Progress | None = None  # the latest progress of a task (run-wide lines go to ``note``/``warnings``)
    warnings: list[str] = field(default_factory=list)  # e.g. "warning: machine busy (...)": shown until the end
    note: str | None = None  # the latest run-wide phase that is not a warning (the environment probe)
    records: list[Record] = field(default_factory=list)
    error: str | None = None
    finished: float | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    owner: str | None = None  # who started it (the app: a session id); only it may cancel
    expected_s: float | None = None  # the run's estimated length when it started (``engine.estimates``), if known

    def elapsed(self, now: float | None = None) -> float:
        return ((self.finished or now or time.monotonic()) - self.started)

    @property
    def active(self) -> bool:
        return self.state == "running"

    def owned_by(self, owner: str | None) -> bool:
        """Whether ``owner`` may cancel this run: its starter only (a run with no owner: anyone, as the CLI)."""
        return self.owner is None or (owner is not None and owner == self.owner)

    def expected_left(self, now: float | None = None) -> float | None:
        """Seconds until the run should end by its estimate (at least 0), or None when it had no estimate."""
        if self.expected_s is None:
            return None
        return max(0.0, self.expected_s - self.elapsed(now))


def try_again(job: Job, now: float | None = None) -> str:
    """When a visitor kept waiting by ``job`` may try again, from its estimate (``format.fmt_left``): "try again in
    about 40 s", "try again in a minute or two (it is taking longer than estimated)"."""
    left = fmt_left(job.expected_s, job.elapsed(now))
    if not left:
        return "try again in a few minutes"
    if not left.endswith(" left"):
        return f"try again in a minute or two (it is {left})"
    return f"try again in {left.removesuffix(' left')}"


def plan_key(p: Plan) -> str:
    return hashlib.sha256(canonical_json({"e": p.experiment, "p": [dict(x) for x in p.points],
                                          "v": list(p.variants)}).encode()).hexdigest()[:20]


class JobManager:
    def __init__(self, *, runner: Callable[..., list[Record]] = run, max_active: int = 1,
                 store_factory: Callable[[], object] | None = None):
        self._runner = runner
        self._jobs: dict[str, Job] = {}
        self._held: list[str] = []  # other heavy work going on (a checkpoint conversion), by what it is
        self._lock = threading.Lock()
        self.max_active = max_active
        self._store_factory = store_factory

    def active(self) -> list[Job]:
        with self._lock:
            return [j for j in self._jobs.values() if j.active]

    def held(self) -> list[str]:
        """What else holds a slot (``hold``): e.g. ["a checkpoint conversion"]."""
        with self._lock:
            return list(self._held)

    def busy(self) -> bool:
        """A run or other heavy work is going."""
        with self._lock:
            return bool(self._held) or any(j.active for j in self._jobs.values())

    def _refuse_if_full(self, owner: str | None = None) -> None:  # under the lock
        running = [j for j in self._jobs.values() if j.active]
        going = len(running) + len(self._held)
        if going < self.max_active:
            return
        theirs = [j for j in running if not j.owned_by(owner)]
        if theirs:  # a hosted visitor kept waiting by someone else's run: why, and when to come back
            raise RnnlabError(f"another visitor's run is measuring, and this demo runs one heavy process at a time "
                              f"(at most {self.max_active} at once); {try_again(theirs[0])}")
        what = ", ".join([f"{len(running)} run(s)"] * bool(running) + self._held)
        left = fmt_left(running[0].expected_s, running[0].elapsed()) if running else ""
        raise RnnlabError(f"{what} already going (at most {self.max_active} at once here);"
                          " wait for it to finish" + (f" ({left})" if left else "")
                          + (" or cancel it" if running else "") + " and try again")

    @contextlib.contextmanager
    def hold(self, what: str) -> Iterator[None]:
        """``with manager.hold("a checkpoint conversion"):`` -- heavy work outside a job takes one of the
        ``max_active`` slots while it lasts: runs and other holds are refused meanwhile, and it is refused
        (``RnnlabError``) while they are going."""
        with self._lock:
            self._refuse_if_full()
            self._held.append(what)
        try:
            yield
        finally:
            with self._lock:
                self._held.remove(what)

    def get(self, key: str) -> Job | None:
        with self._lock:
            return self._jobs.get(key)

    def submit(self, p: Plan, *, fresh: bool = False, cluster: str | None = None, owner: str | None = None,
               expected_s: float | None = None) -> Job:
        """Start (or join) the run of this plan. Refuses a new run while ``max_active`` runs are going.
        ``cluster``: a Ray address or "local" (``engine.cluster``): the run's tasks go there. ``owner``: who may
        cancel it (a joined run keeps its first owner); ``expected_s``: its estimated length."""
        key = plan_key(p)
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and job.active:
                return job
            self._refuse_if_full(owner)
            job = Job(key=key, plan=p, started=time.monotonic(), owner=owner, expected_s=expected_s)
            self._jobs[key] = job
        threading.Thread(target=self._work, args=(job, fresh, cluster), daemon=True, name=f"rnnlab-{key}").start()
        return job

    def _work(self, job: Job, fresh: bool, cluster: str | None = None) -> None:
        def on_progress(pr: Progress) -> None:
            if pr.warning:
                job.warnings.append(pr.phase[len("warning: "):])
            elif not pr.variant:
                job.note = pr.phase
            else:
                job.progress, job.note = pr, None

        try:
            kw = {"store": self._store_factory()} if self._store_factory else {}
            if cluster:
                from rnnlab.engine.cluster import Cluster

                with Cluster(cluster) as c:
                    job.note = f"on the Ray cluster {cluster} ({len(c.nodes)} node(s))"
                    job.records = self._runner(job.plan, fresh=fresh, on_progress=on_progress, cancel=job.cancel,
                                               cluster=c, **kw)
            else:
                job.records = self._runner(job.plan, fresh=fresh, on_progress=on_progress, cancel=job.cancel, **kw)
            job.state = "done"
        except Cancelled:
            job.state = "cancelled"
        except RnnlabError as e:
            job.state, job.error = "failed", str(e)
        except Exception as e:  # a bug: keep the app alive, say what it was
            job.state, job.error = "failed", f"{type(e).__name__}: {e}"
        finally:
            job.finished = time.monotonic()

    def cancel(self, key: str, owner: str | None = None) -> bool:
        """Cancel the run ``key`` if it is going and ``owner`` started it (``Job.owned_by``); False otherwise."""
        job = self.get(key)
        if job is None or not job.active or not job.owned_by(owner):
            return False
        job.cancel.set()
        return True
