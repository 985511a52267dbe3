"""Batched closure kinematics: against pinocchio's frame Jacobians and accelerations, finite differences,
and the per-sample solver on the same samples."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import pardyn
from pardyn.errors import SampleError
from pardyn.kinematics import batch

ROBOTS = ("five_bar", "dualv", "rrr3", "delta", "hexapod")
LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


@pytest.fixture(scope="module", params=ROBOTS)
def robot(request) -> pardyn.Robot:
    return pardyn.load_robot(request.param)


def _closed_samples(robot: pardyn.Robot, count: int, seed: int = 3) -> np.ndarray:
    """Closed configurations (count, nv) along a smooth path around home."""
    rng = np.random.default_rng(seed)
    frequencies = rng.uniform(0.5, 1.5, len(robot.task_names))
    t = np.linspace(0.0, 2.0, count)
    if robot.frame_task is None:
        home = robot.home[robot.task_indices]
    else:
        home = robot.task_values(robot.home)
    poses = home + 0.02 * np.sin(np.outer(t, frequencies))
    q = [robot.solve_inverse(poses[0]).q]
    for pose in poses[1:]:
        q.append(robot.solve_inverse(pose, start=q[-1]).q)
    return np.array(q)


def test_supports_the_shipped_parallel_robots(robot):
    assert batch.supports(robot)


def test_frame_jacobians_and_accelerations_match_pinocchio(robot):
    """World-aligned frame Jacobians (the batch's [J_v - [p]x J_w; J_w] M_f) and Jdot_f qdot against
    pinocchio's getFrameJacobian and getFrameClassicalAcceleration at random (open) configurations."""
    rng = np.random.default_rng(0)
    closures = batch.BatchClosures(robot.closures)
    q = robot.home + rng.normal(0.0, 0.1, (4, robot.nv))
    qdot = rng.normal(0.0, 1.0, (4, robot.nv))
    positions, _, jacobians, rates = closures._gather(q, qdot)
    frame_jacobians = closures._frame_jacobians(positions, jacobians)
    model, data = robot.model, robot.model.createData()
    for i in range(len(q)):
        pin.forwardKinematics(model, data, q[i], qdot[i], np.zeros(robot.nv))
        pin.computeJointJacobians(model, data, q[i])
        pin.updateFramePlacements(model, data)
        for k, frame in enumerate(closures._frames):
            np.testing.assert_allclose(frame_jacobians[i, k], pin.getFrameJacobian(model, data, frame, LWA),
                                       atol=1e-12)
    _, drift = closures.jacobian_and_drift(q, qdot)
    for i in range(len(q)):
        np.testing.assert_allclose(drift[i], robot.closures.drift(q[i], qdot[i]), atol=1e-11)


def test_residual_and_jacobian_against_finite_differences(robot):
    rng = np.random.default_rng(1)
    closures = batch.BatchClosures(robot.closures)
    q = _closed_samples(robot, 3) + rng.normal(0.0, 1e-3, (3, robot.nv))
    residual, jacobian = closures.residual_and_jacobian(q)
    for i in range(len(q)):
        np.testing.assert_allclose(residual[i], robot.closures.residual(q[i]), atol=1e-14)
    closed = _closed_samples(robot, 2)
    _, jacobian = closures.residual_and_jacobian(closed)
    step = 1e-7
    for i in range(len(closed)):
        shifted = closed[i] + step * np.eye(robot.nv)
        back = closed[i] - step * np.eye(robot.nv)
        numeric = (closures.residual_and_jacobian(shifted)[0] - closures.residual_and_jacobian(back)[0]).T / (2 * step)
        np.testing.assert_allclose(jacobian[i], numeric, atol=1e-7)


def test_log3_matches_pinocchio_up_to_a_half_turn():
    rng = np.random.default_rng(2)
    axes = rng.normal(size=(200, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    angles = np.concatenate([np.geomspace(1e-12, 1.0, 100), np.linspace(1.0, np.pi - 1e-9, 100)])
    rotations = np.array([pin.exp3(a * u) for a, u in zip(angles, axes)])
    expected = np.array([pin.log3(r) for r in rotations])
    np.testing.assert_allclose(batch._log3(rotations), expected, atol=1e-12)


def test_forward_and_states_match_the_per_sample_solver(robot):
    """Noisy (inconsistent when redundant) readings: the batch Newton stops where the per-sample one does."""
    rng = np.random.default_rng(4)
    q_true = _closed_samples(robot, 30)
    measured = robot.measured_indices
    readings = q_true[:, measured] + rng.normal(0.0, 1e-5, (len(q_true), len(measured)))
    starts = q_true + rng.normal(0.0, 1e-3, q_true.shape)
    q, jacobians, converged = batch.forward_batch(robot, readings, starts)
    assert converged.all()
    n_a = len(robot.actuated_names)
    for i in range(len(q)):
        reference = robot.solve_forward(readings[i, :n_a], sensed=readings[i, n_a:] if len(measured) > n_a else None,
                                        start=starts[i], checks=False).q
        np.testing.assert_allclose(q[i], reference, atol=1e-10)
        np.testing.assert_allclose(jacobians[i], robot.closures.jacobian(q[i]), atol=1e-12)
    velocity = rng.normal(0.0, 0.3, readings.shape)
    acceleration = rng.normal(0.0, 1.0, readings.shape)
    qdot, qddot = batch.states_batch(robot, q, jacobians, velocity, acceleration)
    for i in range(len(q)):
        expected = robot.differential.states_from(q[i], measured, velocity[i], acceleration[i])
        np.testing.assert_allclose(qdot[i], expected[0], atol=1e-11)
        np.testing.assert_allclose(qddot[i], expected[1], atol=1e-10)


def test_series_follows_a_trajectory_and_names_the_sample_it_cannot_solve():
    robot = pardyn.load_robot("dualv")
    q_true = _closed_samples(robot, 45)
    readings = q_true[:, robot.measured_indices]
    q, jacobians = batch.solve_series(robot, readings, robot.home, check_every=10)
    np.testing.assert_allclose(q, q_true, atol=1e-9)
    assert np.abs(np.array([robot.closures.residual(x) for x in q])).max() <= robot.solver.tolerance
    broken = readings.copy()
    broken[27] += 1.5  # no five-bar loop closes with these proximal angles
    with pytest.raises(SampleError) as caught:
        batch.solve_series(robot, broken, robot.home, check_every=10)
    assert caught.value.index == 27
