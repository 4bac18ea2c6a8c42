"""The Claims page's Run buttons: per experiment and preset, its plan and what this environment has not stored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from rnnlab import experiments
from rnnlab.core import envinfo
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record
from rnnlab.judge import select as sel


def quick_command(name: str) -> str:
    """The command that makes a first look at experiment ``name``: its quick preset (``Plan.command()``)."""
    from rnnlab.engine import api

    return api.first_run_command(name)


@dataclass(frozen=True)
class PresetRun:
    preset: str
    plan: Any  # api.Plan, or None when it cannot run here (``problem`` says why)
    missing: int  # measurements not yet stored for this environment
    point: dict  # the preset's configuration
    problem: str = ""


def preset_runs(records: Sequence[Record], name: str, env: Mapping[str, Any] | None,
                presets: Sequence[str] = ("quick", "seed")) -> list[PresetRun]:
    """Per preset of experiment ``name``: its plan and how many of its measurements this environment (``env``, as
    ``api.known_env`` gives it; None: unknown) has not stored yet."""
    from rnnlab.engine import api

    exp = experiments.get(name)
    fp = envinfo.fingerprint(dict(env)) if env else None
    out = []
    for preset in presets:
        point = {k: v for k, v in exp.presets[preset].items() if k != "variants"}
        try:
            plan = api.plan(name, preset=preset)
        except RnnlabError as e:
            out.append(PresetRun(preset, None, 0, point, str(e)))
            continue
        missing = sum(len(sel.pick(records, p, plan.variants, fingerprint=fp, experiment=name).missing)
                      for p in plan.points)
        out.append(PresetRun(preset, plan, missing, point))
    return out


def run_device(env: Mapping[str, Any] | None) -> str:
    """The device a run here would measure on, in words."""
    return (env or {}).get("device") or ("GPU if TensorFlow sees one, else CPU" if envinfo.gpu_hint() else "CPU")
