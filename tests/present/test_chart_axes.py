"""Charts read alike: one tick-label rule per axis (``format.AXIS_LABELS``, set by ``report.chart_spec``: plain
from 0.001 up, scientific below, never "1e-7" beside "0.000001"), charts shown side by side the same width with a
source legend each, and a swept axis that spans the data, not a nice round range around it. Tick labels are read
from the SVG that vl-convert (the PNG exporter's renderer) draws."""

from __future__ import annotations

import json
import re
from pathlib import Path

import altair as alt
import pandas as pd
import pytest

from rnnlab.core import baseline
from rnnlab.present import report, unrolling as U

vlc = pytest.importorskip("vl_convert")
BUNDLED = Path(__file__).resolve().parents[2] / "data" / "baseline"


def tick_labels(spec: dict) -> list[list[str]]:
    """Each axis's tick labels as drawn."""
    svg = vlc.vegalite_to_svg(spec)
    groups = re.findall(r'role-axis-label"[^>]*>(.*?)</g>', svg, re.S)
    return [[t for t in re.findall(r">([^<>]+)</text>", g)] for g in groups]


def _number(label: str) -> float:
    return float(label.replace(",", "").replace("−", "-"))


@pytest.mark.parametrize("values", [[1e-7, 3e-6, 4e-4, 2e-2], [2e-6, 5e-6, 8e-6], [0.002, 0.5, 30, 900], [25, 400],
                                    [1500, 250_000]])
@pytest.mark.parametrize("log", [True, False])
def test_one_tick_label_rule_per_axis(values, log):
    df = pd.DataFrame({"v": values, "y": range(len(values))})
    chart = alt.Chart(df).mark_point().encode(x=alt.X("v:Q", scale=alt.Scale(type="log" if log else "linear")),
                                              y="y:Q")
    spec = report.chart_spec(chart)
    labels = [x for axis in tick_labels(spec) for x in axis]
    assert labels
    plain = json.loads(json.dumps(spec))
    for ch in ("x", "y"):
        plain["encoding"][ch]["axis"].pop("labelExpr")
    assert len(labels) == sum(map(len, tick_labels(plain)))  # the ticks Vega labels, no more (a log axis: some)
    for text in labels:
        v = abs(_number(text))
        if 0.001 <= v < 1000 or v == 0:
            assert "e" not in text, (text, labels)  # never scientific between 0.001 and 1000
        elif v < 0.001:
            assert re.fullmatch(r"-?\d(\.\d+)?e-\d+", text), (text, labels)  # below: always scientific ("1e-7")
        else:
            assert "e" not in text and ("," in text or v < 1000), (text, labels)  # "250,000", not "2.5e+5"


def test_a_chosen_format_is_kept_and_no_axis_is_left_without_the_rule():
    df = pd.DataFrame({"acc": [0.5, 0.9], "n": ["a", "b"]})
    spec = report.chart_spec(alt.Chart(df).mark_bar().encode(x=alt.X("acc:Q", axis=alt.Axis(format="%")), y="n:N"))
    assert spec["encoding"]["x"]["axis"] == {"format": "%"} and "axis" not in spec["encoding"]["y"]


@pytest.fixture(scope="module")
def unrolling_view():
    recs = baseline.load(BUNDLED)
    assert recs
    return U.view(recs, {})


@pytest.mark.slow  # a whole page's Altair charts
def test_charts_side_by_side_are_one_width_with_a_source_legend_each(unrolling_view):
    by_title = {cv.title: cv.spec for cv in unrolling_view.charts}
    for row in U.CHART_ROWS:
        specs = [by_title[t] for t in row if t in by_title]
        assert len(specs) == len(row), (row, list(by_title))
        assert len({s.get("width") for s in specs}) == 1, row  # the same width (the build/graph pair was narrower)
        for t, s in zip(row, specs):
            layers = s.get("layer") or [s]
            dash = [lay["encoding"]["strokeDash"] for lay in layers if "strokeDash" in lay.get("encoding", {})]
            assert dash and dash[0].get("legend") is not None, f"{t}: no source legend"
            assert "hconcat" not in s


@pytest.mark.slow  # a whole page's Altair charts
def test_a_sweep_axis_spans_its_data(unrolling_view):
    recs = [r for r in baseline.load(BUNDLED) if r.experiment == "unroll"]
    views = [v for sweep in report.sweep_sets(recs, "seq_len") for v in U.sweep_views(sweep, sweep[0].params)]
    assert views
    for _, chart, _ in views:
        spec = report.chart_spec(chart)
        xs = sorted({row["seq_len"] for data in spec["datasets"].values() for row in data if "seq_len" in row})
        for lay in spec.get("layer", [spec]):
            x = lay.get("encoding", {}).get("x")
            if x and x.get("scale", {}).get("domain"):
                assert x["scale"]["domain"] == [xs[0], xs[-1]] and x["scale"].get("nice") is False
        labels = [_number(t) for axis in tick_labels(spec)[:1] for t in axis]
        assert min(labels) >= xs[0] and max(labels) <= xs[-1], (labels, xs)  # not 10 to 1000 for 25 to 400


def test_a_log_axis_over_many_decades_is_ticked_at_powers_of_ten():
    """Vega's crowded log ticks left labels such as 9e-7, 8e-6, 7e-5 on the drift chart."""
    import math

    df = pd.DataFrame({"v": [1e-7, 3e-6, 4e-4, 5e-3], "y": range(4)})
    chart = alt.Chart(df).mark_point().encode(x=alt.X("v:Q", scale=alt.Scale(type="log")), y="y:Q"
                                              ).properties(width=250)
    xs = [_number(t) for t in tick_labels(report.chart_spec(chart))[0]]
    assert len(xs) >= 2 and all(abs(math.log10(v) - round(math.log10(v))) < 1e-9 for v in xs), xs
