import pytest

from rnnlab import plan
from rnnlab.core.errors import RnnlabError
from rnnlab.core.params import INTERLEAVED, PARAMS, USER_RUN, device_asked, lengths_for


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
    with pytest.raises(RnnlabError, match=r"needs an estimated .* MB .* more than the .* MB available.*"
                                          r"interleaved: \d+ workers alive at once share 1,000 MB"):
        plan("unroll", overrides={"units": 2048, "batch": 4096, "seq_len": 2000}, available_mb=1000)


def test_lengths_are_deterministic_and_clipped():
    assert lengths_for("full", 3, 7) == [7, 7, 7]
    assert lengths_for("fixed:9", 2, 7) == [7, 7]
    assert lengths_for("rows:5/3/1", 4, 5) == [5, 3, 1, 5]
    a = lengths_for("uniform:2-6", 50, 10, seed=1)
    assert a == lengths_for("uniform:2-6", 50, 10, seed=1) and min(a) >= 2 and max(a) <= 6


def test_lengths_may_start_at_0_like_tensorflows_own_benchmark():
    assert PARAMS["lengths"].parse("uniform:0-49") == "uniform:0-49"
    assert PARAMS["lengths"].parse("rows:5/0/3") == "rows:5/0/3"
    assert plan("unroll", overrides={"lengths": "uniform:0-49", "seq_len": 50}).points[0]["lengths"] == "uniform:0-49"
    a = lengths_for("uniform:0-49", 200, 50, seed=3)
    assert min(a) == 0 and max(a) <= 49
    for bad, why in (("uniform:0-0", "B must be at least 1"), ("rows:0/0", "at least one row"),
                     ("fixed:0", "lengths start at 1")):
        with pytest.raises(RnnlabError, match=why):
            PARAMS["lengths"].parse(bad)


def test_a_row_of_length_0_is_all_padding_for_the_numpy_reference_and_the_checks():
    import numpy as np

    from rnnlab.tf import numpy_ref, varlen_checks as checks
    from rnnlab.tf.weights import make_inputs, make_weights

    lengths = [4, 0, 2]
    for cell in ("rnn", "lstm", "gru"):
        w = make_weights(cell, 1, 3, 2, 0)
        x = make_inputs(3, 4, 2, 0)
        out, fin = numpy_ref.forward(cell, w, x, lengths)
        assert not out[1].any() and not fin[0]["h"][1].any()  # nothing ran: zero outputs, the zero initial state
        h = fin[0]["h"] if cell != "lstm" else np.concatenate([fin[0]["c"], fin[0]["h"]], axis=1)
        states = np.repeat(h[:, None, :], 4, axis=1)  # a state carried unchanged past each length
        res = checks.run_checks(out, states, h, lengths)
        assert all(r["ok"] for r in res.values()), res
        assert checks.past_length_pattern(out, lengths) == "zero"
        bad = out.copy()
        bad[1, 3] = 1.0  # an empty row that produced an output
        assert not checks.check_outputs_zero(bad, lengths)["ok"]


def test_rounds_is_a_protocol_parameter_of_every_experiment_that_times_something():
    from rnnlab import experiments

    timed = {"unroll", "knobs", "precision", "padding", "seed003", "training"}
    for exp in experiments.all_experiments():
        assert ("rounds" in exp.params.names()) == (exp.name in timed), exp.name
        if exp.name in timed:
            own = USER_RUN["rounds"] if "protocol" in exp.params.names() else 1  # interleaved: a user's own run's
            assert exp.params["rounds"].default == own and exp.params["rounds"].limits() == "int in [1, 20]"
            assert [exp.presets[p]["rounds"] for p in ("quick", "seed", "full")] == [1, 3, 3], exp.name
    assert plan("unroll", preset="seed").points[0]["rounds"] == 3
    assert plan("unroll", preset="seed").command() == "python -m rnnlab run unroll --preset seed"
    with pytest.raises(RnnlabError, match=r"rounds=21 is out of limits: expected int in \[1, 20\]"):
        plan("unroll", overrides={"rounds": "21"})


def test_the_device_a_point_asks_for_is_its_own_else_the_parameters_default():
    assert device_asked({"device": "gpu"}) == "gpu"
    assert device_asked({}) == PARAMS["device"].default == "auto"
    assert device_asked({"protocol": INTERLEAVED}) == "auto"
