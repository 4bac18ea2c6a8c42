"""One validator (issue 20): ``experiments.problems`` checks every field of a record, and ``import`` refuses a
record with one line naming the field; the bundled records all pass it."""

import json

import pytest

from rnnlab import experiments
from rnnlab.core.baseline import BASELINE_DIR
from rnnlab.core.errors import RnnlabError
from rnnlab.core.record import Record
from rnnlab.engine import api

BUNDLED = json.loads((BASELINE_DIR / "cpu-epyc-2core.json").read_text())


def first(exp: str) -> dict:
    return json.loads(json.dumps(next(d for d in BUNDLED if d["experiment"] == exp and d["rounds"] or
                                      d["experiment"] == exp == "varlen")))


def set_all(d: dict, v) -> dict:
    d["metrics"] = {k: v for k in d["metrics"]}
    d["rounds"] = [{k: v for k in r} for r in d["rounds"]]
    return d


def test_every_bundled_record_fits():
    assert [experiments.problems(Record.from_dict(d)) for d in BUNDLED] == [[]] * len(BUNDLED)


CASES = [
    ("env.machine", lambda d: d["env"].update(machine="box \ud800")),
    ("env.machine", lambda d: d["env"].update(machine="Evil\u000b box")),
    ("env.cores", lambda d: d["env"].update(cores=0)),
    ("variant", lambda d: d.update(variant="keras\u2028")),
    ("error", lambda d: d.update(error="bad \x1b[31m")),
    ("metrics.", lambda d: set_all(d, 0)),
    ("metrics.", lambda d: set_all(d, 1.7e308)),
    ("metrics.", lambda d: set_all(d, -1)),
    ("metrics.fwd_ms", lambda d: d["metrics"].update(fwd_ms=90000e3)),
    ("rounds[1].zz", lambda d: d.update(rounds=[{"zz": 1.0}] * 3)),
    ("rounds: no round holds the metric fwd_ms", lambda d: [r.pop("fwd_ms") for r in d["rounds"]]),
    ("metrics.fwd_ms: 2.2e-308 is too small", lambda d: d["metrics"].update(fwd_ms=2.2e-308)),
    ("metrics.graph_nodes: 4.941e-324 is too small", lambda d: d["metrics"].update(graph_nodes=5e-324)),
    ("metrics.fwd_ms: 99 is not the median of its rounds", lambda d: d["metrics"].update(fwd_ms=99.0)),
    ("rounds: peak_mem_mb ranges from", lambda d: [r.update(peak_mem_mb=10.0 ** (4 * i)) for i, r in
                                                   enumerate(d["rounds"])] and d["metrics"].update(peak_mem_mb=1e4)),
    ("details.loadavg", lambda d: d["details"].update(loadavg="high")),
    ("details.lengths[0]", lambda d: d["details"].update(lengths=["a"])),
    ("details.kernel", lambda d: d["details"].update(kernel=7)),
    ("details.x", lambda d: d["details"].update(x="\ud800")),
    ("details: a key", lambda d: d["details"].update({"\x00": 1})),
    # issue 30: env text is text, env numbers are numbers; paired windows exactly as the engine writes them
    ("env.machine: not text or null (got a list [1, 2])", lambda d: d["env"].update(machine=[1, 2])),
    ("env.tf: not text or null (got a boolean True)", lambda d: d["env"].update(tf=True)),
    ("env.python: not text or null (got a number 1e+308)", lambda d: d["env"].update(python=1e308)),
    ("env.gpu: not text or null", lambda d: d["env"].update(gpu={"name": "x"})),
    ("env.os_extra: not text or null", lambda d: d["env"].update(os_extra=3)),
    ("env.cores: 1e+308 is not a whole number in [1, 100000]", lambda d: d["env"].update(cores=1e308)),
    ("env.cores: not a finite number", lambda d: d["env"].update(cores=True)),
    ("env.matmul_gflops: 0 is not a number in (0, 1e+09]", lambda d: d["env"].update(matmul_gflops=0)),
    ("env.machine: holds an invisible format character (U+202E", lambda d: d["env"].update(machine="abc\u202egpj")),
    ("env.cpu: holds an invisible format character (U+200B", lambda d: d["env"].update(cpu="a\u200bb")),
    ("details.paired: a boolean, not {session", lambda d: d["details"].update(paired=True)),
    ("details.paired.s.fwd_ms[0][0]: text '0.1' is not a number in (0,", lambda d: d["details"].update(
        paired={"s": {"fwd_ms": [["0.1"]]}})),
    ("details.paired.s.fwd_ms[0][1]: -0.1 is not", lambda d: d["details"].update(paired={"s": {"fwd_ms": [[1, -0.1]]}})),
    ("details.paired.s.fwd_ms[0][0]: a list", lambda d: d["details"].update(paired={"s": {"fwd_ms": [[[0.1]]]}})),
    ("details.paired.s.fwd_ms[0]: a number", lambda d: d["details"].update(paired={"s": {"fwd_ms": [0.1, 0.2]}})),
    ("details.paired.s: text", lambda d: d["details"].update(paired={"s": "windows"})),
    ("details.paired.s.zz_ms: not a metric's windows", lambda d: d["details"].update(paired={"s": {"zz_ms": [[1.0]]}})),
    ("details.paired.s.fwd_ms@x: not a metric's windows", lambda d: d["details"].update(
        paired={"s": {"fwd_ms@x": [[1.0]]}})),
    ("details.paired.s.fwd_ms@other[0][0]: -1 is not", lambda d: d["details"].update(
        paired={"s": {"fwd_ms": [[1.0]], "fwd_ms@other": [[-1]]}})),
    ("details.paired.s.fwd_ms: 4 rounds of windows, more than params.rounds=3", lambda d: d["details"].update(
        paired={"s": {"fwd_ms": [[1.0]] * 4}})),
    ("rounds: 9,000 rounds, more than params.rounds=3", lambda d: d.update(rounds=d["rounds"][:1] * 9000)),
    ("details.condition.threads: -1 is not", lambda d: d["details"].update(condition={"threads": -1})),
    ("details.condition.load: not a field of details.condition", lambda d: d["details"].update(condition={"load": 1})),
    ("details.condition.note: a number", lambda d: d["details"].update(condition={"note": 3})),
    ("params.threads=1.5 is out of limits: expected int in [0, 256]", lambda d: d["params"].update(threads=1.5)),
    ("params.threads=True is out of limits", lambda d: d["params"].update(threads=True)),
]


