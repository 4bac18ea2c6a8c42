"""Importing results (issue 13): validated against the registry, never replacing this machine's measurements, never
a traceback; and reading a store that already holds bad records."""

import json

import pytest

from rnnlab import experiments
from rnnlab.cli import main
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record, make_key, parse_records
from rnnlab.core.store import Store
from rnnlab.engine import api
from rnnlab.judge import select
from tests.factories import ENV, FAKE, record, use_fakes
from tests.workers import FakeLauncher


def unroll_rec(i: int, *, experiment: str = "unroll", variant: str | None = None, params: dict | None = None,
               metrics: dict | None = None, env: dict | None = None) -> Record:
    """Unroll record ``i`` (the same key at every call), any field given instead."""
    exp = experiments.get("unroll")
    return record(experiment, variant or exp.variants[i % len(exp.variants)],
                  exp.params.fill({"seq_len": 10 + i}) if params is None else params, env=env or {"device": "CPU"},
                  key=make_key({"i": i}, {"tf": "x"}), created_at="2026-12-02T15:00:00Z", two=False,
                  **({"fwd_ms": 0.46} if metrics is None else metrics))


def file_of(records) -> str:
    return json.dumps([r.to_dict(with_transient=False) for r in records])


def test_an_import_never_replaces_a_local_measurement(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    local = [unroll_rec(i) for i in range(3)]
    store.put_many(local)
    theirs = [r.with_(metrics={"fwd_ms": 460.0}) for r in local] + [unroll_rec(7)]
    n = api.import_file(file_of(theirs), name="theirs.json", store=store)
    assert n == 1 and n.kept == 3 and n.kept_local == 3
    assert n.message == "imported 1 record; kept 3 records already measured here"
    got = {r.key: r for r in store.records()}
    assert all(got[r.key].metrics["fwd_ms"] == 0.46 and got[r.key].source == "local" for r in local)
    assert got[unroll_rec(7).key].source == "imported"
    again = api.import_file(file_of(theirs), name="theirs.json", store=store)  # a second import adds nothing
    assert again == 0 and again.kept == 4 and "1 record already in the store" in again.message


def test_the_import_command_reports_what_it_kept(tmp_path, monkeypatch, capsys):
    path = tmp_path / "s.sqlite"
    monkeypatch.setenv("RNNLAB_STORE", str(path))
    Store(path).put_many([unroll_rec(1)])
    f = tmp_path / "in.json"
    f.write_text(file_of([unroll_rec(1, metrics={"fwd_ms": 460.0}), unroll_rec(2)]))
    assert main(["import", str(f)]) == 0
    assert "imported 1 record; kept 1 record already measured here" in " ".join(capsys.readouterr().out.split())  # wrapped at 120


def test_a_run_never_serves_an_imported_record_as_a_cache_hit(tmp_path, monkeypatch):
    use_fakes(monkeypatch, FAKE)
    store = Store(tmp_path / "s.sqlite")
    plan = api.plan("fake", variants=["ok"])
    launcher = FakeLauncher()
    first = api.run(plan, store=store, launcher=launcher, env=ENV)
    assert len(launcher.tasks) == 1 and not first[0].cached
    # the same key, but the record came from a file: a run measures again, and its own record replaces it
    store.put_many([first[0].with_(source="imported", metrics={"fwd_ms": 460.0})])
    again = api.run(plan, store=store, launcher=launcher, env=ENV)
    assert len(launcher.tasks) == 2 and not again[0].cached and again[0].metrics["fwd_ms"] == 2.0
    assert store.get(first[0].key).source == "local"
    third = api.run(plan, store=store, launcher=launcher, env=ENV)
    assert len(launcher.tasks) == 2 and third[0].cached  # its own record is served


@pytest.mark.parametrize("change, reason", [
    ({"params": {"units": "huge"}}, "record 2: params.units='huge' is out of limits"),
    ({"experiment": "nosuchexp"}, "record 2: experiment='nosuchexp' is not known"),
    ({"variant": "nosuch"}, "record 2: variant='nosuch' is not a variant of unroll"),
    ({"params": {"nosuch": 1}}, "record 2: params.nosuch: not a parameter of unroll"),
    ({"params": {"cell": ["lstm"]}}, "record 2: params.cell=['lstm'] is out of limits"),
])
def test_every_imported_record_is_checked_against_the_registry(tmp_path, change, reason):
    store = Store(tmp_path / "s.sqlite")
    good = unroll_rec(1).to_dict(with_transient=False)
    bad = good | {k: (good[k] | v if isinstance(v, dict) else v) for k, v in change.items()} | {"key": "b" * 64}
    with pytest.raises(RnnlabError) as e:
        api.import_file(json.dumps([good, bad, good | {"key": "c" * 64}]), name="f.json", store=store)
    assert f"f.json: refused 1 of 3 records: {reason}" in str(e.value)
    assert "nothing was imported" in str(e.value) and store.count() == 0


def test_a_refusal_quotes_three_reasons_each_cut_to_80_characters(tmp_path):
    good = unroll_rec(1).to_dict(with_transient=False)
    bad = [good | {"key": f"{i:064x}", "experiment": "x" * 200} for i in range(5)]
    with pytest.raises(RnnlabError) as e:
        api.read_import(json.dumps([good] + bad), name="f.json")
    text = str(e.value)
    assert "refused 5 of 6 records: record 2: " in text and text.count("record ") == 3
    assert text.endswith("; ...; nothing was imported")
    assert all(len(part) <= 80 for part in text.split(": refused 5 of 6 records: ")[1].split("; ")[:3])


def test_read_import_parses_and_validates_but_stores_nothing(tmp_path):
    store = Store()
    got = api.read_import(file_of([unroll_rec(1), unroll_rec(2)]).encode(), name="up.json")
    assert [r.source for r in got] == ["imported", "imported"] and store.count() == 0
    with pytest.raises(RnnlabError, match="up.json: refused 1 of 1 records"):
        api.read_import(file_of([unroll_rec(1, variant="nosuch")]), name="up.json")


@pytest.mark.parametrize("text, fragment", [
    ("[" * 200000, "nested too deeply"),
    ('{"a": ' * 5000 + "1" + "}" * 5000, "nested too deeply"),
    ("[" + json.dumps({"schema": 2}) + ", 1e400]", "1e400 is too large"),
    ('[{"metrics": {"fwd_ms": NaN}}]', "NaN is not a number"),
    ("9" * 5000, "an integer too long"),
])
def test_parsing_refuses_what_json_cannot_hold_with_one_line(text, fragment):
    with pytest.raises(RnnlabError, match=fragment) as e:
        parse_records(text, name="f.json")
    assert "\n" not in str(e.value)


def test_a_metric_too_large_for_a_float_is_refused_not_an_overflow():
    d = unroll_rec(1).to_dict(with_transient=False)
    text = json.dumps([d]).replace('"fwd_ms": 0.46', '"fwd_ms": 1' + "0" * 400)
    with pytest.raises(RnnlabError, match="metric 'fwd_ms' must be a finite number, got a number too large"):
        parse_records(text, name="f.json")


def test_a_file_over_the_cap_is_refused_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr("rnnlab.engine.importing.MAX_IMPORT_BYTES", 1000)
    monkeypatch.setattr("rnnlab.core.record.parse_records", lambda *a, **k: pytest.fail("parsed"))
    with pytest.raises(RnnlabError, match="larger than"):
        api.read_import(b" " * 1001, name="big.json")
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 1001)
    assert main(["import", str(big)]) == 2


