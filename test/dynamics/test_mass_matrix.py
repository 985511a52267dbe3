"""``MassMatrix`` against the inverse-dynamics regressor, for parameters that are not physically consistent.

The reference ``M`` is independent of CRBA's composite inertias: column ``i`` is ``Y(q, 0, e_i) pi - Y(q, 0, 0) pi``
with pinocchio's joint-torque regressor ``Y`` (linear in every body's 10 parameters ``pi``, no division by a
mass) plus the rotor inertias on the diagonal.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import pardyn
from pardyn.dynamics.forward import ForwardDynamics
from pardyn.dynamics.mass_matrix import MassMatrix


def regressor_mass_matrix(model: pin.Model, q: np.ndarray) -> np.ndarray:
    data = model.createData()
    parameters = np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)])
    zero = np.zeros(model.nv)
    gravity = pin.computeJointTorqueRegressor(model, data, q, zero, zero) @ parameters
    columns = [pin.computeJointTorqueRegressor(model, data, q, zero, unit) @ parameters - gravity
               for unit in np.eye(model.nv)]
    return np.column_stack(columns) + np.diag(model.armature)


def configurations(robot: pardyn.Robot, count: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(4)
    return [robot.home] + [pin.integrate(robot.model, robot.home, 0.2 * rng.standard_normal(robot.model.nv))
                           for _ in range(count - 1)]


def test_a_negative_mass_breaks_plain_crba_and_not_the_mass_matrix() -> None:
    robot = pardyn.load_robot("delta")
    model = robot.nominal_parameters.apply(robot.model.copy())
    leg = model.getJointId("leg3_bar1_x")  # 0.2 kg below a massless joint: its subtree sums to -0.3 kg
    model.inertias[leg] = pin.Inertia(-0.5, np.array([0.05, 0.1, -0.4]), np.diag([0.01, 0.02, 0.03]))
    mass_matrix = MassMatrix(model)
    assert mass_matrix.shifted
    for q in configurations(robot):
        expected = regressor_mass_matrix(model, q)
        assert np.abs(pin.crba(model, model.createData(), q) - expected).max() > 1e6  # the failure it mends
        np.testing.assert_allclose(mass_matrix(q), expected, rtol=0.0, atol=1e-12)


@pytest.mark.parametrize("name", ["delta", "dualv", "ur5e"])
def test_physical_parameters_take_one_crba_equal_to_the_regressor(name: str) -> None:
    robot = pardyn.load_robot(name)
    model = robot.nominal_parameters.apply(robot.model.copy())
    mass_matrix = MassMatrix(model)
    assert not mass_matrix.shifted
    for q in configurations(robot):
        np.testing.assert_allclose(mass_matrix(q), regressor_mass_matrix(model, q), rtol=0.0, atol=1e-12)


def test_forward_dynamics_of_negative_masses_invert_the_inverse_dynamics() -> None:
    """The Delta with a bar at -0.5 kg: ``qddot`` from the forward dynamics, fed to pinocchio's RNEA (no
    composite inertia), gives back the applied torques plus closure efforts ``K^T lambda``, i.e. the residual
    lies in the closures' row space."""
    robot = pardyn.load_robot("delta")
    values = {"m_leg3_bar1": -0.5, "mx_leg3_bar1": 0.05, "my_leg3_bar1": 0.1}
    params = robot.nominal_parameters.with_values(values)
    dynamics = ForwardDynamics(robot, params)
    assert dynamics.mass_matrix.shifted
    q, qdot = dynamics.project(robot.home, np.zeros(robot.model.nv))
    tau = np.array([0.4, -0.2, 0.3])
    solution = dynamics.solve(q, qdot, tau)
    applied = np.zeros(robot.model.nv)
    applied[robot.actuated_indices] = tau
    rnea = pin.rnea(dynamics.model, dynamics.model.createData(), q, qdot, solution.qddot)  # armature included
    rnea += dynamics.friction(qdot)
    residual = applied - rnea  # = -K^T lambda: orthogonal to every closed motion W
    velocity_map = robot.differential.task_velocity_map(q)
    assert np.abs(velocity_map.T @ residual).max() < 1e-9 * np.abs(tau).max()
