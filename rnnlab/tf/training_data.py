"""The training experiment's data and starting point, the same for every strategy (NumPy only): the images as
sequences (MNIST rows from a local copy, else scikit-learn's digits; never downloaded), the initial weights, the
batches of each epoch, and the accuracy and cross-entropy of a set of logits."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rnnlab.core.errors import RnnlabError

MNIST_PATH = Path("~/.keras/datasets/mnist.npz").expanduser()
ADAM = {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8}


def load_data(p: dict) -> dict:
    """{"x_train", "y_train", "x_test", "y_test": float32 [n, steps, features] / int32 [n], "name", "source"}."""
    want = p.get("dataset", "auto")
    if want == "mnist" or (want == "auto" and MNIST_PATH.exists()):
        if not MNIST_PATH.exists():
            raise RnnlabError(f"no local MNIST copy at {MNIST_PATH}; rnnlab never downloads")
        with np.load(MNIST_PATH, allow_pickle=False) as z:
            xtr, ytr, xte, yte = z["x_train"], z["y_train"], z["x_test"], z["y_test"]
        n = int(p.get("n_train") or 0) or len(xtr)
        n_test = min(len(xte), max(1, n // 6)) if p.get("n_train") else len(xte)
        return {"x_train": (xtr[:n] / 255.0).astype(np.float32), "y_train": ytr[:n].astype(np.int32),
                "x_test": (xte[:n_test] / 255.0).astype(np.float32), "y_test": yte[:n_test].astype(np.int32),
                "name": "mnist", "source": str(MNIST_PATH)}
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)
    y = d.target.astype(np.int32)
    perm = np.random.default_rng([int(p.get("seed", 0)), 7]).permutation(len(x))
    cut = int(round(len(x) * 0.8))
    tr, te = perm[:cut], perm[cut:]
    return {"x_train": x[tr], "y_train": y[tr], "x_test": x[te], "y_test": y[te], "name": "digits",
            "source": "sklearn.datasets.load_digits (bundled with scikit-learn)"}


def initial_weights(cell: str, units: int, input_dim: int, n_classes: int, seed: int) -> tuple[dict, np.ndarray,
                                                                                                np.ndarray]:
    """(canonical RNN layer weights, dense kernel [units, classes], dense bias [classes])."""
    from rnnlab.tf.weights import make_weights

    layer = make_weights(cell, 1, units, input_dim, seed)[0]
    s = 1.0 / np.sqrt(units)
    k = np.random.default_rng([int(seed), 5]).uniform(-s, s, size=(units, n_classes)).astype(np.float32)
    return layer, k, np.zeros(n_classes, np.float32)


def batches(n: int, batch: int, epoch: int, seed: int) -> list[np.ndarray]:
    """The index batches of one epoch: a permutation from (seed, epoch); the incomplete last batch is dropped."""
    perm = np.random.default_rng([int(seed), 6, int(epoch)]).permutation(n)
    return [perm[i:i + batch] for i in range(0, n - batch + 1, batch)]


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)



def accuracy(logits: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(np.argmax(logits, axis=1) == y))


def xent(logits: np.ndarray, y: np.ndarray) -> float:
    p = softmax(logits.astype(np.float64))
    return float(-np.mean(np.log(np.maximum(p[np.arange(len(y)), y], 1e-300))))
