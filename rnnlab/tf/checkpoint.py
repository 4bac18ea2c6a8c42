"""Reading a TF1 model's variables: from a checkpoint on disk (prefix, file or directory; a junk index refused before
TensorFlow is imported; never unpickles) or from a live graph's ``{name: array}`` (``normalize_variables``)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from rnnlab.core.errors import RnnlabError


def import_tf():
    """Import TensorFlow, setting TF_USE_LEGACY_KERAS=1 first when it is not imported yet (TF1 cells need it)."""
    if "tensorflow" not in sys.modules:
        os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    import tensorflow as tf

    return tf


def _checkpoint_prefix(path: str | os.PathLike) -> str:
    p = Path(path)
    if p.is_dir():
        tf = import_tf()
        latest = tf.train.latest_checkpoint(str(p))
        if latest:
            return latest
        idx = sorted(p.glob("*.index"))
        if len(idx) == 1:
            return str(idx[0])[: -len(".index")]
        raise RnnlabError(f"{path}: a directory without a TF checkpoint (no 'checkpoint' file, no single *.index)")
    s = str(p)
    if s.endswith(".index"):
        return s[: -len(".index")]
    m = re.match(r"^(.*)\.data-\d+-of-\d+$", s)
    if m:
        return m.group(1)
    if s.endswith(".meta"):
        return s[: -len(".meta")]
    return s


# A checkpoint's .index is a LevelDB-style table: it ends in a 48-byte footer whose last 8 bytes are this number
# (little-endian; tensorflow/core/lib/io/format.h kTableMagicNumber).
_TABLE_MAGIC = 0xDB4775248B80FB57
_FOOTER = 48


def _check_index(index: Path) -> None:
    """Refuse a file that cannot be a TensorFlow checkpoint index, naming it: pure Python, no TensorFlow."""
    try:
        size = index.stat().st_size
        tail = b""
        if size >= _FOOTER:
            with open(index, "rb") as f:
                f.seek(size - 8)
                tail = f.read(8)
    except OSError as e:
        raise RnnlabError(f"{index.name}: cannot read it ({e.strerror or e})") from None
    if size < _FOOTER or int.from_bytes(tail, "little") != _TABLE_MAGIC:
        raise RnnlabError(f"{index.name}: not a TensorFlow checkpoint index")


def locate_checkpoint(path: str | os.PathLike) -> tuple[str, str, str]:
    """(prefix, what TensorFlow should open, what to call it if it cannot), from ``path`` alone: a missing
    checkpoint or a junk index raises ``RnnlabError`` here, before TensorFlow is imported."""
    prefix = _checkpoint_prefix(path)
    if Path(prefix + ".index").exists():
        _check_index(Path(prefix + ".index"))  # before TensorFlow reads it (and before it is even imported)
        return prefix, prefix, "not a readable TF checkpoint"
    if not Path(prefix).exists() and not Path(path).exists():
        raise RnnlabError(f"{path}: no such checkpoint (expected {prefix}.index and {prefix}.data-*)")
    # maybe a V1 (single-file) checkpoint; otherwise not a checkpoint at all
    return prefix, str(path), f"not a TF checkpoint (no {Path(prefix).name}.index beside it)"


def read_tf1_checkpoint(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """All variables of a TF checkpoint as ``{name: array}`` (via ``tf.train.load_checkpoint``; never unpickles).

    ``path`` is a checkpoint prefix (``model.ckpt``), one of its files (``.index``, ``.data-*``, ``.meta``) or a
    directory holding a ``checkpoint`` file. Missing or unreadable -> ``RnnlabError``.
    """
    prefix, target, what = locate_checkpoint(path)
    tf = import_tf()
    try:
        reader = tf.train.load_checkpoint(target)
        shapes = reader.get_variable_to_shape_map()
        out = {}
        for name in sorted(shapes):
            value = reader.get_tensor(name)
            if isinstance(value, np.ndarray) or np.isscalar(value):
                out[name] = np.asarray(value)
    except IndexError as e:  # TensorFlow's "Read less bytes than requested": a data shard shorter than its index says
        if "read less" not in str(e).lower():
            raise
        shards = sorted(p.name for p in Path(prefix).parent.glob(Path(prefix).name + ".data-*")) or [f"{prefix}.data-*"]
        raise RnnlabError(f"{', '.join(shards)}: truncated (read less than the index says)") from None
    except (tf.errors.OpError, ValueError, RuntimeError) as e:  # DataLossError, NotFoundError...
        first = (str(e).splitlines() or [""])[0]
        raise RnnlabError(f"{path}: {what} ({type(e).__name__}: {first[:200]})") from None
    if not out:
        raise RnnlabError(f"{path}: the checkpoint holds no variables")
    return out


def normalize_variables(variables: Mapping[str, Any]) -> dict[str, np.ndarray]:
    if not isinstance(variables, Mapping) or not variables:
        raise RnnlabError("no variables given: expected a non-empty {name: array} dict (from a graph or a checkpoint)")
    out = {}
    for name, value in variables.items():
        out[re.sub(r":\d+$", "", str(name))] = np.asarray(value)
    return out
