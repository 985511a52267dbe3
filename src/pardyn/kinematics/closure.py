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

Joint couplings (MJCF ``<equality joint polycoef>``, a YAML ``type: coupling``)
come last, one row each, a polynomial of degree <= 4 (MuJoCo's five ``polycoef``)::

    e = q_b - P(q_a),   P(x) = c_0 + c_1 x + ... + c_4 x^4
    K row = e_b - P'(q_a) e_a,   Kdot qdot = -P''(q_a) qdot_a^2
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from pardyn.description.config import Closure

__all__ = ["LoopClosures"]

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


class LoopClosures:
    """The closure equations of a robot, evaluated with its own ``pin.Data``.

    Evaluation is allocation-light: the frame placements are read through numpy
    views of ``data.oMf`` taken once (pinocchio writes them in place), every
    closure's error is computed in one batched pass, and the rows of ``phi`` and
    ``K`` are picked from the stacked 6-vectors with precomputed flat indices.

    Args:
        model: pinocchio model of the tree (one-dof joints only).
        closures: the closures of the robot description.
    """

    def __init__(self, model: pin.Model, closures: Sequence[Closure]) -> None:
        self.model = model
        self.data = model.createData()
        # joint couplings q_b = P(q_a) = sum_k c_k q_a^k: rows q_b - P(q_a) after the frame closures'
        self.couplings = tuple(c for c in closures if c.type == "coupling")
        self.closures = tuple(c for c in closures if c.type != "coupling")
        self._coupling_a = np.array([model.joints[model.getJointId(c.joints[0])].idx_v for c in self.couplings],
                                    dtype=int)
        self._coupling_b = np.array([model.joints[model.getJointId(c.joints[1])].idx_v for c in self.couplings],
                                    dtype=int)
        degree = max((len(c.coefficients) for c in self.couplings), default=2)
        self._polynomials = np.zeros((len(self.couplings), max(degree, 2)))  # (n_couplings, degree + 1), c_0 first
        for k, closure in enumerate(self.couplings):
            self._polynomials[k, : len(closure.coefficients)] = closure.coefficients
        self._linear = not np.any(self._polynomials[:, 2:])  # constant rows: C = e_b - c_1 e_a
        self._coupling_rows = None
        if self._linear:
            self._coupling_rows = self._coupling_jacobian(np.zeros(model.nq))
        self._q = np.zeros(model.nq)  # the configuration of the last evaluation (the coupling rows read it)
        self._frame_ids = [
            (model.getFrameId(c.frames[0]), model.getFrameId(c.frames[1])) for c in self.closures
        ]
        self._rows = []
        self._components = []  # index arrays into the 6-vector error, per closure
        start = 0
        for closure in self.closures:
            self._rows.append(slice(start, start + closure.size))
            self._components.append(np.asarray(closure.components, dtype=int))
            start += closure.size
        self.frame_size = start
        self.size = start + len(self.couplings)  # m
        count = len(self.closures)
        # Flat indices into the stacked (n_closures, 6) errors / (n_closures * 6, nv) Jacobians.
        self._picked = np.array(
            [6 * c + k for c, closure in enumerate(self.closures) if closure.type != "distance"
             for k in closure.components], dtype=int)
        self._picked_rows = np.array(
            [row for closure, rows in zip(self.closures, self._rows) if closure.type != "distance"
             for row in range(rows.start, rows.stop)], dtype=int)
        self._distance = [  # (closure index, row, length) of the distance closures
            (c, rows.start, closure.length) for c, (closure, rows) in enumerate(zip(self.closures, self._rows))
            if closure.type == "distance"
        ]
        self._rotating = np.array(  # closures with a rotation row
            [c for c, closure in enumerate(self.closures)
             if closure.type != "distance" and any(k >= 3 for k in closure.components)], dtype=int)
        # where the rotation errors go in the (n_closures, 6) buffer: a slice when every closure rotates
        every = np.array_equal(self._rotating, np.arange(count))
        self._rotation_rows = (slice(None), slice(3, 6)) if every else (self._rotating[:, None], np.arange(3, 6))
        self._frames_a = [a for a, _ in self._frame_ids]
        self._frames_b = [b for _, b in self._frame_ids]
        self._bind_views()
        self._errors = np.zeros((count, 6))  # (n_closures, 6) buffer

    def _bind_views(self) -> None:
        """Live numpy views of the closure frames' placements in ``self.data`` (written in place by pinocchio)."""
        placements = self.data.oMf.tolist()
        self._placements = placements  # keeps the views' owners alive
        self._positions_a = [placements[a].translation for a in self._frames_a]
        self._positions_b = [placements[b].translation for b in self._frames_b]
        self._rotations_a = [placements[self._frames_a[c]].rotation for c in self._rotating]
        self._rotations_b = [placements[self._frames_b[c]].rotation for c in self._rotating]

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        for name in ("_placements", "_positions_a", "_positions_b", "_rotations_a", "_rotations_b"):
            del state[name]  # views of this process's data: rebound on unpickling
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind_views()

    def _coupling_values(self, q: np.ndarray, derivative: int = 0) -> np.ndarray:
        """``P^(derivative)(q_a)`` of every coupling, shape (n_couplings,) (Horner on the rows of coefficients)."""
        coefficients = self._polynomials
        for _ in range(derivative):
            coefficients = coefficients[:, 1:] * np.arange(1, coefficients.shape[1])
        x = q[self._coupling_a]
        value = np.zeros(len(self.couplings))
        for column in range(coefficients.shape[1] - 1, -1, -1):
            value = value * x + coefficients[:, column]
        return value

    def _coupling_jacobian(self, q: np.ndarray) -> np.ndarray:
        """Rows ``e_b - P'(q_a) e_a`` of the couplings, shape (n_couplings, nv) (constant when linear)."""
        if self._coupling_rows is not None:
            return self._coupling_rows
        rows = np.zeros((len(self.couplings), self.model.nv))
        index = np.arange(len(self.couplings))
        rows[index, self._coupling_b] += 1.0
        rows[index, self._coupling_a] -= self._coupling_values(q, 1)
        return rows

    def _coupling_rates(self, q: np.ndarray, qdot: np.ndarray) -> np.ndarray:
        """``d/dt`` of the coupling rows: ``-P''(q_a) qdot_a e_a``, shape (n_couplings, nv)."""
        rates = np.zeros((len(self.couplings), self.model.nv))
        if not self._linear:
            rates[np.arange(len(self.couplings)), self._coupling_a] = -self._coupling_values(q, 2) * qdot[
                self._coupling_a]
        return rates

    def _placement_errors(self) -> np.ndarray:
        """Residual (m,): the frame closures' (:meth:`_frame_errors`), then the couplings' ``q_b - P(q_a)``."""
        if not len(self.couplings):
            return self._frame_errors()
        return np.concatenate([self._frame_errors(), self._q[self._coupling_b] - self._coupling_values(self._q)])

    def _frame_errors(self) -> np.ndarray:
        """Residual (m,) from the frame placements already in ``self.data``.

        Rotation error ``R_a log3(R_a^T R_b) = log3(R_b R_a^T)`` (conjugation), one matrix product per closure.
        """
        if not self.closures:
            return np.empty(0)
        errors = self._errors
        delta = np.array(self._positions_b)
        delta -= np.array(self._positions_a)  # (n_closures, 3), p_b - p_a
        errors[:, :3] = delta
        if self._rotating.size:
            relative = np.array(self._rotations_b) @ np.array(self._rotations_a).transpose(0, 2, 1)  # R_b R_a^T
            errors[self._rotation_rows] = [pin.log3(r) for r in relative]
        if not self._distance:
            return errors.ravel()[self._picked]
        residual = np.empty(self.frame_size)
        residual[self._picked_rows] = errors.ravel()[self._picked]
        for c, row, length in self._distance:
            residual[row] = math.sqrt(delta[c] @ delta[c]) - length
        return residual

    def _relative_jacobians(self) -> np.ndarray:
        """``J_b - J_a`` (n_closures * 6, nv), world-aligned, from the Jacobians already in ``self.data``."""
        model, data = self.model, self.data
        if not self.closures:
            return np.empty((0, model.nv))
        jacobian_b = np.array([pin.getFrameJacobian(model, data, b, _LWA) for b in self._frames_b])
        jacobian_b -= np.array([pin.getFrameJacobian(model, data, a, _LWA) for a in self._frames_a])
        return jacobian_b.reshape(-1, model.nv)

    def residual(self, q: np.ndarray) -> np.ndarray:
        """Closure residual ``phi(q)``, shape (m,), in m and rad."""
        self._q = q
        pin.framesForwardKinematics(self.model, self.data, q)
        return self._placement_errors()

    def residual_and_jacobian(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``phi(q)`` (m,) and ``K(q)`` (m, nv) from one kinematic pass."""
        self._q = q
        pin.computeJointJacobians(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        return self._placement_errors(), self._jacobian_from_data()

    def linearize(self, q: np.ndarray) -> np.ndarray:
        """``phi(q)`` (m,), leaving the kinematic pass in ``self.data`` for :meth:`last_jacobian`.

        Newton evaluates the residual first and the Jacobian only when it steps again.
        """
        self._q = q
        pin.computeJointJacobians(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        return self._placement_errors()

    def last_jacobian(self) -> np.ndarray:
        """``K`` (m, nv) at the ``q`` of the last :meth:`linearize` or :meth:`residual_and_jacobian` call."""
        return self._jacobian_from_data()

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """Closure Jacobian ``K(q) = d phi / d q`` at a closed configuration, shape (m, nv)."""
        self._q = q
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
        nv = model.nv
        if self.closures:  # every frame's rows by pinocchio, the closures' differences in one pass each
            relative = np.array([pin.getFrameJacobian(model, data, b, _LWA) for b in self._frames_b])
            relative -= np.array([pin.getFrameJacobian(model, data, a, _LWA) for a in self._frames_a])
            relative_rate = np.array([pin.getFrameJacobianTimeVariation(model, data, b, _LWA) for b in self._frames_b])
            relative_rate -= np.array([pin.getFrameJacobianTimeVariation(model, data, a, _LWA) for a in self._frames_a])
            relative, relative_rate = relative.reshape(-1, nv), relative_rate.reshape(-1, nv)  # (n_closures * 6, nv)
            if not self._distance and not len(self.couplings):
                return relative[self._picked], relative_rate[self._picked]
        jacobian = np.empty((self.size, nv))
        rate = np.empty((self.size, nv))
        jacobian[self.frame_size:] = self._coupling_jacobian(q)
        rate[self.frame_size:] = self._coupling_rates(q, qdot)
        if not self.closures:
            return jacobian, rate
        jacobian[self._picked_rows] = relative[self._picked]
        rate[self._picked_rows] = relative_rate[self._picked]
        for c, row, _ in self._distance:
            linear, linear_rate = relative[6 * c : 6 * c + 3], relative_rate[6 * c : 6 * c + 3]
            delta = self._positions_b[c] - self._positions_a[c]
            distance = np.linalg.norm(delta)
            unit = delta / distance
            velocity = linear @ qdot
            unit_rate = (velocity - unit * (unit @ velocity)) / distance
            jacobian[row] = unit @ linear
            rate[row] = unit @ linear_rate + unit_rate @ linear
        return jacobian, rate

    def _jacobian_from_data(self) -> np.ndarray:
        if not len(self.couplings):
            return self._frame_jacobian()
        return np.vstack([self._frame_jacobian(), self._coupling_jacobian(self._q)])

    def _frame_jacobian(self) -> np.ndarray:
        relative = self._relative_jacobians()  # (n_closures * 6, nv)
        if not self._distance:
            return relative[self._picked]
        jacobian = np.empty((self.frame_size, self.model.nv))
        jacobian[self._picked_rows] = relative[self._picked]
        delta = np.array(self._positions_b) - np.array(self._positions_a)
        for c, row, _ in self._distance:
            jacobian[row] = (delta[c] / math.sqrt(delta[c] @ delta[c])) @ relative[6 * c : 6 * c + 3]
        return jacobian

    def drift(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The velocity-product term ``Kdot(q, v) v``, shape (m,).

        It is the closure acceleration obtained with zero joint accelerations:
        the relative classical acceleration of the two frames (m/s^2, rad/s^2).
        """
        pin.forwardKinematics(self.model, self.data, q, v, np.zeros(self.model.nv))
        pin.updateFramePlacements(self.model, self.data)
        out = np.zeros(self.size)
        if len(self.couplings):  # d/dt (qdot_b - P'(q_a) qdot_a) at zero qddot: -P''(q_a) qdot_a^2
            out[self.frame_size:] = -self._coupling_values(q, 2) * v[self._coupling_a] ** 2
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
        placements = self._placements
        return {name: placements[self.model.getFrameId(name)].translation.copy() for name in names}

    def frame_points(self, q: np.ndarray, frame_ids: Sequence[int]) -> list[list[float]]:
        """World positions (m) of frames given by pinocchio id at ``q``, as lists ``[x, y, z]`` (for sign tests)."""
        pin.framesForwardKinematics(self.model, self.data, q)
        placements = self._placements
        return [placements[i].translation.tolist() for i in frame_ids]
