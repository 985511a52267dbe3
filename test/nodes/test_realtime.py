"""The controller's 1 kHz path (issue 34, pardyn.nodes.realtime): its own thread outside every executor, the
priority the kernel reports (or the one-line fallback), no collection and no new message per state.

The timing itself is measured by bench/hardware.py and bench/loop.py, not here: these tests check the
structure that the timing depends on, each against an independent witness (the kernel's scheduler, the DDS
graph, CPython's gc callbacks, object identity).
"""

from __future__ import annotations

import ctypes
import gc
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
from sensor_msgs.msg import JointState
from rclpy.serialization import deserialize_message, serialize_message
from std_msgs.msg import Float64MultiArray

from pardyn import load_robot
from pardyn.nodes import realtime
from pardyn.nodes.realtime import CollectorControl, realtime_setup

REPO = Path(__file__).resolve().parents[2]
CONTROLLER_CONFIG = REPO / "config" / "controller.yaml"
PERIOD_NS = 1_000_000


def joint_state(names, position, k: int) -> JointState:
    message = JointState()
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(k * PERIOD_NS, 1_000_000_000)
    message.name = list(names)
    message.position = [float(v) for v in position]
    message.velocity = [0.0] * len(names)
    return message


def scheduler_of(thread: threading.Thread) -> tuple[int, int]:
    """The kernel's policy and priority of a thread (Linux: a thread id is a pid for sched_getscheduler)."""
    return os.sched_getscheduler(thread.native_id), os.sched_getparam(thread.native_id).sched_priority


def test_the_controller_answers_on_its_own_thread_outside_every_executor_at_the_priority_it_reports(
        ros_client, in_process):
    """Before: joint_states was a subscription of the node, dispatched by the process's executor after whatever
    callback of any node came first, on the main thread at normal priority."""
    from pardyn.nodes.controller import ControllerNode

    switch_interval = sys.getswitchinterval()
    loops = realtime.ANSWER_GATE.loops
    node = in_process(ControllerNode, ros_client, "own_thread", "--params-file", str(CONTROLLER_CONFIG))
    robot = load_robot("dualv")
    try:
        # no executor can take the states: the subscription is not the node's, yet the DDS graph sees it
        assert node._states not in list(node.subscriptions)
        assert ros_client.node.count_subscribers(node._states.topic_name) == 1
        threads: list[str] = []
        answer = node._answer
        node._answer = lambda message: (threads.append(threading.current_thread().name), answer(message))
        commands = ros_client.collect(Float64MultiArray, node._publisher.topic_name)
        publisher = ros_client.publisher(JointState, node._states.topic_name)
        state = joint_state(robot.actuated_names, robot.home[robot.actuated_indices], 7)
        # only the client's executor spins: the controller answers anyway
        assert ros_client.publish_until(publisher, state, lambda: commands), "no answer without an executor"
        assert commands[0].layout.data_offset == 7 and len(commands[0].data) == 4
        assert threads and set(threads) == {"controller states"}
        assert realtime.ANSWER_GATE.loops == loops + 1  # its answers open the process's gate
        policy, priority = scheduler_of(node._states._thread)
        note = node.realtime_note
        if "SCHED_FIFO priority 50;" in note:
            assert (policy, priority) == (os.SCHED_FIFO, 50), note
        else:  # not permitted here: the kernel says normal scheduling, and the line says why
            assert "not permitted" in note and policy == os.SCHED_OTHER, note
        # the executor's thread keeps normal scheduling, and this test process its switch interval (the node
        # was built inside it: process-wide measures are a node executable's only)
        assert os.sched_getscheduler(0) == os.SCHED_OTHER
        assert sys.getswitchinterval() == switch_interval and "left to the program" in note
    finally:
        node.destroy_node()
    assert not node._states._thread.is_alive()
    assert realtime.ANSWER_GATE.loops == loops


def test_the_answer_gate_lets_other_work_run_just_after_an_answer():
    """The hardware bringup's closure solver, in the controller's process, waits at the gate before it solves:
    it then computes in the gap after an answer, not during one (where the two threads would share the
    interpreter lock and stretch the answer). Without a state thread the gate does not wait."""
    import time  # noqa: PLC0415

    gate = realtime.AnswerGate()
    begin = time.monotonic()
    assert gate.wait(1.0) is False and time.monotonic() - begin < 0.1  # no state thread: no wait
    with gate.running():
        timer = threading.Timer(0.05, gate.answered)
        timer.start()
        begin = time.monotonic()
        assert gate.wait(2.0) is True
        assert 0.04 <= time.monotonic() - begin < 1.5  # released by the answer, not before it
        timer.join()
        assert gate.wait(0.01) is False  # no answer: the timeout
    assert gate.loops == 0


