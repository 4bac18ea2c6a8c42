"""The Variable lengths page's views without TensorFlow or Streamlit (fast): which records stand (one configuration
on one machine per view), provenance words, style, seed 003's verdict against the Claims table, and the page as a
Report (``python -m rnnlab export --experiment varlen|padding|seed003``) cell by cell."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from rnnlab.core import rules
from rnnlab.core.record import Record
from rnnlab.core.store import Store
from rnnlab.core.views import TableView
from rnnlab.engine import api
from rnnlab.experiments import seeds
from rnnlab.judge import claims, select
from rnnlab.present import style
from rnnlab.present import varlen as vv
from tests.factories import BOX_ENV, BUNDLED_XEON_ENV, quick_values, record

HERE_ENV, OTHER_ENV = BOX_ENV, BUNDLED_XEON_ENV
# "here" words a figure from another machine must never carry ("not measured here" is the bundled label)
HERE_WORDS = re.compile(r"(?<!not )measured here|on this machine|this machine's|\bhere\b", re.I)

VARLEN_P = {"cell": "lstm", "units": 8, "batch": 4, "seq_len": 8, "input_dim": 4, "lengths": "rows:8/5/2/1",
            "device": "cpu", "seed": 0, "timeout_s": 600, "zero_output_for_mask": False}
PADDING_P = {"cell": "lstm", "units": 16, "batch": 16, "seq_len": 20, "input_dim": 8, "lengths": "uniform:2-20",
             "parallel_iterations": 32, "device": "cpu", "repeats": 2, "warmup": 0, "seed": 0, "timeout_s": 900,
             "n_sequences": 48, "buckets": 2, "n_classes": 10}
S003_P = {**seeds.SEED_003, "parallel_iterations": 200, "device": "cpu", "seed": 0, "timeout_s": 1800, "interval": 100,
          "steps": 100, "n_data": 1000}
S003_SMALL = {**S003_P, "units": 8, "batch": 8, "seq_len": 8, "input_dim": 4, "lengths": "fixed:3", "interval": 2,
              "steps": 3, "n_data": 16}


def rec(experiment, variant, params, metrics, *, source="local", env=HERE_ENV, details=None, error=None,
        created_at="2024-01-01T00:00:00Z") -> Record:
    key = f"{source}-{env['machine']}-{experiment}-{variant}-{json.dumps(params, sort_keys=True)}-{created_at}"
    return record(experiment, variant, params, env=env, key=hashlib.sha256(key.encode()).hexdigest(),
                  created_at=created_at, error=error, details=details, source=source, **metrics)


def varlen_recs(**kw) -> list[Record]:
    hm = {"z": [[1.0, 1.0, 1.0, 1.0], [1.0, 0.5, 0.0, 0.0]], "steps": [0, 4], "lengths": [8, 5, 2, 1]}
    out = []
    for v in ("tf1_static", "tf1_dynamic", "keras_mask_arg", "keras_nolen"):
        ok = v.startswith("tf1")
        m = {"check_outputs_zero": float(ok), "check_state_carried": float(ok or v == "keras_mask_arg"),
             "check_final_state": float(ok or v == "keras_mask_arg"), "final_state_err": 1e-7 if v != "keras_nolen"
             else 0.2, "valid_output_err": 1e-7}
        m["checks_passed"] = m["check_outputs_zero"] + m["check_state_carried"] + m["check_final_state"]
        d = {"past_length_outputs": "zero" if ok else "carried" if v == "keras_mask_arg" else "other", "heatmap": hm,
             "checks": {"outputs_zero": {"checked": 12}}}
        out.append(rec("varlen", v, VARLEN_P, m, details=d, **kw))
    return out


def padding_recs(**kw) -> list[Record]:
    out = []
    for i, v in enumerate(("pad_global", "bucket", "static_fixed", "dynamic_bucket")):
        m = {"train_seq_per_s": 100.0 + 50 * i, "fwd_seq_per_s": 300.0 + i, "wasted_pct": 40.0 - 5 * i,
             "loop_wasted_pct": 10.0, "n_shapes": 2.0, "builds": 1.0 if v.endswith(("fixed", "bucket")) else 4.0,
             "build_s": 1.5, "first_epoch_train_s": 2.0, "train_epoch_s": 0.5, "graph_nodes": 1234.0}
        out.append(rec("padding", v, PADDING_P, m, **kw))
    return out


def s003_recs(static=(20.0, 30.0), dynamic=(5.0, 1.0), params=S003_P, **kw) -> list[Record]:
    def m(sps, build):
        return {"steps_per_s": sps, "build_s": build, "first_interval_steps_per_s": sps / 3, "first_step_s": 1.0,
                "together_s": build + 10, "graph_nodes": 5000.0, "cell_steps_run": 20.0, "loop_steps_max": 20.0}

    return [rec("seed003", "static", params, m(*static), **kw), rec("seed003", "dynamic", params, m(*dynamic), **kw)]


# -- which records stand -----------------------------------------------------------------------------------------------
def test_one_machine_per_view_never_a_ratio_across_machines():
    # this machine measured only static (fast); the bundled machine measured both: the table shows one machine
    here = [s003_recs(static=(50.0, 1.0))[0]]
    there = s003_recs(source="baseline", env=OTHER_ENV)
    table = vv.seed003_table(here + there)
    by = {row[0]: row for row in table.rows}
    warm = by["steps/s once warm (the seed's steps 101 -> 201)"]
    assert warm[3:] == ("20.0", "5.00", "4.00x (4.00–4.00)")  # the bundled pair, not 50 (here) / 5 (bundled)
    assert "bundled results (not measured here)" in table.caption
    shown = vv.standing(here + there, "seed003")
    assert select.comparable(shown) and {r.variant for r in shown} == {"static", "dynamic"}
    # the page's selection for these settings: the headline group, and the other machine named, not mixed in
    plan = api.plan("seed003", preset="seed")
    sel = vv.selection(here + there, plan)
    assert select.comparable(sel.records) and [r.variant for r in sel.records] == ["static", "dynamic"]
    assert sel.others and "this machine" not in " ".join(sel.others)


def test_views_reduce_to_one_configuration():
    small = s003_recs(params=S003_SMALL, static=(9.0, 2.0), dynamic=(9.0, 1.0), created_at="2025-01-01T00:00:00Z")
    seed = s003_recs()
    # the seed configuration is the headline (select.headline), whatever is newer
    assert vv.standing(small + seed, "seed003")[0].params["units"] == 200
    assert vv.seed003_verdict(small + seed).status == claims.verdict("s003_static_runs_faster", seed).status


# -- provenance --------------------------------------------------------------------------------------------------------
def _texts(tab: vv.TabViews) -> list[str]:
    out = [tab.title, tab.table.title, tab.table.caption, *tab.table.columns]
    if tab.chart_view is not None:
        out.append(json.dumps(tab.chart_view.spec))
    return out


@pytest.mark.parametrize("name", vv.EXPERIMENTS)
def test_bundled_views_say_whose_machine(name):
    make = {"varlen": varlen_recs, "padding": padding_recs, "seed003": s003_recs}[name]
    tab = vv.views(name, make(source="baseline", env=OTHER_ENV))
    for text in _texts(tab):
        assert not HERE_WORDS.search(text.replace("not measured here", "")), text[:300]
    assert "Bundled Xeon" in tab.table.caption
    local = vv.views(name, make())
    assert "measured here" in local.table.caption
    if name == "seed003":
        assert "static (bundled)" in tab.table.columns and "static (this machine)" in local.table.columns
        v = vv.seed003_verdict(make(source="baseline", env=OTHER_ENV))
        assert not HERE_WORDS.search(v.text.replace("not measured here", ""))
        assert "On the bundled results' CPU (Bundled Xeon, 2 cores)" in v.text
    if name == "padding":
        text = vv.seed001_comparison(make(source="baseline", env=OTHER_ENV))
        assert "bundled results' CPU" in text and not HERE_WORDS.search(text)
    assert vv.not_here_note(make(source="baseline", env=OTHER_ENV)).startswith("Bundled results from Bundled Xeon")
    assert vv.not_here_note(make()) is None


# -- style -------------------------------------------------------------------------------------------------------------
def _find(spec, key):
    if isinstance(spec, dict):
        if key in spec:
            yield spec[key]
        for v in spec.values():
            yield from _find(v, key)
    elif isinstance(spec, list):
        for v in spec:
            yield from _find(v, key)


def test_charts_colour_variants_and_mark_sources_as_every_page():
    s3 = vv.seed003_chart(s003_recs(source="baseline", env=OTHER_ENV)).to_dict()
    enc = s3["encoding"]
    assert enc["color"]["field"] == "variant"
    assert enc["color"]["scale"]["range"] == [style.variant_color(v) for v in enc["color"]["scale"]["domain"]]
    assert enc["shape"]["field"] == "source"
    assert dict(zip(enc["shape"]["scale"]["domain"], enc["shape"]["scale"]["range"]))["bundled"] == \
        style.SOURCE_SHAPES["baseline"]
    cost = vv.cost_chart(padding_recs(source="baseline", env=OTHER_ENV)).to_dict()
    colors = [c for c in _find(cost, "color") if isinstance(c, dict)]
    assert colors and all(c["field"] == "variant" for c in colors)
    dashes = [d for d in _find(cost, "strokeDash") if isinstance(d, dict)]
    assert dashes and all(d["field"] == "source" for d in dashes)
    assert dashes[0]["scale"]["range"] == [style.SOURCE_DASH["baseline"]]


# -- thresholds --------------------------------------------------------------------------------------------------------
def test_seed001_comparison_uses_the_rules_margin():
    recs = padding_recs()
    s, d = [r for r in recs if r.variant in ("static_fixed", "dynamic_bucket")]

    def with_rates(a, b):
        return [r.with_(metrics={**r.metrics, "train_seq_per_s": x},
                        rounds=tuple({**m, "train_seq_per_s": x} for m in r.rounds)) for r, x in ((s, a), (d, b))]
    just = 100.0 / (1 - rules.MARGIN) + 0.5  # dynamic saves a little more than MARGIN of static's time per sequence
    assert "dynamic_rnn over buckets trains **1.12x faster** than static_rnn" in vv.seed001_comparison(
        with_rates(100.0, just))
    assert "trains **about as fast** as static_rnn" in vv.seed001_comparison(with_rates(100.0, 105.0))
    assert "trains **1.12x slower** than static_rnn" in vv.seed001_comparison(with_rates(just, 100.0))


def test_conclusion_holds_only_when_both_claims_hold():
    assert vv.conclusion(["holds", "holds"]) == "holds"
    assert vv.conclusion(["holds", "does not hold"]) == "does not hold"
    assert vv.conclusion(["depends", "holds"]) == "depends"
    assert vv.conclusion(["does not hold", "depends"]) == "does not hold"
    assert vv.conclusion(["not measured", "holds"]) == "not measured"
    assert set(vv.conclusion([a, b]) for a in rules.STATUSES for b in rules.STATUSES) <= set(rules.STATUSES)


# -- the page as a Report, exported ------------------------------------------------------------------------------------
def md_tables(text: str) -> list[tuple[str, list[list[str]]]]:
    """The pipe tables of an exported Markdown file: (title, [header row, rows...]), cells unescaped."""
    out: list[tuple[str, list[list[str]]]] = []
    title = None
    for line in text.splitlines():
        if line.startswith("## "):
            title = line[3:]
        elif line.startswith("| ") and title is not None:
            if not out or out[-1][0] is not title:
                out.append((title, []))
            cells = [c.strip().replace("\\|", "|").replace("<br>", "\n")
                     for c in re.split(r"(?<!\\) \| ", line[2:-2])]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                out[-1][1].append(cells)
    return out


def as_rows(view: TableView) -> list[list[str]]:
    return [list(view.columns)] + [list(r) for r in view.rows]


@pytest.mark.parametrize("experiment", vv.EXPERIMENTS)
def test_export_writes_the_pages_tables_cell_by_cell(experiment, tmp_path):
    from rnnlab.commands import export

    make = {"varlen": varlen_recs, "padding": padding_recs, "seed003": s003_recs}[experiment]
    here = make()
    other = make(env=OTHER_ENV)  # another machine's records of the same configuration (imported into the store)
    Store().put_many(here + other)
    paths = export.run(fmt="md", out=str(tmp_path / "v.md"), experiment=experiment)
    tables = md_tables(paths[0].read_text())
    assert len(tables) == 2  # one table per machine, never one table across both
    for recs in (here, other):  # each machine's page view, as the page builds it for its records
        page = vv.views(experiment, recs).table
        assert as_rows(page) in [rows for _, rows in tables], page.title
        # one configuration from two machines: the titles say whose (tables.machine_labels)
        assert any(t.startswith(page.title + " (") and f"TF {recs[0].env['tf']}" in t for t, _ in tables)
    assert len({t for t, _ in tables}) == 2


@pytest.mark.slow  # Altair charts of a whole report
def test_report_holds_one_table_per_configuration_and_machine():
    recs = (varlen_recs() + padding_recs() + s003_recs() + s003_recs(source="baseline", env=OTHER_ENV)
            + s003_recs(params=S003_SMALL))
    rep = vv.report(recs)
    assert len(rep.tables) == 1 + 1 + 3
    for t in rep.tables:
        assert any(as_rows(t) == as_rows(vv.views(n, g).table) for n in vv.EXPERIMENTS
                   for g in [list(x.records.values()) for x in select.groups(recs, experiment=n)])
    assert rep.tables[2].title.startswith("Seed 003 reproduced") and "200" in rep.tables[2].title
    assert len(rep.charts) == 5
    with pytest.raises(vv.RnnlabError, match="run one first"):
        vv.report([])


def test_cli_command_is_plan_command():
    q = quick_values("varlen")
    assert vv.cli_command("varlen", {**q, "units": 9}, ["tf1_static"]) == \
        api.plan("varlen", overrides={**q, "units": 9}, variants=["tf1_static"]).command()