@pytest.mark.parametrize("field, mutate", CASES)
def test_a_bad_field_is_named(field, mutate):
    d = first("unroll")
    mutate(d)
    found = experiments.problems(Record.from_dict(d))
    assert found and found[0].startswith(field), found


def test_the_condition_of_the_machine_while_timed_fits():
    """The busy-machine records: ``details.condition``, ``<metric>@other`` series beside the windows, and
    ``params.threads``."""
    d = first("unroll")
    d["params"]["threads"] = 0
    d["details"]["condition"] = {"threads": 2, "cores": 2, "other_cores": 0.4, "own_cores": 1.6, "free_cores": 0,
                                 "note": "quiet"}
    d["details"]["paired"] = {"s1": {"fwd_ms": [[0.1, 0.2], [], [0.3]], "fwd_ms@ref": [[0.1, 0.2], [], [0.3]],
                                     "fwd_ms@other": [[0.0, 1.5], [], [0.2]]}}
    assert experiments.problems(Record.from_dict(d)) == []


def test_a_problem_never_quotes_a_long_value():
    d = first("unroll")
    d["env"]["python"] = ["x" * 10**6]
    d["details"]["paired"] = {"s" * 10**4: {"fwd_ms": [["y" * 10**6]]}}
    d["params"]["z" * 10**5] = 1
    found = experiments.problems(Record.from_dict(d))
    assert len(found) == 3 and all(len(p) < 160 for p in found), [p[:200] for p in found]


@pytest.mark.parametrize("exp, key, value, field", [
    ("varlen", "heatmap", {"z": [[1, "x"]]}, "details.heatmap.z[0]"),
    ("varlen", "checks", {"outputs_zero": 3}, "details.checks.outputs_zero"),
    ("pitfalls", "cases", [{"builds": "yes"}], "details.cases[0].builds"),
    ("migrate", "scenarios", {"a": []}, "details.scenarios.a"),
    ("migrate", "diffs", {"outputs": "big"}, "details.diffs.outputs"),
])
def test_details_have_the_shapes_the_workers_write(exp, key, value, field):
    d = first(exp)
    d["details"][key] = value
    found = experiments.problems(Record.from_dict(d))
    assert found and found[0].startswith(field), found


