"""The transport protocols without ROS (:mod:`pardyn.transport`): hand-worked sequences.

Each case is the sequence of events of the README's protocol, written out by
hand with its expected decisions: which command advances the plant, which is a
duplicate or rejected, when the sim re-sends or stalls, what the controller
answers to a re-send and when its watchdog fires, and how command sources
treat a publisher the graph names late.
"""

from __future__ import annotations

import pytest

from pardyn.transport.lockstep import SEQUENCE_MODULUS, LockstepAnswer, LockstepSim, step_of_stamp
from pardyn.transport.sources import CommandSources
from pardyn.transport.start_gate import StartGate

PERIOD_NS = 1_000_000  # 1 kHz


def test_tags_are_the_step_of_the_stamp_modulo_2_32():
    assert step_of_stamp(0, PERIOD_NS) == 0
    assert step_of_stamp(1_234 * PERIOD_NS, PERIOD_NS) == 1_234
    assert step_of_stamp(1_234 * PERIOD_NS + 400_000, PERIOD_NS) == 1_234  # rounded
    assert step_of_stamp((2**32 + 5) * PERIOD_NS, PERIOD_NS) == 5  # the uint32 of layout.data_offset wraps


def test_sim_applies_the_current_tag_drops_recent_ones_rejects_others():
    sim = LockstepSim(watchdog_s=0.05, stall_timeout_s=2.0)
    sim.sent(10.0)
    assert sim.command(0) == "apply"
    assert sim.arm(10.001) and not sim.arm(10.002)  # the first command arms once
    sim.applied()
    sim.advanced()
    sim.sent(10.002)
    assert sim.step == 1 and sim.expected_tag == 1
    assert sim.command(0) == "duplicate"  # the answer to a re-send of state 0
    assert sim.command(2) == "rejected"  # ahead: another controller, or the rates disagree
    assert sim.command(1 - 1001) == "rejected"  # more than stale_window behind
    assert sim.command(1) == "apply"
    assert (sim.duplicates, sim.rejected_tags, sim.commands_applied) == (1, 2, 1)


def test_sim_tags_wrap_around_2_32():
    sim = LockstepSim(watchdog_s=0.05, step=SEQUENCE_MODULUS + 3)
    assert sim.command(3) == "apply" and sim.command(2) == "duplicate"
    sim = LockstepSim(watchdog_s=0.05, step=SEQUENCE_MODULUS)  # step 2^32: tag 0; tag 2^32 - 1 is one behind
    assert sim.command(SEQUENCE_MODULUS - 1) == "duplicate"


def test_sim_resends_after_the_watchdog_and_stalls_after_the_timeout():
    sim = LockstepSim(watchdog_s=0.05, stall_timeout_s=2.0)
    sim.sent(0.0)
    assert sim.watch(0.03) == ("wait", pytest.approx(0.03))
    assert sim.watch(0.06)[0] == "resend"
    sim.sent(0.06, resend=True)
    assert sim.resends == 1 and sim.step_sent_s == 0.0  # a re-send does not restart the stall clock
    assert sim.watch(2.5)[0] == "resend"  # not armed: waits for the first command forever
    sim.arm(2.5)
    action, waited = sim.watch(2.5)
    assert action == "stall" and waited == pytest.approx(2.5) and sim.stalls == 1


def test_free_running_sim_applies_fresh_commands_then_zero_then_says_they_are_back():
    sim = LockstepSim(watchdog_s=0.05)
    assert sim.tick(0.0) == (None, None, "waiting")
    sim.latest("tau", 7, 0.01)
    assert sim.tick(0.02) == ("tau", 7, "command")
    assert sim.tick(0.07) == (None, None, "zero") and sim.zero_since_s == 0.07  # 60 ms old > 50 ms
    sim.latest("tau2", 9, 0.08)
    assert sim.tick(0.081) == ("tau2", 9, "back")
    assert sim.commands_applied == 2


def test_controller_repeats_its_answer_to_a_resent_state_and_counts_missed_states():
    answer = LockstepAnswer(PERIOD_NS, watchdog_s=0.05)
    assert answer.repeat(0, resend=True, now_s=0.0) is None  # nothing answered yet
    assert answer.skipped(0) == 0
    assert answer.answer(0, "tau0", 0.001) == (0, False)
    assert answer.repeat(0, resend=True, now_s=0.02) == ("tau0", 0)
    assert answer.repeat(0, resend=False, now_s=0.02) is None  # same stamp, moved positions: act on it
    assert answer.skipped(4 * PERIOD_NS) == 3  # states 1, 2, 3 never seen
    assert answer.skipped(5 * PERIOD_NS) == 0 and answer.missed == 3
    assert answer.answer(5 * PERIOD_NS, "tau5", 0.03) == (5, False)
    assert answer.answered == 2


def test_controller_watchdog_commands_zero_tagged_one_before_the_last_answer():
    answer = LockstepAnswer(PERIOD_NS, watchdog_s=0.05)
    assert answer.watchdog(10.0) is None  # no state yet: nothing to hold
    answer.answer(0, "tau", 1.0)
    assert answer.watchdog(1.04) is None
    silent, tag = answer.watchdog(1.06)
    assert silent == pytest.approx(0.06) and tag == SEQUENCE_MODULUS - 1  # never the answer to state 0
    assert answer.answer(PERIOD_NS, "tau", 1.07) == (1, True)  # states back


