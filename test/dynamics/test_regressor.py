"""Identification models: observation matrix x parameters == inverse dynamic model (eqs. 19, 30, 36, 38)."""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.dynamics.inverse import InverseDynamics, null_space_projector
from pardyn.dynamics.regressor import Regressor
from pardyn.identification.least_squares import payload_system
from pardyn.identification.filtering import stack_equations
from pardyn.errors import InputError

CASES = [
    ("five_bar", "standard", None),
    ("rrr3", "standard", None),
    ("rrr3", "platform", None),
    ("dualv", "platform", None),
    ("dualv", "actuators", None),
    ("dualv", "actuators", ["leg2_joint1"]),
]


def _states(robot, rng, count, spread=0.03):
    n = len(robot.task_indices)
    q, qdot, qddot = (np.empty((count, robot.nv)) for _ in range(3))
    for k in range(count):
        q[k] = robot.solve_inverse(robot.home[robot.task_indices] + rng.uniform(-spread, spread, n)).q
        qdot[k] = robot.differential.velocities_from_task(q[k], rng.normal(size=n))
        qddot[k] = robot.differential.accelerations_from_task(q[k], qdot[k], rng.normal(size=n))
    return q, qdot, qddot


def _random_parameters(params, rng):
    """Random values, masses kept away from zero (so RNEA can evaluate them)."""
    vector = rng.uniform(-0.5, 0.5, params.size)
    masses = [k for k, name in enumerate(params.names) if name.startswith("m_")]
    vector[masses] = rng.uniform(0.2, 2.0, len(masses))
    return params.with_vector(vector)


@pytest.mark.parametrize("kernels", ["python", "compiled"])  # pardyn.kernels: the whole observation matrix in C
@pytest.mark.parametrize(("name", "projection", "projected"), CASES)
def test_observation_times_parameters_is_the_inverse_dynamic_model(load, name, projection, projected, kernels):
    robot = load(name)  # the reference torques: pinocchio's RNEA closed by the Python path
    rng = np.random.default_rng(19)
    nominal = robot.nominal_parameters
    regressor = Regressor(load(name, kernels), projection=projection, projected=projected)
    q, qdot, qddot = _states(robot, rng, 5)
    for params in (nominal, _random_parameters(nominal, rng)):
        torques = InverseDynamics(robot, params).torques_batch(q, qdot, qddot)  # RNEA path
        observation, measured = regressor.equations(q, qdot, qddot, torques)
        assert observation.shape == (5, regressor.rows, params.size)
        np.testing.assert_allclose(observation @ params.vector(), measured, rtol=1e-10, atol=1e-10)
        if projection == "standard":
            np.testing.assert_allclose(measured, torques, rtol=0, atol=0)


@pytest.mark.parametrize(("name", "projection", "projected"), [*CASES, ("delta", "standard", None),
                                                                 ("hexapod", "standard", None)])
def test_compiled_observations_equal_the_python_path(load, name, projection, projected):
    """The C observation matrices (pardyn.kernels) against the Python path's definition, state by state:
    ``P W^T Y_t`` with pinocchio's regressor (``Regressor.tree``) and the velocity map of
    ``robot.differential``, and the measured side ``P J^T tau``; one state and a batch alike."""
    python, compiled = load(name), load(name, "compiled")
    rng = np.random.default_rng(7)
    q, qdot, qddot = _states(python, rng, 4)
    torques = rng.normal(0.0, 5.0, (4, len(python.actuated_indices)))
    reference = Regressor(python, projection=projection, projected=projected)
    regressor = Regressor(compiled, projection=projection, projected=projected)
    assert regressor._compiled is not None  # noqa: SLF001 (the C path is the one under test)
    observation, measured = regressor.equations(q, qdot, qddot, torques)
    for k in range(4):
        velocity_map = python.differential.task_velocity_map(q[k])
        left = reference._left(velocity_map[None])[0]  # noqa: SLF001 (P: I, J^-T or J_1^-T)
        expected = left @ velocity_map.T @ reference.tree(q[k], qdot[k], qddot[k])
        gamma = torques[k] if projection == "standard" else left @ velocity_map[python.actuated_indices].T @ torques[k]
        np.testing.assert_allclose(observation[k], expected, rtol=0, atol=1e-12 * np.abs(expected).max())
        np.testing.assert_allclose(measured[k], gamma, rtol=0, atol=1e-12 * np.abs(gamma).max())
        single, single_measured = regressor.equations(q[k], qdot[k], qddot[k], torques[k])
        np.testing.assert_array_equal(single, observation[k])
        np.testing.assert_array_equal(single_measured, measured[k])


def test_single_sample_shapes(load):
    robot = load("dualv")
    regressor = Regressor(robot, projection="actuators")
    q, qdot, qddot = (a[0] for a in _states(robot, np.random.default_rng(1), 1))
    torques = InverseDynamics(robot).torques(q, qdot, qddot)
    matrix = regressor.matrix(q, qdot, qddot)
    assert matrix.shape == (3, regressor.size)
    np.testing.assert_allclose(matrix @ robot.nominal_parameters.vector(), regressor.measurement(q, torques),
                               atol=1e-10)


