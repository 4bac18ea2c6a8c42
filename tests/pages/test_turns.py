"""Page scripts take turns (``ui.turns``): one renders at a time, work that takes seconds steps aside, a stuck holder
delays the others by at most the wait. Threads stand in for sessions' script threads; no Streamlit runs."""

import threading
import time

import pytest

from ui import turns


def _in_thread(fn) -> threading.Thread:
    t = threading.Thread(target=fn, daemon=True)
    t.start()
    return t


def test_a_second_script_waits_until_the_first_has_rendered():
    order, inside = [], threading.Event()

    def first():
        with turns.render():
            inside.set()
            time.sleep(0.1)
            order.append("first done")

    t = _in_thread(first)
    inside.wait(5)
    with turns.render():
        order.append("second in")
    t.join(5)
    assert order == ["first done", "second in"]
    assert not turns.holding()


def test_work_aside_lets_another_script_render_and_takes_the_turn_again():
    aside, other_rendered, back = threading.Event(), threading.Event(), []

    def first():
        with turns.render():
            with turns.aside():
                assert not turns.holding()
                aside.set()
                other_rendered.wait(5)
            back.append(turns.holding())

    t = _in_thread(first)
    aside.wait(5)
    with turns.render(wait_s=2):  # takes the turn the first gave up while its work was aside
        assert turns.holding()
    other_rendered.set()
    t.join(5)
    assert back == [True]


def test_a_stuck_holder_delays_the_others_by_the_wait_at_most():
    holding, release = threading.Event(), threading.Event()

    def stuck():
        with turns.render():
            holding.set()
            release.wait(10)

    t = _in_thread(stuck)
    holding.wait(5)
    t0 = time.monotonic()
    with turns.render(wait_s=0.1):
        waited = time.monotonic() - t0
        assert not turns.holding()  # rendering beside the holder: nothing of its to give back
    release.set()
    t.join(5)
    assert 0.08 <= waited < 3
    with turns.render(wait_s=1):  # the turn is free again once the stuck one ends
        assert turns.holding()


def test_the_turn_is_given_back_when_a_script_ends_by_raising():
    class Stop(Exception):  # st.stop, a rerun, a page switch: the script ends by raising
        pass

    with pytest.raises(Stop):
        with turns.render():
            raise Stop
    assert not turns.holding()
    with pytest.raises(Stop):
        with turns.render():
            with turns.aside():
                raise Stop
    assert not turns.holding()
    with turns.render(wait_s=0.5):
        assert turns.holding()


def test_aside_outside_a_turn_and_a_nested_render_change_nothing():
    with turns.aside():
        assert not turns.holding()
    with turns.render():
        with turns.render():
            assert turns.holding()
        assert turns.holding()  # the inner block did not give the outer one's turn away
    assert not turns.holding()