def test_a_state_answered_before_the_first_clock_counts_its_silence_from_the_clock_start():
    """Under use_sim_time ROS time reads 0 until the first /clock: a state answered then is not 1 s silent when
    the clock starts at 1 s (the CI failure of 27 Nov 2026), only once simulated time runs past the watchdog."""
    for sim_time in (False, True):  # with the stamps read (sim_time) too: the stamp 1 s is no date before /clock
        answer = LockstepAnswer(PERIOD_NS, watchdog_s=0.02, sim_time=sim_time)
        answer.answer(1000 * PERIOD_NS, "tau", 0.0)
        assert answer.watchdog(0.0) is None  # the clock has not started
        assert answer.watchdog(2.0) is None  # it starts at 2 s: the silence counts from there, not from the stamp
        assert answer.watchdog(2.01) is None
        silent, _ = answer.watchdog(2.1)
        assert silent == pytest.approx(0.1)


def test_states_answered_while_the_sim_clock_lags_are_dated_by_their_stamps():
    """Under use_sim_time the clock follows /clock on the executor thread, the states are answered on their own: a
    long executor callback leaves the clock at 1.0 s while states 1.001..1.100 s are answered. Dated by the clock,
    they looked 100 ms old once /clock caught up (a zero command: the model-swap test, step 787); by their stamps,
    they are not, and a real silence still counts from the last one."""
    answer = LockstepAnswer(PERIOD_NS, watchdog_s=0.05, sim_time=True)
    for k in range(1001, 1101):
        answer.answer(k * PERIOD_NS, "tau", 1.0)  # the clock stands at 1.0 s meanwhile
    assert answer.last_state_s == pytest.approx(1.1)
    assert answer.watchdog(1.1) is None  # caught up: answered 0 ms ago
    assert answer.watchdog(1.15) is None
    silent, tag = answer.watchdog(1.2)  # and states stop: 100 ms of simulated time
    assert silent == pytest.approx(0.1) and tag == 1099
    # a re-sent state is dated the same way
    assert answer.repeat(1100 * PERIOD_NS, True, 1.0) == ("tau", 1100) and answer.watchdog(1.1) is None
    # the same sequence on the steady clock (sim_time off) dates by the clock, as a node without /clock must
    steady = LockstepAnswer(PERIOD_NS, watchdog_s=0.05)
    steady.answer(1100 * PERIOD_NS, "tau", 1.0)
    assert steady.watchdog(1.1) is not None


def test_a_stamp_of_another_time_base_does_not_date_a_state():
    """Only a stamp ahead of the clock by at most max_stamp_lead_s is a lag: a stamp far ahead (wall-clock
    stamps beside a simulated clock), zero or behind the clock leaves the clock as the date, so the watchdog
    still trips 50 ms (of the clock) after the states stop."""
    for stamp_s in (1.7e9, 0.0, 9.0, 11.5):
        answer = LockstepAnswer(PERIOD_NS, watchdog_s=0.05, sim_time=True, max_stamp_lead_s=1.0)
        answer.answer(int(stamp_s * 1e9), "tau", 10.0)
        assert answer.last_state_s == 10.0, stamp_s
        assert answer.watchdog(10.04) is None
        silent, _ = answer.watchdog(10.06)
        assert silent == pytest.approx(0.06), stamp_s


def test_command_sources_reject_an_unnamed_publisher_until_the_graph_names_it():
    graph = {"names": [(b"c", None), (b"x", "/r1/intruder")], "calls": 0}

    def lookup():
        graph["calls"] += 1
        return graph["names"]

    sources = CommandSources(frozenset({"/r1/controller"}), lookup, recheck_s=0.02)
    verdict, event = sources.accepts(b"c", 0.0)
    assert verdict == "unresolved" and event.kind == "unresolved"
    assert sources.accepts(b"c", 0.01) == ("unresolved", None)  # said once; no look-up within recheck_s
    assert graph["calls"] == 1
    graph["names"] = [(b"c", "/r1/controller"), (b"x", "/r1/intruder")]  # the name arrives
    verdict, event = sources.accepts(b"c", 0.03)
    assert verdict == "accepted" and (event.kind, event.node, event.held, event.accepted) == (
        "resolved", "/r1/controller", 2, True)
    assert sources.accepts(b"c", 0.04) == ("accepted", None) and graph["calls"] == 2  # named: no more look-ups
    verdict, event = sources.accepts(b"x", 0.05)
    assert verdict == "foreign" and event.kind == "foreign" and event.node == "/r1/intruder"
    assert sources.accepts(b"x", 0.06) == ("foreign", None)
    assert sources.rejected() == {"/r1/controller": 2, "/r1/intruder": 2}
    assert sources.describe() == ("2 from /r1/controller before the graph named it, "
                                  "2 from /r1/intruder (not a command source)")


def test_start_gate_waits_for_every_node_and_matched_subscriptions():
    gate = StartGate(frozenset({"/r/controller", "/r/recorder"}), timeout_s=5.0, since_s=0.0)
    graph = {"/r/controller": (True, True)}

    def up(node):
        return graph.get(node, (False, False))

    assert gate.missing(up, matched=1, listed=1) == ["/r/recorder"]
    graph["/r/recorder"] = (True, True)
    assert gate.missing(up, matched=1, listed=2) == ["/r/controller", "/r/recorder"]  # one not matched yet
    assert gate.missing(up, matched=2, listed=2) == []
    assert gate.verdict([], 1.0) == "open"
    assert gate.verdict(["/r/recorder"], 4.9) == "wait" and gate.verdict(["/r/recorder"], 5.0) == "timeout"
