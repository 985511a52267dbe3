"""When an identification run through the nodes stops (:class:`pardyn.nodes.identification_runs.RunEnd`).

A lockstep run is deterministic only if its bag is: the run must not stop while the recorder, a node of its own
that gets the states through DDS, is still short of the sim's last states (two loaded five-bar demos' fits once
differed in the third digit). Stub nodes and a stub clock: no ROS, no timing.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from pardyn.bags.gaps import StampGaps
from pardyn.nodes.identification_runs import STUCK_S, TAIL_S, RunEnd, _warnings

PERIOD_NS = 1_000_000  # 1 kHz


class Recorder:
    def __init__(self) -> None:
        self.latest = None
        self.gaps = StampGaps("/joint_states")

    def latest_stamp_ns(self, topic: str):
        assert topic == "joint_states"
        return self.latest

    def gap_record(self, topic: str):
        assert topic == "joint_states"
        return self.gaps.record()


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def nodes(step: int, recorder: Recorder) -> dict:
    return {"sim": SimpleNamespace(step=step, period_s=PERIOD_NS * 1e-9, period_ns=PERIOD_NS), "recorder": recorder}


def test_the_run_waits_for_the_recorder_to_hold_the_sims_last_state():
    clock, recorder = Clock(), Recorder()
    until = RunEnd(1.0, label="unloaded", show_progress=False, clock=clock)
    recorder.latest = 500 * PERIOD_NS
    assert not until(nodes(500, recorder))
    # the sim's last step (its clock at end_s): the recorder lags 3 states behind, then 1, then holds it
    for latest in (997, 999):
        recorder.latest = latest * PERIOD_NS
        clock.now += 0.5
        assert not until(nodes(1000, recorder)), latest
    recorder.latest = 1000 * PERIOD_NS
    for k in range(1001):
        recorder.gaps.add(k * PERIOD_NS)
    assert until(nodes(1000, recorder))
    assert until.tail_missing is None and not until.stuck and until.states_lost == 0


def test_states_the_recorder_lost_before_the_last_are_counted_and_said():
    """A recorder more than its queue behind loses states in the middle (and a late one at the start): the bag then
    differs from another run's, said on the run's line."""
    clock, recorder = Clock(), Recorder()
    until = RunEnd(1.0, label="unloaded", show_progress=False, clock=clock)
    for k in [*range(2, 400), *range(410, 1001)]:  # 0-1 and 400-409 lost
        recorder.gaps.add(k * PERIOD_NS)
    recorder.latest = 1000 * PERIOD_NS
    assert until(nodes(1000, recorder))
    assert until.states_lost == 12
    text = _warnings({"missed_periods": 0, "stalled_steps": 0, "states_lost": 12})
    assert "the recorder lost 12 of the sim's states" in text


def test_a_recorder_that_never_catches_up_ends_the_run_after_the_tail_wait_with_a_warning():
    clock, recorder = Clock(), Recorder()
    until = RunEnd(1.0, label="unloaded", show_progress=False, clock=clock)
    recorder.latest = 990 * PERIOD_NS
    assert not until(nodes(1000, recorder))
    clock.now += TAIL_S / 2
    assert not until(nodes(1000, recorder))  # a stopped sim clock is no stall here: the sim has ended
    clock.now += TAIL_S
    assert until(nodes(1000, recorder))
    assert until.tail_missing == (990 * PERIOD_NS, 1000 * PERIOD_NS) and not until.stuck
    short = 10 * PERIOD_NS * 1e-9
    text = _warnings({"missed_periods": 0, "stalled_steps": 0, "recorder_short_s": short})
    assert "misses the last 0.010 s" in text


def test_a_sim_clock_standing_still_before_the_end_is_a_stall():
    clock, recorder = Clock(), Recorder()
    until = RunEnd(1.0, label="unloaded", show_progress=False, clock=clock)
    assert not until(nodes(10, recorder))
    clock.now += STUCK_S + 1.0
    assert until(nodes(10, recorder))
    assert until.stuck


def test_a_run_whose_bag_lost_states_is_recorded_again(tmp_path, monkeypatch, capsys):
    """``record_through_nodes`` re-records a run whose recorder lost states (the suite once saw a 0.56 s hole in a
    validation bag on 2 cores, which the identification refused), keeping the complete bag, and says so; after
    :data:`RECORD_ATTEMPTS` it keeps the last bag and its warning. ``_run`` stubbed: no ROS."""
    import pardyn.nodes.identification_runs as runs
    from pardyn.simulation.identification_runs import Run

    lost = iter([560, 0, 3, 2, 1])  # first run: lost, then complete; second run: lost every time

    def fake_run(bringup, overrides, *, end_s, label, show_progress, namespace):
        bag = Path(overrides["recorder"]["bag_path"])
        assert not bag.exists()  # a lossy bag is removed before the next attempt: no bag is written over
        bag.mkdir()
        return {"steps": 100, "simulated_s": end_s, "wall_s": 1.0, "max_closure_violation": 0.0,
                "excitation_condition_number": None, "commands_rejected": 0, "missed_periods": 0,
                "watchdog_ms": 50.0, "stalled_steps": 0, "stall_timeout_s": 0.0, "states_lost": next(lost),
                "recorder_short_s": 0.0}

    monkeypatch.setattr(runs, "_run", fake_run)
    recorded = runs.record_through_nodes("five_bar", [Run("unloaded", 1, 0.5), Run("validation", 2, 0.5)], tmp_path,
                                         show_progress=True)
    assert recorded.figures["unloaded"]["attempts"] == 2 and recorded.figures["unloaded"]["states_lost"] == 0
    assert recorded.figures["validation"]["attempts"] == runs.RECORD_ATTEMPTS == 3
    assert recorded.figures["validation"]["states_lost"] == 1
    out = capsys.readouterr().out
    assert "unloaded: warning: the recorder lost 560 of the sim's states" in out and "recorded again (attempt 2 of 3)" in out
    assert "validation: 100 steps" in out and "warning: the recorder lost 1 of the sim's states" in out
