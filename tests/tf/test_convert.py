"""The TF1 -> Keras 3 converter (rnnlab.tf.convert) and the ``convert`` command.

Every supported cell (BasicRNNCell, BasicLSTMCell, LSTMCell, GRUCell) at stack depths 1-3: the original TF1 graph's
outputs and final states against the converted Keras 3 layers on the same inputs, full lengths and with
``sequence_length``, to 1e-5. Refusals of what Keras 3 cannot express. A checkpoint written by TF1's ``Saver`` in
``tmp_path`` read from disk, through the converter and through the command's ``run(...)``.
"""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import json  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rnnlab.core.errors import RnnlabError  # noqa: E402
from rnnlab.tf import convert as cv  # noqa: E402
from tests.factories import IN, LENGTHS, UNITS, build_tf1, rc  # noqa: E402

pytestmark = pytest.mark.slow  # Streamlit pages, a browser or TensorFlow

TOL = 1e-5
CELLS = {
    "BasicRNNCell": lambda: rc.BasicRNNCell(UNITS),
    "BasicLSTMCell": lambda: rc.BasicLSTMCell(UNITS, forget_bias=0.7),
    "LSTMCell": lambda: rc.LSTMCell(UNITS),
    "GRUCell": lambda: rc.GRUCell(UNITS),
}
FORGET_BIAS = {"BasicLSTMCell": 0.7, "LSTMCell": 1.0}


def assert_matches(model, spec, x, res, tol=TOL):
    worst = 0.0
    for case, (out, state) in res.items():
        got = cv.run_keras(model, x, None if case == "full" else LENGTHS)
        ref = {"outputs": out, **cv.tf1_state_dict(state, spec)}
        assert set(ref) <= set(got)
        for k, v in ref.items():
            d = float(np.max(np.abs(np.asarray(v, np.float64) - got[k])))
            assert d <= tol, f"{case}/{k}: max abs diff {d:.3e} > {tol}"
            worst = max(worst, d)
    return worst


# -- round trips ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("layers", [1, 2, 3])
@pytest.mark.parametrize("cls", list(CELLS))
def test_round_trip_every_cell_and_depth(cls, layers):
    variables, x, res = build_tf1(CELLS[cls], layers, seed=layers)
    spec = cv.detect_stack(variables)
    assert spec.layers == layers and spec.multi == (layers > 1)
    assert {c.tf1_class for c in spec.cells} == {cls}
    assert spec.input_dim == IN and spec.units == UNITS
    model = cv.convert(variables, forget_bias=FORGET_BIAS.get(cls, 1.0))
    assert_matches(model, spec, x, res)
    # the library's own verification (a rebuilt TF1 graph) agrees
    v = cv.verify(variables, model, forget_bias=FORGET_BIAS.get(cls, 1.0))
    assert v["pass"] and v["max_abs_diff"] <= TOL
    assert set(v["cases"]) == {"full", "sequence_length"}


def test_mixed_stack_lstm_over_gru_over_rnn():
    makers = iter([lambda: rc.BasicLSTMCell(UNITS), lambda: rc.GRUCell(4), lambda: rc.BasicRNNCell(UNITS)])

    def make():
        return next(makers)()

    variables, x, res = build_tf1(make, 3)
    spec = cv.detect_stack(variables)
    assert [c.cell for c in spec.cells] == ["lstm", "gru", "rnn"]
    assert [c.input_dim for c in spec.cells] == [IN, UNITS, 4]
    assert_matches(cv.convert(variables), spec, x, res)


def test_as_layers_and_zero_output_for_mask():
    variables, x, res = build_tf1(CELLS["GRUCell"], 2)
    spec = cv.detect_stack(variables)
    layers = cv.convert(variables, as_layers=True)
    assert [type(layer).__name__ for layer in layers] == ["GRU", "GRU"]
    assert all(layer.reset_after is False for layer in layers)
    assert_matches(layers, spec, x, res)
    # Keras's default (zero_output_for_mask=False) repeats the last output where dynamic_rnn writes zeros
    repeat = cv.run_keras(cv.convert(variables, zero_output_for_mask=False), x, LENGTHS)
    out = res["sequence_length"][0]
    assert np.max(np.abs(out - repeat["outputs"])) > 1e-3
    assert np.max(np.abs(cv.tf1_state_dict(res["sequence_length"][1], spec)["cell_1/h"] - repeat["cell_1/h"])) <= TOL


