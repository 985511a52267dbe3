"""What a real robot publishes, made from a plant's true state.

A :class:`~pardyn.plants.PlantState` holds every tree coordinate exactly; a
real parallel robot only has encoders on its *measured* joints
(``robot.measured_names``: the actuated joints, then the sensed passive ones)
and estimates its torques from the motor currents. :class:`MeasurementModel`
turns the former into the latter:

* **positions** of the measured joints only, quantized to the encoder grid::

      counts = round(q_j / r_j)        # int64 (n_m,)
      q_meas = counts * r_j            # |q_meas - q_j| <= r_j / 2

  with ``r_j = 2 pi / counts_per_revolution`` (rad) for revolute joints and
  ``r_j = length_resolution`` (m) for prismatic ones (multi-turn absolute
  encoders with their zero at ``q_j = 0``: no wrapping, no offset);
* **velocities** (optional, ``velocities=``):

  - ``"none"`` (default): not published (``None``);
  - ``"difference"``: the drive's estimate, the backward difference of
    consecutive quantized positions, ``(q_meas[k] - q_meas[k-1]) / (t[k] - t[k-1])``
    (error <= ``r_j / (t[k] - t[k-1])`` plus the O(dt) lag of the difference);
    zeros at the first sample after construction or :meth:`MeasurementModel.reset`;
  - ``"exact"``: the true joint velocities (a perfect estimator, for tests);
* **torques** of the actuated joints (``robot.actuated_names`` order), the
  applied torque plus independent zero-mean Gaussian noise::

      tau_meas = tau + sigma * N(0, 1),   sigma = hypot(torque_noise * |tau|, torque_noise_floor)

  i.e. a relative error (``torque_noise = 0.01`` = 1 % of each sample's
  magnitude, e.g. the current sensor's gain noise) and an absolute floor
  (N m or N, the sensor's offset noise), added in variance.

The noise comes from a seeded :class:`numpy.random.Generator`: the same seed
and the same states give the same measurements.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pardyn.errors import InputError
from pardyn.plants import PlantState

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["Measurement", "MeasurementModel", "VELOCITY_MODES"]

VELOCITY_MODES = ("none", "difference", "exact")
"""Accepted values of ``MeasurementModel(velocities=...)``."""


@dataclass(frozen=True)
class Measurement:
    """One sample of what the robot publishes.

    Attributes:
        time: sample time (s).
        names: measured joint names, in ``positions`` order (n_m,).
        counts: encoder counts, int64 (n_m,).
        positions: quantized joint positions ``counts * resolution`` (n_m,), rad or m.
        velocities: velocity estimates (n_m,), rad/s or m/s, or ``None`` (``velocities="none"``).
        torque_names: actuated joint names, in ``torques`` order (n_a,).
        torques: noisy actuator torques (n_a,), N m or N.
    """

    time: float
    names: tuple[str, ...]
    counts: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None
    torque_names: tuple[str, ...]
    torques: np.ndarray


class MeasurementModel:
    """Encoders and torque sensing of a robot (module docstring for the model).

    Args:
        robot: the robot (joint names and types).
        counts_per_revolution: encoder counts per turn of a revolute joint (2**17 by default).
        length_resolution: encoder step of a prismatic joint (m), 1 micrometre by default.
        torque_noise: relative standard deviation of the torque noise (0.01 = 1 % of |tau|).
        torque_noise_floor: absolute standard deviation added in variance (N m or N).
        velocities: ``"none"``, ``"difference"`` or ``"exact"`` (module docstring).
        joints: names of the joints with an encoder, ``robot.measured_names`` by default.
        seed: seed of the noise (an int, a :class:`numpy.random.Generator`, or ``None``
            for fresh entropy: not reproducible).

    Attributes:
        names: measured joint names (n_m,); indices: their positions in ``q`` (n_m,).
        resolution: encoder step of each measured joint (n_m,), rad or m.
    """

    def __init__(
        self,
        robot: Robot,
        *,
        counts_per_revolution: int = 2**17,
        length_resolution: float = 1e-6,
        torque_noise: float = 0.01,
        torque_noise_floor: float = 1e-3,
        velocities: str = "none",
        joints: Sequence[str] | None = None,
        seed: int | np.random.Generator | None = 0,
    ) -> None:
        if int(counts_per_revolution) != counts_per_revolution or counts_per_revolution < 1:
            raise InputError(f"counts_per_revolution must be a positive integer, got {counts_per_revolution}")
        for label, value in (
            ("length_resolution", length_resolution),
            ("torque_noise", torque_noise),
            ("torque_noise_floor", torque_noise_floor),
        ):
            if not (math.isfinite(value) and value >= 0.0):
                raise InputError(f"{label} must be a finite value >= 0, got {value}")
        if length_resolution <= 0.0:
            raise InputError(f"length_resolution must be a positive length (m), got {length_resolution}")
        if velocities not in VELOCITY_MODES:
            raise InputError(f"velocities must be one of {VELOCITY_MODES}, got {velocities!r}")
        self.robot = robot
        self.names = tuple(robot.measured_names if joints is None else joints)
        self.indices = robot.indices(self.names)
        self.torque_names = tuple(robot.actuated_names)
        self.counts_per_revolution = int(counts_per_revolution)
        self.length_resolution = float(length_resolution)
        self.torque_noise = float(torque_noise)
        self.torque_noise_floor = float(torque_noise_floor)
        self.velocity_mode = velocities
        self.resolution = np.array([self._resolution(name) for name in self.names])
        self.rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        self.reset()

    def _resolution(self, name: str) -> float:
        model = self.robot.model
        short = model.joints[model.getJointId(name)].shortname().removeprefix("JointModel")
        if short.startswith("P"):  # PX, PY, PZ, PrismaticUnaligned
            return self.length_resolution
        if short.startswith("R"):  # RX, RY, RZ, RevoluteUnaligned
            return 2.0 * math.pi / self.counts_per_revolution
        raise InputError(f"joint {name!r}: no encoder model for pinocchio joint type {short}")

    def reset(self) -> None:
        """Forget the previous sample (the ``"difference"`` velocity estimate restarts at zero)."""
        self._previous: tuple[float, np.ndarray] | None = None

    def quantize(self, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Encoder counts (int64) and quantized positions of the measured joints, each (n_m,)."""
        counts = np.rint(np.asarray(positions, dtype=float) / self.resolution).astype(np.int64)
        return counts, counts * self.resolution

    def torque_sigma(self, tau: np.ndarray) -> np.ndarray:
        """Standard deviation of the torque noise, ``hypot(torque_noise * |tau|, floor)`` (n_a,)."""
        return np.hypot(self.torque_noise * np.abs(np.asarray(tau, dtype=float)), self.torque_noise_floor)

    def measure(self, state: PlantState) -> Measurement:
        """The published sample of a plant state (draws the torque noise)."""
        q = np.asarray(state.q, dtype=float)
        tau = np.asarray(state.tau, dtype=float)
        if q.shape != (self.robot.nv,) or tau.shape != (len(self.torque_names),):
            raise InputError(
                f"{self.robot.name}: state has q {q.shape}, tau {tau.shape}; expected "
                f"({self.robot.nv},), ({len(self.torque_names)},)"
            )
        counts, positions = self.quantize(q[self.indices])
        velocities = None
        if self.velocity_mode == "exact":
            velocities = np.asarray(state.qdot, dtype=float)[self.indices].copy()
        elif self.velocity_mode == "difference":
            velocities = np.zeros(len(self.names))
            if self._previous is not None:
                previous_time, previous_positions = self._previous
                interval = state.time - previous_time
                if interval > 0.0:
                    velocities = (positions - previous_positions) / interval
            self._previous = (float(state.time), positions)
        torques = tau + self.torque_sigma(tau) * self.rng.standard_normal(tau.shape)
        return Measurement(
            time=float(state.time),
            names=self.names,
            counts=counts,
            positions=positions,
            velocities=velocities,
            torque_names=self.torque_names,
            torques=torques,
        )
