"""The one-pass actuation maps (pardyn.dynamics.actuation) against independent references.

References: the velocity map of the closure solver's differential kinematics (pinocchio frame
Jacobians of each closure frame, world-aligned), numpy's SVD/lstsq for the minimum-norm torques
and the null space of eq. (50), and pinocchio's constraintDynamics for the inverse dynamics.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pardyn.control.redundancy import InternalStressProjection
from pardyn.dynamics.actuation import ActuationMaps
from pardyn.dynamics.inverse import InverseDynamics

SUPPORTED = ["dualv", "rrr3", "five_bar", "wu3r", "delta", "hexapod"]  # planar (no point), 2D and 3D loops


def _states(robot, count: int, seed: int = 3):
    rng = np.random.default_rng(seed)
    n = len(robot.task_names)
    q = [robot.solve_inverse(robot.task_values(robot.home) + rng.uniform(-0.03, 0.03, n)).q for _ in range(count)]
    qdot = [robot.differential.velocities_from_task(c, rng.uniform(-0.5, 0.5, n)) for c in q]
    qddot = [robot.differential.accelerations_from_task(c, v, rng.uniform(-2.0, 2.0, n)) for c, v in zip(q, qdot)]
    return np.array(q), np.array(qdot), np.array(qddot)


@pytest.mark.parametrize("name", SUPPORTED)
def test_velocity_map_and_row_space_match_the_frame_jacobians(load, name):
    robot = load(name)
    maps = ActuationMaps(robot)
    assert maps.supported
    q, _, _ = _states(robot, 5)
    order = np.concatenate([maps.legs, maps.chart])
    for sample in q:
        reference = robot.differential.task_velocity_map(sample)  # getFrameJacobian of each closure frame
        np.testing.assert_allclose(maps.velocity_map(sample), reference, rtol=0, atol=1e-10 * np.abs(reference).max())
        exact = robot.closures.jacobian(sample)[:, order]
        fast = maps.constraint_jacobian(sample)
        # same row space: K' = T K with T invertible
        transform = np.linalg.lstsq(exact.T, fast.T, rcond=None)[0].T  # (m, m)
        np.testing.assert_allclose(transform @ exact, fast, atol=1e-10)
        assert np.linalg.matrix_rank(transform) == robot.closures.size
    batched = maps.velocity_maps(maps.constraint_jacobians(q))
    np.testing.assert_allclose(batched, [maps.velocity_map(sample) for sample in q], rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", ["dualv", "rrr3", "delta"])
def test_minimum_norm_and_projection_match_lstsq_and_svd(load, name):
    robot = load(name)
    maps = ActuationMaps(robot)
    rng = np.random.default_rng(5)
    q, _, _ = _states(robot, 4)
    n_a = len(robot.actuated_indices)
    for sample in q:
        velocity_map = robot.differential.task_velocity_map(sample)
        jacobian = velocity_map[robot.actuated_indices]  # J (n_a, n), eq. (20)
        tree = rng.normal(0.0, 5.0, robot.nv)
        expected = np.linalg.lstsq(jacobian.T, velocity_map.T @ tree, rcond=None)[0]  # min-norm J^T tau = W^T tau_t
        stress = rng.normal(0.0, 5.0, n_a)
        torques, range_part = maps.minimum_norm(maps.constraint_jacobian(sample), tree, stress)
        np.testing.assert_allclose(torques, expected, rtol=0, atol=1e-10 * np.abs(expected).max())
        _, _, vt = np.linalg.svd(jacobian.T)  # rows n.. of V^T span null(J^T): the u of eq. (50)
        null = vt[len(robot.task_names):]
        expected_projection = stress - null.T @ (null @ stress)
        np.testing.assert_allclose(range_part, expected_projection, rtol=0, atol=1e-10 * np.abs(stress).max())
        projected = maps.project(maps.constraint_jacobian(sample), stress)
        np.testing.assert_allclose(projected, expected_projection, rtol=0, atol=1e-10 * np.abs(stress).max())


def test_inverse_dynamics_round_trip_through_pinocchio_constraint_dynamics(load):
    """DualV: the one-pass torques, applied to pinocchio's constraintDynamics (its own loops as
    RigidConstraintModels, proximal solver), give back the accelerations they were computed for."""
    robot = load("dualv")
    model = robot.model.copy()
    model.armature[:] = 1e-3  # the massless platform-joint bodies need some inertia in constraintDynamics
    model.damping[:] = 0.0
    model.friction[:] = 0.0
    from pardyn.dynamics.parameters import parameters_from_model  # noqa: PLC0415

    inverse = InverseDynamics(robot, parameters_from_model(robot, model))
    assert inverse._maps is not None  # the one-pass path
    data = model.createData()
    constraints = []
    for closure in robot.description.closures:
        frame_a, frame_b = (model.frames[model.getFrameId(name)] for name in closure.frames)
        constraints.append(pin.RigidConstraintModel(
            pin.ContactType.CONTACT_6D, model, frame_a.parentJoint, frame_a.placement, frame_b.parentJoint,
            frame_b.placement, pin.ReferenceFrame.LOCAL))
    datas = [c.createData() for c in constraints]
    constraints, datas = pin.StdVec_RigidConstraintModel(constraints), pin.StdVec_RigidConstraintData(datas)
    pin.initConstraintDynamics(model, data, constraints, datas)
    settings = pin.ProximalSettings(1e-13, 1e-13, 1e-13, 100)
    q, qdot, qddot = _states(robot, 5)
    for k in range(len(q)):
        tau = np.zeros(model.nv)
        tau[robot.actuated_indices] = inverse.torques(q[k], qdot[k], qddot[k])
        back = pin.constraintDynamics(model, data, q[k], qdot[k], tau, constraints, datas, settings)
        np.testing.assert_allclose(back, qddot[k], rtol=0, atol=1e-8 * np.abs(qddot[k]).max())


def test_projection_of_the_controller_needs_no_forward_problem_when_q_is_known(load):
    robot = load("dualv")
    projection = InternalStressProjection(robot)
    q, _, _ = _states(robot, 2)
    tau = np.array([3.0, -1.0, 2.0, 0.5])
    by_measurement = projection(q[0][robot.actuated_indices], tau)
    np.testing.assert_allclose(projection.project_at(q[0], tau), by_measurement, atol=1e-12)
    jacobian = robot.differential.inverse_jacobian(q[0], robot.actuated_indices)
    np.testing.assert_allclose(jacobian.T @ by_measurement, jacobian.T @ tau, atol=1e-12)  # same motion
    assert np.linalg.norm(by_measurement) < np.linalg.norm(tau)  # least norm


def test_projection_between_checked_calls_matches_the_svd_null_space_and_checks_still_catch(load):
    """Issue 19: the unverified closed form between checked calls gives the same eq. (50) torques."""
    from scipy.linalg import null_space

    from pardyn.errors import PardynError

    robot = load("dualv")
    projection = InternalStressProjection(robot, check_every=4)
    q, _, _ = _states(robot, 9, seed=5)
    tau = np.array([3.0, -1.0, 2.0, 0.5])
    for k in range(9):  # calls 1..3, 5..7 unverified
        jacobian = robot.differential.inverse_jacobian(q[k], robot.actuated_indices)  # (n_a, n) at the true q
        basis = null_space(jacobian.T)  # scipy's SVD, independent of pardyn's projector
        expected = tau - basis @ (basis.T @ tau)
        np.testing.assert_allclose(projection(q[k][robot.actuated_indices], tau), expected, atol=1e-10,
                                   err_msg=f"call {k}")
    for calls in (0, 1):  # a checked and an unchecked call: a reading off the robot's reach is refused
        projection._calls = calls
        with pytest.raises(PardynError):
            projection(np.array([4.61, -4.49, 4.61, -4.49]), tau)
    with pytest.raises(ValueError):
        InternalStressProjection(robot, check_every=0)


def test_robots_outside_the_fast_path_say_so(load):
    assert not ActuationMaps(load("h4")).supported  # distance closures
    assert not ActuationMaps(load("ur5e")).supported  # no loop


@pytest.mark.parametrize(("name", "projection"), [("dualv", "platform"), ("dualv", "actuators"), ("rrr3", "standard")])
def test_regressor_of_one_state_is_the_batch_of_one(load, name, projection):
    """The one-state path of Regressor.equations against its batched path (the previous one-state path)."""
    from pardyn.dynamics.regressor import Regressor  # noqa: PLC0415

    robot = load(name)
    regressor = Regressor(robot, projection=projection)
    q, qdot, qddot = _states(robot, 3)
    tau = np.random.default_rng(2).normal(0.0, 3.0, (3, len(robot.actuated_indices)))
    batch, measured = regressor.equations(q, qdot, qddot, tau)
    for k in range(3):
        one, gamma = regressor.equations(q[k], qdot[k], qddot[k], tau[k])
        np.testing.assert_allclose(one, batch[k], rtol=0, atol=1e-11 * np.abs(batch[k]).max())
        np.testing.assert_allclose(gamma, measured[k], rtol=0, atol=1e-11 * np.abs(measured[k]).max())


@pytest.mark.parametrize("name", ["five_bar", "delta"])
def test_a_pickled_copy_still_matches_the_frame_jacobians(load, name):
    """Copies sent to other processes (pardyn.distributed's workers) rebind their views of pinocchio's data: a copy that
    read the placements of its original's data would answer the home configuration's map everywhere."""
    import pickle  # noqa: PLC0415

    robot = load(name)
    maps = ActuationMaps(robot)
    maps.velocity_map(robot.home)  # the original's data now holds the home placements
    copy = pickle.loads(pickle.dumps(maps))
    for sample in _states(robot, 3)[0]:
        reference = robot.differential.task_velocity_map(sample)
        np.testing.assert_allclose(copy.velocity_map(sample), reference, rtol=0, atol=1e-10 * np.abs(reference).max())