def test_forget_bias_is_not_in_the_variables():
    variables, x, res = build_tf1(CELLS["BasicLSTMCell"], 1)  # built with forget_bias=0.7
    spec = cv.detect_stack(variables)
    with pytest.raises(AssertionError):
        assert_matches(cv.convert(variables), spec, x, res)  # default 1.0: wrong by construction
    assert_matches(cv.convert(variables, forget_bias=0.7), spec, x, res)


def test_weight_layout_by_hand():
    """The gate reordering and splitting rules, on a kernel whose entries name their gate."""
    u, d = 2, 3
    kernel = np.concatenate([np.full((d + u, u), g, np.float32) for g in (1, 2, 3, 4)], axis=1)  # i, j, f, o
    k, rk, b = cv.lstm_weights(kernel, np.zeros(4 * u, np.float32), d, forget_bias=1.0)
    assert k.shape == (d, 4 * u) and rk.shape == (u, 4 * u)
    assert list(k[0, ::u]) == [1, 3, 2, 4]  # Keras i, f, c(=j), o
    assert list(b) == [0, 0, 1, 1, 0, 0, 0, 0]  # forget_bias on f only
    gk = np.concatenate([np.full((d + u, u), 1, np.float32), np.full((d + u, u), 2, np.float32)], axis=1)  # r, u
    ck = np.full((d + u, u), 3, np.float32)
    k, rk, b = cv.gru_weights(gk, np.array([1, 1, 2, 2], np.float32), ck, np.array([3, 3], np.float32), d)
    assert list(k[0, ::u]) == [2, 1, 3] and list(b[::u]) == [2, 1, 3]  # Keras z(=TF1 u), r, h


# -- refusals and detection ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw,names", [
    (dict(use_peepholes=True), ["w_f_diag", "w_i_diag", "w_o_diag"]),
    (dict(num_proj=3), ["projection/kernel", "num_proj"]),
    (dict(use_peepholes=True, num_proj=3), ["w_f_diag", "projection/kernel"]),
])
def test_refuses_peepholes_and_projections(kw, names):
    variables, _, _ = build_tf1(lambda: rc.LSTMCell(UNITS, **kw), 2)
    spec = cv.detect_stack(variables)  # detection records them...
    assert all(c.unsupported for c in spec.cells)
    with pytest.raises(RnnlabError) as e:  # ...conversion refuses, naming them
        cv.convert(variables)
    for n in names:
        assert n in str(e.value)
    assert "cell_0" in str(e.value) and "cell_1" in str(e.value)


@pytest.mark.parametrize("kw", [dict(cell_clip=3.0), dict(proj_clip=1.0), dict(use_peepholes=True),
                                dict(num_proj=2)])
def test_refuses_options_passed_but_not_visible(kw):
    variables, _, _ = build_tf1(CELLS["LSTMCell"], 1)
    with pytest.raises(RnnlabError) as e:
        cv.convert(variables, **kw)
    assert next(iter(kw)) in str(e.value)


def test_detection_from_generic_names_and_cell_argument():
    # a MultiRNNCell of cells created with custom names: the cell_N scopes still say "a stack"
    variables, x, res = build_tf1(lambda: rc.BasicRNNCell(8), 2)
    renamed = {k.replace("basic_rnn_cell", "my_cell"): v for k, v in variables.items()}
    # kernel [IN+8, 8] fits an rnn of 8 units (and an lstm of 2 units with 9 inputs): the cell below decides?
    with pytest.raises(RnnlabError, match="cell=rnn or cell=lstm"):
        cv.detect_stack(renamed)
    spec = cv.detect_stack(renamed, cell="rnn")
    assert [c.cell for c in spec.cells] == ["rnn", "rnn"]
    assert_matches(cv.convert(renamed, cell="rnn"), spec, x, res)
    with pytest.raises(RnnlabError, match="BasicLSTMCell"):
        cv.detect_stack(build_tf1(CELLS["BasicLSTMCell"], 1)[0], cell="gru")


