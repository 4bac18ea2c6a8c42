"""Hosted mode: caps on what a visitor of a shared demo may run, so a 2-core, 2.7 GB host stays up.

On when ``RNNLAB_HOSTED`` is set to 1/true (or the app passes ``hosted=true`` from ``st.secrets``). The limits can be
tightened or relaxed with ``RNNLAB_HOSTED_MAX_<NAME>`` variables. A refused plan gets an ``RnnlabError`` saying
which limit and how to run it anyway (locally, or with the CLI).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

from rnnlab.core.errors import RnnlabError


@dataclass(frozen=True)
class Limits:
    units: int = 128
    layers: int = 3
    batch: int = 64
    seq_len: int = 200
    input_dim: int = 128
    points: int = 5  # sweep points per run
    tasks: int = 24  # variant workers per run
    timeout_s: int = 120  # per variant
    runs_at_once: int = 1
    repeats: int = 30


def enabled(flag: object = None) -> bool:
    value = flag if flag is not None else os.environ.get("RNNLAB_HOSTED", "")
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def limits() -> Limits:
    kw = {}
    for f in fields(Limits):
        raw = os.environ.get(f"RNNLAB_HOSTED_MAX_{f.name.upper()}")
        if raw:
            try:
                kw[f.name] = int(raw)
            except ValueError:
                raise RnnlabError(f"RNNLAB_HOSTED_MAX_{f.name.upper()}={raw!r}: expected an integer") from None
    return Limits(**kw)


def check(plan, lim: Limits | None = None) -> dict:
    """Refuse a plan over the hosted limits; return the params to force (the time limit per variant)."""
    lim = lim or limits()
    why = []
    for p in plan.points:
        for name in ("units", "layers", "batch", "seq_len", "input_dim", "repeats"):
            cap = getattr(lim, name)
            if name in p and p[name] > cap:
                why.append(f"{name}={p[name]} (at most {cap})")
    if len(plan.points) > lim.points:
        why.append(f"{len(plan.points)} sweep points (at most {lim.points})")
    if plan.n_runs > lim.tasks:  # worker processes: (point, variant, round)
        why.append(f"{plan.n_runs} worker runs (at most {lim.tasks})")
    if why:
        raise RnnlabError("this hosted demo caps what a visitor may run: " + ", ".join(dict.fromkeys(why)) +
                          "; run rnnlab on your own machine for larger configurations"
                          " (pip install -r requirements.txt && streamlit run streamlit_app.py)")
    return {"timeout_s": lim.timeout_s}
