"""The controller node hosts every law of config/controllers/*.yaml (in-process, no DDS traffic needed).

Each law is built from ``config/controller.yaml`` + ``config/controllers/<law>.yaml``;
a JointState is handed to the node's callback and the published command is
compared with the same pure-core law fed the readings of ``law.joints`` by
hand (the node is the adapter under test: name lookup, sensed joints, the
reference lifted to the measured joints, no eq. (50) projection for the
minimum-norm laws).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import rclpy
import yaml
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from pardyn.control import JointReference
from pardyn.control.computed_torque import ComputedTorque, ExtendedComputedTorque, MeasuredReference
from pardyn.control.gains import ctc_gains
from pardyn.nodes.controller import ControllerNode
from pardyn.robot import load_robot

REPO = Path(__file__).resolve().parents[2]


def parameters(law_file: str, **extra) -> list[Parameter]:
    values = {}
    for path in (REPO / "config" / "controller.yaml", REPO / "config" / "controllers" / f"{law_file}.yaml"):
        values.update(yaml.safe_load(path.read_text())["/**/controller"]["ros__parameters"])
    values.update(extra)
    out = []
    for name, value in values.items():
        if isinstance(value, list):
            if not value:
                continue  # ROS cannot type an empty list: the node's default (empty) applies
            integers = all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            value = [int(v) if integers else float(v) for v in value]  # e.g. pfc_points: integer array
        out.append(Parameter(name, value=value))
    return out


@pytest.fixture(scope="module")
def context(ros_domain):
    context = rclpy.Context()
    rclpy.init(context=context)
    yield context
    rclpy.shutdown(context=context)


def make_node(context, law_file: str, **extra) -> tuple[ControllerNode, list]:
    node = ControllerNode(context=context, parameter_overrides=parameters(law_file, **extra))
    sent = []
    node._publisher.publish = lambda data: sent.append(deserialize_message(data, Float64MultiArray))  # its bytes
    return node, sent


def state(names, position, velocity, stamp_ns: int = 5_000_000) -> JointState:
    message = JointState()
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    message.name = list(names)
    message.position = [float(v) for v in position]
    message.velocity = [float(v) for v in velocity]
    return message


@pytest.mark.parametrize("law, robot, joints, projection, compiled", [
    ("pd", "dualv", "actuated", True, True),
    ("augmented_pd", "dualv", "actuated", True, False),
    ("ctc", "dualv", "actuated", False, True),
    ("extended_ctc", "rrr3", "measured", False, False),
    ("h4_pfc", "h4", "actuated", False, False),
])
def test_every_law_file_builds_its_law(context, law, robot, joints, projection, compiled):
    """... and answers on the compiled kernels where they write the law (pardyn.control.compiled)."""
    node, _ = make_node(context, law, robot=robot)
    try:
        expected = load_robot(robot).actuated_names if joints == "actuated" else load_robot(robot).measured_names
        assert node.law.joints == tuple(expected)
        assert (node.step.projection is not None) == projection
        assert (node.step.compiled is not None) == compiled
    finally:
        node.destroy_node()


def test_extended_ctc_node_reads_the_sensed_joints_and_lifts_the_reference(context):
    robot = load_robot("rrr3")
    setpoint = robot.home[robot.actuated_indices] + np.array([0.02, -0.01, 0.03])
    node, sent = make_node(context, "extended_ctc", setpoint=setpoint.tolist())
    try:
        q = robot.solve_inverse(robot.home[robot.task_indices] + [0.01, 0.0, 0.02], start=robot.home).q
        qdot = robot.differential.velocities_from_task(q, [0.1, -0.05, 0.2])
        measured = list(robot.measured_names)
        order = [4, 0, 5, 2, 1, 3]  # any order, by name
        names = [measured[i] for i in order] + ["platform_x"]
        m = robot.measured_indices
        node._on_state(state(names, [q[m][i] for i in order] + [0.0], [qdot[m][i] for i in order] + [0.0]))
        assert len(sent) == 1
        kp, kd = ctc_gains(10.0, 1.0)
        law = ExtendedComputedTorque(robot, kp=kp, kd=kd)
        expected = law.torques(q[m], qdot[m], MeasuredReference(robot)(JointReference.hold(setpoint)))
        np.testing.assert_allclose(sent[0].data, expected, rtol=1e-9, atol=1e-9)
        # without the sensed joints the state is dropped
        node._on_state(state(names[:3], [q[m][i] for i in order[:3]], [0.0] * 3))
        assert len(sent) == 1
    finally:
        node.destroy_node()


def test_task_space_ctc_node(context):
    robot = load_robot("dualv")
    node, sent = make_node(context, "ctc", law="ctc_task", setpoint_task=robot.home[robot.task_indices].tolist())
    try:
        q = robot.solve_inverse(robot.home[robot.task_indices] + [0.01, 0.0, 0.02], start=robot.home).q
        a = robot.actuated_indices
        node._on_state(state(robot.actuated_names, q[a], np.zeros(4)))
        kp, kd = ctc_gains(10.0, 1.0)
        expected = ComputedTorque(robot, kp=kp, kd=kd, space="task").torques(
            q[a], np.zeros(4), JointReference.hold(robot.home[a]))
        np.testing.assert_allclose(sent[0].data, expected, rtol=1e-9, atol=1e-9)
    finally:
        node.destroy_node()


def test_pfc_node_is_the_pure_core_law_state_after_state(context):
    """The node's PFC (config/controllers/h4_pfc.yaml) keeps its internal model across states, one step per stamp."""
    robot = load_robot("h4")
    setpoint = robot.home[robot.actuated_indices] + 0.01
    node, sent = make_node(context, "h4_pfc", setpoint=setpoint.tolist())
    try:
        from pardyn.control.pfc import PredictiveFunctionalControl

        law = PredictiveFunctionalControl(robot, points=(6, 12, 18), degree=1, error_window=20)
        rng = np.random.default_rng(0)
        a = robot.actuated_indices
        for k in range(5):
            position = robot.home[a] + rng.uniform(-1e-3, 1e-3, 4)
            velocity = rng.uniform(-0.01, 0.01, 4)
            message = state(robot.actuated_names, position, velocity, stamp_ns=k * 1_000_000)
            node._on_state(message)
            node._on_state(message)  # a re-sent state (lockstep sim): same answer, the model advances once
            assert list(sent[-1].data) == list(sent[-2].data)
            expected = law.torques(position, velocity, JointReference.hold(setpoint))
            np.testing.assert_allclose(sent[-1].data, expected, rtol=1e-9, atol=1e-9, err_msg=f"state {k}")
        assert len(sent) == 10
    finally:
        node.destroy_node()
