"""Joint-space references: task trajectories mapped through the inverse kinematics, and their interpolation.

:func:`joint_trajectory` samples a :class:`~pardyn.trajectories.task.TaskTrajectory`
and solves every sample with :meth:`pardyn.Robot.solve_inverse`, each warm-started
from the previous one (so the working mode is kept along the way), with the joint
velocities and accelerations of the closed loops (DualV paper eqs. (9)-(10)):

    qdot = W(q) xdot,   qddot = W(q) xddot + w(q, qdot)                      # (nv,)

(:func:`pardyn.dynamics.inverse.task_trajectory_states`).

:class:`SampledReference` evaluates sampled joint references (for instance a
trajectory_msgs/JointTrajectory received by the controller node) at any instant
by quintic Hermite interpolation between consecutive samples ``(t_k, p, v, a)``:
the polynomial of degree 5 matching position, velocity and acceleration at
both ends of the segment, which reproduces any polynomial of degree <= 5 exactly
(so the quintic point-to-point itself, and the circle with error
O(h^6 theta^(6))). Before the first sample it holds the first position, after
the last the last position, with zero velocity and acceleration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from pardyn.control import JointReference
from pardyn.errors import InputError
from pardyn.trajectories.task import TaskTrajectory

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["JointSamples", "SampledReference", "joint_trajectory", "reference_from_message"]


@dataclass(frozen=True)
class JointSamples:
    """Closed-loop tree states along a trajectory.

    Attributes:
        times: (N,) s from the start of the trajectory.
        q, qdot, qddot: (N, nv) every tree coordinate, ``robot.joint_names`` order.
    """

    times: np.ndarray
    q: np.ndarray
    qdot: np.ndarray
    qddot: np.ndarray

    def select(self, indices: Sequence[int] | np.ndarray) -> SampledReference:
        """The reference of the joints ``indices`` (e.g. ``robot.actuated_indices``)."""
        indices = np.asarray(indices, dtype=int)
        return SampledReference(self.times, self.q[:, indices], self.qdot[:, indices], self.qddot[:, indices])


def joint_trajectory(
    robot: Robot,
    trajectory: TaskTrajectory,
    *,
    rate_hz: float,
    start: np.ndarray | None = None,
) -> JointSamples:
    """Every tree coordinate along ``trajectory`` sampled at ``rate_hz`` (ends included).

    Args:
        robot: the robot; ``trajectory`` is in its task order.
        trajectory: the task-space trajectory.
        rate_hz: sample rate (Hz).
        start: warm start of the first sample (nv,), the robot's home by default.

    Raises:
        InputError: the trajectory does not have ``len(robot.task_names)`` coordinates.
        KinematicsError: a sample is out of reach, singular or in another working
            mode (the message names the sample).
    """
    from pardyn.dynamics.inverse import task_trajectory_states  # noqa: PLC0415 - pinocchio-heavy, on demand

    if trajectory.size != len(robot.task_names):
        raise InputError(
            f"trajectory has {trajectory.size} task coordinates, {robot.name} has "
            f"{len(robot.task_names)} {list(robot.task_names)}"
        )
    samples = trajectory.evaluate(trajectory.sample_times(rate_hz))
    q, qdot, qddot = task_trajectory_states(
        robot, samples.position, samples.velocity, samples.acceleration, start=start
    )
    return JointSamples(samples.times, q, qdot, qddot)


class SampledReference:
    """Quintic Hermite interpolation of sampled joint references.

    Args:
        times: strictly increasing sample times (N,) (s), N >= 1.
        position, velocity, acceleration: (N, k) at those times; ``velocity`` and
            ``acceleration`` may be None (zero).

    On the segment ``[t_0, t_1]`` of length ``h``, with ``u = (t - t_0)/h`` and the
    samples ``p_i, v_i, a_i`` (``v``, ``a`` scaled by ``h``, ``h^2``), the Hermite basis is

        H0 = 1 - 10u^3 + 15u^4 - 6u^5      H1 = u - 6u^3 + 8u^4 - 3u^5
        H2 = (u^2 - 3u^3 + 3u^4 - u^5)/2   H3 = (u^3 - 2u^4 + u^5)/2
        H4 = -4u^3 + 7u^4 - 3u^5           H5 = 10u^3 - 15u^4 + 6u^5
        p(u) = H0 p_0 + H1 h v_0 + H2 h^2 a_0 + H3 h^2 a_1 + H4 h v_1 + H5 p_1

    Raises:
        InputError: shapes that disagree, times not increasing, NaN/inf.
    """

    def __init__(
        self,
        times: Sequence[float] | np.ndarray,
        position: np.ndarray,
        velocity: np.ndarray | None = None,
        acceleration: np.ndarray | None = None,
    ) -> None:
        self.times = np.asarray(times, dtype=float).reshape(-1)
        self.position = np.atleast_2d(np.asarray(position, dtype=float))
        count = self.times.size
        if count == 0 or self.position.shape[0] != count:
            raise InputError(f"reference: {count} times but positions of shape {self.position.shape}")
        zeros = np.zeros_like(self.position)
        self.velocity = zeros if velocity is None or np.size(velocity) == 0 else np.atleast_2d(
            np.asarray(velocity, dtype=float))
        self.acceleration = zeros if acceleration is None or np.size(acceleration) == 0 else np.atleast_2d(
            np.asarray(acceleration, dtype=float))
        for name, array in (("velocities", self.velocity), ("accelerations", self.acceleration)):
            if array.shape != self.position.shape:
                raise InputError(f"reference: {name} of shape {array.shape}, positions {self.position.shape}")
        for name, array in (("times", self.times), ("positions", self.position), ("velocities", self.velocity),
                            ("accelerations", self.acceleration)):
            if not np.all(np.isfinite(array)):
                raise InputError(f"reference: non-finite {name}")
        if np.any(np.diff(self.times) <= 0.0):
            raise InputError("reference: sample times must be strictly increasing")

    @property
    def size(self) -> int:
        """Number of joints ``k``."""
        return int(self.position.shape[1])

    @property
    def start_time(self) -> float:
        return float(self.times[0])

    @property
    def end_time(self) -> float:
        return float(self.times[-1])

    def shifted(self, offset_s: float) -> SampledReference:
        """The same reference ``offset_s`` later."""
        return SampledReference(self.times + offset_s, self.position, self.velocity, self.acceleration)

    def __call__(self, t: float) -> JointReference:
        """Reference (k,) at time ``t`` (s)."""
        times = self.times
        if t <= times[0]:
            return JointReference.hold(self.position[0])
        if t >= times[-1]:
            return JointReference.hold(self.position[-1])
        k = int(np.searchsorted(times, t, side="right")) - 1
        h = times[k + 1] - times[k]
        u = (t - times[k]) / h
        p0, p1 = self.position[k], self.position[k + 1]
        v0, v1 = self.velocity[k] * h, self.velocity[k + 1] * h
        a0, a1 = self.acceleration[k] * h * h, self.acceleration[k + 1] * h * h
        u2, u3, u4, u5 = u * u, u**3, u**4, u**5
        basis = (
            1 - 10 * u3 + 15 * u4 - 6 * u5, u - 6 * u3 + 8 * u4 - 3 * u5, 0.5 * (u2 - 3 * u3 + 3 * u4 - u5),
            0.5 * (u3 - 2 * u4 + u5), -4 * u3 + 7 * u4 - 3 * u5, 10 * u3 - 15 * u4 + 6 * u5,
        )
        d_basis = (
            -30 * u2 + 60 * u3 - 30 * u4, 1 - 18 * u2 + 32 * u3 - 15 * u4, 0.5 * (2 * u - 9 * u2 + 12 * u3 - 5 * u4),
            0.5 * (3 * u2 - 8 * u3 + 5 * u4), -12 * u2 + 28 * u3 - 15 * u4, 30 * u2 - 60 * u3 + 30 * u4,
        )
        dd_basis = (
            -60 * u + 180 * u2 - 120 * u3, -36 * u + 96 * u2 - 60 * u3, 0.5 * (2 - 18 * u + 36 * u2 - 20 * u3),
            0.5 * (6 * u - 24 * u2 + 20 * u3), -24 * u + 84 * u2 - 60 * u3, 60 * u - 180 * u2 + 120 * u3,
        )
        terms = (p0, v0, a0, a1, v1, p1)
        position = sum(b * x for b, x in zip(basis, terms))
        velocity = sum(b * x for b, x in zip(d_basis, terms)) / h
        acceleration = sum(b * x for b, x in zip(dd_basis, terms)) / (h * h)
        return JointReference(position, velocity, acceleration)


def reference_from_message(message: Any, names: tuple[str, ...]) -> SampledReference:
    """The reference of ``names`` (k,) in a JointTrajectory, in time from its start (s, ``time_from_start``).

    ``message``: a ``trajectory_msgs/msg/JointTrajectory`` (rclpy's, or read from a bag: only its
    fields are read), what the ``controller`` and ``dynamics`` nodes receive and ``pardyn identify``
    reads back from the recorded ``reference/trajectory``.

    Times stay relative to the start: absolute wall-clock seconds (~1.8e9 s) as
    doubles would only resolve ~0.2 microseconds.

    Raises:
        InputError: missing joints, points with the wrong number of values, times
            not increasing, NaN/inf.
    """
    given = list(message.joint_names)
    missing = [name for name in names if name not in given]
    if missing:
        raise InputError(f"trajectory lacks joints {missing}, has {given}")
    if not message.points:
        raise InputError("trajectory has no points")
    where = [given.index(name) for name in names]
    times, positions, velocities, accelerations = [], [], [], []
    for index, point in enumerate(message.points):
        if len(point.positions) != len(given):
            raise InputError(f"point {index}: {len(point.positions)} positions for {len(given)} joints")
        for field, values, store in (("velocities", point.velocities, velocities),
                                     ("accelerations", point.accelerations, accelerations)):
            if len(values) not in (0, len(given)):
                raise InputError(f"point {index}: {len(values)} {field} for {len(given)} joints")
            store.append([values[i] for i in where] if len(values) else [0.0] * len(names))
        times.append(point.time_from_start.sec + point.time_from_start.nanosec * 1e-9)
        positions.append([point.positions[i] for i in where])
    return SampledReference(np.array(times), np.array(positions), np.array(velocities), np.array(accelerations))
