"""What the command line prints, and what it keeps off stderr.

- Width: text fits :data:`WIDTH` (120) columns when piped, the terminal's width on a terminal (never under
  :data:`MIN_WIDTH`); ``--wide`` (``width=None`` below) prints every column unclipped. A table keeps the columns a
  reader wants first (:func:`fit`: variant, flags and errors, ratios with their intervals, the key metrics), clips
  long text cells with ``core.format.clip`` and says in one line which columns it left out. The rendering itself is
  ``present.tables.text_table``'s; this module only chooses and clips.
- stderr: third-party warnings (Altair's, Keras's) and TensorFlow's C++ and absl logs are silenced for the
  command (:func:`quiet`, :func:`tensorflow`) unless ``--verbose``. rnnlab's own lines (errors, "machine busy",
  progress) are prints of their own and still show. Workers keep their stderr in a file of their own
  (``engine.runner``): nothing of theirs reaches the terminal.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import sys
import tempfile
import textwrap
import warnings
from dataclasses import replace
from typing import Iterator, Sequence

from rnnlab.core.format import clip, fmt_value

WIDTH = 120  # piped output, and the default of every run(...) that prints
MIN_WIDTH = 60  # a narrower terminal still gets this much
WIDE = "--wide shows every column"
GAP = 2  # text_table's gap between columns

# The loggers third-party code writes warnings to (TensorFlow's Python side: "WARNING:tensorflow:From ...").
_LOGGERS = ("tensorflow", "absl", "keras", "tf_keras", "h5py", "matplotlib", "PIL")


# -- width -------------------------------------------------------------------------------------------------------
def width(wide: bool = False, stream=None) -> int | None:
    """The columns to fit: None with ``wide`` (everything), the terminal's width on a terminal, else 120."""
    if wide:
        return None
    stream = sys.stdout if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        return WIDTH
    return max(MIN_WIDTH, shutil.get_terminal_size((WIDTH, 24)).columns)


def width_of(args) -> int | None:
    """:func:`width` for a parsed command line (its ``--wide``)."""
    return width(bool(getattr(args, "wide", False)))


