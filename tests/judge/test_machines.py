"""Records from two machines are never joined: no chart line, comparison ratio or finding mixes them; bundled records
never read as measured here.

Two machines at the same configuration and a seq_len sweep: (a) two environment fingerprints (another TensorFlow
and CPU), (b) the same CPU name and versions but a matmul rate of 60 against 307 GFLOP/s (two VMs). The numbers
differ by machine, so a ratio or a line that joined them would show.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections import defaultdict

import pytest

from rnnlab import experiments
from rnnlab.core import baseline
from rnnlab.core import format as fmt
from rnnlab.core.record import Record
from rnnlab.judge import findings, select
from rnnlab.present import charts, report, tables
from rnnlab.present import unrolling as U
from tests.apptest_util import bundled_page, no_errors, no_run_left_behind, open_app  # noqa: F401
from tests.factories import XEON_ENV, XEON_FAST_ENV, record

EXP = experiments.get("unroll")
SEED = {k: v for k, v in EXP.presets["seed"].items() if k != "variants"}
ENV = XEON_ENV
# (a) another fingerprint: another CPU and TensorFlow
OTHER_FP = {**ENV, "cpu": "AMD EPYC 7B13", "device_name": "AMD EPYC 7B13", "machine": "AMD EPYC 7B13, 2 cores",
            "tf": "2.15.0"}
# (b) the same CPU name and versions, five times the matmul rate
FAST_VM = XEON_FAST_ENV
CASES = {
    "fingerprint, both this store": (("local", ENV), ("local", OTHER_FP)),
    "matmul rate, both imported": (("imported", ENV), ("imported", FAST_VM)),
    "matmul rate, this store and bundled": (("local", ENV), ("baseline", FAST_VM)),
}
# per machine: forward ms at 100 steps of (tf1_static, tf1_dynamic), and a factor for everything else
SPEED = ({"tf1_static": 10.0, "tf1_dynamic": 15.0, "scale": 1.0}, {"tf1_static": 3.0, "tf1_dynamic": 1.0, "scale": 0.2})


def rec(variant: str, source: str, env: dict, *, seq_len: int = 100, fwd: float, scale: float) -> Record:
    params = EXP.params.fill({**SEED, "seq_len": seq_len})
    params["device"] = "cpu"
    key = hashlib.sha256(f"{variant}{sorted(params.items())}{source}{sorted(env.items())}".encode()).hexdigest()
    n = seq_len / 100
    metrics = {"fwd_ms": fwd * n, "train_ms": 2 * fwd * n, "build_s": (0.05 if variant == "tf1_dynamic" else 0.5)
               * scale * n, "graph_nodes": 100.0 * n, "peak_mem_mb": 100 * scale, "gflops": 50.0 / fwd,
               "roofline_frac": 0.1}
    return record("unroll", variant, params, env=env, key=key, created_at="2026-01-01T00:00:00Z", source=source,
                  **metrics)


def machine_records(source: str, env: dict, speed: dict, lengths=(25, 50, 100, 200)) -> list[Record]:
    return [rec(v, source, env, seq_len=n, fwd=speed[v], scale=speed["scale"]) for n in lengths
            for v in ("tf1_static", "tf1_dynamic")]


def two_machines(case: str) -> list[Record]:
    (sa, ea), (sb, eb) = CASES[case]
    # machine A sweeps 25..100, machine B 100..400: joined, a line would turn at 100 (the false V)
    return machine_records(sa, ea, SPEED[0], (25, 50, 100)) + machine_records(sb, eb, SPEED[1], (100, 200, 400))


@functools.cache
def case_report(case: str):
    """The Unrolling report of a case's records (deterministic keys), built once and read by the chart and the ratio
    tests: drawing its charts takes seconds."""
    return U.report(two_machines(case))


# -- Vega-Lite: which records a mark joins ---------------------------------------------------------------------------
def units(spec: dict, datasets: dict | None = None, data: dict | None = None):
    """(unit spec, its data rows) for every mark of a (layered / concatenated) Vega-Lite spec."""
    datasets = {**(datasets or {}), **spec.get("datasets", {})}
    data = spec.get("data", data)
    if "mark" in spec:
        rows = data.get("values") if "values" in data else datasets[data["name"]]
        yield spec, rows
    for k in ("layer", "hconcat", "vconcat", "concat"):
        for sub in spec.get(k, []):
            yield from units(sub, datasets, data)


def _field(enc: dict, channel: str) -> str | None:
    c = enc.get(channel)
    return c.get("field") if isinstance(c, dict) else None


def joined(spec: dict) -> list[set]:
    """Per line (marks grouped by colour, detail and dash) or bar (by its y category): the records' keys."""
    out = []
    for unit, rows in units(spec):
        mark = unit["mark"]["type"] if isinstance(unit["mark"], dict) else unit["mark"]
        enc = unit.get("encoding", {})
        if mark == "line":
            fields = [f for f in (_field(enc, c) for c in ("color", "detail", "strokeDash")) if f]
        elif mark == "bar":
            fields = [_field(enc, "y")]
        else:
            continue
        groups = defaultdict(set)
        for row in rows:
            groups[tuple(row.get(f) for f in fields)].add(row["key"])
        out += list(groups.values())
    return out


