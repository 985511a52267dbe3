"""Predictive functional control (Richalet) on the feedback-linearized robot (Vivas & Poignet 2003, sections 3, 4.3).

Structure (the paper's Fig. 6), per actuated joint, sampling period ``T``:

1. **Feedback linearization** (eqs. 31-36): ``Gamma = H + M v`` turns each joint into
   ``yddot = v`` (the computed-torque machinery of
   :class:`pardyn.control.computed_torque.ComputedTorque`, run with zero gains).
2. **Inner loop** stabilizing the double integrator (gains 50 and 68 in the paper):
   ``v = Kp (u - y_p) - Kv ydot_p``.
3. **Internal model** of that inner loop, the discretized (zero-order hold) system
   ``yddot = Kp (u - y) - Kv ydot``, state ``x_M = (y_M, ydot_M)``::

       x_M(n) = F_M x_M(n-1) + G_M u(n-1),   y_M(n) = C_M^T x_M(n)                eq. (19)

   run in parallel with the process (independent model).
4. **PFC law** (eq. 30)::

       u(n) = k_0 (c(n) - y_p(n)) - sum_m k_m e_m(n) + v_x^T x_M(n)  [+ k_1 T cdot + k_2 T^2 cddot / 2]

   with the reference trajectory ``c(n+i) - y_R(n+i) = alpha^i (c(n) - y_p(n))`` (eq. 20),
   ``alpha = exp(-3 T / CLTR)`` (the closed-loop response time CLTR is the time to 95 %
   of a step, Richalet 1993), polynomial base functions ``u_Bk(i) = i^(k-1)`` (eq. 25:
   step, ramp, parabola), coincidence points ``h_j`` (eq. 21) and the predicted error
   ``e_hat(n+i) = e(n) + sum_m e_m(n) i^m`` (eq. 29), ``e = y_p - y_M``, whose
   coefficients ``e_m`` are those of the polynomial of degree ``de`` through the last
   ``de + 1`` errors. The gains come from :func:`pfc_gains` (the paper's appendix).

   **Set-point anticipation** (bracketed term). The appendix's ``k_0`` takes the set point
   constant over the horizon (``y_R(n+h) - y_p(n) = (1 - alpha^h) eps(n)``). For tracking a
   known trajectory Richalet adds the set point's own increment ``c(n+h_j) - c(n)`` to the
   desired increments; with the set point extrapolated by its reference velocity and
   acceleration, ``c(n+h) - c(n) = cdot h T + cddot (h T)^2 / 2``, the extra term is
   ``v^T h T cdot + v^T h^2 T^2 cddot / 2``, i.e. ``k_1 T cdot + k_2 T^2 cddot / 2`` with
   the ``k_m`` of the appendix. ``anticipation=False`` gives the appendix's law alone.

Units: rad (m), s; ``u`` is a position set point for the inner loop; gains ``k_0`` and
``k_m`` are dimensionless, ``v_x`` (n_x,) per state unit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import expm

from pardyn.control import ControlLaw, JointReference, actuator_limits, finite_vector
from pardyn.control.computed_torque import ComputedTorque
from pardyn.errors import InputError

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot

__all__ = ["PFCGains", "PredictiveFunctionalControl", "alpha_from_response_time", "base_responses",
           "error_coefficients", "inner_loop_model", "pfc_gains"]


def alpha_from_response_time(response_periods: float) -> float:
    """``alpha = exp(-3 / CLTR)`` (CLTR in sampling periods): the reference trajectory of eq. (20) at 95 % after CLTR."""
    if not (math.isfinite(response_periods) and response_periods > 0.0):
        raise InputError(f"PFC: the closed-loop response time must be positive (periods), got {response_periods}")
    return math.exp(-3.0 / response_periods)


def inner_loop_model(kp: float, kv: float, period_s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(F_M, G_M, C_M)`` of eq. (19): ``yddot = kp (u - y) - kv ydot`` sampled with a zero-order hold.

    Shapes (2, 2), (2,), (2,); state ``(y, ydot)``. ``kp`` (1/s^2), ``kv`` (1/s), ``period_s`` (s).
    """
    if not (kp > 0.0 and kv >= 0.0 and period_s > 0.0):
        raise InputError(f"PFC internal model: need kp > 0, kv >= 0, period > 0; got {kp}, {kv}, {period_s}")
    continuous = np.zeros((3, 3))
    continuous[:2, :2] = [[0.0, 1.0], [-kp, -kv]]
    continuous[:2, 2] = [0.0, kp]
    discrete = expm(continuous * period_s)  # [[F, G], [0, 1]]: the exact ZOH discretization
    return discrete[:2, :2].copy(), discrete[:2, 2].copy(), np.array([1.0, 0.0])


