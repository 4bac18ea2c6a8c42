"""``python -m rnnlab convert CHECKPOINT --out PATH [--cell lstm|gru|rnn] [--forget-bias F] [--scope S] [--json]``.

Reads a TF1 checkpoint (``tf.train.load_checkpoint``; never unpickles), finds the RNN cells in it, writes Keras 3
layers holding those weights (``.keras`` model or ``.weights.h5``), reads the written file back, and verifies it
against the TF1 graph (``dynamic_rnn``) on random inputs, with and without ``sequence_length``: max abs diff per
output and state, pass/fail at ``rnnlab.core.rules.ATOL`` (1e-5). Exit 0 when verification passes, 1 when it does
not; bad input (missing file, not a checkpoint, unsupported options such as peepholes or projections) raises
``RnnlabError`` (exit 2).
"""

from __future__ import annotations

import json
import sys
import warnings

from rnnlab.commands import _output
from rnnlab.core import outpath
from rnnlab.core.errors import RnnlabError
from rnnlab.core.rules import ATOL


def setup_arguments(sub) -> None:
    p = sub.add_parser("convert", help=f"convert a TF1 RNN checkpoint to Keras 3 layers and verify it to {ATOL:g}")
    p.add_argument("checkpoint", help="checkpoint prefix (model.ckpt), one of its files, or its directory")
    p.add_argument("--out", required=True, help="PATH.keras (model) or PATH.weights.h5 (weights only)")
    p.add_argument("--cell", choices=("lstm", "gru", "rnn"), help="cell type when the variable names do not tell")
    p.add_argument("--forget-bias", dest="forget_bias", type=float, default=1.0,
                   help="the forget_bias the TF1 LSTM cells were built with (not stored in checkpoints; default 1.0)")
    p.add_argument("--scope", help="which RNN, when the checkpoint holds several (e.g. bidirectional_rnn/fw)")
    p.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    p.set_defaults(func=main)


def run(*, checkpoint, out, cell: str | None = None, forget_bias: float = 1.0, scope: str | None = None) -> dict:
    """Convert ``checkpoint`` to ``out`` and verify the written file. Returns a JSON-ready dict::

        {"checkpoint", "out", "format": "keras" | "weights.h5", "forget_bias", "spec": {...},
         "verification": {"pass", "atol", "max_abs_diff", "max_abs_diff_outputs", "max_abs_diff_states",
                          "cases": {"full": {"diffs": {...}, ...}, "sequence_length": {...}}},
         "pass": bool}
    """
    import numpy as np

    from rnnlab.tf import convert as cv

    out = str(out)
    if not (out.endswith(".keras") or out.endswith(".weights.h5")):
        raise RnnlabError(f"--out {out}: the name must end in .keras (model) or .weights.h5 (weights only)")
    outpath.check(out)  # a symbolic link, a device, a path through a file: said before converting anything
    if cell is not None and cell not in cv.CELL_TYPES:
        raise RnnlabError(f"--cell {cell}: expected one of {', '.join(cv.CELL_TYPES)}")
    try:
        forget_bias = float(forget_bias)
    except (TypeError, ValueError):
        raise RnnlabError(f"--forget-bias {forget_bias!r}: expected a number") from None
    if not np.isfinite(forget_bias):
        raise RnnlabError(f"--forget-bias {forget_bias}: expected a finite number")

    variables = cv.read_tf1_checkpoint(checkpoint)
    spec = cv.detect_stack(variables, cell=cell, scope=scope)
    model = cv.convert(variables, forget_bias=forget_bias, spec=spec)  # refuses peepholes/projections
    path = cv.save(model, out)

    # verify what was written, not what is in memory
    import keras

    if path.endswith(".keras"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            written = keras.models.load_model(path)
        fmt = "keras"
    else:
        written = cv.convert({k: np.zeros_like(v) for k, v in variables.items()}, spec=spec)
        written.load_weights(path)
        fmt = "weights.h5"
    verification = cv.verify(variables, written, forget_bias=forget_bias, spec=spec, atol=ATOL)
    return {"checkpoint": str(checkpoint), "out": path, "format": fmt, "forget_bias": forget_bias,
            "spec": spec.to_dict(), "verification": verification, "pass": bool(verification["pass"])}


def _describe(spec: dict) -> str:
    classes = sorted({c["tf1_class"] for c in spec["cells"]})
    units = sorted({c["units"] for c in spec["cells"]})
    return (f"{spec['scope'] or '<root>'}: {spec['layers']} x {'/'.join(classes)} ({spec['cell']}), "
            f"units {'/'.join(map(str, units))}, input features {spec['input_dim']}")


def format_text(res: dict, width: int | None = _output.WIDTH) -> str:
    """:func:`run`'s result for a terminal, wrapped to ``width`` columns (None: one line each)."""
    v = res["verification"]
    lines = [f"converted {_describe(res['spec'])}", f"  -> {res['out']} ({res['format']})"]
    if any(c["cell"] == "lstm" for c in res["spec"]["cells"]):
        lines.append(f"  forget_bias {res['forget_bias']:g} folded into the forget-gate bias (TF1 checkpoints do not "
                     "store it: pass --forget-bias if the model was built with another value)")
    if res["spec"]["other_stacks"]:
        lines.append(f"  other RNNs in the checkpoint, not converted: {', '.join(res['spec']['other_stacks'])}")
    lines.append(f"verification: TF1 dynamic_rnn vs the written file, batch {v['batch']}, {v['seq_len']} steps, "
                 f"atol {v['atol']:g}")
    lines.append(f"  {'case':<16} {'tensor':<14} {'max abs diff':>12}  result")
    for case, c in v["cases"].items():
        for name, d in c["diffs"].items():
            lines.append(f"  {case:<16} {name:<14} {d:>12.3e}  {'pass' if d <= v['atol'] else 'FAIL'}")
        if "lengths" in c:
            lines.append(f"  {'':<16} (sequence_length = {c['lengths']})")
    verdict = "PASS" if res["pass"] else "FAIL"
    lines.append(f"{verdict}: max abs diff {v['max_abs_diff']:.3e} (outputs {v['max_abs_diff_outputs']:.3e}, "
                 f"states {v['max_abs_diff_states']:.3e}) {'<=' if res['pass'] else '>'} {v['atol']:g}")
    return _output.fit_lines("\n".join(lines), width)


def main(args) -> int:
    from rnnlab.tf import convert as cv
    from rnnlab.worker.main import leave_out_unused

    cv.locate_checkpoint(args.checkpoint)  # a missing checkpoint or a junk index: said before TensorFlow loads
    leave_out_unused(())  # a process running TensorFlow only: as in a worker, Keras's unused imports stay out
    with _output.tensorflow(getattr(args, "verbose", False)):  # its loading logs off stderr unless --verbose
        cv._tf()
    res = run(checkpoint=args.checkpoint, out=args.out, cell=args.cell, forget_bias=args.forget_bias,
              scope=getattr(args, "scope", None))
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        print(format_text(res, _output.width_of(args)))
    sys.stdout.flush()
    return 0 if res["pass"] else 1
