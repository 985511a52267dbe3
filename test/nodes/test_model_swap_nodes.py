"""The controller's ``~/load_parameters``: the CTC takes a new model on request, blended, over DDS.

``sim`` (lockstep, MuJoCo DualV carrying a 5 kg payload, no torque noise, exact velocities) and ``controller`` (CTC on
the nominal model) run as separate processes; the test publishes a circle as the reference and asks
the controller, through its service, to adopt a parameters file: absent (refused), an online estimate
marked ill-conditioned (refused), then the nominal model plus the 5 kg payload (accepted), and again
at once (refused: a blend is under way).

Reference for every command: the computed-torque law of the robot built in this process straight from
the parameters (``ComputedTorque(robot, params)``, not from the file nor the node's construction) and
evaluated on the state the command answers. Before the accepted request the commands are the nominal
law's (the refusals changed nothing), then exactly ``(1 - s) tau_nominal + s tau_loaded`` with
``s = 1/N, 2/N, ...``, then the loaded law's; each command step during the blend stays within the two
laws' own steps plus ``|tau_loaded - tau_nominal| / N``: what the blend adds is far below the jump an
instant swap would give.
"""

from __future__ import annotations

import signal
from pathlib import Path

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from pardyn import load_robot
from pardyn.control import actuator_limits
from pardyn.control.computed_torque import ComputedTorque
from pardyn.dynamics.parameters import read_parameter_file, write_parameter_file
from pardyn.nodes.common import LATCHED_QOS
from pardyn.nodes.messages import reference_from_message, trajectory_message
from pardyn.excitation.bounds import excitation_settings
from pardyn.excitation.design import design_exciting_trajectory
from pardyn.trajectories.joint import joint_trajectory
from pardyn.trajectories.task import Circle

REPO = Path(__file__).resolve().parents[2]
SIM_CONFIG = REPO / "config" / "sim.yaml"
CONTROLLER_CONFIG = REPO / "config" / "controller.yaml"
IDENTIFIER_CONFIG = REPO / "config" / "identifier.yaml"
PERIOD_NS = 1_000_000
DEPTH = 20_000
PAYLOAD_KG = 5.0
BLEND = 400  # periods
START_NS = 300_000_000  # the circle starts at 0.3 s of simulated time
NATURAL_HZ = 5.0


def stamp_ns(message) -> int:
    return message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec


