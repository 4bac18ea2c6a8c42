"""What the tests build their inputs from: environments, records, fake experiments, a report, a TF1 graph.

One home for them, so that a test module imports this module and never another test module. Nothing here is slow to
import: Altair, pandas and TensorFlow are loaded by the factory that needs them, when it is called.
"""

from __future__ import annotations

import hashlib
import os
import itertools
import re
import warnings

from rnnlab import experiments
from rnnlab.core import envinfo, stats
from rnnlab.core.params import param_set
from rnnlab.core.record import Record, make_key, utc_now
from rnnlab.experiments.base import Experiment

# -- environments --------------------------------------------------------------------------------------------------
# A run's env as the harness records it (no probe): the fake experiments' runs and the command-line tests.
ENV = {"tf": "2.21.0", "keras": "3", "tf_keras": "2", "python": "3.11", "rnnlab": "0", "device": "CPU",
       "device_name": "cpu", "cpu": "cpu", "cores": 2, "gpu": None, "cudnn": None, "cuda": None, "machine": "test",
       "matmul_gflops": 100.0}
# One test machine's env on stored records (the rounds views and judgements).
TEST_CPU_ENV = {"device": "CPU", "gpu": None, "tf": "2.21.0", "keras": "3.15.1", "tf_keras": "2.21.0",
                "python": "3.11.7", "cores": 2, "cpu": "Test CPU", "device_name": "Test CPU", "cudnn": None,
                "cuda": None, "machine": "Test CPU, 2 cores", "matmul_gflops": 100.0}
# One CPU name on two VMs, 60 and 307 GFLOP/s: two machines (judge.select.machine_key), as the bundled records hold.
XEON_ENV = {"tf": "2.21.0", "keras": "3.15.1", "tf_keras": "2.21.0", "python": "3.11.7", "device": "CPU",
            "device_name": "Intel(R) Xeon(R) Processor", "cpu": "Intel(R) Xeon(R) Processor", "cores": 2, "gpu": None,
            "cudnn": None, "cuda": None, "machine": "Intel(R) Xeon(R) Processor, 2 cores", "matmul_gflops": 60.0}
XEON_FAST_ENV = {**XEON_ENV, "matmul_gflops": 307.0}
# A box known by its machine, device, TensorFlow and matmul rate alone, and a bundled machine beside it: the
# variable-length experiments' views and verdicts.
BOX_ENV = {"machine": "test box", "device": "CPU", "tf": "2.99", "matmul_gflops": 100.0}
BUNDLED_XEON_ENV = {"machine": "Bundled Xeon, 2 cores", "device": "CPU", "tf": "2.98", "matmul_gflops": 300.0}
# Envs with no machine, cores or matmul rate (a record's machine then says its device_name): the claims' tests.
BARE_CPU_ENV = {"device": "CPU", "gpu": None, "tf": "2.21.0", "device_name": "test cpu"}
BARE_GPU_ENV = {"device": "GPU", "gpu": "Test GPU", "tf": "2.21.0", "device_name": "Test GPU"}


def this_env(gflops: float | None = 100.0) -> dict:
    """The env a run here records, without a probe (no GPU on the test machines: see envinfo.gpu_hint); with
    ``gflops=None`` as ``select.known_env`` rebuilds it for a record without a matmul rate."""
    return envinfo.run_env(envinfo.static_env(), None if gflops is None else {"matmul_gflops": gflops}, "CPU")


# -- fake experiments: workers without TensorFlow (tests/workers.py) ------------------------------------------------
FAKE = Experiment(name="fake", version=1, title="fake", summary="harness test",
                  params=param_set(["units", "device", "timeout_s"], defaults={"timeout_s": 60}),
                  variants=("ok", "ok_off", "crash", "exit", "sleep", "raise", "unsupported", "hog"),
                  worker="tests.workers:run_variant", reference="ok", preload=())  # no TensorFlow: fast workers
FAKE_R = Experiment(name="fake_r", version=1, title="fake", summary="rounds test",
                    params=param_set(["units", "device", "rounds", "timeout_s"], defaults={"timeout_s": 60}),
                    variants=("ok", "a", "b", "ok_off"), worker="tests.workers:run_variant", reference="ok",
                    preload=())
FAKE_I = Experiment(name="fake_i", version=1, title="fake", summary="interleave test",
                    params=param_set(["units", "device", "rounds", "protocol", "budget_s", "live", "timeout_s"],
                                     defaults={"timeout_s": 60}),
                    variants=("ok", "slow", "same", "bad"), worker="tests.workers:run_series", reference="ok",
                    preload=())


