"""Exporters: turn a ``Report`` of already-formatted tables and Altair charts into files.

    export(report, "pptx", Path("out/report.pptx"))   -> [Path("out/report.pptx")]
    render_bytes(report, "csv")                        -> ("<title>-csv.zip", b"PK...", "application/zip")

Formats (``EXPORTERS``): each module here defines one ``Exporter`` subclass, which registers itself; ``pptx``, ``md``,
``tex``, ``json`` write one file per report; ``csv`` one file per table; ``png`` and ``svg`` one file per chart. Where ``out`` points:

- one-file formats: ``out`` is the file; the format's suffix is appended when ``out`` does not end with it
  (``--out report`` -> ``report.pptx``). An existing directory (or a path ending in ``/``) gets
  ``<slug of the report title><suffix>`` inside it.
- per-table / per-chart formats: an existing directory (or a path ending in ``/``, created if needed) gets one
  ``<slug of the table/chart title><suffix>`` per item; any other ``out`` is a file stem: ``out/results.csv`` or
  ``out/results`` -> ``out/results-<slug>.csv`` for each table, or exactly ``out/results.csv`` when there is only one.

Every file carries provenance (machine, device, versions, commit, measured and exported UTC times, rnnlab version):
``export`` and ``render_bytes`` stamp ``exported_at`` (from the injectable ``now``) and the rnnlab version into the
report's provenance before rendering. Parent directories are created; anything that cannot be written raises
``RnnlabError`` (one line), as does an unknown format or a report without what the format needs.
"""

from __future__ import annotations

import errno
import importlib
import io
import os
import pkgutil
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Callable

from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip
from rnnlab.core.views import Report
from rnnlab.exporters.base import REGISTERED, Artifact, Exporter, provenance_lines, slug, stamp

__all__ = ["EXPORTERS", "Exporter", "Artifact", "export", "render_bytes", "exporter", "formats", "buttons"]

for _module in pkgutil.iter_modules(__path__):  # each module's Exporter subclass registers itself
    importlib.import_module(f"{__name__}.{_module.name}")

EXPORTERS: dict[str, Exporter] = dict(sorted(REGISTERED.items(), key=lambda item: (item[1].order, item[0])))

Clock = Callable[[], datetime] | datetime | None


def formats() -> dict[str, str]:
    """Format name -> one-line description, for ``--help`` and the app's select box."""
    return {name: e.description for name, e in EXPORTERS.items()}


def buttons() -> dict[str, str]:
    """Format name -> its download button's label, for every format the app offers for a page's view."""
    return {name: e.button for name, e in EXPORTERS.items() if e.button}


def exporter(fmt: str) -> Exporter:
    key = str(fmt).strip().lower().lstrip(".")
    try:
        return EXPORTERS[key]
    except KeyError:
        raise RnnlabError(f"unknown export format {fmt!r}: choose one of {', '.join(sorted(EXPORTERS))}") from None


def export(report: Report, fmt: str, out: Path | str, *, now: Clock = None) -> list[Path]:
    """Render ``report`` as ``fmt`` and write it at ``out`` (see the module docstring); returns the files written."""
    ex = exporter(fmt)
    artifacts = ex.render(stamp(report, now))
    paths = _targets(ex, artifacts, out)
    for path, artifact in zip(paths, artifacts):
        _write(path, artifact.data)
    return paths


def render_bytes(report: Report, fmt: str, *, now: Clock = None) -> tuple[str, bytes, str]:
    """``(filename, data, mime)`` for a download button; several files (csv, png, svg) come as one zip."""
    ex = exporter(fmt)
    report = stamp(report, now)
    artifacts = ex.render(report)
    if len(artifacts) == 1:
        return artifacts[0].name, artifacts[0].data, ex.mime
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.comment = "\n".join(provenance_lines(report.provenance)).encode("utf-8")[:65535]
        for a in artifacts:
            zf.writestr(a.name, a.data)
    return f"{slug(report.title, 'report')}-{ex.name}.zip", buf.getvalue(), "application/zip"


def _targets(ex: Exporter, artifacts: list[Artifact], out: Path | str) -> list[Path]:
    text = os.fspath(out)
    if not text.strip():
        raise RnnlabError("no output path given: pass --out FILE (or a directory)")
    path = Path(text).expanduser()
    try:
        is_dir = path.is_dir()
    except OSError as e:  # a name too long for the file system, a path through a file...
        raise RnnlabError(f"cannot write {clip(text)}: {e.strerror or e}") from None
    if is_dir or text.endswith(("/", os.sep)):
        return [path / a.name for a in artifacts]
    from rnnlab.core import outpath

    if outpath.is_special(path):  # a device or pipe (--force): the one file, written in place
        if len(artifacts) != 1:
            raise RnnlabError(f"{clip(text)} is a device, and {ex.name} writes {len(artifacts)} files: give a folder")
        return [path]
    if ex.per is None or len(artifacts) == 1:
        return [path if path.name.lower().endswith(ex.suffix) else path.with_name(path.name + ex.suffix)]
    stem = path.name[: -len(ex.suffix)] if path.name.lower().endswith(ex.suffix) else path.name
    return [path.with_name(f"{stem}-{a.name}") for a in artifacts]


def _write(path: Path, data: bytes) -> None:
    """Write through a temporary file in the same directory, so a failed export never leaves half a file (a
    device or pipe, allowed with ``--force``: in place; a symbolic link: its target)."""
    from rnnlab.core import outpath

    if outpath.is_special(path):
        try:
            with open(path, "wb") as f:
                f.write(data)
            return
        except OSError as e:
            raise RnnlabError(f"cannot write {clip(str(path))}: {_strerror(e)}") from None
    if path.is_symlink():
        path = path.resolve()
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as e:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        raise RnnlabError(f"cannot write {clip(str(path))}: {_strerror(e)}") from e


def _strerror(e: OSError) -> str:
    why = e.strerror or str(e)
    return f"the disk is full ({why})" if e.errno == errno.ENOSPC else why