def base_responses(f: np.ndarray, g: np.ndarray, c: np.ndarray, points: Sequence[int], n_base: int) -> np.ndarray:
    """``y_Bk(h_j)`` (n_base, n_h): the model's output at step ``h_j`` from rest under ``u(i) = i^(k-1)`` (eqs. 25, 28)."""
    horizon = max(points)
    steps = np.arange(horizon)
    inputs = np.array([steps.astype(float) ** k for k in range(n_base)])  # (n_base, horizon), 0^0 = 1
    state = np.zeros((n_base, f.shape[0]))
    out = np.zeros((n_base, len(points)))
    for i in range(1, horizon + 1):
        state = state @ f.T + np.outer(inputs[:, i - 1], g)
        for j, point in enumerate(points):
            if point == i:
                out[:, j] = state @ c
    return out


@dataclass(frozen=True)
class PFCGains:
    """Gains of eq. (30) (the paper's appendix) for one scalar internal model.

    Attributes:
        k0: gain on the tracking error ``c - y_p``.
        km: gains on the error-polynomial coefficients ``e_m``, m = 1..max(de, 2), shape (max(de, 2),)
            (``km[0]``, ``km[1]`` also serve the set-point anticipation).
        vx: model-compensation gains, shape (n_x,).
        v: ``R^T u_B(0)``, shape (n_h,).
        points: coincidence points ``h_j`` (sampling periods); alpha: of eq. (20); degree: ``de``.
    """

    k0: float
    km: np.ndarray
    vx: np.ndarray
    v: np.ndarray
    points: tuple[int, ...]
    alpha: float
    degree: int


def pfc_gains(
    f: np.ndarray, g: np.ndarray, c: np.ndarray, *, points: Sequence[int], alpha: float, n_base: int, degree: int,
) -> PFCGains:
    """The appendix: ``R = (sum_j y_B(h_j) y_B(h_j)^T)^-1 [y_B(h_1) .. y_B(h_nh)]``, ``v = R^T u_B(0)``,
    ``k_0 = v^T (1 - alpha^h_j)_j``, ``k_m = v^T (h_j^m)_j``, ``v_x = -[C^T (F^h_j - I)]_j^T v``.

    Args:
        f, g, c: ``F_M`` (n_x, n_x), ``G_M`` (n_x,), ``C_M`` (n_x,) of eq. (19).
        points: coincidence points ``h_j`` >= 1 (sampling periods), at least ``n_base``.
        alpha: of eq. (20), in (0, 1). n_base: base functions ``i^(k-1)``, k = 1..n_base. degree: ``de`` >= 0.

    Raises:
        InputError: fewer coincidence points than base functions, or a singular ``sum y_B y_B^T``.
    """
    points = tuple(int(p) for p in points)
    if n_base < 1 or len(points) < n_base or min(points) < 1 or len(set(points)) != len(points):
        raise InputError(f"PFC: need distinct coincidence points >= 1, at least as many as the {n_base} base "
                         f"functions; got {list(points)}")
    if not 0.0 < alpha < 1.0 or degree < 0:
        raise InputError(f"PFC: alpha must be in (0, 1) and the error degree >= 0; got {alpha}, {degree}")
    responses = base_responses(f, g, c, points, n_base)  # (n_base, n_h)
    normal = responses @ responses.T
    if np.linalg.cond(normal) > 1e14:
        raise InputError(f"PFC: the base responses at {list(points)} are not independent (choose other points)")
    r = np.linalg.solve(normal, responses)  # (n_base, n_h)
    u0 = np.zeros(n_base)
    u0[0] = 1.0  # u_Bk(0) = 0^(k-1)
    v = r.T @ u0  # (n_h,)
    h = np.array(points, dtype=float)
    identity = np.eye(f.shape[0])
    rows = np.array([c @ (np.linalg.matrix_power(f, p) - identity) for p in points])  # (n_h, n_x)
    return PFCGains(
        k0=float(v @ (1.0 - alpha**h)),
        km=np.array([v @ h**m for m in range(1, max(degree, 2) + 1)]),
        vx=-(rows.T @ v),
        v=v,
        points=points,
        alpha=alpha,
        degree=degree,
    )


def error_coefficients(history: np.ndarray, degree: int | None = None) -> np.ndarray:
    """``e_m`` (n_j, de), m = 1..de, of the polynomial of degree ``de`` fitted to ``history`` (n_j, W).

    ``history[:, k]`` is the error ``k`` periods ago (``history[:, 0] = e(n)``), ``W >= de + 1``:
    the polynomial through the points (i = 0, -1, .., -de) when ``W = de + 1`` (default
    ``de = W - 1``), its least-squares fit over the ``W`` points otherwise (a smoother
    slope under encoder quantization). Eq. (29) then extrapolates ``e(n) + sum_m e_m i^m``.
    """
    width = history.shape[1]
    degree = width - 1 if degree is None else degree
    if degree == 0:
        return np.zeros((history.shape[0], 0))
    if width < degree + 1:
        raise InputError(f"PFC: {width} past errors cannot fit a polynomial of degree {degree}")
    steps = -np.arange(width, dtype=float)
    vandermonde = steps[:, None] ** np.arange(degree + 1)[None, :]  # (W, de+1)
    return np.linalg.lstsq(vandermonde, history.T, rcond=None)[0].T[:, 1:]


