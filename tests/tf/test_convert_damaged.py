"""Issue 13: a damaged checkpoint is one line naming the file and why (exit 2), never TensorFlow's IndexError."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rnnlab.core.errors import RnnlabError

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import sys
from rnnlab.cli import main
code = main(sys.argv[1:])
print("tensorflow imported" if "tensorflow" in sys.modules else "no tensorflow", file=sys.stderr)
sys.exit(code)
"""


def _convert(*args):
    return subprocess.run([sys.executable, "-c", PROBE, "convert", *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))


@pytest.mark.slow  # a Python process of its own
@pytest.mark.parametrize("content", [b"garbage\n", b"\x00" * 4096, os.urandom(300)])
def test_a_lone_junk_index_is_not_a_checkpoint_index_before_tensorflow(tmp_path, content):
    (tmp_path / "model.ckpt.index").write_bytes(content)  # no data file beside it
    r = _convert(str(tmp_path / "model.ckpt"), "--out", str(tmp_path / "o.keras"), "--json")
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == ["rnnlab: error: model.ckpt.index: not a TensorFlow checkpoint index",
                                     "no tensorflow"]
    assert r.stdout == ""
    # the app reads this answer (pages/migrate.py through api.convert.parse_convert_output)
    from rnnlab.engine.convert import parse_convert_output

    with pytest.raises(RnnlabError, match="^model.ckpt.index: not a TensorFlow checkpoint index$"):
        parse_convert_output(r.returncode, r.stdout, r.stderr.splitlines()[0])
    assert not (tmp_path / "o.keras").exists()


def _save_checkpoint(prefix: Path) -> None:
    code = f"""
import os
os.environ["TF_USE_LEGACY_KERAS"] = "1"
import tensorflow as tf
tf.compat.v1.disable_eager_execution()
tf.compat.v1.get_variable("rnn/basic_lstm_cell/kernel", shape=[40, 64])
tf.compat.v1.get_variable("rnn/basic_lstm_cell/bias", shape=[64])
with tf.compat.v1.Session() as sess:
    sess.run(tf.compat.v1.global_variables_initializer())
    tf.compat.v1.train.Saver().save(sess, {str(prefix)!r})
"""
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=300)


@pytest.mark.slow  # TensorFlow
def test_a_truncated_shard_and_a_junk_index_beside_real_data(tmp_path):
    prefix = tmp_path / "model.ckpt"
    _save_checkpoint(prefix)
    data = tmp_path / "model.ckpt.data-00000-of-00001"
    index = tmp_path / "model.ckpt.index"
    good = index.read_bytes()

    with open(data, "r+b") as f:
        f.truncate(1000)
    r = _convert(str(prefix), "--out", str(tmp_path / "o.keras"), "--json")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("rnnlab:")]
    assert errors == ["rnnlab: error: model.ckpt.data-00000-of-00001: truncated (read less than the index says)"]

    index.write_bytes(os.urandom(len(good)))
    r = _convert(str(prefix), "--out", str(tmp_path / "o.keras"), "--json")
    assert r.returncode == 2
    assert [ln for ln in r.stderr.splitlines() if ln.startswith("rnnlab:")] == [
        "rnnlab: error: model.ckpt.index: not a TensorFlow checkpoint index"]
    index.write_bytes(good[: len(good) // 2])  # an index cut short
    r = _convert(str(prefix), "--out", str(tmp_path / "o.keras"))
    assert r.returncode == 2 and "not a TensorFlow checkpoint index" in r.stderr
