"""LaTeX: one ``.tex`` fragment of booktabs tables, to ``\\input`` into a document that loads ``booktabs``.

Every cell, caption and title is escaped (``\\ & % $ # _ { } ~ ^`` and the unicode signs units use: ×, ±, µ, ≈,
−, ≤, ≥); provenance goes in ``%`` comment lines.
"""

from __future__ import annotations

from rnnlab.core.views import Report, without_bounds
from rnnlab.exporters.base import SCHEMA, Artifact, Exporter, own, provenance_lines, require, slug

_ESCAPES = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "×": r"\ensuremath{\times}", "±": r"\ensuremath{\pm}", "µ": r"\ensuremath{\mu}", "μ": r"\ensuremath{\mu}",
    "≈": r"\ensuremath{\approx}", "−": r"\ensuremath{-}", "≤": r"\ensuremath{\leq}", "≥": r"\ensuremath{\geq}",
    "→": r"\ensuremath{\rightarrow}", "<": r"\textless{}", ">": r"\textgreater{}",
}
_TABLE = str.maketrans(_ESCAPES)


def escape(text: str) -> str:
    """Escape text for LaTeX in one pass (so the backslashes it adds are never escaped again)."""
    return " ".join(str(text).split()).translate(_TABLE)


def _comment(text: str) -> str:
    return "% " + " ".join(text.split())


class LatexExporter(Exporter):
    name = "tex"
    order = 2
    button = "LaTeX"
    suffix = ".tex"
    mime = "application/x-tex"
    description = "one LaTeX file of booktabs tables (\\usepackage{booktabs})"

    def render(self, report: Report) -> list[Artifact]:
        require(report.tables, "tables", self.name)
        out = [_comment(f"rnnlab export (schema {SCHEMA}): LaTeX tables; needs \\usepackage{{booktabs}}"),
               _comment(f"report: {report.title}")]
        out += [_comment(line) for line in provenance_lines(report.provenance)]
        for i, table in enumerate(map(without_bounds, report.tables)):
            spec = "".join("r" if n else "l" for n in table.numeric) or "l"
            caption = escape(table.title) + (". " + escape(table.caption) if table.caption else "")
            out += ["", _comment(f"table {i + 1}: {table.title}")]
            out += [_comment(line) for line in provenance_lines(own(report, table))]
            out += [r"\begin{table}[htbp]", r"  \centering", r"  \small",
                    f"  \\caption{{{caption}}}", f"  \\label{{tab:{slug(table.title, f'table-{i + 1}')}}}",
                    f"  \\begin{{tabular}}{{{spec}}}", r"    \toprule",
                    "    " + " & ".join(escape(c) for c in table.columns) + r" \\", r"    \midrule"]
            out += ["    " + " & ".join(escape(c) for c in row) + r" \\" for row in table.rows]
            out += [r"    \bottomrule", r"  \end{tabular}", r"\end{table}"]
        out.append("")
        return [Artifact(slug(report.title, "report") + self.suffix, "\n".join(out).encode("utf-8"))]