def test_import_refuses_with_one_line_naming_the_field():
    d = first("unroll")
    d["env"]["machine"] = "box \ud800"
    text = json.dumps([first("unroll"), d])
    with pytest.raises(RnnlabError) as e:
        api.read_import(text, name="f.json")
    msg = str(e.value)
    assert "\n" not in msg and "refused 1 of 2 records: record 2: env.machine: a lone surrogate" in msg


def test_a_byte_order_mark_is_accepted():
    text = json.dumps([first("unroll")])
    assert len(api.read_import(b"\xef\xbb\xbf" + text.encode())) == 1
    assert len(api.read_import("\ufeff" + text)) == 1


def _every_category_sample() -> list[str]:
    """Characters of every Unicode category: all of the first 0x3000 code points, then every 37th up to 0x110000."""
    return [chr(c) for c in [*range(0x3000), *range(0x3000, 0x110000, 37), 0x2028, 0x2029, 0xFEFF, 0xD800, 0xDFFF]]


def test_text_problem_says_what_the_character_by_character_rule_says():
    """The fast path (``str.isprintable`` at C speed) decides nothing on its own: for a character of any category,
    alone or between others, on one line or in a multi-line text, the answer is the per-character rule's."""
    import unicodedata

    from rnnlab.experiments import validate

    def rule(s: str, multiline: bool) -> str | None:  # the rule as the docstring of ``text_problem`` states it
        for ch in s:
            cat = unicodedata.category(ch)
            if cat == "Cs":
                return f"a lone surrogate (U+{ord(ch):04X}) is not valid Unicode"
            if cat in ("Cc", "Zl", "Zp") and not (multiline and ch in "\n\t"):
                return f"holds a control character (U+{ord(ch):04X})"
            if cat == "Cf":
                return f"holds an invisible format character (U+{ord(ch):04X}, bidi or zero-width)"
        return None

    wrong = [(hex(ord(ch)), multiline) for ch in _every_category_sample() for multiline in (False, True)
             for s in (ch, f"a b\n{ch}\tc\u00e9") if validate.text_problem(s, multiline=multiline, limit=99) !=
             rule(s, multiline)]
    assert not wrong, wrong[:10]


def test_a_series_of_numbers_is_checked_number_by_number_and_still_counted():
    from rnnlab.experiments import validate

    deep = [1.0, 2.0]
    for _ in range(validate.MAX_DEPTH + 1):
        deep = [deep]
    assert validate.details_problems({"paired": {"s": {"fwd_ms": [[1.0, 2.0, 3e39, 4.0]]}}}) == [
        "details.paired.s.fwd_ms[0][2]: 3e+39 is not plausible (at most 1e38 in size)"]
    assert validate.details_problems({"x": deep})[0].endswith(f"nested deeper than {validate.MAX_DEPTH}")
    many = {"a": [0.5] * (validate.MAX_ITEMS // 2), "b": [0.5] * (validate.MAX_ITEMS // 2)}
    assert validate.details_problems(many) == [f"details.b[{validate.MAX_ITEMS // 2 - 3}]: more than "
                                               f"{validate.MAX_ITEMS:,} values"]
    assert validate.details_problems({"a": [0.5, 1.5], "b": [[1.0, 2.0], ["x", 3.0]]}) == []


def test_a_bundled_record_is_checked_once_a_process_and_any_other_every_time(monkeypatch):
    from rnnlab.experiments import validate

    calls = []
    real = validate.problems
    monkeypatch.setattr(validate, "problems", lambda r, *a, **k: calls.append(r.source) or real(r, *a, **k))
    bundled = Record.from_dict(BUNDLED[0]).with_(source="baseline")
    mine = bundled.with_(source="local")
    for _ in range(3):
        assert experiments.problems(bundled) == [] and experiments.problems(mine) == []
    assert calls == ["baseline", "local", "local", "local"]
    broken = bundled.with_(variant="nosuch")  # another record, even with the same key: checked afresh
    assert experiments.problems(broken) and calls[-1] == "baseline"