@pytest.mark.parametrize("kernels", ["python", "compiled"])  # pardyn.kernels: the joint regressors in C
@pytest.mark.parametrize("name", ["dualv", "rrr3", "five_bar"])
def test_tree_regressor_matches_rnea_with_random_parameters(load, name, kernels):
    """Y_t chi == RNEA + drive terms (pinocchio's): checks the body frames (sensor, payload lumping) and eq. (5)
    columns."""
    robot = load(name)
    rng = np.random.default_rng(1)
    params = _random_parameters(robot.nominal_parameters, rng)
    inverse = InverseDynamics(robot, params)
    regressor = Regressor(load(name, kernels), params)
    q, qdot, qddot = (rng.uniform(-2, 2, (4, robot.nv)) for _ in range(3))  # any tree state
    tree = regressor.tree(q, qdot, qddot)
    for k in range(4):
        np.testing.assert_allclose(tree[k] @ params.vector(), inverse.tree_torques(q[k], qdot[k], qddot[k]),
                                   rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(("projection", "projected"), [("platform", None), ("actuators", None),
                                                        ("actuators", ["leg1_joint1"])])
def test_projected_models_ignore_internal_stress(load, projection, projected):
    robot = load("dualv")
    rng = np.random.default_rng(30)
    q, qdot, qddot = _states(robot, rng, 4)
    inverse = InverseDynamics(robot)
    regressor = Regressor(robot, projection=projection, projected=projected)
    minimum = inverse.torques_batch(q, qdot, qddot)
    stressed = inverse.torques_batch(q, qdot, qddot, internal_stress=rng.normal(scale=5.0, size=(4, 4)))
    jacobians = np.stack([robot.differential.task_velocity_map(sample)[robot.actuated_indices] for sample in q])
    assert np.min(np.abs(np.einsum("nab,nb->na", null_space_projector(jacobians), stressed)).max(axis=1)) > 0.1
    np.testing.assert_allclose(regressor.measurement(q, stressed), regressor.measurement(q, minimum), atol=1e-10)
    np.testing.assert_allclose(regressor.matrix(q, qdot, qddot) @ robot.nominal_parameters.vector(),
                               regressor.measurement(q, stressed), atol=1e-10)


def test_case2_rows_and_projected_actuators(load):
    robot = load("dualv")
    assert Regressor(robot).projection == "platform"
    assert Regressor(robot).row_names == ("x", "y", "phi")
    assert Regressor(robot, projection="actuators").row_names == ("leg1_joint1", "leg2_joint1", "leg3_joint1")
    custom = Regressor(robot, projection="actuators", projected=["leg1_joint1"])
    assert custom.row_names == ("leg2_joint1", "leg3_joint1", "leg4_joint1")
    with pytest.raises(InputError, match="actuation redundancy"):
        Regressor(robot, projection="standard")
    with pytest.raises(InputError, match="moves n_a - n = 1"):
        Regressor(robot, projection="actuators", projected=["leg1_joint1", "leg2_joint1"])
    with pytest.raises(InputError, match="distinct actuated joints"):
        Regressor(robot, projection="actuators", projected=["leg1_joint2"])
    assert Regressor(load("rrr3")).projection == "standard"


def test_parameter_names(load):
    names = Regressor(load("dualv")).names
    for name in ("zz_leg1_link1", "mx_leg3_link2", "ia_leg1_joint1", "offset_leg4_joint1", "m_platform", "m_payload"):
        assert name in names
    assert len(names) == len(set(names))


def test_payload_columns_and_eq49(load):
    robot = load("rrr3")
    rng = np.random.default_rng(38)
    regressor = Regressor(robot)
    payload = regressor.payload_columns()
    platform = regressor.params.body_columns("platform")
    assert [regressor.names[k] for k in payload][-1] == "m_payload"
    q, qdot, qddot = _states(robot, rng, 6)
    observation = regressor.matrix(q, qdot, qddot)
    # the payload is fixed to the platform at P in the same axes: identical columns (eq. 38)
    np.testing.assert_allclose(observation[:, :, payload], observation[:, :, platform], atol=1e-14)
    # eq. (49): trajectories without then with the payload, one parameter vector
    loaded = robot.nominal_parameters
    unloaded = loaded.with_values({name: 0.0 for name in loaded.names if name.endswith("_payload")})
    torques_a = InverseDynamics(robot, unloaded).torques_batch(q[:3], qdot[:3], qddot[:3])
    torques_b = InverseDynamics(robot, loaded).torques_batch(q[3:], qdot[3:], qddot[3:])
    system_a = stack_equations(torques_a, observation[:3], names=regressor.names)
    system_b = stack_equations(torques_b, observation[3:], names=regressor.names)
    stacked = payload_system(system_a, system_b, payload=list(payload))
    np.testing.assert_allclose(stacked.W @ loaded.vector(), stacked.Y, atol=1e-10)
