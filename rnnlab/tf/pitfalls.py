"""Running one pitfall in a worker: its wrong and right programs (``pitfall_programs``), by the runner for its kind
(``pitfalls_sharing``, ``pitfalls_shapes``), and the record's metrics and details."""

from __future__ import annotations

import os

from rnnlab.core.errors import VariantUnsupported
from rnnlab.tf.pitfall_programs import LSTM_ONLY, PITFALLS, SHARED_KERAS, SHARED_TF1
from rnnlab.tf.pitfalls_shapes import SHAPE_RUNNERS
from rnnlab.tf.pitfalls_sharing import run_keras_shared, run_tf1_shared

assert set(SHAPE_RUNNERS) | set(SHARED_TF1) | set(SHARED_KERAS) == set(PITFALLS)


def run(params: dict, variant: str, ctx) -> dict:
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # TF1 cells need tf-keras; must precede the first TF import
    import numpy as np
    import tensorflow as tf

    api = PITFALLS[variant]["api"]
    if api == "tf1":
        try:
            tf.compat.v1.nn.rnn_cell.BasicRNNCell  # noqa: B018
        except (AttributeError, ImportError) as e:
            raise VariantUnsupported(f"TF1 cells unavailable ({e}); TF_USE_LEGACY_KERAS=1 must be set before "
                                     "TensorFlow is imported") from None
    p = dict(params)
    ctx.phase("build")
    if variant in SHARED_TF1:
        out = run_tf1_shared(p, variant, ctx, tf, np)
    elif variant in SHARED_KERAS:
        out = run_keras_shared(p, variant, ctx, tf, np)
    else:
        out = SHAPE_RUNNERS[variant](p, variant, ctx, tf, np)
    details = out["details"]
    details["cell_used"] = "lstm" if variant in LSTM_ONLY else p["cell"]
    details["tf_version"] = tf.__version__
    if api == "keras":
        import keras

        details["keras_version"] = keras.__version__
    details.setdefault("explanation", PITFALLS[variant]["explanation"])
    return {"metrics": {k: float(v) for k, v in out["metrics"].items() if v is not None}, "details": details}
