"""``InertiaTerms`` against pinocchio's RNEA-based references, for parameters that are not physically consistent.

The references use no composite inertia: ``M``'s column ``i`` is ``Y(q, 0, e_i) pi - Y(q, 0, 0) pi`` with pinocchio's
joint-torque regressor ``Y`` (linear in every body's 10 parameters ``pi``, no division by a mass) plus the rotor
inertias on the diagonal; ``C qdot`` is RNEA's ``b(q, qdot) - g(q)``, and ``C`` itself is checked by the
skew-symmetry of ``Mdot - 2 C`` with ``Mdot`` from central differences of the reference ``M`` along ``qdot``.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import pardyn
from pardyn.dynamics.forward import ForwardDynamics
from pardyn.dynamics.inertia_terms import InertiaTerms


def regressor_mass_matrix(model: pin.Model, q: np.ndarray) -> np.ndarray:
    data = model.createData()
    parameters = np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)])
    zero = np.zeros(model.nv)
    gravity = pin.computeJointTorqueRegressor(model, data, q, zero, zero) @ parameters
    columns = [pin.computeJointTorqueRegressor(model, data, q, zero, unit) @ parameters - gravity
               for unit in np.eye(model.nv)]
    return np.column_stack(columns) + np.diag(model.armature)


def states(robot: pardyn.Robot, count: int = 3) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(4)
    return [(pin.integrate(robot.model, robot.home, 0.2 * rng.standard_normal(robot.model.nv)),
             rng.standard_normal(robot.model.nv)) for _ in range(count)]


def negative_bar_delta() -> tuple[pardyn.Robot, pin.Model]:
    """The Delta with one bar at -0.5 kg: the subtree below its massless joint sums to a negative mass."""
    robot = pardyn.load_robot("delta")
    model = robot.nominal_parameters.apply(robot.model.copy())
    model.inertias[model.getJointId("leg3_bar1_x")] = pin.Inertia(-0.5, np.array([0.05, 0.1, -0.4]),
                                                                  np.diag([0.01, 0.02, 0.03]))
    return robot, model


def test_a_negative_mass_breaks_pinocchios_composite_terms_and_not_these() -> None:
    robot, model = negative_bar_delta()
    terms = InertiaTerms(model)
    assert terms.shifted
    data = model.createData()
    for q, qdot in states(robot):
        mass = regressor_mass_matrix(model, q)
        coriolis_efforts = pin.nonLinearEffects(model, data, q, qdot) - pin.computeGeneralizedGravity(model, data, q)
        assert np.abs(pin.crba(model, data, q) - mass).max() > 1e6  # the failures this mends
        assert np.abs(pin.computeCoriolisMatrix(model, data, q, qdot) @ qdot - coriolis_efforts).max() > 1e6
        np.testing.assert_allclose(terms.mass(q), mass, rtol=0.0, atol=1e-12)
        coriolis = terms.coriolis(q, qdot)
        np.testing.assert_allclose(coriolis @ qdot, coriolis_efforts, rtol=0.0, atol=1e-12)
        h = 1e-6
        rate = (regressor_mass_matrix(model, pin.integrate(model, q, h * qdot))
                - regressor_mass_matrix(model, pin.integrate(model, q, -h * qdot))) / (2 * h)
        skew = rate - 2.0 * coriolis
        np.testing.assert_allclose(skew, -skew.T, rtol=0.0, atol=1e-7)


@pytest.mark.parametrize("name", ["delta", "dualv", "ur5e"])
def test_physical_parameters_take_pinocchios_terms(name: str) -> None:
    robot = pardyn.load_robot(name)
    model = robot.nominal_parameters.apply(robot.model.copy())
    terms = InertiaTerms(model)
    assert not terms.shifted
    data = model.createData()
    for q, qdot in states(robot):
        np.testing.assert_allclose(terms.mass(q), regressor_mass_matrix(model, q), rtol=0.0, atol=1e-12)
        np.testing.assert_allclose(terms.coriolis(q, qdot) @ qdot, pin.nonLinearEffects(model, data, q, qdot)
                                   - pin.computeGeneralizedGravity(model, data, q), rtol=0.0, atol=1e-12)


def test_forward_dynamics_of_a_negative_mass_satisfy_the_inverse_dynamics() -> None:
    """The Delta with a bar at -0.5 kg: ``qddot`` from the forward dynamics, fed to pinocchio's RNEA (no
    composite inertia), gives back the applied torques up to closure efforts ``K^T lambda``: the residual does
    no work on any closed motion (``W^T r = 0``)."""
    robot = pardyn.load_robot("delta")
    params = robot.nominal_parameters.with_values({"m_leg3_bar1": -0.5, "mx_leg3_bar1": 0.05, "my_leg3_bar1": 0.1})
    dynamics = ForwardDynamics(robot, params)
    assert dynamics.terms.shifted
    q, qdot = dynamics.project(robot.home, np.zeros(robot.model.nv))
    tau = np.array([0.4, -0.2, 0.3])
    solution = dynamics.solve(q, qdot, tau)
    applied = np.zeros(robot.model.nv)
    applied[robot.actuated_indices] = tau
    rnea = pin.rnea(dynamics.model, dynamics.model.createData(), q, qdot, solution.qddot)  # armature included
    residual = applied - rnea - dynamics.friction(qdot)
    velocity_map = robot.differential.task_velocity_map(q)
    assert np.abs(velocity_map.T @ residual).max() < 1e-9 * np.abs(tau).max()
