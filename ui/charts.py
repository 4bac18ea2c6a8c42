"""Charts as Streamlit draws them, converted once per chart object (a shared view's charts are made once)."""

from __future__ import annotations

import streamlit as st

from rnnlab.core.memo import Memo
from rnnlab.core.views import ChartView


def _share_altair_lock() -> None:
    """rnnlab builds chart specs under the lock Streamlit holds while it switches Altair's process-wide data
    transformer and theme (``present.report.spec_lock``): the two never interleave. Streamlit keeps that lock in a
    private module attribute; tests/present/test_chart_threads.py fails if a new Streamlit moves it."""
    from streamlit.elements import vega_charts

    from rnnlab.present import report

    lock = getattr(vega_charts, "_altair_globals_lock", None)
    if lock is not None:
        report.share_spec_lock(lock)


_share_altair_lock()

_SPECS = Memo(size=512)  # a chart's screen spec, per chart object (``Memo.of``)


def _screen_spec(chart) -> dict:
    """A chart (Altair, or a ChartView's Vega-Lite dict) as Streamlit draws it: the spec with its datasets already
    in Arrow (``st.vega_lite_chart`` takes those as they are), Altair's default-theme view size left out as
    ``st.altair_chart`` does. Made once per chart object (a shared view's charts are made once)."""
    from streamlit import dataframe_util

    from rnnlab.present import report

    spec = dict(chart) if isinstance(chart, dict) else report.chart_spec(chart)
    config = dict(spec.get("config") or {})
    view = {k: v for k, v in (config.get("view") or {}).items() if k not in ("continuousWidth", "continuousHeight")}
    if view:
        config["view"] = view
    else:
        config.pop("view", None)
    if config:
        spec["config"] = config
    else:
        spec.pop("config", None)
    if isinstance(spec.get("datasets"), dict):
        import pandas as pd

        spec["datasets"] = {k: dataframe_util.convert_anything_to_arrow_bytes(pd.DataFrame(v))
                            if isinstance(v, list) else v for k, v in spec["datasets"].items()}
    return spec


def chart(obj, *, where=None, panels: int | None = None, **kw) -> None:
    """Draw a chart: an Altair chart, a ``ChartView``, or a Vega-Lite dict (``st.vega_lite_chart``'s arguments
    in ``kw``, ``where`` a column or container; ``panels``: side-by-side panels narrowed to that width,
    ``panels_to``). The spec is converted once per chart object (a shared view's), not on every rerun."""
    src = obj.spec if isinstance(obj, ChartView) else obj  # (an Altair facet chart has a ``spec`` too: its panel)

    spec = _SPECS.of(src, lambda: _screen_spec(panels_to(src, panels) if panels else src), panels)
    (where or st).vega_lite_chart(spec=spec, **kw)


def panels_to(chart, width: int):
    """A copy of an Altair chart of side-by-side panels (``hconcat``) with each panel ``width`` px wide, so the
    row fits the page (such a chart cannot stretch to its container); any other chart comes back as it is."""
    if not hasattr(chart, "hconcat"):
        return chart
    chart = chart.copy(deep=True)
    chart.hconcat = [c.properties(width=width) for c in chart.hconcat]
    return chart


# The comparison's later tables (the first: time and memory, each ratio beside its metric): build and graph; then
