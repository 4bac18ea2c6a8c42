"""The Migrate page's shared ground: its presets and plans (:func:`plans`, :func:`cli_command`) and where its records
were seen (:func:`where`, :func:`seen_on`). Pure: no Streamlit, no TensorFlow. ``rnnlab.present.migrate`` names all
of it.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from rnnlab import experiments
from rnnlab.core import envinfo, format as fmt
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record
from rnnlab.engine import api
from rnnlab.judge import select
from rnnlab.judge.select import source_note
from rnnlab.tf import mapping

EXP = "migrate"
PRESETS = ("quick", "seed")
SIZES = ("units", "batch", "seq_len", "input_dim", "lengths")  # what a preset sets; cell and layers are chosen
CHECK_VARIANTS = tuple(f"check_{r.check}" for r in mapping.ROWS if r.check)
ROWS = {r.variant: r for r in mapping.ROWS if r.variant}  # variant -> mapping row, in the mapping's order
SUMMARY = experiments.get(EXP).summary
CELLS = tuple(experiments.get(EXP).params["cell"].choices)


def preset_params(preset: str, cell: str, layers: int) -> dict:
    if preset not in PRESETS:
        raise RnnlabError(f"preset={preset!r}: expected one of {', '.join(PRESETS)}")
    exp = experiments.get(EXP)
    sizes = {k: v for k, v in exp.presets[preset].items() if k in SIZES}
    return exp.params.fill({**sizes, "cell": cell, "layers": layers})


def plan(preset: str, cell: str, layers: int, variants: Sequence[str]) -> api.Plan:
    return api.plan(EXP, preset=preset, overrides=preset_params(preset, cell, layers), variants=list(variants))


def plans(preset: str, cell: str, layers: int) -> dict[str, api.Plan]:
    """The page's runs: the live checks, the converter demo, seed 004's construct."""
    return {"checks": plan(preset, cell, layers, CHECK_VARIANTS),
            "demo": plan(preset, cell, layers, ["convert_verify"]),
            "seed004": plan(preset, cell, layers, ["seed004_construct"])}


def cli_command(preset: str, cell: str, layers: int, variants: Sequence[str]) -> str:
    """The same run from a terminal (``Plan.command()``)."""
    return plan(preset, cell, layers, variants).command()


def fingerprint(env: Mapping[str, Any] | None) -> dict | None:
    """This environment's fingerprint from ``api.known_env`` (None: unknown, any record of this store counts)."""
    return envinfo.fingerprint(dict(env)) if env else None


def where(recs: Sequence[Record]) -> str:
    """"here" for this machine's records, else whose: "(bundled from <machine>)" (``select.origin``)."""
    recs = [r for r in recs if r is not None]
    if not recs or select.is_here(recs):
        return "here"
    return f"({'; '.join(dict.fromkeys(select.origin(r) for r in recs))})"


def seen_on(recs: Sequence[Record]) -> str:
    if not recs:
        return ""
    tfs = sorted({str(r.env.get("tf")) for r in recs})
    keras = sorted({str(r.env.get("keras")) for r in recs if r.env.get("keras")})
    dates = sorted({r.created_at[:10] for r in recs})
    return (f"TensorFlow {'/'.join(tfs)}" + (f", Keras {'/'.join(keras)}" if keras else "")
            + f"; {source_note(recs)}, {' to '.join([dates[0], dates[-1]] if len(dates) > 1 else dates)}")


def _short_params(p: Mapping[str, Any]) -> str:
    return fmt.fmt_params({k: p[k] for k in ("cell", "layers", "units", "batch", "seq_len", "input_dim")
                           if k in p})
