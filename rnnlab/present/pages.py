"""The registry of pages: each page's entry is the ``PAGE`` of its module ``rnnlab.present.<name>``.

    PAGE = Page("unrolling", "Unrolling", ":material/linear_scale:", order=1, about="static vs dynamic unrolling")

Navigation (``ui/nav.py``), ``export --view`` (``present.deck``), ``export --experiment`` and ``--full``
(``present.report.TOPICS``, ``commands/export.py``) read this registry; which experiments a page shows is each
experiment's own ``Experiment.page``. Listing the pages imports none of their modules (a page module loads the judges
and Altair): each ``PAGE`` is read from its source, so it is written with literal arguments only.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Page:
    name: str  # its URL path, its ``pages/<name>.py`` and its module ``rnnlab.present.<name>``
    title: str  # in the sidebar
    icon: str  # a Material icon for the sidebar
    order: int  # its place in the sidebar
    about: str = ""  # what the page is, for ``export --view``; empty: the page has no ``view`` to export
    topic: bool = False  # ``export --experiment <name>`` writes its report over every experiment's records (Claims)
    default: bool = False  # the app's home page

    @property
    def url_path(self) -> str:  # stable: links and shared URLs use it
        return self.name

    @property
    def file(self) -> str:
        """Its Streamlit script, relative to ``streamlit_app.py``."""
        return f"pages/{self.name}.py"


def _declared(path: Path) -> Page | None:
    """The module's ``PAGE = Page(...)``, read without importing it (only that statement is parsed: listing the
    pages stays cheap enough for ``--help``)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("PAGE = Page(")), None)
    if start is None:
        return None
    end = start
    while True:  # to the line that closes the call (its arguments are literals: no brackets inside strings)
        text = "\n".join(lines[start:end + 1])
        if text.count("(") <= text.count(")") or end + 1 == len(lines):
            break
        end += 1
    call = ast.parse(text, str(path)).body[0].value
    try:
        args = [ast.literal_eval(a) for a in call.args]
        kw = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    except ValueError:
        raise TypeError(f"{path.name}: PAGE = Page(...) takes literal arguments only") from None
    return Page(*args, **kw)


@functools.lru_cache(maxsize=1)
def pages() -> tuple[Page, ...]:
    """Every registered page, in sidebar order."""
    found = (_declared(p) for p in sorted(HERE.glob("*.py")) if p.name != Path(__file__).name)
    return tuple(sorted((p for p in found if p is not None), key=lambda p: p.order))


def names() -> list[str]:
    return [p.name for p in pages()]


def get(name: str) -> Page | None:
    return next((p for p in pages() if p.name == name), None)


def viewed() -> dict[str, str]:
    """Page -> what it is, for every page ``export --view`` can write (its module defines ``view``)."""
    return {p.name: p.about for p in pages() if p.about}
