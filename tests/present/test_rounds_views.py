"""Figures you can trust run to run, on the read path: hand-made records carrying ``rounds`` (no TensorFlow).

Intervals on every ratio (from the rounds, or from one round's quartiles), the noise flag "13.7 (! 23%)", the
impossible-result "check" column, the busy-machine caption, error bars on a sweep, and one-round (schema 1) records
still read with quartile intervals.
"""

import hashlib
import json

import pytest

from rnnlab.core import rules, stats
from rnnlab.core.record import parse_records
from rnnlab.judge import select
from rnnlab.present import charts, tables
from rnnlab.present import unrolling as U
from tests.factories import TEST_CPU_ENV, record

ENV = TEST_CPU_ENV
PARAMS = {"cell": "rnn", "layers": 1, "units": 32, "batch": 8, "seq_len": 20, "input_dim": 16, "dtype": "float32",
          "lengths": "full", "repeats": 5, "warmup": 1}


def rec(variant, rounds=(), *, params=None, details=None, source="local", **metrics):
    """A record of ``rounds`` (each a metrics dict; ``metrics`` the median, as the engine writes it), or of one
    round given as ``metrics``."""
    return record("unroll", variant, {**PARAMS, **(params or {})}, rounds, details=details, source=source, **metrics)


def cell(view, variant, column):
    return view.rows[[r[0] for r in view.rows].index(variant)][list(view.columns).index(column)]


def raw(view, variant, column):
    return view.raw[[r[0] for r in view.rows].index(variant)][list(view.columns).index(column)]


# -- intervals ---------------------------------------------------------------------------------------------------------
def three_rounds():
    ref = rec("tf1_dynamic", [{"fwd_ms": 10.0, "train_ms": 30.0}, {"fwd_ms": 10.5, "train_ms": 30.0},
                              {"fwd_ms": 9.5, "train_ms": 30.0}])
    static = rec("tf1_static", [{"fwd_ms": 6.0, "train_ms": 33.0}, {"fwd_ms": 6.6, "train_ms": 33.0},
                                {"fwd_ms": 6.3, "train_ms": 33.0}])
    return ref, static


def test_a_ratio_cell_carries_its_interval_from_the_rounds():
    ref, static = three_rounds()
    view = tables.comparison([static, ref], reference="tf1_dynamic")
    # per-round ratios 0.600, 0.629, 0.663: their median and 95% prediction interval (mean of the log ratios
    # +- t(0.975, 2 df) * s * sqrt(2 / 3), worked out by hand: 0.528-0.751)
    assert cell(view, "tf1_static", "forward vs tf1_dynamic") == "0.63x (0.53–0.75)"
    assert cell(view, "tf1_dynamic", "forward vs tf1_dynamic") == "1.00x"  # the reference against itself
    # the raw values keep the ratio in its column and carry low and high beside it, for CSV/JSON
    assert raw(view, "tf1_static", "forward vs tf1_dynamic") == pytest.approx(6.6 / 10.5)  # the median ratio
    assert raw(view, "tf1_static", "forward vs tf1_dynamic (low)") == pytest.approx(0.5284, abs=1e-4)
    assert raw(view, "tf1_static", "forward vs tf1_dynamic (high)") == pytest.approx(0.7513, abs=1e-4)
    assert len(view.raw[0]) == len(view.rows[0]) == len(view.columns)
    assert "95% prediction interval of the per-round ratios" in view.caption and "median of 3 rounds" in view.caption
    # the screen and the terminal show the cells without the raw bound columns
    shown = U.screen(view)
    assert not shown.role("bound") and len(view.role("bound")) == 2 * len(view.role("ratio"))
    text = tables.text_table(view)
    assert "0.63x (0.53–0.75)" in text and "(low)" not in text


