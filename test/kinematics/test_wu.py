"""Kinematics of the Wu et al. 2009 machine (wu3r, wu3n) against independent references.

* the paper's eq. (20) written here with Table 1 (d = l = 1.2 m, l5 = l6 = 0.25 m,
  column 2 at +d/2) for the closed-form inverse problem;
* the generic Newton solver on the pinocchio closures (prismatic struts and sliders)
  for the inverse and forward problems;
* central finite differences of positions along a smooth task motion for every
  velocity and acceleration (actuated joints, pivotal points, body angles), and
  for the generic differential kinematics of the tree (``robot.differential``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pardyn.kinematics.analytic.wu import WuGeometry, pivotal_motion

D, L, L5, L6 = 1.2, 1.2, 0.25, 0.25  # Table 1, m
ROBOTS = ("wu3r", "wu3n")


def _poses(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.uniform(-0.45, 0.45, count), rng.uniform(2.2, 3.3, count), rng.uniform(-0.4, 1.2, count)])


def _paper_inverse(pose: np.ndarray) -> np.ndarray:
    """Eq. (20) with '-', column 2 at x = +d/2: [q_1, q_2, l_1, l_2] (m)."""
    x, y, alpha = pose
    q = [y - L5 - math.sqrt(L**2 - (x + s * D / 2) ** 2) for s in (1, -1)]
    lengths = [math.hypot(x - L6 * math.sin(alpha) + s * D / 2, y - L6 * math.cos(alpha) - q[k])
               for k, s in enumerate((1, -1))]
    return np.array(q + lengths)


@pytest.mark.parametrize("name", ROBOTS)
def test_geometry_and_closed_form_match_the_paper_and_the_generic_solver(load, name):
    robot = load(name)
    geometry = WuGeometry.from_robot(robot)
    np.testing.assert_allclose(geometry.columns, [-D / 2, D / 2], atol=1e-15)
    assert (geometry.l, geometry.l5, geometry.l6) == (L, L5, L6)
    assert geometry.struts == ((1, 2) if name == "wu3r" else (2,))
    kept = [0, 1, 2, 3] if name == "wu3r" else [0, 1, 3]  # eq. (20); wu3n: 20a, 20b, 20d
    checked = 0
    for pose in _poses(12, 7):
        generic = robot.solve_inverse(pose).q
        if robot.assembly_mode_violations(generic):
            continue  # the forward problem returns the YAML assembly mode (B left of E_2 -> A_1)
        checked += 1
        closed = robot.solve_inverse(pose, method="analytic")
        assert closed.residual < 1e-12
        np.testing.assert_allclose(closed.q, generic, atol=1e-10)
        np.testing.assert_allclose(closed.q[robot.actuated_indices], _paper_inverse(pose)[kept], atol=1e-12)
        forward = robot.solve_forward(generic[robot.actuated_indices], method="analytic").q
        np.testing.assert_allclose(forward, generic, atol=1e-10)
        newton = robot.solve_forward(generic[robot.actuated_indices]).q  # from home
        np.testing.assert_allclose(newton, generic, atol=1e-9)
    assert checked >= 8


@pytest.mark.parametrize("name", ROBOTS)
def test_velocities_and_accelerations_are_finite_differences_of_positions(load, name):
    robot = load(name)
    geometry = WuGeometry.from_robot(robot)
    rng = np.random.default_rng(11)
    step = 1e-4  # s
    for pose in _poses(4, 3):
        velocity, acceleration, jerk = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
        times = np.array([-step, 0.0, step])
        poses = pose + np.outer(times, velocity) + 0.5 * np.outer(times**2, acceleration) + np.outer(times**3, jerk) / 6
        motion = pivotal_motion(geometry, pose, velocity, acceleration)
        samples = pivotal_motion(geometry, poses)  # positions only

        def check(values: np.ndarray, rate: np.ndarray, rate2: np.ndarray, what: str) -> None:
            first = (values[2] - values[0]) / (2 * step)
            second = (values[2] - 2 * values[1] + values[0]) / step**2
            np.testing.assert_allclose(rate, first, atol=1e-6, err_msg=f"{what}: velocity")
            np.testing.assert_allclose(rate2, second, atol=2e-5, err_msg=f"{what}: acceleration")

        check(samples.actuated, motion.actuated_velocity, motion.actuated_acceleration, "actuated")
        np.testing.assert_allclose(motion.jacobian @ velocity, motion.actuated_velocity, atol=1e-14)
        for body, track in zip(motion.bodies, samples.bodies):
            check(track.position, body.velocity, body.acceleration, f"{body.name} pivot")
            np.testing.assert_allclose(body.velocity_map @ velocity, body.velocity, atol=1e-14)
            if body.rotates:
                angles = np.unwrap(track.angle)
                check(angles, body.angular_velocity, body.angular_acceleration, f"{body.name} angle")
                assert body.angular_velocity_map @ velocity == pytest.approx(float(body.angular_velocity), abs=1e-14)

        # The generic tree differential kinematics (pinocchio, prismatic joints included) agrees.
        q = robot.solve_inverse(pose, method="analytic").q
        _, qdot, qddot = robot.differential.task_states(q, velocity, acceleration)
        np.testing.assert_allclose(qdot[robot.actuated_indices], motion.actuated_velocity, atol=1e-10)
        np.testing.assert_allclose(qddot[robot.actuated_indices], motion.actuated_acceleration, atol=1e-9)