def use_fakes(monkeypatch, *fakes: Experiment, quiet: bool = False) -> None:
    """Register ``fakes`` beside the real experiments for one test; ``quiet``: the machine's load average reads low,
    so no run warns that it is busy."""
    experiments._load_all()
    for e in fakes:
        monkeypatch.setitem(experiments._cache, e.name, e)
    if quiet:

        monkeypatch.setattr(os, "getloadavg", lambda: (0.25, 0.2, 0.1))

# -- records -------------------------------------------------------------------------------------------------------
UNROLL = experiments.get("unroll")
SEED = {k: v for k, v in UNROLL.presets["seed"].items() if k != "variants"}  # the seed configuration's parameters
_n = itertools.count()


def agreed(metrics: dict) -> tuple:
    """``metrics`` as two rounds that agree: a ratio of them has an interval (of no width), and a call can be made
    from it; one round of a figure without quartiles has none (``stats.ratio_interval``: "none"), and no call is.
    Figures given with their quartiles stay one round, as a one-round run writes them."""
    if not metrics or any(k.endswith(("_p25", "_p75")) for k in metrics):
        return ()
    return dict(metrics), dict(metrics)


def record(experiment: str, variant: str, params: dict | None = None, rounds=(), *, env: dict = TEST_CPU_ENV,
           day: str = "2025-01-01", details: dict | None = None, source: str = "local", error: str | None = None,
           key: str | None = None, created_at: str | None = None, two: bool = True, **metrics) -> Record:
    """A stored record of ``rounds`` (each a metrics dict; its metrics their medians, as the engine writes them), or of
    ``metrics`` as two rounds that agree (:func:`agreed`; ``two=False``: one round; none with an ``error``); a fresh
    key and a later created_at second on ``day`` per call, unless ``key`` / ``created_at`` are given."""
    i = next(_n)
    rounds = tuple(dict(r) for r in rounds) or (agreed(metrics) if two and not error else ())
    params = dict(params or {})
    if len(rounds) > params.get("rounds", 1):  # as a run writes it: no more rounds than it asked for
        params["rounds"] = len(rounds)
    when = f"{day}T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
    return Record(key=key or hashlib.sha256(f"factory{i}".encode()).hexdigest(), experiment=experiment,
                  variant=variant, params=params,
                  metrics={} if error else stats.combine_rounds(list(rounds)) if rounds else dict(metrics),
                  env=dict(env), created_at=created_at or when, details=dict(details or {}), source=source,
                  rounds=rounds, error=error)


def stored(experiment: str, variant: str, params: dict, *, metrics: dict | None = None, details: dict | None = None,
           error: str | None = None, env: dict | None = None, two: bool = True) -> Record:
    """A record as ``api.run`` stores it on this machine: ``params`` as given (filled and with its device), this
    machine's env (:func:`this_env` unless given) and the key a run of it would have, so the pages find it."""
    from rnnlab.engine import api

    env = dict(env or this_env())
    version = experiments.get(experiment).version
    return Record(key=make_key(api.spec_of(experiment, version, variant, params), envinfo.fingerprint(env)),
                  experiment=experiment, variant=variant, params=dict(params), metrics={} if error else
                  dict(metrics or {}), env=env, created_at=utc_now(), error=error, details=dict(details or {}),
                  rounds=agreed(dict(metrics or {})) if two and not error and int(params.get("rounds", 1)) >= 2 else ())


def run_here(module, variant: str, params: dict, *, env: dict | None = None) -> Record:
    """``module.run_variant`` (an experiment's worker function) run in this process, stored as ``api.run`` would
    (``as_records``). TensorFlow: for slow tests only."""
    from rnnlab.worker.context import WorkerContext

    res = module.run_variant(dict(params), variant, WorkerContext())
    return as_records(module.EXPERIMENT.name, params, {variant: res}, env=env)[0]


def quick_values(experiment: str) -> dict:
    """The experiment's quick preset as parameter values (without its variants)."""
    return {k: v for k, v in experiments.get(experiment).presets["quick"].items() if k != "variants"}


# The variable-length experiments at their smallest sizes: varlen's quick preset; padding and seed003 smaller still
# (their static graphs dominate the time)
VARLEN_TINY = {"varlen": quick_values("varlen"),
               "padding": {"cell": "lstm", "units": 8, "batch": 8, "seq_len": 10, "input_dim": 4,
                           "lengths": "uniform:2-10", "n_sequences": 24, "buckets": 2, "repeats": 1, "warmup": 0},
               "seed003": {"units": 8, "batch": 8, "seq_len": 8, "input_dim": 4, "lengths": "fixed:3",
                           "parallel_iterations": 8, "interval": 2, "steps": 3, "n_data": 16}}


