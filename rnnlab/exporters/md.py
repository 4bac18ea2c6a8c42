"""Markdown: one file, every table as a pipe table (numbers right-aligned), then the provenance."""

from __future__ import annotations

from ..views import Report
from .base import SCHEMA, Artifact, Exporter, label, numeric_columns, own, require, slug


def _cell(text: str) -> str:
    return "<br>".join(line.strip() for line in str(text).splitlines()).replace("|", "\\|") or " "


class MarkdownExporter(Exporter):
    name = "md"
    suffix = ".md"
    mime = "text/markdown"
    description = "one Markdown file: every table as a pipe table, with provenance"

    def render(self, report: Report) -> list[Artifact]:
        require(report.tables, "tables", self.name)
        out = [f"<!-- rnnlab export (schema {SCHEMA}): markdown -->", f"# {report.title}", ""]
        if report.subtitle:
            out += [report.subtitle, ""]
        for table in report.tables:
            out += [f"## {table.title}", ""]
            if table.caption:
                out += [f"*{' '.join(table.caption.split())}*", ""]
            align = ["---:" if n else ":---" for n in numeric_columns(table)]
            out.append("| " + " | ".join(_cell(c) for c in table.columns) + " |")
            out.append("| " + " | ".join(align) + " |")
            out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows]
            extra = own(report, table)
            if extra:
                out += ["", "<sub>" + "; ".join(f"{label(k)}: {v}" for k, v in extra.items()) + "</sub>"]
            out.append("")
        out += ["## Provenance", ""]
        out += [f"- **{label(k)}**: {' '.join(v.split())}" for k, v in report.provenance.items() if v != ""]
        out.append("")
        return [Artifact(slug(report.title, "report") + self.suffix, "\n".join(out).encode("utf-8"))]
