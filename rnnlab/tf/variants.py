"""The RNN variants of DESIGN.md: stable names and the human labels the UI shows beside them.

This module imports no TensorFlow; the implementations live in ``tf1.py``, ``tf2.py`` and ``keras3.py`` and are
imported only inside a worker process (see ``measure.py``).
"""

BASE_VARIANTS: dict[str, str] = {
    "tf1_static": "static_rnn (TF1, unrolled graph)",
    "tf1_dynamic": "dynamic_rnn (TF1, while_loop)",
    "tf2_unrolled": "tf.function + Python loop (TF2 unrolled)",
    "tf2_while": "tf.function + tf.while_loop (TF2 symbolic loop)",
    "keras": "Keras 3 layer (fused kernel where eligible)",
    "keras_unroll": "Keras 3 layer, unroll=True",
    "keras_cell": "Keras 3 RNN(Cell) (generic, never fused)",
}
XLA_VARIANTS = ("tf2_unrolled", "tf2_while", "keras", "keras_unroll", "keras_cell")  # TF1 sessions: not applied

VARIANTS: dict[str, str] = dict(BASE_VARIANTS)
for _v in XLA_VARIANTS:
    VARIANTS[_v + "+xla"] = BASE_VARIANTS[_v] + " + XLA (jit_compile=True)"

REFERENCE = "tf1_dynamic"


def label(name: str) -> str:
    """``"tf1_static"`` -> ``"static_rnn (TF1, unrolled graph)"``; unknown names come back unchanged."""
    return VARIANTS.get(name, name)


def split_xla(name: str) -> tuple[str, bool]:
    """``"keras+xla"`` -> ``("keras", True)``."""
    return (name[:-4], True) if name.endswith("+xla") else (name, False)