def varlen_runs(tmp_path_factory) -> dict[str, tuple[dict, dict]]:
    """experiment -> (params, variant -> ``run_variant``'s result with the phases it reported, ``"phases"``) for
    every variant of varlen, padding and seed003 at ``VARLEN_TINY``, run in this process once for the whole test
    run: the experiments' tests and their page's share them. TensorFlow: for slow tests only."""
    import importlib

    from rnnlab.worker.context import WorkerContext

    def make() -> dict:
        out = {}
        for name, sizes in VARLEN_TINY.items():
            mod = importlib.import_module(f"rnnlab.experiments.{name}")
            params = mod.EXPERIMENT.params.fill(sizes)
            params["device"] = "cpu"
            res = {}
            for v in mod.EXPERIMENT.variants:
                ctx = WorkerContext()
                res[v] = {**mod.run_variant(dict(params), v, ctx), "phases": list(ctx.phases)}
            out[name] = (params, res)
        return out
    return once_per_run(tmp_path_factory, "varlen-runs", make)


def as_records(experiment: str, params: dict, results: dict, *, env: dict | None = None) -> list[Record]:
    """``run_variant`` results (variant -> result) stored as ``api.run`` would (details through JSON)."""
    import json

    return [stored(experiment, v, params, metrics=r["metrics"], details=json.loads(json.dumps(r["details"])), env=env)
            for v, r in results.items()]


def make_record(variant: str, params: dict, *, error: str | None = None, scale: float = 1.0) -> Record:
    """An unroll record of this machine (its real env and key), metrics growing with the variant's place."""
    from rnnlab.tf.variants import BASE_VARIANTS

    params = UNROLL.params.fill(params)
    params["device"] = "cpu"
    i = list(BASE_VARIANTS).index(variant.replace("+xla", "")) + 1 if variant.replace("+xla", "") in BASE_VARIANTS \
        else 1
    metrics = {
        "build_s": 0.1 * i * scale, "graph_nodes": 100.0 * i, "first_call_s": 0.05 * i, "fwd_ms": 1.0 * i * scale,
        "fwd_ms_p25": 0.9 * i * scale, "fwd_ms_p75": 1.2 * i * scale, "train_ms": 2.0 * i * scale,
        "train_ms_p25": 1.8 * i * scale, "train_ms_p75": 2.4 * i * scale, "peak_mem_mb": 50.0 + i,
        "max_abs_diff": 0.0, "gflops": 10.0 / i, "roofline_frac": 0.1 / i}
    return stored("unroll", variant, params, metrics=metrics, error=error)


# -- a report as the exporters get it ------------------------------------------------------------------------------
PROV = {"machine": "bench-box-7", "device": "CPU (2 cores)", "tf": "2.21.0", "keras": "3.15.1", "rnnlab": "0.1.0",
        "commit": "abc1234def", "created_at": "2025-03-01T12:00:00Z"}


def _ms(x):
    return None if x is None else f"{x:,.2f}"


def make_report():
    """A short table, a long one (40 rows, its own provenance) and two Altair charts."""
    import altair as alt
    import pandas as pd

    from rnnlab.core.views import ChartView, Column, Report, TableView

    variants = ["tf1_static", "tf1_dynamic", "tf2_unrolled", "tf2_while", "keras", "keras_unroll"]
    fwd = [12.3456, 14.5, 1234.5, 9.87654, None, 0.001234]
    ratio = [1.0, 1.17, 100.0, 0.8, None, 0.0001]
    short = TableView(
        title="Unrolling: rnn, 3x128, batch 32, 100 steps",
        caption="cell=rnn units=128 layers=3 batch=32 seq_len=100 on CPU; 50% of runs & #1 reference_variant",
        columns=("variant", "forward (ms)", "vs static (×)", "note"),
        rows=tuple((v, _ms(f) or "—", f"{r:.2f}×" if r is not None else "—", "OOM" if f is None else "ok_100%")
                   for v, f, r in zip(variants, fwd, ratio)),
        raw=tuple((v, f, r, "OOM" if f is None else "ok_100%") for v, f, r in zip(variants, fwd, ratio)),
    )
    long = TableView(
        title="Sequence-length sweep: lstm, 1x256",
        caption="fwd and train medians per batch; quartiles in brackets; seq_len 5..200",
        # no raw values: the columns of figures say so
        columns=(Column("seq_len", "number"), "variant",
                 *(Column(c, "number") for c in ("build (s)", "forward (ms)", "train (ms)", "peak memory (MB)"))),
        rows=tuple((str(5 * (i + 1)), ("tf1_static", "tf2_while")[i % 2], f"{0.1 * i:.3f}", f"{1.5 * i + 0.25:,.2f}",
                    f"{30.5 * i:,.1f}", f"{100 + i}") for i in range(40)),
        provenance={"machine": "baseline-gpu-1", "device": "GPU (A100)"},
    )
    df = pd.DataFrame({"seq_len": [25, 50, 100] * 2, "fwd_ms": [1.0, 2.1, 4.3, 1.4, 2.2, 3.1],
                       "variant": ["tf1_static"] * 3 + ["tf1_dynamic"] * 3})
    line = alt.Chart(df).mark_line(point=True).encode(x="seq_len:Q", y="fwd_ms:Q", color="variant:N")
    bar = alt.Chart(df).mark_bar().encode(x="variant:N", y="mean(fwd_ms):Q")
    charts = (ChartView("Forward time vs sequence length", "rnn, 3x128, batch 32, CPU", line.to_dict()),
              ChartView("Mean forward time per variant", "rnn, 3x128, batch 32, CPU", bar.to_dict()))
    return Report("rnnlab: static vs dynamic unrolling",
                  "Forward and training time of static and dynamic unrolling, bench-box-7, TF 2.21.0, 2025-03-01",
                  (short, long), charts, PROV)


