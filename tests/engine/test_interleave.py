"""The interleaved protocol: every arm's worker alive at once, windows in a random order, paired ratios, a stop
rule. Scripted workers (tests/workers.py: no process, no TensorFlow), and one real subprocess pair without
TensorFlow."""

import random

import pytest

from rnnlab.core import rules
from rnnlab.core.store import Store
from rnnlab.engine import api, interleave
from rnnlab.judge import findings
from tests.factories import ENV, FAKE_I, use_fakes
from tests.workers import ServingLauncher

@pytest.fixture
def fake(monkeypatch):
    use_fakes(monkeypatch, FAKE_I, quiet=True)
    return FAKE_I


def noisy(factor, sd=0.02, seed=1):
    """A window value: the arm's factor (by variant) times a shared load that drifts, times a little noise."""
    rng = random.Random(seed)
    clock = [0]

    def value(task, op, n):
        clock[0] += 1  # windows in the order they are timed, whoever times them
        load = 1.0 + 0.5 * ((clock[0] // 100) % 2)  # the machine's load moves every 100 windows: pairing cancels it
        return factor[task["variant"]] * load * (1 + rng.gauss(0, sd))
    return value


def tasks(*variants):
    return {v: {"kind": "variant", "variant": v, "worker": "tests.workers:run_series", "params": {}} for v in variants}


def test_a_round_times_each_series_in_windows_and_stops_when_every_pair_is_decided():
    launcher = ServingLauncher(noisy({"ok": 1.0, "slow": 2.0, "same": 1.0}))
    got = interleave.run_round(tasks("ok", "slow", "same"), ref="ok", history={}, budget_s=60, launcher=launcher,
                               timeout_s=10, mem_limit_mb=None, rng=random.Random(0), poll_s=0.001)
    assert set(got.messages) == {"ok", "slow", "same"}
    assert all(m["type"] == "result" for m in got.messages.values())
    assert got.stops == {"build_s": "decided", "fwd_ms": "decided", "train_ms": "decided"}
    counts = {a: {m: len(w) for m, w in ws.items()} for a, ws in got.windows.items()}
    # every other arm a window per cycle, each with its bracket; the reference before, between and after them
    assert counts["slow"] == counts["same"]
    for m in counts["ok"]:
        cycles = counts["slow"][m]
        # one reference window to open the series, then one after each pair of arms: never twice in a row
        assert counts["slow"][m + "@ref"] == cycles and counts["ok"][m] == cycles + 1
        assert cycles >= interleave.min_cycles(m)
    # windows of a per-step metric are WINDOW_STEPS steps, a build one
    ok = launcher.workers[0]
    asked = {m["n"] for m in ok.sent if m["cmd"] == "window"}
    assert asked == {interleave.WINDOW_STEPS, interleave.BUILD_WINDOW}


def test_the_order_of_the_windows_is_random_per_cycle():
    launcher = ServingLauncher(noisy({"ok": 1.0, "slow": 2.0, "same": 1.0}))
    order = []
    real = launcher.__call__

    def spy(task):
        w = real(task)
        send = w.send
        w.send = lambda msg, v=task["variant"], w=w: (
            order.append((w.ops[w.i], v)) if msg["cmd"] == "window" else None, send(msg))
        return w
    interleave.run_round(tasks("ok", "slow", "same"), ref="ok", history={}, budget_s=60, launcher=spy,
                         timeout_s=10, mem_limit_mb=None, rng=random.Random(3), poll_s=0.001)
    for op in ("build_s", "fwd_ms", "train_ms"):
        seq = [v for o, v in order if o == op]
        # the reference opens the series and follows every pair of windows: R x y R y x R ... (never R R)
        assert seq[0::3] == ["ok"] * len(seq[0::3]) and len(seq) % 3 == 1
        cycles = [tuple(seq[i + 1:i + 3]) for i in range(0, len(seq) - 1, 3)]
        assert all(sorted(c) == ["same", "slow"] for c in cycles)
        assert len(set(cycles)) > 1  # the others' order changes from cycle to cycle


def test_two_arms_between_two_reference_windows_share_its_bracket_and_an_odd_one_out_has_its_own():
    timed = []  # (variant, value) of every window of fwd_ms, in the order they are timed

    def value(task, op, n):
        v = float(len(timed) + 1)  # every window a value of its own: a bracket says which two it was made of
        if op == "fwd_ms":
            timed.append((task["variant"], v))
        return v
    got = interleave.run_round(tasks("ok", "a", "b", "c"), ref="ok", history={}, budget_s=60,
                               launcher=ServingLauncher(value), timeout_s=10, mem_limit_mb=None,
                               rng=random.Random(5), poll_s=0.001)
    refs = [i for i, (v, _) in enumerate(timed) if v == "ok"]
    # R x y R z R per cycle: a reference window after every two others (the third arm's alone), never twice in a row
    gaps = [b - a for a, b in zip(refs, refs[1:])]
    assert refs[0] == 0 and refs[-1] == len(timed) - 1 and set(gaps) == {2, 3}
    assert gaps[:2 * interleave.MIN_CYCLES] == [3, 2] * interleave.MIN_CYCLES  # every arm's minimum: pair, one
    brackets = {}
    for lo, hi in zip(refs, refs[1:]):
        for v, _ in timed[lo + 1:hi]:
            brackets.setdefault(v, []).append(pytest.approx((timed[lo][1] * timed[hi][1]) ** 0.5))
    for arm in ("a", "b", "c"):
        assert got.windows[arm]["fwd_ms@ref"] == brackets[arm]


def test_an_undecided_pair_adds_windows_until_the_budget_is_spent():
    # 'slow' is 10% slower: the interval sits on the margin, so the call stays open
    launcher = ServingLauncher(noisy({"ok": 1.0, "slow": 1.1}, sd=0.05))
    t = [0.0]

    def clock():
        t[0] += 0.01
        return t[0]
    got = interleave.run_round(tasks("ok", "slow"), ref="ok", history={}, budget_s=6.0, launcher=launcher,
                               timeout_s=1e9, mem_limit_mb=None, rng=random.Random(0), clock=clock, poll_s=0.001)
    assert "budget" in got.stops.values()
    assert max(len(w) for w in got.windows["ok"].values()) > interleave.MIN_CYCLES


def test_only_the_arms_still_undecided_time_more_windows():
    # 'slow' is called at its minimum windows; 'edge' (10% slower: on the margin) stays open and times more alone
    launcher = ServingLauncher(noisy({"ok": 1.0, "slow": 2.0, "edge": 1.1}, sd=0.05))
    got = interleave.run_round(tasks("ok", "slow", "edge"), ref="ok", history={}, budget_s=60, launcher=launcher,
                               timeout_s=10, mem_limit_mb=None, rng=random.Random(0), poll_s=0.001)
    for m in ("fwd_ms", "train_ms"):
        slow, edge = len(got.windows["slow"][m]), len(got.windows["edge"][m])
        assert slow == interleave.MIN_CYCLES < edge <= interleave.EXTEND * interleave.MIN_CYCLES, (m, slow, edge)
        # every window of an arm still bracketed, never the reference twice in a row: after each pair while both
        # time windows, then after each of edge's alone
        assert len(got.windows["ok"][m]) == edge + 1 == len(got.windows["edge"][m + "@ref"]) + 1


def test_an_arm_that_fails_ends_alone_and_a_failed_reference_stops_the_calls():
    launcher = ServingLauncher(noisy({"ok": 1.0, "slow": 2.0, "bad": 1.0}), fail={"bad": "fwd_ms"})
    got = interleave.run_round(tasks("ok", "slow", "bad"), ref="ok", history={}, budget_s=60, launcher=launcher,
                               timeout_s=10, mem_limit_mb=None, rng=random.Random(0), poll_s=0.001)
    assert got.messages["bad"] == {"type": "error", "reason": "failed at fwd_ms"}
    assert got.messages["ok"]["type"] == got.messages["slow"]["type"] == "result"
    assert "train_ms" in got.windows["slow"] and "train_ms" not in got.windows["bad"]
    launcher = ServingLauncher(noisy({"ok": 1.0, "slow": 2.0}), fail={"ok": "fwd_ms"})
    got = interleave.run_round(tasks("ok", "slow"), ref="ok", history={}, budget_s=60, launcher=launcher,
                               timeout_s=10, mem_limit_mb=None, rng=random.Random(0), poll_s=0.001)
    assert got.stops["fwd_ms"] == got.stops["train_ms"] == "no reference"


def test_a_run_pairs_its_records_by_session_and_ends_early_once_every_call_is_decided(fake, tmp_path):
    launcher = ServingLauncher(noisy({"ok": 1.0, "slow": 2.0, "same": 1.0}))
    p = api.plan("fake_i", variants=["ok", "slow", "same"], overrides={"rounds": 4, "protocol": "interleaved"})
    seen = []
    recs = api.run(p, store=Store(tmp_path / "s.sqlite"), env=ENV, launcher=launcher, mem_limit_mb=None,
                   on_progress=seen.append)
    assert len(launcher.workers) == 3 * interleave.MIN_ROUNDS  # decided after two rounds: rounds 3 and 4 not run
    assert seen[-1].fraction == 1.0
    ok, slow, same = recs
    assert ok.details["protocol"] == "interleaved" and ok.details["rounds"] == interleave.MIN_ROUNDS
    (sid,) = ok.details["paired"]
    assert set(slow.details["paired"]) == {sid} and len(ok.details["paired"][sid]["fwd_ms"]) == 2
    iv = findings.interval(slow, ok, "fwd_ms")
    assert iv.how == "paired" and rules.direction(iv) == rules.HIGHER and 1.9 < iv.mid < 2.1
    assert rules.direction(findings.interval(same, ok, "fwd_ms")) == rules.SAME
    # the drifting load is in every window of each cycle, so it cancels out of the paired ratios
    assert iv.hi / iv.lo < 1.2  # unpaired, the load alone would spread the windows 1.5x


def test_a_cached_reference_is_measured_again_beside_new_variants_and_keeps_its_figures(fake, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    launcher = ServingLauncher(noisy({"ok": 1.0, "slow": 2.0, "same": 1.0}))
    over = {"rounds": 2, "protocol": "interleaved"}
    (ok1,) = api.run(api.plan("fake_i", variants=["ok"], overrides=over), store=store, env=ENV, launcher=launcher,
                     mem_limit_mb=None)
    ok_fig = ok1.metrics
    ok2, slow = api.run(api.plan("fake_i", variants=["ok", "slow"], overrides=over), store=store, env=ENV,
                        launcher=launcher, mem_limit_mb=None)
    assert ok2.cached and ok2.metrics == ok_fig
    sid = next(iter(slow.details["paired"]))
    assert sid in ok2.details["paired"] and sid in store.get(ok2.key).details["paired"]
    assert findings.interval(slow, ok2, "fwd_ms").how == "paired"


def test_records_of_different_sessions_fall_back_to_the_rounds(fake, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    launcher = ServingLauncher(noisy({"ok": 1.0, "slow": 2.0}))
    over = {"rounds": 2, "protocol": "interleaved"}
    ok, _ = api.run(api.plan("fake_i", variants=["ok", "slow"], overrides=over), store=store, env=ENV,
                    launcher=launcher, mem_limit_mb=None)
    (slow,) = api.run(api.plan("fake_i", variants=["slow"], overrides=over), store=store, env=ENV, launcher=launcher,
                      mem_limit_mb=None, fresh=True)
    other = ok.with_(details={**ok.details, "paired": {"elsewhere": ok.details["paired"][next(iter(ok.details["paired"]))]}})
    assert findings.interval(slow, other, "fwd_ms").how != "paired"


@pytest.mark.slow  # spawns workers
def test_real_workers_serve_windows_over_their_pipes(fake, tmp_path, monkeypatch):
    """Two spawned worker processes (no TensorFlow) driven through a whole round. Every window is paired whatever
    the load the other tests put beside it: what is under test is the pipes, not the machine's quiet (under a bursty
    load, windows whose readings differ are dropped and the call says "too busy to decide": test_rules and calibrate)."""
    readings = []
    monkeypatch.setattr(rules, "same_load", lambda *others: readings.append(others) or True)
    p = api.plan("fake_i", variants=["ok", "slow"], overrides={"rounds": 1, "protocol": "interleaved", "units": 2000,
                                                              "budget_s": 5})
    recs = api.run(p, store=Store(tmp_path / "s.sqlite"), env=ENV, mem_limit_mb=None)
    ok, slow = recs
    assert ok.ok and slow.ok, (ok.error, slow.error)
    (sid,) = ok.details["paired"]
    assert len(ok.details["paired"][sid]["fwd_ms"][0]) >= interleave.MIN_CYCLES
    iv = findings.interval(slow, ok, "fwd_ms")
    assert iv.how == "paired" and 1.5 < iv.mid < 2.5
    assert readings and all(x is not None for r in readings for x in r)  # every window read its condition


def test_more_variants_than_live_workers_run_in_groups_each_with_the_reference(fake, tmp_path):
    launcher = ServingLauncher(noisy({"ok": 1.0, "slow": 2.0, "same": 1.0, "bad": 3.0}))
    p = api.plan("fake_i", variants=["ok", "slow", "same", "bad"],
                 overrides={"rounds": 2, "protocol": "interleaved", "live": 3})
    ok, slow, same, bad = api.run(p, store=Store(tmp_path / "s.sqlite"), env=ENV, launcher=launcher,
                                  mem_limit_mb=None)
    launched = [w.task["variant"] for w in launcher.workers]
    assert launched == ["ok", "slow", "same"] * 2 + ["ok", "bad"] * 2  # groups of three at most, ok in each
    assert len(ok.details["paired"]) == 2  # its own session, and the second group's
    assert rules.direction(findings.interval(bad, ok, "fwd_ms")) == rules.HIGHER
    assert findings.interval(bad, ok, "fwd_ms").how == "paired"
    assert findings.interval(bad, slow, "fwd_ms").how != "paired"  # two groups: not timed side by side


def test_windows_read_their_load_and_a_pair_across_a_change_of_load_is_retaken_not_paired():
    spoiled = set()

    def load(task, op, n):  # every 4th window of the slow arm was timed while another process took a core
        if task["variant"] == "slow" and op == "fwd_ms" and n % 4 == 3:
            spoiled.add(n)
            return 1.0
        return 0.1
    launcher = ServingLauncher(noisy({"ok": 1.0, "slow": 2.0}), load=load)
    got = interleave.run_round(tasks("ok", "slow"), ref="ok", history={}, budget_s=60, launcher=launcher,
                               timeout_s=10, mem_limit_mb=None, rng=random.Random(0), poll_s=0.001)
    w = got.windows["slow"]
    assert got.dropped == {"fwd_ms": len(spoiled)} and spoiled  # never paired with the quiet reference around them
    assert len(w["fwd_ms"]) == len(w["fwd_ms@ref"]) == len(w["fwd_ms@other"]) and set(w["fwd_ms@other"]) == {0.1}
    assert len(w["fwd_ms"]) >= interleave.MIN_CYCLES  # the spoiled cycles retaken within the budget
    assert got.own["slow"] and set(got.own["slow"]) == {1.0}
    minimum = {m.get("min_s") for m in launcher.workers[0].sent if m["cmd"] == "window"}
    assert minimum == {0.0, interleave.MIN_WINDOW_S}  # builds are long; a step's window lasts at least 0.1 s


def test_rounds_timed_under_different_loads_decide_nothing_and_the_record_says_its_condition(fake, tmp_path):
    rnd = [0]

    def load(task, op, n):  # round 2's windows all ran beside another process taking 1.2 cores
        return 1.2 if rnd[0] >= 6 else 0.0

    class Launcher(ServingLauncher):
        def __call__(self, task):
            rnd[0] += 1
            return super().__call__(task)
    launcher = Launcher(noisy({"ok": 1.0, "slow": 2.0, "same": 1.0}), load=load)
    p = api.plan("fake_i", variants=["ok", "slow", "same"], overrides={"rounds": 2, "protocol": "interleaved"})
    ok, slow, same = api.run(p, store=Store(tmp_path / "s.sqlite"), env=ENV, launcher=launcher, mem_limit_mb=None)
    iv = findings.interval(slow, ok, "fwd_ms")
    assert iv.unsettled and rules.direction(iv) == rules.TOO_BUSY and rules.call(iv) == rules.NOISY
    assert "0.0, then 1.2" in iv.unsettled
    cond = slow.details["condition"]
    assert cond["changed"] and cond["threads"] == 2 and cond["cores"] == 2 and cond["own_cores"] == 1.0
    from rnnlab.judge import select
    assert "2 threads; " in select.source_note([ok, slow]) and "(the load changed between rounds)" in \
        select.source_note([ok, slow])


def test_a_first_round_times_the_minimum_and_a_later_round_one_build_window_before_it_looks():
    launcher = ServingLauncher(noisy({"ok": 1.0, "slow": 1.12, "same": 1.0}, sd=0.08))  # hard to call: at the edge
    first = interleave.run_round(tasks("ok", "slow"), ref="ok", history={}, budget_s=60, launcher=launcher,
                                 timeout_s=10, mem_limit_mb=None, rng=random.Random(0), poll_s=0.001, extend=False)
    got = {m: len(w) for m, w in first.windows["slow"].items() if "@" not in m}
    assert got["build_s"] == interleave.MIN_BUILDS and first.stops["build_s"] == "next round"
    # step windows are cheap: a first round adds them while undecided, as any round does
    assert interleave.MIN_CYCLES < got["fwd_ms"] <= interleave.EXTEND * interleave.MIN_CYCLES
    history = interleave.with_round({}, first.windows)
    later = interleave.run_round(tasks("ok", "slow"), ref="ok", history=history, budget_s=0, launcher=launcher,
                                 timeout_s=10, mem_limit_mb=None, rng=random.Random(1), poll_s=0.001)
    # a build window a round after the first, then BATCH more while undecided, up to EXTEND times that
    assert interleave.MIN_BUILDS_LATER <= len(later.windows["slow"]["build_s"]) <= (
        interleave.MIN_BUILDS_LATER + interleave.BATCH)


def test_a_point_ends_when_what_is_undecided_lies_too_near_the_margin_for_more_rounds():
    from rnnlab.core import stats

    class At:
        def __init__(self, mid):
            self.mid, self.lo, self.hi = mid, mid * 0.9, mid * 1.1

    low, high = rules.edges()
    least = stats.least_halfwidth(3)
    assert 0.04 < least < 0.05  # the drift and process terms: about 4% however many windows
    assert not rules.within_reach(At(high * 1.02), least)  # 2% past the edge: no round can clear it
    assert rules.within_reach(At(high * 1.2), least) and rules.within_reach(At(1.0), least)
    assert not rules.within_reach(At(low / 1.03), least)

    ends = []
    launcher = ServingLauncher(noisy({"ok": 1.0, "edge": 1.112}, sd=0.01))  # 1.112: on the margin's upper edge
    interleave.run_point(lambda r: tasks("ok", "edge"), ref="ok", rounds=5, budget_s=30,
                         on_round=lambda r, got, last: ends.append((r, got.ended, last)),
                         on_phase=lambda r, a, ph: None, rng=random.Random(2), launcher=launcher, timeout_s=10,
                         mem_limit_mb=None, poll_s=0.001)
    assert ends[-1] == (interleave.MIN_ROUNDS - 1, "out of reach", True), ends


def test_a_point_starts_its_second_rounds_import_with_its_first_and_times_nothing_until_it_is_done():
    class Ahead(ServingLauncher):
        """Notes when the run asks for imports ahead and waits for them, against what the workers were sent."""

        def __init__(self, value):
            super().__init__(value)
            self.log = []

        def sent(self):
            return sum(len(w.sent) for w in self.workers)

        def new_round(self):
            self.log.append(("new round", self.sent()))

        def ahead(self, tasks, n):
            self.log.append(("ahead", n, len(tasks)))

        def settle(self):
            self.log.append(("settle", self.sent()))

    launcher = Ahead(noisy({"ok": 1.0, "slow": 2.0}))
    interleave.run_point(lambda r: tasks("ok", "slow"), ref="ok", rounds=3, budget_s=30,
                         on_round=lambda r, got, last: None, on_phase=lambda r, a, ph: None, rng=random.Random(0),
                         launcher=launcher, timeout_s=10, mem_limit_mb=None, poll_s=0.001)
    rounds = [i for i, e in enumerate(launcher.log) if e[0] == "new round"]
    assert len(rounds) == interleave.MIN_ROUNDS  # decided after two
    first, second = launcher.log[rounds[0]:rounds[1]], launcher.log[rounds[1]:]
    # the first round starts the second's import beside its own, and lets no worker on until it is done
    assert first[:3] == [("new round", 0), ("ahead", 1, 2), ("settle", 0)]
    assert ("ahead", 1, 2) not in second and second[1] == ("settle", second[0][1])  # no third import ahead


def test_a_round_whose_import_was_done_before_it_started_says_so_for_the_estimates():
    class Imported(ServingLauncher):
        """Its zygotes' imports done before the first round (beside the machine probe's) or not."""

        def __init__(self, value, before: bool):
            super().__init__(value)
            self.before, self.rounds = before, 0

        def new_round(self):
            self.rounds += 1

        def imported(self, tasks):
            return self.before or self.rounds > 1  # the second round's was imported beside the first's

    for before in (True, False):
        got = []
        interleave.run_point(lambda r: tasks("ok", "slow"), ref="ok", rounds=3, budget_s=30,
                             on_round=lambda r, out, last: got.append(out.ahead), on_phase=lambda r, a, ph: None,
                             rng=random.Random(0), launcher=Imported(noisy({"ok": 1.0, "slow": 2.0}), before),
                             timeout_s=10, mem_limit_mb=None, poll_s=0.001)
        assert got == [before, True], got  # priced as forks (``estimates.Past.start_s(ahead=True)``) or an import
