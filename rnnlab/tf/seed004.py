"""Seed 004's construct, ``keras.layers.RNN(tf.compat.v1.nn.rnn_cell.LSTMCell(n))``, tried in fresh interpreters
(the legacy-Keras switch must precede the TensorFlow import) with what happens captured verbatim."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import Any


# The seed's own imports and construct, as it wrote them: run on a default install and with the legacy switch.
_SEED_VERBATIM = """
        import tensorflow as tf
        step("from tensorflow.keras.layers import RNN"); from tensorflow.keras.layers import RNN
        note(RNN=RNN.__module__)
        step("tf.compat.v1.nn.rnn_cell.LSTMCell(N)"); cell = tf.compat.v1.nn.rnn_cell.LSTMCell(N)
        step("RNN(cell, return_sequences=True)"); layer = RNN(cell, return_sequences=True)
        step("layer(x)"); y = layer(np.zeros((2, 28, 28), np.float32)); note(shape=list(y.shape))"""

# (scenario, TF_USE_LEGACY_KERAS, body). Scenarios sharing a setting run in one fresh interpreter, each in its own try.
_SEED004_SCENARIOS = (
    # what the brief asks: Keras 3's RNN layer around the TF1 cell (only reachable with TF_USE_LEGACY_KERAS=1)
    ("keras3_RNN_of_tf1_LSTMCell", "1", """
        import keras, tensorflow as tf
        step("tf.compat.v1.nn.rnn_cell.LSTMCell(N)"); cell = tf.compat.v1.nn.rnn_cell.LSTMCell(N)
        step("keras.layers.RNN(cell, return_sequences=True)"); layer = keras.layers.RNN(cell, return_sequences=True)
        step("layer(x) on a [2, 28, 28] array"); y = layer(np.zeros((2, 28, 28), np.float32))
        note(shape=list(y.shape))
    """),
    ("keras3_RNN_of_tf1_LSTMCell_functional", "1", """
        import keras, tensorflow as tf
        cell = tf.compat.v1.nn.rnn_cell.LSTMCell(N)
        layer = keras.layers.RNN(cell, return_sequences=True)
        step("layer(keras.Input((28, 28))) (symbolic)"); inp = keras.Input((28, 28)); y = layer(inp)
        note(symbolic_shape=list(y.shape))
        step("keras.Model(inp, y)(x) on a [2, 28, 28] array"); model = keras.Model(inp, y)
        out = model(np.zeros((2, 28, 28), np.float32)); note(shape=list(out.shape))
    """),
    ("keras3_RNN_of_tf1_LSTMCell_initial_state", "1", """
        import keras, tensorflow as tf
        cell = tf.compat.v1.nn.rnn_cell.LSTMCell(N)
        layer = keras.layers.RNN(cell, return_sequences=True)
        z = np.zeros((2, N), np.float32)
        step("layer(x, initial_state=[zeros, zeros])")
        y = layer(np.zeros((2, 28, 28), np.float32), initial_state=[z, z])
        note(shape=list(y.shape), keras3_layer_trainable_weights=len(layer.trainable_weights),
             tf1_cell_weights=[w.name for w in cell.weights],
             consequence="the cell's kernel and bias are invisible to the Keras 3 layer/model: "
                         "model.trainable_variables misses them and an optimizer never updates them")
    """),
    # the seed's own imports on a default install (no TF_USE_LEGACY_KERAS): tf.keras is Keras 3
    ("seed_verbatim_default_env", "", _SEED_VERBATIM),
    # the seed's own imports with TF_USE_LEGACY_KERAS=1: tf.keras is Keras 2 (tf_keras), not Keras 3
    ("seed_verbatim_legacy_env", "1", _SEED_VERBATIM + """
        g = tf.function(lambda t: layer(t)).get_concrete_function(tf.TensorSpec([2, 28, 28], tf.float32)).graph
        ops = sorted({op.type for op in g.get_operations()})
        note(keras="Keras 2 (tf_keras), not Keras 3", loop_ops=[o for o in ops if o in ("While", "StatelessWhile")],
             cudnn_ops=[o for o in ops if "Cudnn" in o])
    """),
)

_HARNESS_HEAD = """
import json, os, sys, warnings
warnings.simplefilter("ignore")
import numpy as np
N = {units}
_all = {{}}
"""
_HARNESS_SCENARIO = """
_state = {{"steps": [], "notes": {{}}}}
def step(s, _s=_state): _s["steps"].append(s)
def note(_s=_state, **kw): _s["notes"].update(kw)
try:
{body}
    _state["result"] = "ok"
except BaseException as e:
    _state["result"] = "error"
    _state["error_type"] = type(e).__name__
    _state["error"] = str(e)
    _state["failed_at"] = _state["steps"][-1] if _state["steps"] else None
_all[{name!r}] = _state
"""
_HARNESS_TAIL = """
try:
    import keras, tensorflow as tf
    _v = {"tf": tf.__version__, "keras (import keras)": keras.__version__,
          "tf.keras.layers.RNN": tf.keras.layers.RNN.__module__}
except Exception as e:
    _v = {"error": str(e)}
for _s in _all.values():
    _s["versions"] = _v
print("@@RESULT@@" + json.dumps(_all))
"""


def seed004_construct(units: int = 32, timeout_s: int = 300) -> dict:
    """Run seed 004's construct in fresh interpreters (the legacy-Keras switch must precede the TF import, so each
    setting gets its own process) and capture the outcome and any error message verbatim."""
    import re

    out: dict[str, dict] = {}
    for legacy in ("1", ""):
        chosen = [(n, b) for n, lg, b in _SEED004_SCENARIOS if lg == legacy]
        code = _HARNESS_HEAD.format(units=int(units))
        for name, body in chosen:
            code += _HARNESS_SCENARIO.format(name=name, body=textwrap.indent(textwrap.dedent(body).strip(), "    "))
        code += _HARNESS_TAIL
        env = dict(os.environ)
        env.pop("TF_USE_LEGACY_KERAS", None)
        if legacy:
            env["TF_USE_LEGACY_KERAS"] = legacy
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        env["CUDA_VISIBLE_DEVICES"] = "-1"
        try:
            proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                                  timeout=timeout_s)
            line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT@@")), None)
            res = json.loads(line[len("@@RESULT@@"):]) if line else {
                n: {"result": "crashed", "returncode": proc.returncode, "stderr_tail": proc.stderr[-2000:]}
                for n, _ in chosen}
        except subprocess.TimeoutExpired:
            res = {n: {"result": "timeout"} for n, _ in chosen}
        for name, _ in chosen:
            r = res.get(name, {"result": "missing"})
            r["TF_USE_LEGACY_KERAS"] = legacy or None
            if "error" in r:
                r["error"] = re.sub(r"\x1b\[[0-9;]*m", "", r["error"])  # Keras's bold markers
            out[name] = r
    return {n: out[n] for n, _, _ in _SEED004_SCENARIOS}


def summarize_seed004(res: dict[str, Any]) -> str:
    """One line: what seed 004's construct does under Keras 3 here."""
    k3 = res.get("keras3_RNN_of_tf1_LSTMCell", {})
    if k3.get("result") == "error":
        return (f"keras.layers.RNN(tf.compat.v1.nn.rnn_cell.LSTMCell(n)) under Keras 3 fails at "
                f"'{k3.get('failed_at')}': {k3.get('error_type')}: {' '.join(str(k3.get('error')).split())}")
    return f"keras.layers.RNN(tf.compat.v1.nn.rnn_cell.LSTMCell(n)) under Keras 3: {k3.get('result')}"
