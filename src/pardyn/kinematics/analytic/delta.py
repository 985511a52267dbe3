"""Closed-form inverse and forward kinematics of the Delta robot (Clavel 1991; Williams 2015).

Geometry (read from the pinocchio model of ``urdf/delta.urdf``, never copied; see
``config/robots/delta.yaml``): motor ``i`` at ``P_i`` turning about ``u_i``; the top of
forearm bar ``k`` of leg ``i`` at ``E_ik(q_i) = P_i + Rot(u_i, q_i) e_ik`` (``e_ik`` its
offset at ``q_i = 0``); its bottom at ``C_ik(p) = p + c_ik`` on the (non-rotating)
platform at ``p = (x, y, z)``; bar length ``l``: ``|C_ik - E_ik| = l``.

* **inverse** (closed form, one leg at a time): with ``a = C_ik - P_i``, ``e = e_ik``,
  ``e_perp = e - (e.u) u``::

      p cos q + s sin q = k,   p = a . e_perp,   s = a . (u x e),
      k = (|e|^2 + |a|^2 - l^2) / 2 - (e . u)(a . u)        # (1)
      q = atan2(s, p) -+ acos(k / hypot(p, s))               # (2) sign: the YAML working mode

  Both bars of a parallelogram give the same (1) (``e_i2 - e_i1 = c_i2 - c_i1``, checked
  at construction); bar ``k``'s universal joint then points it along
  ``d = (C_ik - E_ik) / l``: in the arm frame ``d = (-cos b sin a, sin b, -cos b cos a)``
  for the angles ``a`` (about y, the elbow axis) and ``b`` (about x) of its two revolutes.
* **forward** (closed form): the platform centre lies on the three spheres of centre
  ``S_i = E_i1(q_i) - c_i1`` and radius ``l``; their intersection (trilateration, two
  roots mirror images through the plane of the ``S_i``) is taken on the YAML assembly
  mode's side (the root below the plane: the platform hangs under the elbows).
* **velocities**: differentiating ``|C_i1 - E_i1|^2 = l^2`` gives
  ``J_x pdot = J_q qdot`` with ``J_x[i] = (C_i1 - E_i1)^T`` and
  ``J_q = diag((C_i1 - E_i1) . (u_i x (E_i1 - P_i)))``: ``J_q`` singular = a serial
  singularity (arm and forearm aligned: workspace boundary), ``J_x`` singular = a
  parallel one (forearm directions coplanar).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.errors import ConvergenceError, DescriptionError, SingularityError, WorkingModeError
from pardyn.kinematics.analytic.closed_form import AnalyticKinematics, register
from pardyn.kinematics.analytic.planar_geometry import wrap_angle

if TYPE_CHECKING:
    from pardyn.mechanism import Mechanism

__all__ = ["DeltaKinematics"]

_LEGS = 3
_BARS = 2
SINGULAR_CONDITION = 1e8
"""Condition number of ``J_x`` (or ratio of the extreme ``|J_q[i, i]|``) above which a pose is singular."""


def _rotation_y(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


@register("delta")
class DeltaKinematics(AnalyticKinematics):
    """Delta closed-form inverse and forward problems, geometry from the URDF.

    Attributes:
        motors: ``P_i`` (3, 3), m; axes: ``u_i`` (3, 3); elbows: ``e_ik`` (3, 2, 3), m;
        platform_points: ``c_ik`` (3, 2, 3), m; forearm: ``l``, m.
    """

    def __init__(self, robot: Mechanism) -> None:
        super().__init__(robot)
        source = robot.source
        model = robot.model
        if len(robot.actuated_names) != _LEGS or tuple(robot.task_names) != ("x", "y", "z"):
            raise DescriptionError(f"{source}: analytic: delta needs three motors and a task (x, y, z)")
        data = model.createData()
        q0 = np.zeros(model.nq)
        pin.computeJointJacobians(model, data, q0)
        pin.updateFramePlacements(model, data)

        def position(frame: str) -> np.ndarray:
            return data.oMf[model.getFrameId(frame)].translation.copy()

        motors, axes, rotations, elbows, points, lengths = [], [], [], [], [], []
        for i in range(1, _LEGS + 1):
            joint = model.getJointId(f"motor{i}")
            motors.append(position(f"leg{i}_P"))
            axes.append(pin.getJointJacobian(model, data, joint, pin.WORLD)[3:, model.joints[joint].idx_v].copy())
            rotations.append(data.oMi[joint].rotation.copy())
            leg_elbows, leg_points = [], []
            for k in range(1, _BARS + 1):
                bar = f"leg{i}_bar{k}"
                leg_elbows.append(data.oMi[model.getJointId(f"{bar}_y")].translation - motors[-1])
                leg_points.append(model.frames[model.getFrameId(f"platform_c{i}{k}")].placement.translation.copy())
                end = model.frames[model.getFrameId(f"{bar}_end")].placement.translation
                if abs(end[0]) > 1e-12 or abs(end[1]) > 1e-12 or end[2] >= 0.0:
                    raise DescriptionError(f"{source}: {bar}_end must lie on the bar's -z axis")
                lengths.append(-float(end[2]))
            elbows.append(leg_elbows)
            points.append(leg_points)
            if not np.allclose(leg_elbows[1] - leg_elbows[0], leg_points[1] - leg_points[0], atol=1e-12):
                raise DescriptionError(f"{source}: leg {i}: the two bars do not form a parallelogram")
        if max(lengths) - min(lengths) > 1e-12:
            raise DescriptionError(f"{source}: the six forearm bars must have one length, got {lengths}")
        self.motors, self.axes = np.array(motors), np.array(axes)  # (3, 3)
        self.arm_rotations = np.array(rotations)  # (3, 3, 3): arm frames at q_i = 0
        self.elbows, self.platform_points = np.array(elbows), np.array(points)  # (3, 2, 3)
        self.forearm = lengths[0]
        e = self.elbows[:, 0]
        self._e_axial = np.einsum("ij,ij->i", e, self.axes)  # e . u (3,)
        self._e_perp = e - self._e_axial[:, None] * self.axes  # (3, 3)
        self._e_normal = np.cross(self.axes, e)  # u x e (3, 3)
        self._e_square = np.einsum("ij,ij->i", e, e)
        self._task = robot.task_indices
        self._actuated = robot.actuated_indices
        self._bars = [robot.indices([f"leg{i}_bar{k}_y", f"leg{i}_bar{k}_x"])
                      for i in range(1, _LEGS + 1) for k in range(1, _BARS + 1)]
        home = robot.home
        self._home_actuated = home[self._actuated]
        self._home_signs = self._signs(home[self._task], self._home_actuated)

    # ------------------------------------------------------------ geometry
    def elbow_points(self, actuated: np.ndarray) -> np.ndarray:
        """``E_i1`` (3, 3), m: top of bar 1 of each leg at the motor angles (3,)."""
        c, s = np.cos(actuated)[:, None], np.sin(actuated)[:, None]
        rotated = self._e_axial[:, None] * self.axes + c * self._e_perp + s * self._e_normal
        return self.motors + rotated

    def jacobians(self, task: np.ndarray, actuated: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(J_x, J_q)`` (3, 3) each: ``J_x pdot = J_q qdot`` (module docstring)."""
        elbows = self.elbow_points(actuated)
        forearms = task[:3] + self.platform_points[:, 0] - elbows  # C_i1 - E_i1 (3, 3)
        lever = np.cross(self.axes, elbows - self.motors)
        return forearms, np.diag(np.einsum("ij,ij->i", forearms, lever))

    def jacobian(self, task: np.ndarray, actuated: np.ndarray) -> np.ndarray:
        """``J = J_x^-1 J_q`` (3, 3): ``pdot = J qdot``.

        Raises:
            SingularityError: ``J_q`` (serial) or ``J_x`` (parallel) is singular, with the pose.
        """
        jx, jq = self.jacobians(task, actuated)
        diagonal = np.abs(np.diag(jq))
        scale = np.linalg.norm(jx, axis=1) * np.linalg.norm(np.cross(self.axes, self.elbows[:, 0]), axis=1)
        if np.min(diagonal / scale) < 1.0 / SINGULAR_CONDITION:
            leg = int(np.argmin(diagonal / scale)) + 1
            raise SingularityError(f"{self.robot.name}: serial singularity (arm {leg} aligned with its forearm) "
                                   f"at p = {np.round(task, 9).tolist()} m, q = {np.round(actuated, 9).tolist()} rad",
                                   kind="serial", condition=float(np.max(scale / np.maximum(diagonal, 1e-300))))
        condition = np.linalg.cond(jx)
        if not condition < SINGULAR_CONDITION:
            raise SingularityError(f"{self.robot.name}: parallel singularity (forearms coplanar), cond J_x = "
                                   f"{condition:.3g} at p = {np.round(task, 9).tolist()} m",
                                   kind="parallel", condition=float(condition))
        return np.linalg.solve(jx, jq)

    # ----------------------------------------------------------- inverse
    def _coefficients(self, task: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a = task[:3] + self.platform_points[:, 0] - self.motors  # (3, 3)
        p = np.einsum("ij,ij->i", a, self._e_perp)
        s = np.einsum("ij,ij->i", a, self._e_normal)
        k = 0.5 * (self._e_square + np.einsum("ij,ij->i", a, a) - self.forearm**2) \
            - self._e_axial * np.einsum("ij,ij->i", a, self.axes)
        return p, s, k  # eq. (1)

    def _signs(self, task: np.ndarray, actuated: np.ndarray) -> np.ndarray:
        p, s, _ = self._coefficients(task)
        offsets = [wrap_angle(q - math.atan2(si, pi)) for q, si, pi in zip(actuated, s, p)]
        return np.where(np.array(offsets) >= 0.0, 1.0, -1.0)

    def motor_angles(self, task: np.ndarray, signs: np.ndarray | None = None) -> np.ndarray:
        """Motor angles (3,), rad, of the platform position (3,), m, by eq. (2) (home's branch by default).

        Raises:
            ConvergenceError: a leg cannot reach the position.
        """
        p, s, k = self._coefficients(task)
        ratio = k / np.maximum(np.hypot(p, s), 1e-300)
        if np.any(np.abs(ratio) > 1.0 + 1e-12):  # beyond rounding at the workspace boundary
            legs = [int(i) + 1 for i in np.flatnonzero(np.abs(ratio) > 1.0 + 1e-12)]
            raise ConvergenceError(f"{self.robot.name}: position {np.round(task, 6).tolist()} m out of reach of legs {legs}")
        signs = self._home_signs if signs is None else signs
        angles = np.arctan2(s, p) + signs * np.arccos(np.clip(ratio, -1.0, 1.0))
        return np.array([wrap_angle(q, ref) for q, ref in zip(angles, self._home_actuated)])

    def configuration(self, task: np.ndarray, actuated: np.ndarray) -> np.ndarray:
        """Every joint (nv,) from the platform position (3,) and motor angles (3,): the bars' universal joints."""
        q = np.zeros(self.robot.nv)
        q[self._task] = task
        q[self._actuated] = actuated
        for n, indices in enumerate(self._bars):
            i, k = divmod(n, _BARS)
            arm = self.arm_rotations[i] @ _rotation_y(actuated[i])  # arm frame at q_i
            top = self.motors[i] + arm @ (self.arm_rotations[i].T @ self.elbows[i, k])  # E_ik
            direction = arm.T @ (task + self.platform_points[i, k] - top) / self.forearm
            q[indices[0]] = math.atan2(-direction[0], -direction[2])
            q[indices[1]] = math.asin(max(-1.0, min(1.0, direction[1])))
        return q

    def inverse(self, task: np.ndarray) -> np.ndarray:
        """Every joint (nv,) from ``(x, y, z)`` (m): eqs. (1)-(2) on the YAML working mode.

        Raises:
            ConvergenceError: out of reach; WorkingModeError: no root in ``working_mode``.
        """
        task = self._vector(task, 3, "platform position (x, y, z)")
        q = self.configuration(task, self.motor_angles(task))
        violations = self.robot.working_mode_violations(q)
        if not violations:
            return q
        for legs in range(1, 2**_LEGS):  # other sign patterns
            signs = self._home_signs * np.where([(legs >> i) & 1 for i in range(_LEGS)], -1.0, 1.0)
            candidate = self.configuration(task, self.motor_angles(task, signs))
            if not self.robot.working_mode_violations(candidate):
                return candidate
        raise WorkingModeError(f"{self.robot.name}: position {task.tolist()}: no inverse solution in "
                               f"working_mode (violates {violations})")

    # ----------------------------------------------------------- forward
    def platform_position(self, actuated: np.ndarray) -> np.ndarray:
        """Platform position (3,), m, of the motor angles (3,): the three-sphere intersection.

        Raises:
            ConvergenceError: the spheres do not meet (the arms cannot be assembled).
            SingularityError: the sphere centres are aligned.
        """
        centres = self.elbow_points(actuated) - self.platform_points[:, 0]  # S_i (3, 3)
        ex = centres[1] - centres[0]
        d = np.linalg.norm(ex)
        ex = ex / d
        i = ex @ (centres[2] - centres[0])
        ey = centres[2] - centres[0] - i * ex
        j = np.linalg.norm(ey)
        if j < 1e-12 * d:
            raise SingularityError(f"{self.robot.name}: sphere centres aligned for motors {actuated.tolist()}",
                                   kind="parallel", condition=math.inf)
        ey = ey / j
        ez = np.cross(ex, ey)
        x = d / 2.0
        y = (i * i + j * j) / (2.0 * j) - i * x / j
        height2 = self.forearm**2 - x * x - y * y
        if height2 < 0.0:
            raise ConvergenceError(f"{self.robot.name}: motors {actuated.tolist()} rad: the forearms cannot meet")
        base = centres[0] + x * ex + y * ey
        height = math.sqrt(height2)
        low, high = base - height * ez, base + height * ez
        return low if low[2] <= high[2] else high  # the platform hangs below the elbows

    def forward(self, actuated: np.ndarray, sensed: np.ndarray | None = None) -> np.ndarray:
        """Every joint (nv,) from the three motor angles (rad), in closed form.

        Raises:
            ConvergenceError, SingularityError: from the solvers this closed form calls.
            WorkingModeError: the answer violates ``assembly_mode``.
        """
        actuated = self._vector(actuated, 3, "motor angles")
        task = self.platform_position(actuated)
        q = self.configuration(task, actuated)
        violations = self.robot.assembly_mode_violations(q)
        if violations:
            raise WorkingModeError(f"{self.robot.name}: motors {actuated.tolist()}: the closed form gives a pose "
                                   f"violating assembly_mode {violations}")
        return q
