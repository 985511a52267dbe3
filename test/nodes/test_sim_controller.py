"""The ``sim`` and ``controller`` nodes as separate OS processes over DDS.

* Lockstep (the done-when test): sim and controller run 2 s of simulated time
  at 1 kHz. The test records every state the sim publishes and checks, step by
  step, that the torque applied over step ``k`` (the ``effort`` of state
  ``k+1``, noise off) is the PD law of state ``k`` recomputed here from the
  gains in ``config/controller.yaml`` -- so no step was missed, doubled or fed
  another step's command -- that the stamps are exactly ``k`` ms, that the
  loops stay closed (pinocchio's own frame placements on the sim's ground
  truth), that the same loop run in this process without ROS gives the same
  trajectory, and that the PD brings the robot to the setpoint.
* Watchdogs and bad input: the free-running sim applies zero torque when
  commands stop, saturates and rejects bad commands; the controller outputs
  zero torque when states stop and drops bad states; both keep running.
"""

from __future__ import annotations

import math
import re
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.linalg import null_space
import yaml
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from pardyn import load_robot
from pardyn.plants.measurement import MeasurementModel
from pardyn.plants.mujoco_plant import MujocoPlant

REPO = Path(__file__).resolve().parents[2]
SIM_CONFIG = REPO / "config" / "sim.yaml"
CONTROLLER_CONFIG = REPO / "config" / "controller.yaml"
PERIOD_NS = 1_000_000  # 1 kHz
STEPS = 2000  # 2 s of simulated time
SETPOINT_TASK = (0.01, 0.005, 0.02)  # x (m), y (m), phi (rad), from home (0, 0, 0)
DEPTH = 10_000  # the test must not miss a state
RUN_TIMEOUT_S = 120.0


def controller_gains() -> tuple[np.ndarray, np.ndarray]:
    parameters = yaml.safe_load(CONTROLLER_CONFIG.read_text())["/**/controller"]["ros__parameters"]
    return np.array(parameters["kp"], dtype=float), np.array(parameters["kd"], dtype=float)


def stamp_ns(message) -> int:
    return message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec


def by_step(messages) -> dict[int, object]:
    """``{k: message}`` of a stream stamped k * 1 ms, after checking that re-sent copies are identical."""
    steps: dict[int, object] = {}
    previous = -1
    for message in messages:
        ns = stamp_ns(message)
        assert ns % PERIOD_NS == 0, f"stamp {ns} ns is not a whole number of periods"
        k = ns // PERIOD_NS
        assert k >= previous, f"state {k} after state {previous}: out of order"
        if k in steps:
            assert k == previous and list(steps[k].position) == list(message.position), f"state {k} differs"
        steps[k] = message
        previous = k
    return steps


