"""An output path a command writes (``export --out``, ``convert --out``, ``bench-stability --keep``, ``calibrate
--keep``), checked before anything is measured or rendered: a symbolic link or a device (``/dev/stdout``,
``/dev/full``) is refused unless ``--force`` (a typo there overwrites something else, or writes nowhere); a path
through a file says "Not a directory"; a missing folder is named, never created unless the command's ``--mkdir``
says so; the file system's root is never written into; a folder that cannot take a file (``/proc``, a read-only
mount, no permission) is found by creating and removing an empty file in it, not after minutes of work. One
``RnnlabError`` line each."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip


def check(text: str | os.PathLike, *, flag: str = "--out", force: bool = False, mkdir: bool | None = None) -> Path:
    """``text`` as a Path a command may write to (a file, or a folder to write files into: a path ending in "/" is a
    folder, created if only it is missing). ``mkdir``: True creates missing folders above it (the command's
    ``--mkdir``), False refuses them naming the flag that would, None refuses them (the command has no such flag)."""
    raw = os.fspath(text)
    if not str(raw).strip():
        raise RnnlabError(f"{flag}: no path given")
    path = Path(raw).expanduser()
    shown = clip(raw)
    try:
        if path.is_symlink():
            if not force:
                raise RnnlabError(f"{flag} {shown} is a symbolic link (to {clip(os.readlink(path), 60)}); pass --force"
                                  " to write through it, or give another path")
        elif path.exists():
            mode = path.stat().st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)) and not force:
                raise RnnlabError(f"{flag} {shown} is a device or a pipe, not a file; pass --force to write to it")
        if str(raw).endswith(("/", os.sep)) and path.exists() and not path.is_dir():
            raise RnnlabError(f"{flag} {shown}: {os.strerror(errno.ENOTDIR)}")
        if path.resolve() == Path(path.resolve().anchor) and path.resolve().anchor:
            raise RnnlabError(f"{flag} {shown}: the file system's root; give a file or a folder of its own "
                              f"(e.g. {flag} results/)")
        folder = _existing_ancestor(path)
        if not folder.is_dir():
            raise RnnlabError(f"{flag} {shown}: {clip(str(folder), 60)} is a file: {os.strerror(errno.ENOTDIR)}")
        folder = _missing(path, folder, flag, shown, mkdir)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise RnnlabError(f"{flag} {shown}: {os.strerror(errno.EACCES)} (cannot write in {clip(str(folder), 60)})")
        if not is_special(path):
            _probe(folder, flag, shown)
    except OSError as e:  # a name too long, a loop of links...
        raise RnnlabError(f"{flag} {shown}: {e.strerror or e}") from None
    return path


def _missing(path: Path, folder: Path, flag: str, shown: str, mkdir: bool | None) -> Path:
    """The folder the write goes into: refuse folders that would have to be created above the one ``path`` names
    (``x.csv``'s folder, or ``out/`` itself), naming them; with ``mkdir`` they are made now."""
    parent = path.parent
    if path == folder or parent == folder:
        return folder
    if not mkdir:
        how = " or pass --mkdir to create it" if mkdir is False else ""
        raise RnnlabError(f"{flag} {shown}: no such folder {clip(str(parent), 120)}; create it first{how}")
    parent.mkdir(parents=True, exist_ok=True)
    return parent


def _probe(folder: Path, flag: str, shown: str) -> None:
    """Create and remove an empty file in ``folder``: ``os.access`` says yes for root in ``/proc`` or on a
    read-only mount, where the real write fails only after the work."""
    try:
        fd, name = tempfile.mkstemp(prefix=".rnnlab-probe-", dir=folder)
    except OSError as e:
        raise RnnlabError(f"{flag} {shown}: cannot create a file in {clip(str(folder), 60)} ({e.strerror or e})") from None
    os.close(fd)
    os.unlink(name)


def is_special(path: Path) -> bool:
    """A device, pipe or socket (written in place: never replaced by a temporary file's rename)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _existing_ancestor(path: Path) -> Path:
    p = path if path.is_dir() else path.parent
    while not p.exists() and p != p.parent:
        p = p.parent
    return p if p.exists() else Path(".")
