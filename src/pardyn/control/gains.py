"""PD gains from a desired closed-loop bandwidth and damping (Briot et al. 2015, section 5.1).

Each actuator's tracking error is given the dynamics of a second-order system
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

__all__ = ["actuated_inertia", "pd_gains_from_bandwidth"]


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
