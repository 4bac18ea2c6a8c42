"""Layers point one way, and the engine has one front door: read from the code's own imports (ast), so ARCHITECTURE.md
cannot drift from it.

    core <- tf <- experiments <- worker <- engine <- judge <- present, exporters <- commands <- ui <- pages

A module imports only its own layer and the layers to its left. Outside ``rnnlab/engine/``, nothing imports an engine
module but ``rnnlab.engine.api``; the worker side (``rnnlab/worker/``) runs in a process of its own and imports
nothing of the manager's."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("core", "tf", "experiments", "worker", "engine", "judge", ("present", "exporters"), "commands", "ui", "pages")
FRONT_DOOR = "rnnlab.engine.api"


def rank(module: str) -> int | None:
    """The layer of a dotted module name of this project (None: a third-party or top-level module)."""
    parts = module.split(".")
    name = parts[1] if parts[0] == "rnnlab" and len(parts) > 1 else parts[0] if parts[0] in ("ui", "pages") else None
    for i, layer in enumerate(LAYERS):
        if name == layer or (isinstance(layer, tuple) and name in layer):
            return i
    return None


def sources() -> list[tuple[str, Path]]:
    out = []
    for folder in ("rnnlab", "ui", "pages"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            out.append((".".join(p for p in rel.parts if p != "__init__"), path))
    return out


def imports(path: Path) -> list[str]:
    """Every module name the file imports, at any depth (a function's own import counts: it runs)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            found += [f"{node.module}.{a.name}" for a in node.names]  # "from rnnlab.engine import runner"
    return found


def modules() -> set[str]:
    return {name for name, _ in sources()}


def test_every_import_points_down_or_sideways():
    known = modules()
    up = []
    for name, path in sources():
        mine = rank(name)
        for target in imports(path):
            if target not in known or mine is None:
                continue
            theirs = rank(target)
            if theirs is not None and theirs > mine:
                up.append(f"{name} -> {target}")
    assert not up, "imports that point up a layer:\n  " + "\n  ".join(sorted(set(up)))


def test_outside_the_engine_only_its_front_door_is_imported():
    known = modules()
    side = []
    for name, path in sources():
        if name.startswith("rnnlab.engine"):
            continue
        for target in imports(path):
            if target in known and target.startswith("rnnlab.engine.") and target != FRONT_DOOR:
                side.append(f"{name} -> {target}")
    assert not side, "engine modules imported past engine.api:\n  " + "\n  ".join(sorted(set(side)))


def test_the_front_door_hands_on_no_private_name():
    tree = ast.parse((ROOT / "rnnlab/engine/api.py").read_text(encoding="utf-8"))
    listed = next((n.value for n in tree.body if isinstance(n, ast.Assign)
                   and any(getattr(t, "id", "") == "__all__" for t in n.targets)), None)
    assert listed is not None, "engine/api.py lists its names in __all__"
    names = [ast.literal_eval(e) for e in listed.elts]
    assert names and not [n for n in names if n.startswith("_")]


@pytest.mark.parametrize("layer", LAYERS)
def test_every_layer_is_a_place_in_the_tree(layer):
    for name in (layer if isinstance(layer, tuple) else (layer,)):
        assert (ROOT / "rnnlab" / name).is_dir() or (ROOT / name).is_dir(), name
