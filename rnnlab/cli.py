"""``python -m rnnlab``: argparse onto the command modules. Bad input: one line on stderr, exit 2."""

from __future__ import annotations

import argparse
import importlib
import sys

from rnnlab.core.errors import RnnlabError

COMMANDS = ("env", "list_", "run", "results", "export", "import_", "convert", "claims", "bench_stability")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own errors: one line, exit 2, no usage dump
        raise RnnlabError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m rnnlab",
                     description="Measure how TensorFlow unrolls recurrent networks, on this machine.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"rnnlab.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"rnnlab.commands.{name}":
                continue
            raise
        mod.setup_arguments(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except RnnlabError as e:
        print(f"rnnlab: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("rnnlab: interrupted; finished variants are stored", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
