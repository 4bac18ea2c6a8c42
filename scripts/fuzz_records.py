"""Fuzz the record schema: records drawn from it (``experiments/schema.py``) and real bundled records mutated
(``data/baseline/*.json``), each imported through the ``import`` command in this process, never a subprocess.

The property, per case: the import exits 2 with one short line on stderr (no traceback), or exits 0; what it
accepted is then read by every reader (``results`` in each format, ``claims`` in each format, every page's view and
its ``export --view`` as Markdown, the Results page's frames and downloads; every ``--heavy-every``-th batch also
each topic's full report, the whole CSV and Markdown export and a pptx deck) without an exception, and the store's
other records (the bundled ones stored as this machine's, whose keys some cases reuse) keep their sha256. Cases are
drawn from ``(seed, index)`` alone (``tests/fuzz_records.case``: even ones mutate a bundled record, odd ones are drawn
from the schema), so a run is reproducible and resumes: the state file (``--state``) holds the cases done and the
counts after every batch, and a rerun continues from there (``--fresh`` starts over). A progress line on stderr;
exit 1 when a case broke the property (its index or batch, the reader and the error are kept in the state file).

Time, measured under ``nice`` on a busy 2-core VM: about 8 ms a case to import, 6 s to read a batch of 1,000
cases, 4 min for a heavy batch (the full exports of ~1,000 records); 100,000 cases with the defaults in about
40 minutes. Stop it at any time (Ctrl-C) and rerun to continue from the last finished batch.

    python -m scripts.fuzz_records                       # 100,000 cases, seed 30, state in data/cache/
    python -m scripts.fuzz_records --cases 5000 --seed 7 --state /tmp/f.json
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LINE_CHARS = 400  # a refusal's one line is at most this long


def _bodies(path: Path, keys: list[str]) -> dict[str, str]:
    import sqlite3

    con = sqlite3.connect(path)
    try:
        rows = con.execute(f"SELECT key, body FROM records WHERE key IN ({','.join('?' * len(keys))})", keys)
        return {k: hashlib.sha256(b.encode() if isinstance(b, str) else b).hexdigest() for k, b in rows}
    finally:
        con.close()


def import_once(main, path: Path, d: dict) -> tuple[str, str]:
    """("accepted" | "refused", "") when the command kept the property, ("broken", why) when it did not."""
    from tests.fuzz_records import encode

    path.write_bytes(encode(d))
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["import", str(path)])
    except (Exception, SystemExit) as e:  # noqa: BLE001 -- the property: the command returns, whatever the file holds
        return "broken", f"import raised {type(e).__name__}: {str(e)[:200]}"
    text = err.getvalue()
    if code in (130, 143):  # the command caught Ctrl-C or SIGTERM meant for this run: stop here
        raise KeyboardInterrupt
    if code == 0 and "Traceback" not in text:
        return "accepted", ""
    lines = text.strip().splitlines()
    if code == 2 and len(lines) == 1 and text.startswith("rnnlab: error: ") and len(lines[0]) <= LINE_CHARS:
        return "refused", ""
    return "broken", f"import exit {code}, {len(lines)} line(s): {text[:300]!r}"


class Batch:
    """One batch's scratch store: the bundled records stored as this machine's, then every case imported."""

    def __init__(self, folder: Path, base: list[dict]):
        from rnnlab.core.record import Record
        from rnnlab.core.store import Store

        folder.mkdir(parents=True, exist_ok=True)
        self.folder, self.path = folder, folder / "s.sqlite"
        os.environ["RNNLAB_STORE"] = str(self.path)
        self.store = Store(self.path, warn=lambda m: None)
        self.store.put_many([Record.from_dict(d).with_(source="local") for d in base])
        self.keys = [d["key"] for d in base]
        self.before = _bodies(self.path, self.keys)
        self.accepted: list[dict] = []

    def read(self, heavy: bool) -> list[str]:
        """Every reader over the batch's store; what broke (reader: error), and the local records' check."""
        from rnnlab.core.errors import RnnlabError
        from tests.fuzz_records import readers

        broken = []
        if _bodies(self.path, self.keys) != self.before:
            broken.append("store: a record already stored changed")
        for name, call in readers(self.store, self.folder, heavy=heavy, reports=heavy):
            with contextlib.redirect_stderr(io.StringIO()):
                try:
                    call()
                except RnnlabError:
                    pass  # one line for the user, not a crash
                except Exception as e:  # noqa: BLE001 -- the property: no reader raises anything else
                    broken.append(f"{name}: {type(e).__name__}: {str(e)[:200]}")
        return broken


def _load(state_path: Path, seed: int, fresh: bool) -> dict:
    if state_path.exists() and not fresh:
        state = json.loads(state_path.read_text())
        if state.get("seed") == seed:
            return state
    return {"seed": seed, "done": 0, "accepted": 0, "refused": 0, "failures": [], "seconds": 0.0}


def _save(state_path: Path, state: dict) -> None:
    state_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = state_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1))
    tmp.replace(state_path)


def _progress(state: dict, total: int, rate: float, *, end: str = "") -> None:
    left = (total - state["done"]) / rate if rate > 0 else 0
    sys.stderr.write(f"\r{state['done']:,}/{total:,} cases: {state['accepted']:,} accepted, {state['refused']:,} "
                     f"refused, {len(state['failures'])} broke the property; {rate:,.0f} cases/s, about "
                     f"{left / 60:.0f} min left   {end}")
    sys.stderr.flush()


def run(*, seed: int, cases: int, state_path: Path, batch: int = 1000, heavy_every: int = 25, fresh: bool = False,
        work: Path | None = None, progress: bool = True) -> dict:
    """Run cases up to ``cases`` (continuing the state file's run), a batch at a time; the state after each."""
    from rnnlab.cli import main
    from tests.fuzz_records import bundled, case

    state = _load(state_path, seed, fresh)
    base = bundled()
    scratch = work is None
    work = Path(work or tempfile.mkdtemp(prefix="rnnlab-fuzz-"))
    saved = {k: os.environ.get(k) for k in ("RNNLAB_STORE", "RNNLAB_BASELINE")}
    os.environ["RNNLAB_BASELINE"] = str(ROOT / "data" / "baseline")
    t0, start, seconds = time.monotonic(), state["done"], state["seconds"]
    try:
        while state["done"] < cases:
            _batch(state, main, case, base, work, cases=cases, batch=batch, heavy_every=heavy_every,
                   rate=lambda: (state["done"] - start) / max(time.monotonic() - t0, 1e-9) if progress else None)
            state["seconds"] = round(seconds + time.monotonic() - t0, 1)
            _save(state_path, state)
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
        if scratch:
            _cleanup(work)
    _save(state_path, state)
    if progress:
        _progress(state, cases, (state["done"] - start) / max(time.monotonic() - t0, 1e-9), end="\n")
    return state


def _batch(state: dict, main, case, base: list[dict], work: Path, *, cases: int, batch: int, heavy_every: int,
           rate) -> None:
    """The next batch: its cases imported one by one into a scratch store, then every reader over it."""
    b = state["done"] // batch
    one = Batch(work / f"b{b}", base)
    for i in range(state["done"], min(cases, (b + 1) * batch)):
        kind, why = import_once(main, one.folder / "case.json", case(state["seed"], i, base))
        if kind == "broken":
            state["failures"].append({"case": i, "what": why})
        else:
            state[kind] += 1
        state["done"] = i + 1
        if i % 50 == 0 and rate() is not None:
            _progress(state, cases, rate())
    for why in one.read(heavy=bool(heavy_every) and b % heavy_every == heavy_every - 1):
        state["failures"].append({"cases": [b * batch, state["done"]], "what": why})
    _cleanup(one.folder)


def _cleanup(folder: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scripts.fuzz_records", description=__doc__.split("\n\n")[0],
                                epilog="Time: about 40 minutes for 100,000 cases under nice on a busy 2-core VM (8 ms "
                                       "a case to import, 6 s a batch of 1,000 to read, 4 min a heavy batch); "
                                       "stop it any time and rerun to continue.")
    p.add_argument("--cases", type=int, default=100_000, help="run cases until this many are done (default 100,000)")
    p.add_argument("--seed", type=int, default=30)
    p.add_argument("--state", type=Path, default=None,
                   help="the state file (default data/cache/fuzz_records-SEED.json); a rerun continues from it")
    p.add_argument("--fresh", action="store_true", help="start over, ignoring the state file")
    p.add_argument("--batch", type=int, default=1000, help="cases per scratch store read by every reader")
    p.add_argument("--heavy-every", type=int, default=25,
                   help="every Nth batch also the topics' reports, the full exports and a pptx (0: never)")
    a = p.parse_args(argv)
    state_path = a.state or ROOT / "data" / "cache" / f"fuzz_records-{a.seed}.json"
    try:
        state = run(seed=a.seed, cases=a.cases, state_path=state_path, batch=a.batch, heavy_every=a.heavy_every,
                    fresh=a.fresh)
    except KeyboardInterrupt:
        done = json.loads(state_path.read_text())["done"] if state_path.exists() else 0
        print(f"\nstopped after {done:,} cases (the last finished batch); rerun to continue", file=sys.stderr)
        return 130
    for f in state["failures"][:20]:
        print("broke:", json.dumps(f))
    print(f"{state['done']:,} cases (seed {a.seed}): {state['accepted']:,} accepted, {state['refused']:,} refused with "
          f"one line, {len(state['failures'])} broke the property; {state['seconds'] / 60:.1f} min; state {state_path}")
    return 1 if state["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
