"""H4 kinematics (Vivas & Poignet 2003, section 2.1) against the paper's equations, the
generic Newton solver and finite differences.

Independent references:
* eqs. (3)-(7) written here with the paper's alpha_i, u_i and our lengths
  (config/robots/h4.yaml): the URDF frames of the pinocchio model must sit there;
* the generic solver (Newton on the pinocchio closure equations) for the
  closed-form inverse problem and the paper's forward iteration (eq. 9), to 1e-10;
* central finite differences of the inverse problem for ``J = J_x^-1 J_q`` (eqs. 10-12).
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from pardyn.errors import ConvergenceError

H, D, R, L, FOREARM = 0.1, 0.1, 0.25, 0.25, 0.6
ALPHA = np.array([0.0, math.pi, 1.5 * math.pi, 1.5 * math.pi])
SAMPLES = 20
TOL = 1e-10


def paper_points(task: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``A_i`` (eqs. 2-4) and ``B_i`` (eqs. 5-7), (4, 3) each, from the paper's formulas."""
    x, y, z, theta = task
    c, s = math.cos(theta), math.sin(theta)
    da = np.array([(H * c, H * s + D, 0.0), (-H * c, -H * s + D, 0.0),
                   (-H * c, -H * s - D, 0.0), (H * c, H * s - D, 0.0)])  # eqs. (3)-(4)
    corners = np.array([(H, D), (-H, D), (-H, -D), (H, -D)])
    op = np.column_stack([corners[:, 0] + R * np.cos(ALPHA), corners[:, 1] + R * np.sin(ALPHA), np.zeros(4)])  # (7)
    pb = L * np.column_stack([np.cos(q) * np.cos(ALPHA), np.cos(q) * np.sin(ALPHA), -np.sin(q)])  # eq. (6)
    return np.array([x, y, z]) + da, op + pb


def random_poses(robot, rng, count=SAMPLES):
    """Poses around home (z = -0.32 m): +-5 cm in x, y, 10 cm down to 2 cm up, +-0.3 rad."""
    home = robot.home[robot.task_indices]
    low, high = np.array([-0.05, -0.05, -0.10, -0.3]), np.array([0.05, 0.05, 0.02, 0.3])
    return home + rng.uniform(low, high, size=(count, 4))


@pytest.fixture(scope="module")
def h4(load):
    return load("h4")


def test_frames_follow_the_paper_equations(h4):
    rng = np.random.default_rng(3)
    model, data = h4.model, h4.model.createData()
    for task in random_poses(h4, rng, 5):
        q = h4.solve_inverse(task).q
        pin.framesForwardKinematics(model, data, q)
        a, b = paper_points(task, q[h4.actuated_indices])
        for i in range(4):
            assert np.allclose(data.oMf[model.getFrameId(f"nacelle_A{i + 1}")].translation, a[i], atol=1e-12)
            assert np.allclose(data.oMf[model.getFrameId(f"arm{i + 1}_B")].translation, b[i], atol=1e-12)
        assert np.allclose(np.linalg.norm(b - a, axis=1), FOREARM, atol=1e-12)  # eq. (8): |A_iB_i| = l
        assert task[2] < 0.0  # nacelle below the motor plane


def test_inverse_closed_form_matches_newton(h4):
    rng = np.random.default_rng(1)
    worst = 0.0
    for task in random_poses(h4, rng):
        newton = h4.solve_inverse(task).q
        closed = h4.solve_inverse(task, method="analytic")
        worst = max(worst, float(np.max(np.abs(closed.q - newton))))
        assert closed.residual < 1e-12
    assert worst < TOL


def test_forward_iteration_eq9_matches_newton(h4):
    rng = np.random.default_rng(2)
    worst = 0.0
    for task in random_poses(h4, rng):
        motors = h4.solve_inverse(task).q[h4.actuated_indices]
        newton = h4.solve_forward(motors).q
        iterative = h4.solve_forward(motors, method="analytic").q
        worst = max(worst, float(np.max(np.abs(iterative - newton))))
        assert np.allclose(iterative[h4.task_indices], task, atol=TOL)
    assert worst < TOL


def test_eq9_converges_like_newton_near_the_answer(h4):
    task = np.array([0.03, -0.02, -0.38, 0.2])
    motors = h4.solve_inverse(task).q[h4.actuated_indices]
    _, iterations = h4.analytic.forward_iterations(motors)
    assert iterations <= 8  # quadratic convergence from home (0.07 m, 0.2 rad away)


def test_eq9_step_leaving_the_workspace_is_halved(h4):
    """From home, the first full step of eq. (9) towards this pose puts leg 2 out of reach."""
    task = np.array([-0.048317271531978706, -0.019649107340048932, -0.3001168941211275, -0.1427119222860063])
    motors = h4.solve_inverse(task).q[h4.actuated_indices]
    closed = h4.analytic
    first = closed.robot.home[h4.task_indices] + closed.jacobian(
        closed.robot.home[h4.task_indices], closed.robot.home[h4.actuated_indices]) @ (
        motors - closed.robot.home[h4.actuated_indices])
    with pytest.raises(ConvergenceError, match="out of reach"):
        closed.motor_angles(first)
    np.testing.assert_allclose(h4.solve_forward(motors, method="analytic").q[h4.task_indices], task, atol=TOL)


def test_jacobian_eqs_10_12_against_finite_differences(h4):
    rng = np.random.default_rng(4)
    closed = h4.analytic
    step = 1e-6
    for task in random_poses(h4, rng, 5):
        motors = closed.motor_angles(task)
        jacobian = closed.jacobian(task, motors)  # xdot = J qdot
        inverse_fd = np.column_stack([
            (closed.motor_angles(task + step * e) - closed.motor_angles(task - step * e)) / (2 * step)
            for e in np.eye(4)])  # dq/dx
        assert np.allclose(jacobian @ inverse_fd, np.eye(4), atol=1e-7)
        # and the generic engine's velocity map, task rates from the motor rates
        q = closed.configuration(task, motors)
        qdot_a = rng.normal(size=4)
        qdot = h4.differential.velocities_from(q, h4.actuated_indices, qdot_a)
        assert np.allclose(qdot[h4.task_indices], jacobian @ qdot_a, atol=1e-10)


def test_out_of_reach_pose_is_refused(h4):
    with pytest.raises(ConvergenceError, match="out of reach"):
        h4.solve_inverse([0.0, 0.0, -1.5, 0.0], method="analytic")
