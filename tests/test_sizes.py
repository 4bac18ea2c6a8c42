"""No giants: every module under rnnlab/, ui/ and pages/ at most MAX_MODULE lines, every function at most
MAX_FUNCTION lines (from its ``def`` line to its last line, nested functions counted in their parent too).

No allow-list on purpose: a module over the limit is split by topic, not excused here."""

from __future__ import annotations

import pytest
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("rnnlab", "ui", "pages")
MAX_MODULE = 500
MAX_FUNCTION = 60


def modules() -> list[Path]:
    return sorted(path for folder in FOLDERS for path in (ROOT / folder).rglob("*.py"))


def module_lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def function_lines(path: Path) -> list[tuple[str, int, int]]:
    """(qualified name, first line, length) of every function and method in the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                found.append((name, child.lineno, child.end_lineno - child.lineno + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def test_the_counter_counts(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("class A:\n    def f(self):\n        def g():\n            return 1\n        return g()\n\n"
                      "async def h():\n    pass\n")
    assert module_lines(sample) == 8
    assert function_lines(sample) == [("A.f", 2, 4), ("A.f.g", 3, 2), ("h", 7, 2)]


def test_scope_is_not_empty():
    names = {path.relative_to(ROOT).parts[0] for path in modules()}
    assert names == set(FOLDERS)


def test_no_module_over_the_limit():
    over = [f"{path.relative_to(ROOT)}: {n} lines" for path in modules() if (n := module_lines(path)) > MAX_MODULE]
    assert not over, f"modules over {MAX_MODULE} lines (split them by topic):\n" + "\n".join(over)


@pytest.mark.slow  # parses every module of the package
def test_no_function_over_the_limit():
    over = [f"{path.relative_to(ROOT)}:{line} {name}: {n} lines"
            for path in modules() for name, line, n in function_lines(path) if n > MAX_FUNCTION]
    assert not over, f"functions over {MAX_FUNCTION} lines:\n" + "\n".join(over)
