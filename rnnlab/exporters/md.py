"""Markdown: one file, the takeaways (when the report has them), every table as a pipe table (numbers right-aligned),
then the provenance.

``render_tables(tables)`` gives the same tables without the report around them (``python -m rnnlab results --format
md`` prints it).
"""

from __future__ import annotations

from typing import Sequence

from rnnlab.core.format import md_text
from rnnlab.core.views import Report, TableView, without_bounds
from rnnlab.exporters.base import SCHEMA, Artifact, Exporter, label, own, require, slug


def _cell(text: str) -> str:
    return "<br>".join(md_text(line.strip()) for line in str(text).splitlines()).replace("|", "\\|") or " "


def _line(text: str) -> str:
    """Text on one line of the file: whitespace folded, Markdown-safe (``format.md_text``)."""
    return md_text(" ".join(str(text).split()))


def table_lines(table: TableView, level: int = 2) -> list[str]:
    """A heading, the caption in italics, and the pipe table."""
    out = ["#" * level + f" {_line(table.title)}", ""]
    if table.caption:
        out += [f"*{_line(table.caption)}*", ""]
    align = ["---:" if n else ":---" for n in table.numeric]
    out.append("| " + " | ".join(_cell(c) for c in table.columns) + " |")
    out.append("| " + " | ".join(align) + " |")
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows]
    return out


def render_tables(tables: Sequence[TableView], level: int = 3) -> str:
    return "\n\n".join("\n".join(table_lines(t, level)) for t in tables)


class MarkdownExporter(Exporter):
    name = "md"
    order = 1
    button = "Markdown"
    suffix = ".md"
    mime = "text/markdown"
    description = "one Markdown file: every table as a pipe table, with provenance"

    def render(self, report: Report) -> list[Artifact]:
        require(report.tables, "tables", self.name)
        out = [f"<!-- rnnlab export (schema {SCHEMA}): markdown -->", f"# {_line(report.title)}", ""]
        if report.subtitle:
            out += [_line(report.subtitle), ""]
        if report.takeaways:
            out += ["## Takeaways", ""] + ([_line(report.takeaway_note) + ":", ""] if report.takeaway_note else []) \
                + [f"- {_line(t.text)}" for t in report.takeaways] + [""]
        for table in map(without_bounds, report.tables):
            out += table_lines(table)
            extra = own(report, table)
            if extra:
                out += ["", "<sub>" + "; ".join(f"{label(k)}: {_line(v)}" for k, v in extra.items()) + "</sub>"]
            out.append("")
        out += ["## Provenance", ""]
        out += [f"- **{label(k)}**: {_line(v)}" for k, v in report.provenance.items() if v != ""]
        out.append("")
        return [Artifact(slug(report.title, "report") + self.suffix, "\n".join(out).encode("utf-8"))]