def machines_of(keys: set, records: list[Record]) -> set:
    by_key = {r.key: r for r in records}
    return {select.machine_key(by_key[k]) for k in keys}


# -- the two machines are told apart ------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES)
def test_the_two_records_sets_are_two_machines(case):
    recs = two_machines(case)
    assert len({select.machine_key(r) for r in recs}) == 2
    assert not select.comparable(recs)


@pytest.mark.slow  # Altair: every chart and report of two machines
@pytest.mark.parametrize("case", CASES)
def test_no_chart_line_or_bar_joins_two_machines(case):
    recs = two_machines(case)
    at_100 = [r for r in recs if r.params["seq_len"] == 100]
    mixed_shown = [r for r in at_100 if (r.variant == "tf1_static") == (select.machine_key(r) == select.machine_key(
        recs[0]))]  # static from A, dynamic from B: what a page shows when each machine has one of them
    built = [charts.step_time(at_100), charts.step_time(at_100, "train_ms"), charts.build_time(at_100), charts.graph_size(at_100),
             charts.memory(at_100), charts.gflops(at_100), charts.gflops(mixed_shown)]
    built += [charts.sweep(recs, metric=m) for m in ("fwd_ms", "train_ms", "build_s")]
    point = EXP.params.fill(SEED)
    built += [c for c, _ in U.chart_views(at_100, point)] + [c for _, c, _ in U.sweep_views(recs, point)]
    rep = case_report(case)
    specs = [c.to_dict() for c in built if c is not None] + [cv.spec for cv in rep.charts]
    assert len(specs) >= 20
    n_lines = 0
    for spec in specs:
        for keys in joined(spec):
            assert len(machines_of(keys, recs)) == 1, (spec.get("title"), keys)
        n_lines += sum(1 for unit, _ in units(spec) if unit["mark"] == "line" or
                       (isinstance(unit["mark"], dict) and unit["mark"].get("type") == "line"))
    assert n_lines >= 6  # the sweeps were drawn: one line per variant and machine
    sweep = charts.sweep(recs).to_dict()
    assert len(joined(sweep)) == 4  # two variants x two machines


@pytest.mark.parametrize("case", CASES)
def test_a_sweep_of_two_machines_says_which_machine_each_mark_comes_from(case):
    """Both machines' records may share a source (two bundled machines): the machine, not the source, is then what
    a line's dash and a point's shape say, with a legend titled "machine"; one machine keeps the source."""
    recs = two_machines(case)
    for spec, who in ((charts.sweep(recs).to_dict(), "machine"),
                      (charts.sweep([r for r in recs if select.machine_key(r) == select.machine_key(recs[0])])
                       .to_dict(), "source")):
        marks = {(unit["mark"]["type"] if isinstance(unit["mark"], dict) else unit["mark"]): unit.get("encoding", {})
                 for unit, _ in units(spec)}
        assert marks["line"]["strokeDash"]["field"] == who and marks["point"]["shape"]["field"] == who
        assert marks["point"]["shape"].get("title") == who
    labels = set(select.machine_labels(recs).values())
    rows = [row for unit, rows in units(charts.sweep(recs).to_dict()) for row in rows]
    assert {row["machine"] for row in rows} == labels and len(labels) == 2


@pytest.mark.parametrize("case", CASES)
def test_the_gflops_rule_is_each_machines_own_matmul_rate(case):
    recs = [r for r in two_machines(case) if r.params["seq_len"] == 100]
    one = [r for r in recs if select.machine_key(r) == select.machine_key(recs[0])]
    assert charts.gflops(one).to_dict()["title"] == \
        f"Achieved GFLOP/s vs matmul rate {fmt.fmt_rate(select.matmul_rate(one[0]))} (dashed)"
    spec = charts.gflops(recs).to_dict()
    assert spec["title"] == "Achieved GFLOP/s vs each machine's matmul rate (dashed)"
    (rule_rows,) = [rows for unit, rows in units(spec) if unit["mark"]["type"] == "rule"]
    per_machine = {select.machine_key(r): select.matmul_rate(r) for r in recs}
    assert sorted(r["rate"] for r in rule_rows) == sorted(per_machine.values())  # one rule per machine


