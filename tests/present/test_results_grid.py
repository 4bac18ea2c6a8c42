"""The Results page's grid (``rnnlab.present.results``): a flag a word long, a machine's short label, every flagged
row's sentence whole under it, and the downloads keeping every column (hand-made records, no Streamlit)."""

import csv
import io

from rnnlab.present import results as R
from rnnlab.present import tables
from tests.factories import BUNDLED_XEON_ENV, TEST_CPU_ENV, XEON_ENV, record

PARAMS = {"cell": "lstm", "layers": 1, "units": 32, "batch": 4, "seq_len": 50, "input_dim": 16,
          "lengths": "rows:50/35/20/5"}
AMD = {**XEON_ENV, "cpu": "AMD EPYC 7B13", "device_name": "AMD EPYC 7B13", "machine": "AMD EPYC 7B13, 2 cores"}


def rec(variant, rounds=(), *, env=TEST_CPU_ENV, source="local", **kw):
    return record("varlen", variant, PARAMS, rounds, env=env, source=source, **kw)


def records():
    return [rec("keras", [{"fwd_ms": 12.0}, {"fwd_ms": 13.7}, {"fwd_ms": 15.151}], source="baseline", env=AMD),
            rec("tf1_dynamic", fwd_ms=10.0, train_ms=4.0, source="baseline", env=BUNDLED_XEON_ENV),
            rec("check_bidirectional_dynamic_rnn", error="ValueError: no", source="baseline", env=AMD),
            rec("tf1_static", fwd_ms=6.0, train_ms=20.0)]


def test_the_check_is_a_word_on_the_grid_and_its_sentence_whole_under_it():
    noisy, bad, failed, calm = records()
    assert [tables.check_flag(r) for r in (noisy, bad, failed, calm)] == ["noisy (! 23%)", "impossible", "failed", ""]
    df = R.frame(records())
    assert list(df["flag"]) == ["noisy (! 23%)", "impossible", "failed", ""]
    found = dict(R.details(df))
    assert len(found) == 3  # the calm row has nothing to say
    assert found[f"varlen · keras · {df['config'][0]} · bundled #1"] == "noisy: forward (ms) ! 23%"
    sentence = next(v for k, v in found.items() if "tf1_dynamic" in k)
    assert sentence.startswith("impossible: ") and "faster than the forward step" in sentence
    assert next(v for k, v in found.items() if "check_bidirectional" in k) == "failed: ValueError: no"


def test_machines_get_short_unique_labels_and_are_named_in_full_once_in_the_caption():
    df = R.frame(records())
    assert list(df["on"]) == ["bundled #1", "bundled #2", "bundled #1", "this machine"]
    assert all(len(v) <= R.SHORT_MACHINE for v in df["on"])
    caption = R.machines_caption(df)
    assert caption.count("bundled #1") == 1 and "bundled #1 is AMD EPYC 7B13, 2 cores, CPU" in caption
    assert "bundled #2 is Bundled Xeon, 2 cores, CPU, TF 2.98" in caption
    assert "this machine is" in caption
    # one machine per origin: the origin alone says it
    one = R.frame([rec("keras", fwd_ms=1.0, source="baseline", env=AMD), rec("keras", fwd_ms=1.0)])
    assert list(one["on"]) == ["bundled", "this machine"]
    # the text filter finds a row by its short label too
    assert list(R.filtered(df, text="bundled #2")["variant"]) == ["tf1_dynamic"]


def test_the_grid_leaves_out_only_what_the_downloads_keep():
    recs = records()
    df = R.frame(recs)
    assert set(R.GRID) <= set(df.columns) and set(R.GRID_WHOLE) <= set(R.GRID)
    assert not {"date", "device", "source", "status", "machine"} & set(R.GRID)
    rows = list(csv.DictReader(io.StringIO(R.csv_bytes(recs).decode())))
    assert list(rows[0]) == ["experiment", "variant", "config", "device", "machine", "created_at", "source", "status",
                             "fwd_ms", "train_ms", "key", "rounds", "check"]
    assert rows[0]["machine"] == "AMD EPYC 7B13, 2 cores" and rows[0]["check"] == "noisy: forward (ms) ! 23%"
    assert rows[2]["status"] == "failed: ValueError: no"


def test_no_flag_no_detail():
    df = R.frame([rec("tf1_static", fwd_ms=6.0, train_ms=20.0), rec("keras", fwd_ms=7.0, train_ms=21.0)])
    assert R.details(df) == [] and set(df["flag"]) == {""}


def test_a_timed_records_configuration_says_its_threads_so_one_point_at_two_thread_counts_is_two_rows():
    # the bundled seed point at every core and at 1 thread read as one row said twice ("unroll · keras · rnn, 3x128,
    # batch 32, 100 steps, 64 in · bundled #1: noisy ...", two times over)
    seed = {"cell": "rnn", "layers": 3, "units": 128, "batch": 32, "seq_len": 100, "input_dim": 64}
    every, one = (record("unroll", "keras", {**seed, "threads": t}, [{"fwd_ms": 10.0}, {"fwd_ms": 13.0}])
                  for t in (0, 1))
    df = R.frame([every, one])
    cores = TEST_CPU_ENV["cores"]
    assert list(df["config"]) == [f"rnn, 3x128, batch 32, 100 steps, 64 in, {cores} threads",
                                  "rnn, 3x128, batch 32, 100 steps, 64 in, 1 thread"]
    assert len(dict(R.details(df))) == 2  # each noisy row named apart
    assert R.frame([rec("keras", fwd_ms=1.0)])["config"][0] == "lstm, 1x32, batch 4, 50 steps, 16 in, lengths " \
                                                             "rows:50/35/20/5"  # no threads parameter: none said
