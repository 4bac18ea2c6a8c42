"""200 generated import files through the CLI (issue 13): every exit code 0 or 2, never a traceback, and this
machine's records unchanged, whatever the file holds."""

import json
import random
import sqlite3

import pytest


from rnnlab import experiments
from rnnlab.cli import main
from rnnlab.core.record import Record, make_key
from rnnlab.core.store import Store
from tests.factories import record

SEED = 13
N_FILES = 200
ODD = [None, True, False, 0, -1, 1.5, -0.0, 2**63, 10**400, 1e308, float("nan"), float("inf"), "", "huge",
       "x" * 500, [], {}, [1, [2, [3]]], {"a": {"b": None}}, "2026-13-45T99:00:00Z", "\u0000\ud7ff", "e" * 64]


def valid(rng: random.Random, i: int) -> dict:
    exp = experiments.get(rng.choice(["unroll", "varlen", "padding"]))
    params = exp.params.fill({})
    key = make_key({"fuzz": i, "r": rng.random()}, {"tf": "x"})  # drawn in this order: the seed's corpus
    variant, fwd_ms, machine = rng.choice(exp.variants), round(rng.uniform(0.1, 900), 3), f"m{rng.randrange(3)}"
    return record(exp.name, variant, params, env={"device": "CPU", "machine": machine}, key=key,
                  created_at="2026-12-02T15:00:00Z", two=False, fwd_ms=fwd_ms, peak_mem_mb=12.0).to_dict(with_transient=False)


def random_json(rng: random.Random, depth: int = 0):
    kind = rng.randrange(7 if depth < 6 else 4)
    if kind == 0:
        return rng.choice(ODD)
    if kind == 1:
        return rng.randint(-10**30, 10**30)
    if kind == 2:
        return rng.uniform(-1e300, 1e300)
    if kind == 3:
        return "".join(rng.choice("ab{}[]\":,\\ \u00e9\n") for _ in range(rng.randrange(20)))
    if kind == 4:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(5))]
    keys = ["schema", "key", "experiment", "variant", "params", "metrics", "env", "created_at", "error", "details",
            "rounds", "records", "source"]
    return {rng.choice(keys) if rng.random() < 0.7 else str(rng.random()): random_json(rng, depth + 1)
            for _ in range(rng.randrange(6))}


def mutate(rng: random.Random, d: dict) -> dict:
    d = json.loads(json.dumps(d))
    where = rng.choice(["top", "params", "metrics", "env", "details", "rounds", "drop"])
    value = rng.choice(ODD) if rng.random() < 0.8 else random_json(rng)
    if where == "top":
        d[rng.choice(list(d))] = value
    elif where == "drop":
        del d[rng.choice(list(d))]
    elif where == "rounds":
        d["rounds"] = rng.choice([value, [value], [{"fwd_ms": value}], [d["metrics"]]])
    else:
        target = d[where]
        target[rng.choice(list(target) + ["nosuch"])] = value
    return d


def generate(rng: random.Random, i: int, local: list[dict]) -> str:
    kind = i % 10
    if kind == 0:
        return json.dumps(random_json(rng))
    if kind == 1:
        depth = rng.choice([50, 900, 5000, 200000])
        return rng.choice(["[", '{"a":', '[{"records":']) * depth
    if kind == 2:
        big = rng.choice(["1e400", "-1e400", "1" + "0" * 400, "9" * 5000, "NaN", "Infinity", "1e-400"])
        return json.dumps([valid(rng, i)]).replace("12.0", big)
    if kind in (3, 4, 5):  # valid records, one field of one of them mutated
        recs = [valid(rng, i * 100 + j) for j in range(rng.randrange(1, 6))]
        recs[rng.randrange(len(recs))] = mutate(rng, recs[0])
        return json.dumps(recs)
    if kind == 6:  # key collisions with this machine's records, other numbers (some also mutated)
        recs = [dict(d, metrics={"fwd_ms": 460.0}, source="local") for d in rng.sample(local, 3)]
        if rng.random() < 0.3:
            recs.append(mutate(rng, recs[0]))
        return json.dumps(recs if rng.random() < 0.5 else {"records": recs})
    if kind == 7:  # JSONL, sometimes with a bad line
        lines = [json.dumps(valid(rng, i * 100 + j)) for j in range(rng.randrange(1, 5))]
        if rng.random() < 0.5:
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(["{", "[]", "null", '"x"', "1e400", "{}"]))
        return "\n".join(lines)
    if kind == 8:  # many records
        return json.dumps([valid(rng, i * 1000 + j) for j in range(rng.randrange(50, 400))])
    text = json.dumps([valid(rng, i)])  # truncated or spliced text
    cut = rng.randrange(len(text))
    return text[:cut] + rng.choice(["", "\x00", "\udcff", "]]]", "}" * 3])


def local_bodies(path) -> dict:
    con = sqlite3.connect(path)
    try:
        return dict(con.execute("SELECT key, body FROM records WHERE source='local'").fetchall())
    finally:
        con.close()


@pytest.mark.slow  # 200 files through the command
def test_two_hundred_generated_files_never_crash_and_never_touch_local_records(tmp_path, monkeypatch, capsys):
    store_path = tmp_path / "s.sqlite"
    monkeypatch.setenv("RNNLAB_STORE", str(store_path))
    rng = random.Random(SEED)
    local = [valid(rng, -1 - j) for j in range(10)]
    Store(store_path).put_many([Record.from_dict(d) for d in local])
    before = local_bodies(store_path)
    codes = []
    for i in range(N_FILES):
        f = tmp_path / f"in{i}.json"
        text = generate(rng, i, local)
        data = text.encode("utf-8", "surrogatepass")
        f.write_bytes(data if i % 20 != 19 else b"\xff\xfe" + data)  # every 20th: not UTF-8
        code = main(["import", str(f)])
        out, err = capsys.readouterr()
        assert code in (0, 2), (i, code, err)
        assert "Traceback" not in err and "Traceback" not in out, (i, err)
        if code == 2:
            assert len(err.strip().splitlines()) == 1 and err.startswith("rnnlab: error: "), (i, err)
        codes.append(code)
    assert local_bodies(store_path) == before
    for argv in (["results"], ["claims"], ["export", "--format", "md", "--out", str(tmp_path / "out")]):
        code = main(argv)  # what was imported reads without a traceback
        err = capsys.readouterr().err
        assert code == 0 and "Traceback" not in err, (argv, err)
    assert codes.count(0) >= 20 and codes.count(2) >= 100  # both paths exercised