def test_one_round_records_get_the_quartile_interval():
    ref = rec("tf1_dynamic", fwd_ms=10.0, fwd_ms_p25=9.0, fwd_ms_p75=11.0)
    static = rec("tf1_static", fwd_ms=6.0, fwd_ms_p25=5.5, fwd_ms_p75=6.5)
    view = tables.comparison([static, ref], reference="tf1_dynamic")
    # 5.5/11 .. 6.5/9
    assert cell(view, "tf1_static", "forward vs tf1_dynamic") == "0.60x (0.50–0.72)"
    assert "quartiles" in view.caption
    # no quartiles and one round: the ratio alone, no raw bound columns
    plain = tables.comparison([rec("tf1_static", fwd_ms=6.0, two=False), rec("tf1_dynamic", fwd_ms=10.0, two=False)],
                              reference="tf1_dynamic")
    assert cell(plain, "tf1_static", "forward vs tf1_dynamic") == "0.60x"
    assert not plain.role("bound")


def test_schema_1_records_still_read_as_one_round_with_quartile_intervals():
    def d(variant, i, fwd, lo, hi):
        return {"schema": 1, "key": hashlib.sha256(f"s1{i}".encode()).hexdigest(), "experiment": "unroll",
                "variant": variant, "params": PARAMS, "env": ENV, "created_at": "2024-01-01T00:00:00Z",
                "error": None, "metrics": {"fwd_ms": fwd, "fwd_ms_p25": lo, "fwd_ms_p75": hi}}

    recs = parse_records(json.dumps([d("tf1_static", 1, 6.0, 5.5, 6.5), d("tf1_dynamic", 2, 10.0, 9.0, 11.0)]))
    assert all(r.rounds == () and r.round_metrics == (r.metrics,) for r in recs)
    view = tables.comparison(recs, reference="tf1_dynamic")
    assert cell(view, "tf1_static", "forward vs tf1_dynamic") == "0.60x (0.50–0.72)"
    assert "(!" not in " ".join(" ".join(r) for r in view.rows)  # one round: nothing to flag


# -- noise, impossible figures, load ---------------------------------------------------------------------------------
def test_a_figure_whose_rounds_disagree_is_flagged_like_torch_benchmark_compare():
    noisy = rec("keras", [{"fwd_ms": 12.0}, {"fwd_ms": 13.7}, {"fwd_ms": 15.151}])  # (15.151 - 12) / 13.7 = 23%
    calm = rec("tf1_dynamic", [{"fwd_ms": 10.0}, {"fwd_ms": 10.2}, {"fwd_ms": 9.9}])  # 3%: not flagged
    assert rules.noisy(stats.spread(stats.round_values(noisy.round_metrics, "fwd_ms")))
    view = tables.comparison([noisy, calm], reference="tf1_dynamic")
    assert cell(view, "keras", "forward (ms)") == "13.7 (! 23%)"
    assert cell(view, "tf1_dynamic", "forward (ms)") == "10.0"
    assert raw(view, "keras", "forward (ms)") == 13.7  # the raw value stays a number
    assert "more than 10%" in view.caption
    # the CLI table shows the same cells
    assert "13.7 (! 23%)" in tables.text_table(view)
    assert tables.generic([noisy], title="t").rows[0][1] == "13.7 (! 23%)"
    assert tables.results_rows([noisy])[0]["check"] == "noisy: forward (ms) ! 23%"


def test_an_impossible_record_is_flagged_and_never_shown_plain():
    ok = rec("tf1_dynamic", fwd_ms=10.0, train_ms=30.0)
    plain = tables.comparison([ok], reference="tf1_dynamic")
    assert tables.CHECK not in plain.columns  # no flag, no column
    bad = rec("keras", fwd_ms=10.0, train_ms=4.0, roofline_frac=1.4)
    view = tables.comparison([bad, ok], reference="tf1_dynamic")
    assert tables.CHECK in view.columns
    text = cell(view, "keras", tables.CHECK)
    assert text.startswith("impossible: ") and "training step (4 ms) is faster than the forward step" in text
    assert "1.40 of the matmul rate" in text
    assert cell(view, "tf1_dynamic", tables.CHECK) == ""
    assert "1 row with figures that cannot be true" in view.caption
    assert text in tables.text_table(view)  # never cut in the terminal
    assert tables.results_rows([bad])[0]["check"] == text


