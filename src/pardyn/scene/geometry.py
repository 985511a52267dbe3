"""What a 3D view draws of a robot at a configuration: body shapes, skeleton, closing links, platform.

Bodies are drawn with their meshes when the URDF has ``<visual><mesh>`` (read by pinocchio's geometry model),
else with the **ellipsoid of the same inertia**: a solid ellipsoid of mass ``m`` and semi-axes ``a, b, c`` has
principal moments ``I_x = m (b^2 + c^2) / 5`` (and cyclic), so ``a^2 = 5 (I_y + I_z - I_x) / (2 m)``, along the
principal axes of the body's inertia about its centre of mass (semi-axes at least :data:`MIN_SEMI_AXIS_M`).

The closing links are drawn as segments from each closure frame's joint to the frame (the leg tip, the platform
corner) and between the two frames of a closure (a rod for a distance closure, a point when the loop is closed).
A configuration is coloured by its singularity: the largest condition number of the closure Jacobian blocks
(:meth:`pardyn.kinematics.solver.ClosureSolver.loop_conditioning`) on a log scale up to the robot's
``max_condition``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from pardyn.robot import Robot
from pardyn.visualization import skeleton

__all__ = ["MIN_SEMI_AXIS_M", "BodyShape", "RobotScene", "SceneFrame", "inertia_ellipsoid", "singularity_colour"]

MIN_SEMI_AXIS_M = 0.008
"""Smallest semi-axis of a drawn ellipsoid (m): a rod's ellipsoid stays visible."""


@dataclass(frozen=True)
class BodyShape:
    """A drawn body: a mesh or an ellipsoid rigidly attached to a joint of the tree.

    Attributes:
        name: the link (or geometry) name.
        joint: pinocchio joint id it moves with.
        placement: (4, 4) pose of the shape in the joint frame.
        kind: ``"ellipsoid"`` or ``"mesh"``.
        size: (3,) m: the ellipsoid's diameters; a mesh's scale factors.
        mesh: the mesh file (``kind == "mesh"``).
    """

    name: str
    joint: int
    placement: np.ndarray
    kind: str
    size: np.ndarray
    mesh: str | None = None


@dataclass(frozen=True)
class SceneFrame:
    """The scene at one configuration (all poses in the robot's base frame, m).

    Attributes:
        q: the configuration (nv,).
        links: link name -> (4, 4) pose of every moving link (BODY frames off the root): the ``/tf`` tree.
        shapes: (shape, (4, 4) world pose) of every drawn body.
        skeleton: (k, 2, 3) segments joint to child joint and joint to marker frame.
        closing: (c, 2, 3) segments of the closing links: closure frame's joint to the frame, and frame a to b.
        closure_points: (2 n_closures, 3) the two frames of each closure.
        platform: (4, 4) pose of the effector frame (the platform, or a serial robot's last link).
        condition: largest condition number of the closure Jacobian blocks (1 for a robot without loops).
        singularity: ``log10(condition) / log10(max_condition)`` clipped to [0, 1]: 1 is singular.
        residual: largest closure residual (m or rad): the loops are closed when it is small.
    """

    q: np.ndarray
    links: dict[str, np.ndarray]
    shapes: list[tuple[BodyShape, np.ndarray]]
    skeleton: np.ndarray
    closing: np.ndarray
    closure_points: np.ndarray
    platform: np.ndarray
    condition: float
    singularity: float
    residual: float


def inertia_ellipsoid(inertia: pin.Inertia) -> tuple[np.ndarray, np.ndarray]:
    """``(placement (4, 4), diameters (3,))`` of the ellipsoid of the same inertia (module docstring), in the
    body's joint frame: centred on the centre of mass, along the principal axes."""
    moments, axes = np.linalg.eigh(np.asarray(inertia.inertia))
    if np.linalg.det(axes) < 0:
        axes[:, 2] *= -1.0
    mass = max(float(inertia.mass), 1e-12)
    squares = 5.0 * (moments.sum() - 2.0 * moments) / (2.0 * mass)  # a_i^2 = 5 (I_j + I_k - I_i) / (2 m)
    semi = np.sqrt(np.maximum(squares, MIN_SEMI_AXIS_M**2))
    placement = np.eye(4)
    placement[:3, :3] = axes
    placement[:3, 3] = np.asarray(inertia.lever)
    return placement, 2.0 * semi


def singularity_colour(singularity: float) -> tuple[float, float, float]:
    """RGB in [0, 1] of a :attr:`SceneFrame.singularity`: steel blue up to 0.5 (a condition number up to the square
    root of ``max_condition``), then through orange (0.75) to red at a singular configuration (1)."""
    s = float(np.clip(singularity, 0.0, 1.0))
    calm, warn, alarm = np.array([0.27, 0.51, 0.71]), np.array([1.0, 0.6, 0.0]), np.array([0.9, 0.05, 0.05])
    if s <= 0.5:
        colour = calm
    elif s <= 0.75:
        colour = calm + (warn - calm) * ((s - 0.5) / 0.25)
    else:
        colour = warn + (alarm - warn) * ((s - 0.75) / 0.25)
    return tuple(float(c) for c in colour)