def _allowed_ratios(recs: list[Record], metric: str) -> tuple[set, set]:
    """Ratios of ``metric`` between records of one machine and one length, and between two machines."""
    same, cross = set(), set()
    for a in recs:
        for b in recs:
            if a.params["seq_len"] == b.params["seq_len"] and b.variant == "tf1_dynamic":
                ratio = round(a.metrics[metric] / b.metrics[metric], 9)
                (same if select.machine_key(a) == select.machine_key(b) else cross).add(ratio)
    return same, cross


@pytest.mark.slow  # Altair: the report's tables come with its charts
@pytest.mark.parametrize("case", CASES)
def test_no_comparison_ratio_mixes_two_machines(case):
    recs = two_machines(case)
    at_100 = [r for r in recs if r.params["seq_len"] == 100]
    same, cross = _allowed_ratios(recs, "fwd_ms")
    assert not same & cross  # the numbers tell the two apart
    views = [tables.comparison(at_100, reference="tf1_dynamic")]
    views += report.experiment_views(recs)[0] + [t for t in case_report(case).tables if "forward vs tf1_dynamic" in
                                                   t.columns]
    n = 0
    for view in views:
        col = list(view.columns).index("forward vs tf1_dynamic")
        for row in view.raw:
            if row[col] is not None:
                n += 1
                assert round(row[col], 9) in same and round(row[col], 9) not in cross, (view.title, row)
    assert n >= 8
    # each machine has only one of the two variants: no ratio across them, and the table says whose each row is
    a, b = at_100[0], at_100[3]
    assert a.variant == "tf1_static" and b.variant == "tf1_dynamic" and select.machine_key(a) != select.machine_key(b)
    view = tables.comparison([a, b], reference="tf1_dynamic")
    assert "measured on" in view.columns
    col = list(view.columns).index("forward vs tf1_dynamic")
    assert [row[col] for row in view.raw] == [None, 1.0]  # static: its machine has no reference; the reference: 1


@pytest.mark.parametrize("case", CASES)
def test_no_finding_quotes_a_ratio_across_two_machines(case):
    recs = two_machines(case)
    answered = findings.answer(recs)
    quoted = [f for _, fs in answered for f in fs]
    assert quoted
    same, cross = _allowed_ratios(recs, "fwd_ms")
    for f in quoted:
        if "fwd_ratio" in f.numbers:
            assert round(f.numbers["fwd_ratio"], 9) in same and round(f.numbers["fwd_ratio"], 9) not in cross
    # only the two machines together have both variants, or three sweep lengths: nothing to say
    a = [r for r in recs if r.variant == "tf1_static" and r.key in {x.key for x in recs[:6]}]
    b = [r for r in recs if r.variant == "tf1_dynamic" and r.key in {x.key for x in recs[6:]}]
    assert findings.pair_finding(a + b, "tf1_static", "tf1_dynamic", "a", "b") == []
    statics = [r for r in recs if r.variant == "tf1_static" and r.params["seq_len"] in (25, 50, 200, 400)]
    assert findings.build_scaling(statics) == []  # 2 + 2 lengths on two machines: no sweep of 3


def test_the_headline_quotes_the_seed_configuration_not_the_latest_run():
    older = machine_records("local", ENV, SPEED[0], (100,))
    newer = [r.with_(params={**r.params, "units": 64}, created_at="2026-06-01T00:00:00Z", key=r.key[::-1])
             for r in machine_records("local", ENV, SPEED[1], (100,))]
    for f in [f for _, fs in findings.answer(older + newer) for f in fs]:
        assert f.query["units"] == "128", f.headline


# -- bundled records never read as measured here -------------------------------------------------------------------
_HERE = re.compile(r"(?<!not )measured here|on this machine", re.I)  # "(not measured here)" is the bundled label


def here_words(text: str) -> list[str]:
    return _HERE.findall(text)


@pytest.fixture
def bundled_only(monkeypatch):
    monkeypatch.delenv("RNNLAB_BASELINE")  # the real data/baseline, an empty store (as tests/pages/test_hosted.py)
    recs = baseline.load()
    assert recs and {r.source for r in recs} == {"baseline"}
    return recs


