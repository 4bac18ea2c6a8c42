"""``python -m rnnlab import FILE``: records from another machine, validated (all or none), never unpickled."""

from __future__ import annotations

from pathlib import Path

from rnnlab.engine import api
from rnnlab.core.errors import RnnlabError
from rnnlab.core.store import Store

MAX_BYTES = 50 * 2**20


def setup_arguments(sub) -> None:
    p = sub.add_parser("import", help="import a JSON or JSONL file of records")
    p.add_argument("file")
    p.set_defaults(func=main)


def run(*, file: str, store: Store | None = None) -> int:
    path = Path(file)
    if not path.is_file():
        raise RnnlabError(f"{file}: no such file")
    if path.stat().st_size > MAX_BYTES:
        raise RnnlabError(f"{file}: larger than {MAX_BYTES // 2**20} MB; split it")
    return api.import_file(path.read_bytes(), name=path.name, store=store or Store())


def main(args) -> int:
    n = run(file=args.file)
    print(f"rnnlab: imported {n} records from {args.file}")
    return 0
