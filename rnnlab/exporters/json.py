"""JSON: the report's tables (formatted rows and raw values) and charts (Vega-Lite specs) with provenance.

Layout (schema 1)::

    {"schema": 1, "kind": "rnnlab.present.report", "title", "subtitle", "provenance": {...},
     "tables": [{"title", "caption", "columns": [...], "rows": [[str]], "raw": [[number|str|null]] | null,
                 "provenance": {...}}],
     "charts": [{"title", "caption", "spec": {...vega-lite...}, "provenance": {...}}]}

Strict JSON: NaN and infinities in raw values become null.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from rnnlab.core.views import Report
from rnnlab.exporters.base import SCHEMA, Artifact, Exporter, json_value, slug


def _clean(value: object) -> object:
    """Strict JSON all the way down: hand-built chart specs may hold NaN or NumPy values."""
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return json_value(value)


class JsonExporter(Exporter):
    name = "json"
    order = 6
    suffix = ".json"
    mime = "application/json"
    description = "one JSON document: tables (formatted and raw) and chart specs, with provenance"

    def render(self, report: Report) -> list[Artifact]:
        doc = {
            "schema": SCHEMA,
            "kind": "rnnlab.present.report",
            "title": report.title,
            "subtitle": report.subtitle,
            "provenance": dict(report.provenance),
            "tables": [{"title": t.title, "caption": t.caption, "columns": list(t.columns),
                        "rows": [list(r) for r in t.rows],
                        "raw": _clean(t.raw) if t.raw else None,
                        "provenance": dict(t.provenance)} for t in report.tables],
            "charts": [{"title": c.title, "caption": c.caption, "spec": _clean(c.spec),
                        "provenance": dict(c.provenance)} for c in report.charts],
        }
        text = json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False, default=json_value)
        return [Artifact(slug(report.title, "report") + self.suffix, (text + "\n").encode("utf-8"))]
