import pytest

from rnnlab import plan
from rnnlab.core.errors import RnnlabError
from rnnlab.core.params import PARAMS, lengths_for


@pytest.mark.parametrize("name,text,fragment", [
    ("seq_len", "0", "seq_len=0 is out of limits: expected int in [1, 2000]"),
    ("units", "-3", "units=-3 is out of limits"),
    ("batch", "abc", "batch='abc' is not valid: expected int in [1, 4096]"),
    ("cell", "cnn", "expected one of rnn, lstm, gru"),
    ("dtype", "float64", "one of float32, mixed_float16, bfloat16"),
    ("lengths", "uniform:9-3", "A must not exceed B"),
    ("lengths", "fixed:0", "lengths start at 1"),
    ("time_major", "maybe", "true or false"),
])
def test_bad_values_name_the_parameter_and_its_limits(name, text, fragment):
    with pytest.raises(RnnlabError) as e:
        PARAMS[name].parse(text)
    assert fragment in str(e.value)


def test_good_values_parse():
    assert PARAMS["seq_len"].parse("25") == 25
    assert PARAMS["time_major"].parse("true") is True
    assert PARAMS["lengths"].parse("uniform:3-9") == "uniform:3-9"


def test_plan_sweeps_the_cross_product_and_fills_defaults():
    p = plan("unroll", preset="quick", overrides={"seq_len": [25, 50, 100], "cell": ["rnn", "lstm"]})
    assert len(p.points) == 6
    assert {(pt["seq_len"], pt["cell"]) for pt in p.points} == {(s, c) for s in (25, 50, 100) for c in ("rnn", "lstm")}
    assert all(pt["units"] == 32 and pt["repeats"] == 5 for pt in p.points)  # the preset's
    assert p.points[0]["parallel_iterations"] == 32  # a default


def test_seed_preset_is_seed_000s_configuration():
    p = plan("unroll", preset="seed")
    pt = p.points[0]
    assert (pt["cell"], pt["layers"], pt["units"], pt["batch"], pt["seq_len"], pt["input_dim"], pt["dtype"]) == \
        ("rnn", 3, 128, 32, 100, 64, "float32")
    assert "tf1_static" in p.variants and "keras_cell+xla" in p.variants


def test_plan_refuses_unknowns_and_oversize():
    with pytest.raises(RnnlabError, match="unknown parameter 'sequence'"):
        plan("unroll", overrides={"sequence": [3]})
    with pytest.raises(RnnlabError, match="unknown variant 'tf3'"):
        plan("unroll", variants=["tf3"])
    with pytest.raises(RnnlabError, match="unknown preset"):
        plan("unroll", preset="huge")
    with pytest.raises(RnnlabError, match=r"needs an estimated .* MB .* more than the 1,000 MB available"):
        plan("unroll", overrides={"units": 2048, "batch": 4096, "seq_len": 2000}, available_mb=1000)


def test_lengths_are_deterministic_and_clipped():
    assert lengths_for("full", 3, 7) == [7, 7, 7]
    assert lengths_for("fixed:9", 2, 7) == [7, 7]
    assert lengths_for("rows:5/3/1", 4, 5) == [5, 3, 1, 5]
    a = lengths_for("uniform:2-6", 50, 10, seed=1)
    assert a == lengths_for("uniform:2-6", 50, 10, seed=1) and min(a) >= 2 and max(a) <= 6