def wrap(line: str, width: int | None, indent: str | None = None) -> list[str]:
    """``line`` as lines of at most ``width`` characters; continuation lines start with ``indent`` (default: the
    line's own indent and two spaces). ``width`` None: the line as it is."""
    if width is None or len(line) <= width:
        return [line]
    lead = line[: len(line) - len(line.lstrip(" "))]
    indent = lead + "  " if indent is None else indent
    if len(indent) > width // 2:
        indent = lead[: width // 4] + "  "
    return textwrap.wrap(line, width, initial_indent="", subsequent_indent=indent, break_on_hyphens=False,
                         drop_whitespace=True) or [line[:width]]


_PHRASE = re.compile(r"(?<=[:;,·]) | (?=\()")  # where a heading may break: after ": " "; " ", " " · ", before "("


def heading(line: str, width: int | None, indent: str = "  ") -> list[str]:
    """A heading (a table's title, a command's first lines) as lines of at most ``width`` characters, broken between
    its phrases ("Unrolling: rnn, 3x128, batch 32," / "200 steps, 64 in", never "batch 32, 200" / "steps"): after a
    colon, semicolon, comma or "·", or before a bracket; a phrase longer than a line is wrapped at its spaces.
    ``width`` None: the line as it is."""
    if width is None or len(line) <= width:
        return [line]
    out: list[str] = []
    cur = ""
    for phrase in _PHRASE.split(line):
        lead = indent if out else ""
        if not cur:
            cand = lead + phrase
        else:
            cand = cur + " " + phrase
        if len(cand) <= width:
            cur = cand
            continue
        if cur:
            out.append(cur)
        cur = (indent if out else "") + phrase
        if len(cur) > width:  # one phrase longer than a line: its words
            parts = wrap(cur, width, indent)
            out += parts[:-1]
            cur = parts[-1]
    if cur:
        out.append(cur)
    return out


def printable(text: str) -> str:
    """``text``, once it is known to encode as UTF-8 (a lone surrogate raises here, inside ``select.survive``, which
    leaves the record out, rather than in ``print``)."""
    text.encode("utf-8")
    return text


def fit_lines(text: str, width: int | None) -> str:
    """Every line of ``text`` wrapped to ``width`` (:func:`wrap`); None: ``text`` as it is."""
    if width is None:
        return text
    return "\n".join(x for line in text.split("\n") for x in (wrap(line, width) if line.strip() else [line]))


# -- tables ------------------------------------------------------------------------------------------------------
_EMPTY = ("", fmt_value(None), "-")  # a cell with nothing in it (not measured: core.format's mark)
# after the first column, the flags and errors, and the ratios: the metrics a reader looks at first (their keys)
KEY_METRICS = ("fwd_ms", "train_ms", "peak_mem_mb", "build_s", "first_call_s", "graph_nodes", "max_abs_diff")
FIRST_RATIOS = ("fwd_ms", "train_ms")  # the ratios of these metrics get room before the key metrics
TEXT_MIN = 16  # a text column ("what runs", "error") is clipped to no less than this (or its header)
FLAGS = ("check", "error", "machine")  # the roles of the columns that get room right after the first
# text that is clipped before a column is left out: the error, the machine, and prose or code ("what runs")
TEXT = ("error", "machine")


def fit(view, width: int, only: Sequence[str] | None = None, picked: list | None = None):
    """``view`` (a ``TableView``) narrowed to ``width`` columns: (the view to render, the lines under it).

    Columns by priority: the first (variant); "check", "error" and "measured on"; the ratio columns (their
    headers' "vs <reference>" shortened to "vs ref", the caption names the reference); the key metrics
    (:data:`KEY_METRICS`); then the rest in the table's order, each one that still fits. Columns with nothing in
    them are dropped; long text is clipped (``core.format.clip``); a "check" sentence is never cut: the column
    says "see below" and the sentence follows the table. The last line names the columns left out. The
    reference's row goes first. ``only``: the columns to choose from (:func:`tables`: the same columns for every
    table of one kind); ``picked``: a list that receives the names of the columns shown."""
    from rnnlab.core.views import TableView, without_bounds

    view = without_bounds(view)
    cols = list(view.columns)
    rows = [list(r) for r in view.rows]
    n = len(cols)
    natural = [max([len(cols[i])] + [len(r[i]) for r in rows]) for i in range(n)]
    empty = {i for i in range(1, n) if rows and all(r[i] in _EMPTY for r in rows)}
    under = _checks_below(view, cols, rows, natural, empty, width)
    ratios = [i for i in range(1, n) if i not in empty and view.cols[i].kind == "ratio"]
    under[:0] = _vs_ref(view, cols, rows, natural, ratios)
    order = [i for i in _priority(view, ratios)
             if i not in empty and (only is None or view.columns[i] in only or i == 0)]
    shown = _widths(order, view, cols, natural, width)
    keep = sorted(shown)
    if picked is not None:
        picked.extend(view.columns[i] for i in keep)
    left = [cols[i] for i in range(n) if i not in shown and i not in empty]
    fitted = TableView(
        title="\n".join(heading(view.title, width)),
        caption="\n".join(x for line in view.caption.split("\n") for x in wrap(line, width, "")),
        columns=tuple(replace(view.cols[i], label=clip(cols[i], shown[i])) for i in keep),
        rows=tuple(tuple(clip(r[i], shown[i]) for i in keep) for r in rows),
        provenance=view.provenance)
    if left:
        under.append(clip(f"{len(left)} more column{'s' if len(left) != 1 else ''} ({WIDE}): "
                          + ", ".join(left), width))
    return fitted, under


def _checks_below(view, cols: list[str], rows: list[list[str]], natural: list[int], empty: set,
                  width: int) -> list[str]:
    """A "check" sentence is never cut: its cell says "see below" and the sentence goes under the table (the lines
    returned)."""
    under: list[str] = []
    for k in view.role("check")[:1]:
        if k in empty:
            continue
        for r in rows:
            if r[k]:
                under += wrap(f"{cols[k]}, {r[0]}: {r[k]}", width, "    ")
                r[k] = "see below"
        natural[k] = max([len(cols[k])] + [len(r[k]) for r in rows])
    return under


def _vs_ref(view, cols: list[str], rows: list[list[str]], natural: list[int], ratios: list[int]) -> list[str]:
    """The ratio columns headed by their name against any reference ("forward vs ref", their key) and the
    reference's row first (every ratio below is read against it); a "ref: <name>" line when the caption does not
    name it."""
    against = [i for i in ratios if view.cols[i].against]
    refs = {view.cols[i].against for i in against}
    if len(refs) != 1:
        return []
    ref = refs.pop()
    for i in against:
        cols[i] = view.cols[i].key
        natural[i] = max([len(cols[i])] + [len(r[i]) for r in rows])
    rows.sort(key=lambda r: r[0] != ref)
    return [] if f"against {ref}" in view.caption else [f"ref: {ref}"]


def _priority(view, ratios: list[int]) -> list[int]:
    """The columns in the order they get room: the first; flags and errors; the forward and train ratios; three key
    metrics; the other ratios; the other key metrics; the rest in the table's order."""
    cols = view.cols
    n = len(cols)
    flags = [i for i in range(1, n) if cols[i].role in FLAGS]
    first_ratios = [i for i in ratios if cols[i].of in FIRST_RATIOS]
    key = [i for name in KEY_METRICS for i in range(1, n) if cols[i].key == name]
    return list(dict.fromkeys([0, *flags, *first_ratios, *key[:3], *ratios, *key, *range(1, n)]))


def _widths(order: list[int], view, cols: list[str], natural: list[int], width: int) -> dict[int, int]:
    """Column -> width for the columns that fit ``width`` in ``order``: each at least its least (a long text column
    clipped toward ``TEXT_MIN``), then the room left given back to clipped columns in the same order."""
    from rnnlab.core.views import WORDY

    def least(i: int) -> int:
        if i == 0:
            return min(natural[i], width)
        if natural[i] <= 40 and view.cols[i].role not in TEXT and view.cols[i].kind not in WORDY:
            return natural[i]
        return min(natural[i], max(len(cols[i]), TEXT_MIN))

    shown: dict[int, int] = {}
    used = -GAP
    for i in order:
        w = least(i)
        if used + GAP + w <= width:
            shown[i] = w
            used += GAP + w
    for i in order:  # room left: clipped text columns grow back toward their natural width
        if i in shown and shown[i] < natural[i]:
            extra = min(natural[i] - shown[i], width - used)
            shown[i] += extra
            used += extra
    return shown


def tables(views: Sequence, width: int | None) -> str:
    """Several tables for the terminal (:func:`table`), those with the same columns showing the same ones: chosen
    once over all their rows together, so that a column does not come and go from one table to the next."""
    from rnnlab.core.views import TableView, without_bounds

    views = [without_bounds(v) for v in views]
    if width is None:
        return "\n\n".join(table(v, None) for v in views)
    chosen: dict[tuple, list[str]] = {}
    for v in views:
        if v.columns not in chosen:
            kin = [u for u in views if u.columns == v.columns]
            merged = TableView(title=v.title, caption=v.caption, columns=v.cols,
                               rows=tuple(r for u in kin for r in u.rows))
            picked: list[str] = []
            fit(merged, width, picked=picked)
            chosen[v.columns] = picked
    out = []
    for v in views:
        fitted, under = fit(v, width, only=chosen[v.columns])
        out.append("\n".join([_text_table(fitted, width)] + under))
    return "\n\n".join(out)


def _text_table(view, width: int) -> str:
    from rnnlab.present.tables import text_table

    return text_table(view, max_width=max(width, 1))


def table(view, width: int | None) -> str:
    """A ``TableView`` for the terminal: fitted to ``width`` (:func:`fit`), or every column unclipped (None)."""
    from rnnlab.present.tables import text_table

    if width is None:
        return text_table(view, max_width=10**9)
    fitted, under = fit(view, width)
    return "\n".join([text_table(fitted, max_width=max(width, 1))] + under)


# -- stderr ------------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def quiet(verbose: bool = False) -> Iterator[None]:
    """For one command: no third-party ``warnings`` (rnnlab's own still show) and TensorFlow's and the other
    libraries' Python loggers at ERROR; everything as before afterwards. ``verbose``: change nothing."""
    if verbose:
        yield
        return
    levels = {name: logging.getLogger(name).level for name in _LOGGERS}
    with warnings.catch_warnings():
        # a warning attributed to any module but rnnlab's is dropped; rnnlab's keep Python's own filters
        warnings.filterwarnings("ignore", module=r"(?!rnnlab(\.|$))")
        for name in _LOGGERS:
            logging.getLogger(name).setLevel(logging.ERROR)
        try:
            yield
        finally:
            for name, level in levels.items():
                logging.getLogger(name).setLevel(level)


@contextlib.contextmanager
def tensorflow(verbose: bool = False) -> Iterator[None]:
    """Around the first TensorFlow import of this process (the ``convert`` command's): its C++ logs off.

    ``TF_CPP_MIN_LOG_LEVEL=3`` (unless the user set it) silences what TensorFlow logs once running; the lines it
    writes while its libraries load, before absl's logging is set up ("All log messages before
    absl::InitializeLog() ...", oneDNN, CUDA stubs), obey no setting, so file descriptor 2 points at a scratch
    file for the import, which is replayed when the import fails. ``verbose``: change nothing."""
    if verbose or "tensorflow" in sys.modules:
        yield
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no descriptor 2 to borrow: leave it be
        yield
        return
    scratch = tempfile.TemporaryFile()
    failed = True
    try:
        os.dup2(scratch.fileno(), 2)
        yield
        failed = False
    finally:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        if failed:  # what TensorFlow said while failing to load is the user's clue
            scratch.seek(0)
            sys.stderr.write(scratch.read().decode("utf-8", "replace"))
        scratch.close()


@contextlib.contextmanager
def native_logs_off(verbose: bool = False) -> Iterator[None]:
    """While a library's C++ core writes its own log lines straight to file descriptor 2 (Ray's driver: "Failed to
    connect to GCS ..." every few seconds), point descriptor 2 at a scratch file and keep Python's ``sys.stderr``
    (rnnlab's progress, warnings and errors) on the real one. ``verbose``: change nothing."""
    if verbose:
        yield
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no descriptor 2 to borrow: leave it be
        yield
        return
    old = sys.stderr
    sys.stderr = os.fdopen(os.dup(saved), "w", buffering=1, encoding=getattr(old, "encoding", None) or "utf-8",
                           errors="backslashreplace")
    scratch = tempfile.TemporaryFile()
    try:
        os.dup2(scratch.fileno(), 2)
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
            sys.stderr.close()
        sys.stderr = old
        os.dup2(saved, 2)
        os.close(saved)
        scratch.close()

