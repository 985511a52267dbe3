"""Task-space reference trajectories, evaluated at many instants at once.

Both trajectories are rest-to-rest and use the quintic time law

    s(tau) = 10 tau^3 - 15 tau^4 + 6 tau^5,   tau = t / T in [0, 1]           # s(0)=0, s(1)=1
    s'(tau) = 30 tau^2 (1 - tau)^2,   s''(tau) = 60 tau (1 - tau) (1 - 2 tau)

so that position, velocity and acceleration are continuous and velocity and
acceleration vanish at both ends (the 5th-degree point-to-point polynomial;
peak speed ``15/8 |goal - start| / T`` at ``tau = 1/2``). Before ``t = 0``
and after ``t = T`` the trajectory rests at its ends.

* :class:`PointToPoint`: a straight line ``x(t) = x0 + (x1 - x0) s(t/T)``.
* :class:`Trapezoidal`: a straight line with the trapezoidal velocity profile
  (constant acceleration, cruise, constant deceleration; triangular when the
  cruise speed is not reached), velocity and acceleration limits per coordinate.
* :class:`Circle`: ``turns`` revolutions on a circle through the start point
  in the plane of two task coordinates (``x``, ``y``), the other coordinates
  held: ``theta(t) = a0 + 2 pi turns s(t/T)``,
  ``(x, y) = c + r (cos theta, sin theta)``, ``c = start - r (cos a0, sin a0)``.

Arrays: times (N,) (s); positions, velocities, accelerations (N, n) in the
robot's task order (m, rad; per s; per s^2).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pardyn.errors import InputError

__all__ = ["Circle", "PointToPoint", "TaskSamples", "TaskTrajectory", "Trapezoidal", "quintic_time_law"]


def quintic_time_law(tau: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``s``, ``ds/dtau``, ``d2s/dtau2`` of the quintic rest-to-rest law at ``tau`` (N,), clamped to [0, 1]."""
    tau = np.asarray(tau, dtype=float)
    inside = (tau > 0.0) & (tau < 1.0)
    u = np.clip(tau, 0.0, 1.0)
    s = u**3 * (10.0 - 15.0 * u + 6.0 * u**2)
    ds = np.where(inside, 30.0 * u**2 * (1.0 - u) ** 2, 0.0)
    dds = np.where(inside, 60.0 * u * (1.0 - u) * (1.0 - 2.0 * u), 0.0)
    return s, ds, dds


@dataclass(frozen=True)
class TaskSamples:
    """A task trajectory at ``times`` (N,): ``position``, ``velocity``, ``acceleration`` (N, n)."""

    times: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray


def _vector(values: Sequence[float] | np.ndarray, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).reshape(-1)
    if array.size == 0 or not np.all(np.isfinite(array)):
        raise InputError(f"{what}: expected finite values, got {array.tolist()}")
    return array


def _positive(value: float, what: str) -> float:
    value = float(value)
    if not (math.isfinite(value) and value > 0.0):
        raise InputError(f"{what}: must be positive and finite, got {value}")
    return value


class TaskTrajectory(ABC):
    """A task-space trajectory of duration ``duration_s`` starting at ``t = 0``."""

    start: np.ndarray
    duration_s: float

    @property
    def size(self) -> int:
        """Number of task coordinates ``n``."""
        return int(self.start.size)

    @abstractmethod
    def evaluate(self, times: Sequence[float] | np.ndarray) -> TaskSamples:
        """Positions, velocities, accelerations (N, n) at ``times`` (N,) (s)."""

    def sample_times(self, rate_hz: float) -> np.ndarray:
        """``0, 1/rate, ...`` up to and including ``duration_s`` (the end point is always a sample), (N,)."""
        rate_hz = _positive(rate_hz, "sample rate (Hz)")
        count = int(math.ceil(self.duration_s * rate_hz - 1e-9))
        times = np.arange(count + 1, dtype=float) / rate_hz
        times[-1] = self.duration_s
        return times


