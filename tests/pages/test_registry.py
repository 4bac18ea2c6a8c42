"""One registry, everything derived: the sidebar, ``export``'s choices and help, the download buttons and the export
topics all come from the page registry (each ``rnnlab.present.<page>.PAGE``), the experiments' entries
(``Experiment.page``) and the exporters' own registration. A name in only some of those places fails here."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from rnnlab import experiments, exporters
from rnnlab.cli import build_parser
from rnnlab.present import pages
from ui import downloads, nav

ROOT = Path(__file__).resolve().parents[2]


def _export_parser():
    sub = next(a for a in build_parser()._actions if getattr(a, "choices", None) and "export" in a.choices)
    return sub.choices["export"]


def _option(parser, flag):
    return next(a for a in parser._actions if flag in a.option_strings)


def derived() -> dict[str, set[str]]:
    """Every place a page, topic or format is named, as each face of the project shows it."""
    export = _export_parser()
    view_help = _option(export, "--view").help
    experiment_help = _option(export, "--experiment").help
    from rnnlab.present import deck, report

    return {
        "sidebar": {p.url_path for p in nav.PAGES},
        "page files": {p.stem for p in (ROOT / "pages").glob("*.py")},
        "present modules with a PAGE": {p.name for p in pages.pages()},
        "export --view help": set(re.search(r"Pages: (.*)$", view_help).group(1).split(", ")),
        "deck pages": set(deck.PAGES),
        "modules with a view": {p.name for p in pages.pages()
                                if hasattr(importlib.import_module(f"rnnlab.present.{p.name}"), "view")},
        "experiment pages": {e.page for e in experiments.all_experiments()},
        "export topics": set(report.TOPICS.values()),
        "export --experiment help": set(re.split(r", (?:or )?|: ", experiment_help)[1:]),
        "experiments and topic pages": set(experiments.names()) | {p.name for p in pages.pages() if p.topic},
        "export --format": set(_option(export, "--format").choices),
        "exporters": set(exporters.EXPORTERS),
        "downloads": set(downloads.FORMATS),
        "exporters with a button": set(exporters.buttons()),
    }


def problems(names: dict[str, set[str]]) -> list[str]:
    """Each name found in one place of a group but missing from another place of the same group."""
    same = [("sidebar", "page files", "present modules with a PAGE"),
            ("export --view help", "deck pages", "modules with a view"),
            ("export --experiment help", "experiments and topic pages"),
            ("export --format", "exporters"),
            ("downloads", "exporters with a button")]
    within = [("experiment pages", "sidebar"), ("export topics", "sidebar"), ("deck pages", "sidebar"),
              ("downloads", "exporters")]
    out = []
    for group in same:
        every = set().union(*(names[g] for g in group))
        out += [f"{n!r} is not in {g}" for g in group for n in sorted(every - names[g])]
    out += [f"{n!r} of {small} is not in {big}" for small, big in within for n in sorted(names[small] - names[big])]
    return out


@pytest.fixture(scope="module")
def names():
    return derived()


def test_every_page_topic_and_format_is_named_in_every_place(names):
    assert problems(names) == []
    assert names["sidebar"] >= {"overview", "claims", "glossary", "results"}  # pages that are not experiments too
    assert names["downloads"] and names["exporters"] > names["downloads"]  # json and svg: not page downloads


@pytest.mark.parametrize("place, name", [("page files", "roofline"), ("present modules with a PAGE", "roofline"),
                                         ("experiment pages", "roofline"), ("modules with a view", "results"),
                                         ("exporters", "xlsx"), ("downloads", "svg"),
                                         ("experiments and topic pages", "fused")])
def test_a_name_in_only_some_places_fails(names, place, name):
    broken = {k: set(v) for k, v in names.items()}
    broken[place].add(name)
    assert any(repr(name) in p for p in problems(broken))


def test_the_sidebar_follows_the_registry_order_and_home_page():
    assert [p.name for p in nav.PAGES] == pages.names() and pages.names()[0] == "overview"
    assert [p.name for p in nav.PAGES if p.default] == ["overview"]


def test_each_experiment_names_its_estimate_and_its_own_hosted_caps():
    from rnnlab.engine import hosted

    shared = hosted.param_caps(hosted.Limits(own={}))
    for e in experiments.all_experiments():
        assert e.work_s > 0
        assert not set(e.hosted) & set(shared), f"{e.name}: a cap for a shared param belongs in hosted.Limits"
        assert set(e.hosted) <= {p.name for p in e.params.params if p.kind == "int"}, e.name