# --------------------------------------------------------------------------- lockstep
@pytest.fixture(scope="module")
def lockstep_run(launch_node, ros_client, ros_namespace):
    """Sim + controller in lockstep until the test has 2 s of states; then the controller is stopped."""
    namespace = f"{ros_namespace}/lockstep"
    sim = launch_node("sim", params_file=SIM_CONFIG, namespace=namespace, params={
        "torque_noise": 0.0, "torque_noise_floor": 0.0, "history_depth": DEPTH,
        "stall_timeout": 3600.0,  # this test checks the hold; test_reliability.py the stall timeout
    })
    states = ros_client.collect(JointState, f"{namespace}/joint_states", depth=DEPTH)
    truth = ros_client.collect(JointState, f"{namespace}/ground_truth/joint_states", depth=DEPTH)
    # the sim re-sends state 0 until a command comes: start the controller once the test hears it,
    # so the test records every step from 0
    assert ros_client.spin_until(lambda: states and truth, 30.0), sim.output()
    controller = launch_node("controller", params_file=CONTROLLER_CONFIG, namespace=namespace, params={
        "use_sim_time": "true", "setpoint_task": list(SETPOINT_TASK),
        "internal_stress_projection": "false",  # the plain PD law; eq. (50) has its own test
    })
    done = ros_client.spin_until(
        lambda: truth and stamp_ns(truth[-1]) >= STEPS * PERIOD_NS and stamp_ns(states[-1]) >= STEPS * PERIOD_NS,
        RUN_TIMEOUT_S,
    )
    assert done, f"lockstep too slow or stuck\nsim:\n{sim.output()}\ncontroller:\n{controller.output()}"
    controller_code = controller.stop(signal.SIGTERM)
    # without commands the simulated time must hold; the sim re-sends its state and logs an error
    assert ros_client.spin_until(lambda: "no command for step" in sim.output(), 10.0), sim.output()
    # frozen: the step the sim re-sends (every 25 ms), three copies in a row. Not the last "no command for step"
    # report: a late command during the run (a loaded machine) is reported too, and the reports are throttled per
    # log period, so the hold's own report can be held back and that step was an earlier one
    assert ros_client.spin_until(lambda: len({stamp_ns(m) for m in states[-3:]}) == 1, 10.0), sim.output()
    frozen = stamp_ns(states[-1])
    ros_client.spin_until(lambda: False, 0.5)  # the test catches up; re-sends (every 25 ms), no new step
    return {
        "sim": sim, "controller": controller, "controller_code": controller_code,
        "states": by_step(states), "truth": by_step(truth), "frozen_ns": frozen, "last_ns": stamp_ns(states[-1]),
    }


def test_lockstep_applies_each_step_the_command_computed_from_that_step(lockstep_run):
    robot = load_robot("dualv")
    states = lockstep_run["states"]
    assert set(range(STEPS + 1)) <= set(states), "a step is missing from the sim's stream"
    assert max(states) == lockstep_run["frozen_ns"] // PERIOD_NS
    kp, kd = controller_gains()
    q_set = robot.solve_inverse(SETPOINT_TASK).q[robot.actuated_indices]
    actuated = list(robot.actuated_names)
    assert list(states[0].name) == list(robot.measured_names)
    assert list(states[0].effort) == [0.0] * len(actuated)  # nothing applied before step 0
    for k in range(STEPS):
        state, following = states[k], states[k + 1]
        q = np.array([state.position[state.name.index(n)] for n in actuated])
        v = np.array([state.velocity[state.name.index(n)] for n in actuated])
        expected = kp * (q_set - q) + kd * (0.0 - v)  # PD of state k, limits (1000 N m) far away
        applied = np.array([following.effort[following.name.index(n)] for n in actuated])
        np.testing.assert_allclose(applied, expected, rtol=0, atol=1e-12, err_msg=f"step {k}")


def test_lockstep_keeps_the_loops_closed_and_reaches_the_setpoint(lockstep_run, closure_violation):
    robot = load_robot("dualv")
    truth = lockstep_run["truth"]
    assert set(range(STEPS + 1)) <= set(truth)
    assert list(truth[0].name) == list(robot.joint_names)
    worst = max(closure_violation(robot, truth[k].position) for k in range(STEPS + 1))
    assert worst < 1e-6, f"closure violation {worst:.3g} m"
    q_set = robot.solve_inverse(SETPOINT_TASK).q
    q_end = np.array(truth[STEPS].position)
    start_error = np.abs(np.array(truth[0].position)[robot.actuated_indices] - q_set[robot.actuated_indices]).max()
    end_error = np.abs(q_end[robot.actuated_indices] - q_set[robot.actuated_indices]).max()
    # Coulomb friction fs = 0.3 N m against Kp = 100 N m/rad leaves up to ~3 mrad
    assert start_error > 0.02 and end_error < 4e-3, (start_error, end_error)
    assert np.abs(q_end[robot.task_indices] - SETPOINT_TASK).max() < 2e-3  # m, rad


