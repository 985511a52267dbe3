"""Warm-started forward kinematics of a stream of named joint readings (what the ``closure_solver`` node serves).

A closed-loop robot only measures some of its joints: the actuated ones ``q_a``
and, on robots with redundant sensing (3-RRR, Zubizarreta et al. 2010, section
4.2), some passive ones. :class:`ClosureTracker` solves the forward kinematic
problem ``phi(q) = 0, q[I] = q_I`` for the whole tree configuration ``q`` (nv,)
with :meth:`pardyn.Robot.solve_forward` (least squares on the readings when
there are more than degrees of freedom, e.g. the actuation-redundant DualV,
Briot et al. 2015), warm-started from its previous answer, and the joint
velocities with the pseudo-inverse of the measured rows of the velocity map
(DualV paper eqs. (21)-(22),
:meth:`pardyn.kinematics.differential.DifferentialKinematics.velocities_from`)::

    qdot = W (W_I^+ qdot_I),    W = [I ; -K_D^-1 K_x]              # (nv, n), eq. (9)

The platform pose (:class:`PlanarPose`) is read from the task coordinates of the
answer: x, y (and z), with one angle a rotation about z, with several angles the
rotation of the last joint of the task's virtual chain (the hexapod's yaw-pitch-roll).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.errors import DescriptionError, InputError, SingularityError
from pardyn.kinematics.solver import Solution

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["ClosedLoopState", "ClosureTracker", "JointStateError", "PlanarPose"]


class JointStateError(InputError):
    """A joint-state reading the solver cannot use.

    Attributes:
        kind: ``"names"`` (missing, duplicated or partial sensed names),
            ``"lengths"`` (as many positions/velocities as names expected) or
            ``"non_finite"`` (NaN or inf in a value that is used).
    """

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class PlanarPose:
    """Pose of the platform in the base frame.

    Attributes:
        x_m, y_m: platform reference point (m); z_m: its height (m, 0 for a planar robot).
        angle_rad: rotation about ``z`` (rad), None for a robot whose task has no angle
            or more than one (then ``orientation`` holds the rotation).
        orientation: ``(x, y, z, w)`` quaternion of a spatial platform's rotation, or None.
    """

    x_m: float
    y_m: float
    angle_rad: float | None
    z_m: float = 0.0
    orientation: tuple[float, float, float, float] | None = None

    def quaternion(self) -> tuple[float, float, float, float]:
        """``(x, y, z, w)`` of the platform's rotation (identity without angle)."""
        if self.orientation is not None:
            return self.orientation
        if self.angle_rad is None:
            return (0.0, 0.0, 0.0, 1.0)
        half = 0.5 * self.angle_rad
        return (0.0, 0.0, math.sin(half), math.cos(half))


@dataclass(frozen=True)
class ClosedLoopState:
    """Answer to one joint-state reading.

    Attributes:
        q: every joint position, :attr:`pardyn.Robot.joint_names` order, shape (nv,) (rad, m).
        qdot: every joint velocity, shape (nv,) (rad/s, m/s), None without measured velocities.
        pose: the platform pose read from the task coordinates of ``q``.
        solution: the solver's report (iterations, residual, conditioning).
        used_sensed: whether the sensed passive joints were part of the readings.
    """

    q: np.ndarray
    qdot: np.ndarray | None
    pose: PlanarPose
    solution: Solution
    used_sensed: bool