class PointToPoint(TaskTrajectory):
    """Straight line from ``start`` to ``goal`` (n,) in ``duration_s`` with the quintic time law.

    ``x(t) = x0 + (x1 - x0) s(t/T)``, ``xdot = (x1 - x0) s'/T``, ``xddot = (x1 - x0) s''/T^2``.
    """

    def __init__(
        self, start: Sequence[float] | np.ndarray, goal: Sequence[float] | np.ndarray, *, duration_s: float
    ) -> None:
        self.start = _vector(start, "point-to-point start")
        self.goal = _vector(goal, "point-to-point goal")
        if self.goal.shape != self.start.shape:
            raise InputError(
                f"point-to-point: start has {self.start.size} coordinates, goal {self.goal.size}"
            )
        self.duration_s = _positive(duration_s, "point-to-point duration_s")

    def evaluate(self, times: Sequence[float] | np.ndarray) -> TaskSamples:
        times = np.atleast_1d(np.asarray(times, dtype=float))
        T = self.duration_s
        s, ds, dds = quintic_time_law(times / T)
        delta = self.goal - self.start  # (n,)
        return TaskSamples(
            times,
            self.start + s[:, None] * delta,
            (ds / T)[:, None] * delta,
            (dds / T**2)[:, None] * delta,
        )


