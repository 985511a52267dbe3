"""The ``dynamics`` node as a separate process: model torques of the live state, feedforward of the reference.

The expected torques come from the task trajectory in closed form (position,
velocity and acceleration of a sine) through the core's inverse dynamics,
which is tested on its own against energy balance, pinocchio and the papers.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from builtin_interfaces.msg import Duration
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from pardyn.dynamics.inverse import InverseDynamics
from pardyn.nodes.common import LATCHED_QOS
from pardyn.robot import load_robot

CONFIG = Path(__file__).resolve().parents[2] / "config" / "dynamics.yaml"
AMPLITUDE = np.array([0.02, 0.015, 0.1])  # m, m, rad
OMEGA = 6.0  # rad/s


def task(robot, t: float):
    home = robot.home[robot.task_indices]
    return (home + AMPLITUDE * np.sin(OMEGA * t), AMPLITUDE * OMEGA * np.cos(OMEGA * t),
            -AMPLITUDE * OMEGA**2 * np.sin(OMEGA * t))


def stamp(message, nanoseconds: int) -> None:
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(nanoseconds, 1_000_000_000)


def test_model_effort_and_feedforward(launch_node, ros_client):
    robot = load_robot("dualv")
    dynamics = InverseDynamics(robot)
    node = launch_node("dynamics", params_file=CONFIG, params={"acceleration_cutoff": 500.0})
    model = ros_client.collect(JointState, f"{node.namespace}/dynamics/model_effort", depth=500)
    feedforward = ros_client.collect(Float64MultiArray, f"{node.namespace}/dynamics/feedforward", depth=500)
    states = ros_client.publisher(JointState, f"{node.namespace}/closed_loop/joint_states", 100)
    reference = ros_client.node.create_publisher(JointTrajectory, f"{node.namespace}/reference/trajectory", LATCHED_QOS)
    start_ns = 5_000_000_000  # the trajectory's t = 0 on the states' clock

    # the reference of the actuated joints, 100 points per second over 0.5 s
    message = JointTrajectory()
    stamp(message, start_ns)
    message.joint_names = list(robot.actuated_names)
    q = robot.home
    for k in range(51):
        t = 0.01 * k
        pose, rate, acceleration = task(robot, t)
        q = robot.solve_inverse(pose, start=q).q
        _, qdot, qddot = robot.differential.task_states(q, rate, acceleration)
        point = JointTrajectoryPoint()
        point.positions = q[robot.actuated_indices].tolist()
        point.velocities = qdot[robot.actuated_indices].tolist()
        point.accelerations = qddot[robot.actuated_indices].tolist()
        point.time_from_start = Duration(sec=0, nanosec=int(round(t * 1e9)))
        message.points.append(point)

    def state(k: int) -> JointState:
        t = 0.001 * k
        pose, rate, _ = task(robot, t)
        q_k = robot.solve_inverse(pose).q
        out = JointState()
        stamp(out, start_ns + k * 1_000_000)
        out.name = list(robot.joint_names)
        out.position = q_k.tolist()
        out.velocity = robot.differential.velocities_from_task(q_k, rate).tolist()
        return out

    try:
        reference.publish(message)  # transient local: the node gets it whenever it discovers us
        # feedforward is published on a state once the latched reference has arrived, which may be
        # after the first states: keep sending state(0) until both answers are in
        assert ros_client.publish_until(states, state(0), lambda: model and feedforward, timeout_s=20.0), node.output()
        for k in range(1, 301):
            states.publish(state(k))
            ros_client.spin_until(lambda: False, 0.002)
        last_k = 300
        tag = (start_ns // 1_000_000 + last_k) % 2**32
        # both answers to the last state: the feedforward is published after the model effort and comes through its
        # own reader, whose backlog (a loaded test process takes one message per spin) may still hold it when the
        # model's has come (before: only the model's was awaited, and the feedforward of step 5300 was missing once
        # in a two-worker suite run)
        assert ros_client.spin_until(lambda: any(m.header.stamp.nanosec == (start_ns + last_k * 1_000_000) % 1_000_000_000
                                                 for m in model[-5:])
                                     and any(m.layout.data_offset == tag for m in feedforward[-5:]), 10.0), node.output()
        bad = state(301)
        bad.position[0] = math.nan
        states.publish(bad)
        ros_client.spin_until(lambda: "dropped closed_loop/joint_states" in node.output(), 5.0)
        assert node.alive()
    finally:
        node.stop()

    pose, rate, acceleration = task(robot, 0.001 * last_k)
    q_last = robot.solve_inverse(pose).q
    expected = dynamics.torques_from_task(q_last, rate, acceleration)  # (4,) N m
    last = next(m for m in model if m.header.stamp.nanosec == (start_ns + last_k * 1_000_000) % 1_000_000_000)
    assert list(last.name) == list(robot.actuated_names)
    # backward difference of the task velocity at 1 kHz: half a period of lag (~1 % of the acceleration)
    np.testing.assert_allclose(last.effort, expected, rtol=0, atol=0.03 * np.abs(expected).max())
    tags = {m.layout.data_offset: m for m in feedforward}
    assert tag in tags
    # the reference is the same trajectory: its feedforward is the model torque, up to interpolation
    np.testing.assert_allclose(tags[tag].data, expected, rtol=0, atol=1e-4 * np.abs(expected).max())
    assert "Traceback" not in node.output()
