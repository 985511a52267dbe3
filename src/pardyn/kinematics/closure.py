"""Loop-closure equations on the pinocchio tree: residual, Jacobian, drift.

For every closure ``(a, b)`` the frames ``a`` and ``b`` of the tree coincide
in the real robot. Stacking the selected components of their placement error
gives the closure equations, the generic form of the DualV paper's eq. (7):

    phi(q) = 0                  # (m,)    m = number of closure constraints
    K(q) qdot = 0               # K: (m, nv), the velocity form, eqs. (9), (11)
    K(q) qddot + k(q, qdot) = 0 # k = Kdot qdot: (m,), the acceleration form, eqs. (10), (12)

Error of one closure (world-aligned, so that planar loops keep x, y, rz):

    e_pos = p_b - p_a                      # (3,)
    e_rot = R_a log3(R_a^T R_b)            # (3,)
    e_dist = |p_b - p_a| - length          # distance closures (massless rods)

Rows of K are the matching rows of ``J_b - J_a`` with pinocchio's
LOCAL_WORLD_ALIGNED frame Jacobians (exact where the error is zero; the
rotation rows are exact everywhere for loops whose joint axes are parallel).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from pardyn.description.config import Closure

__all__ = ["LoopClosures"]

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


class LoopClosures:
    """The closure equations of a robot, evaluated with its own ``pin.Data``.

    Args:
        model: pinocchio model of the tree (one-dof joints only).
        closures: the closures of the robot description.
    """

    def __init__(self, model: pin.Model, closures: Sequence[Closure]) -> None:
        self.model = model
        self.data = model.createData()
        self.closures = tuple(closures)
        self._frame_ids = [
            (model.getFrameId(c.frames[0]), model.getFrameId(c.frames[1])) for c in self.closures
        ]
        self._rows = []
        self._components = []  # index arrays into the 6-vector error, per closure
        self._needs_rotation = []
        start = 0
        for closure in self.closures:
            self._rows.append(slice(start, start + closure.size))
            self._components.append(np.asarray(closure.components, dtype=int))
            self._needs_rotation.append(any(c >= 3 for c in closure.components))
            start += closure.size
        self.size = start  # m
        self._error = np.zeros(6)

    def _placement_errors(self) -> np.ndarray:
        """Residual from the frame placements already in ``self.data``."""
        residual = np.empty(self.size)
        error = self._error
        oMf = self.data.oMf
        for closure, (ia, ib), rows, components, rotation in zip(
            self.closures, self._frame_ids, self._rows, self._components, self._needs_rotation
        ):
            placement_a, placement_b = oMf[ia], oMf[ib]
            delta = placement_b.translation - placement_a.translation
            if closure.type == "distance":
                residual[rows] = np.linalg.norm(delta) - closure.length
                continue
            error[:3] = delta
            if rotation:
                rotation_a = placement_a.rotation
                error[3:] = rotation_a @ pin.log3(rotation_a.T @ placement_b.rotation)
            residual[rows] = error[components]
        return residual

    def residual(self, q: np.ndarray) -> np.ndarray:
        """Closure residual ``phi(q)``, shape (m,), in m and rad."""
        pin.framesForwardKinematics(self.model, self.data, q)
        return self._placement_errors()

    def residual_and_jacobian(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``phi(q)`` (m,) and ``K(q)`` (m, nv) from one kinematic pass."""
        pin.computeJointJacobians(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        return self._placement_errors(), self._jacobian_from_data()

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """Closure Jacobian ``K(q) = d phi / d q`` at a closed configuration, shape (m, nv)."""
        pin.computeJointJacobians(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        return self._jacobian_from_data()

    def jacobian_and_rate(self, q: np.ndarray, qdot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``K`` and ``Kdot = dK/dt`` along ``qdot``, both (m, nv), from one kinematic pass.

        ``Kdot qdot`` equals :meth:`drift`. Rows from pinocchio's frame Jacobians
        and their time variations (world-aligned); a distance closure adds the
        rotation rate of its unit vector.
        """
        model, data = self.model, self.data
        pin.computeJointJacobiansTimeVariation(model, data, q, qdot)  # data.J and data.dJ
        pin.updateFramePlacements(model, data)
        jacobian = np.empty((self.size, model.nv))
        rate = np.empty((self.size, model.nv))
        for closure, (ia, ib), rows, components in zip(
            self.closures, self._frame_ids, self._rows, self._components
        ):
            relative = pin.getFrameJacobian(model, data, ib, _LWA) - pin.getFrameJacobian(model, data, ia, _LWA)
            relative_rate = pin.getFrameJacobianTimeVariation(model, data, ib, _LWA) - pin.getFrameJacobianTimeVariation(
                model, data, ia, _LWA
            )
            if closure.type != "distance":
                jacobian[rows], rate[rows] = relative[components], relative_rate[components]
                continue
            delta = data.oMf[ib].translation - data.oMf[ia].translation
            distance = np.linalg.norm(delta)
            unit = delta / distance
            velocity = relative[:3] @ qdot
            unit_rate = (velocity - unit * (unit @ velocity)) / distance
            jacobian[rows] = unit @ relative[:3]
            rate[rows] = unit @ relative_rate[:3] + unit_rate @ relative[:3]
        return jacobian, rate

    def _jacobian_from_data(self) -> np.ndarray:
        jacobian = np.empty((self.size, self.model.nv))
        for closure, (ia, ib), rows, components in zip(
            self.closures, self._frame_ids, self._rows, self._components
        ):
            jac_a = pin.getFrameJacobian(self.model, self.data, ia, _LWA)
            jac_b = pin.getFrameJacobian(self.model, self.data, ib, _LWA)
            relative = jac_b - jac_a  # (6, nv)
            if closure.type == "distance":
                delta = self.data.oMf[ib].translation - self.data.oMf[ia].translation
                jacobian[rows] = (delta / np.linalg.norm(delta)) @ relative[:3]
            else:
                jacobian[rows] = relative[components]
        return jacobian

    def drift(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The velocity-product term ``Kdot(q, v) v``, shape (m,).

        It is the closure acceleration obtained with zero joint accelerations:
        the relative classical acceleration of the two frames (m/s^2, rad/s^2).
        """
        pin.forwardKinematics(self.model, self.data, q, v, np.zeros(self.model.nv))
        pin.updateFramePlacements(self.model, self.data)
        out = np.empty(self.size)
        for closure, (ia, ib), rows, components in zip(
            self.closures, self._frame_ids, self._rows, self._components
        ):
            acc_a = pin.getFrameClassicalAcceleration(self.model, self.data, ia, _LWA)
            acc_b = pin.getFrameClassicalAcceleration(self.model, self.data, ib, _LWA)
            relative = np.concatenate([acc_b.linear - acc_a.linear, acc_b.angular - acc_a.angular])
            if closure.type == "distance":
                delta = self.data.oMf[ib].translation - self.data.oMf[ia].translation
                vel_a = pin.getFrameVelocity(self.model, self.data, ia, _LWA).linear
                vel_b = pin.getFrameVelocity(self.model, self.data, ib, _LWA).linear
                rate = vel_b - vel_a
                distance = np.linalg.norm(delta)
                unit = delta / distance
                out[rows] = unit @ relative[:3] + (rate @ rate - (unit @ rate) ** 2) / distance
            else:
                out[rows] = relative[components]
        return out

    def frame_positions(self, q: np.ndarray, names: Sequence[str]) -> dict[str, np.ndarray]:
        """World positions (m) of the named frames at ``q``."""
        pin.framesForwardKinematics(self.model, self.data, q)
        return {name: self.data.oMf[self.model.getFrameId(name)].translation.copy() for name in names}
