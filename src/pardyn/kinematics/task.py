"""Task coordinates read from a frame of the tree (no virtual serial chain needed).

A robot may define its task as pose components of a named frame (the
effector, the platform centre), ``task: {frame: effector, coordinates: [x, y, z]}``::

    x, y, z      position of the frame origin in world axes (m)
    rx, ry, rz   components of the rotation vector r = log3(R R_0^T), world axes (rad);
                 R_0 = identity: the frame's orientation relative to the world axes

The rotation vector has no gimbal lock (it is singular only at |r| = pi, a
half turn away from the world axes): all three angles are usable together. A
frame whose working orientations are near a half turn from the world axes
should be replaced by a frame turned to match them (a fixed joint in the URDF). With one
rotation component (a planar platform turning about a fixed axis, ``[x, y, rz]``)
it is the plain rotation angle about that axis.

Rates are read from the frame Jacobian (LOCAL_WORLD_ALIGNED, pinocchio):

    xdot = J_x(q) qdot               # (n,) = (n, nv) @ (nv,)
    xddot = J_x(q) qddot + j_x(q, qdot)   # j_x = Jdot_x qdot: classical acceleration with qddot = 0

so the orientation rates are the components of the angular velocity (world
axes). They are the time derivatives of ``rx, ry, rz`` when the frame turns
about a fixed axis (every planar robot); for general spatial rotations they
differ from the derivative of the rotation vector by its left Jacobian, as in
every frame-task formulation (pink, mink, pinocchio's own).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from pardyn.description.config import COMPONENT_NAMES as FRAME_COORDINATES

__all__ = ["FRAME_COORDINATES", "FrameTask"]

_LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


class FrameTask:
    """Pose components of one frame as task coordinates.

    Args:
        model: pinocchio model of the tree.
        frame: name of the task frame.
        coordinates: components among :data:`FRAME_COORDINATES` (n,).
        reference_rotation: ``R_0`` (3, 3); identity (world axes) by default.
    """

    def __init__(
        self,
        model: pin.Model,
        frame: str,
        coordinates: Sequence[str],
        reference_rotation: np.ndarray | None = None,
    ) -> None:
        self.model = model
        self.data = model.createData()
        self.frame = frame
        self.frame_id = model.getFrameId(frame)
        self.coordinates = tuple(coordinates)
        self.rows = np.array([FRAME_COORDINATES.index(c) for c in self.coordinates], dtype=int)
        self.rotation_rows = self.rows[self.rows >= 3]
        self.full_rotation = len(self.rotation_rows) == 3
        self.reference_rotation = np.eye(3) if reference_rotation is None else np.array(reference_rotation)
        self.size = len(self.rows)

    # ------------------------------------------------------------------ values
    def _pose_vector(self, placement: pin.SE3) -> np.ndarray:
        rotation = pin.log3(placement.rotation @ self.reference_rotation.T)
        return np.concatenate([placement.translation, rotation])

    def values(self, q: np.ndarray) -> np.ndarray:
        """The task coordinates at ``q`` (n,), m and rad."""
        pin.framesForwardKinematics(self.model, self.data, q)
        return self._pose_vector(self.data.oMf[self.frame_id])[self.rows]

    def error(self, q: np.ndarray, target: np.ndarray) -> np.ndarray:
        """``x(q) - target`` (n,) for Newton; the orientation part is ``log3(R R_target^T)``
        when all three angles are task coordinates (exact on SO(3))."""
        pin.framesForwardKinematics(self.model, self.data, q)
        placement = self.data.oMf[self.frame_id]
        error = self._pose_vector(placement)[self.rows] - target
        if self.full_rotation:
            rotation_target = pin.exp3(np.asarray(target)[self.rows >= 3]) @ self.reference_rotation
            error[self.rows >= 3] = pin.log3(placement.rotation @ rotation_target.T)
        else:
            angles = self.rows >= 3
            error[angles] = (error[angles] + np.pi) % (2.0 * np.pi) - np.pi
        return error

    # ---------------------------------------------------------------- Jacobians
    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """``J_x(q)`` (n, nv): rows of the frame Jacobian (world-aligned)."""
        pin.computeJointJacobians(self.model, self.data, q)
        pin.updateFramePlacements(self.model, self.data)
        return pin.getFrameJacobian(self.model, self.data, self.frame_id, _LWA)[self.rows]

    def jacobian_and_drift(self, q: np.ndarray, qdot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``J_x`` (n, nv) and ``j_x = Jdot_x qdot`` (n,) from one pass."""
        model, data = self.model, self.data
        pin.computeJointJacobiansTimeVariation(model, data, q, qdot)
        pin.updateFramePlacements(model, data)
        jacobian = pin.getFrameJacobian(model, data, self.frame_id, _LWA)
        rate = pin.getFrameJacobianTimeVariation(model, data, self.frame_id, _LWA)
        return jacobian[self.rows], (rate @ qdot)[self.rows]

    def jacobian_rate(self, q: np.ndarray, qdot: np.ndarray) -> np.ndarray:
        """``Jdot_x`` (n, nv) along ``qdot``."""
        pin.computeJointJacobiansTimeVariation(self.model, self.data, q, qdot)
        pin.updateFramePlacements(self.model, self.data)
        return pin.getFrameJacobianTimeVariation(self.model, self.data, self.frame_id, _LWA)[self.rows]
