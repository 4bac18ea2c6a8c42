"""What the project shows from the bundled results, as plain files to compare before and after a change.

For every page: ``export --view PAGE`` as JSON and Markdown, its talk deck's text (every slide's shapes, in order),
and ``claims --format json``; all from an empty scratch store, so only ``data/baseline`` is read. Run it on two trees
and compare the folders (``diff -r``): a refactoring that changes none of them leaves what a reader sees unchanged.

    python -m scripts.snapshot_outputs /tmp/before          # in the tree before the change
    python -m scripts.snapshot_outputs /tmp/after           # in the tree after it
    diff -r /tmp/before /tmp/after && echo unchanged
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from rnnlab.present import pages

ROOT = Path(__file__).resolve().parent.parent

PAGES = tuple(pages.viewed())  # every page ``export --view`` writes
# what differs between two runs of one tree: the export's time and the commit it was made from
VOLATILE = [(re.compile(r"(exported[^0-9]{0,12})\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"), r"\1<time>"),
            (re.compile(r"(rnnlab \d+\.\d+\.\d+) \([0-9a-f]{7,}\+?\w*\)"), r"\1 (<commit>)"),
            (re.compile(r'("commit": )"[^"]*"'), r'\1"<commit>"'),
            (re.compile(r"(\*\*commit\*\*: )\S+"), r"\1<commit>")]


def steady(text: str) -> str:
    for pattern, repl in VOLATILE:
        text = pattern.sub(repl, text)
    return text


def cli(args: list[str], env: dict) -> str:
    done = subprocess.run([sys.executable, "-m", "rnnlab", *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"python -m rnnlab {' '.join(args)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return done.stdout


def deck_text(path: Path) -> str:
    from pptx import Presentation

    lines = []
    for i, slide in enumerate(Presentation(str(path)).slides, 1):
        lines.append(f"--- slide {i}")
        for shape in slide.shapes:
            if shape.has_text_frame:
                lines.append(f"[{shape.shape_type}] {shape.text_frame.text}")
            if getattr(shape, "has_table", False) and shape.has_table:
                for row in shape.table.rows:
                    lines.append(" | ".join(cell.text for cell in row.cells))
            if getattr(shape, "has_chart", False) and shape.has_chart:
                lines.append("[chart]")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(prog=f"python -m scripts.{Path(__file__).stem}", description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="a folder to write into (created)")
    out = ap.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "RNNLAB_STORE": str(Path(tmp) / "empty.sqlite"), "COLUMNS": "120"}
        (out / "claims.json").write_text(steady(cli(["claims", "--format", "json"], env)))
        for page in PAGES:
            for fmt in ("json", "md", "pptx"):
                target = Path(tmp) / f"{page}.{fmt}"
                cli(["export", "--view", page, "--format", fmt, "--out", str(target)], env)
                files = sorted(Path(tmp).glob(f"{page}*.{fmt}")) or sorted(Path(tmp).glob(f"{page}*/*"))
                for f in files:
                    text = deck_text(f) if fmt == "pptx" else f.read_text()
                    (out / f"{f.stem}.{fmt}.txt").write_text(steady(text))
                    f.unlink()
    print(f"wrote {len(list(out.iterdir()))} files to {out}")


if __name__ == "__main__":
    main()
