"""The glossary says every word the pages use without explaining it, from the registries (not a copy of them)."""

from rnnlab import experiments
from rnnlab.core import format as fmt
from rnnlab.experiments import seeds
from rnnlab.present import glossary as G
from rnnlab.tf import variants


def _text() -> str:
    return "\n".join(G.as_markdown(s) for s in G.sections())


def test_every_seed_and_the_section_notation_are_explained():
    text = _text()
    assert "**seed**" in text and "**seed 000 §3.1**" in text and "Section 3.1 of seed 000" in text
    for number, title in seeds.SEED_TITLES.items():
        assert f"**seed {number}**" in text and title[1:] in text


def test_every_variant_name_comes_from_its_registry():
    text = _text()
    for name, label in variants.BASE_VARIANTS.items():
        assert f"`{name}`" in text and label in text
    for exp in experiments.all_experiments():
        for v in exp.variants:
            base, xla = variants.split_xla(v)
            assert f"`{base}`" in text and (not xla or "`<name>+xla`" in text), (exp.name, v)


def test_zofm_roofline_and_the_missing_mark():
    text = _text()
    assert "**zofm**" in text and "zero_output_for_mask" in text
    assert "roofline" in text and fmt.label("roofline_frac") in text
    assert f"**{fmt.MISSING}**" in text and fmt.MISSING == "–"
    assert fmt.fmt_value(None) == fmt.MISSING and fmt.fmt_ratio(None) == fmt.MISSING