def md_table(text: str, title: str) -> list[list[str]]:
    """The rows (header first) of the Markdown pipe table under heading ``title``, cells unescaped."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("#") and line.lstrip("#").strip() == title)
    rows = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if line.startswith("| "):
            cells = re.split(r"(?<!\\)\|", line.strip()[1:-1])
            rows.append([c.strip().replace("\\|", "|") for c in cells])
    return [rows[0]] + rows[2:]  # without the alignment row


# -- a TF1 graph and checkpoint (TensorFlow loaded on first use) ---------------------------------------------------
BATCH, T, IN, UNITS = 4, 6, 3, 5
LENGTHS = [6, 3, 1, 5]


class _OnFirstUse:
    """A module loaded on first attribute access: importing this file (and collecting a test that imports it) loads
    no TensorFlow."""

    def __init__(self, load):
        self._load, self._module = load, None

    def __getattr__(self, name):
        if name.startswith("_"):  # pytest looks for _mock_name and __wrapped__ at collection: a look is no first use
            raise AttributeError(name)
        if self._module is None:
            self._module = self._load()
        return getattr(self._module, name)


def _load_tf():
    from rnnlab.tf import convert as cv

    return cv._tf()


def _load_tf1_cells():
    from rnnlab.tf import convert as cv

    return cv.tf1_cells_module()


tf = _OnFirstUse(_load_tf)
rc = _OnFirstUse(_load_tf1_cells)  # TF1's rnn_cell module: rc.BasicLSTMCell(UNITS), ...


def build_tf1(make_cell, layers, *, seed=0, save_to=None, lengths=LENGTHS, input_dim=IN):
    """A TF1 dynamic_rnn over ``layers`` cells (MultiRNNCell when > 1) with random weights (biases too).

    Returns (variables {graph name: array}, x, {"full": (outputs, state), "sequence_length": (outputs, state)}).
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, T, input_dim)).astype(np.float32)
    g = tf.Graph()
    with g.as_default(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cells = [make_cell() for _ in range(layers)]
        cell = rc.MultiRNNCell(cells) if layers > 1 else cells[0]
        xp = tf.compat.v1.placeholder(tf.float32, [None, None, input_dim])
        sl = tf.compat.v1.placeholder_with_default(np.full([BATCH], T, np.int32), [None])
        out, state = tf.compat.v1.nn.dynamic_rnn(cell, xp, sequence_length=sl, dtype=tf.float32)
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for v in tf.compat.v1.global_variables():
                v.load(rng.uniform(-0.6, 0.6, v.shape).astype(np.float32), sess)
            res = {"full": sess.run([out, state], {xp: x}),
                   "sequence_length": sess.run([out, state], {xp: x, sl: np.asarray(lengths, np.int32)})}
            variables = {v.name: sess.run(v) for v in tf.compat.v1.global_variables()}
            if save_to is not None:
                tf.compat.v1.train.Saver().save(sess, str(save_to))
    return variables, x, res


def once_per_run(tmp_path_factory, name: str, make):
    """``make()``'s value made once for the whole test run, whichever test process asks first (pytest-xdist starts
    several): the others wait on a lock and read its pickle (a module fixture was made once per process, and again
    whenever a process tore it down between its tests)."""
    import fcntl
    import pickle

    root = tmp_path_factory.getbasetemp()
    root = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root  # every test process's common folder
    path = root / f"once-{name}.pickle"
    with open(root / f"once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            return pickle.loads(path.read_bytes())
        value = make()
        path.write_bytes(pickle.dumps(value))
        return value