class Trapezoidal(TaskTrajectory):
    """Straight line from ``start`` to ``goal`` (n,) with a trapezoidal velocity profile, rest to rest.

    ``x(t) = x0 + (x1 - x0) s(t)``, the path parameter ``s`` going from 0 to 1
    with the largest speed and acceleration that keep every coordinate within
    its limits: ``sdot_max = min_i vmax_i / |x1_i - x0_i|``,
    ``sddot_max = min_i amax_i / |x1_i - x0_i|``. With ``t_a = sdot_max / sddot_max``:

    * trapezoid (``sdot_max t_a <= 1``): ``T = 1 / sdot_max + t_a``;
      ``s = sddot_max t^2 / 2`` on ``[0, t_a]``, ``s = sdot_max (t - t_a / 2)`` on
      ``[t_a, T - t_a]``, ``s = 1 - sddot_max (T - t)^2 / 2`` on ``[T - t_a, T]``;
    * triangle (otherwise): ``t_a = 1 / sqrt(sddot_max)``, ``T = 2 t_a``, peak
      speed ``sddot_max t_a``.

    Velocities are continuous, accelerations piecewise constant (exact, no
    smoothing: steps of ``+-sddot_max (x1 - x0)`` at the switching times).

    Args:
        start, goal: task poses (n,) (m, rad).
        max_velocity: speed limits (m/s, rad/s), one per coordinate or one for all, > 0.
        max_acceleration: acceleration limits (m/s^2, rad/s^2), same shape, > 0.

    Attributes:
        duration_s: ``T`` (0 when ``goal == start``); accel_time_s: ``t_a``.
    """

    def __init__(
        self,
        start: Sequence[float] | np.ndarray,
        goal: Sequence[float] | np.ndarray,
        max_velocity: Sequence[float] | np.ndarray | float,
        max_acceleration: Sequence[float] | np.ndarray | float,
    ) -> None:
        self.start = _vector(start, "trapezoidal start")
        self.goal = _vector(goal, "trapezoidal goal")
        if self.goal.shape != self.start.shape:
            raise InputError(f"trapezoidal: start has {self.start.size} coordinates, goal {self.goal.size}")
        limits = []
        for values, what in ((max_velocity, "max_velocity"), (max_acceleration, "max_acceleration")):
            array = np.asarray(values, dtype=float).reshape(-1)
            if array.size == 1:
                array = np.full(self.size, float(array[0]))
            if array.size != self.size or not np.all(np.isfinite(array)) or np.any(array <= 0.0):
                raise InputError(
                    f"trapezoidal {what}: expected 1 or {self.size} positive finite values, got {array.tolist()}"
                )
            limits.append(array)
        self.max_velocity, self.max_acceleration = limits
        distance = np.abs(self.goal - self.start)
        moving = distance > 0.0
        if not np.any(moving):
            self.path_velocity = self.path_acceleration = math.inf
            self.accel_time_s = self.duration_s = 0.0
            return
        speed = float(np.min(self.max_velocity[moving] / distance[moving]))  # sdot_max (1/s)
        acceleration = float(np.min(self.max_acceleration[moving] / distance[moving]))  # sddot_max (1/s^2)
        accel_time = speed / acceleration
        if speed * accel_time > 1.0:  # the cruise speed is never reached: triangle
            accel_time = 1.0 / math.sqrt(acceleration)
            speed = acceleration * accel_time
            self.duration_s = 2.0 * accel_time
        else:
            self.duration_s = 1.0 / speed + accel_time
        self.path_velocity, self.path_acceleration, self.accel_time_s = speed, acceleration, accel_time

    def time_law(self, times: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``s``, ``sdot`` (1/s), ``sddot`` (1/s^2) at ``times`` (N,), resting at 0 before 0 and at 1 after T."""
        t = np.atleast_1d(np.asarray(times, dtype=float))
        if self.duration_s == 0.0:
            return np.ones_like(t), np.zeros_like(t), np.zeros_like(t)
        T, ta, v, a = self.duration_s, self.accel_time_s, self.path_velocity, self.path_acceleration
        rising = (t > 0.0) & (t < ta)
        falling = (t > T - ta) & (t < T)
        cruise = (t >= ta) & (t <= T - ta)
        tc = np.clip(t, 0.0, T)
        s = np.where(tc <= ta, 0.5 * a * tc**2,
                     np.where(tc >= T - ta, 1.0 - 0.5 * a * (T - tc) ** 2, v * (tc - 0.5 * ta)))
        sdot = np.where(rising, a * tc, np.where(falling, a * (T - tc), np.where(cruise, v, 0.0)))
        sddot = np.where(rising, a, np.where(falling, -a, 0.0))
        return s, sdot, sddot

    def evaluate(self, times: Sequence[float] | np.ndarray) -> TaskSamples:
        times = np.atleast_1d(np.asarray(times, dtype=float))
        s, sdot, sddot = self.time_law(times)
        delta = self.goal - self.start  # (n,)
        return TaskSamples(times, self.start + s[:, None] * delta, sdot[:, None] * delta, sddot[:, None] * delta)


class Circle(TaskTrajectory):
    """``turns`` revolutions on a circle of radius ``radius_m`` through ``start``, rest to rest.

    Args:
        start: task pose at ``t = 0`` (n,); coordinates other than ``axes`` are held.
        radius_m: circle radius (m).
        duration_s: time of the ``turns`` revolutions (s).
        axes: the indices of the two task coordinates spanning the plane (default x, y: 0, 1).
        turns: number of revolutions, counter-clockwise if positive.
        start_angle_rad: angle ``a0`` of ``start`` seen from the centre: ``c = start - r (cos a0, sin a0)``.
    """

    def __init__(
        self,
        start: Sequence[float] | np.ndarray,
        *,
        radius_m: float,
        duration_s: float,
        axes: tuple[int, int] = (0, 1),
        turns: float = 1.0,
        start_angle_rad: float = 0.0,
    ) -> None:
        self.start = _vector(start, "circle start")
        self.radius_m = _positive(radius_m, "circle radius_m")
        self.duration_s = _positive(duration_s, "circle duration_s")
        if len(axes) != 2 or axes[0] == axes[1] or not all(0 <= a < self.start.size for a in axes):
            raise InputError(f"circle axes: two different task indices below {self.start.size}, got {axes}")
        if not math.isfinite(turns) or not math.isfinite(start_angle_rad):
            raise InputError(f"circle: turns and start_angle_rad must be finite, got {turns}, {start_angle_rad}")
        self.axes = (int(axes[0]), int(axes[1]))
        self.turns = float(turns)
        self.start_angle_rad = float(start_angle_rad)
        a0 = self.start_angle_rad
        self.center = self.start[list(self.axes)] - self.radius_m * np.array([math.cos(a0), math.sin(a0)])  # (2,)

    def evaluate(self, times: Sequence[float] | np.ndarray) -> TaskSamples:
        times = np.atleast_1d(np.asarray(times, dtype=float))
        T, r = self.duration_s, self.radius_m
        s, ds, dds = quintic_time_law(times / T)
        sweep = 2.0 * math.pi * self.turns
        theta = self.start_angle_rad + sweep * s  # (N,)
        rate = sweep * ds / T  # dtheta/dt (N,)
        rate_dot = sweep * dds / T**2  # d2theta/dt2 (N,)
        cos, sin = np.cos(theta), np.sin(theta)
        count = times.size
        position = np.tile(self.start, (count, 1))
        velocity = np.zeros((count, self.size))
        acceleration = np.zeros((count, self.size))
        i, j = self.axes
        position[:, i] = self.center[0] + r * cos
        position[:, j] = self.center[1] + r * sin
        velocity[:, i] = -r * sin * rate
        velocity[:, j] = r * cos * rate
        acceleration[:, i] = -r * (sin * rate_dot + cos * rate**2)
        acceleration[:, j] = r * (cos * rate_dot - sin * rate**2)
        return TaskSamples(times, position, velocity, acceleration)