def _matrix(placement: pin.SE3) -> np.ndarray:
    return np.asarray(placement.homogeneous).copy()


class RobotScene:
    """The drawable geometry of ``robot``, computed once; :meth:`frame` places it at a configuration.

    Args:
        robot: the robot.
        max_condition: condition number drawn as singular; the robot solver's (``max_condition``) by default.
    """

    def __init__(self, robot: Robot, *, max_condition: float | None = None) -> None:
        self.robot = robot
        self.model = robot.model
        self.data = self.model.createData()
        self.max_condition = float(max_condition or robot.solver.max_condition)
        frames = self.model.frames
        self.root = next(f.name for f in frames if f.type == pin.FrameType.BODY and f.parentJoint == 0)
        self._link_frames = [(f.name, i) for i, f in enumerate(frames)
                             if f.type == pin.FrameType.BODY and f.name != self.root and f.parentJoint != 0]
        self.effector_id = self.model.getFrameId(robot.effector_frame)
        self.shapes = self._meshes() or self._ellipsoids()
        self._closure_frames = [(self.model.getFrameId(a), self.model.getFrameId(b))
                                for a, b in (c.frames for c in robot.closures.closures)]

    @property
    def link_names(self) -> list[str]:
        """The moving links (the child frames of ``/tf``), in the model's order."""
        return [name for name, _ in self._link_frames]

    def _ellipsoids(self) -> list[BodyShape]:
        shapes = []
        for joint in range(1, self.model.njoints):
            inertia = self.model.inertias[joint]
            if inertia.mass <= 1e-9:
                continue  # virtual joints, massless tips
            placement, size = inertia_ellipsoid(inertia)
            name = next((f.name for f in self.model.frames if f.type == pin.FrameType.BODY and f.parentJoint == joint),
                        self.model.names[joint])
            shapes.append(BodyShape(name, joint, placement, "ellipsoid", size))
        return shapes

    def _meshes(self) -> list[BodyShape]:
        """The URDF's visual meshes (files that exist), none when it has none."""
        path = Path(self.robot.urdf)
        if path.suffix.lower() != ".urdf" or not re.search(r"<mesh\b", path.read_text(encoding="utf-8")):
            return []
        try:
            geometry = pin.buildGeomFromUrdf(self.model, str(path), pin.GeometryType.VISUAL, package_dirs=[str(path.parent)])
        except (RuntimeError, ValueError):
            return []
        shapes = []
        for item in geometry.geometryObjects:
            mesh = str(getattr(item, "meshPath", "") or "")
            if not mesh or not Path(mesh).is_file():
                continue
            shapes.append(BodyShape(item.name, int(item.parentJoint), _matrix(item.placement), "mesh",
                                    np.asarray(item.meshScale, dtype=float).copy(), mesh))
        return shapes

    def frame(self, q: np.ndarray) -> SceneFrame:
        """The scene at ``q`` (nv,) (see :class:`SceneFrame`)."""
        q = np.asarray(q, dtype=float)
        model, data = self.model, self.data
        pin.framesForwardKinematics(model, data, q)
        links = {name: _matrix(data.oMf[index]) for name, index in self._link_frames}
        shapes = [(shape, _matrix(data.oMi[shape.joint]) @ shape.placement) for shape in self.shapes]
        closing, points = [], []
        for a, b in self._closure_frames:
            p_a, p_b = data.oMf[a].translation.copy(), data.oMf[b].translation.copy()
            for frame_id, point in ((a, p_a), (b, p_b)):
                origin = data.oMi[model.frames[frame_id].parentJoint].translation
                if np.linalg.norm(point - origin) > 1e-9:
                    closing.append((origin.copy(), point))
            if np.linalg.norm(p_b - p_a) > 1e-9:
                closing.append((p_a, p_b))
            points += [p_a, p_b]
        platform = _matrix(data.oMf[self.effector_id])
        closures = self.robot.closures
        if len(closures.closures) or len(closures.couplings):
            residual = float(np.abs(closures.residual(q)).max(initial=0.0))
            conditioning = self.robot.solver.loop_conditioning(closures.jacobian(q), q)
            condition = max(conditioning.values(), default=1.0)
        else:
            residual, condition = 0.0, 1.0
        condition = math.inf if not np.isfinite(condition) else float(condition)
        singularity = 1.0 if condition == math.inf else float(
            np.clip(math.log10(max(condition, 1.0)) / math.log10(self.max_condition), 0.0, 1.0))
        return SceneFrame(
            q=q.copy(), links=links, shapes=shapes,
            skeleton=np.array(skeleton(self.robot, q)).reshape(-1, 2, 3),
            closing=np.array(closing).reshape(-1, 2, 3), closure_points=np.array(points).reshape(-1, 3),
            platform=platform, condition=condition, singularity=singularity, residual=residual,
        )
