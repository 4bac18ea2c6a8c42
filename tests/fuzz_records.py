"""A seeded generator of mutated records (issue 20): real bundled records (data/baseline/*.json) with one to three of
their fields, at any depth, replaced, removed, added, retyped, scaled or spiked with awkward text; and the readers
every accepted record must get through (tests/commands/test_read_fuzz.py)."""

from __future__ import annotations

import contextlib
import copy
import importlib
import json
import random
from pathlib import Path
from typing import Any, Callable

from rnnlab.core.baseline import BASELINE_DIR

TEXT = ["", " ", "box \ud800", "\udcff", "Evil\u000b box", "a\x00b", "tab\there", "line\nbreak", "cr\rx", "\u2028",
        "\u202eevil", "=1+1", "+SUM(A1)", "-2+3", "@cmd", "\t=x", "\r=x", "-1.5", "1e308", "NaN", "x" * 300,
        "é" * 50, "🙂", "<b>bold</b>", "| pipe |", "*star*", "$\\alpha$", "&amp;", "%s %d", "{0}", "None", "true"]
NUMBERS = [0, -0.0, -1, 1, 0.5, 1e-300, 5e-324, 1.7e308, -1.7e308, 1e38, 1e15, 2**53, 2**63, 10**18, 3, 1e6, 86399,
           86401, 100.5]
ODD = [None, True, False, [], {}, [1, "a", None], {"a": {"b": [1]}}, [[1, 2], [3]], [[]]]


def bundled() -> list[dict]:
    out: list[dict] = []
    for f in sorted(Path(BASELINE_DIR).glob("*.json*")):
        text = f.read_text()
        try:
            obj = json.loads(text)
            out += obj if isinstance(obj, list) else obj["records"]
        except json.JSONDecodeError:
            out += [json.loads(line) for line in text.splitlines() if line.strip()]
    return out


def _paths(v: Any, path: tuple = ()) -> list[tuple]:
    """Every place in a record: each key of each object and each item of each list (small lists whole)."""
    out = [path]
    if isinstance(v, dict):
        for k, x in v.items():
            out += _paths(x, path + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v[:4]):
            out += _paths(x, path + (i,))
    return out


