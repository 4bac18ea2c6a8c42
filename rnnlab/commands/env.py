"""``python -m rnnlab env [--json] [--device auto|cpu|gpu]``: versions, CPU, GPUs, the device a run would use, and
the device's measured matmul rate."""

from __future__ import annotations

import json
import sys
from typing import Callable

from rnnlab.commands._output import WIDTH, wrap, width_of
from rnnlab.engine import api
from rnnlab.core.store import Store


def setup_arguments(sub) -> None:
    p = sub.add_parser("env", help="show the environment a run would record")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "gpu"))
    p.set_defaults(func=main)


PROBING = ("measuring this machine once: TensorFlow's devices and a float32 matmul rate, in a worker (about "
           f"{api.PROBE_S:.0f} s; kept in the store for later runs)")


def run(*, device: str = "auto", store: Store | None = None, say: Callable[[str], None] = lambda s: None) -> dict:
    """The environment a run would record. When it has to be measured first (a worker imports TensorFlow and times
    a matmul: seconds), ``say`` hears :data:`PROBING` before, so the command is not silent meanwhile."""
    if store is None:  # read-only unless the probe has to run (and cache its result) first
        store = Store(readonly=True)
        if api.needs_probe(store, device):
            store = Store()
    if api.needs_probe(store, device):
        say(PROBING)
    return api.environment(device, store=store)


def main(args) -> int:
    width = width_of(args)
    env = run(device=args.device, say=lambda s: print("\n".join(wrap("rnnlab: " + s, width or WIDTH, " " * 8)),
                                                      file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps(env, indent=2))
        return 0
    rows = [("TensorFlow", env["tf"]), ("Keras", env["keras"]), ("tf-keras", env["tf_keras"]),
            ("Python", env["python"]), ("rnnlab", env["rnnlab"]), ("CPU", f"{env['cpu']} ({env['cores']} cores)"),
            ("GPU", env["gpu"] or "none that TensorFlow sees"), ("CUDA / cuDNN", f"{env['cuda']} / {env['cudnn']}"
                                                                   if env["gpu"] else "-"),
            ("runs use", f"{env['device']} ({env['device_name']})"),
            ("matmul rate", f"{env.get('matmul_gflops', '?')} GFLOP/s (float32 2048x2048 on {env['device']})")]
    w = max(len(k) for k, _ in rows)
    for k, v in rows:
        print("\n".join(wrap(f"{k.ljust(w)}  {v}", width, " " * (w + 2))))
    return 0
