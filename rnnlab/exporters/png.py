"""PNG: one image per chart, rendered by vl_convert at ``scale=2``.

Provenance goes into the file as PNG ``iTXt`` text chunks (``Title``, ``Description``, ``Software``,
``Creation Time``, ``Comment`` = the ``key: value`` lines), which image viewers and ``exiftool`` show.
"""

from __future__ import annotations

import struct
import zlib

from rnnlab.core.views import Report
from rnnlab.exporters.base import Artifact, Exporter, chart_png, merged, provenance_lines, require, slug, unique_names

_MAGIC = b"\x89PNG\r\n\x1a\n"


def _itxt(keyword: str, text: str) -> bytes:
    body = keyword.encode("latin-1")[:79] + b"\x00\x00\x00" + b"\x00" + b"\x00" + text.encode("utf-8")
    return struct.pack(">I", len(body)) + b"iTXt" + body + struct.pack(">I", zlib.crc32(b"iTXt" + body))


def with_text(png: bytes, fields: dict[str, str]) -> bytes:
    """Insert iTXt chunks right after the IHDR chunk (the PNG spec allows text chunks anywhere before IEND)."""
    if not png.startswith(_MAGIC):
        raise ValueError("not a PNG")
    (ihdr_len,) = struct.unpack(">I", png[8:12])
    cut = 8 + 12 + ihdr_len
    return png[:cut] + b"".join(_itxt(k, v) for k, v in fields.items() if v) + png[cut:]


class PngExporter(Exporter):
    name = "png"
    order = 4
    button = "PNG charts"
    suffix = ".png"
    mime = "image/png"
    per = "chart"
    description = "one PNG per chart (vl_convert, scale 2), provenance in PNG text chunks"

    def render(self, report: Report) -> list[Artifact]:
        require(report.charts, "charts", self.name)
        names = unique_names([slug(c.title, "chart") for c in report.charts], self.suffix)
        out = []
        for name, chart in zip(names, report.charts):
            prov = merged(report, chart)
            fields = {"Title": chart.title, "Description": chart.caption,
                      "Software": f"rnnlab {prov.get('rnnlab') or prov.get('rnnlab_version', '')}".strip(),
                      "Creation Time": prov.get("exported_at", ""), "Comment": "\n".join(provenance_lines(prov))}
            out.append(Artifact(name, with_text(chart_png(chart), fields)))
        return out
