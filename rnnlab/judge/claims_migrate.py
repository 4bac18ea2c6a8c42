"""The judges of seed 004's claims: the migrated model's cuDNN path and the tf.function train step."""

from __future__ import annotations

from rnnlab.core.rules import Status
from rnnlab.judge import select
from rnnlab.judge.claim import Verdict
from rnnlab.judge.claim_records import not_measured, successful, whose
from rnnlab.judge.claim_speed import speed_claim


def judge_cudnn(records, c):
    rs = [r for r in successful(records, "migrate", "seed004_construct") if "cudnn_eligible" in r.metrics]
    if not rs:
        return not_measured(c, "no migrate record for seed004_construct")
    r = rs[0]
    m = r.metrics
    measured = (f"keras.layers.RNN(tf.compat.v1.nn.rnn_cell.LSTMCell(n)) under Keras 3: call "
                f"{'runs' if m.get('keras3_call_ok') else 'fails'}; cuDNN-eligible by Keras 3's rules: "
                f"{'yes' if m.get('cudnn_eligible') else 'no'}"
                + (f"; trainable weights Keras sees: {int(m['keras3_trainable_weights'])}"
                   if "keras3_trainable_weights" in m else "") + f" ({select.device_of(r)}){whose(r)}.")
    st = Status.HOLDS if m.get("cudnn_eligible") and m.get("keras3_call_ok") else Status.DOES_NOT_HOLD
    return Verdict(st, measured, "keras.layers.RNN(cell) always runs the generic step loop; only keras.layers.LSTM/GRU "
                   "with default activations on a GPU can take the cuDNN kernel, and a TF1 cell is no Keras 3 cell at "
                   "all." if st == Status.DOES_NOT_HOLD else "the construct runs on cuDNN here.")


def judge_tf_function(records, c):
    return speed_claim(
        records, c, experiment="training", winner="keras", loser="keras_eager", metrics=("epoch_s",),
        seed_cfg=None, names=("tf.function train step", "eager train step"),
        why_holds="a traced train step skips Python and eager op dispatch per op, per time step.",
        why_not="the traced train step is not meaningfully faster here.")
