"""``python -m rnnlab env [--json] [--device auto|cpu|gpu]``: versions, CPU, GPUs, the device a run would use, and
the device's measured matmul rate."""

from __future__ import annotations

import json

from rnnlab.commands._output import wrap, width_of
from rnnlab.engine import api
from rnnlab.core.store import Store


def setup_arguments(sub) -> None:
    p = sub.add_parser("env", help="show the environment a run would record")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "gpu"))
    p.set_defaults(func=main)


def run(*, device: str = "auto", store: Store | None = None) -> dict:
    if store is None:  # read-only unless the probe has to run (and cache its result) first
        store = Store(readonly=True)
        if api.needs_probe(store, device):
            store = Store()
    return api.environment(device, store=store)


def main(args) -> int:
    env = run(device=args.device)
    if args.json:
        print(json.dumps(env, indent=2))
        return 0
    rows = [("TensorFlow", env["tf"]), ("Keras", env["keras"]), ("tf-keras", env["tf_keras"]),
            ("Python", env["python"]), ("rnnlab", env["rnnlab"]), ("CPU", f"{env['cpu']} ({env['cores']} cores)"),
            ("GPU", env["gpu"] or "none that TensorFlow sees"), ("CUDA / cuDNN", f"{env['cuda']} / {env['cudnn']}"
                                                                   if env["gpu"] else "-"),
            ("runs use", f"{env['device']} ({env['device_name']})"),
            ("matmul rate", f"{env.get('matmul_gflops', '?')} GFLOP/s (float32 2048x2048 on {env['device']})")]
    w, width = max(len(k) for k, _ in rows), width_of(args)
    for k, v in rows:
        print("\n".join(wrap(f"{k.ljust(w)}  {v}", width, " " * (w + 2))))
    return 0
