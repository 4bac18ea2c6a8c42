"""The registry of experiments. Importing it (and listing experiments) imports no TensorFlow."""

from __future__ import annotations

import importlib

from ..errors import RnnlabError
from .base import Experiment

# module names under rnnlab.experiments, in the order the CLI lists them
_MODULES = ("unroll", "varlen", "padding", "seed003", "pitfalls", "migrate", "knobs", "precision", "training")
_cache: dict[str, Experiment] = {}


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
    return _cache


def all_experiments() -> list[Experiment]:
    return list(_load_all().values())


def get(name: str) -> Experiment:
    exps = _load_all()
    if name not in exps:
        raise RnnlabError(f"unknown experiment {name!r}; known: {', '.join(exps)}")
    return exps[name]
