"""Finite Fourier series in task coordinates, faded in and out: the exciting trajectories of identification.

Each task coordinate follows a finite Fourier series (Swevers et al.'s
classical parametrization) of fundamental pulsation ``omega = 2 pi f_0``,
shifted so that it starts at the centre, and faded in and out so that the
robot starts and ends at rest:

    d_j(t) = sum_{k=1..H} a_jk sin(k omega t) + b_jk (cos(k omega t) - 1)       # d_j(0) = 0
    x_j(t) = c_j + e(t) d_j(t)                                                 # (N, n)

with the envelope ``e(t)`` rising from 0 to 1 over ``ramp_s`` with the quintic
law of :func:`pardyn.trajectories.task.quintic_time_law` and falling back at
the end. Velocities and accelerations are exact (product rule).

Designed (coefficients chosen for the excitation of the dynamic parameters) by
:func:`pardyn.excitation.design.design_exciting_trajectory`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pardyn.errors import InputError
from pardyn.trajectories.task import TaskSamples, TaskTrajectory, _positive, _vector, quintic_time_law

__all__ = ["FourierTrajectory"]


class FourierTrajectory(TaskTrajectory):
    """Finite Fourier series around ``center`` (n,), faded in and out over ``ramp_s``.

    Args:
        center: task pose at rest at both ends (n,) (m, rad).
        sine, cosine: coefficients ``a_jk``, ``b_jk`` (n, H) (m, rad).
        base_frequency_hz: fundamental frequency ``f_0`` (Hz).
        duration_s: total duration (s), ramps included.
        ramp_s: fade-in and fade-out time (s).
    """

    def __init__(
        self,
        center: Sequence[float] | np.ndarray,
        sine: np.ndarray,
        cosine: np.ndarray,
        *,
        base_frequency_hz: float,
        duration_s: float,
        ramp_s: float = 1.0,
    ) -> None:
        self.start = _vector(center, "center")
        self.sine = np.atleast_2d(np.asarray(sine, dtype=float))
        self.cosine = np.atleast_2d(np.asarray(cosine, dtype=float))
        if self.sine.shape != self.cosine.shape or self.sine.shape[0] != self.start.size:
            raise InputError(
                f"coefficients must both be (n, H) with n = {self.start.size}, got {self.sine.shape} and {self.cosine.shape}"
            )
        self.base_frequency_hz = _positive(base_frequency_hz, "base frequency (Hz)")
        self.duration_s = _positive(duration_s, "duration (s)")
        self.ramp_s = _positive(ramp_s, "ramp (s)")
        if 2 * self.ramp_s > self.duration_s:
            raise InputError(f"ramps of {self.ramp_s} s do not fit in {self.duration_s} s")

    @property
    def harmonics(self) -> int:
        return self.sine.shape[1]

    def series(self, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``d``, ``ddot``, ``dddot`` of the Fourier series alone, each (N, n)."""
        pulsation = 2 * math.pi * self.base_frequency_hz * np.arange(1, self.harmonics + 1)  # (H,)
        phase = np.outer(times, pulsation)  # (N, H)
        sin, cos = np.sin(phase), np.cos(phase)
        d = sin @ self.sine.T + (cos - 1.0) @ self.cosine.T
        ddot = (cos * pulsation) @ self.sine.T - (sin * pulsation) @ self.cosine.T
        dddot = -(sin * pulsation**2) @ self.sine.T - (cos * pulsation**2) @ self.cosine.T
        return d, ddot, dddot

    def envelope(self, times: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``e``, ``edot``, ``eddot`` (N,): quintic rise over the first ``ramp_s``, fall over the last."""
        rise, rise_d, rise_dd = quintic_time_law(times / self.ramp_s)
        fall, fall_d, fall_dd = quintic_time_law((self.duration_s - times) / self.ramp_s)
        e = rise * fall
        edot = rise_d / self.ramp_s * fall - rise * fall_d / self.ramp_s
        eddot = (
            rise_dd / self.ramp_s**2 * fall
            - 2 * rise_d * fall_d / self.ramp_s**2
            + rise * fall_dd / self.ramp_s**2
        )
        return e, edot, eddot

    def evaluate(self, times: Sequence[float] | np.ndarray) -> TaskSamples:
        times = np.asarray(times, dtype=float).reshape(-1)
        d, ddot, dddot = self.series(times)
        e, edot, eddot = (column[:, None] for column in self.envelope(times))
        return TaskSamples(
            times=times,
            position=self.start + e * d,
            velocity=edot * d + e * ddot,
            acceleration=eddot * d + 2 * edot * ddot + e * dddot,
        )

    def to_json(self) -> dict:
        """Everything needed to rebuild the trajectory (SI units)."""
        return {
            "type": "fourier",
            "center": self.start.tolist(),
            "sine": self.sine.tolist(),
            "cosine": self.cosine.tolist(),
            "base_frequency_hz": self.base_frequency_hz,
            "duration_s": self.duration_s,
            "ramp_s": self.ramp_s,
        }

    @classmethod
    def from_json(cls, data: dict) -> FourierTrajectory:
        return cls(
            data["center"], np.asarray(data["sine"]), np.asarray(data["cosine"]),
            base_frequency_hz=data["base_frequency_hz"], duration_s=data["duration_s"], ramp_s=data["ramp_s"],
        )
