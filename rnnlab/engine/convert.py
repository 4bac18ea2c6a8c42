"""Converting an uploaded TF1 checkpoint to a Keras 3 file, in another process (the Migrate page's Convert).

:func:`check_upload` refuses, before anything is written, whatever is not one consistent TF1 checkpoint;
:func:`convert_upload` writes the files to a temporary directory and runs ``python -m rnnlab convert`` on them
(:func:`convert_argv`) under the run's limits (``runner.run_limited``: TensorFlow starts there, never in the app),
and reads its answer back (:func:`parse_convert_output`). ``rnnlab.present.migrate`` names all of it for the page.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from typing import Sequence

from rnnlab.core.errors import RnnlabError
from rnnlab.engine import runner

MAX_UPLOAD_MB = 50
_TABLE_MAGIC = bytes.fromhex("57fb808b247547db")  # the last 8 bytes of every TF checkpoint .index (an SSTable)
_DATA = re.compile(r"^(?P<prefix>.+)\.data-(?P<i>\d{5})-of-(?P<n>\d{5})$")
_SAFE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
_LAYOUT = "a TF1 checkpoint is PREFIX.index plus PREFIX.data-00000-of-00001 (or several shards), and optionally " \
          "the `checkpoint` file"


@dataclass(frozen=True)
class UploadCheck:
    prefix: str  # e.g. "model.ckpt-1000"
    write: tuple[str, ...]  # the files to put in the temporary directory (the .index and the .data shards)
    ignored: tuple[str, ...]  # accepted but not needed (`checkpoint`, PREFIX.meta)
    total_bytes: int


def _names_ok(files: Sequence[tuple[str, bytes]], max_mb: float) -> tuple[list[str], int]:
    """Every file's name and the total size checked: (names, total bytes)."""
    if not files:
        raise RnnlabError(f"no files: {_LAYOUT}")
    names = [n for n, _ in files]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise RnnlabError(f"{', '.join(dups)} uploaded twice")
    total = sum(len(b) for _, b in files)
    if total > max_mb * 2**20:
        raise RnnlabError(f"{total / 2**20:.1f} MB in total; the limit here is {max_mb:g} MB (convert larger "
                          "checkpoints with `python -m rnnlab convert PREFIX --out model.keras`)")
    for n in names:
        if not _SAFE.match(n) or ".." in n:
            raise RnnlabError(f"{n!r}: not a checkpoint file name (letters, digits, '.', '_' and '-' only)")
    return names, total


def _index_name(names: Sequence[str]) -> str:
    index = [n for n in names if n.endswith(".index")]
    if not index:
        raise RnnlabError(f"no .index file among {', '.join(names)}: {_LAYOUT}")
    if len(index) > 1:
        raise RnnlabError(f"several .index files ({', '.join(index)}): upload one checkpoint at a time")
    return index[0]


def _shards(names: Sequence[str], index: str, prefix: str) -> tuple[dict[int, int], list[str]]:
    """The .data shards named ({shard: of how many}) and the files accepted but not needed."""
    shards: dict[int, int] = {}
    ignored = []
    for n in names:
        if n == index:
            continue
        if n in ("checkpoint", prefix + ".meta"):
            ignored.append(n)
            continue
        m = _DATA.match(n)
        if m is None:
            raise RnnlabError(f"{n}: not a file of checkpoint {prefix!r} ({_LAYOUT})")
        if m["prefix"] != prefix:
            raise RnnlabError(f"{n} belongs to checkpoint {m['prefix']!r}, the .index to {prefix!r}: upload the "
                              "files of one checkpoint")
        shards[int(m["i"])] = int(m["n"])
    return shards, ignored


def _shard_count(shards: dict[int, int], index: str, prefix: str, index_bytes: bytes) -> int:
    """The number of shards, every one of them present."""
    if not shards:
        if index_bytes and not index_bytes.endswith(_TABLE_MAGIC):  # a lone junk file: say that first
            raise RnnlabError(f"{index} is not a TensorFlow checkpoint index (it does not end with the table "
                              f"magic number), and {prefix}.data-00000-of-00001 is missing too: upload the .index "
                              "and .data files written by tf.compat.v1.train.Saver")
        raise RnnlabError(f"{prefix}.data-00000-of-00001 is missing: the .index only lists the variables, their "
                          "values are in the .data file(s)")
    counts = sorted(set(shards.values()))
    if len(counts) > 1:
        raise RnnlabError(f"the .data files of {prefix!r} disagree on the number of shards "
                          f"({', '.join(map(str, counts))})")
    n = counts[0]
    missing = [i for i in range(n) if i not in shards]
    extra = [i for i in shards if i >= n]
    if n < 1 or extra:
        raise RnnlabError(f"{prefix}.data-*: shard numbers {', '.join(map(str, sorted(shards)))} do not fit "
                          f"'-of-{n:05d}'")
    if missing:
        raise RnnlabError("missing shard(s): " + ", ".join(f"{prefix}.data-{i:05d}-of-{n:05d}" for i in missing))
    return n


