"""The environment probe, run inside a worker: what TensorFlow sees, and the device's matmul rate."""

from __future__ import annotations

from rnnlab.tf import matmul


def matmul_gflops(device: str, n: int = 2048, repeats: int = 10) -> float:
    """Achieved float32 GFLOP/s of an n x n matmul on ``device`` ("CPU"/"GPU"; ``rnnlab.tf.matmul``)."""
    return matmul.matmul_gflops(f"/{device}:0", n=n, repeats=repeats)


def probe(device: str) -> dict:
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    info = {"gpus": [], "cuda": None, "cudnn": None}
    build = tf.sysconfig.get_build_info()
    if gpus:
        info["cuda"] = build.get("cuda_version")
        info["cudnn"] = build.get("cudnn_version")
        for g in gpus:
            try:
                name = tf.config.experimental.get_device_details(g).get("device_name", g.name)
            except Exception:  # older drivers may not report details; the device name still identifies it
                name = g.name
            info["gpus"].append(name)
    info["matmul_gflops"] = matmul_gflops(device)
    info["matmul_n"] = 2048
    return info
