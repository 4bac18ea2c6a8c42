"""The Unrolling page's 1-thread / every-core section: each ratio at its own thread count, and why they move."""

from rnnlab.core.condition import Condition
from rnnlab.engine import api
from rnnlab.present import unrolling_threads as T
from tests.factories import TEST_CPU_ENV, record

POINT = api.plan("unroll", preset="seed", variants=["tf1_dynamic"]).points[0]


def _rec(variant, threads, fwd, train, own):
    cores = TEST_CPU_ENV["cores"]
    details = {"condition": Condition(threads or cores, cores, 0.05, own).to_json()}
    rounds = [{"fwd_ms": fwd * f, "train_ms": train * f} for f in (0.99, 1.0, 1.01)]
    return record("unroll", variant, {**POINT, "threads": threads}, rounds, details=details)


def _records():
    return [_rec("tf1_dynamic", 1, 10.0, 30.0, 1.0), _rec("keras", 1, 14.0, 40.0, 1.0),
            _rec("tf1_dynamic", 0, 9.0, 27.0, 1.1), _rec("keras", 0, 7.0, 22.0, 1.8)]


def test_each_ratio_is_said_at_its_own_thread_count_with_the_cores_that_explain_it():
    table, said = T.threads_view(_records(), POINT, ["tf1_dynamic", "keras"], "tf1_dynamic")
    cores = TEST_CPU_ENV["cores"]
    assert list(table.columns) == [
        "variant", "forward vs tf1_dynamic, 1 thread", f"forward vs tf1_dynamic, {cores} threads",
        "training step vs tf1_dynamic, 1 thread", f"training step vs tf1_dynamic, {cores} threads",
        f"cores kept busy, {cores} threads"]
    row = dict(zip([c.key for c in table.cols], table.raw[1]))
    assert round(row["fwd_ms@1"], 3) == 1.4 and round(row["fwd_ms@0"], 3) == round(7 / 9, 3)
    assert row["own_cores"] == 1.8
    assert "1 thread; " in table.caption and f"{cores} threads; " in table.caption  # each condition said apart
    (s,) = said
    assert s.where == "On this CPU" and "(" not in s.where  # the sentence names each figure's threads itself
    assert s.body.startswith("keras's forward is ") and "at 1 thread and " in s.body
    assert f"at {cores} threads (keras kept 1.8 cores busy, tf1_dynamic 1.1: keras spreads its step over more" in s.body


def test_nothing_shown_until_both_thread_counts_are_stored():
    only_all = [r for r in _records() if r.params["threads"] == 0]
    assert T.threads_view(only_all, POINT, ["tf1_dynamic", "keras"], "tf1_dynamic") == (None, [])
    assert "--set threads=1" in T.threads_missing("python -m rnnlab run unroll --preset seed --set threads=1")


def test_the_appendix_titles_the_seed_point_at_each_thread_count_apart():
    # the configuration's words leave the thread count out: the 1-thread table read as a second copy of the seed's
    from rnnlab.present import unrolling

    cores = TEST_CPU_ENV["cores"]
    titles = [t.title for t in unrolling.report(_records()).tables if t.title != "Unrolling: findings"]
    assert len(titles) == 2 and len(set(titles)) == 2
    assert any(t.endswith(", 1 thread") for t in titles) and any(t.endswith(f", {cores} threads") for t in titles)
