"""What every exporter shares: the ``Exporter`` contract, provenance stamping and text, file names.

An exporter is a stateless object with one method, ``render(report) -> list[Artifact]``: it turns a stamped
``Report`` into named byte strings and never touches the disk, so the app can offer them as downloads and
``rnnlab.exporters.export`` decides where files go. Heavy libraries (python-pptx, vl_convert) are imported inside
``render``, so importing the exporters stays cheap.
"""

from __future__ import annotations

import math
import re
import sys
import unicodedata
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Callable, Mapping

from rnnlab.core.errors import RnnlabError
from rnnlab.core.views import ChartView, Report, TableView

SCHEMA = 1  # version of the exported file layouts (JSON document, CSV comment header); bump on incompatible change


@dataclass(frozen=True)
class Artifact:
    name: str  # suggested file name, e.g. "unrolling-rnn-3x128.csv"
    data: bytes


REGISTERED: dict[str, "Exporter"] = {}  # format -> its exporter, as each module under rnnlab.exporters defines it


class Exporter:
    """One output format. Subclasses set the class attributes and implement ``render``."""

    name: str = ""  # the format's key in EXPORTERS and on the command line
    suffix: str = ""  # ".pptx"
    mime: str = "application/octet-stream"
    per: str | None = None  # None: one file per report; "table" / "chart": one file per table / chart
    description: str = ""
    order: int = 99  # its place among the formats (``--format``'s choices, the app's download buttons)
    button: str = ""  # the app's download button for a page's view; empty: the format is not offered there

    def __init_subclass__(cls, **kw):
        """A subclass that names its format registers itself (``EXPORTERS``): a new format is one module here."""
        super().__init_subclass__(**kw)
        if cls.name:
            REGISTERED[cls.name] = cls()

    def render(self, report: Report) -> list[Artifact]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}: {self.description}>"


# ---------------------------------------------------------------------------------------------------- provenance

def rnnlab_version() -> str:
    module = sys.modules.get("rnnlab")
    version = getattr(module, "__version__", None)
    if version:
        return str(version)
    try:
        from importlib.metadata import version as dist_version

        return dist_version("rnnlab")
    except Exception:  # not installed as a distribution (running from a checkout)
        return "unknown"


def utc_stamp(now: datetime) -> str:
    if now.tzinfo is None:
        now = now.replace(tzinfo=timezone.utc)
    return now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def stamp(report: Report, now: Callable[[], datetime] | datetime | None = None) -> Report:
    """The report with ``exported_at`` (UTC) and the rnnlab version filled into its provenance.

    ``now`` is a datetime or a clock (``datetime.now(timezone.utc)`` by default): tests pin it.
    """
    if callable(now):
        now = now()
    when = utc_stamp(now or datetime.now(timezone.utc))
    prov = dict(report.provenance)
    if not prov.get("rnnlab") and not prov.get("rnnlab_version"):
        prov["rnnlab"] = rnnlab_version()
    prov["exported_at"] = when
    return replace(report, provenance=prov)


def merged(report: Report, view: TableView | ChartView | None = None) -> dict[str, str]:
    """The provenance that applies to one view: the report's, overridden by the view's own."""
    prov = dict(report.provenance)
    if view is not None:
        prov.update({k: v for k, v in view.provenance.items() if v != ""})
    return prov


def own(report: Report, view: TableView | ChartView) -> dict[str, str]:
    """The keys where a view's provenance differs from the report's (e.g. a baseline from another machine)."""
    return {k: v for k, v in view.provenance.items() if v != "" and report.provenance.get(k) != v}


_LABELS = {
    "machine": "machine",
    "device": "device",
    "tf": "TensorFlow",
    "keras": "Keras",
    "python": "Python",
    "rnnlab": "rnnlab",
    "rnnlab_version": "rnnlab",
    "commit": "commit",
    "created_at": "measured",
    "exported_at": "exported",
}


def label(key: str) -> str:
    return _LABELS.get(key, key)


def provenance_lines(prov: Mapping[str, str]) -> list[str]:
    """``key: value`` lines, one per entry, in the mapping's order: for comment headers and notes."""
    return [f"{k}: {_one_line(v)}" for k, v in prov.items() if v != ""]


def provenance_summary(prov: Mapping[str, str]) -> str:
    """One line for a slide footer: ``machine · device · TensorFlow 2.21.0 · Keras 3.15.1 · rnnlab 0.1 (abc1234)
    · measured ... · exported ...``."""
    p = {k: _one_line(v) for k, v in prov.items() if v != ""}
    parts = [p.pop(k) for k in ("machine", "device") if k in p]
    for key in ("tf", "keras", "python"):
        if key in p:
            parts.append(f"{label(key)} {p.pop(key)}")
    version = p.pop("rnnlab", None) or p.pop("rnnlab_version", None)
    p.pop("rnnlab_version", None)
    commit = p.pop("commit", None)
    if version or commit:
        parts.append("rnnlab " + (version or "?") + (f" ({commit[:10]})" if commit else ""))
    for key in ("created_at", "exported_at"):
        if key in p:
            parts.append(f"{label(key)} {p.pop(key)}")
    parts += [f"{k} {v}" for k, v in p.items()]
    return " · ".join(parts)


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


# ---------------------------------------------------------------------------------------------------- names, cells

def slug(text: str, default: str = "rnnlab") -> str:
    """A file-name-safe form of a title: ``"Unrolling: rnn, 3x128"`` -> ``"unrolling-rnn-3x128"``."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^a-zA-Z0-9]+", "-", text).strip("-").lower()
    return text[:60].rstrip("-") or default


def unique_names(stems: list[str], suffix: str) -> list[str]:
    seen: dict[str, int] = {}
    names = []
    for stem in stems:
        n = seen.get(stem, 0) + 1
        seen[stem] = n
        names.append(f"{stem}{'' if n == 1 else f'-{n}'}{suffix}")
    return names


def json_value(value: object) -> object:
    """A raw cell as strict JSON: NumPy scalars unwrapped, NaN/inf as null, anything exotic as text."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        try:
            value = value.item()
        except (TypeError, ValueError):
            return str(value)
        return json_value(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return str(value)


def require(items: tuple, what: str, fmt: str) -> None:
    if not items:
        raise RnnlabError(f"nothing to export as {fmt}: the report has no {what}")


# ---------------------------------------------------------------------------------------------------- charts

def chart_png(chart: ChartView, scale: float = 2) -> bytes:
    """The chart's Vega-Lite spec as PNG via vl_convert (no browser); ``scale=2`` for sharp slides."""
    return _vl("png", chart, scale=scale)


def chart_svg(chart: ChartView) -> str:
    return _vl("svg", chart)


def _vl(kind: str, chart: ChartView, **kw):
    import vl_convert

    convert = vl_convert.vegalite_to_png if kind == "png" else vl_convert.vegalite_to_svg
    try:
        return convert(dict(chart.spec), **kw)
    except Exception as e:  # vl_convert raises ValueError with a multi-line JS message
        first = (str(e).strip().splitlines() or [repr(e)])[0]
        raise RnnlabError(f"cannot render chart {chart.title!r} as {kind}: {first}") from e
