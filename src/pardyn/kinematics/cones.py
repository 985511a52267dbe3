"""Angles of passive universal (U) and spherical (S) joints, against their cone limits.

A robot YAML's ``limits: cones:`` (:class:`pardyn.description.limits.JointCone`) names,
per group of joints, ``(moving, reference)`` frame pairs and a link axis ``a`` in the
moving frame. A joint's angle at ``q`` is the swing of that axis seen from the reference
frame, from its direction at home::

    u(q) = R_ref(q)^T R_mov(q) a                                   # (3,)
    angle(q) = atan2(|u(q) x u(home)|, u(q) . u(home))             # rad, in [0, pi]

the angle a U joint's cross or an S joint's socket has to allow (a spin about the link
axis does not count). The exciting-trajectory design keeps every angle within its group's
``max`` (:mod:`pardyn.excitation.design`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.errors import InputError

if TYPE_CHECKING:
    from pardyn.mechanism import Mechanism

__all__ = ["ConeAngles"]


class ConeAngles:
    """The cone angles of ``robot``'s ``limits.cones`` (none: an empty set).

    Attributes:
        names: group name per joint pair (m,); limits: the group's limit per pair (m,) (rad).

    Raises:
        InputError: a frame of ``limits.cones`` that the model does not have (named).
    """

    def __init__(self, robot: Mechanism) -> None:
        self.model = robot.model
        self.data = self.model.createData()
        cones = robot.description.limits.cones
        ids, axes, names, limits = [], [], [], []
        for cone in cones:
            for moving, reference in cone.frames:
                for frame in (moving, reference):
                    if not self.model.existFrame(frame):
                        raise InputError(f"{robot.source}: limits.cones {cone.name!r}: no frame {frame!r} "
                                         f"in the model")
                ids.append((self.model.getFrameId(moving), self.model.getFrameId(reference)))
                axes.append(cone.axis)
                names.append(cone.name)
                limits.append(cone.max_rad)
        self._ids = ids
        self._axes = np.array(axes, dtype=float).reshape(-1, 3)
        self.names = tuple(names)
        self.limits = np.array(limits, dtype=float)
        self.groups = tuple(dict.fromkeys(names))
        self._home = self._directions(robot.home) if ids else np.zeros((0, 3))

    def __len__(self) -> int:
        return len(self._ids)

    def _directions(self, q: np.ndarray) -> np.ndarray:
        """``u`` of every pair at ``q`` (m, 3)."""
        pin.framesForwardKinematics(self.model, self.data, np.asarray(q, dtype=float))
        frames = self.data.oMf
        return np.array([frames[r].rotation.T @ (frames[m].rotation @ a) for (m, r), a in zip(self._ids, self._axes)])

    def angles(self, q: np.ndarray) -> np.ndarray:
        """Angles (m,) rad at ``q`` (nv,), or (N, m) for ``q`` (N, nv)."""
        q = np.asarray(q, dtype=float)
        if q.ndim == 2:
            return np.array([self.angles(row) for row in q]).reshape(len(q), len(self))
        u = self._directions(q)
        return np.arctan2(np.linalg.norm(np.cross(u, self._home), axis=1), np.einsum("ij,ij->i", u, self._home))

    def worst_ratios(self, q: np.ndarray) -> dict[str, float]:
        """Per group, the largest angle / limit over the configurations ``q`` (N, nv) (> 1: outside the cone)."""
        ratios = np.atleast_2d(self.angles(q)) / self.limits
        return {group: float(ratios[:, [n == group for n in self.names]].max()) for group in self.groups}
