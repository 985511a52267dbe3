"""Delta kinematics against its geometry written here, the generic Newton solver and finite differences.

Independent references:
* Williams (2015)'s dimensions of the ABB IRB 360-1/1600, written here: every forearm bar of a
  Newton solution has length l and the platform does not rotate;
* the generic solver (Newton on the pinocchio closures) for the closed-form inverse problem
  (eqs. 1-2 of :mod:`pardyn.kinematics.analytic.delta`) and the three-sphere forward problem;
* central finite differences of the closed-form inverse problem for the velocity and
  acceleration maps of :class:`pardyn.kinematics.differential.DifferentialKinematics`.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from pardyn.errors import SingularityError

W_B, W_P = 0.567 / (2 * math.sqrt(3)), 0.076 / (2 * math.sqrt(3))
ARM, FOREARM, WIDTH = 0.524, 1.244, 0.131
TOL = 1e-10


@pytest.fixture(scope="module")
def delta(load):
    return load("delta")


def poses(robot, rng, count=6):
    """Platform positions around home (z = -1.2 m): +-0.25 m across, +-0.1 m in height."""
    return robot.home[robot.task_indices] + rng.uniform([-0.25, -0.25, -0.1], [0.25, 0.25, 0.1], size=(count, 3))


def test_newton_solutions_have_williams_geometry(delta):
    model, data = delta.model, delta.model.createData()
    for task in poses(delta, np.random.default_rng(1), 3):
        q = delta.solve_inverse(task).q
        pin.framesForwardKinematics(model, data, q)
        for i in range(3):
            alpha = 2 * math.pi * i / 3
            e_r, u = np.array([math.cos(alpha), math.sin(alpha), 0.0]), np.array([-math.sin(alpha), math.cos(alpha), 0.0])
            angle = q[delta.actuated_indices[i]]
            elbow = W_B * e_r + ARM * (math.cos(angle) * e_r - math.sin(angle) * np.array([0, 0, 1.0]))
            for k, side in enumerate((1.0, -1.0), start=1):
                top = data.oMf[model.getFrameId(f"leg{i + 1}_bar{k}_end")].translation
                bottom = task + W_P * e_r + side * WIDTH / 2 * u
                assert np.allclose(top, bottom, atol=1e-11)
                joint_top = data.oMi[model.getJointId(f"leg{i + 1}_bar{k}_y")].translation
                assert np.allclose(joint_top, elbow + side * WIDTH / 2 * u, atol=1e-11)
                assert abs(np.linalg.norm(bottom - joint_top) - FOREARM) < 1e-11
        rotations = q[delta.indices(["platform_yaw", "platform_pitch", "platform_roll"])]
        assert np.max(np.abs(rotations)) < 1e-11  # the parallelograms keep the platform level


def test_closed_forms_match_newton(delta):
    worst = 0.0
    for task in poses(delta, np.random.default_rng(2)):
        newton = delta.solve_inverse(task).q
        worst = max(worst, np.max(np.abs(delta.solve_inverse(task, method="analytic").q - newton)))
        motors = newton[delta.actuated_indices]
        worst = max(worst, np.max(np.abs(delta.solve_forward(motors, method="analytic").q - newton)))
        worst = max(worst, np.max(np.abs(delta.solve_forward(motors).q - newton)))
    assert worst < TOL


def test_velocity_and_acceleration_maps_against_finite_differences(delta):
    closed = delta.analytic
    rng = np.random.default_rng(3)
    h = 1e-4
    for task in poses(delta, rng, 3):
        velocity, acceleration = rng.normal(size=3), rng.normal(size=3)

        def q_of(t):
            return closed.inverse(task + velocity * t + 0.5 * acceleration * t * t)

        q = q_of(0.0)
        qdot_fd = (q_of(h) - q_of(-h)) / (2 * h)
        qddot_fd = (q_of(h) - 2 * q + q_of(-h)) / h**2
        _, qdot, qddot = delta.differential.task_states(q, velocity, acceleration)
        assert np.allclose(qdot, qdot_fd, atol=1e-7)
        assert np.allclose(qddot, qddot_fd, atol=1e-5)
        jacobian = closed.jacobian(task, q[delta.actuated_indices])  # pdot = J qdot
        assert np.allclose(jacobian @ qdot_fd[delta.actuated_indices], velocity, atol=1e-7)


def test_stretched_legs_are_a_serial_singularity(delta):
    """Arm and forearm aligned (|C_i - P_i| = L + l): the workspace boundary, a serial singularity.

    At x = y = 0 the three legs stretch together at q_i = 94.6 deg, beyond the YAML working mode
    (elbows outwards, |q_i| < 90 deg), where the two inverse branches meet.
    """
    depth = -math.sqrt((ARM + FOREARM) ** 2 - (W_B - W_P) ** 2)
    task = np.array([0.0, 0.0, depth])
    motors = delta.analytic.motor_angles(task)
    assert np.allclose(motors, math.pi / 2 + math.atan2(W_B - W_P, -depth), atol=1e-5)
    with pytest.raises(SingularityError) as caught:
        delta.analytic.jacobian(task, motors)
    assert caught.value.kind == "serial"
    with pytest.raises(SingularityError) as caught:  # the generic solver's condition numbers agree
        delta.solve_forward(motors, start=delta.analytic.configuration(task, motors))
    assert caught.value.kind == "serial"
