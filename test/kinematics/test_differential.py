"""Velocities and accelerations against finite differences and the DualV paper's closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pardyn.kinematics.solver import revolute_mask

ROBOTS = ("five_bar", "dualv", "rrr3")
PATHS = ("python", "compiled")  # pardyn.kernels: the Python reference and the generated C


def _task_trajectory(robot, t):
    """A smooth task trajectory around home: position, velocity, acceleration at time t (s)."""
    n = len(robot.task_indices)
    amplitude = np.array([0.03, 0.02, 0.1][:n])
    omega = np.array([2.0, 3.0, 1.5][:n])
    home = robot.home[robot.task_indices]
    return (
        home + amplitude * np.sin(omega * t),
        amplitude * omega * np.cos(omega * t),
        -amplitude * omega**2 * np.sin(omega * t),
    )


def _joint_positions(robot, t, start):
    return robot.solve_inverse(_task_trajectory(robot, t)[0], start=start).q


@pytest.mark.parametrize("kernels", PATHS)
@pytest.mark.parametrize("name", ROBOTS)
def test_joint_velocities_match_finite_differences(load, name, kernels):
    robot = load(name, kernels)
    angles = revolute_mask(robot.model)
    t, h = 0.3, 1e-6
    q = _joint_positions(robot, t, robot.home)
    _, task_velocity, _ = _task_trajectory(robot, t)
    difference = _joint_positions(robot, t + h, q) - _joint_positions(robot, t - h, q)
    difference[angles] = (difference[angles] + math.pi) % (2 * math.pi) - math.pi
    numeric = difference / (2 * h)
    np.testing.assert_allclose(robot.differential.velocities_from_task(q, task_velocity), numeric, atol=1e-7)


@pytest.mark.parametrize("name", ROBOTS)
def test_joint_accelerations_match_finite_differences(load, name):
    robot = load(name)
    t, h = 0.7, 1e-5

    def velocities(time, start):
        pose, rate, _ = _task_trajectory(robot, time)
        q = robot.solve_inverse(pose, start=start).q
        return q, robot.differential.velocities_from_task(q, rate)

    q, qdot = velocities(t, robot.home)
    numeric = (velocities(t + h, q)[1] - velocities(t - h, q)[1]) / (2 * h)
    _, _, task_acceleration = _task_trajectory(robot, t)
    np.testing.assert_allclose(
        robot.differential.accelerations_from_task(q, qdot, task_acceleration), numeric, atol=1e-6
    )


@pytest.mark.parametrize("kernels", PATHS)
@pytest.mark.parametrize("name", ROBOTS)
def test_measured_joints_give_back_every_velocity_and_acceleration(load, name, kernels):
    """From actuated (+ sensed) rates alone, eqs. (21) and (24), the task-driven rates come back
    (compiled: C maps against the Python task maps of ``accelerations_from_task``)."""
    robot = load(name, kernels)
    t = 0.4
    pose, rate, acceleration = _task_trajectory(robot, t)
    q = robot.solve_inverse(pose).q
    qdot = robot.differential.velocities_from_task(q, rate)
    qddot = robot.differential.accelerations_from_task(q, qdot, acceleration)
    for indices in (robot.actuated_indices, robot.measured_indices):
        np.testing.assert_allclose(robot.differential.velocities_from(q, indices, qdot[indices]), qdot, atol=1e-12)
        np.testing.assert_allclose(
            robot.differential.accelerations_from(q, qdot, indices, qddot[indices]), qddot, atol=1e-10
        )
        both = robot.differential.states_from(q, indices, qdot[indices], qddot[indices])
        np.testing.assert_allclose(both[0], qdot, atol=1e-12)
        np.testing.assert_allclose(both[1], qddot, atol=1e-10)


def test_dualv_velocity_matrices_of_eqs_59_63(load):
    """Eq. (11) with A_p, B_p of eqs. (59)-(60), and eq. (64) with J_tk, J_k of eqs. (62)-(63).

    Differentiating eq. (54) gives the third entry of a_p^i as
    -r_p (sin(phi + k pi) s12 + cos(phi + k pi) c12): the printed eq. (59) drops
    the factor r_p and a sign; B_p's sign depends on which side of eq. (11) it stands.
    """
    robot = load("dualv")
    d2 = d3 = 0.28
    r_p = 0.1
    pose, rate, _ = _task_trajectory(robot, 0.9)
    q = robot.solve_inverse(pose).q
    qdot = robot.differential.velocities_from_task(q, rate)
    joints, rates = robot.joint_dict(q), robot.joint_dict(qdot)
    phi = pose[2]
    a_p = np.empty((4, 3))
    b_p = np.zeros((4, 4))
    for i in range(1, 5):
        k = 0 if i <= 2 else 1
        q1, q2 = joints[f"leg{i}_joint1"], joints[f"leg{i}_joint2"]
        c12, s12 = math.cos(q1 + q2), math.sin(q1 + q2)
        a_p[i - 1] = d3 * np.array([c12, s12, -r_p * (math.sin(phi + k * math.pi) * s12 + math.cos(phi + k * math.pi) * c12)])
        b_p[i - 1, i - 1] = d2 * d3 * math.sin(q2)  # eq. (60)
        j_tk = np.array([[1, 0, -r_p * math.cos(phi + k * math.pi)], [0, 1, -r_p * math.sin(phi + k * math.pi)], [0, 0, 1]])
        j_k = np.array([
            [-d2 * math.sin(q1) - d3 * s12, -d3 * s12, 0],
            [d2 * math.cos(q1) + d3 * c12, d3 * c12, 0],
            [1, 1, 1],
        ])  # eq. (63)
        leg = [rates[f"leg{i}_joint{j}"] for j in (1, 2, 3)]
        np.testing.assert_allclose(leg, np.linalg.solve(j_k, j_tk @ rate), atol=1e-12)  # eq. (64)
    actuated = np.array([rates[f"leg{i}_joint1"] for i in range(1, 5)])
    # Sign convention of the paper's A_p, B_p: their product relation is A_p t = B_p qdot here.
    np.testing.assert_allclose(a_p @ rate, b_p @ actuated, atol=1e-12)
