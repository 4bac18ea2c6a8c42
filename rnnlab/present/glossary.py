"""The glossary: the words the pages use without explaining them each time (seed, "seed 000 §3.1", the variant names,
zofm, roofline, the ratio and verdict notation), in one place.

Built from the registries where they exist (``experiments.seeds`` for the seeds, ``tf.variants`` and each
experiment's labels for the variant names, ``core.rules`` for the margins, ``core.format`` for the column labels),
so the glossary cannot drift from what the pages show. Pure functions, no Streamlit: ``pages/glossary.py`` lays it
out, and every page links to it from the sidebar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from rnnlab import experiments
from rnnlab.core import format as fmt
from rnnlab.core import rules, stats
from rnnlab.experiments import seeds
from rnnlab.judge.select import ORIGIN_WORDS
from rnnlab.tf import variants as unroll_variants
from rnnlab.present.pages import Page

PAGE = Page("glossary", "Glossary", ":material/menu_book:", order=7)

TITLE = "Glossary"
INTRO = ("The words and marks the pages use without explaining them each time. Variant names and seed titles come "
         "from the same registries the measurements use.")


@dataclass(frozen=True)
class Entry:
    term: str  # as the pages write it
    text: str  # Markdown


@dataclass(frozen=True)
class Section:
    title: str
    entries: tuple[Entry, ...]
    note: str = ""


def seed_entries() -> tuple[Entry, ...]:
    """"seed", "seed 000 §3.1" and one entry per seed (``experiments.seeds``)."""
    numbers = ", ".join(seeds.SEED_FILES)
    out = [
        Entry("seed", "One of the documents rnnlab grew from: blog posts and a Stack Overflow question (in Chinese and "
                      f"English) that make claims about static and dynamic unrolling in TensorFlow. They are numbered "
                      f"{numbers}; the Claims page tests every checkable statement they make, with the seed's own "
                      "figure beside the measurement."),
        Entry("seed 000 §3.1", "Section 3.1 of seed 000: a claim's place in its seed (the seed's own section "
                               "numbering). *seed 001 (question)* or *(answer)* points into the Stack Overflow "
                               "thread."),
        Entry("seed configuration", "A seed's own benchmark settings, exactly (e.g. seed 000: "
                                    f"{fmt.fmt_params(seeds.SEED_000)}); the **Seed** buttons and the `seed` preset "
                                    "set them. *Quick* is a small configuration for a first look."),
    ]
    out += [Entry(f"seed {n}", _sentence(seeds.SEED_TITLES.get(n, f))) for n, f in seeds.SEED_FILES.items()]
    return tuple(out)


def unroll_variant_entries() -> tuple[Entry, ...]:
    """The unrolling variants (``rnnlab.tf.variants``): name -> what runs."""
    out = [Entry(f"`{name}`", label + (". The reference of the ratios unless you pick another."
                                       if name == unroll_variants.REFERENCE else ""))
           for name, label in unroll_variants.BASE_VARIANTS.items()]
    out.append(Entry("`<name>+xla`", "The same variant compiled with XLA (`tf.function(jit_compile=True)`); TF1 "
                                     "sessions have none."))
    return tuple(out)


def other_variant_entries() -> tuple[Entry, ...]:
    """Every other experiment's variants, grouped by experiment (its registry's labels)."""
    out = []
    for exp in experiments.all_experiments():
        if exp.name == "unroll":
            continue
        names = [v for v in exp.variants if v not in unroll_variants.VARIANTS]
        if not names:
            continue
        labelled = [(v, experiments.variant_label(exp.name, v)) for v in names]
        plain = [v for v, lab in labelled if lab == v]  # no label of its own: its page explains it
        items = "".join(f"\n    - `{v}`: {lab}" for v, lab in labelled if lab != v)
        if plain:
            items += "\n    - " + ", ".join(f"`{v}`" for v in plain) + (
                f": explained on the {exp.page.capitalize()} page" if exp.page else "")
        out.append(Entry(f"{exp.name}", f"*{exp.title}.*{items}"))
    return tuple(out)


def _sentence(text: str) -> str:
    """A title as a sentence: a capital first, a full stop last unless it ends with its own mark ("...?")."""
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(("?", "!", ".")) else ".")


def roofline_range(records: Sequence[Any] = ()) -> str:
    """What share of the matmul peak the stored unroll records reach, "from 19% to 57%", derived from them; ""
    when none carries it."""
    shares = [r.metrics["roofline_frac"] for r in records
              if getattr(r, "experiment", None) == "unroll" and r.ok and r.metrics.get("roofline_frac") is not None]
    if not shares:
        return ""
    lo, hi = min(shares), max(shares)
    return f"{fmt.fmt_percent(lo)}" if fmt.fmt_percent(lo) == fmt.fmt_percent(hi) else \
        f"from {fmt.fmt_percent(lo)} to {fmt.fmt_percent(hi)}"


def measure_entries(records: Sequence[Any] = ()) -> tuple[Entry, ...]:
    """Column labels and what they measure (the labels are ``core.format``'s); ``records``: what the roofline entry
    quotes as the share the stored unroll records reach."""
    reach = roofline_range(records)
    L = fmt.label
    return (
        Entry(L("build_s"), "Building the forward graph (TF1) or tracing the function (TF2, Keras), without running "
                            "it: the median of warm builds. *first build* is the cold one."),
        Entry(L("first_call_s"), "The first run after building: compilation included."),
        Entry(f"{L('fwd_ms')}, {L('train_ms')}", "Median time per batch after warm-up: a forward pass; a forward and "
                                                 "backward pass with an Adam update."),
        Entry(L("graph_nodes"), "Nodes the outputs and final states need, plus every node inside function bodies: "
                                "what unrolling multiplies."),
        Entry(L("peak_mem_mb"), "The worker process's memory high-water mark above its value after importing "
                                "TensorFlow (CPU); TensorFlow's allocator peak on a GPU."),
        Entry(L("max_abs_diff"), "Largest absolute difference of outputs and final states from the reference "
                                 f"variant's, on the same weights and inputs (agreement: within {rules.ATOL:g})."),
        Entry(f"{L('gflops')}, roofline, {L('roofline_frac')}",
              "Achieved GFLOP/s is the forward pass's counted floating-point operations over its time. The "
              "**roofline** is this machine's matrix-multiply rate, measured once by a probe: *of matmul peak* is "
              "the achieved rate as a share of it" + (f" (the stored unroll records reach {reach} of it)." if reach
                                                      else ".")),
        Entry("zofm", "`zero_output_for_mask`, a Keras RNN layer argument. Keras' default `False` repeats the last "
                      "real output past each row's length; `True` writes zeros there, as TF1's `dynamic_rnn` with "
                      "`sequence_length` does. The *zofm=True* column counts the checks the same layer passes with "
                      "it on."),
    )


def notation_entries() -> tuple[Entry, ...]:
    """How ratios, noise flags, verdicts and sources are written (``core.rules``, ``judge.select``)."""
    margin, noise = fmt.fmt_percent(rules.MARGIN), fmt.fmt_percent(rules.NOISE)
    drift = fmt.fmt_percent(stats.drift_floor())
    return (
        Entry("`1.53x (1.41–1.66)`", "A ratio to the reference (above 1: takes more), with its interval in "
                                     f"brackets: {stats.HOW_WORDS['paired']}; for records not timed side by side, "
                                     f"{stats.HOW_WORDS['rounds']}, or {stats.HOW_WORDS['quartiles']}."),
        Entry("`13.7 (! 23%)`", f"A noisy figure: its rounds disagree by 23% of their median, more than {noise}."),
        Entry(fmt.MISSING, "Not measured, not applicable, or unknown: never a zero."),
        Entry("margin", f"A speed or memory difference counts at {margin} or more, judged on the whole interval."),
        Entry("faster / about as fast / about as fast or slower",
              f"What a sentence says of a ratio's interval: faster or slower (in bold) when the whole interval clears "
              f"the {margin} margin, about as fast when it lies inside it, and \"about as fast or slower\" (or "
              "\"... or faster\") when it reaches across one side of the margin only: a gain (or a loss) of the "
              "margin or more is ruled out, the rest is not decided. Across both sides: too noisy to call."),
        Entry("holds / does not hold / depends / too noisy to call",
              "A claim's verdict: the records agree with the seed, contradict it, agree only in some "
              "configurations, or the interval reaches across the margin. More rounds narrow a wide interval; "
              f"a ratio within about {drift} of the margin stays undecided however many rounds are run, because "
              "two runs minutes apart differ by that much (the interval carries it). "
              "*Not measured*: no record yet; *not measurable here*: the seed's figure is about a GPU."),
        Entry(", ".join(ORIGIN_WORDS.values()),
              "Where a record comes from: **this machine** (measured here: the only records a page calls "
              "*measured here*), **imported** from another machine's file, or **bundled** with rnnlab (read-only, "
              "named by its machine). A ratio never pairs two machines' records."),
        Entry("round", "One fresh worker process measuring every chosen variant once; with several rounds each "
                       "figure is the median of the rounds."),
    )


def sections(records: Sequence[Any] = ()) -> tuple[Section, ...]:
    """The Glossary's sections; ``records`` (the page's: stored and bundled) give the figures an entry quotes."""
    return (
        Section("Seeds", seed_entries()),
        Section("Unrolling variants", unroll_variant_entries(),
                note="The names are stable: the CLI, shared links and stored records use them."),
        Section("Other experiments' variants", other_variant_entries()),
        Section("Measures and columns", measure_entries(records)),
        Section("Notation, verdicts and sources", notation_entries()),
    )


def as_markdown(section: Section) -> str:
    """A section as a Markdown definition list (the page and a Markdown export)."""
    lines = [f"- **{e.term}**: {e.text}" for e in section.entries]
    return "\n".join(lines) + (f"\n\n*{section.note}*" if section.note else "")
