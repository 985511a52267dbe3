"""Constrained forward dynamics and RK4 simulation of the closed-loop robots.

References, none of them the code under test:

* pinocchio's own constrained dynamics (``pin.constraintDynamics``, proximal
  KKT solver on loop-closure ``RigidConstraintModel``s), accelerations and
  closure forces, with rotor inertia, in-plane gravity and friction;
* pinocchio's RNEA for the Lagrange equation ``M qddot + b = S^T tau - f + K^T lambda``;
* pardyn's closed-loop inverse dynamics (:mod:`pardyn.dynamics.inverse`, another
  implementation) with the nominal YAML parameters: the torques come back;
* hand-derived: on a massless linkage the rotor of each actuator obeys
  ``ia qddot = tau - fv qdot - fs sign(qdot) - tau_off`` (non-redundant robots);
* physics: internal forces of the actuation-redundant DualV do not move it;
  energy conservation (pinocchio's kinetic + potential energy) and the power
  balance with friction along simulated motions, 4th-order convergence of RK4.

Tests that set dynamic parameters field by field write them into a copy of ``robot.model``
and pass that model's parameters (:func:`pardyn.dynamics.parameters.parameters_from_model`).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import pardyn
from pardyn.dynamics.forward import ForwardDynamics, simulate
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.dynamics.parameters import parameters_from_model
from pardyn.errors import InputError

GRAVITY_IN_PLANE = np.array([0.0, -9.81, 0.0])  # m/s^2, the plane of motion is xy


def set_gravity(model: pin.Model, linear: np.ndarray) -> None:
    model.gravity = pin.Motion(np.asarray(linear, dtype=float), np.zeros(3))


def dynamics_of(robot: pardyn.Robot, model: pin.Model, **options) -> ForwardDynamics:
    """The forward dynamics of ``robot`` with the dynamic parameters ``model`` carries."""
    return ForwardDynamics(robot, parameters_from_model(robot, model), **options)


def random_state(robot: pardyn.Robot, rng: np.random.Generator, *, spread: float = 0.03, speed: float = 0.5):
    """A closed configuration near home and a compatible velocity (nv,), (nv,)."""
    n = len(robot.task_indices)
    q = robot.solve_inverse(robot.home[robot.task_indices] + rng.uniform(-spread, spread, n)).q
    qdot = robot.differential.velocities_from_task(q, rng.uniform(-speed, speed, n))
    return q, qdot


def loop_constraints(robot: pardyn.Robot):
    """pinocchio loop-closure constraints equivalent to the robot's closures.

    ``planar`` closures (coincident frames) become 6D constraints (the z, rx, ry
    rows are redundant, which the proximal solver accepts), ``2D`` ones
    (coincident points) 3D constraints. Frame a is the constraint's joint 1.
    """
    model = robot.model
    constraints = []
    for closure in robot.description.closures:
        assert closure.type in ("planar", "2D"), closure
        frame_a, frame_b = (model.frames[model.getFrameId(name)] for name in closure.frames)
        kind = pin.ContactType.CONTACT_6D if closure.type == "planar" else pin.ContactType.CONTACT_3D
        constraints.append(
            pin.RigidConstraintModel(
                kind, model, frame_a.parentJoint, frame_a.placement, frame_b.parentJoint, frame_b.placement,
                pin.ReferenceFrame.LOCAL,
            )
        )
    models = pin.StdVec_RigidConstraintModel(constraints)
    datas = pin.StdVec_RigidConstraintData([c.createData() for c in constraints])
    return models, datas


def hand_friction(model: pin.Model, qdot: np.ndarray, width: float = 0.0) -> np.ndarray:
    """Eq. (5) of the DualV paper without offset: fv qdot + fs sign(qdot) (tanh-smoothed if width > 0)."""
    direction = np.tanh(qdot / width) if width > 0 else np.sign(qdot)
    return model.damping * qdot + model.friction * direction


@pytest.mark.parametrize("drives", [True, False], ids=["drives", "rigid"])
@pytest.mark.parametrize("name", ["dualv", "rrr3", "five_bar"])
def test_matches_pinocchio_constraint_dynamics(name, drives):
    robot = pardyn.load_robot(name)
    model = robot.model.copy()
    data = model.createData()
    rng = np.random.default_rng(7)
    model.armature[:] = 0.0
    model.damping[:] = 0.0
    model.friction[:] = 0.0
    # pinocchio's constraint solver factorizes M, which the massless platform-joint bodies
    # (leg{i}_joint3 of dualv and rrr3) make singular (NaN): a small rotor inertia there
    # (pinocchio's CRBA adds model.armature to M, as pardyn relies on).
    massless = np.diag(pin.crba(model, data, robot.home)) == 0.0
    model.armature[massless] = 1e-3
    if drives:  # rotor inertia everywhere, viscous and Coulomb friction on every joint
        model.armature[:] = rng.uniform(1e-3, 1e-2, model.nv)
        model.armature[robot.actuated_indices] = rng.uniform(0.02, 0.05, len(robot.actuated_indices))
        model.damping[:] = rng.uniform(0.0, 0.2, model.nv)
        model.friction[:] = rng.uniform(0.0, 0.3, model.nv)
    set_gravity(model, GRAVITY_IN_PLANE)
    dynamics = dynamics_of(robot, model)
    constraints, constraint_datas = loop_constraints(robot)
    pin.initConstraintDynamics(model, data, constraints, constraint_datas)
    worst = 0.0
    for _ in range(5):
        q, qdot = random_state(robot, rng)
        tau_a = rng.normal(0.0, 2.0, len(robot.actuated_indices))
        solution = dynamics.solve(q, qdot, tau_a)

        effort = np.zeros(model.nv)
        effort[robot.actuated_indices] = tau_a
        effort -= hand_friction(model, qdot)
        settings = pin.ProximalSettings(1e-14, 1e-12, 1e-12, 200)  # absolute, relative accuracy, mu, max_iter
        reference = pin.constraintDynamics(model, data, q, qdot, effort, constraints, constraint_datas, settings)
        scale = max(1.0, float(np.max(np.abs(reference))))
        error = float(np.max(np.abs(solution.qddot - reference))) / scale
        worst = max(worst, error)
        assert error < 1e-9, (name, error)

        # Generalized closure effort K^T lambda against pinocchio's J_c^T lambda_c, and per
        # closure: pinocchio's lambda_c is the wrench on frame a in frame a, ours the
        # world-aligned wrench on frame b (= minus the one on a).
        jacobian = robot.closures.jacobian(q)
        forces = solution.constraint_forces
        reference_forces = data.lambda_c.copy()
        contact_jacobian = pin.getConstraintsJacobian(model, data, constraints, constraint_datas)
        np.testing.assert_allclose(jacobian.T @ forces, contact_jacobian.T @ reference_forces, atol=1e-8 * scale)
        pin.framesForwardKinematics(model, data, q)
        start, row = 0, 0
        for closure in robot.description.closures:
            rows = slice(row, row + closure.size)
            row += closure.size
            rotation_a = data.oMf[model.getFrameId(closure.frames[0])].rotation
            size = 6 if closure.type == "planar" else 3
            wrench = reference_forces[start : start + size]
            start += size
            expected = -(rotation_a @ wrench[:3])[:2]
            if closure.type == "planar":
                expected = np.append(expected, -(rotation_a @ wrench[3:])[2])
            np.testing.assert_allclose(forces[rows], expected, atol=1e-8 * scale)

        # The Lagrange equation with pinocchio's RNEA (armature included) and the
        # acceleration-level closure equation.
        rnea = pin.rnea(model, data, q, qdot, solution.qddot)  # M qddot + b
        np.testing.assert_allclose(rnea - effort, jacobian.T @ forces, atol=1e-9 * scale)
        closure_acceleration = jacobian @ solution.qddot + robot.closures.drift(q, qdot)
        assert np.max(np.abs(closure_acceleration)) < 1e-9 * scale
    print(f"{name} ({'drives' if drives else 'rigid'}): max relative difference with "
          f"pin.constraintDynamics {worst:.2e}, massless joints {np.flatnonzero(massless).tolist()}")


@pytest.mark.parametrize("name", ["five_bar", "rrr3", "dualv"])
@pytest.mark.parametrize("width", [0.0, 0.05])
def test_massless_linkage_rotor_equation(name, width):
    """Hand-derived: with massless links and rotors of inertia ia on the actuated joints,
    ``M = diag(ia)`` on the actuated joints, so ``J_a^T (ia qddot_a - tau + f_a) = 0`` for any
    state, ``f_a = fv qdot_a + fs sign(qdot_a) + offset`` (eq. 5); with J_a square (no
    redundancy) each rotor is alone: ``ia qddot_a = tau - f_a``."""
    robot = pardyn.load_robot(name)
    model = robot.model.copy()
    for joint_id in range(model.njoints):
        model.inertias[joint_id] = pin.Inertia.Zero()
    actuated = robot.actuated_indices
    n_a = len(actuated)
    model.armature[:] = 0.0
    model.armature[actuated] = np.linspace(0.02, 0.05, n_a)  # kg m^2
    model.damping[:] = 0.0
    model.damping[actuated] = np.linspace(0.1, 0.3, n_a)  # N m s/rad
    model.friction[:] = 0.0
    model.friction[actuated] = np.linspace(0.2, 0.4, n_a)  # N m
    set_gravity(model, GRAVITY_IN_PLANE)  # massless: no effect
    offsets = np.zeros(model.nv)
    offsets[actuated] = np.linspace(-0.1, 0.1, n_a)  # N m
    params = parameters_from_model(robot, model).with_values(
        {f"offset_{robot.joint_names[i]}": offsets[i] for i in actuated})
    dynamics = ForwardDynamics(robot, params, coulomb_width=width)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, qdot = random_state(robot, rng)
        tau_a = rng.normal(0.0, 1.0, n_a)
        qddot = dynamics.accelerations(q, qdot, tau_a)
        rate = qdot[actuated]
        coulomb = np.tanh(rate / width) if width > 0 else np.sign(rate)
        unbalanced = model.armature[actuated] * qddot[actuated] - tau_a + model.damping[actuated] * rate
        unbalanced += model.friction[actuated] * coulomb + offsets[actuated]
        inverse_jacobian = robot.differential.inverse_jacobian(q, actuated)  # (n_a, n)
        if n_a == len(robot.task_indices):
            np.testing.assert_allclose(unbalanced, 0.0, atol=1e-10)
        else:
            np.testing.assert_allclose(inverse_jacobian.T @ unbalanced, 0.0, atol=1e-10)
            assert np.max(np.abs(unbalanced)) > 1e-3  # the rotors alone do not balance: the loops do


def test_dualv_internal_forces_do_not_move_the_robot():
    """Actuation redundancy: efforts in null(J_a^T) only change the closure forces."""
    robot = pardyn.load_robot("dualv")
    dynamics = ForwardDynamics(robot)
    rng = np.random.default_rng(11)
    q, qdot = random_state(robot, rng)
    tau_a = rng.normal(0.0, 2.0, 4)
    inverse_jacobian = robot.differential.inverse_jacobian(q, robot.actuated_indices)  # (4, 3)
    internal = np.linalg.svd(inverse_jacobian.T)[2][-1] * 5.0  # N m, J_a^T internal = 0
    assert np.max(np.abs(inverse_jacobian.T @ internal)) < 1e-12
    base = dynamics.solve(q, qdot, tau_a)
    loaded = dynamics.solve(q, qdot, tau_a + internal)
    np.testing.assert_allclose(loaded.qddot, base.qddot, atol=1e-10)
    assert np.max(np.abs(loaded.constraint_forces - base.constraint_forces)) > 1.0


@pytest.mark.parametrize("name", ["dualv", "rrr3", "five_bar"])
def test_round_trip_with_inverse_dynamics(name):
    """pardyn's closed-loop inverse dynamics (RNEA + eq. 19/26, another implementation)
    returns the torques that produced the accelerations, with the YAML's nominal
    parameters (drive inertia and friction of the DualV) given to both.
    With actuation redundancy it returns the minimum-norm torques: same J_a^T tau."""
    robot = pardyn.load_robot(name)
    params = robot.nominal_parameters
    dynamics = ForwardDynamics(robot, params)
    inverse = InverseDynamics(robot, params)
    rng = np.random.default_rng(13)
    for _ in range(3):
        q, qdot = random_state(robot, rng)
        tau_a = rng.normal(0.0, 2.0, len(robot.actuated_indices))
        qddot = dynamics.accelerations(q, qdot, tau_a)
        recovered = inverse.torques(q, qdot, qddot)
        inverse_jacobian = robot.differential.inverse_jacobian(q, robot.actuated_indices)
        np.testing.assert_allclose(inverse_jacobian.T @ recovered, inverse_jacobian.T @ tau_a, atol=1e-9)
        if len(robot.actuated_indices) == len(robot.task_indices):
            np.testing.assert_allclose(recovered, tau_a, atol=1e-9)
        np.testing.assert_allclose(dynamics.accelerations(q, qdot, recovered), qddot, atol=1e-8)


def _energy_run(name: str, dt: float, *, friction: bool = False):
    """Simulate 1 s from a moving state near home under conservative spring torques."""
    robot = pardyn.load_robot(name)
    model = robot.model.copy()
    data = model.createData()
    set_gravity(model, GRAVITY_IN_PLANE if name == "rrr3" else np.zeros(3))
    model.armature[:] = 0.0
    model.armature[robot.actuated_indices] = 0.01
    width = 0.05
    model.damping[:] = 0.02 if friction else 0.0  # the URDF may carry drive friction
    model.friction[:] = 0.0
    if friction:
        model.friction[robot.actuated_indices] = 0.05
    actuated = robot.actuated_indices
    # N m/rad, tau = -k (q_a - q_a0): potential k |q_a - q_a0|^2 / 2; stiff enough to hold
    # rrr3 against gravity away from its singularities
    stiffness = 300.0 if name == "rrr3" else 50.0
    rng = np.random.default_rng(5)
    q0, qdot0 = random_state(robot, rng, speed=0.5)
    rest = robot.home[actuated].copy()

    def torque(t, q, qdot):
        return -stiffness * (q[actuated] - rest)

    dynamics = dynamics_of(robot, model, coulomb_width=width)
    trajectory = simulate(dynamics, torque, q0, qdot0, duration=1.0, dt=dt)
    kinetic = np.array([pin.computeKineticEnergy(model, data, q, v) for q, v in zip(trajectory.q, trajectory.qdot)])
    potential = np.array([pin.computePotentialEnergy(model, data, q) for q in trajectory.q])
    potential += 0.5 * stiffness * np.sum((trajectory.q[:, actuated] - rest) ** 2, axis=1)
    dissipation = np.array([v @ hand_friction(model, v, width) for v in trajectory.qdot])  # W
    return robot, trajectory, kinetic + potential, kinetic, dissipation


@pytest.mark.parametrize("name", ["dualv", "rrr3"])
def test_energy_conservation_and_closure(name):
    robot, trajectory, energy, kinetic, _ = _energy_run(name, 1e-3)
    scale = float(np.max(kinetic))  # energy exchanged; the potential's zero is arbitrary
    drift = float(np.max(np.abs(energy - energy[0]))) / scale
    motion = np.ptp(trajectory.q[:, robot.task_indices], axis=0)
    print(f"{name}: relative energy drift {drift:.2e} over 1 s (dt = 1 ms), task range {motion}")
    assert np.max(motion) > 0.02  # it did move
    assert drift < 1e-6
    for q, qdot in zip(trajectory.q, trajectory.qdot):
        residual, jacobian = robot.closures.residual_and_jacobian(q)
        assert np.max(np.abs(residual)) < 1e-9  # m, rad
        assert np.max(np.abs(jacobian @ qdot)) < 1e-9
    # The sampled accelerations are the derivative of the sampled velocities.
    central = (trajectory.qdot[2:] - trajectory.qdot[:-2]) / (2 * 1e-3)
    np.testing.assert_allclose(central, trajectory.qddot[1:-1], atol=1e-3 * np.max(np.abs(trajectory.qddot)))
    np.testing.assert_allclose(trajectory.t[-1], 1.0)
    assert trajectory.tau.shape == (len(trajectory.t), len(robot.actuated_indices))


def test_rk4_converges_at_fourth_order():
    """Halving dt divides the energy error by about 2^4 (> 8 required)."""
    errors = []
    for dt in (4e-3, 2e-3):
        _, _, energy, kinetic, _ = _energy_run("rrr3", dt)
        errors.append(float(np.max(np.abs(energy - energy[0]))) / float(np.max(kinetic)))
    print(f"rrr3 energy drift dt=4 ms {errors[0]:.2e}, dt=2 ms {errors[1]:.2e}, ratio {errors[0] / errors[1]:.1f}")
    assert errors[0] / errors[1] > 8.0


def test_power_balance_with_friction():
    """E(T) - E(0) = -int qdot^T f(qdot) dt (viscous on every joint, smoothed Coulomb on the actuators)."""
    _, trajectory, energy, _, dissipation = _energy_run("dualv", 1e-3, friction=True)
    dt = 1e-3
    weights = np.ones(len(trajectory.t))  # Simpson's rule on the 1001 samples
    weights[1:-1:2], weights[2:-1:2] = 4.0, 2.0
    dissipated = dt / 3.0 * weights @ dissipation
    change = energy[-1] - energy[0]
    print(f"dualv: energy change {change:.6e} J, dissipated {dissipated:.6e} J, "
          f"relative mismatch {abs(change + dissipated) / dissipated:.1e}")
    assert dissipated > 1e-3
    assert abs(change + dissipated) < 1e-6 * dissipated


def test_projection_closes_the_loops_with_least_norm_corrections():
    robot = pardyn.load_robot("rrr3")
    dynamics = ForwardDynamics(robot)
    rng = np.random.default_rng(2)
    q, qdot = random_state(robot, rng)
    q_bad = q + rng.normal(0.0, 1e-3, robot.nv)
    qdot_bad = qdot + rng.normal(0.0, 1e-2, robot.nv)
    q_new, qdot_new = dynamics.project(q_bad, qdot_bad)
    residual, jacobian = robot.closures.residual_and_jacobian(q_new)
    assert np.max(np.abs(residual)) <= 1e-12
    assert np.max(np.abs(jacobian @ qdot_new)) < 1e-12
    # Least norm: the velocity correction is orthogonal to every closed motion W xdot.
    velocity_map = robot.differential.task_velocity_map(q_new)
    assert np.max(np.abs(velocity_map.T @ (qdot_new - qdot_bad))) < 1e-12
    # A closed state is left alone.
    q_same, qdot_same = dynamics.project(q, qdot)
    np.testing.assert_allclose(q_same, q, atol=1e-12)
    np.testing.assert_allclose(qdot_same, qdot, atol=1e-10)


def test_errors_name_the_input():
    robot = pardyn.load_robot("five_bar")
    dynamics = ForwardDynamics(robot)
    q, qdot = robot.home, np.zeros(robot.nv)
    with pytest.raises(InputError, match="tau_a must have shape"):
        dynamics.solve(q, qdot, np.zeros(3))
    with pytest.raises(InputError, match="qdot must be finite"):
        dynamics.solve(q, np.full(robot.nv, np.nan), np.zeros(2))
    with pytest.raises(InputError, match="dt"):
        simulate(dynamics, lambda t, q, v: np.zeros(2), q, qdot, duration=1.0, dt=0.0)
    with pytest.raises(InputError, match=r"torque\(t=0\)"):
        simulate(dynamics, lambda t, q, v: np.zeros(3), q, qdot, duration=0.1, dt=0.01)
    with pytest.raises(InputError, match="coulomb_width"):
        ForwardDynamics(robot, coulomb_width=-1.0)
    with pytest.raises(InputError, match="dualv: parameters are for a model with 16 joints"):
        ForwardDynamics(robot, pardyn.load_robot("dualv").nominal_parameters)