def _value(rng: random.Random, old: Any) -> Any:
    kind = rng.randrange(9)
    if kind == 0:
        return rng.choice(TEXT)
    if kind == 1:
        return rng.choice(NUMBERS)
    if kind == 2:
        return copy.deepcopy(rng.choice(ODD))
    if isinstance(old, (int, float)) and not isinstance(old, bool):
        return rng.choice([old * 0, -old, old * 1e300, old * 1e-300, old + 1e-9, int(old), str(old), [old]])
    if isinstance(old, str):
        return rng.choice([old + rng.choice(TEXT), rng.choice(TEXT) + old, old[: len(old) // 2], old.upper(), len(old),
                           [old], {"text": old}])
    if isinstance(old, list):
        return rng.choice([old[:1], old * 3, [], old[::-1], [x for x in old if rng.random() < 0.5], old + [old]])
    if isinstance(old, dict):
        ks = list(old)
        return rng.choice([{}, {k: old[k] for k in ks[: len(ks) // 2]}, {str(k) + "_x": v for k, v in old.items()},
                           list(old.values()), dict(old, extra=rng.choice(TEXT))])
    return rng.choice(TEXT + NUMBERS)


def _set(d: Any, path: tuple, value: Any) -> None:
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value


def _drop(d: Any, path: tuple) -> None:
    for k in path[:-1]:
        d = d[k]
    del d[path[-1]]


def _round_metrics(rng: random.Random, d: dict) -> None:
    rounds = d.get("rounds")
    if not isinstance(rounds, list) or not rounds or not isinstance(rounds[0], dict):
        d["rounds"] = [dict(d.get("metrics") or {}), {"fwd_ms": 1.0}]
        return
    op = rng.randrange(4)
    for r in rounds:
        if not isinstance(r, dict) or not r:
            continue
        k = rng.choice(sorted(r))
        if op == 0:
            r[k + "_renamed"] = r.pop(k)
        elif op == 1:
            r.pop(k)
        elif op == 2:
            r[k] = rng.choice(NUMBERS)
        else:
            r["extra_ms"] = 1.0


def _every_metric(rng: random.Random, d: dict) -> None:
    v = rng.choice(NUMBERS)
    rounds = d.get("rounds")
    for block in [d.get("metrics")] + (rounds if isinstance(rounds, list) else []):
        if isinstance(block, dict):
            for k in block:
                block[k] = v


def mutate(rng: random.Random, record: dict) -> dict:
    d = copy.deepcopy(record)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        op = rng.randrange(10)
        if op in (0, 1):  # a field an earlier step made odd (rounds: true) is left as it is
            with contextlib.suppress(TypeError, ValueError, AttributeError):
                (_every_metric if op == 0 else _round_metrics)(rng, d)
            continue
        paths = [p for p in _paths(d) if p]
        path = rng.choice(paths)
        try:
            if op == 2 and isinstance(path[-1], str):
                _drop(d, path)
            elif op == 3:
                parent = d
                for k in path[:-1]:
                    parent = parent[k]
                if isinstance(parent, dict):
                    parent[rng.choice(TEXT)] = _value(rng, None)
                else:
                    _set(d, path, _value(rng, None))
            else:
                old = d
                for k in path:
                    old = old[k]
                _set(d, path, _value(rng, old))
        except (KeyError, IndexError, TypeError):
            continue
    return d


# -- records drawn from the schema (experiments/schema.py) ----------------------------------------------------------
def _draw(rng: random.Random, shape: Any, *, valid: bool = True, depth: int = 0) -> Any:
    """A value of ``shape`` (``valid``), or one just outside it: off its range, of another type, a key too many."""
    from rnnlab.experiments import schema as S

    if not valid:
        if isinstance(shape, S.Range):
            return rng.choice([shape.lo - 1, shape.hi * 10, shape.lo if shape.open_low else -1e-9, 1e308, True,
                               str(shape.hi), [shape.hi], 1.5 if shape.integer else None])
        if isinstance(shape, S.Closed):
            return dict(_draw(rng, shape, depth=depth), **{rng.choice(TEXT): 1})
        return copy.deepcopy(rng.choice(ODD + [1e308, -1, "x" * 300, "a\u202eb", 7]))
    if isinstance(shape, S.Or):
        return _draw(rng, rng.choice(shape.shapes), depth=depth)
    if isinstance(shape, S.Range):
        x = rng.choice([shape.lo, shape.hi, rng.uniform(shape.lo, min(shape.hi, 1e4))])
        x = x if not (shape.open_low and x == shape.lo) else shape.lo + 1e-3
        return int(x) if shape.integer else float(x)
    if shape in (S.NUM, S.INT):
        return rng.choice([0, 1, 3, 0.5, 1e6])
    if shape is S.STR:
        return rng.choice(["quiet", "AMD EPYC, 2 cores", "2.21.0", "CPU", "<b>x</b>", "=1+1", "é" * 30, "🙂"])
    if shape in (S.BOOL, S.NULL) or shape is S.ANY:
        return {S.BOOL: rng.random() < 0.5, S.NULL: None}.get(shape, rng.choice([1, "a", None]))
    if isinstance(shape, list) or depth > 4:
        return [_draw(rng, shape[0], depth=depth + 1) for _ in range(rng.randrange(4))] if isinstance(shape, list) \
            else None
    if isinstance(shape, S.Map):
        return {f"k{j}": _draw(rng, shape.value, depth=depth + 1) for j in range(rng.randrange(3))}
    return {k: _draw(rng, v, depth=depth + 1) for k, v in shape.items() if rng.random() < 0.8}


def _paired(rng: random.Random, d: dict, *, valid: bool) -> Any:
    """details.paired drawn from ``schema.PAIRED``: sessions of series (a metric's windows, @ref, @other), a list of
    windows per round; invalid: one window off its range, one level too deep or too shallow, a round too many."""
    from rnnlab.experiments import schema as S

    rounds = d["params"].get("rounds", 1) if isinstance(d["params"].get("rounds"), int) else 1
    metrics = [m for m in ("fwd_ms", "train_ms", "build_s") if m in d["metrics"]] or ["fwd_ms"]
    out = {}
    for _ in range(rng.randrange(1, 3)):
        out[f"{rng.getrandbits(48):012x}"] = {
            m + suffix: [[_draw(rng, shape) for _ in range(rng.randrange(6))] for _ in range(rng.randrange(rounds) + 1)]
            for m in metrics for suffix, shape in S.PAIRED.items() if rng.random() < 0.8}
    if not valid:
        series = [w for sess in out.values() for w in sess.values() if w and w[0]]
        how = rng.randrange(4)
        if how == 0 or not series:
            return rng.choice([True, "windows", [1.0], 1.0, {"s": [[1.0]]}, {"s": {"fwd_ms": [1.0]}}])
        w = rng.choice(series)
        if how == 1:
            w[0][0] = _draw(rng, S.WINDOW, valid=False)
        elif how == 2:
            w[0][0] = [w[0][0]]
        else:
            w.extend([[1.0]] * (rounds + 1 - len(w)))
    return out


def from_schema(rng: random.Random, base: dict) -> dict:
    """A bundled record whose env, ``params.threads``, ``details.condition``, ``details.paired`` and ``rounds`` are
    drawn from ``experiments.schema``: all valid, or one of them just outside its shape."""
    from rnnlab.experiments import schema as S

    d = copy.deepcopy(base)
    bad = rng.choice(["env", "threads", "condition", "paired", "rounds", None, None, None, None])
    d["env"] = {k: _draw(rng, v) for k, v in S.ENV.items() if rng.random() < 0.9}
    d["env"]["machine"] = rng.choice(["AMD EPYC, 2 cores", "<script>alert(1)</script>", '=HYPERLINK("x")', "m é"])
    if bad == "env":
        d["env"][rng.choice(list(S.ENV) + ["extra"])] = _draw(rng, S.ENV.get("cores"), valid=False)
    if rng.random() < 0.5 or bad == "threads":
        d["params"]["threads"] = _draw(rng, S.EXTRA_PARAMS["threads"], valid=bad != "threads")
    if rng.random() < 0.5 or bad == "condition":
        d["details"]["condition"] = _draw(rng, S.CONDITION, valid=bad != "condition")
    if d["metrics"] and (rng.random() < 0.6 or bad == "paired"):
        d["details"]["paired"] = _paired(rng, d, valid=bad != "paired")
    if bad == "rounds":
        d["rounds"] = rng.choice([False, 0, "", {}, None, [1], (d["rounds"] or [d["metrics"]]) * 9000])
    return d


def case(seed: int, i: int, base: list[dict]) -> dict:
    """Case ``i`` of run ``seed``: the same record whenever it is asked for (a resumed run draws no earlier case).
    Even cases mutate a bundled record (``mutate``), odd ones draw from the schema (``from_schema``)."""
    rng = random.Random(f"{seed}:{i}")
    d = (mutate if i % 2 == 0 else from_schema)(rng, rng.choice(base))
    if rng.random() < 0.9:  # else it keeps its key: the store must keep the record it already holds
        import hashlib

        d["key"] = hashlib.sha256(f"fuzz{seed}:{i}".encode()).hexdigest()
    return d


def generate(seed: int, n: int) -> list[dict]:
    rng = random.Random(seed)
    base = bundled()
    return [mutate(rng, rng.choice(base)) for _ in range(n)]


def encode(d: dict) -> bytes:
    """A record as a file's bytes; a lone surrogate travels as JSON's \\ud800 escape, as another tool would write it."""
    return json.dumps([d]).encode()


# -- the readers --------------------------------------------------------------------------------------------------
PAGES = ("unrolling", "varlen", "pitfalls", "migrate", "claims", "overview")
REPORTS = ("unrolling", "varlen", "pitfalls", "migrate", "claims")


def readers(store, out_dir: Path, *, heavy: bool, reports: bool = True) -> list[tuple[str, Callable[[], Any]]]:
    """(name, call) for every read command and page view over the store; ``heavy`` adds the full exports and a
    talk deck (pptx renders each chart); ``reports=False`` leaves out each topic's full report (``export
    --experiment``: seconds over a few hundred records of many configurations)."""
    from rnnlab.commands import claims, export, results
    from rnnlab.judge import select
    from rnnlab.present import deck
    from rnnlab.present import results as results_page

    recs = select.combined(store)
    calls: list[tuple[str, Callable[[], Any]]] = []
    for fmt in ("table", "csv", "md", "json"):
        calls.append((f"results --format {fmt}", lambda fmt=fmt: results.run(fmt=fmt, store=store)))
    for fmt in ("table", "md", "json"):
        calls.append((f"claims --format {fmt}", lambda fmt=fmt: claims.run(fmt=fmt, store=store)))
    for page in PAGES:
        calls.append((f"{page}.view", lambda page=page: deck.talk(deck.page_view(page, recs))))
        calls.append((f"export --view {page} --format md",
                      lambda page=page: export.run(fmt="md", view=page, out=str(out_dir / f"{page}.md"), store=store)))
    for topic in REPORTS if reports or heavy else ():
        calls.append((f"{topic}.report",
                      lambda topic=topic: importlib.import_module(f"rnnlab.present.{topic}").report(recs)))
    calls.append(("results page", lambda: (results_page.frame(recs), results_page.by_machine(recs),
                                           results_page.csv_bytes(recs), results_page.json_bytes(recs))))
    if heavy:
        calls.append(("export --format csv",
                      lambda: export.run(fmt="csv", out=str(out_dir / "csv") + "/", store=store)))
        calls.append(("export --format md", lambda: export.run(fmt="md", out=str(out_dir / "all.md"), store=store)))
        calls.append(("export --view unrolling --format pptx",
                      lambda: export.run(fmt="pptx", view="unrolling", out=str(out_dir / "u.pptx"), store=store)))
    return calls


def _fresh_key(d: dict, i: int, originals: set[str]) -> dict:
    if isinstance(d.get("key"), str) and d["key"] in originals:
        import hashlib

        d = dict(d, key=hashlib.sha256(f"fuzz{i}".encode()).hexdigest())
    return d


def run(seed: int, n: int, work: Path, *, batch: int = 25, heavy_every: int = 0, stop_at_first: bool = True) -> dict:
    """Generate ``n`` mutated records, import each alone (``api.read_import``: accepted or refused), then read the
    accepted ones, ``batch`` at a time beside the bundled records, through every reader. Returns the counts and
    the failures: (reader, error, the record that breaks it)."""
    import traceback

    from rnnlab.core.errors import RnnlabError
    from rnnlab.core.store import Store
    from rnnlab.engine import api

    originals = {d["key"] for d in bundled()}
    accepted: list[dict] = []
    refused = 0
    for i, d in enumerate(generate(seed, n)):
        d = _fresh_key(d, i, originals)
        try:
            api.read_import(encode(d), name="fuzz.json")
        except RnnlabError:
            refused += 1
            continue
        accepted.append(d)
    failures: list[tuple[str, str, dict]] = []
    batches = [accepted[i:i + batch] for i in range(0, len(accepted), batch)]
    for b, group in enumerate(batches):
        failures += _read_batch(group, work / f"b{b}", heavy=bool(heavy_every) and b % heavy_every == 0,
                                Store=Store, api=api, RnnlabError=RnnlabError, traceback=traceback)
        if failures and stop_at_first:
            break
    return {"generated": n, "accepted": len(accepted), "refused": refused, "batches": len(batches),
            "failures": failures}


def _read_batch(group, folder: Path, *, heavy: bool, Store, api, RnnlabError, traceback) -> list:
    folder.mkdir(parents=True, exist_ok=True)
    store = Store(folder / "s.sqlite", warn=lambda msg: None)
    api.import_file(json.dumps(group), name="fuzz.json", store=store)
    out = []
    for name, call in readers(store, folder, heavy=heavy):
        try:
            call()
        except RnnlabError:
            pass  # one line for the user (e.g. "no records"), not a crash
        except Exception as e:  # noqa: BLE001 -- the property: no reader raises anything else
            culprit = _culprit(group, name, folder, heavy=heavy, Store=Store, api=api, RnnlabError=RnnlabError)
            out.append((name, "".join(traceback.format_exception_only(e)).strip()[-300:], culprit))
    return out


def _culprit(group, reader: str, folder: Path, *, heavy: bool, Store, api, RnnlabError):
    """The first record of ``group`` that alone (beside the bundled ones) breaks ``reader``."""
    for j, d in enumerate(group):
        sub = folder / f"c{j}"
        sub.mkdir(exist_ok=True)
        store = Store(sub / "s.sqlite", warn=lambda msg: None)
        api.import_file(json.dumps([d]), name="fuzz.json", store=store)
        call = dict(readers(store, sub, heavy=heavy))[reader]
        try:
            call()
        except RnnlabError:
            continue
        except Exception:  # noqa: BLE001
            return d
    return None


if __name__ == "__main__":  # python -m tests.fuzz_records SEED N
    import os
    import sys
    import tempfile
    import time

    os.environ["RNNLAB_BASELINE"] = str(BASELINE_DIR)
    seed, n = int(sys.argv[1]), int(sys.argv[2])
    t0 = time.monotonic()
    res = run(seed, n, Path(tempfile.mkdtemp(prefix="rnnlab-fuzz-")), heavy_every=int(os.environ.get("HEAVY", "0")),
              stop_at_first=False)
    print({k: v for k, v in res.items() if k != "failures"}, f"{time.monotonic() - t0:.0f} s")
    seen = set()
    for reader, err, d in res["failures"]:
        if (reader, err[:60]) in seen:
            continue
        seen.add((reader, err[:60]))
        print("==", reader, "|", err)
        if d is not None:
            orig = {x["key"]: x for x in bundled()}.get(d["key"])
            print("   ", d["experiment"] if isinstance(d.get("experiment"), str) else "?", d.get("variant"),
                  json.dumps({k: d[k] for k in ("metrics", "env", "error", "rounds") if k in d})[:600])
            print("   details:", json.dumps(d.get("details"))[:600])
