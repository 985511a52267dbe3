"""Closed-form inverse and Newton forward kinematics of the Gough-Stewart hexapod (6-UPS).

Geometry (read from the pinocchio model of ``urdf/hexapod.urdf``, never copied; see
``config/robots/hexapod.yaml``): leg ``j``'s universal joint at ``A_j`` on the base (first
axis x, then y; the leg along +z at zero), its ball joint at ``b_j`` in the platform frame;
pose ``X = (p, yaw, pitch, roll)``, ``R = Rz(yaw) Ry(pitch) Rx(roll)``::

    v_j = p + R b_j - A_j,   rho_j = |v_j|,   d_j = v_j / rho_j                    # (1) leg length
    d_j = Rx(alpha_j) Ry(beta_j) e_z = (sin b, -sin a cos b, cos a cos b)
        -> beta_j = asin(d_x), alpha_j = atan2(-d_y, d_z)                          # (2) U angles

* **inverse**: (1)-(2) in closed form (one solution: rho > 0).
* **velocities**: ``rhodot_j = d_j . (pdot + omega x R b_j)``, ``omega = E(X) Xdot_rot``
  with ``E = [e_z, Rz(yaw) e_y, Rz(yaw) Ry(pitch) e_x]`` (yaw-pitch-roll rates)::

      rhodot = J Xdot,   J[j] = [d_j^T, (R b_j x d_j)^T E]                        # (3) (6, 6)

  ``J`` singular is a parallel singularity (e.g. Fichter's: this layout turned by
  yaw = +-90 deg); ``E`` is singular at pitch = +-90 deg (the gimbal lock of the angles,
  outside the working range), reported separately.
* **forward** (no closed form; up to 40 real assembly modes): Newton on (1),
  ``X <- X + J(X)^-1 (rho - rho(X))``, from a warm start (the previous pose; home by
  default), which keeps the assembly mode of the start: the robot's (platform above the
  base, home's). A step that leaves the working range is halved.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pardyn.errors import ConvergenceError, DescriptionError, SingularityError, WorkingModeError
from pardyn.kinematics.analytic.closed_form import AnalyticKinematics, register

if TYPE_CHECKING:
    from pardyn.mechanism import Mechanism

__all__ = ["HexapodKinematics", "euler_rate_matrix", "rotation_ypr"]

_LEGS = 6
SINGULAR_CONDITION = 1e8
"""Condition number of the scaled ``J`` of eq. (3) above which a pose is singular."""


def rotation_ypr(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """``R = Rz(yaw) Ry(pitch) Rx(roll)`` (3, 3): the platform_yaw -> pitch -> roll chain."""
    cz, sz, cy, sy, cx, sx = (math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch),
                              math.cos(roll), math.sin(roll))
    return np.array([[cz * cy, cz * sy * sx - sz * cx, cz * sy * cx + sz * sx],
                     [sz * cy, sz * sy * sx + cz * cx, sz * sy * cx - cz * sx],
                     [-sy, cy * sx, cy * cx]])


def euler_rate_matrix(yaw: float, pitch: float) -> np.ndarray:
    """``E`` (3, 3): world angular velocity ``omega = E [yawdot, pitchdot, rolldot]``."""
    cz, sz, cy, sy = math.cos(yaw), math.sin(yaw), math.cos(pitch), math.sin(pitch)
    return np.array([[0.0, -sz, cz * cy], [0.0, cz, sz * cy], [1.0, 0.0, -sy]])


@register("hexapod")
class HexapodKinematics(AnalyticKinematics):
    """Hexapod closed-form inverse problem (1)-(2) and Newton forward problem, geometry from the URDF.

    Attributes:
        base_points: ``A_j`` (6, 3), m; platform_points: ``b_j`` (6, 3), m, platform frame.
        radius: mean ``|b_j|`` (m), the length scaling the rotation columns of ``J``.
    """

    def __init__(self, robot: Mechanism, *, tolerance: float = 1e-13, max_iterations: int = 50) -> None:
        super().__init__(robot)
        source = robot.source
        model = robot.model
        if len(robot.actuated_names) != _LEGS or len(robot.task_names) != 6:
            raise DescriptionError(f"{source}: analytic: hexapod needs six legs and a task (x, y, z, yaw, pitch, roll)")
        self.tolerance = tolerance
        self.max_iterations = max_iterations
        base, platform = [], []
        for j in range(1, _LEGS + 1):
            joint = model.getJointId(f"leg{j}_ux")
            placement = model.jointPlacements[joint]
            if model.parents[joint] != 0 or not np.allclose(placement.rotation, np.eye(3)):
                raise DescriptionError(f"{source}: leg{j}_ux must sit on base_link with the base's axes")
            base.append(placement.translation.copy())
            platform.append(model.frames[model.getFrameId(f"platform_b{j}")].placement.translation.copy())
        self.base_points, self.platform_points = np.array(base), np.array(platform)  # (6, 3) each
        self.radius = float(np.mean(np.linalg.norm(self.platform_points, axis=1)))
        self._task = robot.task_indices
        self._actuated = robot.actuated_indices
        self._ux = robot.indices([f"leg{j}_ux" for j in range(1, _LEGS + 1)])
        self._uy = robot.indices([f"leg{j}_uy" for j in range(1, _LEGS + 1)])
        self._home_task = robot.home[self._task].copy()

    # ------------------------------------------------------------ geometry
    def legs(self, task: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(v_j, rho_j, R b_j)`` of eq. (1): (6, 3) m, (6,) m, (6, 3) m."""
        rotated = self.platform_points @ rotation_ypr(*task[3:]).T
        vectors = task[:3] + rotated - self.base_points
        return vectors, np.linalg.norm(vectors, axis=1), rotated

    def lengths(self, task: np.ndarray) -> np.ndarray:
        """Leg lengths ``rho`` (6,), m, of the pose (6,): eq. (1)."""
        return self.legs(task)[1]

    def jacobian(self, task: np.ndarray) -> np.ndarray:
        """``J`` (6, 6) of eq. (3): ``rhodot = J Xdot`` (m/s from m/s and rad/s).

        Raises:
            SingularityError: ``J`` is singular (a parallel singularity) or the angles are at
                their gimbal lock (pitch = +-90 deg).
        """
        vectors, lengths, rotated = self.legs(task)
        directions = vectors / lengths[:, None]
        rates = euler_rate_matrix(task[3], task[4])
        if abs(math.cos(task[4])) < 1.0 / SINGULAR_CONDITION:
            raise SingularityError(f"{self.robot.name}: yaw-pitch-roll gimbal lock (pitch = {task[4]:.6g} rad)",
                                   kind="parallel", condition=math.inf)
        angular = np.cross(rotated, directions)  # (R b_j x d_j) (6, 3)
        matrix = np.hstack([directions, angular @ rates])
        scaled = np.hstack([directions, angular / self.radius])
        condition = np.linalg.cond(scaled)
        if not condition < SINGULAR_CONDITION:
            raise SingularityError(f"{self.robot.name}: parallel singularity, cond J = {condition:.3g} at pose "
                                   f"{np.round(task, 9).tolist()}", kind="parallel", condition=float(condition))
        return matrix

    # ----------------------------------------------------------- inverse
    def configuration(self, task: np.ndarray) -> np.ndarray:
        """Every joint (nv,) of the pose (6,): eqs. (1)-(2)."""
        vectors, lengths, _ = self.legs(task)
        directions = vectors / lengths[:, None]
        q = np.zeros(self.robot.nv)
        q[self._task] = task
        q[self._actuated] = lengths
        q[self._uy] = np.arcsin(np.clip(directions[:, 0], -1.0, 1.0))
        q[self._ux] = np.arctan2(-directions[:, 1], directions[:, 2])
        return q

    def inverse(self, task: np.ndarray) -> np.ndarray:
        """Every joint (nv,) from ``(x, y, z, yaw, pitch, roll)`` (m, rad) in closed form."""
        return self.configuration(self._vector(task, _LEGS, "pose (x, y, z, yaw, pitch, roll)"))

    # ----------------------------------------------------------- forward
    def forward_iterations(self, lengths: np.ndarray, start: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        """``(X, iterations)``: the pose (6,) of the leg lengths (6,) by Newton from ``start`` (home's pose).

        Raises:
            ConvergenceError: no convergence to ``tolerance`` (m) in ``max_iterations``.
            SingularityError: a Newton iterate is singular.
        """
        x = (self._home_task if start is None else np.asarray(start, dtype=float)).copy()
        for iteration in range(self.max_iterations + 1):
            error = lengths - self.lengths(x)
            if np.max(np.abs(error)) < self.tolerance:
                return x, iteration
            step = np.linalg.solve(self.jacobian(x), error)
            while np.max(np.abs(step[3:])) > 0.5:  # safeguard: at most 0.5 rad per iteration
                step = 0.5 * step
            x = x + step
        raise ConvergenceError(f"{self.robot.name}: forward Newton did not converge in {self.max_iterations} "
                               f"iterations for legs {lengths.tolist()} m")

    def forward(self, actuated: np.ndarray, sensed: np.ndarray | None = None, *,
                start: np.ndarray | None = None) -> np.ndarray:
        """Every joint (nv,) from the six leg lengths (m), Newton warm-started at ``start`` (home's pose).

        Raises:
            ConvergenceError, SingularityError: from the solvers this closed form calls.
            WorkingModeError: the answer violates ``assembly_mode``.
        """
        lengths = self._vector(actuated, _LEGS, "leg lengths")
        x, _ = self.forward_iterations(lengths, start)
        q = self.configuration(x)
        violations = self.robot.assembly_mode_violations(q)
        if violations:
            raise WorkingModeError(f"{self.robot.name}: legs {lengths.tolist()}: Newton converged to an assembly "
                                   f"mode violating {violations}")
        return q
