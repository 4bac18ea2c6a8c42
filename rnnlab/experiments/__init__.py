"""The registry of experiments. Importing it (and listing experiments) imports no TensorFlow."""

from __future__ import annotations

import importlib

from rnnlab.core.errors import RnnlabError
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
        raise RnnlabError(f"unknown experiment {name!r}; known: {', '.join(exps)}")
    return exps[name]


def variant_label(experiment: str, variant: str) -> str:
    """What a variant runs, in words: the experiment's own label, else the unroll variants' (DESIGN.md)."""
    from rnnlab.tf.variants import label

    _load_all()
    return _labels.get(experiment, {}).get(variant) or label(variant)