def check_upload(files: Sequence[tuple[str, bytes]], *, max_mb: float = MAX_UPLOAD_MB) -> UploadCheck:
    """Refuse, with a message that says what to upload, anything that is not one consistent TF1 checkpoint.

    ``files``: (name, content) pairs as uploaded. Checks names (one prefix; every shard of one count; nothing
    else), the total size, empty files, and the .index file's table magic number. The content of the weights is
    read by the converter (in its own process), which refuses what it cannot read.
    """
    names, total = _names_ok(files, max_mb)
    index = _index_name(names)
    prefix = index[: -len(".index")]
    shards, ignored = _shards(names, index, prefix)
    content = dict(files)
    n = _shard_count(shards, index, prefix, content[index])
    for name in [index] + sorted(k for k in content if _DATA.match(k)):
        if not content[name]:
            raise RnnlabError(f"{name} is empty")
    if not content[index].endswith(_TABLE_MAGIC):
        raise RnnlabError(f"{index} is not a TensorFlow checkpoint index (it does not end with the table magic "
                          "number); upload the .index file written by tf.compat.v1.train.Saver")
    write = (index,) + tuple(f"{prefix}.data-{i:05d}-of-{n:05d}" for i in range(n))
    return UploadCheck(prefix=prefix, write=write, ignored=tuple(ignored), total_bytes=total)


def convert_argv(python: str, prefix_path: str, out_path: str, *, cell: str | None = None,
                 forget_bias: float = 1.0, scope: str | None = None) -> list[str]:
    """``python -m rnnlab convert PREFIX --out OUT --json`` with the user's options."""
    argv = [python, "-m", "rnnlab", "convert", prefix_path, "--out", out_path, "--json",
            "--forget-bias", repr(float(forget_bias))]
    if cell:
        argv += ["--cell", cell]
    if scope:
        argv += ["--scope", scope]
    return argv


def parse_convert_output(returncode: int, stdout: str, stderr: str, *, hide: str = "") -> dict:
    """The command's JSON answer (exit 0: verified, 1: converted but not within ATOL); its one-line error as an
    ``RnnlabError`` (exit 2); anything else (a crash) as an ``RnnlabError`` with the end of stderr. ``hide``: a
    temporary directory to strip from messages."""
    def clean(text: str) -> str:
        return text.replace(hide.rstrip("/") + "/", "").replace(hide, "") if hide else text

    if returncode == 2:
        line = next((ln for ln in reversed(stderr.splitlines()) if ln.startswith("rnnlab: error:")), None)
        if line:
            raise RnnlabError(clean(line[len("rnnlab: error:"):].strip()))
    if returncode in (0, 1):
        text = stdout.strip()
        start = text.find("{\n") if not text.startswith("{") else 0
        try:
            res = json.loads(text[start:]) if start >= 0 else None
        except json.JSONDecodeError:
            res = None
        if isinstance(res, dict) and "verification" in res:
            return res
    raise RnnlabError(clean(f"the converter stopped with exit code {returncode}: "
                            f"{crash_line(stderr)[-300:] or 'no message'}"))


CONVERT_TIMEOUT_S = 240
_EXC_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b(: .*)?$")


def crash_line(stderr: str) -> str:
    """One line a reader can use from a crashed process's stderr: its exception (``ValueError: ...``), else its
    last line that is no part of a traceback; never the traceback itself."""
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    exc = next((ln for ln in reversed(lines) if _EXC_LINE.match(ln)), None)
    if exc:
        return exc
    plain = [ln for ln in lines if not ln.startswith(("Traceback ", "File \"", "^", "~")) and not ln.startswith("  ")]
    return plain[-1] if plain else ""


def convert_upload(files: Sequence[tuple[str, bytes]], *, python: str, root: str, cell: str | None = None,
                   forget_bias: float = 1.0, scope: str | None = None, timeout_s: float = CONVERT_TIMEOUT_S,
                   mem_limit_mb: float | None = None) -> dict:
    """Check uploaded files (:func:`check_upload`), write them to a temporary directory and convert them with
    ``python -m rnnlab convert`` in a subprocess (TensorFlow starts there, never in the app). Returns ``{"res": the
    command's JSON, "keras": the file's bytes, "name", "ignored"}``; RnnlabError for anything the user can fix, and
    for a conversion over ``timeout_s`` or ``mem_limit_mb`` (its RSS, children included; the process is killed)."""
    chk = check_upload(files)
    content = dict(files)
    with tempfile.TemporaryDirectory(prefix="rnnlab-upload-") as tmp:
        for name in chk.write:
            with open(os.path.join(tmp, name), "wb") as fh:
                fh.write(content[name])
        out = os.path.join(tmp, "model.keras")
        argv = convert_argv(python, os.path.join(tmp, chk.prefix), out, cell=cell, forget_bias=forget_bias,
                            scope=scope)
        environ = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2",
                   "PYTHONPATH": os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)}
        returncode, stdout, stderr = runner.run_limited(argv, cwd=root, env=environ, timeout_s=timeout_s,
                                                 mem_limit_mb=mem_limit_mb, what="the conversion")
        res = parse_convert_output(returncode, stdout, stderr, hide=tmp)
        with open(out, "rb") as fh:
            data = fh.read()
    return {"res": res, "keras": data, "name": f"{chk.prefix}.keras", "ignored": chk.ignored}
