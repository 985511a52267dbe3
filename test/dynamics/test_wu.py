"""The two dynamic formulations of the Wu et al. 2009 machine agree, and both conserve power.

* generic engine: pinocchio RNEA on the tree + loop closure (``InverseDynamics``,
  ``Regressor``), counterweights as slider drives (``ia = m_c``, ``offset = -m_c g``);
* virtual-work model (``WuVirtualWork``): the paper's pivotal points, ``H_i``, ``G_i``,
  eqs. (15), (36), (38), (39), counterweights as bodies moving as ``-q_i``, no pinocchio.

References: each other (random states, 1e-9 N), the energy balance
``tau . qdot_a = dE/dt`` by finite differences of the energy along a motion, and
the column spaces of the stacked observation matrices (principal angles).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import subspace_angles

from pardyn.dynamics import InverseDynamics, Regressor
from pardyn.dynamics.wu import WuVirtualWork

ROBOTS = ("wu3r", "wu3n")


def _states(robot, count: int, seed: int):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        pose = np.array([rng.uniform(-0.45, 0.45), rng.uniform(2.2, 3.3), rng.uniform(-0.2, 1.2)])
        velocity, acceleration = rng.normal(size=3), 3.0 * rng.normal(size=3)
        q = robot.solve_inverse(pose, method="analytic").q
        _, qdot, qddot = robot.differential.task_states(q, velocity, acceleration)
        yield pose, velocity, acceleration, q, qdot, qddot


@pytest.mark.parametrize("name", ROBOTS)
def test_virtual_work_and_generic_engine_agree(load, name):
    robot = load(name)
    generic = InverseDynamics(robot)
    regressor = Regressor(robot, projection="platform")
    chi = robot.nominal_parameters.vector()
    model = WuVirtualWork(robot)
    observations, virtual = [], []
    for pose, velocity, acceleration, q, qdot, qddot in _states(robot, 12, 5):
        motion = model.motion(pose, velocity, acceleration)
        assert motion.jacobian.shape == (len(robot.actuated_names), 3)  # eqs. (24), (25)
        forces = model.forces(motion)  # eq. (39) / (38)
        np.testing.assert_allclose(forces, generic.torques(q, qdot, qddot), rtol=0, atol=1e-9)
        y = regressor.matrix(q, qdot, qddot)
        np.testing.assert_allclose(model.task_forces(motion), y @ chi, rtol=0, atol=1e-9)  # J^T tau, eq. (36)
        np.testing.assert_allclose(motion.jacobian.T @ forces, y @ chi, rtol=0, atol=1e-9)
        observations.append(y)
        virtual.append(model.observation(motion))
    # Same parameter space: the columns both models describe (bodies, counterweight as
    # slider ia + offset; not the friction of the generic drives nor the strut rotors).
    names = regressor.names
    shared = [k for k, n in enumerate(names)
              if not n.startswith(("fv_", "fs_", "ia_strut", "offset_strut"))]
    stacked = np.concatenate(observations)[:, shared]
    stacked = stacked[:, np.abs(stacked).max(axis=0) > 1e-12]
    omega = np.concatenate(virtual)
    rank = np.linalg.matrix_rank(omega, tol=1e-8)
    assert np.linalg.matrix_rank(stacked, tol=1e-8) == rank
    assert np.linalg.matrix_rank(np.hstack([stacked, omega]), tol=1e-8) == rank
    basis_generic = np.linalg.svd(stacked, full_matrices=False)[0][:, :rank]
    basis_virtual = np.linalg.svd(omega, full_matrices=False)[0][:, :rank]
    assert np.max(subspace_angles(basis_generic, basis_virtual)) < 1e-8


@pytest.mark.parametrize("name", ROBOTS)
def test_power_balance(load, name):
    """``tau . qdot_a = dE/dt`` (loops and counterweight couplings do no work)."""
    robot = load(name)
    generic = InverseDynamics(robot)
    model = WuVirtualWork(robot)
    rng = np.random.default_rng(2)
    step = 1e-5  # s
    for _ in range(4):
        pose = np.array([rng.uniform(-0.4, 0.4), rng.uniform(2.3, 3.2), rng.uniform(0.0, 1.0)])
        velocity, acceleration, jerk = rng.normal(size=3), rng.normal(size=3), rng.normal(size=3)
        times = np.array([-step, step])
        poses = pose + np.outer(times, velocity) + 0.5 * np.outer(times**2, acceleration) + np.outer(times**3, jerk) / 6
        rates = velocity + np.outer(times, acceleration) + 0.5 * np.outer(times**2, jerk)
        energy = model.energy(model.motion(poses, rates))
        power_fd = (energy[1] - energy[0]) / (2 * step)
        motion = model.motion(pose, velocity, acceleration)
        scale = 1.0 + np.abs(model.forces(motion) * motion.actuated_velocity).sum()
        assert model.forces(motion) @ motion.actuated_velocity == pytest.approx(power_fd, abs=1e-6 * scale)
        q = robot.solve_inverse(pose, method="analytic").q
        _, qdot, qddot = robot.differential.task_states(q, velocity, acceleration)
        power = generic.torques(q, qdot, qddot) @ qdot[robot.actuated_indices]
        assert power == pytest.approx(power_fd, abs=1e-6 * scale)


def test_minimum_norm_forces_of_the_redundant_machine(load):
    """Eq. (39): any other solution of ``J^T tau = Omega p`` (internal stress) is longer."""
    robot = load("wu3r")
    generic = InverseDynamics(robot)
    model = WuVirtualWork(robot)
    rng = np.random.default_rng(9)
    for pose, velocity, acceleration, q, qdot, qddot in _states(robot, 4, 8):
        motion = model.motion(pose, velocity, acceleration)
        jacobian = motion.jacobian  # (4, 3), eq. (24)
        tau_min = jacobian @ np.linalg.solve(jacobian.T @ jacobian, model.task_forces(motion))  # eq. (39) as printed
        np.testing.assert_allclose(model.forces(motion), tau_min, rtol=0, atol=1e-9)
        stressed = generic.torques(q, qdot, qddot, internal_stress=rng.normal(scale=500.0, size=4))
        np.testing.assert_allclose(jacobian.T @ stressed, jacobian.T @ tau_min, rtol=0, atol=1e-8)
        assert np.linalg.norm(stressed) > np.linalg.norm(tau_min)
