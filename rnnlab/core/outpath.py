"""An output path a command writes (``export --out``, ``convert --out``, ``bench-stability --keep``), checked before
anything is measured or rendered: a symbolic link or a device (``/dev/stdout``, ``/dev/full``) is refused unless
``--force`` (a typo there overwrites something else, or writes nowhere); a path through a file says "Not a directory";
an unwritable folder says so. One ``RnnlabError`` line each."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip


def check(text: str | os.PathLike, *, flag: str = "--out", force: bool = False) -> Path:
    """``text`` as a Path a command may write to (a file, or a folder to write files into)."""
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
        folder = _existing_ancestor(path)
        if not folder.is_dir():
            raise RnnlabError(f"{flag} {shown}: {clip(str(folder), 60)} is a file: {os.strerror(errno.ENOTDIR)}")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise RnnlabError(f"{flag} {shown}: {os.strerror(errno.EACCES)} (cannot write in {clip(str(folder), 60)})")
    except OSError as e:  # a name too long, a loop of links...
        raise RnnlabError(f"{flag} {shown}: {e.strerror or e}") from None
    return path


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
