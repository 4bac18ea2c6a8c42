"""The registry of experiments. Importing it (and listing experiments) imports no TensorFlow."""

from __future__ import annotations

import importlib

from rnnlab.core.errors import RnnlabError
from rnnlab.core.memo import Memo
from rnnlab.experiments.base import Experiment

_BUNDLED = Memo(size=4096)  # a bundled record's problems (``problems``), by the record's identity

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
    """Why a record (read from a file, the store or the bundled results) does not fit the registry and what the
    workers write: its experiment, variant, each param (known to the experiment, valid for its type and limits:
    ``Param.validate``), each metric and round (a plausible number for its unit), the env block and ``details``
    (their shapes; text without surrogates or control characters). Empty when it fits: ``experiments.validate``.
    ``unknown_params=False`` lets a param the experiment does not take pass (reading what is already stored or
    bundled: such a param does not break anything that reads it; an import refuses it).
    Each problem starts with the field it is about. A bundled record's are found once a process (``core.baseline``
    keeps the same frozen records while its files stay as they are; every page and command read them all again)."""
    from rnnlab.experiments import validate

    def check() -> list[str]:
        return validate.problems(record, _load_all(), unknown_params=unknown_params)
    return list(_BUNDLED.of(record, check, unknown_params)) if record.source == "baseline" else check()


def variant_label(experiment: str, variant: str) -> str:
    """What a variant runs, in words: the experiment's own label, else the unroll variants' (DESIGN.md)."""
    from rnnlab.tf.variants import label

    _load_all()
    return _labels.get(experiment, {}).get(variant) or label(variant)
