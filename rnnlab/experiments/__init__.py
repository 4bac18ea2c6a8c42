"""The registry of experiments. Importing it (and listing experiments) imports no TensorFlow."""

from __future__ import annotations

import importlib

from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import finite_number
from rnnlab.experiments.base import Experiment

# module names under rnnlab.experiments, in the order the CLI lists them
_MODULES = ("unroll", "varlen", "padding", "seed003", "pitfalls", "migrate", "knobs", "precision", "training")
_cache: dict[str, Experiment] = {}
_labels: dict[str, dict[str, str]] = {}  # experiment -> its module's LABELS (variant -> what runs)


def _load_all() -> dict[str, Experiment]:
    if not _cache:
        for m in _MODULES:
            try:
                mod = importlib.import_module(f"{__name__}.{m}")
            except ModuleNotFoundError as e:
                if e.name == f"{__name__}.{m}":
                    continue  # not written yet in this checkout
                raise
            exp = mod.EXPERIMENT
            _cache[exp.name] = exp
            _labels[exp.name] = dict(getattr(mod, "LABELS", {}))
    return _cache


def all_experiments() -> list[Experiment]:
    return list(_load_all().values())


def names() -> list[str]:
    return list(_load_all())


def get(name: str) -> Experiment:
    exps = _load_all()
    if name not in exps:
        from rnnlab.core.format import clip

        raise RnnlabError(f"unknown experiment {clip(repr(name))}; known: {', '.join(exps)}")
    return exps[name]


def problems(record, *, unknown_params: bool = True) -> list[str]:
    """Why a record (read from a file, the store or the bundled results) does not fit the registry: its experiment,
    its variant, each param (known to the experiment, valid for its type and limits: ``Param.validate``) and each
    metric (a finite number), and the env block (strings and numbers; ``cores`` and ``matmul_gflops`` finite numbers).
    Empty when it fits. ``unknown_params=False`` lets a param the experiment does not take pass (reading what is
    already stored or bundled: such a param does not break anything that reads it; an import refuses it).
    Each problem starts with the field it is about."""
    exps = _load_all()
    exp = exps.get(record.experiment)
    if exp is None:
        return [f"experiment={record.experiment!r} is not known; known: {', '.join(exps)}"]
    out = []
    if record.variant not in exp.variants:
        out.append(f"variant={record.variant!r} is not a variant of {exp.name}")
    known = set(exp.params.names())
    for k, v in record.params.items():
        if k not in known:
            if unknown_params:
                out.append(f"params.{k}: not a parameter of {exp.name}")
            continue
        try:
            exp.params[k].validate(v)
        except RnnlabError as e:
            out.append(f"params.{e}")
    for k, v in record.metrics.items():
        if finite_number(v) is None:
            out.append(f"metrics.{k}: not a finite number")
    for k, v in record.env.items():
        if k in _ENV_NUMBERS and v is not None and finite_number(v) is None:
            out.append(f"env.{k}: not a finite number")
        elif not _scalar(v) and not (isinstance(v, list) and all(_scalar(x) for x in v)):
            out.append(f"env.{k}: not a string, number or list of them")
    return out


_ENV_NUMBERS = ("cores", "matmul_gflops")  # env fields read as numbers (machine classes, busy-machine notes)


def _scalar(v) -> bool:
    return v is None or isinstance(v, (str, bool, int, float))


def variant_label(experiment: str, variant: str) -> str:
    """What a variant runs, in words: the experiment's own label, else the unroll variants' (DESIGN.md)."""
    from rnnlab.tf.variants import label

    _load_all()
    return _labels.get(experiment, {}).get(variant) or label(variant)
