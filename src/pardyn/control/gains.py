"""Controller gains: every gain helper of pardyn.

* :func:`pd_gains_from_bandwidth`: joint PD gains from a desired closed-loop
  bandwidth and damping (Briot et al. 2015, section 5.1);
* :func:`ctc_gains`: the gains of a computed-torque error dynamics of given
  natural frequency and damping;
* :func:`gains_from_step_response`: that natural frequency and damping from a
  step response's overshoot and peak time (Zubizarreta et al. 2010, section 4.8).

PD from a bandwidth: each actuator's tracking error is given the dynamics of a second-order system
of natural pulsation ``omega = 2 pi f_c`` and damping ``xi``:

    J_i e'' + Kd_i e' + Kp_i e = 0,   Kp_i = J_i omega^2,   Kd_i = 2 xi J_i omega

with ``J_i`` the inertia seen by actuator ``i`` at a configuration: the
diagonal of ``D_a = J^+T M_x J^+`` (``M_x`` the task-space inertia, drives
included; ``J = W[actuated]``, eq. 20; ``J^+`` its pseudo-inverse, eq. 22),
the kinetic energy written in actuated velocities.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pardyn.errors import InputError

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot

__all__ = ["actuated_inertia", "ctc_gains", "gains_from_step_response", "pd_gains_from_bandwidth"]


def actuated_inertia(robot: Robot, params: DynamicParameters | None = None, q: np.ndarray | None = None) -> np.ndarray:
    """``D_a = J^+T M_x J^+`` (n_a, n_a) at ``q`` (home by default), kg m^2 (or kg)."""
    from pardyn.dynamics.closed_loop import ClosedLoopModel  # noqa: PLC0415 - pinocchio-heavy

    q = robot.home if q is None else q
    task = ClosedLoopModel(robot, params).task_space(q, np.zeros(robot.nv))
    jacobian = task.velocity_map[robot.actuated_indices]  # (n_a, n)
    pseudo_inverse = np.linalg.pinv(jacobian)  # (n, n_a)
    return pseudo_inverse.T @ task.inertia @ pseudo_inverse


def pd_gains_from_bandwidth(
    robot: Robot,
    *,
    bandwidth_hz: float,
    damping: float = 0.7,
    params: DynamicParameters | None = None,
    q: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(Kp, Kd)`` (n_a,) each, N m/rad and N m s/rad, for the bandwidth ``f_c`` (Hz) and damping ``xi``."""
    if not (bandwidth_hz > 0.0 and math.isfinite(bandwidth_hz)) or not damping > 0.0:
        raise InputError(f"bandwidth ({bandwidth_hz} Hz) and damping ({damping}) must be positive")
    inertia = np.diag(actuated_inertia(robot, params, q))
    omega = 2 * math.pi * bandwidth_hz
    return inertia * omega**2, 2 * damping * inertia * omega


def ctc_gains(natural_frequency_hz: float, damping: float = 1.0) -> tuple[float, float]:
    """``(Kp, Kv) = (w^2, 2 xi w)``, ``w = 2 pi f`` (1/s^2, 1/s): error dynamics ``e'' + Kv e' + Kp e = 0``.

    Raises:
        InputError: a frequency or damping that is not positive and finite.
    """
    if not (math.isfinite(natural_frequency_hz) and natural_frequency_hz > 0.0):
        raise InputError(f"CTC natural frequency: must be positive and finite (Hz), got {natural_frequency_hz}")
    if not (math.isfinite(damping) and damping > 0.0):
        raise InputError(f"CTC damping: must be positive and finite, got {damping}")
    omega = 2.0 * math.pi * natural_frequency_hz
    return omega**2, 2.0 * damping * omega


def gains_from_step_response(*, overshoot: float, peak_time_s: float) -> tuple[float, float]:
    """``(natural_frequency_hz, damping)`` of the 2nd-order error dynamics with this step response.

    ``M_p = exp(-pi xi / sqrt(1 - xi^2))``  ->  ``xi = -ln M_p / sqrt(pi^2 + ln^2 M_p)``;
    ``t_p = pi / (omega_n sqrt(1 - xi^2))`` ->  ``omega_n = pi / (t_p sqrt(1 - xi^2))``.
    Zubizarreta 2010 section 4.8: 10 % overshoot, 0.1 s peak time (xi = 0.591, f_n = 6.20 Hz).
    """
    if not (0.0 < overshoot < 1.0) or not peak_time_s > 0.0:
        raise InputError(f"overshoot must be in (0, 1) and peak time > 0, got {overshoot}, {peak_time_s}")
    log = math.log(overshoot)
    damping = -log / math.sqrt(math.pi**2 + log**2)
    omega = math.pi / (peak_time_s * math.sqrt(1.0 - damping**2))
    return omega / (2.0 * math.pi), damping