@pytest.mark.slow  # every bundled result through the report
def test_bundled_findings_tables_and_charts_never_say_measured_here(bundled_only):
    recs = [r for r in bundled_only if r.experiment == "unroll"]
    texts = []
    for _, fs in findings.answer(recs):
        texts += [f.headline + " " + f.detail for f in fs]
    assert texts and all("bundled" in t for t in texts)
    rep = U.report(recs)
    texts += [rep.title, rep.subtitle] + [t.title + " " + t.caption + " " + json.dumps(t.rows) for t in rep.tables]
    texts += [c.title + " " + c.caption + " " + json.dumps(c.spec.get("title", "")) for c in rep.charts]
    tvs, cvs = report.experiment_views(recs)
    texts += [t.title + " " + t.caption for t in tvs] + [c.title + " " + c.caption for c in cvs]
    point = EXP.params.fill(SEED)
    shown = [r for r in recs if select.config_of(r) == select.config_of(point)]
    texts += [U.gflops_note(shown), U.caption(shown, point)] + [s.text for s in U.findings_text(shown, recs)]
    assert not [w for t in texts for w in here_words(t)], [t for t in texts if here_words(t)]


def _page_text(at) -> str:
    parts = []
    for root in (at, at.sidebar):
        for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning", "success", "error"):
            parts += [str(e.value) for e in getattr(root, kind)]
    parts += [e.label for e in at.expander] + [b.label for b in at.button]
    parts += [t.label for t in at.tabs]
    parts += [c.proto.spec for c in at.get("vega_lite_chart")]
    for df in at.dataframe:
        parts.append(df.value.to_csv())
    return "\n".join(parts)


@pytest.mark.slow  # Streamlit AppTest
@pytest.mark.parametrize("page", ["pages/overview.py", "pages/unrolling.py", "pages/results.py"])
def test_bundled_pages_never_say_measured_here(bundled_only, page):
    at = bundled_page(page)  # the bundled results, an empty store: rendered once, shared with test_page_text
    no_errors(at)
    text = _page_text(at)
    assert "bundled" in text.lower()
    assert not here_words(text), [ln for ln in text.splitlines() if here_words(ln)]


@pytest.mark.slow  # Streamlit AppTest
def test_the_sidebar_and_the_gflops_chart_quote_one_matmul_rate():
    from rnnlab.core import envinfo
    from rnnlab.core.store import Store
    from rnnlab.engine import api

    if envinfo.gpu_hint():
        pytest.skip("this machine may have a GPU: a run here records the GPU's probe")
    Store().meta_set(api.probe_key("CPU"), json.dumps({"matmul_gflops": 123.456}))
    env = api.known_env(Store(), "auto")  # the env a run here records
    local = [rec(v, "local", env, fwd=f, scale=1.0) for v, f in (("tf1_static", 10.0), ("tf1_dynamic", 15.0))]
    rate = fmt.fmt_rate(select.matmul_rate(local[0]))
    assert rate == "123 GFLOP/s"
    assert rate in charts.gflops(local).to_dict()["title"]
    at = open_app()
    no_errors(at)
    assert f"matmul rate {rate}" in " ".join(c.value for c in at.sidebar.caption)


# -- the Results page's "by machine" view ------------------------------------------------------------------------------
@pytest.mark.parametrize("case", list(CASES))
def test_by_machine_gives_each_machine_its_own_column_and_never_divides_across(case):
    from rnnlab.present import results as R

    recs = two_machines(case)
    view = R.by_machine(recs, "fwd_ms")
    machines = view.columns[3:]
    assert len(machines) == 2 and len(set(machines)) == 2  # one column per machine, named apart
    rows = {(r[1], r[2]): r for r in view.raw}
    # seq_len 100 was measured on both: side by side, each its own figure (A: 10/15 ms, B: 3/1 ms)
    at_100 = {k[1]: v[3:] for k, v in rows.items() if "100 steps" in k[0]}
    assert sorted(at_100["tf1_static"]) == [3.0, 10.0] and sorted(at_100["tf1_dynamic"]) == [1.0, 15.0]
    # seq_len 25 only on A, 400 only on B: the other machine's cell is empty, not borrowed
    only = [v[3:] for k, v in rows.items() if "25 steps" in k[0] or "400 steps" in k[0]]
    assert only and all(sum(x is not None for x in cells) == 1 for cells in only)
    assert all(r.machine in view.caption for r in recs)  # each machine in full, once, in the caption
    assert all(len(m) <= R.SHORT_MACHINE + 3 for m in machines)  # headers whole at 1400 px ("bundled #2")
