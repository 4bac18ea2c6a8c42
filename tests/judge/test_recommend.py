"""rnnlab.judge.recommend: picks, margins, break-even, failed and missing variants (pure)."""

import subprocess
import sys

import pytest

from rnnlab.judge.recommend import GOALS, cost, recommend
from tests.factories import record

CFG = {"cell": "rnn", "layers": 1, "units": 32, "batch": 8, "seq_len": 20, "input_dim": 16, "dtype": "float32",
       "lengths": "full", "repeats": 5}


def rec(variant, params=CFG, device="CPU", **kw):
    """An unroll record of a machine known only by its device."""
    return record("unroll", variant, params, env={"device": device, "gpu": None}, day="2024-01-01", **kw)


def full(variant, build, first, fwd, tb, tf, train, mem, **kw):
    return rec(variant, build_s=build, first_call_s=first, fwd_ms=fwd, train_build_s=tb, train_first_call_s=tf,
               train_ms=train, peak_mem_mb=mem, **kw)


RECS = [
    full("tf1_static", 2.0, 0.5, 1.0, 3.0, 1.0, 2.0, 300.0),   # slow build, fast steps, most memory
    full("tf1_dynamic", 0.2, 0.1, 2.0, 0.3, 0.2, 4.0, 100.0),  # fast build, slow steps, least memory
    full("keras", 0.5, 0.2, 1.5, 0.6, 0.3, 3.0, 150.0),
    rec("tf2_unrolled", error="timed out after 900 s"),
]


def test_picks_and_margins():
    r = recommend(RECS, n_steps=100)
    assert set(r.picks) == set(GOALS)
    st = r.picks["steady_train"]
    assert st.variant == "tf1_static" and st.value == 2.0 and st.runner_up == "keras"
    assert st.margin == pytest.approx(0.5)
    assert r.picks["memory"].variant == "tf1_dynamic" and r.picks["memory"].margin == pytest.approx(0.5)
    # 100 training steps: static 2+3+1+0.2 = 6.2 s, dynamic 0.2+0.3+0.2+0.4 = 1.1 s, keras 0.5+0.6+0.3+0.3 = 1.7 s
    b = r.picks["build_plus_n"]
    assert b.variant == "tf1_dynamic" and b.value == pytest.approx(1.1)
    assert b.runner_up == "keras" and b.margin == pytest.approx(1.7 / 1.1 - 1)
    # break-even against the steady-state winner: (6.0 - 0.7) / (0.004 - 0.002) = 2650 steps
    assert b.break_even_steps == pytest.approx(2650)
    assert "2,650" in b.text
    assert r.failed == {"tf2_unrolled": "timed out after 900 s"}
    assert "keras_cell" in r.missing and "tf1_static" not in r.missing


def test_many_steps_flip_the_build_plus_n_pick():
    assert recommend(RECS, n_steps=10_000).picks["build_plus_n"].variant == "tf1_static"


def test_forward_mode():
    r = recommend(RECS, n_steps=10, mode="forward")
    assert r.picks["steady_train"].variant == "tf1_static"  # fwd_ms 1.0
    assert cost(RECS[0], "build_plus_n", 10, "forward") == pytest.approx(2.0 + 0.5 + 0.01)
    with pytest.raises(ValueError):
        recommend(RECS, mode="sideways")


def test_no_records_and_only_failures():
    r = recommend([])
    assert all(p.variant is None for p in r.picks.values())
    assert "nothing measured" in r.picks["memory"].text
    r = recommend([rec("tf1_static", error="out of memory")])
    assert r.picks["steady_train"].variant is None and r.failed == {"tf1_static": "out of memory"}
    assert "out of memory" in r.text


def test_config_and_device_filters():
    other = {**CFG, "seq_len": 200}
    recs = RECS + [rec("keras_cell", other, build_s=0.1, first_call_s=0.1, fwd_ms=0.1, train_build_s=0.1,
                       train_first_call_s=0.1, train_ms=0.1, peak_mem_mb=1.0)]
    r = recommend(recs, config={"seq_len": 20})
    assert r.picks["steady_train"].variant == "tf1_static"
    r = recommend(recs, config={"seq_len": 200})
    assert r.picks["steady_train"].variant == "keras_cell" and "only variant" in r.picks["steady_train"].text
    # no config: the configuration with the most measured variants, with a note
    r = recommend(recs)
    assert r.config["seq_len"] == 20 and any("configurations match" in n for n in r.notes)
    gpu = [rec("keras", device="GPU", train_ms=0.01, build_s=1, first_call_s=1, fwd_ms=0.01, peak_mem_mb=5.0)]
    assert recommend(RECS + gpu, device="gpu").picks["steady_train"].variant == "keras"
    assert recommend(RECS + gpu, device="CPU").picks["steady_train"].variant == "tf1_static"


def test_local_beats_bundled_and_ok_beats_failed():
    recs = [full("tf1_static", 2.0, 0.5, 1.0, 3.0, 1.0, 9.0, 300.0),
            rec("tf1_static", source="baseline", build_s=2.0, first_call_s=0.5, fwd_ms=1.0, train_build_s=3.0,
                train_first_call_s=1.0, train_ms=0.5, peak_mem_mb=300.0),
            full("keras", 0.5, 0.2, 1.5, 0.6, 0.3, 3.0, 150.0),
            rec("keras", error="crashed")]
    r = recommend(recs)
    assert r.picks["steady_train"].variant == "keras"  # the local static record (9 ms) wins over the bundled one
    assert "keras" not in r.failed
    # (before select.groups this was [recs[1], recs[2]]: a bundled and a local record ranked together -- two machines)
    bundled_keras = rec("keras", source="baseline", build_s=0.5, first_call_s=0.2, fwd_ms=1.5, train_build_s=0.6,
                        train_first_call_s=0.3, train_ms=3.0, peak_mem_mb=150.0)
    only_bundled = recommend([recs[1], bundled_keras])
    assert only_bundled.picks["steady_train"].variant == "tf1_static"
    assert any("bundled results (not measured here)" in n for n in only_bundled.notes)
    assert "not measured here" in only_bundled.source


@pytest.mark.slow  # a Python process of its own
def test_imports_no_tensorflow():
    code = "import sys, rnnlab.judge.recommend; assert 'tensorflow' not in sys.modules and 'streamlit' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_seed_point_at_1_thread_and_every_core_is_ranked_under_one_thread_count_that_the_note_names():
    # the configuration's words leave the thread count out: "2 configurations match (rnn, 1x32, ...)" twice over
    # would ask a reader to give more of a configuration the page has no input for
    one = {**CFG, "threads": 1}
    cond = {"condition": {"threads": 1, "cores": 2, "other_cores": 0.0}}
    recs = RECS + [full("tf1_static", 2.0, 0.5, 0.5, 3.0, 1.0, 1.0, 300.0, params=one, details=cond)]
    r = recommend(recs)
    assert r.picks["steady_train"].variant == "tf1_static" and r.picks["steady_train"].value == 2.0  # every core
    (note,) = [n for n in r.notes if "thread counts" in n]
    assert note.startswith("Measured under 2 thread counts at this configuration; ranked under the one with the most")
    assert "never two in one ranking" in note and not any("configurations match" in n for n in r.notes)
    assert "()" not in note  # these test records read no condition: nothing to say in brackets
