"""Importing results from another machine: a file read and validated against the registry (``read_import``,
refused whole when anything is wrong), then stored without replacing any stored record (``import_file``)."""

from __future__ import annotations

from rnnlab import experiments
from rnnlab.core.errors import RnnlabError
from rnnlab.core.format import clip
from rnnlab.core.record import Record
from rnnlab.core.store import Store


MAX_IMPORT_BYTES = 50 * 2**20  # a results file larger than this is refused before it is parsed
# What an import may add: every record stored is a row of the full appendix (``export --format pptx``), which took
# about APPENDIX_AT_CAP on a 2-core machine with MAX_STORED records stored (3,000 imported records: not done in 300 s)
MAX_IMPORT_RECORDS = 1000  # records in one file
MAX_STORED = 1000  # records in the store once the import is added
APPENDIX_AT_CAP = "2 min"
_REASONS_SHOWN = 3  # reasons a refused import quotes
_REASON_CHARS = 80  # each cut to this length (a value inside one is quoted at most 40 characters)


class ImportCount(int):
    """The records an import added (an ``int``, as before), plus ``kept``: records of the file whose key was already
    in the store and were left as they were (``kept_local`` of them measured on this machine)."""

    kept: int = 0
    kept_local: int = 0

    def __new__(cls, added: int, kept: int = 0, kept_local: int = 0):
        obj = super().__new__(cls, added)
        obj.kept, obj.kept_local = kept, kept_local
        return obj

    @property
    def message(self) -> str:
        """``imported 37 records; kept 3 records already measured here``."""
        text = f"imported {int(self)} record{'s' if int(self) != 1 else ''}"
        if self.kept_local:
            text += f"; kept {self.kept_local} record{'s' if self.kept_local != 1 else ''} already measured here"
        if self.kept - self.kept_local:
            n = self.kept - self.kept_local
            text += f"; {n} record{'s' if n != 1 else ''} already in the store"
        return text


def read_import(data: bytes | str, *, name: str = "file") -> list[Record]:
    """Parse and validate a results file (JSON array/object or JSONL) against the experiment registry; store
    nothing. All or nothing: RnnlabError ("refused 2 of 40 records: record 7: params.units=...; ...")."""
    from rnnlab.core.record import parse_records

    if len(data) > MAX_IMPORT_BYTES:
        raise RnnlabError(f"{name}: larger than {MAX_IMPORT_BYTES // 2**20} MB; split it")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")  # a byte-order mark (Windows editors write one) is not part of the JSON
        except UnicodeDecodeError:
            raise RnnlabError(f"{name}: not UTF-8 text; expected a JSON array or JSONL of rnnlab records") from None
    records = parse_records(data.removeprefix("\ufeff"), name=name)
    if len(records) > MAX_IMPORT_RECORDS:
        raise RnnlabError(f"{name}: {len(records):,} records; at most {MAX_IMPORT_RECORDS:,} in one import (the full "
                          f"appendix, export --format pptx, takes about {APPENDIX_AT_CAP} at {MAX_STORED:,} stored); "
                          "split it, nothing was imported")
    refused = [(i, ps) for i, r in enumerate(records, 1) if (ps := experiments.problems(r))]
    if refused:
        reasons = "; ".join(clip(f"record {i}: {ps[0]}", _REASON_CHARS) for i, ps in refused[:_REASONS_SHOWN])
        more = "; ..." if len(refused) > _REASONS_SHOWN else ""
        raise RnnlabError(f"{name}: refused {len(refused)} of {len(records)} records: {reasons}{more};"
                          " nothing was imported")
    return [r.with_(source="imported", cached=False) for r in records]


def import_file(data: bytes | str, *, name: str = "file", store: Store | None = None) -> ImportCount:
    """Validate every record of a JSON/JSONL file and store them all, or none (never unpickles). A record whose key
    is already stored is kept as stored (an import never replaces a measurement); the count says how many."""
    records = read_import(data, name=name)
    store = store or Store()
    unique = list({r.key: r for r in records}.values())
    sources = store.sources([r.key for r in unique])
    total = store.count() + sum(1 for r in unique if r.key not in sources)
    if total > MAX_STORED:
        raise RnnlabError(f"{name}: the store would hold {total:,} records; at most {MAX_STORED:,} (the full appendix, "
                          f"export --format pptx, takes about {APPENDIX_AT_CAP} at that size); delete records or "
                          "import into another store (RNNLAB_STORE), nothing was imported")
    added = store.put_many(unique, replace=False)
    kept_local = sum(1 for r in unique if sources.get(r.key) == "local")
    return ImportCount(added, len(unique) - added, min(kept_local, len(unique) - added))