class ClosureTracker:
    """Warm-started forward kinematics of a robot from named joint readings.

    Keeps the last solution as the start of the next solve (the robot's home
    before the first one), so a stream of readings follows the robot's
    assembly mode; a reading that fails leaves it unchanged.

    Args:
        robot: the robot; its task must name ``x`` and ``y`` (and may name ``z``);
            with one angle it is a rotation about ``z``, with more the rotation of
            the last joint of the task's virtual chain (e.g. the hexapod's yaw-pitch-roll).

    Raises:
        DescriptionError: the robot's task has no platform position.
    """

    def __init__(self, robot: Robot) -> None:
        self.robot = robot
        task = list(robot.task_names)
        missing = [name for name in ("x", "y") if name not in task]
        if missing:
            raise DescriptionError(
                f"{robot.description.source}: task: the closure tracker needs a planar platform pose, "
                f"but the task coordinates {task} lack {missing}"
            )
        self._x_index = int(robot.task_indices[task.index("x")])
        self._y_index = int(robot.task_indices[task.index("y")])
        self._z_index = int(robot.task_indices[task.index("z")]) if "z" in task else None
        angles = [int(i) for i in robot.task_indices if robot.solver.angles[i]]
        self._angle_index = angles[0] if len(angles) == 1 else None
        # several angles: the orientation is that of the last joint of the virtual chain (one-dof joints:
        # joint id = coordinate index + 1)
        self._frame_joint = 1 + max(int(i) for i in robot.task_indices) if len(angles) > 1 else None
        self._data = robot.model.createData()
        self._start = robot.home.copy()  # (nv,)

    @property
    def start(self) -> np.ndarray:
        """The warm start of the next solve, shape (nv,) (a copy)."""
        return self._start.copy()

    def pose(self, q: np.ndarray) -> PlanarPose:
        """Platform pose read from the task coordinates of ``q`` (nv,)."""
        angle = None if self._angle_index is None else float(q[self._angle_index])
        z = 0.0 if self._z_index is None else float(q[self._z_index])
        orientation = None
        if self._frame_joint is not None:
            pin.forwardKinematics(self.robot.model, self._data, q)
            coefficients = pin.Quaternion(self._data.oMi[self._frame_joint].rotation).coeffs()  # (x, y, z, w)
            orientation = tuple(float(c) for c in coefficients)
        return PlanarPose(float(q[self._x_index]), float(q[self._y_index]), angle, z, orientation)

    def _readings(
        self, names: Sequence[str], positions: Sequence[float], velocities: Sequence[float]
    ) -> tuple[list[str], np.ndarray, np.ndarray | None]:
        """The names used, their positions (k,) and velocities (k,) or None."""
        robot = self.robot
        names = list(names)
        if len(positions) != len(names):
            raise JointStateError(
                f"{len(names)} names but {len(positions)} positions", kind="lengths"
            )
        if len(velocities) not in (0, len(names)):
            raise JointStateError(
                f"{len(names)} names but {len(velocities)} velocities (expected 0 or {len(names)})",
                kind="lengths",
            )
        duplicated = sorted(name for name, count in Counter(names).items() if count > 1)
        if duplicated:
            raise JointStateError(f"duplicated joint names {duplicated}", kind="names")
        missing = [name for name in robot.actuated_names if name not in names]
        if missing:
            raise JointStateError(
                f"missing actuated joints {missing}: {robot.name} needs {list(robot.actuated_names)}, "
                f"got {names}",
                kind="names",
            )
        used = list(robot.actuated_names)
        sensed_present = [name for name in robot.sensed_names if name in names]
        if sensed_present:
            if len(sensed_present) != len(robot.sensed_names):
                absent = [name for name in robot.sensed_names if name not in names]
                raise JointStateError(
                    f"sensed joints {sensed_present} without {absent}: give all of "
                    f"{list(robot.sensed_names)} or none",
                    kind="names",
                )
            used += list(robot.sensed_names)
        where = [names.index(name) for name in used]
        values = np.array([positions[i] for i in where], dtype=float)  # (k,)
        bad = [name for name, value in zip(used, values) if not math.isfinite(value)]
        if bad:
            raise JointStateError(f"non-finite positions of {bad}", kind="non_finite")
        if len(velocities) == 0:
            return used, values, None
        rates = np.array([velocities[i] for i in where], dtype=float)  # (k,)
        bad = [name for name, value in zip(used, rates) if not math.isfinite(value)]
        if bad:
            raise JointStateError(f"non-finite velocities of {bad}", kind="non_finite")
        return used, values, rates

    def update(
        self,
        names: Sequence[str],
        positions: Sequence[float],
        velocities: Sequence[float] = (),
    ) -> ClosedLoopState:
        """Solve the loops for one reading (a sensor_msgs/JointState's three arrays).

        Args:
            names: joint names, the robot's actuated joints at least.
            positions: one per name (rad, m).
            velocities: none, or one per name (rad/s, m/s).

        Raises:
            JointStateError: the reading cannot be used.
            KinematicsError: no closed configuration (unreachable, singular, other mode).
        """
        robot = self.robot
        used, values, rates = self._readings(names, positions, velocities)
        n_actuated = len(robot.actuated_names)
        with_sensed = len(used) > n_actuated
        solution = robot.solve_forward(
            values[:n_actuated], sensed=values[n_actuated:] if with_sensed else None, start=self._start
        )
        qdot = None
        if rates is not None:
            indices = robot.measured_indices if with_sensed else robot.actuated_indices
            try:
                qdot = robot.differential.velocities_from(solution.q, indices, rates)  # (nv,)
            except np.linalg.LinAlgError as error:
                raise SingularityError(
                    f"joint velocities at {robot.solver.describe(solution.q)}: {error}",
                    kind="serial",
                    condition=math.inf,
                ) from error
        self._start = solution.q.copy()
        return ClosedLoopState(solution.q, qdot, self.pose(solution.q), solution, with_sensed)