def test_detection_errors_are_rnnlab_errors():
    with pytest.raises(RnnlabError, match="no TF1 RNN cell variables"):
        cv.detect_stack({"dense/kernel": np.zeros((3, 4)), "dense/bias": np.zeros(4)})
    with pytest.raises(RnnlabError, match="Keras layer weights"):
        cv.detect_stack({"lstm/lstm_cell/kernel": np.zeros((3, 8)), "lstm/lstm_cell/recurrent_kernel": np.zeros((2, 8)),
                         "lstm/lstm_cell/bias": np.zeros(8)})
    with pytest.raises(RnnlabError, match="no variables"):
        cv.detect_stack({})
    a, _, _ = build_tf1(CELLS["GRUCell"], 1)
    two = {**a, **{k.replace("rnn/", "decoder/"): v for k, v in a.items()}}
    with pytest.raises(RnnlabError, match="scope="):
        cv.detect_stack(two)
    assert cv.detect_stack(two, scope="decoder").scope == "decoder"
    with pytest.raises(RnnlabError, match="cell_0..cell_1"):
        b, _, _ = build_tf1(CELLS["GRUCell"], 3)
        cv.detect_stack({k: v for k, v in b.items() if "cell_1/" not in k})


# -- checkpoints on disk and the command -----------------------------------------------------------------------------

def test_checkpoint_from_disk_and_command_run(tmp_path):
    from rnnlab.commands import convert as cmd

    prefix = tmp_path / "tf1" / "model.ckpt"
    prefix.parent.mkdir()
    variables, x, res = build_tf1(lambda: rc.BasicLSTMCell(UNITS, forget_bias=0.5), 2, save_to=prefix)

    read = cv.read_tf1_checkpoint(prefix)
    assert set(read) == {k[:-2] for k in variables}
    for k, v in variables.items():
        np.testing.assert_array_equal(read[k[:-2]], v)
    # the same checkpoint by directory and by one of its files
    assert set(cv.read_tf1_checkpoint(prefix.parent)) == set(read)
    assert set(cv.read_tf1_checkpoint(str(prefix) + ".index")) == set(read)

    spec = cv.detect_stack(read)
    model = cv.convert(read, forget_bias=0.5)
    path = cv.save(model, tmp_path / "out" / "m.keras")
    import keras

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = keras.models.load_model(path)
    assert_matches(loaded, spec, x, res)

    # the command's run(): .keras and .weights.h5
    r = cmd.run(checkpoint=str(prefix), out=str(tmp_path / "cli.keras"), forget_bias=0.5)
    assert r["pass"] and r["format"] == "keras" and os.path.exists(r["out"])
    v = r["verification"]
    assert v["max_abs_diff_outputs"] <= TOL and v["max_abs_diff_states"] <= TOL
    assert set(v["cases"]["sequence_length"]["diffs"]) == {"outputs", "cell_0/h", "cell_0/c", "cell_1/h", "cell_1/c"}
    json.dumps(r)  # JSON-ready
    text = cmd.format_text(r)
    assert "PASS" in text and "cell_1/c" in text
    r2 = cmd.run(checkpoint=str(prefix.parent), out=str(tmp_path / "w.weights.h5"), cell="lstm", forget_bias=0.5)
    assert r2["pass"] and r2["format"] == "weights.h5"


