"""What every pitfall runner shares: the programs' namespace (sizes, data, cell classes), a TF1 program run in its
own graph (`TF1Run`), variable bookkeeping, and the float64 NumPy reference of a stack of TF1 cells (`np_stack`)."""

from __future__ import annotations

import re

from rnnlab.tf.program import run_source

# ----------------------------------------------------------------------------------------------------------------------
# NumPy float64 references of the TF1 cells (weights in the order the cell lists them)

def _sig(z):
    import numpy as np

    return 1.0 / (1.0 + np.exp(-z))


def _np_step(kind: str, w: list, x, state):
    import numpy as np

    if kind == "rnn":
        k, b = w
        h = np.tanh(np.concatenate([x, state], 1) @ k + b)
        return h, h
    if kind == "lstm":
        k, b = w
        c, h = state
        i, j, f, o = np.split(np.concatenate([x, h], 1) @ k + b, 4, axis=1)
        c2 = c * _sig(f + 1.0) + _sig(i) * np.tanh(j)  # BasicLSTMCell: forget_bias=1.0
        h2 = np.tanh(c2) * _sig(o)
        return h2, (c2, h2)
    gk, gb, ck, cb = w  # GRUCell: gates (r, u), then the candidate from r * h
    r, u = np.split(_sig(np.concatenate([x, state], 1) @ gk + gb), 2, axis=1)
    cand = np.tanh(np.concatenate([x, r * state], 1) @ ck + cb)
    h2 = u * state + (1 - u) * cand
    return h2, h2


def _np_zero(kind: str, batch: int, units: int):
    import numpy as np

    z = np.zeros((batch, units))
    return (z, z.copy()) if kind == "lstm" else z


def np_stack(kind: str, layer_weights: list, data, states=None, lengths=None):
    """Outputs [batch, time, units] and final states of a stack of TF1 cells, in float64.

    ``lengths`` mimics dynamic_rnn: past a row's length, outputs are 0 and states are carried through.
    """
    import numpy as np

    x = np.asarray(data, np.float64)
    batch, steps, _ = x.shape
    units = np.asarray(layer_weights[0][1]).shape[0] // {"rnn": 1, "lstm": 4, "gru": 2}[kind]
    ws = [[np.asarray(a, np.float64) for a in w] for w in layer_weights]
    st = list(states) if states is not None else [_np_zero(kind, batch, units) for _ in ws]
    outs = np.zeros((batch, steps, units))
    for t in range(steps):
        inp = x[:, t]
        alive = np.ones(batch, bool) if lengths is None else (np.asarray(lengths) > t)
        for i, w in enumerate(ws):
            out, new = _np_step(kind, w, inp, st[i])
            if kind == "lstm":
                st[i] = tuple(np.where(alive[:, None], n, o) for n, o in zip(new, st[i]))
            else:
                st[i] = np.where(alive[:, None], new, st[i])
            inp = out
        outs[:, t] = np.where(alive[:, None], inp, 0.0)
    return outs, st


# --- the programs' namespace and a TF1 program's run ------------------------------------------------------------------

_TF1_CELLS = {"rnn": "BasicRNNCell", "lstm": "BasicLSTMCell", "gru": "GRUCell"}
KERAS_CLASSES = {"rnn": ("SimpleRNN", "SimpleRNNCell"), "lstm": ("LSTM", "LSTMCell"), "gru": ("GRU", "GRUCell")}


def inputs(p: dict, np, input_dim: int | None = None) -> dict:
    rng = np.random.default_rng(p["seed"])
    b, t, u = p["batch"], p["seq_len"], p["units"]
    f = p["input_dim"] if input_dim is None else input_dim
    data = rng.uniform(-1, 1, (b, t, f)).astype(np.float32)
    true_lengths = np.array([t - (i * t) // (b + 1) for i in range(b)], np.int32)
    return {"units": u, "batch": b, "seq_len": t, "input_dim": f, "data": data,
            "data_tm": np.ascontiguousarray(data.transpose(1, 0, 2)), "train_batch": 2 * b,
            "true_lengths": true_lengths, "frac_lengths": (true_lengths - 0.25).astype(np.float32),
            "c_init": rng.uniform(-0.5, 0.5, (b, u)).astype(np.float32),
            "h_init": rng.uniform(-0.5, 0.5, (b, u)).astype(np.float32)}


class TF1Run:
    """One TF1 program run in its own graph: its namespace, graph and captured error."""

    def __init__(self, tf, src: str, ns: dict, filename: str, seed: int):
        self.tf, self.graph, self.ns = tf, tf.Graph(), ns
        with self.graph.as_default():
            tf.compat.v1.set_random_seed(seed)
            self.err = run_source(src, ns, filename)

    @property
    def ok(self) -> bool:
        return self.err is None

    @property
    def sess(self):
        return self.ns.get("sess")

    def trainable(self) -> list:
        return self.graph.get_collection(self.tf.compat.v1.GraphKeys.TRAINABLE_VARIABLES)

    def values(self, vs) -> list:
        return self.sess.run(list(vs))

    def load(self, vs, values) -> None:
        with self.graph.as_default():
            for v, a in zip(vs, values):
                v.load(a, self.sess)

    def run(self, fetch, feed_names: dict):
        """Run ``fetch`` feeding the program's placeholders by their names in its namespace: ``{"x": array}``."""
        return self.sess.run(fetch, {self.ns[k]: v for k, v in feed_names.items()})

    def close(self) -> None:
        s = self.ns.get("sess")
        if s is not None:
            s.close()


def tf1_ns(tf, np, p: dict, kind: str | None = None, input_dim: int | None = None) -> dict:
    ns = {"tf": tf, "np": np, "Cell": getattr(tf.compat.v1.nn.rnn_cell, _TF1_CELLS[kind or p["cell"]])}
    ns.update(inputs(p, np, input_dim))
    return ns


def program_name(variant: str, which: str) -> str:
    return f"<pitfalls:{variant}:{which}>"


def layer_groups(vs) -> list[list]:
    """Trainable variables of a MultiRNNCell grouped per layer (by the ``cell_<i>/`` in their names)."""
    groups: dict[int, list] = {}
    for v in vs:
        m = re.search(r"cell_(\d+)/", v.name)
        groups.setdefault(int(m.group(1)) if m else 0, []).append(v)
    return [groups[k] for k in sorted(groups)]


def n_params(vs) -> int:
    import math

    return int(sum(math.prod(v.shape.as_list()) for v in vs))


def is_kernel(name: str) -> bool:
    return name.split("/")[-1].split(":")[0] == "kernel"


def as_batch_major(out, np):
    return np.stack(out, axis=1) if isinstance(out, (list, tuple)) else np.asarray(out)


def maxdiff(a, b, np) -> float:
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))

