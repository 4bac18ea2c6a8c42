"""Running a program held as source text and capturing what it raised: the error verbatim, the line of the
program that raised it, and its informative line (``error_summary``). Imports no TensorFlow."""

from __future__ import annotations

import linecache
import re
import traceback

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_MAX_ERROR = 6000


def _clean_error(exc: BaseException) -> str:
    text = _ANSI.sub("", str(exc))
    if len(text) > _MAX_ERROR:
        text = text[:_MAX_ERROR] + f"... [{len(text) - _MAX_ERROR} more characters]"
    return text


def run_source(src: str, ns: dict, filename: str) -> dict | None:
    """Exec ``src`` in ``ns`` under ``filename``; None if it ran, else the error, verbatim, and the line that raised.

    The line is the last traceback frame in ``filename`` (the user's line, not TensorFlow's internals).
    """
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)  # tracebacks can show the source
    code = compile(src, filename, "exec")
    try:
        exec(code, ns)
    except Exception as exc:  # noqa: BLE001 - capturing what TensorFlow raises is the point
        lineno = end = None
        for frame in traceback.extract_tb(exc.__traceback__):
            if frame.filename == filename:
                lineno = frame.lineno
                end = getattr(frame, "end_lineno", None) or lineno
        lines = src.splitlines()
        # the whole statement when it spans lines (Python 3.11 tracebacks know where it ends)
        line = "\n".join(lines[i].rstrip() for i in range(lineno - 1, max(end, lineno))).strip() if lineno else None
        stage = None
        if line is not None:
            stage = "run" if (".run(" in line or "model(" in line) else "build"
        text = _clean_error(exc)
        return {"error_type": type(exc).__name__, "error": text, "error_summary": error_summary(text),
                "error_line": line, "error_lineno": lineno, "stage": stage}
    return None


def no_error() -> dict:
    return {"error_type": None, "error": None, "error_summary": None, "error_line": None, "error_lineno": None,
            "stage": None}


_HEADER = re.compile(r"^(Graph execution error:|Exception encountered when calling|Detected at node|File \"|Node:|"
                     r"\[\[|Original stack trace|Arguments received by|Encountered error:|\"\"\"|•)")


def error_summary(text: str | None) -> str:
    """The informative line of a TensorFlow error (one line, at most 240 characters).

    Skips generic headers ("Graph execution error:", "Exception encountered when calling ...") and op-context lines;
    prefers an "assertion failed" line; drops a leading ``{{function_node ...}}`` tag.
    """
    if not text:
        return ""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    pick = next((ln for ln in lines if "assertion failed" in ln), None)
    if pick is None:
        pick = next((ln for ln in lines if not _HEADER.match(ln)), lines[0] if lines else "")
    pick = re.sub(r"^\{\{function_node [^}]*\}\}\s*", "", pick)
    pick = re.sub(r"\s*\[Op:\w+\].*$", "", pick)
    return pick[:237] + "..." if len(pick) > 240 else pick


def err_fields(err: dict | None) -> dict:
    """A captured error (or None) as the fields a pitfall's details carry, with ``builds``."""
    e = err or no_error()
    return {"builds": err is None, "error_type": e["error_type"], "error": e["error"],
            "error_summary": e["error_summary"], "error_line": e["error_line"], "error_lineno": e["error_lineno"],
            "stage": e["stage"]}
