"""The converter end to end on this install: a TF1 stack saved by ``tf.compat.v1.train.Saver``, read back, converted,
saved as ``.keras``, loaded, and its outputs and final states set against the TF1 graph's."""

from __future__ import annotations

import os
import tempfile
import warnings
from typing import Callable

import numpy as np

from rnnlab.core.rules import ATOL
from rnnlab.tf import convert as cv
from rnnlab.tf.migrate_harness import check_result, inputs_of, lengths_of, max_diff, params_of, rnn_cells, tf1_cell


def convert_roundtrip(params=None, workdir: str | None = None,
                      on_phase: Callable[[str], None] = lambda s: None) -> dict:
    """The converter end to end: a TF1 stack (``cell`` x ``layers``) with random weights -> a TF1 checkpoint written
    by ``tf.compat.v1.train.Saver`` -> :func:`convert.read_tf1_checkpoint` -> :func:`convert.convert` -> ``.keras``
    file -> ``keras.models.load_model`` -> outputs and final states against the original TF1 graph's, full lengths
    and with ``sequence_length``."""
    import time

    p = params_of(params)
    tf = cv._tf()
    import keras

    x = inputs_of(p)
    lengths = lengths_of(p)
    with tempfile.TemporaryDirectory(prefix="rnnlab-migrate-") as tmp:
        tmp = workdir or tmp
        prefix = os.path.join(tmp, "tf1", "model.ckpt")
        on_phase("build")
        refs = _save_tf1_stack(tf, p, x, lengths, prefix)
        on_phase("convert")
        t0 = time.perf_counter()
        variables = cv.read_tf1_checkpoint(prefix)
        spec = cv.detect_stack(variables)
        model = cv.convert(variables, spec=spec)
        convert_s = time.perf_counter() - t0
        path = cv.save(model, os.path.join(tmp, "converted.keras"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded = keras.models.load_model(path)
        on_phase("verify")
        diffs = {}
        for case, (o, s) in refs.items():
            ref = {"outputs": o, **cv.tf1_state_dict(s, spec)}
            got = cv.run_keras(loaded, x, None if case == "full" else lengths)
            for k in ref:
                diffs[f"{case}/{k}"] = max_diff(ref[k], got[k])
        file_mb = os.path.getsize(path) / 2**20
    out_d = max(v for k, v in diffs.items() if k.endswith("/outputs"))
    st_d = max(v for k, v in diffs.items() if not k.endswith("/outputs"))
    details = {"spec": spec.to_dict(), "lengths": lengths, "checkpoint_variables": sorted(variables),
               "keras_file_mb": round(file_mb, 4), "atol": ATOL}
    res = check_result(diffs, details)
    res.update({"max_abs_diff_outputs": out_d, "max_abs_diff_states": st_d, "convert_s": convert_s})
    return res


def _save_tf1_stack(tf, p: dict, x: np.ndarray, lengths: list[int], prefix: str) -> dict:
    """Build the TF1 stack with seeded random weights, run it on ``x`` (full lengths and ``lengths``), save it to
    the checkpoint ``prefix`` -> ``{case: (outputs, final state)}``."""
    cell, u, n_layers = p["cell"], p["units"], p["layers"]
    g = tf.Graph()
    with g.as_default(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is deprecated.*")
        rc = rnn_cells()
        cells = [tf1_cell(rc, cell, u) for _ in range(n_layers)]
        c = rc.MultiRNNCell(cells) if n_layers > 1 else cells[0]
        xp = tf.compat.v1.placeholder(tf.float32, [None, None, p["input_dim"]])
        sl = tf.compat.v1.placeholder(tf.int32, [None])
        out, state = tf.compat.v1.nn.dynamic_rnn(c, xp, sequence_length=sl, dtype=tf.float32)
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            rng = np.random.default_rng(p["seed"] + 1)
            for v in sorted(tf.compat.v1.global_variables(), key=lambda v: v.name):
                v.load(rng.uniform(-0.5, 0.5, v.shape).astype(np.float32), sess)
            refs = {}
            for case, lens in (("full", [p["seq_len"]] * p["batch"]), ("sequence_length", lengths)):
                o, s = sess.run([out, state], {xp: x, sl: np.asarray(lens, np.int32)})
                refs[case] = (o, s)
            os.makedirs(os.path.dirname(prefix), exist_ok=True)
            saver.save(sess, prefix)
    return refs