class PredictiveFunctionalControl(ControlLaw):
    """PFC of the module docstring on the actuated joints, with the robot's model for the linearization.

    Args:
        robot: the robot.
        params: model parameters of the feedback linearization (nominal by default).
        kp, kv: inner-loop gains (1/s^2, 1/s): 50, 68 in the paper.
        response_periods: CLTR in sampling periods (18).
        points: coincidence points ``h_j`` (periods); the paper says three but not which:
            (6, 12, 18) by default, the last one at CLTR.
        n_base: base functions (3: step, ramp, parabola).
        degree: degree ``de`` of the error extrapolation (eq. 29); 1.
        error_window: past errors the ``e_m`` are fitted to (``de + 1``: the exact polynomial; more:
            least squares, less sensitive to encoder quantization); 20. With the paper's
            settings ``k_1 = 11453``: with the exact slope (window 2) one encoder count
            (4.8e-5 rad at 2^17 counts/rev) moves ``u`` by 0.55 rad and ``v`` by 27 rad/s^2.
        period_s: sampling period (1 ms); the law must be called once per period.
        anticipation: add the set-point anticipation term.
        limits: torque limits (the URDF's by default).

    Stateful: the internal models ``x_M`` (n_a, 2) and the last ``error_window`` errors; :meth:`reset`.
    """

    minimum_norm = True

    def __init__(
        self,
        robot: Robot,
        params: DynamicParameters | None = None,
        *,
        kp: float = 50.0,
        kv: float = 68.0,
        response_periods: float = 18.0,
        points: Sequence[int] = (6, 12, 18),
        n_base: int = 3,
        degree: int = 1,
        error_window: int = 20,
        period_s: float = 1e-3,
        anticipation: bool = True,
        limits: Sequence[float] | np.ndarray | None = None,
    ) -> None:
        self.robot = robot
        self.limits = actuator_limits(robot, limits)
        self.joints = tuple(robot.actuated_names)
        self.kp, self.kv, self.period_s = float(kp), float(kv), float(period_s)
        self.anticipation = anticipation
        self.error_window = int(error_window)
        if self.error_window < degree + 1:
            raise InputError(f"PFC: error_window {self.error_window} < degree + 1 = {degree + 1}")
        self.f, self.g, self.c = inner_loop_model(self.kp, self.kv, self.period_s)
        self.gains = pfc_gains(self.f, self.g, self.c, points=points, alpha=alpha_from_response_time(response_periods),
                               n_base=n_base, degree=degree)
        self.linearization = ComputedTorque(robot, params, kp=0.0, kd=0.0, limits=self.limits)
        self.model_state: np.ndarray | None = None  # x_M (n_a, 2)
        self.errors: np.ndarray | None = None  # (n_a, de + 1), newest first

    def reset(self, start: np.ndarray | None = None) -> None:
        """Forget the internal models (re-initialized on the next call at the measured joints)."""
        self.linearization.reset(start)
        self.model_state = None
        self.errors = None

    def command(self, position: np.ndarray, velocity: np.ndarray, reference: JointReference) -> np.ndarray:
        """The PFC output ``u(n)`` (n_a,) of eq. (30) and the model update of eq. (19)."""
        gains = self.gains
        size = self.size
        target = finite_vector(reference.position, size, "PFC reference positions")
        if self.model_state is None:
            self.model_state = np.column_stack([position, velocity])
            self.errors = np.zeros((size, self.error_window))
        error = position - self.model_state @ self.c  # e(n) = y_p - y_M (n_a,)
        self.errors = np.column_stack([error, self.errors[:, :-1]])
        coefficients = error_coefficients(self.errors, gains.degree)  # (n_a, de)
        u = (gains.k0 * (target - position) - coefficients @ gains.km[: gains.degree]
             + self.model_state @ gains.vx)  # eq. (30)
        if self.anticipation:
            rate = finite_vector(reference.velocity, size, "PFC reference velocities")
            acceleration = finite_vector(reference.acceleration, size, "PFC reference accelerations")
            u = u + gains.km[0] * self.period_s * rate + 0.5 * gains.km[1] * self.period_s**2 * acceleration
        self.model_state = self.model_state @ self.f.T + np.outer(u, self.g)  # eq. (19)
        return u

    def describe(self) -> str:
        gains = self.gains
        return (f"PFC, inner kp {self.kp:g}, kv {self.kv:g}, alpha {gains.alpha:.4f}, points {list(gains.points)}, "
                f"k0 {gains.k0:.6g}, degree {gains.degree}")

    def unsaturated(self, position: np.ndarray, velocity: np.ndarray, reference: JointReference) -> np.ndarray:
        u = self.command(position, velocity, reference)
        v = self.kp * (u - position) - self.kv * velocity  # inner loop (Fig. 6)
        return self.linearization.unsaturated(position, velocity, JointReference(position, velocity, v))  # eq. (35)
