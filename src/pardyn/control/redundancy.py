"""Internal-stress projection for actuation-redundant robots (Briot et al. 2015, eq. 50).

With more actuators than degrees of freedom, actuator torques in the null
space of ``J^T`` (``J = W[actuated]``, the inverse Jacobian of eq. 20, (n_a, n))
move nothing and only load the structure. The projection removes them:

    tau* = tau - sum_i (u_i^T tau) u_i = tau - P tau,   P = I - J (J^T J)^-1 J^T   # (n_a,)

so that ``J^T tau* = J^T tau`` (same motion) and ``tau*`` has the smallest norm
among the torques producing it. On a non-redundant robot ``P = 0``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from pardyn.dynamics.actuation import ActuationMaps
from pardyn.dynamics.inverse import null_space_projector

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["InternalStressProjection", "project_internal_stress"]


def project_internal_stress(jacobian: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """``tau - P tau`` for ``J`` (n_a, n) and ``tau`` (n_a,): eq. (50)."""
    tau = np.asarray(tau, dtype=float)
    return tau - null_space_projector(jacobian) @ tau


class InternalStressProjection:
    """Eq. (50) from the measured joints: closes the loops, then projects.

    The configuration comes from the forward problem on the measured joints
    (warm-started from the previous call; the robot's closed form when it has
    one, it is faster). The projection itself is one LAPACK solve on the
    loops' Jacobian read from pinocchio's joint Jacobians
    (:meth:`pardyn.dynamics.actuation.ActuationMaps.project`, a few microseconds), or
    ``P = I - J (J^T J)^-1 J^T`` from ``J = W[actuated]`` on robots that path does not cover.

    At 1 kHz the forward problem dominates (a verified closed form is ~3x the
    closed form alone on the DualV): every ``check_every``-th call verifies the
    answer (residual, conditioning: a singularity raises, the controller then
    holds its safe command), the calls between take the closed form unverified
    (a Newton solve stays checked). ``check_every=1`` verifies every call.

    Args:
        robot: the robot.
        method: ``"analytic"`` when the robot has a closed form, else ``"newton"``.
        check_every: verify the forward problem's answer every this many calls (>= 1).
    """

    def __init__(self, robot: Robot, *, method: str | None = None, check_every: int = 10) -> None:
        if check_every < 1:
            raise ValueError(f"check_every must be >= 1, got {check_every}")
        self.check_every = int(check_every)
        self._calls = 0
        self.robot = robot
        # compiled kernels: their Newton solve, verified every call, beats the closed form unverified
        self.method = method or ("analytic" if robot.analytic is not None and robot.kernels is None else "newton")
        self.q = robot.home.copy()
        self.redundant = len(robot.actuated_names) > len(robot.task_names)
        maps = ActuationMaps(robot)
        self._maps = maps if maps.supported else None

    def __call__(self, actuated: Sequence[float], tau: Sequence[float], *, sensed: Sequence[float] | None = None) -> np.ndarray:
        """Projected torques (n_a,) for actuated positions (n_a,) and torques (n_a,)."""
        if not self.redundant:
            return np.asarray(tau, dtype=float)
        checks = self.method != "analytic" or self._calls % self.check_every == 0
        self._calls += 1
        self.q = self.robot.solve_forward(actuated, sensed=sensed, start=self.q, method=self.method,
                                          checks=checks).q
        return self.project_at(self.q, tau)

    def project_at(self, q: np.ndarray, tau: Sequence[float]) -> np.ndarray:
        """Projected torques (n_a,) at a closed configuration ``q`` (nv,): the projection without the
        forward problem."""
        tau = np.asarray(tau, dtype=float)
        if self.robot.kernels is not None:
            projected = self.robot.kernels.project(q, tau)
            if projected is not None:
                return projected
        maps = self._maps
        if maps is None:
            return project_internal_stress(self.robot.differential.inverse_jacobian(q, self.robot.actuated_indices), tau)
        return maps.project(maps.constraint_jacobian(q), tau)
