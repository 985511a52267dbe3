"""Closed-form inverse and iterative forward kinematics of the H4 (Vivas & Poignet 2003, section 2.1).

Geometry (read from the pinocchio model of ``urdf/h4.urdf``, never copied; see
``config/robots/h4.yaml``): motor ``i`` at ``P_i`` (eq. 7) turning about ``u_i``,
arm vector ``b_i = P_iB_i`` at ``q_i = 0`` (``|b_i| = L``), forearm length ``l``,
nacelle points (eqs. 2-4)::

    A_i(x) = D + c_i + R_z(theta) a_i          # (3,) D = (x, y, z), c_i = (0, +-d, 0), a_i = (+-h, 0, 0)
    B_i(q_i) = P_i + cos q_i b_i + sin q_i (u_i x b_i)        # eq. (6): rotation of b_i about u_i

* **inverse** (closed form): ``|B_i - A_i|^2 = l^2`` with ``a = A_i - P_i`` reads
  ``p cos q_i + s sin q_i = k``, ``p = b_i . a``, ``s = (u_i x b_i) . a``,
  ``k = (L^2 + |a|^2 - l^2) / 2``, so ``q_i = atan2(s, p) +- acos(k / hypot(p, s))``;
  the sign of each leg is the YAML ``working_mode`` (arms pointing outwards).
* **forward** (the paper's iteration, eq. 9)::

    x_{n+1} = x_n + J(x_n, q_n) (q - q_n),   q_n = IKP(x_n),   J = J_x^-1 J_q      # eqs. (9)-(10)

  with the rows of eq. (11) ``J_x[i] = [A_iB_i^T, (C_iA_i x A_iB_i)_z]`` and eq. (12)
  ``J_q = diag((P_iB_i x A_iB_i) . u_i)``: the time derivative of
  ``|B_i - A_i|^2 = l^2`` gives ``A_iB_i . (Ddot + thetadot e_z x C_iA_i) =
  qdot_i A_iB_i . (u_i x P_iB_i)``, i.e. ``J_x xdot = J_q qdot``. The paper prints
  the 4th column of eq. (11) as ``(DC_i x A_iB_i)_z`` with ``DC_i`` "the distance
  between the centre of the nacelle and the centre of the half-H"; with eqs. (3)-(4)
  (each half-bar turning about its own centre ``C_i = D + c_i``) the derivative of
  ``A_i`` along ``theta`` is ``e_z x C_iA_i``, which is what is used. The iteration
  is a chord-Newton method on the IKP and converges quadratically near the answer.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.errors import ConvergenceError, DescriptionError, InputError, SingularityError, WorkingModeError
from pardyn.kinematics.analytic.closed_form import AnalyticKinematics, register
from pardyn.kinematics.analytic.planar_geometry import wrap_angle

if TYPE_CHECKING:
    from pardyn.mechanism import Mechanism

__all__ = ["H4Kinematics"]

_LEGS = 4


@register("h4")
class H4Kinematics(AnalyticKinematics):
    """H4 closed-form inverse problem and the forward iteration of eq. (9), geometry from the URDF.

    Attributes:
        motors: ``P_i`` (4, 3), m; axes: ``u_i`` (4, 3); arms: ``b_i`` (4, 3), m.
        centres: ``c_i`` (4, 3), m; offsets: ``a_i`` (4, 3), m, in the half-bar frames.
        forearms: ``l_i`` (4,), m.
    """

    def __init__(self, robot: Mechanism, *, tolerance: float = 1e-13, max_iterations: int = 50) -> None:
        super().__init__(robot)
        source = robot.source
        model = robot.model
        if len(robot.actuated_names) != _LEGS or len(robot.task_names) != 4:
            raise DescriptionError(f"{source}: analytic: h4 needs four motors and a task (x, y, z, theta)")
        self.tolerance = tolerance
        self.max_iterations = max_iterations
        data = model.createData()
        q0 = np.zeros(model.nq)
        pin.computeJointJacobians(model, data, q0)
        pin.updateFramePlacements(model, data)
        closures = {c.name: c for c in robot.description.closures}

        def position(frame: str) -> np.ndarray:
            return data.oMf[model.getFrameId(frame)].translation.copy()

        motors, axes, arms, centres, offsets, forearms = [], [], [], [], [], []
        for n in range(1, _LEGS + 1):
            closure = closures.get(f"forearm{n}")
            if closure is None or closure.type != "distance":
                raise DescriptionError(f"{source}: closures: h4 needs a distance closure 'forearm{n}'")
            joint = model.getJointId(f"motor{n}")
            motors.append(position(f"arm{n}_P"))
            axes.append(pin.getJointJacobian(model, data, joint, pin.WORLD)[3:, model.joints[joint].idx_v].copy())
            arms.append(position(f"arm{n}_B") - motors[-1])
            if abs(float(arms[-1] @ axes[-1])) > 1e-12:
                raise DescriptionError(f"{source}: arm{n}_B must lie in the plane normal to the axis of motor{n}")
            frame = model.frames[model.getFrameId(f"nacelle_A{n}")]
            bar = frame.parentJoint
            centres.append(model.jointPlacements[bar].translation.copy())
            offsets.append(frame.placement.translation.copy())
            forearms.append(float(closure.length))
        self.motors, self.axes, self.arms = np.array(motors), np.array(axes), np.array(arms)  # (4, 3) each
        self.normals = np.cross(self.axes, self.arms)  # u_i x b_i (4, 3)
        self.centres, self.offsets = np.array(centres), np.array(offsets)  # (4, 3) each
        self.forearms = np.array(forearms)  # (4,)
        self._task = robot.task_indices
        self._actuated = robot.actuated_indices
        self._passive = robot.indices(["bar34_theta"])
        home = robot.home
        self._home_actuated = home[self._actuated]
        self._home_task = home[self._task]
        self._home_signs = self._signs(home[self._task], home[self._actuated])

    # ------------------------------------------------------------ geometry
    def nacelle_points(self, task: np.ndarray) -> np.ndarray:
        """``A_i`` (4, 3), m, of the pose ``(x, y, z, theta)``: eqs. (2)-(4)."""
        c, s = math.cos(task[3]), math.sin(task[3])
        rotated = np.column_stack([c * self.offsets[:, 0] - s * self.offsets[:, 1],
                                   s * self.offsets[:, 0] + c * self.offsets[:, 1], self.offsets[:, 2]])
        return task[:3] + self.centres + rotated

    def arm_points(self, actuated: np.ndarray) -> np.ndarray:
        """``B_i`` (4, 3), m, of the motor angles (4,): eqs. (5)-(6)."""
        return self.motors + np.cos(actuated)[:, None] * self.arms + np.sin(actuated)[:, None] * self.normals

    def jacobians(self, task: np.ndarray, actuated: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(J_x, J_q)`` (4, 4) each of eqs. (11)-(12): ``J_x xdot = J_q qdot``."""
        points_a, points_b = self.nacelle_points(task), self.arm_points(actuated)
        forearm = points_b - points_a  # A_iB_i (4, 3)
        lever = points_a - (task[:3] + self.centres)  # C_iA_i (4, 3)
        jx = np.column_stack([forearm, lever[:, 0] * forearm[:, 1] - lever[:, 1] * forearm[:, 0]])  # eq. (11)
        arm = points_b - self.motors  # P_iB_i (4, 3)
        jq = np.diag(np.einsum("ij,ij->i", np.cross(arm, forearm), self.axes))  # eq. (12)
        return jx, jq

    def jacobian(self, task: np.ndarray, actuated: np.ndarray) -> np.ndarray:
        """``J = J_x^-1 J_q`` (4, 4) of eq. (10): ``xdot = J qdot``.

        Raises:
            SingularityError: ``J_x`` is singular (a parallel singularity).
        """
        jx, jq = self.jacobians(task, actuated)
        condition = np.linalg.cond(jx)
        if condition > 1e12:
            raise SingularityError(f"{self.robot.name}: J_x of eq. (11) is singular at x = {task.tolist()}",
                                   kind="parallel", condition=float(condition))
        return np.linalg.solve(jx, jq)

    # ----------------------------------------------------------- inverse
    def _coefficients(self, task: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a = self.nacelle_points(task) - self.motors  # (4, 3)
        p = np.einsum("ij,ij->i", self.arms, a)
        s = np.einsum("ij,ij->i", self.normals, a)
        lengths = np.einsum("ij,ij->i", self.arms, self.arms)
        k = 0.5 * (lengths + np.einsum("ij,ij->i", a, a) - self.forearms**2)
        return p, s, k

    def _signs(self, task: np.ndarray, actuated: np.ndarray) -> np.ndarray:
        p, s, _ = self._coefficients(task)
        return np.where(np.array([wrap_angle(q - math.atan2(si, pi)) for q, si, pi in zip(actuated, s, p)]) >= 0,
                        1.0, -1.0)

    def motor_angles(self, task: np.ndarray, signs: np.ndarray | None = None) -> np.ndarray:
        """Motor angles (4,), rad, of the pose (4,) on the branch ``signs`` (4,) (home's by default).

        Raises:
            ConvergenceError: a forearm cannot reach its arm circle (the pose is out of reach).
        """
        p, s, k = self._coefficients(task)
        radius = np.hypot(p, s)
        ratio = k / np.maximum(radius, 1e-300)
        if np.any(np.abs(ratio) > 1.0):
            legs = [int(i) + 1 for i in np.flatnonzero(np.abs(ratio) > 1.0)]
            raise ConvergenceError(f"{self.robot.name}: pose {np.round(task, 6).tolist()} out of reach of legs {legs}")
        signs = self._home_signs if signs is None else signs
        angles = np.arctan2(s, p) + signs * np.arccos(ratio)
        return np.array([wrap_angle(q, ref) for q, ref in zip(angles, self._home_actuated)])

    def configuration(self, task: np.ndarray, actuated: np.ndarray) -> np.ndarray:
        """Every joint (nv,) from the pose (4,) and motor angles (4,) (``bar34_theta = theta``)."""
        q = np.zeros(self.robot.nv)
        q[self._task] = task
        q[self._actuated] = actuated
        q[self._passive] = task[3]
        return q

    def inverse(self, task: np.ndarray) -> np.ndarray:
        """Every joint (nv,) from ``(x, y, z, theta)`` (m, rad): the closed form of the module docstring.

        Raises:
            ConvergenceError: out of reach; WorkingModeError: no root in the YAML ``working_mode``.
        """
        task = self._task_vector(task)
        robot = self.robot
        q = self.configuration(task, self.motor_angles(task))
        violations = robot.working_mode_violations(q)
        if violations:
            p, s, k = self._coefficients(task)
            for legs in range(1, 16):  # other sign patterns
                signs = self._home_signs * np.where([(legs >> i) & 1 for i in range(4)], -1.0, 1.0)
                candidate = self.configuration(task, self.motor_angles(task, signs))
                if not robot.working_mode_violations(candidate):
                    return candidate
            raise WorkingModeError(f"{robot.name}: pose {task.tolist()}: no inverse solution in working_mode "
                                   f"(violates {violations})")
        return q

    # ----------------------------------------------------------- forward
    def forward_iterations(self, actuated: np.ndarray, start: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        """``(x, iterations)``: the pose (4,) of the motor angles (4,) by eq. (9), from ``start`` (home's pose).

        Safeguard (not in the paper): a step of eq. (9) that leaves the workspace (a leg out
        of reach) is halved until the pose is reachable again.

        Raises:
            ConvergenceError: no convergence to ``tolerance`` (rad) in ``max_iterations``.
        """
        target = np.array([wrap_angle(q, ref) for q, ref in zip(actuated, self._home_actuated)])
        x = (self._home_task if start is None else np.asarray(start, dtype=float)).copy()
        q_n = self.motor_angles(x)
        for iteration in range(1, self.max_iterations + 1):
            error = target - q_n
            if np.max(np.abs(error)) < self.tolerance:
                return x, iteration - 1
            step = self.jacobian(x, q_n) @ error  # eq. (9)
            for _ in range(30):
                try:
                    q_next = self.motor_angles(x + step)
                    break
                except ConvergenceError:
                    step = 0.5 * step
            else:
                raise ConvergenceError(f"{self.robot.name}: eq. (9) left the workspace for motors {actuated.tolist()}")
            x, q_n = x + step, q_next
        raise ConvergenceError(f"{self.robot.name}: eq. (9) did not converge in {self.max_iterations} iterations "
                               f"for motors {actuated.tolist()} (last error {np.max(np.abs(target - q_n)):.3g} rad)")

    def forward(self, actuated: np.ndarray, sensed: np.ndarray | None = None) -> np.ndarray:
        """Every joint (nv,) from the four motor angles (rad): eq. (9) from the home pose.

        Raises:
            ConvergenceError, SingularityError: from the solvers this closed form calls.
            WorkingModeError: the answer violates ``assembly_mode``.
        """
        actuated = np.asarray(actuated, dtype=float).reshape(-1)
        if actuated.shape != (_LEGS,) or not np.all(np.isfinite(actuated)):
            raise InputError(f"{self.robot.name}: expected 4 finite motor angles, got {actuated.tolist()}")
        x, _ = self.forward_iterations(actuated)
        q = self.configuration(x, self.motor_angles(x))
        violations = self.robot.assembly_mode_violations(q)
        if violations:
            raise WorkingModeError(f"{self.robot.name}: motors {actuated.tolist()}: eq. (9) converged to a pose "
                                   f"violating assembly_mode {violations}")
        return q

    def _task_vector(self, task: np.ndarray) -> np.ndarray:
        task = np.asarray(task, dtype=float).reshape(-1)
        if task.shape != (4,) or not np.all(np.isfinite(task)):
            raise InputError(f"{self.robot.name}: expected a finite pose (x, y, z, theta), got {task.tolist()}")
        return task
