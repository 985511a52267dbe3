"""H4 dynamics: the generic closed-loop engine against the paper's eq. (13) with eq. (16).

Independent reference, written here from Vivas & Poignet 2003, section 2.2 and Table 1::

    Gamma = I_mot qddot + J^T M (xddot - G)                                    eq. (13)
    I_mot = diag(0.0167, 0.0164, 0.0176, 0.0234), M = diag(0.984, 0.984, 0.984, 0.0029)
    xddot = J qddot + Jdot qdot                                                eq. (16)

with ``J`` the Jacobian of eqs. (10)-(12) (checked against finite differences in
test/kinematics/test_h4.py) and ``Jdot qdot`` by a central difference in time along
the motion, as the paper computes it. The generic engine (pinocchio tree + closure
constraints, :class:`pardyn.dynamics.inverse.InverseDynamics`) knows none of this.
"""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.dynamics.forward import ForwardDynamics
from pardyn.dynamics.inverse import InverseDynamics

I_MOT = np.diag([0.0167, 0.0164, 0.0176, 0.0234])  # Table 1, kg m^2
M_NAC, I_BC = 0.984, 0.0029
M = np.diag([M_NAC, M_NAC, M_NAC, I_BC])  # eq. (15)
G = np.array([0.0, 0.0, -9.81, 0.0])  # gravity along -z (no gravity torque on theta)


def paper_torques(closed, task, task_velocity, task_acceleration, step=1e-5):
    """Eq. (13) from a task state: q, qdot, qddot of the motors by eqs. (10), (16), Jdot qdot centrally."""
    motors = closed.motor_angles(task)
    jacobian = closed.jacobian(task, motors)
    qdot = np.linalg.solve(jacobian, task_velocity)

    def along(sign):  # state at t +- step on the motion x(t) = x + t xdot + t^2/2 xddot
        x = task + sign * step * task_velocity + 0.5 * step**2 * task_acceleration
        return closed.jacobian(x, closed.motor_angles(x))

    jdot = (along(1.0) - along(-1.0)) / (2 * step)
    qddot = np.linalg.solve(jacobian, task_acceleration - jdot @ qdot)  # eq. (16)
    return I_MOT @ qddot + jacobian.T @ M @ (task_acceleration - G), motors, qdot, qddot


@pytest.fixture(scope="module")
def h4():
    import pardyn

    robot = pardyn.load_robot("h4")
    return robot


def random_states(robot, rng, count):
    home = robot.home[robot.task_indices]
    for _ in range(count):
        task = home + rng.uniform([-0.05, -0.05, -0.1, -0.3], [0.05, 0.05, 0.02, 0.3])
        yield task, rng.uniform(-0.5, 0.5, 4), rng.uniform(-5.0, 5.0, 4)


def test_generic_inverse_dynamics_is_eq13(h4):
    inverse = InverseDynamics(h4)
    rng = np.random.default_rng(7)
    worst = 0.0
    for task, velocity, acceleration in random_states(h4, rng, 10):
        expected, motors, qdot_a, qddot_a = paper_torques(h4.analytic, task, velocity, acceleration)
        q = h4.solve_inverse(task).q
        _, qdot, qddot = h4.differential.task_states(q, velocity, acceleration)
        assert np.allclose(qdot[h4.actuated_indices], qdot_a, atol=1e-9)
        assert np.allclose(qddot[h4.actuated_indices], qddot_a, atol=1e-5)  # central difference of Jdot
        torques = inverse.torques(q, qdot, qddot)
        worst = max(worst, float(np.max(np.abs(torques - expected)) / np.max(np.abs(expected))))
    assert worst < 1e-7


def test_static_gravity_load(h4):
    """At rest eq. (13) is J^T M (-G): the weight of the nacelle carried by the four motors."""
    inverse = InverseDynamics(h4)
    q = h4.home
    zero = np.zeros(h4.nv)
    jacobian = h4.analytic.jacobian(q[h4.task_indices], q[h4.actuated_indices])
    assert np.allclose(inverse.torques(q, zero, zero), jacobian.T @ M @ -G, atol=1e-12)


def test_forward_dynamics_inverts_eq13(h4):
    """x_ddot of the generic forward dynamics under eq. (13)'s torques is the x_ddot it was built from."""
    forward = ForwardDynamics(h4)
    rng = np.random.default_rng(8)
    for task, velocity, acceleration in random_states(h4, rng, 3):
        torques, *_ = paper_torques(h4.analytic, task, velocity, acceleration)
        q = h4.solve_inverse(task).q
        qdot = h4.differential.velocities_from_task(q, velocity)
        qddot = forward.solve(q, qdot, torques).qddot
        assert np.allclose(qddot[h4.task_indices], acceleration, atol=1e-5 * np.abs(acceleration).max())
