"""Closed-loop inverse dynamics and the reduced model against independent references.

* the DualV paper's closed forms of the tree (eq. 51, legs) and of the free platform (eq. 52);
* the 3-RRR paper's Lagrangian model (eqs. 48, 52, 54-58), re-derived (its printed
  matrices have typos, see ``_rrr3_paper_torques``) with the paper's own geometry;
* power balance along a trajectory with pinocchio's energies;
* finite differences of the closure Jacobian, the velocity map and the task inertia.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pinocchio as pin
import pytest
from scipy.linalg import null_space

import pardyn
from pardyn.dynamics.closed_loop import (
    ClosedLoopModel,
    velocity_map_derivative,
)
from pardyn.dynamics.inverse import InverseDynamics, task_trajectory_states
from pardyn.description.config import Closure
from pardyn.dynamics.parameters import Drive
from pardyn.errors import ConvergenceError, InputError
from pardyn.kinematics.closure import LoopClosures

ROBOTS = ("five_bar", "dualv", "rrr3", "wu3r", "wu3n")
PATHS = ("python", "compiled")  # pardyn.kernels: the Python reference and the generated C


def _state(robot, rng, spread=0.03):
    """A random closed state near home: q, qdot, qddot (nv,) and xdot, xddot (n,)."""
    n = len(robot.task_indices)
    q = robot.solve_inverse(robot.home[robot.task_indices] + rng.uniform(-spread, spread, n)).q
    task_velocity, task_acceleration = rng.normal(size=n), rng.normal(size=n)
    qdot = robot.differential.velocities_from_task(q, task_velocity)
    qddot = robot.differential.accelerations_from_task(q, qdot, task_acceleration)
    return q, qdot, qddot, task_velocity, task_acceleration


def _trajectory(robot, t):
    """A smooth task trajectory around home: x, xdot, xddot at time t (s)."""
    n = len(robot.task_indices)
    amplitude = np.array([0.03, 0.02, 0.1][:n])
    omega = np.array([2.0, 3.0, 1.5][:n])
    phase = np.array([0.3, 1.1, 0.5][:n])
    home = robot.home[robot.task_indices]
    angle = omega * t + phase
    return home + amplitude * np.sin(angle), amplitude * omega * np.cos(angle), -amplitude * omega**2 * np.sin(angle)


def _trajectory_state(robot, t, start):
    x, xdot, xddot = _trajectory(robot, t)
    q = robot.solve_inverse(x, start=start).q
    qdot = robot.differential.velocities_from_task(q, xdot)
    return q, qdot, robot.differential.accelerations_from_task(q, qdot, xddot), xdot, xddot


# ------------------------------------------------------- DualV closed forms
def _dualv_random_parameters(robot, rng):
    """Random leg, platform and payload parameters, plus friction on the passive leg joints."""
    params = robot.nominal_parameters
    values = {name: rng.uniform(0.01, 0.5) * rng.choice([-1, 1]) for name in params.names
              if not name.startswith(("m_", "ia_", "fv_", "fs_"))}
    values.update({name: rng.uniform(0.2, 2.0) for name in params.names if name.startswith(("m_", "ia_", "fv_", "fs_"))})
    params = params.with_values(values)
    extra = tuple(
        Drive(joint=name, index=robot.joint_names.index(name), fv=rng.uniform(0.01, 0.1), fs=rng.uniform(0.01, 0.2),
              offset=0.0)
        for i in range(1, 5) for name in (f"leg{i}_joint2", f"leg{i}_joint3")
    )
    return dataclasses.replace(params, drives=params.drives + extra)


def test_dualv_leg_tree_model_eq51(load):
    """Eq. (51), a planar 3R leg with a massless last body, derived again by Lagrange for
    pardyn's link frames (x along the link, z on the joint axis). Differences with the print:
    the terms in ``(2 q1 + q2) cos q2`` multiply accelerations (printed as velocities), the
    ``my_2`` terms have the opposite sign (the paper's y axes), and the offset of eq. (5) is added."""
    robot = load("dualv")
    rng = np.random.default_rng(51)
    params = _dualv_random_parameters(robot, rng)
    inverse = InverseDynamics(robot, params)
    values = params.as_dict()
    d2 = 0.28  # Table 1
    q, qdot, qddot = (rng.uniform(-2, 2, robot.nv) for _ in range(3))  # the tree model needs no closure
    tree = inverse.tree_torques(q, qdot, qddot)
    for i in range(1, 5):
        j1, j2, j3 = (robot.joint_names.index(f"leg{i}_joint{k}") for k in (1, 2, 3))
        dq1, dq2, dq3 = qdot[[j1, j2, j3]]
        ddq1, ddq2 = qddot[[j1, j2]]
        c2, s2 = math.cos(q[j2]), math.sin(q[j2])
        v = {p: values[f"{p}_leg{i}_link2"] for p in ("zz", "mx", "my", "m")}
        zz1, ia1 = values[f"zz_leg{i}_link1"], values[f"ia_leg{i}_joint1"]
        drive = {d.joint: d for d in params.drives}

        def friction(index, name, velocity):
            return drive[name].fv * velocity + drive[name].fs * np.sign(velocity) + drive[name].offset

        tau1 = ((zz1 + ia1 + d2**2 * v["m"]) * ddq1 + v["zz"] * (ddq1 + ddq2)
                + d2 * v["mx"] * ((2 * ddq1 + ddq2) * c2 - dq2 * (2 * dq1 + dq2) * s2)
                + d2 * v["my"] * (-(2 * ddq1 + ddq2) * s2 - dq2 * (2 * dq1 + dq2) * c2)
                + friction(j1, f"leg{i}_joint1", dq1))
        tau2 = (v["zz"] * (ddq1 + ddq2) + d2 * v["mx"] * (ddq1 * c2 + dq1**2 * s2)
                + d2 * v["my"] * (-ddq1 * s2 + dq1**2 * c2) + friction(j2, f"leg{i}_joint2", dq2))
        tau3 = friction(j3, f"leg{i}_joint3", dq3)
        np.testing.assert_allclose(tree[[j1, j2, j3]], [tau1, tau2, tau3], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernels", PATHS)
def test_dualv_platform_model_eq52(load, kernels):
    robot = load("dualv", kernels)
    rng = np.random.default_rng(52)
    params = _dualv_random_parameters(robot, rng)
    values = params.as_dict()
    q, qdot, qddot = (rng.uniform(-2, 2, robot.nv) for _ in range(3))
    tree = InverseDynamics(robot, params).tree_torques(q, qdot, qddot)
    x, y, phi = robot.task_indices
    ddx, ddy, ddphi, dphi = qddot[x], qddot[y], qddot[phi], qdot[phi]
    c, s = math.cos(q[phi]), math.sin(q[phi])
    m, mx, my, zz = (values[f"{p}_platform"] + values[f"{p}_payload"] for p in ("m", "mx", "my", "zz"))
    expected = [
        m * ddx - mx * (ddphi * s + dphi**2 * c) + my * (-ddphi * c + dphi**2 * s),
        m * ddy + mx * (ddphi * c - dphi**2 * s) - my * (ddphi * s + dphi**2 * c),
        zz * ddphi + mx * (ddy * c - ddx * s) - my * (ddy * s + ddx * c),
    ]
    np.testing.assert_allclose(tree[[x, y, phi]], expected, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- 3-RRR
RRR3_BASES = np.array([[-0.15, -0.84], [0.69, -0.17], [-0.66, 0.21]])  # section 4.8
RRR3 = {"L": 0.5, "l": 0.4, "lcL": 0.25, "lcl": 0.2, "mL": 0.4239, "ml": 0.3391, "IL": 0.0088, "Il": 0.0045,
        "d": 0.1732, "mp": 1.3576, "mc": 0.5, "Ip": 0.0085, "Ic": 8.3333e-4, "ms": 0.0656, "Is": 3.687e-6, "g": 9.81}


def _unit(angle):
    return np.array([math.cos(angle), math.sin(angle)])


def _rrr3_paper_torques(qa, qp, dqa, dqp, ddqa, ddqp, x, xddot):
    """Eq. (58) with eqs. (52), (54)-(57) re-derived from the Lagrangian (48) and (46).

    Corrections to the printed matrices: the distal link's terms use its own com
    distance l_cl (printed l_cL in d_a, d_14, d_p); the sensor, fixed to the distal link,
    adds I_s to d_14 and d_p too; c_41 = -h q_a (printed +h q_a); g_p = m_l l_cl g cos(q_a + q_p)
    (printed m_l l_cL g (cos q_a + cos q_p)); G_x carries the load (m_p + m_c) g.
    """
    p = RRR3
    theta = x[2]
    size = 6
    mass, coriolis, gravity = np.zeros((size, size)), np.zeros((size, size)), np.zeros(size)
    jac_q = np.zeros((size, size))
    jac_x = np.zeros((size, 3))
    for i in range(3):
        a, b = 2 * i, 2 * i + 1  # (q_a_i, q_p_i) in q_r
        cp = math.cos(qp[i])
        distal = p["Il"] + p["Is"]
        mass[a, a] = (p["IL"] + p["mL"] * p["lcL"]**2 + p["ms"] * p["L"]**2
                      + p["ml"] * (p["L"]**2 + p["lcl"]**2 + 2 * p["L"] * p["lcl"] * cp) + distal)
        mass[a, b] = mass[b, a] = p["ml"] * (p["lcl"]**2 + p["L"] * p["lcl"] * cp) + distal
        mass[b, b] = p["ml"] * p["lcl"]**2 + distal
        h = -p["ml"] * p["L"] * p["lcl"] * math.sin(qp[i])
        coriolis[a, a], coriolis[a, b], coriolis[b, a] = h * dqp[i], h * (dqa[i] + dqp[i]), -h * dqa[i]
        absolute = qa[i] + qp[i]
        gravity[a] = ((p["mL"] * p["lcL"] + (p["ml"] + p["ms"]) * p["L"]) * p["g"] * math.cos(qa[i])
                      + p["ml"] * p["lcl"] * p["g"] * math.cos(absolute))
        gravity[b] = p["ml"] * p["lcl"] * p["g"] * math.cos(absolute)
        # Gamma_i = C_i(q) - C_i(x) = A_i + L u(q_a) + l u(q_a + q_p) - P + d u(theta + phi_i)   (eq. 27)
        du_a, du_ap = _unit(qa[i] + math.pi / 2), _unit(absolute + math.pi / 2)
        jac_q[2 * i:2 * i + 2, a] = p["L"] * du_a + p["l"] * du_ap
        jac_q[2 * i:2 * i + 2, b] = p["l"] * du_ap
        phi_i = (4 * i + 1) * math.pi / 6
        jac_x[2 * i:2 * i + 2, :2] = -np.eye(2)
        jac_x[2 * i:2 * i + 2, 2] = p["d"] * _unit(theta + phi_i + math.pi / 2)
    to_legs = -np.linalg.solve(jac_q, jac_x)  # qdot_r = to_legs xdot
    transform = to_legs @ np.linalg.inv(to_legs[0::2])  # T: qdot_r = T qdot_a, eq. (41)
    constraint = -np.linalg.pinv(jac_x) @ jac_q  # J_C, eq. (39)
    inertia_x = np.diag([p["mp"] + p["mc"]] * 2 + [p["Ip"] + p["Ic"]])
    gravity_x = np.array([0.0, (p["mp"] + p["mc"]) * p["g"], 0.0])
    ddq = np.ravel(np.column_stack([ddqa, ddqp]))
    dq = np.ravel(np.column_stack([dqa, dqp]))
    legs = mass @ ddq + coriolis @ dq + gravity
    return transform.T @ (legs + constraint.T @ (inertia_x @ xddot + gravity_x))


def test_rrr3_against_the_papers_model_eq58(load):
    robot = load("rrr3")
    inverse = InverseDynamics(robot)
    model = ClosedLoopModel(robot)
    rng = np.random.default_rng(58)
    active = robot.actuated_indices
    passive = robot.sensed_indices
    measured = robot.measured_indices
    for _ in range(5):
        q, qdot, qddot, xdot, xddot = _state(robot, rng, spread=0.1)
        x = q[robot.task_indices]
        reference = _rrr3_paper_torques(q[active], q[passive], qdot[active], qdot[passive],
                                        qddot[active], qddot[passive], x, xddot)
        np.testing.assert_allclose(inverse.torques(q, qdot, qddot), reference, rtol=1e-9, atol=1e-10)
        extended = model.measured_space(q, qdot)  # D (3, 6) on [q_a, q_s]
        assert extended.inertia.shape == (3, 6)
        np.testing.assert_allclose(extended.torques(qddot[measured], qdot[measured]), reference, rtol=1e-9, atol=1e-10)
        classical = model.actuated_space(q, qdot)
        np.testing.assert_allclose(classical.torques(qddot[active], qdot[active]), reference, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(classical.inertia, classical.inertia.T, atol=1e-12)
        assert np.all(np.linalg.eigvalsh(classical.inertia) > 0)
        # the maps of eqs. (12), (13), (15)
        np.testing.assert_allclose(classical.T @ qdot[active], qdot, atol=1e-10)
        np.testing.assert_allclose(extended.T_q @ qdot[measured], qdot, atol=1e-10)
        np.testing.assert_allclose(extended.J_C @ qdot[inverse.robot.differential.leg_indices], xdot, atol=1e-10)


# ------------------------------------------------------------ power balance
def _energy(model, data, q, qdot):
    return pin.computeKineticEnergy(model, data, q, qdot) + pin.computePotentialEnergy(model, data, q)


@pytest.mark.parametrize("kernels", PATHS)
@pytest.mark.parametrize("name", ROBOTS)
def test_power_balance_along_a_trajectory(load, name, kernels):
    """tau_a . qdot_a = d/dt (kinetic + potential energy) + friction power (pinocchio's energies,
    rotor inertia included; the time derivative by central differences)."""
    robot = load(name, kernels)
    params = robot.nominal_parameters
    if name == "dualv":
        params = params.with_values({"offset_leg2_joint1": 0.15, "offset_leg4_joint1": -0.1})
    inverse = InverseDynamics(robot, params)
    data = inverse.model.createData()
    step = 1e-5  # central differences: error ~ step^2
    q = robot.home
    for t in (0.2, 0.9, 1.7):
        q, qdot, qddot, _, _ = _trajectory_state(robot, t, q)
        torques = inverse.torques(q, qdot, qddot)
        power = torques @ qdot[robot.actuated_indices]
        after = _trajectory_state(robot, t + step, q)
        before = _trajectory_state(robot, t - step, q)
        energy_rate = (_energy(inverse.model, data, *after[:2]) - _energy(inverse.model, data, *before[:2])) / (2 * step)
        friction = inverse.friction_torques(qdot) @ qdot
        # relative to the power each actuator handles (the total crosses zero)
        scale = max(np.abs(torques) @ np.abs(qdot[robot.actuated_indices]), abs(energy_rate), abs(friction))
        assert abs(power - energy_rate - friction) <= 1e-6 * scale, (t, power, energy_rate, friction)
        if inverse.redundancy:  # internal stress does no work
            stressed = inverse.torques(q, qdot, qddot, internal_stress=[3.0, -1.0, 2.0, 0.5])
            assert stressed @ qdot[robot.actuated_indices] == pytest.approx(power, rel=1e-10, abs=1e-12)


# ------------------------------------------------------ redundancy (DualV)
@pytest.mark.parametrize("kernels", PATHS)
def test_internal_stress_and_the_eq50_projection(load, kernels):
    robot = load("dualv", kernels)
    inverse = InverseDynamics(robot)
    rng = np.random.default_rng(50)
    q, qdot, qddot, _, _ = _state(robot, rng)
    jacobian = robot.differential.task_velocity_map(q)[robot.actuated_indices]
    basis = null_space(jacobian.T)  # u_2 of eq. (50), by SVD
    assert basis.shape == (4, 1)
    minimum = inverse.torques(q, qdot, qddot)
    stress = np.array([2.0, -1.0, 0.5, 3.0])
    stressed = inverse.torques(q, qdot, qddot, internal_stress=stress)
    np.testing.assert_allclose(jacobian.T @ stressed, jacobian.T @ minimum, atol=1e-10)
    np.testing.assert_allclose(stressed - minimum, basis @ (basis.T @ stress), atol=1e-10)
    assert abs(basis[:, 0] @ minimum) < 1e-10  # no internal stress
    projected = stressed - (basis[:, 0] @ stressed) * basis[:, 0]  # eq. (50)
    np.testing.assert_allclose(projected, minimum, atol=1e-10)
    # the minimum-norm torque solves J^T tau = W^T tau_t, as np.linalg.lstsq does
    tree = inverse.tree_torques(q, qdot, qddot)
    velocity_map = robot.differential.task_velocity_map(q)
    np.testing.assert_allclose(minimum, np.linalg.lstsq(jacobian.T, velocity_map.T @ tree, rcond=None)[0], atol=1e-10)


def test_internal_stress_errors(load):
    rng = np.random.default_rng(0)
    robot = load("rrr3")
    q, qdot, qddot, _, _ = _state(robot, rng)
    with pytest.raises(InputError, match="no actuation redundancy"):
        InverseDynamics(robot).torques(q, qdot, qddot, internal_stress=[1.0, 0.0, 0.0])
    dualv = load("dualv")
    q, qdot, qddot, _, _ = _state(dualv, rng)
    with pytest.raises(InputError, match="expected 4 finite values"):
        InverseDynamics(dualv).torques(q, qdot, qddot, internal_stress=[1.0, 0.0])


@pytest.mark.parametrize("name", ROBOTS)
def test_batch_and_task_paths_agree_with_the_single_state(load, name):
    robot = load(name)
    inverse = InverseDynamics(robot)
    rng = np.random.default_rng(7)
    states = [_state(robot, rng) for _ in range(4)]
    q, qdot, qddot = (np.array([s[k] for s in states]) for k in range(3))
    stress = rng.normal(size=(4, inverse.n_actuated)) if inverse.redundancy else None
    batch = inverse.torques_batch(q, qdot, qddot, internal_stress=stress)
    for k, (qk, vk, ak, xdot, xddot) in enumerate(states):
        s = None if stress is None else stress[k]
        single = inverse.torques(qk, vk, ak, internal_stress=s)
        np.testing.assert_allclose(batch[k], single, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(inverse.torques_from_task(qk, xdot, xddot, internal_stress=s), single,
                                   rtol=1e-10, atol=1e-10)


def test_regrouped_parameters_give_the_same_torques(load):
    """zz_1R = zz_1 + d_2^2 m_2 and m_2 = 0 (horizontal plane, eq. 51) is dynamically the same
    robot; pinocchio cannot hold a massless link with first moments, the regressor takes over."""
    robot = load("dualv")
    nominal = robot.nominal_parameters
    values = nominal.as_dict()
    regrouped = {}
    for i in range(1, 5):
        regrouped[f"zz_leg{i}_link1"] = values[f"zz_leg{i}_link1"] + 0.28**2 * values[f"m_leg{i}_link2"]
        regrouped[f"m_leg{i}_link2"] = 0.0
    base = nominal.with_values(regrouped)
    reference, inverse = InverseDynamics(robot, nominal), InverseDynamics(robot, base)
    assert reference.uses_rnea and not inverse.uses_rnea
    rng = np.random.default_rng(9)
    for _ in range(3):
        q, qdot, qddot, _, _ = _state(robot, rng)
        np.testing.assert_allclose(inverse.torques(q, qdot, qddot), reference.torques(q, qdot, qddot),
                                   rtol=1e-12, atol=1e-12)
    with pytest.raises(InputError, match="rigid bodies"):
        ClosedLoopModel(robot, base)


# ------------------------------------------------------- reduced model terms
@pytest.mark.parametrize("name", ROBOTS)
def test_closure_jacobian_rate_matches_finite_differences(load, name):
    robot = load(name)
    rng = np.random.default_rng(11)
    q, qdot, _, _, _ = _state(robot, rng)
    h = 1e-6
    numeric = (robot.closures.jacobian(q + h * qdot) - robot.closures.jacobian(q - h * qdot)) / (2 * h)
    rate = robot.closures.jacobian_and_rate(q, qdot)[1]
    np.testing.assert_allclose(rate, numeric, atol=1e-8)
    jacobian, same_rate = robot.closures.jacobian_and_rate(q, qdot)
    np.testing.assert_array_equal(jacobian, robot.closures.jacobian(q))
    np.testing.assert_array_equal(same_rate, rate)
    np.testing.assert_allclose(rate @ qdot, robot.closures.drift(q, qdot), atol=1e-12)


def test_distance_closure_rate_matches_finite_differences(load):
    """A massless rod between two frames (no shipped robot uses one): K and Kdot anywhere."""
    model = load("dualv").model
    closures = LoopClosures(model, [Closure(name="rod", frames=("leg1_B", "platform_c3"), type="distance",
                                            components=(), length=0.3)])
    rng = np.random.default_rng(12)
    q, qdot = rng.uniform(-1, 1, model.nv), rng.normal(size=model.nv)
    h = 1e-6
    numeric = (closures.jacobian(q + h * qdot) - closures.jacobian(q - h * qdot)) / (2 * h)
    jacobian, rate = closures.jacobian_and_rate(q, qdot)
    np.testing.assert_allclose(jacobian, closures.jacobian(q), atol=1e-14)
    np.testing.assert_allclose(rate, numeric, atol=1e-8)
    np.testing.assert_allclose(rate @ qdot, closures.drift(q, qdot), atol=1e-12)


@pytest.mark.parametrize("name", ROBOTS)
def test_task_space_model(load, name):
    """Gamma = M_x xddot + C_x xdot + g_x + f_x; Wdot and Mdot_x by central differences in time;
    Mdot_x - 2 C_x skew-symmetric."""
    robot = load(name)
    model = ClosedLoopModel(robot)
    inverse = InverseDynamics(robot)
    t, h = 0.6, 1e-5
    q, qdot, qddot, xdot, xddot = _trajectory_state(robot, t, robot.home)
    terms = model.task_space(q, qdot)
    velocity_map = robot.differential.task_velocity_map(q)
    np.testing.assert_allclose(terms.forces(xddot, xdot), velocity_map.T @ inverse.tree_torques(q, qdot, qddot),
                               rtol=1e-10, atol=1e-10)
    after = _trajectory_state(robot, t + h, q)
    before = _trajectory_state(robot, t - h, q)
    map_rate = (robot.differential.task_velocity_map(after[0]) - robot.differential.task_velocity_map(before[0])) / (2 * h)
    np.testing.assert_allclose(terms.velocity_map_rate, map_rate, atol=1e-7)
    np.testing.assert_allclose(velocity_map_derivative(robot, q, qdot) @ xdot,
                               robot.differential.acceleration_bias(q, qdot), atol=1e-12)
    inertia_rate = (model.task_space(*after[:2]).inertia - model.task_space(*before[:2]).inertia) / (2 * h)
    skew = inertia_rate - 2 * terms.coriolis
    np.testing.assert_allclose(skew, -skew.T, atol=1e-7 * max(1.0, np.abs(inertia_rate).max()))
    np.testing.assert_allclose(terms.inertia, terms.inertia.T, atol=1e-12)
    assert np.all(np.linalg.eigvalsh(terms.inertia) > 0)


@pytest.mark.parametrize("name", ROBOTS)
def test_actuated_model_reproduces_the_inverse_dynamics(load, name):
    robot = load(name)
    model = ClosedLoopModel(robot)
    inverse = InverseDynamics(robot)
    rng = np.random.default_rng(13)
    q, qdot, qddot, _, _ = _state(robot, rng)
    a = robot.actuated_indices
    terms = model.actuated_space(q, qdot)
    np.testing.assert_allclose(terms.torques(qddot[a], qdot[a]), inverse.torques(q, qdot, qddot), rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------- states
def test_task_trajectory_states(load):
    robot = load("dualv")
    times = np.linspace(0.0, 0.5, 6)
    x, xdot, xddot = (np.array([_trajectory(robot, t)[k] for t in times]) for k in range(3))
    q, qdot, qddot = task_trajectory_states(robot, x, xdot, xddot)
    assert q.shape == qdot.shape == qddot.shape == (6, robot.nv)
    np.testing.assert_allclose(q[:, robot.task_indices], x, atol=1e-12)
    assert max(np.abs(robot.closures.residual(sample)).max() for sample in q) < 1e-10
    far = x.copy()
    far[3, 0] = 3.0
    with pytest.raises(ConvergenceError, match="sample 3"):
        task_trajectory_states(robot, far, xdot, xddot)


def test_robot_model_is_left_untouched():
    robot = pardyn.load_robot("rrr3")
    before = robot.model.gravity.linear.copy()
    InverseDynamics(robot)
    ClosedLoopModel(robot)
    np.testing.assert_array_equal(robot.model.gravity.linear, before)