def test_controller_swaps_its_model_on_request_without_a_jump(launch_node, ros_client, ros_namespace, tmp_path):
    robot = load_robot("dualv")
    namespace = f"{ros_namespace}/swap"
    circle = Circle(robot.home[robot.task_indices], radius_m=0.03, duration_s=3.0, turns=3.0)
    samples = joint_trajectory(robot, circle, rate_hz=200.0)
    message = trajectory_message(samples, robot.actuated_indices, robot.actuated_names, START_NS)
    reference_publisher = ros_client.node.create_publisher(JointTrajectory, f"{namespace}/reference/trajectory",
                                                           LATCHED_QOS)
    reference_publisher.publish(message)
    estimate = tmp_path / "estimate.json"
    controller = launch_node("controller", params_file=CONTROLLER_CONFIG, namespace=namespace, params={
        "use_sim_time": "true", "law": "ctc", "natural_frequency_hz": NATURAL_HZ,
        "swap_parameters_file": str(estimate), "swap_blend_periods": BLEND})
    # the sim starts once the controller holds the reference: a latched reference matched late (discovery under
    # load) would leave the first steps of the circle answered with the hold reference (seen once at step 341)
    assert ros_client.spin_until(lambda: "new reference" in controller.output(), 60.0), controller.output()
    states = ros_client.collect(JointState, f"{namespace}/joint_states", depth=DEPTH)
    commands = ros_client.collect(Float64MultiArray, f"{namespace}/effort_controller/commands", depth=DEPTH)
    sim = launch_node("sim", params_file=SIM_CONFIG, namespace=namespace, params={
        "torque_noise": 0.0, "torque_noise_floor": 0.0, "velocities": "exact", "history_depth": DEPTH,
        "stall_timeout": 3600.0,
        "payload_mass": PAYLOAD_KG})
    assert ros_client.spin_until(lambda: states, 30.0), sim.output()
    client = ros_client.node.create_client(Trigger, f"{namespace}/controller/load_parameters")

    def request() -> tuple[Trigger.Response, int]:
        future = client.call_async(Trigger.Request())
        assert ros_client.spin_until(future.done, 20.0), controller.output()
        return future.result(), (commands[-1].layout.data_offset if commands else -1)

    try:
        assert client.wait_for_service(timeout_sec=30.0), controller.output()
        # a blend's length of tracking on the nominal model first, to compare the steps with, seen by the test: its
        # subscription can match the sim's publisher hundreds of steps late (discovery under load: the first state
        # seen was 315 quiet, ~436 under load, where counting from START_NS left 289 < BLEND steps before the swap)
        assert ros_client.spin_until(lambda: commands and len(states) > 1 and stamp_ns(states[-1]) - max(
            START_NS, stamp_ns(states[0])) > (BLEND + 20) * PERIOD_NS, 60.0), controller.output()
        absent, _ = request()
        nominal = robot.nominal_parameters
        loaded = nominal.with_values({"m_payload": nominal.as_dict()["m_payload"] + PAYLOAD_KG})
        write_parameter_file(estimate, loaded, online_estimate={"condition": 3e5, "t": 1.0})
        ill, refused_tag = request()
        write_parameter_file(estimate, loaded, online_estimate={"condition": 40.0, "t": 1.0})
        accepted, accepted_tag = request()
        during, _ = request()
        assert ros_client.spin_until(lambda: commands[-1].layout.data_offset > accepted_tag + BLEND + 300, 120.0), (
            controller.output())
        assert controller.alive() and sim.alive()
    finally:
        controller.stop(signal.SIGINT)
        sim.stop(signal.SIGINT)
    assert not absent.success and "no estimate available" in absent.message, absent.message
    assert not ill.success and "ill-conditioned" in ill.message, ill.message
    assert accepted.success, accepted.message
    assert not during.success and "already under way" in during.message, during.message
    assert "Traceback" not in controller.output()

    # the command of each state, by the lockstep tag (= the state's step)
    by_step = {stamp_ns(s) // PERIOD_NS: s for s in states}
    answered = {c.layout.data_offset: np.array(c.data) for c in commands}
    steps = sorted(k for k in answered if k in by_step and k * PERIOD_NS >= START_NS)
    reference = reference_from_message(message, tuple(robot.actuated_names))
    w = 2 * np.pi * NATURAL_HZ
    old = ComputedTorque(robot, nominal, kp=w * w, kd=2 * w)
    new = ComputedTorque(robot, loaded, kp=w * w, kd=2 * w)
    names = list(robot.actuated_names)
    expected_old, expected_new, got = [], [], []
    for k in steps:
        state = by_step[k]
        q = np.array([state.position[list(state.name).index(n)] for n in names])
        v = np.array([state.velocity[list(state.name).index(n)] for n in names])
        target = reference((k * PERIOD_NS - START_NS) * 1e-9)
        expected_old.append(old.unsaturated(q, v, target))
        expected_new.append(new.unsaturated(q, v, target))
        got.append(answered[k])
    expected_old, expected_new, got = np.array(expected_old), np.array(expected_new), np.array(got)
    assert np.abs(expected_old).max() < 0.5 * actuator_limits(robot, None).min()  # no saturation to account for
    deviation = np.abs(got - expected_old).max(axis=1)
    first = int(np.flatnonzero(deviation > 1e-6)[0])  # first blended command
    # a deviation before the accepted request was seen once in a two-worker suite run (step 822, refused tag 824):
    # say which steps deviate and by how much, and what the controller said
    early = [(steps[i], float(deviation[i])) for i in np.flatnonzero(deviation > 1e-6) if steps[i] <= accepted_tag]
    assert steps[first] > refused_tag and first >= BLEND, (  # after the refused requests
        f"first deviation at step {steps[first]}, refused tag {refused_tag}, accepted tag {accepted_tag}; "
        f"deviating steps up to the accepted tag (step, N m): {early[:20]}\n{controller.output()[-4000:]}")
    np.testing.assert_allclose(got[:first], expected_old[:first], rtol=0, atol=1e-6)  # the refusals changed nothing
    share = np.minimum(np.arange(1, len(steps) - first + 1) / BLEND, 1.0)[:, None]
    blended = (1 - share) * expected_old[first:] + share * expected_new[first:]
    np.testing.assert_allclose(got[first:], blended, rtol=0, atol=1e-6)
    assert np.all(np.diff(steps[first:first + BLEND]) == 1)  # every period of the blend was observed

    # no jump: each step of the blend is within the larger of the two laws' own steps (Coulomb friction flips
    # its sign with the velocity: up to 2 fs = 0.6 N m per period in normal tracking) plus |tau_new - tau_old| / N
    before = slice(first - 1, first + BLEND - 1)  # the steps into each blended command
    step = np.abs(np.diff(got, axis=0))[before]  # (BLEND, n_a)
    own = np.maximum(np.abs(np.diff(expected_old, axis=0)), np.abs(np.diff(expected_new, axis=0)))[before]
    difference = np.abs(expected_new - expected_old)
    assert np.all(step <= own + difference[before] / BLEND + 1e-6)
    added = np.maximum(step - own, 0.0).max()  # what the blend adds to the laws' own steps
    instant = difference[first].max()  # the jump an instant swap would have made
    assert instant > 0.2 and instant > 50 * added, (instant, added)  # 5 kg: the models differ, the blend hides it
    normal = np.abs(np.diff(got[first - BLEND:first], axis=0)).max()  # the steps of the period before
    print(f"max command step: {step.max():.4g} N m during the blend, {normal:.4g} N m over the {BLEND} periods "
          f"before; added by the blend {added:.3g} N m; an instant swap: {instant:.4g} N m")


def test_identifier_estimate_handed_to_the_controller(launch_node, ros_client, ros_namespace, tmp_path):
    """sim (5 kg payload) + controller (CTC, nominal model) + identifier: ~/save, then ~/load_parameters.

    Reference: the plant's platform mass plus the payload the sim carries (the identifier never sees either):
    the estimate handed over sees the payload within 10 % (a 3 s window of a 4 s exciting motion tracked
    on the wrong model, noise-free torques).
    """
    robot = load_robot("dualv")
    namespace = f"{ros_namespace}/handoff"
    design = design_exciting_trajectory(robot, duration_s=4.0, candidates=1, seed=3,
                                        **excitation_settings("dualv").design_options())
    samples = joint_trajectory(robot, design.trajectory, rate_hz=100.0)
    message = trajectory_message(samples, robot.actuated_indices, robot.actuated_names, 200_000_000)
    publisher = ros_client.node.create_publisher(JointTrajectory, f"{namespace}/reference/trajectory", LATCHED_QOS)
    publisher.publish(message)
    estimate = tmp_path / "online.json"
    sim = launch_node("sim", params_file=SIM_CONFIG, namespace=namespace, params={
        "torque_noise": 0.0, "torque_noise_floor": 0.0, "history_depth": DEPTH, "stall_timeout": 3600.0,
        "payload_mass": PAYLOAD_KG})
    identifier = launch_node("identifier", params_file=IDENTIFIER_CONFIG, namespace=namespace, params={
        "use_sim_time": "true", "parameters_out": str(estimate)})
    states = ros_client.collect(JointState, f"{namespace}/joint_states", depth=10)
    estimates = ros_client.collect(JointState, f"{namespace}/identifier/estimate", depth=10)
    assert ros_client.spin_until(lambda: states and "base parameters" in identifier.output(), 60.0), (
        sim.output() + identifier.output())
    controller = launch_node("controller", params_file=CONTROLLER_CONFIG, namespace=namespace, params={
        "use_sim_time": "true", "law": "ctc", "natural_frequency_hz": NATURAL_HZ,
        "swap_parameters_file": str(estimate)})
    save = ros_client.node.create_client(Trigger, f"{namespace}/identifier/save")
    load = ros_client.node.create_client(Trigger, f"{namespace}/controller/load_parameters")

    def call(client) -> Trigger.Response:
        future = client.call_async(Trigger.Request())
        assert ros_client.spin_until(future.done, 20.0), controller.output() + identifier.output()
        return future.result()

    try:
        assert save.wait_for_service(timeout_sec=30.0) and load.wait_for_service(timeout_sec=30.0)
        early = call(load)  # nothing saved yet
        saved = call(save)
        refusals = 0
        while not saved.success and refusals < 300:  # until the window holds its 3 s
            refusals += 1
            ros_client.spin_until(lambda: False, 0.1)
            saved = call(save)
        # the window of 3 s of motion, not the start (the trajectory starts at 0.2 s, under a CTC transient)
        # ... as the identifier has taken it in: on a loaded machine it may lag the sim's states
        assert ros_client.spin_until(lambda: estimates and stamp_ns(estimates[-1]) > 3_300_000_000, 60.0), (
            identifier.output())
        saved = call(save)
        adopted = call(load)
        assert ros_client.spin_until(lambda: "model swap to" in controller.output(), 10.0), controller.output()
        assert controller.alive() and identifier.alive() and sim.alive()
    finally:
        for node in (controller, identifier, sim):
            node.stop(signal.SIGINT)
    assert not early.success and "no estimate available" in early.message, early.message
    assert saved.success, (saved.message, identifier.output())
    assert adopted.success and "blending over" in adopted.message, adopted.message
    assert "Traceback" not in controller.output() + identifier.output()
    values = read_parameter_file(estimate, robot).as_dict()
    nominal = robot.nominal_parameters.as_dict()

    def platform_mass(v):  # the base parameter m_platformR of eq. (43)'s regrouping
        return v["m_platform"] + v["m_payload"] + 3.57142857 * sum(v[f"mx_leg{i}_link2"] for i in range(1, 5))

    payload = platform_mass(values) - platform_mass(nominal)
    print(f"payload seen by the online estimate handed over: {payload:.3f} kg (sim: {PAYLOAD_KG} kg), "
          f"{refusals} refused saves first")
    # measured -6, +1.7, +3 % in three runs (the window ends 3.3-3.5 s, as the test is served); +9 % when it
    # ends at 3.0 s (the start's transient in it)
    assert abs(payload - PAYLOAD_KG) < 0.10 * PAYLOAD_KG
