"""CSV: one file per table.

Layout (schema 1): comment lines starting with ``#`` (format, title, caption, provenance ``key: value``), then the
header row (``columns``), then one row per table row: the raw values when the table has them (numbers in full
precision, ``None`` as an empty cell), else the formatted strings. Readers skip leading ``#`` lines, e.g.
``pandas.read_csv(path, skiprows=n_comment_lines)``; ``comment="#"`` also works while no cell holds a ``#``.
"""

from __future__ import annotations

import csv
import io

from rnnlab.core.format import csv_safe
from rnnlab.core.views import Report, TableView
from rnnlab.exporters.base import SCHEMA, Artifact, Exporter, json_value, merged, provenance_lines, require, slug, unique_names


def _cell(value: object) -> str:
    value = json_value(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back to the same float
    return csv_safe(str(value))


class CsvExporter(Exporter):
    name = "csv"
    order = 0
    button = "CSV"
    suffix = ".csv"
    mime = "text/csv"
    per = "table"
    description = "one CSV per table, raw values, provenance in '#' comment lines"

    def render(self, report: Report) -> list[Artifact]:
        require(report.tables, "tables", self.name)
        names = unique_names([slug(t.title, "table") for t in report.tables], self.suffix)
        return [Artifact(name, self.table_bytes(report, table)) for name, table in zip(names, report.tables)]

    @staticmethod
    def table_bytes(report: Report, table: TableView) -> bytes:
        buf = io.StringIO()
        comments = [f"rnnlab export (schema {SCHEMA}): csv, {'raw values' if table.raw else 'formatted values'}",
                    f"title: {table.title}"]
        comments += [f"caption: {line}" for line in table.caption.splitlines() if line.strip()]
        comments += provenance_lines(merged(report, table))
        for line in comments:
            buf.write("# " + " ".join(line.split()) + "\n")
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow([csv_safe(c) for c in table.columns])
        if table.raw:
            writer.writerows([_cell(v) for v in row] for row in table.raw)
        else:
            writer.writerows([csv_safe(c) for c in row] for row in table.rows)
        return buf.getvalue().encode("utf-8")