def test_lockstep_run_equals_the_same_loop_without_ros(lockstep_run):
    """Determinism: plant + encoders + PD in this process, no DDS in between, give the same states."""
    robot = load_robot("dualv")
    plant = MujocoPlant(robot)
    plant.reset(robot.home)
    sensors = MeasurementModel(robot, velocities="difference", torque_noise=0.0, torque_noise_floor=0.0)
    kp, kd = controller_gains()
    q_set = robot.solve_inverse(SETPOINT_TASK).q[robot.actuated_indices]
    n_a = len(robot.actuated_names)
    state = plant.state()
    for _ in range(STEPS):
        reading = sensors.measure(state)
        tau = kp * (q_set - reading.positions[:n_a]) + kd * (np.zeros(n_a) - reading.velocities[:n_a])
        state = plant.step(tau, PERIOD_NS * 1e-9)
    np.testing.assert_allclose(lockstep_run["truth"][STEPS].position, state.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(lockstep_run["truth"][STEPS].velocity, state.qdot, rtol=0, atol=1e-7)


def test_lockstep_sim_holds_time_without_commands_and_stops_cleanly(lockstep_run, ros_client):
    sim = lockstep_run["sim"]
    try:
        assert lockstep_run["controller_code"] == 0, lockstep_run["controller"].output()
        assert lockstep_run["last_ns"] == lockstep_run["frozen_ns"], "simulated time advanced without a command"
        # a late command is counted (INFO); a controller silent for over a second is an error
        assert ros_client.spin_until(lambda: "[ERROR]" in sim.output(), 10.0), sim.output()
        assert "simulated time holds" in sim.output() and "is the controller running?" in sim.output()
    finally:  # stopped even when a check fails: its /clock (global) would reach the module's later tests
        code = sim.stop(signal.SIGINT)
    assert code == 0, sim.output()
    output = sim.output()
    assert "sim summary" in output and "Traceback" not in output
    # the loop's own timing: every lockstep period runs on the answer to the state just before it
    assert re.search(r"state -> command latency p50 [0-9.e+-]+ p99 [0-9.e+-]+ max [0-9.e+-]+ ms \(\d+ samples\), "
                     r"100\.00 % of periods on the answer to the state just before", output), output
    assert "Traceback" not in lockstep_run["controller"].output()


# --------------------------------------------------------------------------- watchdogs, bad input
def stream(client, publisher, message, condition, *, timeout_s: float, period_s: float = 0.005) -> bool:
    """Publish ``message`` every ``period_s`` (well inside the watchdog) until ``condition()`` holds."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        publisher.publish(message)
        if client.spin_until(condition, period_s):
            return True
    return False


def command(values) -> Float64MultiArray:
    return Float64MultiArray(data=[float(v) for v in values])


def efforts(message, names) -> list[float]:
    return [message.effort[list(message.name).index(n)] for n in names]


def test_free_running_sim_zero_torque_watchdog_saturation_and_bad_commands(launch_node, ros_client, ros_namespace):
    robot = load_robot("dualv")
    names = list(robot.actuated_names)
    namespace = f"{ros_namespace}/free"
    sim = launch_node("sim", params_file=SIM_CONFIG, namespace=namespace, params={
        "lockstep": "false", "torque_noise": 0.0, "torque_noise_floor": 0.0, "effort_limits": "[2.0]",
        "watchdog_periods": 50, "publish_clock": "false", "history_depth": 100,
    })
    states = ros_client.collect(JointState, f"{namespace}/joint_states", depth=2000)
    publisher = ros_client.publisher(Float64MultiArray, f"{namespace}/effort_controller/commands")
    try:
        good = [0.5, -0.5, 0.25, 0.0]  # N m
        applied = lambda wanted: bool(states) and efforts(states[-1], names) == wanted  # noqa: E731
        assert stream(ros_client, publisher, command(good), lambda: applied(good), timeout_s=20.0), sim.output()

        # commands stop: after 50 periods the sim applies zero torque and says so
        assert ros_client.spin_until(lambda: applied([0.0] * 4) and "applying zero torque" in sim.output(), 5.0), \
            sim.output()
        count = len(states)
        ros_client.spin_until(lambda: len(states) > count + 50, 5.0)
        assert all(efforts(m, names) == [0.0] * 4 for m in states[count:]), "torque came back without a command"

        # beyond the limits: saturated per actuator (limits 2 N m), with a warning
        assert stream(ros_client, publisher, command([5.0, -3.0, 1.0, 0.0]), lambda: applied([2.0, -2.0, 1.0, 0.0])
                      and "saturated" in sim.output(), timeout_s=10.0), sim.output()

        # bad commands are rejected with a message; the sim goes on (zero torque once the last good one is stale)
        for bad, text in (
            ([0.1, math.nan, 0.0, 0.0], "non-finite torques for ['leg2_joint1']"),
            ([0.1, 0.2, math.inf, -math.inf], "non-finite torques for ['leg3_joint1', 'leg4_joint1']"),
            ([0.1, 0.2], "expected 4 torques"),
            # bytes that are no Float64MultiArray (the sim reads the serialized command, pardyn.nodes.wire)
            (serialize_message(command([0.1, 0.2, 0.3, 0.4]))[:-12], "serialized Float64MultiArray: data runs past"),
        ):
            message = bad if isinstance(bad, bytes) else command(bad)
            assert stream(ros_client, publisher, message, lambda: text in sim.output(), timeout_s=10.0), \
                sim.output()
        assert ros_client.spin_until(lambda: applied([0.0] * 4), 5.0)
        assert stream(ros_client, publisher, command(good), lambda: applied(good), timeout_s=10.0), sim.output()
        assert "commands back" in sim.output() and "rejected effort_controller/commands message" in sim.output()
        stamps = [stamp_ns(m) for m in states]
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps) and all(s % PERIOD_NS == 0 for s in stamps)
        assert sim.alive()
    finally:
        code = sim.stop(signal.SIGTERM)
    assert code == 0, sim.output()
    assert "Traceback" not in sim.output()


def test_a_free_running_sim_whose_period_takes_longer_than_the_period_says_it_runs_behind(launch_node, ros_namespace):
    """RK4 at 10 us steps makes each 1 ms period of the DualV cost ~7 ms of work: the sim cannot keep 1 kHz and
    says so (periods per wall-clock second, the period's work, what to change) instead of running slowly in
    silence; the summary counts the seconds behind."""
    sim = launch_node("sim", params_file=SIM_CONFIG, namespace=f"{ros_namespace}/behind", params={
        "lockstep": "false", "plant_timestep": 1e-5, "publish_clock": "false"})
    try:
        deadline = time.monotonic() + 30.0
        while "behind the 1000 Hz asked for" not in sim.output() and time.monotonic() < deadline and sim.alive():
            time.sleep(0.2)
    finally:
        code = sim.stop(signal.SIGINT)
    assert code == 0, sim.output()
    line = next(line for line in sim.output().splitlines() if "behind the 1000 Hz" in line)
    rate, work = map(float, re.search(r"free-running at (\d+) periods/s.* takes p50 (\d+) us", line).groups())
    assert rate < 950.0 and work > 1000.0, line
    assert "plant_timestep" in line and "lockstep: true" in line
    assert re.search(r"[1-9]\d* of \d+ s behind real time", sim.output()), sim.output()


def joint_state(names, position, velocity, k: int) -> JointState:
    message = JointState()
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(k * PERIOD_NS, 1_000_000_000)
    message.name = list(names)
    message.position = [float(v) for v in position]
    message.velocity = [float(v) for v in velocity]
    return message


def test_controller_answers_states_then_zero_torque_without_them_and_drops_bad_states(
    launch_node, ros_client, ros_namespace
):
    robot = load_robot("dualv")
    names = list(robot.actuated_names)
    namespace = f"{ros_namespace}/controller_alone"
    controller = launch_node("controller", params_file=CONTROLLER_CONFIG, namespace=namespace,
                             params={"watchdog_periods": 20, "internal_stress_projection": "false"})
    commands = ros_client.collect(Float64MultiArray, f"{namespace}/effort_controller/commands", depth=2000)
    publisher = ros_client.publisher(JointState, f"{namespace}/joint_states")
    kp, kd = controller_gains()
    q0 = robot.home[robot.actuated_indices]
    try:
        # constant readings first: the controller holds the first position it hears, q0
        first = joint_state(names, q0, np.zeros(4), 1)
        assert ros_client.publish_until(publisher, first, lambda: commands, timeout_s=20.0), controller.output()
        # states k = 100.. (k ms): the answer to each is tagged k and is the PD law of that state
        sent = {}
        for k in range(100, 140):
            q = q0 + 1e-3 * np.array([1.0, -2.0, 0.5, 0.0]) * (k - 99)
            v = np.array([0.1, 0.0, -0.2, 0.3]) * (k - 99)
            sent[k] = kp * (q0 - q) + kd * (0.0 - v)
            # reversed names and an extra joint: names, not positions, matter; each state until answered (the
            # controller keeps the newest state only: a state overwritten before it ran would get no answer)
            message = joint_state(names[::-1] + ["gripper"], list(q[::-1]) + [1.0], list(v[::-1]) + [0.0], k)
            assert ros_client.publish_until(publisher, message, lambda k=k: any(c.layout.data_offset == k for c in commands),
                                            timeout_s=10.0, period_s=0.05), controller.output()
        answers = {}
        for message in commands:  # the first per tag: a watchdog's zero command would come later
            answers.setdefault(message.layout.data_offset, message)
        for k, expected in sent.items():
            np.testing.assert_allclose(answers[k].data, expected, rtol=0, atol=1e-12, err_msg=f"state {k}")

        # states stop: zero torque (tag of the last state answered) and an error
        assert ros_client.spin_until(
            lambda: list(commands[-1].data) == [0.0] * 4 and "no joint_states for" in controller.output(), 5.0
        ), controller.output()
        assert commands[-1].layout.data_offset == 138  # one before the last state: an answer to no state

        # bad states: dropped with a message naming the problem, never answered
        bad_cases = (
            (joint_state(names, [q0[0], q0[1], math.nan, q0[3]], np.zeros(4), 500),
             "non-finite position or velocity of ['leg3_joint1']"),
            (joint_state(names, q0[:3], np.zeros(4), 501), "4 names but 3 positions"),
            (joint_state(names[:3], q0[:3], np.zeros(3), 502), "missing actuated joints ['leg4_joint1']"),
            # bytes that are no JointState (the controller reads the serialized state, pardyn.nodes.wire)
            (serialize_message(joint_state(names, q0, np.zeros(4), 503))[:60], "serialized JointState: "),
        )
        for message, text in bad_cases:
            assert ros_client.publish_until(publisher, message, lambda: text in controller.output(), timeout_s=10.0), \
                controller.output()
        assert not {500, 501, 502, 503} & {c.layout.data_offset for c in commands}

        # states come back: control resumes
        assert ros_client.publish_until(publisher, joint_state(names, q0, np.zeros(4), 600),
                                        lambda: "control resumed" in controller.output(), timeout_s=10.0)
        assert controller.alive()
    finally:
        code = controller.stop(signal.SIGINT)
    assert code == 0, controller.output()
    output = controller.output()
    assert "[ERROR]" in output and "[WARN]" in output and "Traceback" not in output


def test_controller_watchdog_counts_simulated_time_under_use_sim_time(launch_node, ros_client, ros_namespace):
    """A simulation that stalls (a lockstep sim waiting, a loaded machine) stops /clock: its silence in wall time
    is no silent robot, so no zero torque and no error; once simulated time runs past the watchdog without a
    state, the controller trips as on hardware (20 periods of 1 ms here)."""
    from rosgraph_msgs.msg import Clock

    robot = load_robot("dualv")
    names = list(robot.actuated_names)
    namespace = f"{ros_namespace}/sim_time_watchdog"
    controller = launch_node("controller", params_file=CONTROLLER_CONFIG, namespace=namespace,
                             params={"watchdog_periods": 20, "internal_stress_projection": "false",
                                     "use_sim_time": "true"})
    commands = ros_client.collect(Float64MultiArray, f"{namespace}/effort_controller/commands", depth=2000)
    states = ros_client.publisher(JointState, f"{namespace}/joint_states")
    clock = ros_client.publisher(Clock, "/clock")

    def publish_clock(k: int) -> None:
        message = Clock()
        message.clock.sec, message.clock.nanosec = divmod(k * PERIOD_NS, 1_000_000_000)
        clock.publish(message)

    q0 = robot.home[robot.actuated_indices]
    try:
        state = joint_state(names, q0, np.zeros(4), 1000)
        # the first states come before any /clock (a simulator's first joint_states can beat its first clock): the
        # node's time reads 0 then, and the silence must count from the clock's start, not from 0
        assert ros_client.publish_until(states, state, lambda: commands, timeout_s=20.0), controller.output()
        answered = len(commands)
        # 0.6 s of wall time (30 watchdog periods) with simulated time standing at the state's stamp
        deadline = time.monotonic() + 0.6
        while time.monotonic() < deadline:
            publish_clock(1000)
            ros_client.spin_until(lambda: False, 0.02)
        assert "no joint_states for" not in controller.output(), controller.output()
        assert len(commands) == answered, "a watchdog command while simulated time stood still"
        # simulated time runs 100 periods on without a state: zero torque and the error
        assert ros_client.spin_until(lambda: (publish_clock(1100), "no joint_states for" in controller.output())[1],
                                     5.0), controller.output()
        assert ros_client.spin_until(lambda: list(commands[-1].data) == [0.0] * 4, 2.0)
    finally:
        code = controller.stop(signal.SIGINT)
    assert code == 0, controller.output()


# --------------------------------------------------------------------------- in process: parameters, plants

@pytest.mark.parametrize("executable", ["sim", "controller", "trajectory"])
def test_config_file_sets_every_declared_parameter(executable, ros_client, in_process):
    from rclpy.exceptions import ParameterUninitializedException

    from pardyn.node_parameters import NODE_PARAMETERS
    from pardyn.nodes.registry import node_class

    config = REPO / "config" / f"{executable}.yaml"
    parameters = yaml.safe_load(config.read_text())[f"/**/{executable}"]["ros__parameters"]
    node = in_process(node_class(executable), ros_client, f"config_{executable}", "--params-file", str(config))
    try:
        declared = set(node.list_parameters([], 1).names) - {"use_sim_time", "start_type_description_service"}
        assert declared == set(parameters)
        for name, value in parameters.items():
            try:
                actual = node.get_parameter(name).value
            except ParameterUninitializedException:  # an empty list: ROS cannot type it, the node reads []
                actual = []
            assert actual == value, name
        descriptors = node.describe_parameters(sorted(declared))
        specs = {spec.name: spec for spec in NODE_PARAMETERS[executable]}
        # read-only unless the table says otherwise (the controller's swap_parameters_file)
        assert all(d.description and d.read_only == specs[d.name].read_only for d in descriptors)
    finally:
        node.destroy_node()


def test_sim_parameters_choose_the_plant_and_the_payload(ros_client, in_process):
    from pardyn.nodes.sim import SimNode
    from pardyn.plants.pinocchio_plant import PinocchioPlant

    node = in_process(SimNode, ros_client, "payload", "--params-file", str(SIM_CONFIG), "-p", "plant:=pinocchio",
                      "-p", "payload_mass:=2.5", "-p", "payload_com:=[0.01, 0.0, 0.02]",
                      "-p", "payload_inertia:=[0.1, 0.2, 0.3, 0.01, 0.02, 0.03]",
                      "-p", "initial_task:=[0.01, 0.0, 0.0]")
    try:
        assert isinstance(node.plant, PinocchioPlant)
        payload = node.plant.payload
        # payload_frame left empty: the DualV's 'payload' link (fixed at the platform's origin)
        assert payload.mass == 2.5 and payload.frame == "payload"
        np.testing.assert_array_equal(payload.com, [0.01, 0.0, 0.02])
        np.testing.assert_array_equal(payload.inertia, [[0.1, 0.01, 0.02], [0.01, 0.2, 0.03], [0.02, 0.03, 0.3]])
        q = node.plant.state().q
        np.testing.assert_allclose(q[node.robot.task_indices], [0.01, 0.0, 0.0], atol=1e-12)
    finally:
        node.destroy_node()


def test_flexible_plant_publishes_link_and_motor_encoders(ros_client, in_process):
    """plant: flexible (ur5e): joint_states = link encoders, motor_states = rotor encoders; at rest under the
    gravity torque their difference is the spring deflection g(q) / K (statics, by hand)."""
    import pinocchio as pin

    from pardyn.dynamics.rotor import load_rotor_model
    from pardyn.nodes.sim import SimNode
    from pardyn.plants.flexible_joint import FlexibleJointPlant

    node = in_process(SimNode, ros_client, "flexible", "--params-file", str(SIM_CONFIG), "-p", "robot:=ur5e",
                      "-p", "plant:=flexible", "-p", "publish_clock:=false", "-p", "torque_noise:=0.0",
                      "-p", "torque_noise_floor:=0.0")
    try:
        assert isinstance(node.plant, FlexibleJointPlant)
        prefix = f"{ros_client.node.get_namespace()}/flexible"
        links = ros_client.collect(JointState, f"{prefix}/joint_states")
        motors = ros_client.collect(JointState, f"{prefix}/motor_states")
        robot = node.robot
        gravity = pin.computeGeneralizedGravity(node.plant.model, node.plant.data, robot.home)
        for _ in range(5):
            node._advance(gravity)
        assert ros_client.spin_until(lambda: (node._send() or True) and links and motors, timeout_s=15.0)
        link, motor = links[-1], motors[-1]
        assert link.header.stamp == motor.header.stamp and list(motor.name) == list(robot.actuated_names)
        np.testing.assert_allclose(motor.effort, gravity, atol=1e-9)  # the held current-based torque
        deflection = np.asarray(motor.position) - np.asarray(link.position)
        resolution = 2 * math.pi / 131072
        np.testing.assert_allclose(deflection, gravity / load_rotor_model(robot).stiffness, atol=1.01 * resolution)
    finally:
        node.destroy_node()


def test_pinocchio_plant_lockstep_with_the_controller_in_one_process(ros_client, closure_violation, in_process):
    """The same lockstep loop on the pinocchio plant, both nodes in one executor (composition)."""
    from rclpy.executors import SingleThreadedExecutor

    from pardyn.nodes.controller import ControllerNode
    from pardyn.nodes.sim import SimNode

    sim = in_process(SimNode, ros_client, "pinocchio_pair", "--params-file", str(SIM_CONFIG), "-p", "plant:=pinocchio",
                     "-p", "publish_clock:=false")
    controller = in_process(ControllerNode, ros_client, "pinocchio_pair", "--params-file", str(CONTROLLER_CONFIG),
                            "-p", f"setpoint_task:={list(SETPOINT_TASK)}")
    executor = SingleThreadedExecutor(context=ros_client.context)
    executor.add_node(sim)
    executor.add_node(controller)
    try:
        deadline = time.monotonic() + 60.0
        while sim.step < 300 and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.01)
        assert sim.step >= 300
        with sim._lock:  # the sim's command thread steps meanwhile: both counts of one moment
            assert sim.commands_applied == sim.step  # one command per step, no more, no less
        assert sim.max_closure_violation < 1e-9  # RK4 + projection keeps it at round-off
        assert closure_violation(sim.robot, sim.plant.state().q) < 1e-9
        q_set = sim.robot.solve_inverse(SETPOINT_TASK).q[sim.robot.actuated_indices]
        q = sim.plant.state().q[sim.robot.actuated_indices]
        assert np.abs(q - q_set).max() < 0.5 * np.abs(sim.robot.home[sim.robot.actuated_indices] - q_set).max()
    finally:
        executor.shutdown()
        controller.destroy_node()
        sim.destroy_node()


def test_controller_removes_internal_stress_on_the_dualv(launch_node, ros_client, ros_namespace):
    """Eq. (50): the command is the PD torque minus its component in null(J^T), J = W[actuated].

    Checked with scipy's null-space basis at the posture the readings come from
    (independent of pardyn's projector): same J^T tau as the PD, nothing left in null(J^T).
    """
    robot = load_robot("dualv")
    names = list(robot.actuated_names)
    namespace = f"{ros_namespace}/controller_projection"
    controller = launch_node("controller", params_file=CONTROLLER_CONFIG, namespace=namespace,
                             params={"setpoint_task": [0.0, 0.0, 0.0]})
    commands = ros_client.collect(Float64MultiArray, f"{namespace}/effort_controller/commands", depth=100)
    publisher = ros_client.publisher(JointState, f"{namespace}/joint_states")
    kp, kd = controller_gains()
    q_full = robot.solve_inverse([0.02, -0.01, 0.1]).q
    q = q_full[robot.actuated_indices]
    v = np.array([0.1, -0.2, 0.05, 0.3])
    q_set = robot.solve_inverse([0.0, 0.0, 0.0]).q[robot.actuated_indices]
    pd = kp * (q_set - q) + kd * (0.0 - v)
    jacobian = robot.differential.inverse_jacobian(q_full, robot.actuated_indices)  # (4, 3)
    internal = null_space(jacobian.T)  # (4, 1)
    try:
        message = joint_state(names, q, v, 7)
        assert ros_client.publish_until(publisher, message, lambda: commands, timeout_s=20.0), controller.output()
    finally:
        controller.stop()
    tau = np.asarray(commands[0].data)
    assert np.linalg.norm(internal.T @ pd) > 0.1  # N m: the PD alone does load the structure here
    np.testing.assert_allclose(internal.T @ tau, 0.0, atol=1e-9)
    np.testing.assert_allclose(jacobian.T @ tau, jacobian.T @ pd, atol=1e-9)


def test_trajectory_waits_for_the_named_subscriber_before_it_fixes_the_start(ros_client, in_process):
    """``wait_for_subscriber: controller`` (the hardware bringup): the reference is not published while only
    another node (this test's) subscribes; once a node named ``controller`` of the trajectory's namespace
    subscribes, it is, its start ``start_delay`` after then. Without it a controller still starting in its own
    process received a free-running circle after its start and answered ``hold`` during it (the hardware
    bringup test, 1 of 2 runs on a loaded machine)."""
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from trajectory_msgs.msg import JointTrajectory

    from pardyn.nodes.common import LATCHED_QOS
    from pardyn.nodes.trajectory import TOPIC, TrajectoryNode

    node = in_process(TrajectoryNode, ros_client, "waiting", "--params-file", str(REPO / "config" / "trajectory.yaml"),
                      "-p", "wait_for_subscriber:=controller", "-p", "start_delay:=1.0", "-p", "duration:=0.5")
    namespace = node.get_namespace()
    references: list = []
    other = Node("recorder", namespace=namespace, context=ros_client.context)  # not the awaited name
    other.create_subscription(JointTrajectory, TOPIC, references.append, LATCHED_QOS)
    executor = SingleThreadedExecutor(context=ros_client.context)
    for each in (node, other):
        executor.add_node(each)
    controller = None
    try:
        deadline = time.monotonic() + 1.5  # the other subscriber matched, the timer ran ~30 times
        while time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.01)
        assert node.get_subscriptions_info_by_topic(f"{namespace}/{TOPIC}") and not references
        assert node.message is None
        controller = Node("controller", namespace=namespace, context=ros_client.context)
        controller.create_subscription(JointTrajectory, TOPIC, lambda message: None, LATCHED_QOS)
        executor.add_node(controller)
        subscribed_ns = node.get_clock().now().nanoseconds
        deadline = time.monotonic() + 30.0
        while not references and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.01)
        assert references, "no reference once the controller subscribed"
        start_ns = references[0].header.stamp.sec * 1_000_000_000 + references[0].header.stamp.nanosec
        assert 0.99e9 <= start_ns - subscribed_ns <= 1.0e9 + 0.5e9  # start_delay after the match (+ its discovery)
    finally:
        executor.shutdown()
        for each in (node, other, controller):
            if each is not None:
                each.destroy_node()