def test_a_busy_machine_is_said_in_the_caption():
    calm = rec("tf1_dynamic", fwd_ms=10.0, details={"loadavg": [[0.2, 0.4], [0.3, 0.9]]})
    assert "busy" not in tables.comparison([calm], reference="tf1_dynamic").caption
    busy = rec("tf1_static", fwd_ms=6.0, details={"loadavg": [[0.5, 1.2], [2.6, 3.1]]})
    caption = tables.comparison([busy, calm], reference="tf1_dynamic").caption
    assert caption.count("measured on a busy machine: load 3.1 on 2 cores") == 1
    # one home: the source note every chart, verdict and slide carries says it too
    assert "measured on a busy machine" in select.source_note([busy, calm])
    assert "busy" not in select.source_note([calm])
    assert select.busy_note([rec("tf1_static", fwd_ms=1.0, details={"loadavg": ["x", None]})]) == ""  # unreadable
    # the run's own workers raise the load after its first reading: 2.4 on 2 cores after a quiet start is the run
    own = rec("tf1_static", fwd_ms=6.0, details={"loadavg": [[0.4, 2.4], [2.4, 1.9]]})
    assert select.busy_note([own]) == ""
    # the first reading too: read before this record's worker, but after the run's earlier variants (and the
    # previous make_baseline step), a load of 1.4 on 2 cores is what rnnlab's own workers leave behind
    early = rec("tf1_static", fwd_ms=6.0, details={"loadavg": [[1.4, 1.6]]})
    assert select.busy_note([early]) == ""
    loaded = rec("tf1_static", fwd_ms=6.0, details={"loadavg": [[3.2, 2.9]]})  # more than the run can explain
    assert select.busy_note([loaded]) == "measured on a busy machine: load 3.2 on 2 cores"


# -- sweeps ------------------------------------------------------------------------------------------------------------
def _marks(chart):
    return [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
            for layer in chart.to_dict()["layer"]]


def test_sweep_charts_get_error_bars_when_records_have_rounds():
    with_rounds = [rec(v, [{"fwd_ms": k * t}, {"fwd_ms": k * t * 1.2}, {"fwd_ms": k * t * 0.9}],
                       params={"seq_len": t}) for v, k in (("tf1_static", 0.1), ("tf1_dynamic", 0.2))
                   for t in (25, 50, 100)]
    chart = charts.sweep(with_rounds)
    assert "errorbar" in _marks(chart)
    bars = next(layer for layer in chart.to_dict()["layer"] if layer["mark"]["type"] == "errorbar")
    assert bars["encoding"]["y"]["field"] == "round_min" and bars["encoding"]["y2"]["field"] == "round_max"
    data = chart.to_dict()["datasets"]
    points = [p for ds in data.values() for p in ds if p.get("variant") == "tf1_static" and p.get("seq_len") == 50]
    assert any(p["round_min"] == pytest.approx(4.5) and p["round_max"] == pytest.approx(6.0) for p in points)
    one_round = [rec("tf1_static", fwd_ms=0.1 * t, params={"seq_len": t}, two=False) for t in (25, 50)]
    assert "errorbar" not in _marks(charts.sweep(one_round))


def test_two_machines_in_one_caption_each_say_their_own_condition():
    from tests.factories import TEST_CPU_ENV, record

    quiet = record("unroll", "tf1_static", {"seq_len": 25}, env={**TEST_CPU_ENV, "machine": "box A, 2 cores"},
                   source="baseline", details={"condition": {"threads": 2, "cores": 2, "other_cores": 0.0}},
                   fwd_ms=1.0)
    old = record("unroll", "tf1_static", {"seq_len": 100}, env={**TEST_CPU_ENV, "machine": "box B, 2 cores"},
                 source="baseline", details={"loadavg": [[3.3, 3.1]]}, fwd_ms=2.0)
    note = select.source_note([quiet, old])
    assert note == ("bundled results (not measured here) from CPU: box A, 2 cores (2 threads; 2 of 2 cores free "
                    "while timed); box B, 2 cores (measured on a busy machine: load 3.3 on 2 cores)")