def test_where_the_priority_is_not_permitted_one_info_line_says_so_and_what_still_applies():
    """The kernel refuses SCHED_FIFO and mlockall (capabilities dropped with setpriv, or an unprivileged user):
    the set-up says so in one line, and the kernel confirms the normal policy."""
    script = ("import os; from pardyn.nodes.realtime import realtime_setup; complete, line = realtime_setup(50, True); "
              "print(complete); print(line); print(os.sched_getscheduler(0))")
    drop = ["setpriv", "--inh-caps=-sys_nice,-ipc_lock", "--bounding-set=-sys_nice,-ipc_lock"] \
        if shutil.which("setpriv") and os.geteuid() == 0 else []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([*drop, sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    complete, line, policy = result.stdout.strip().splitlines()
    if int(policy) == os.SCHED_FIFO:  # a machine whose users may raise their priority without capabilities
        assert "SCHED_FIFO priority 50," in line
        return
    assert complete == "False" and line.count("\n") == 0
    assert line.startswith("real-time: SCHED_FIFO priority 50 not permitted (Operation not permitted): normal scheduling")
    assert "memory not locked (mlockall: " in line
    assert "the state thread, the collector control and the preallocated messages still apply" in line


def test_the_fallback_line_names_the_refusal(monkeypatch):
    """The same line where only the priority is refused (the reason is the kernel's errno text)."""
    def refuse(*_):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(realtime.os, "sched_setscheduler", refuse)
    monkeypatch.setattr(realtime.sys, "setswitchinterval", lambda _: None)  # this test process's: left alone
    complete, line = realtime_setup(80, False)
    assert not complete
    assert line.startswith("real-time: SCHED_FIFO priority 80 not permitted (Operation not permitted): normal "
                           "scheduling, memory not locked (lock_memory false)")
    assert realtime_setup(0, False)[0]  # nothing asked: complete, normal scheduling


def test_no_collection_and_no_new_message_in_the_answer_path(ros_client, in_process):
    """Before: a new Float64MultiArray (layout, label, list) per state, and the collector free to run inside the
    state's callback. Witnesses: CPython's gc callbacks; each command is the one buffer's bytes (the states
    given as the state thread takes them: serialized)."""
    from pardyn.nodes.controller import ControllerNode

    node = in_process(ControllerNode, ros_client, "no_garbage", "--params-file", str(CONTROLLER_CONFIG),
                      "-p", "lock_memory:=false", "-p", "realtime_priority:=0")
    robot = load_robot("dualv")
    home = robot.home[robot.actuated_indices]
    states = [serialize_message(joint_state(robot.actuated_names, home + 0.01 * np.sin(0.01 * k), k))
              for k in range(1, 3001)]
    published: list = []
    node._publisher.publish = published.append
    collections: list[dict] = []

    def count(phase, info):
        if phase == "start":
            collections.append(info)

    collector = CollectorControl()
    try:
        for message in states[:500]:  # warm-up: the filter, the law's warm start, the protocol
            node._on_state(message)
        collector.start()
        gc.callbacks.append(count)
        for message in states[500:]:
            node._on_state(message)
        gc.callbacks.remove(count)
        assert collections == [], f"{len(collections)} collections during 2500 answers"
        assert len(published) == 3000 and all(type(message) is bytes for message in published)
        last = deserialize_message(published[-1], Float64MultiArray)
        assert last.layout.data_offset == 3000 and last.layout.dim[0].label == ",".join(robot.actuated_names)
        # the collector runs where the main loop asks it to: CPython reports it
        gc.callbacks.append(count)
        collector._next = 0.0
        collector.tick()
        gc.callbacks.remove(count)
        assert [info["generation"] for info in collections] == [1]
    finally:
        collector.restore()
        node.destroy_node()


def test_the_collector_control_freezes_disables_and_restores():
    generations: list[int] = []
    now = [0.0]

    def record(phase, info):
        if phase == "start":
            generations.append(info["generation"])

    collector = CollectorControl(period_s=1.0, clock=lambda: now[0])
    assert gc.isenabled()
    try:
        collector.start()
        assert not gc.isenabled() and gc.get_freeze_count() > 0
        gc.callbacks.append(record)
        for step in range(1, 62):
            now[0] = step * 0.5  # a tick every half period: one collection per period
            collector.tick()
        gc.callbacks.remove(record)
        assert len(generations) == 30 and generations.count(2) == 1 and generations[-1] == 2
    finally:
        collector.restore()
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_the_compiled_law_keeps_the_interpreter_lock():
    """A 10-20 us kernel call that released the lock would hand it to another thread of the process."""
    robot = load_robot("dualv", kernels="auto")
    if robot.kernels is None:  # no C compiler: the law runs on the Python path, nothing released either
        assert "unavailable" in robot.kernel_note
        return
    for name in ("pd_step", "ctc_step"):
        assert robot.kernels.law_function(name)._flags_ & ctypes._FUNCFLAG_PYTHONAPI, name


def test_a_node_executable_run_in_process_gives_the_process_back():
    """Before: the first ``pardyn bringup`` (or node main) run inside the test process left it marked as a node
    executable's, so every controller built later in it locked its memory and set a 20 us switch interval (seen
    with two pytest-xdist workers: the own-thread test above read "memory locked")."""
    interval = sys.getswitchinterval()
    give_back = realtime.own_process()
    try:
        line = realtime.node_realtime_setup(0, False)[1]
        assert "interpreter switch interval 20 us" in line and sys.getswitchinterval() < 3e-5
    finally:
        give_back()
    assert sys.getswitchinterval() == interval
    assert "left to the program" in realtime.node_realtime_setup(0, False)[1]


def test_the_sim_takes_its_commands_on_its_own_thread_with_their_publisher(ros_client, in_process):
    """Before: the sim's command subscription took the message info when command_sources was set, which forced the
    whole process (pardyn demo's four nodes) onto rclpy's Python executor (make_executor cannot give the events
    executor such a callback). Now the commands come on the sim's own thread with the publisher's gid: no node
    asks for the message info, and a publisher that is not a command source is still refused, by its gid."""
    from pardyn.nodes.common import needs_message_info
    from pardyn.nodes.sim import SimNode

    config = REPO / "config" / "sim.yaml"
    sim = in_process(SimNode, ros_client, "sim_thread", "--params-file", str(config), "-p", "publish_clock:=false",
                     "-p", "command_sources:=[controller]")
    try:
        assert sim._commands not in list(sim.subscriptions) and not needs_message_info(sim)
        assert ros_client.node.count_subscribers(sim._commands.topic_name) == 1  # the graph sees it
        threads: list[str] = []
        from_source = sim._from_source  # the first look at a taken command: which thread took it
        sim._from_source = lambda info: (threads.append(threading.current_thread().name), from_source(info))[1]
        intruder = ros_client.publisher(Float64MultiArray, sim._commands.topic_name)
        command = Float64MultiArray(data=[0.0] * len(sim.names))  # the right tag: refused only for its publisher
        # only the client's executor spins: the sim takes the command anyway, with the intruder's gid
        assert ros_client.publish_until(intruder, command, lambda: sum(sim.rejected.values()) > 0, timeout_s=30.0)
        assert set(threads) == {"sim commands"}
        assert set(sim.rejected) <= {"source", "unnamed source"} and sim.commands_applied == 0, sim.summary()
    finally:
        sim.destroy_node()
    assert not sim._commands._thread.is_alive()


def test_states_answered_while_the_sim_clock_lags_do_not_trip_the_watchdog(ros_client, in_process):
    """Under ``use_sim_time`` the node's clock follows ``/clock`` on the executor thread, while the states are answered
    on their own thread. A callback on the executor (a model-swap request reading its file: ~0.1-0.3 s under load)
    left the clock behind: before, the states answered meanwhile were dated by that stale clock, and once ``/clock``
    caught up the watchdog saw 100 ms of silence and commanded zero torque (step 787 of a lockstep run, in two
    two-worker suite runs). Here the executor never runs: the clock is set by hand as ``/clock`` would set it."""
    from rclpy.time import Time

    from pardyn.nodes.controller import ControllerNode

    node = in_process(ControllerNode, ros_client, "lagging_clock", "--params-file", str(CONTROLLER_CONFIG),
                      "-p", "use_sim_time:=true")
    robot = load_robot("dualv")
    try:
        clock = node.get_clock()
        assert clock.ros_time_is_active
        clock.set_ros_time_override(Time(seconds=1.0))  # the last /clock the executor handled
        home = robot.home[robot.actuated_indices]
        for k in range(1001, 1101):  # the state thread answers 1.001 .. 1.100 s of states meanwhile
            node._on_state(joint_state(robot.actuated_names, home, k))
        clock.set_ros_time_override(Time(seconds=1.1))  # the executor catches up with /clock
        assert node.protocol.watchdog(node._watchdog_clock_s()) is None  # answered 0 ms ago, not 100 ms
        assert not node.protocol.tripped
        clock.set_ros_time_override(Time(seconds=1.2))  # and a real silence still trips it: 100 ms > 50 ms
        silence = node.protocol.watchdog(node._watchdog_clock_s())
        assert silence is not None and abs(silence[0] - 0.1) < 1e-9, silence
    finally:
        node.destroy_node()