def bad_store(path):
    store = Store(path)
    store.put_many([unroll_rec(1), unroll_rec(2, params={**unroll_rec(2).params, "units": "huge"}),
                    unroll_rec(3, experiment="nosuchexp"), unroll_rec(4, variant="nosuch"),
                    unroll_rec(5, params={**unroll_rec(5).params, "units": "small"})])
    return store


def test_combined_leaves_out_records_that_do_not_fit_with_one_warning_per_kind(tmp_path):
    store = bad_store(tmp_path / "s.sqlite")
    warnings = []
    got = select.combined(store, warn=warnings.append)
    assert [r.key for r in got] == [unroll_rec(1).key]
    assert len(warnings) == 3, warnings
    assert any(w.startswith("skipped 2 stored records not fitting the experiments (params.units)") for w in warnings)
    assert any("(experiment)" in w for w in warnings) and any("(variant)" in w for w in warnings)


@pytest.mark.parametrize("argv", [["claims"], ["results"], ["results", "--format", "json"],
                                  ["export", "--format", "md", "--out", "OUT"]])
def test_commands_read_a_store_with_bad_records(tmp_path, monkeypatch, capsys, argv):
    path = tmp_path / "s.sqlite"
    monkeypatch.setenv("RNNLAB_STORE", str(path))
    bad_store(path)
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "rnnlab: warning: skipped 1 stored record not fitting" in err


@pytest.mark.parametrize("env, reason", [({"matmul_gflops": 10**400}, "env.matmul_gflops: not a finite number"),
                                         ({"cores": "two"}, "env.cores: not a finite number"),
                                         ({"device": {"a": 1}}, "env.device: not text or null")])
def test_an_env_block_that_would_break_the_machine_classes_is_refused(env, reason):
    with pytest.raises(RnnlabError, match=f"refused 1 of 1 records: record 1: {reason}"):
        api.read_import(file_of([unroll_rec(1, env={"device": "CPU"} | env)]), name="f.json")


@pytest.mark.parametrize("field, value", [("rounds", False), ("rounds", 0), ("rounds", ""), ("rounds", {}),
                                          ("rounds", None), ("rounds", [1]), ("details", []), ("details", False)])
def test_rounds_and_details_of_the_wrong_type_are_refused_not_read_as_empty(field, value):
    d = unroll_rec(1).to_dict(with_transient=False) | {field: value}
    with pytest.raises(RnnlabError, match=f"record 1: field '{field}' must be"):
        api.read_import(json.dumps([d]), name="f.json")


def test_a_refused_megabyte_is_never_echoed():
    d = unroll_rec(1).to_dict(with_transient=False) | {"created_at": "x" * 2**20}
    with pytest.raises(RnnlabError) as e:
        api.read_import(json.dumps([d]), name="f.json")
    assert "is not an ISO-8601 time" in str(e.value) and len(str(e.value)) < 120