def test_command_refuses_bad_input(tmp_path):
    from rnnlab.commands import convert as cmd

    with pytest.raises(RnnlabError, match="no such checkpoint"):
        cmd.run(checkpoint=str(tmp_path / "missing.ckpt"), out=str(tmp_path / "o.keras"))
    junk = tmp_path / "notes.txt"
    junk.write_text("hello")
    with pytest.raises(RnnlabError, match="not a TF checkpoint"):
        cmd.run(checkpoint=str(junk), out=str(tmp_path / "o.keras"))
    fake = tmp_path / "fake.ckpt"
    (tmp_path / "fake.ckpt.index").write_bytes(b"\x00garbage" * 10)
    with pytest.raises(RnnlabError, match="fake.ckpt.index: not a TensorFlow checkpoint index"):
        cmd.run(checkpoint=str(fake), out=str(tmp_path / "o.keras"))
    with pytest.raises(RnnlabError, match=r"\.keras"):
        cmd.run(checkpoint=str(fake), out=str(tmp_path / "o.h5"))
    peep = tmp_path / "peep" / "model.ckpt"
    peep.parent.mkdir()
    build_tf1(lambda: rc.LSTMCell(UNITS, use_peepholes=True), 1, save_to=peep)
    with pytest.raises(RnnlabError, match="w_f_diag"):
        cmd.run(checkpoint=str(peep), out=str(tmp_path / "p.keras"))
    assert not (tmp_path / "p.keras").exists()


def test_command_main_exit_codes(tmp_path, capsys):
    from rnnlab.commands import convert as cmd
    import argparse

    prefix = tmp_path / "model.ckpt"
    build_tf1(CELLS["GRUCell"], 1, save_to=prefix)
    parser = argparse.ArgumentParser()
    cmd.setup_arguments(parser.add_subparsers())
    args = parser.parse_args(["convert", str(prefix), "--out", str(tmp_path / "g.keras"), "--json"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pass"] and out["spec"]["cell"] == "gru"


# -- pure parts: cuDNN rules and the mapping -------------------------------------------------------------------------

def test_cudnn_eligibility_rules():
    from rnnlab.tf.cudnn import cudnn_eligibility

    assert cudnn_eligibility("LSTM") == (True, [])
    assert cudnn_eligibility("GRU", sequence_length=[3, 2]) == (True, [])
    ok, why = cudnn_eligibility("GRU", reset_after=False)
    assert not ok and "reset_after" in why[0]
    ok, why = cudnn_eligibility("LSTM", recurrent_dropout=0.1, unroll=True, use_bias=False, activation="relu",
                                recurrent_activation="hard_sigmoid", gpu=False)
    assert not ok and len(why) == 6
    assert not cudnn_eligibility("LSTM", mask=[[1, 0, 1]])[0]
    assert not cudnn_eligibility("LSTM", sequence_length=[0, 3])[0]
    assert not cudnn_eligibility("SimpleRNN")[0]
    ok, why = cudnn_eligibility("RNN", cell="tf.compat.v1.nn.rnn_cell.LSTMCell(32)")
    assert not ok and any("TF1" in w for w in why)
    with pytest.raises(RnnlabError, match="unknown setting"):
        cudnn_eligibility("LSTM", recurent_dropout=0.0)


def test_mapping_rows_have_checks_and_no_tf_import():
    import subprocess

    code = ("import sys; from rnnlab.tf import mapping, cudnn; "
            "assert 'tensorflow' not in sys.modules; print(len(mapping.ROWS))")
    env = {k: v for k, v in os.environ.items()}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    from rnnlab.tf import migrate_checks as checks, mapping

    assert int(out.stdout.strip()) == len(mapping.ROWS)
    assert set(mapping.CHECK_NAMES) == set(checks.CHECKS)
    for key in ("basic_rnn_cell", "basic_lstm_cell", "lstm_cell", "gru_cell", "multi_rnn_cell", "dynamic_rnn",
                "static_rnn", "bidirectional_dynamic_rnn", "dropout_wrapper", "residual_wrapper",
                "tf_keras_to_keras3"):
        assert mapping.BY_KEY[key].checked_live
    assert any("cell_clip" in n for n in mapping.BY_KEY["lstm_cell"].no_equivalent)
