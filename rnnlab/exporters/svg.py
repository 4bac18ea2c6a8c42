"""SVG: one file per chart, rendered by vl_convert; provenance in an XML comment before the root element."""

from __future__ import annotations

from rnnlab.core.views import Report
from rnnlab.exporters.base import Artifact, Exporter, chart_svg, merged, provenance_lines, require, slug, unique_names


def _comment(lines: list[str]) -> str:
    text = "\n".join(lines).replace("--", "- -")  # "--" may not occur inside an XML comment
    return f"<!--\n{text}\n-->\n"


class SvgExporter(Exporter):
    name = "svg"
    order = 5
    suffix = ".svg"
    mime = "image/svg+xml"
    per = "chart"
    description = "one SVG per chart (vl_convert), provenance in an XML comment"

    def render(self, report: Report) -> list[Artifact]:
        require(report.charts, "charts", self.name)
        names = unique_names([slug(c.title, "chart") for c in report.charts], self.suffix)
        out = []
        for name, chart in zip(names, report.charts):
            svg = chart_svg(chart)
            head = ["rnnlab chart: " + chart.title, "caption: " + " ".join(chart.caption.split())]
            head += provenance_lines(merged(report, chart))
            if svg.startswith("<?xml"):  # the declaration must stay first
                decl, _, rest = svg.partition("?>")
                svg = decl + "?>\n" + _comment(head) + rest.lstrip()
            else:
                svg = _comment(head) + svg
            out.append(Artifact(name, svg.encode("utf-8")))
        return out
