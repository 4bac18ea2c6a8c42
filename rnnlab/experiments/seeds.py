"""The seeds: the four documents rnnlab grew from (``shared/seeds/``), their configurations and their own figures.

This is the one catalogue of what the seeds say in numbers. Experiments build their ``seed`` presets from it, the
claims quote it, pages show it beside a measurement (always labelled as the seed's figure, never as a measurement).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

# seed number -> file name in shared/seeds, and what the document is
SEED_FILES = {
    "000": "000_c34ee7c50a2fcabe.txt",  # CSDN blog: dynamic_rnn vs static_rnn at sequence length 100
    "001": "001_3a5ae1509da6cb41.txt",  # Stack Overflow: what does it mean to unroll an RNN dynamically?
    "003": "003_ba4109e66d1a4cdb.txt",  # blog: static_rnn builds slower but runs faster (Estimator log)
    "004": "004_92cccbbe99fcbfb4.txt",  # blog: RNNCell performance, "cuDNN-based" LSTMCell + tf.function
}
SEED_TITLES = {
    "000": "a blog post comparing dynamic_rnn and static_rnn at 100 steps",
    "001": "a Stack Overflow question: what does it mean to unroll an RNN dynamically?",
    "003": "a blog post: static_rnn builds slower but runs faster (an Estimator log)",
    "004": "a blog post on RNN cell performance (a 'cuDNN-based' LSTMCell and tf.function)",
}

# Seed 000's benchmark: 3 x BasicRNNCell(128), batch 32, 100 steps of 64 features, float32, every row full length.
SEED_000 = {"cell": "rnn", "layers": 3, "units": 128, "batch": 32, "seq_len": 100, "input_dim": 64,
            "dtype": "float32", "lengths": "full"}
# Seed 000's own table (section 3): per-1000-iteration milliseconds and peak MB, CPU and GPU.
SEED_000_FIGURES: dict[str, Any] = {
    "cpu_ms": {"tf1_static": 482.0, "tf1_dynamic": 387.0},
    "gpu_ms": {"tf1_static": 156.0, "tf1_dynamic": 112.0},
    "peak_mb": {"tf1_static": 1243.0, "tf1_dynamic": 876.0},
    "unstack_num": 50,  # tf.unstack(inputs, num=50, axis=1)
}

# Seed 003's benchmark: BasicLSTMCell(200), batch 200, 300 steps of 16 features, every length 20.
SEED_003 = {"units": 200, "batch": 200, "seq_len": 300, "input_dim": 16, "lengths": "fixed:20"}
# The seed's own log (TF 1.x Estimator, GPU with allow_growth, 2017).
SEED_003_FIGURES: dict[str, Any] = {
    "label": "seed 003's claim (its own log: TF 1.x Estimator on a 2017 GPU), not measured by rnnlab",
    "config": {"cell": "BasicLSTMCell", "units": 200, "batch": 200, "seq_len": 300, "input_dim": 16,
               "lengths": "fixed:20", "n_classes": 200, "parallel_iterations": 200, "optimizer": "AdamOptimizer"},
    "static": {"first_interval_steps_per_s": 2.93677, "first_interval_s": 34.051,  # steps 1 -> 101
               "steps_per_s": 20.3018, "steady_interval_s": 4.925},                # steps 101 -> 201
    "dynamic": {"first_interval_steps_per_s": 5.26866, "first_interval_s": 18.981,
                "steps_per_s": 5.4056, "steady_interval_s": 18.499},
    "conclusion": "for a batch of variable-length sequences, static_rnn is slower to build its graph but runs faster",
}


def for_params(config: Mapping[str, Any], names: Iterable[str], **extra: Any) -> dict[str, Any]:
    """A seed configuration restricted to the parameters an experiment has (its ``seed`` preset), plus ``extra``."""
    names = set(names)
    return {**{k: v for k, v in config.items() if k in names}, **extra}


def matches(params: Mapping[str, Any], config: Mapping[str, Any] | None) -> bool:
    """``params`` are at the seed ``config``; a parameter the experiment does not have counts as the seed's."""
    return config is not None and all(params.get(k, v) == v for k, v in config.items())
