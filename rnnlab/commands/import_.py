"""``python -m rnnlab import FILE``: records from another machine, validated (all or none), never unpickled."""

from __future__ import annotations

from pathlib import Path

from rnnlab.commands._output import fit_lines, width_of
from rnnlab.engine import api
from rnnlab.core.errors import RnnlabError
from rnnlab.core.store import Store


def setup_arguments(sub) -> None:
    p = sub.add_parser("import", help="import a JSON or JSONL file of records")
    p.add_argument("file")
    p.set_defaults(func=main)


def run(*, file: str, store: Store | None = None) -> api.ImportCount:
    path = Path(file)
    if not path.is_file():
        raise RnnlabError(f"{file}: no such file")
    try:
        if path.stat().st_size > api.MAX_IMPORT_BYTES:
            raise RnnlabError(f"{file}: larger than {api.MAX_IMPORT_BYTES // 2**20} MB; split it")
        data = path.read_bytes()
    except OSError as e:
        raise RnnlabError(f"{file}: cannot read it ({e.strerror})") from None
    return api.import_file(data, name=path.name, store=store or Store())


def main(args) -> int:
    n = run(file=args.file)
    print(fit_lines(f"rnnlab: {args.file}: {n.message}", width_of(args)))
    return 0
