"""Hosted mode: caps on what a visitor of a shared demo may run, so a 2-core, 2.7 GB host stays up.

On when ``RNNLAB_HOSTED`` is set to 1/true (or the app passes ``hosted=true`` from ``st.secrets``). Every integer
parameter of every experiment has a cap: those experiments share here (``Limits``, one field per parameter name),
one experiment's own in its registry entry (``Experiment.hosted``; a test enumerates the registry), and so do a run's sweep points and worker processes, a conversion's memory and time, and a visitor's
session import. The limits can be tightened or relaxed with ``RNNLAB_HOSTED_MAX_<NAME>`` variables. A refused plan
gets an ``RnnlabError`` saying which limit and how to run it anyway (locally, or with the CLI).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field, fields
from typing import Mapping

from rnnlab.core.errors import RnnlabError

# params a hosted run lowers to their cap instead of refusing them: the per-variant time limit, and the rounds
# (a hosted run measures one round unless RNNLAB_HOSTED_MAX_ROUNDS raises it)
CLAMPED = ("timeout_s", "rounds", "budget_s", "live", "deadline_s")


@dataclass(frozen=True)
class Limits:
    # -- the int parameters experiments share (by name); one experiment's own are in its entry (Experiment.hosted) --
    units: int = 128
    layers: int = 3
    batch: int = 64
    seq_len: int = 200
    input_dim: int = 128
    repeats: int = 30
    warmup: int = 5
    rounds: int = 2  # hosted runs measure two rounds (between-process variance in every interval) (CLAMPED)
    parallel_iterations: int = 256
    seed: int = 2**31 - 1  # any seed: it changes the numbers, not the cost
    timeout_s: int = 120  # per variant: lowered to this on every hosted run (CLAMPED), not refused
    budget_s: int = 30  # interleaved: seconds of timed windows per point (CLAMPED)
    deadline_s: int = 90  # interleaved: no round after the second once a point has taken this long (CLAMPED)
    threads: int = 256  # any thread count: it changes how the work is spread, not its size
    live: int = 3  # interleaved: workers alive at once, the reference and two others (CLAMPED): 2.7 GB hold three
    # -- per run --------------------------------------------------------------------------------------------------
    points: int = 5  # sweep points per run
    tasks: int = 24  # variant workers per run
    runs_at_once: int = 1  # heavy processes (a run, a checkpoint conversion) at once, process-wide
    # -- a checkpoint conversion (the Migrate page's upload) -----------------------------------------------------
    convert_mb: int = 1500  # memory of the converter subprocess (RSS, MB)
    convert_timeout_s: int = 180
    # -- a visitor's results import (kept in that session, never stored) -----------------------------------------
    import_records: int = 1000  # per session (no more than one import file holds: importing.MAX_IMPORT_RECORDS)
    import_mb: int = 5  # per session
    # -- every session's uploads together (``Uploads``): what the server holds for its visitors at once ---------------
    uploads_total_mb: int = 60  # results files and checkpoints of all sessions (a 5 MB results file: ~30 MB parsed)
    checkpoint_files: int = 6  # files in one checkpoint upload (.index, .data shards, .meta, checkpoint)
    session_grace_s: int = 20  # a visitor gone this long is let go: a reconnect within it (a network blip) keeps all
    # -- each experiment's own int parameters: ``Experiment.hosted`` (the lowest where two name one), by name -------
    own: Mapping[str, int] = field(default_factory=lambda: own_caps())


# the fields above that are not parameters of an experiment
NOT_PARAMS = frozenset({"points", "tasks", "runs_at_once", "convert_mb", "convert_timeout_s", "import_records",
                        "import_mb", "uploads_total_mb", "checkpoint_files", "session_grace_s", "own"})


def own_caps(env: Mapping[str, str] | None = None) -> dict[str, int]:
    """Every experiment's own caps (``Experiment.hosted``), each raised or lowered by its
    ``RNNLAB_HOSTED_MAX_<NAME>`` in ``env`` (none: the declared caps)."""
    from rnnlab import experiments

    caps: dict[str, int] = {}
    for exp in experiments.all_experiments():
        for name, cap in exp.hosted.items():
            caps[name] = min(cap, caps.get(name, cap))
    return {name: _env_int(env, name, cap) for name, cap in caps.items()}


def _env_int(env: Mapping[str, str] | None, name: str, default: int) -> int:
    raw = (env or {}).get(f"RNNLAB_HOSTED_MAX_{name.upper()}")
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError:
        raise RnnlabError(f"RNNLAB_HOSTED_MAX_{name.upper()}={raw!r}: expected an integer") from None


def enabled(flag: object = None) -> bool:
    value = flag if flag is not None else os.environ.get("RNNLAB_HOSTED", "")
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def limits() -> Limits:
    kw = {f.name: _env_int(os.environ, f.name, f.default) for f in fields(Limits) if f.name != "own"}
    return Limits(**kw, own=own_caps(os.environ))


def param_caps(lim: Limits | None = None) -> dict[str, int]:
    """Parameter name -> its hosted cap."""
    lim = lim or limits()
    return {f.name: getattr(lim, f.name) for f in fields(Limits) if f.name not in NOT_PARAMS} | dict(lim.own)


def clamp(plan, lim: Limits | None = None):
    """The plan with its ``CLAMPED`` params lowered to their caps (a hosted run's time limit and rounds)."""
    import dataclasses

    lim = lim or limits()
    caps = param_caps(lim)
    points = tuple({**p, **{n: min(p[n], caps[n]) for n in CLAMPED if isinstance(p.get(n), int)}}
                   for p in plan.points)
    return dataclasses.replace(plan, points=points)


def check(plan, lim: Limits | None = None):
    """The plan a hosted visitor may run (``clamp``-ed); ``RnnlabError`` naming every limit it passes.

    An int parameter without a cap here is refused too: a new parameter is capped before strangers can set it."""
    lim = lim or limits()
    caps = param_caps(lim)
    plan = clamp(plan, lim)
    why = []
    for p in plan.points:
        for name, value in p.items():
            if isinstance(value, bool) or not isinstance(value, int):
                continue
            cap = caps.get(name)
            if cap is None:
                why.append(f"{name}={value} (no hosted limit for {name})")
            elif value > cap:
                why.append(f"{name}={value} (at most {cap})")
    if len(plan.points) > lim.points:
        why.append(f"{len(plan.points)} sweep points (at most {lim.points})")
    if plan.n_runs > lim.tasks:  # worker processes: (point, variant, round), after the rounds are clamped
        why.append(f"{plan.n_runs} worker runs (at most {lim.tasks})")
    if why:
        raise RnnlabError("this hosted demo caps what a visitor may run: " + ", ".join(dict.fromkeys(why)) +
                          "; run rnnlab on your own machine for larger configurations"
                          " (pip install -r requirements.txt && streamlit run streamlit_app.py)")
    return plan


def refusal(plan, lim: Limits | None = None) -> str | None:
    """Why ``check`` refuses this plan (its message), or None when it may run: for disabling a Run button."""
    try:
        check(plan, lim)
    except RnnlabError as e:
        return str(e)
    return None


# -- what visitors upload, counted across every session ---------------------------------------------------------------
# Streamlit holds an uploaded file in the server's memory from the moment it arrives until the session shuts down,
# and a closed tab's session is kept (for a reconnect) and never shut down: each 4.7 MB results upload left ~29 MB
# (its bytes and its parsed records) after the tab closed. So the app books every upload here, per session, against
# one process-wide budget, refuses one that would pass it, and releases a session's uploads once the session is gone.
@dataclass
class _Held:
    bytes: int = 0
    records: list = field(default_factory=list)
    files: dict = field(default_factory=dict)  # file id -> bytes, as booked
    version: int = 0  # changes with what the session holds (views of its records are keyed on it)


class Uploads:
    """Every session's uploads (bytes booked, records kept), against ``total_mb`` for all sessions at once."""

    def __init__(self, total_mb: float):
        self.total_bytes = int(total_mb * 2**20)
        self._lock = threading.Lock()
        self._by_session: dict[str, _Held] = {}

    def used(self) -> int:
        """Bytes booked by every session."""
        with self._lock:
            return sum(h.bytes for h in self._by_session.values())

    def sessions(self) -> list[str]:
        with self._lock:
            return list(self._by_session)

    def book(self, session: str, files: dict[str, int], *, what: str) -> None:
        """Book ``files`` (file id -> bytes) for ``session`` before anything is read from them; ``RnnlabError`` when
        every session's uploads would pass the budget (nothing is booked then). A file already booked is not
        counted twice."""
        with self._lock:
            held = self._by_session.get(session) or _Held()
            new = {k: n for k, n in files.items() if k not in held.files}
            used = sum(h.bytes for h in self._by_session.values())
            if used + sum(new.values()) > self.total_bytes:
                raise RnnlabError(
                    f"{what}: this demo holds at most {self.total_bytes / 2**20:g} MB of uploads for all its visitors "
                    f"at once and has {max(0, self.total_bytes - used) / 2**20:.1f} MB free now; try again in a few "
                    "minutes, or run rnnlab on your own machine (`python -m rnnlab import FILE`)")
            held.files.update(new)
            held.bytes += sum(new.values())
            self._by_session[session] = held

    def unbook(self, session: str, file_ids) -> None:
        """Give back the bytes of files no longer held (refused, or dropped after reading)."""
        with self._lock:
            held = self._by_session.get(session)
            if held is None:
                return
            for k in file_ids:
                held.bytes -= held.files.pop(k, 0)

    def keep(self, session: str, records: list) -> None:
        """Keep parsed records for ``session`` (its bytes stay booked while they are kept)."""
        with self._lock:
            held = self._by_session.setdefault(session, _Held())
            held.records = held.records + list(records)
            held.version += 1

    def held(self, session: str) -> tuple[list, int]:
        """The records ``session`` keeps and a version that changes with them."""
        with self._lock:
            held = self._by_session.get(session)
            return (list(held.records), held.version) if held else ([], 0)

    def held_bytes(self, session: str) -> int:
        with self._lock:
            held = self._by_session.get(session)
            return held.bytes if held else 0

    def release(self, session: str) -> bool:
        """Forget everything ``session`` holds (it ended). True when it held something."""
        with self._lock:
            return self._by_session.pop(session, None) is not None

    def sweep(self, alive) -> list[str]:
        """Release every session for which ``alive(session)`` is false; the sessions released."""
        gone = [s for s in self.sessions() if not alive(s)]
        return [s for s in gone if self.release(s)]
