"""``python -m rnnlab``: argparse onto the command modules. Bad input: one line on stderr, exit 2.

Every command takes ``--wide`` (every column, unclipped; by default text fits 120 columns, or the terminal) and
``--verbose`` (third-party warnings and TensorFlow's logs on stderr; by default only rnnlab's own lines), before or
after the command's name (``rnnlab.commands._output``)."""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import signal
import sys

from rnnlab.commands._output import quiet
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip

COMMANDS = ("env", "list_", "run", "results", "export", "import_", "convert", "claims", "bench_stability", "calibrate")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: one line, exit 2, no usage dump
        raise RnnlabError(f"{self.prog}: {message}")


def _output_flags(parser: argparse.ArgumentParser, default) -> None:
    """``--wide`` and ``--verbose``: before the command (``python -m rnnlab --wide results``) or after it (unless
    the command has a flag of that name itself)."""
    for flag, text in (("--wide", "print every column, unclipped (default: fit 120 columns, or the terminal's width)"),
                       ("--verbose", "let third-party warnings and TensorFlow's logs through to stderr")):
        if flag not in parser._option_string_actions:
            parser.add_argument(flag, action="store_true", default=default, help=text)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m rnnlab",
                     description="Measure how TensorFlow unrolls recurrent networks, on this machine.")
    _output_flags(parser, False)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"rnnlab.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"rnnlab.commands.{name}":
                continue
            raise
        mod.setup_arguments(sub)
    for p in {id(p): p for p in sub.choices.values()}.values():
        _output_flags(p, argparse.SUPPRESS)  # absent unless given: the global flag's value stands
    return parser


class Terminated(BaseException):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt so running workers are ended first."""


def _on_sigterm(signum, frame):
    raise Terminated()


# Errors of the machine around a command (a full disk, a name too long, a read-only or missing folder): one line.
_ENVIRONMENT = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.ENAMETOOLONG, errno.EACCES, errno.EPERM, errno.EROFS,
                errno.EISDIR, errno.ENOTDIR, errno.ENOENT, errno.EEXIST, errno.EIO, errno.ELOOP, errno.EMFILE,
                errno.ENFILE, errno.ENOTEMPTY, errno.EXDEV, errno.ETXTBSY}


def _os_error(e: OSError) -> str:
    why = e.strerror or str(e)
    if e.errno == errno.ENOSPC:
        why = f"the disk is full ({why})"
    if e.filename is None:  # writing to stdout: `> /dev/full`
        return f"cannot write the output: {why}"
    return f"{clip(os.fsdecode(e.filename))}: {why}"


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush of what is still buffered does not fail again."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):  # stdout replaced by something without a descriptor (tests)
        pass


def main(argv: list[str] | None = None) -> int:
    command = None
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: leave signals alone
        previous = None
    try:
        args = build_parser().parse_args(argv)
        command = args.command
        with quiet(args.verbose):  # third-party warnings off stderr unless --verbose
            code = int(args.func(args) or 0)
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not in the interpreter's exit
        return code
    except RnnlabError as e:
        print(f"rnnlab: error: {e}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, Terminated) as e:
        word, code = ("terminated", 143) if isinstance(e, Terminated) else ("interrupted", 130)
        stored = "; its workers ended, finished variants are stored" if command in ("run", "bench-stability") else ""
        print(f"rnnlab: {word}{stored}", file=sys.stderr)
        return code
    except BrokenPipeError:  # `| head -1`: the reader has gone; stop quietly, as Unix tools do
        _drop_stdout()
        return 0
    except OSError as e:
        if e.errno not in _ENVIRONMENT:
            raise
        if e.filename is None:
            _drop_stdout()
        print(f"rnnlab: error: {_os_error(e)}", file=sys.stderr)
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
