"""Predictive functional control (Vivas & Poignet 2003, section 3 and appendix).

Independent references:
* a small case computed by hand (below): double integrator ``F = [[1, 1], [0, 1]]``,
  ``G = (1/2, 1)``, ``C = (1, 0)``, step + ramp base functions, coincidence points
  ``h = (2, 3)``, ``alpha = 1/2``;
* scipy's ``cont2discrete`` (ZOH) and ``dlsim`` for the internal model and the base responses;
* closed-loop properties of PFC on a plant equal to its model: no static error under a
  constant output disturbance (independent-model structure), a ramp tracked without
  lag with the set-point anticipation;
* the feedback-linearized H4 with a perfect model: ``v`` of the inner loop reaches the joints.

Hand computation of the small case: responses from rest ``y_B1(2) = 2``, ``y_B1(3) = 4.5``
(step), ``y_B2(2) = 1/2``, ``y_B2(3) = 5/2`` (ramp ``u(i) = i``). The system is square, so
``v = R^T u_B(0) = Y^-1 e_1`` with ``Y = [[2, 4.5], [0.5, 2.5]]`` (det 2.75):
``v = (10/11, -2/11)``; ``k_0 = v . (1 - 1/4, 1 - 1/8) = 5.75/11``; ``k_1 = v . (2, 3) = 14/11``,
``k_2 = v . (4, 9) = 22/11 = 2``; ``F^2 - I = [[0, 2], [0, 0]]``, ``F^3 - I = [[0, 3], [0, 0]]``,
so ``v_x = -(10/11 (0, 2) - 2/11 (0, 3)) = (0, -14/11)``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import signal

from pardyn.control import JointReference
from pardyn.control.pfc import (
    PredictiveFunctionalControl,
    alpha_from_response_time,
    base_responses,
    error_coefficients,
    inner_loop_model,
    pfc_gains,
)
from pardyn.errors import InputError


def test_gains_of_the_hand_computed_case():
    f, g, c = np.array([[1.0, 1.0], [0.0, 1.0]]), np.array([0.5, 1.0]), np.array([1.0, 0.0])
    gains = pfc_gains(f, g, c, points=(2, 3), alpha=0.5, n_base=2, degree=2)
    np.testing.assert_allclose(base_responses(f, g, c, (2, 3), 2), [[2.0, 4.5], [0.5, 2.5]], rtol=1e-14)
    np.testing.assert_allclose(gains.v, [10 / 11, -2 / 11], rtol=1e-13)
    assert gains.k0 == pytest.approx(5.75 / 11, rel=1e-13)
    np.testing.assert_allclose(gains.km, [14 / 11, 2.0], rtol=1e-13)
    np.testing.assert_allclose(gains.vx, [0.0, -14 / 11], atol=1e-13)


def test_internal_model_and_base_responses_against_scipy():
    kp, kv, period = 50.0, 68.0, 1e-3
    f, g, c = inner_loop_model(kp, kv, period)
    a, b = np.array([[0.0, 1.0], [-kp, -kv]]), np.array([[0.0], [kp]])
    fd, gd, *_ = signal.cont2discrete((a, b, c[None, :], np.zeros((1, 1))), period, method="zoh")
    np.testing.assert_allclose(f, fd, atol=1e-14)
    np.testing.assert_allclose(g, gd[:, 0], atol=1e-14)
    points = (6, 12, 18)
    system = (fd, gd, c[None, :], np.zeros((1, 1)), period)
    steps = np.arange(19)
    for k, row in enumerate(base_responses(f, g, c, points, 3)):
        _, y, _ = signal.dlsim(system, (steps.astype(float) ** k)[:, None])
        np.testing.assert_allclose(row, y[list(points), 0], rtol=1e-10)


def test_error_extrapolation_coefficients():
    # e(i) = 3 + 2 i - 0.5 i^2 sampled at i = 0, -1, -2 -> e_1 = 2, e_2 = -0.5
    history = np.array([[3.0, 3.0 - 2.0 - 0.5, 3.0 - 4.0 - 2.0]])
    np.testing.assert_allclose(error_coefficients(history), [[2.0, -0.5]], atol=1e-14)
    np.testing.assert_allclose(error_coefficients(history[:, :2]), [[2.5]], atol=1e-14)


def run_on_model(law_gains, f, g, c, setpoint, *, disturbance=0.0, anticipation=None, steps=400):
    """PFC (eq. 30) on a plant equal to its internal model plus a constant output disturbance."""
    plant, model = np.zeros(2), np.zeros(2)
    errors = np.zeros(law_gains.degree + 1)
    outputs = []
    for n in range(steps):
        y = c @ plant + disturbance
        errors = np.concatenate([[y - c @ model], errors[:-1]])
        u = law_gains.k0 * (setpoint(n) - y) - error_coefficients(errors[None, :])[0] @ law_gains.km[:law_gains.degree]
        u += law_gains.vx @ model
        if anticipation is not None:
            u += anticipation(n)
        plant, model = f @ plant + g * u, f @ model + g * u
        outputs.append(y)
    return np.array(outputs)


def test_independent_model_rejects_a_constant_disturbance():
    f, g, c = inner_loop_model(50.0, 68.0, 1e-3)
    gains = pfc_gains(f, g, c, points=(6, 12, 18), alpha=alpha_from_response_time(18), n_base=3, degree=1)
    y = run_on_model(gains, f, g, c, lambda n: 1.0, disturbance=0.3)
    assert abs(y[-1] - 1.0) < 1e-9  # no static error although the model ignores the disturbance
    y = run_on_model(gains, f, g, c, lambda n: 1.0)
    # a step settles near the CLTR (18 ms) of the reference trajectory: 95 % within 2 CLTR
    assert y[17] > 0.8 and np.all(y[36:] > 0.95) and y.max() < 1.05


def test_ramp_tracked_with_anticipation():
    period = 1e-3
    f, g, c = inner_loop_model(50.0, 68.0, period)
    gains = pfc_gains(f, g, c, points=(6, 12, 18), alpha=alpha_from_response_time(18), n_base=3, degree=1)
    slope = 0.5  # rad/s
    ramp = lambda n: slope * n * period  # noqa: E731
    lagging = run_on_model(gains, f, g, c, ramp)
    tracked = run_on_model(gains, f, g, c, ramp, anticipation=lambda n: gains.km[0] * period * slope)
    final = slope * 399 * period
    assert abs(tracked[-1] - final) < 1e-6 < abs(lagging[-1] - final)


def test_bad_coincidence_points_are_refused():
    f, g, c = inner_loop_model(50.0, 68.0, 1e-3)
    with pytest.raises(InputError, match="coincidence points"):
        pfc_gains(f, g, c, points=(6, 12), alpha=0.8, n_base=3, degree=1)


def test_law_linearizes_the_h4(load):
    """With the nominal model, the torques give the joints the inner loop's v (eq. 36: yddot = v)."""
    from pardyn.dynamics.forward import ForwardDynamics

    robot = load("h4")
    law = PredictiveFunctionalControl(robot, limits=[1e6] * 4)
    q = robot.solve_inverse([0.01, 0.02, -0.36, 0.1]).q
    qdot = robot.differential.velocities_from_task(q, [0.1, -0.1, 0.2, 0.3])
    position, velocity = q[robot.actuated_indices], qdot[robot.actuated_indices]
    law.linearization.q = q.copy()
    target = position + 0.01
    tau = law.torques(position, velocity, JointReference(target, np.zeros(4), np.zeros(4)))
    acceleration = ForwardDynamics(robot).solve(q, qdot, tau).qddot[robot.actuated_indices]
    # replay the law's first command: the model started at the measured state
    gains = law.gains
    command = gains.k0 * 0.01 + np.column_stack([position, velocity]) @ gains.vx
    expected = law.kp * (command - position) - law.kv * velocity
    np.testing.assert_allclose(acceleration, expected, rtol=1e-8)
