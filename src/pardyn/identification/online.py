"""Online identification: windowed least squares on the decimated, filtered joint-state stream.

The batch pipeline filters whole records with zero-phase filters; online, the
filter must be causal. Each measured joint's position goes through a
Savitzky-Golay window of ``2 m + 1`` samples (polynomial of degree ``order``, 5 by default), which gives ``q``,
``qdot``, ``qddot`` at the window's centre (a delay of ``m`` samples, exact for
polynomial motion of that degree, the least-squares smoothing of the noise otherwise), and the
efforts through the same window's smoothing (the "parallel filtering" of eq. 40:
one linear filter for both sides). One sample in ``decimation`` becomes an
equation row block of the identification model (:class:`pardyn.dynamics.regressor.Regressor`,
closed loops solved as in the pipeline), reduced to the base parameters of the
robot's structural model (computed once from random states).

The estimate is a windowed least squares: the equation blocks of the last
``window_s`` seconds are kept (a ring of decimated samples) and solved by OLS
(eqs. 44-47 through the column-scaled normal equations of the window's few
hundred rows) every ``solve_every`` blocks, which gives ``chi``, ``sigma_i``
and ``%sigma_i`` of the window. After a change of the robot (a payload) the
estimate reaches the new values exactly once the window holds only new data:
``window_s`` after the change -- unless the change is detected (``change_threshold``):
each new block's residual under the current estimate, normalised by the window's
residual variance (eq. 46), is averaged over the last ``change_blocks`` blocks; when
that mean exceeds ``change_threshold`` the window restarts (the data of the old robot
are dropped): from the first of those blocks whose own ratio exceeds it, or, with a
``change_holdoff_s``, empty and refilled only after that hold-off (on the DualV the
first ~0.2 s after a payload is attached are a transient the rigid model does not
explain); the estimate is the new robot's once ``min_window_s`` of new data are in
(the window then grows back to ``window_s``). (Recursive least squares with exponential
forgetting was tried first: on the DualV its covariance winds up in the
directions the last second did not excite -- drive offsets, Coulomb friction --
and the platform mass wandered by up to 2.7 kg on exact data.)
:meth:`OnlineIdentifier.well_conditioned` tells when the estimate may replace a
controller's model: a window of at least ``min_window_s`` solved since its last
restart, and the condition number of the window's observation matrix with
unit-norm columns (units do not count) below ``max_condition``. (On the DualV a
1 s window can pass that test with a platform mass 20-130 % off: keep
``min_window_s`` long.)

Hand-off to a controller: :meth:`OnlineIdentifier.save` writes the estimate as a
parameters file (the format of :func:`pardyn.dynamics.parameters.read_parameter_file`)
only when it is well conditioned, with an ``online_estimate`` entry (time, condition
number, window); :func:`check_estimate_file` is the controller's side of it: the file
must exist and, if it carries that entry, its condition number must be below the
controller's own bound (a batch ``pardyn identify`` result carries none and passes).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pardyn.dynamics.parameters import DynamicParameters, write_parameter_file
from pardyn.dynamics.regressor import Regressor
from pardyn.errors import InputError
from pardyn.control.estimate_file import ESTIMATE_KEY, check_estimate_file
from pardyn.identification.base_parameters import BaseParameters, base_parameters, symmetric_order
from pardyn.identification.filtering import savgol_weights
from pardyn.identification.identifiability import random_states
from pardyn.identification.model_simulation import standard_from_base

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["ESTIMATE_KEY", "OnlineEstimate", "OnlineIdentifier", "check_estimate_file", "structural_base"]



@dataclass(frozen=True)
class OnlineEstimate:
    """The current estimate: base parameter names (n_b,), values, ``sigma``, ``%sigma``; its time (s)."""

    t: float
    names: tuple[str, ...]
    chi: np.ndarray
    std: np.ndarray
    relative_std: np.ndarray
    condition: float
    rows: int


def structural_base(robot: Robot, regressor: Regressor, *, samples: int = 60, seed: int = 0,
                    eps: float = 1e-8) -> BaseParameters:
    """Base parameters of the model itself (random states around home), independent of any record.

    Columns in the symmetric order of eq. (43), as the pipeline: the payload's columns regroup
    into the platform's (no loaded/unloaded split online: the estimate is the platform with
    whatever it carries).
    """
    states = random_states(robot, samples=samples, seed=seed, columns=len(regressor.names))
    observation = regressor.matrix(*states)  # (M, rows, n_st)
    return base_parameters(observation.reshape(-1, observation.shape[-1]), names=regressor.names, order=symmetric_order(regressor.names), eps=eps)


class OnlineIdentifier:
    """The recursive estimate of a robot's base parameters from its joint-state stream (module docstring).

    Args:
        robot: the robot; params: the parameter layout and the first estimate (nominal by default).
        rate_hz: the stream's sampling rate (Hz); decimation: one equation block every this many samples.
        window: Savitzky-Golay half-width ``m`` (samples; the estimate lags by ``m / rate_hz``);
        order: its polynomial degree (> 2; the bias on fast motion falls, the noise gain rises with it).
        window_s: length of the estimation window (s); solve_every: blocks between two solutions.
        max_condition: :meth:`well_conditioned` threshold (column-scaled observation matrix).
        min_window_s: the shortest window solved (s; also :meth:`well_conditioned`'s), at most ``window_s``.
        change_threshold: mean normalised squared residual that restarts the window (0: never).
        change_blocks: blocks averaged by the change test; change_holdoff_s: data dropped after a change (s).
    """

    def __init__(
        self,
        robot: Robot,
        params: DynamicParameters | None = None,
        *,
        rate_hz: float = 1000.0,
        decimation: int = 10,
        window: int = 30,
        order: int = 5,
        window_s: float = 3.0,
        solve_every: int = 10,
        max_condition: float = 1e4,
        min_window_s: float | None = None,
        change_threshold: float = 0.0,
        change_blocks: int = 10,
        change_holdoff_s: float = 0.0,
    ) -> None:
        if decimation < 1 or window < 2 or rate_hz <= 0.0 or not 2 < order < 2 * window + 1:
            raise InputError(f"decimation >= 1, window >= 2, 2 < order < 2 window + 1, rate_hz > 0 expected, "
                             f"got {decimation}, {window}, {order}, {rate_hz}")
        min_window_s = window_s if min_window_s is None else min_window_s
        if not 0.0 < min_window_s <= window_s or change_threshold < 0.0 or change_blocks < 1:
            raise InputError(f"0 < min_window_s <= window_s, change_threshold >= 0, change_blocks >= 1 expected, got "
                             f"{min_window_s}, {window_s}, {change_threshold}, {change_blocks}")
        self.robot = robot
        self.layout = params or robot.nominal_parameters
        self.regressor = Regressor(robot, self.layout)
        self.base = structural_base(robot, self.regressor)
        columns = [self.layout.names.index(n) for n in self.base.standard_names]
        self._nominal_columns = self.layout.vector()[columns]
        self._columns = np.array(columns)
        self.chi = self.base.from_standard(self._nominal_columns)  # nominal until the first solution
        self._estimate: OnlineEstimate | None = None
        blocks = max(int(round(window_s * rate_hz / decimation)), 2)
        self._rows: deque[np.ndarray] = deque(maxlen=blocks)
        self._measured: deque[np.ndarray] = deque(maxlen=blocks)
        self._ratios: deque[float] = deque(maxlen=blocks)  # each block's normalised squared residual
        self.min_blocks = min(max(int(round(min_window_s * rate_hz / decimation)), 2), blocks)
        self.change_threshold = float(change_threshold)
        self.change_blocks = int(change_blocks)
        self._variance = math.nan  # residual variance of the last solution (eq. 46)
        self.changes: list[float] = []  # times (s) of the detected changes
        self.change_holdoff_s = float(change_holdoff_s)
        self.solve_every = int(solve_every)
        self._blocks = 0
        self.period = 1.0 / rate_hz
        self.decimation = int(decimation)
        self.window = int(window)
        self.max_condition = float(max_condition)
        length = 2 * window + 1
        # position, velocity, acceleration at the window's centre (weights for a dot product)
        self._filters = np.stack([savgol_weights(length, order, derivative=d, period=self.period) for d in range(3)])
        # an effort stamped t is the torque held over the period before t (the sim node's convention, as the
        # pipeline's effort_delay_s): the torque at the centre is the mean of the centre's and the next sample's
        self._effort_filter = 0.5 * (self._filters[0] + savgol_weights(length, order, position=window + 1))
        self._times: deque[float] = deque(maxlen=length)
        self._positions: deque[np.ndarray] = deque(maxlen=length)
        self._efforts: deque[np.ndarray] = deque(maxlen=length)
        self._count = 0
        self._q = robot.home.copy()
        self.t = 0.0

    @property
    def names(self) -> tuple[str, ...]:
        return self.base.names

    def add(self, t: float, positions: np.ndarray, efforts: np.ndarray) -> bool:
        """One sample: measured joints (n_m,) in ``robot.measured_names`` order, actuator efforts (n_a,).

        Returns True when it completed a new solution of the estimate. Raises :class:`InputError` for a
        sample of the wrong size or with NaN (the estimator is unchanged). Samples must come every
        ``1 / rate_hz`` s: after a gap the Savitzky-Golay window refills before the next equation block.
        """
        positions = np.asarray(positions, dtype=float)
        efforts = np.asarray(efforts, dtype=float)
        n_a = len(self.robot.actuated_names)
        if positions.shape != (len(self.robot.measured_names),) or efforts.shape != (n_a,):
            raise InputError(f"expected {len(self.robot.measured_names)} positions and {n_a} efforts, "
                             f"got {positions.shape}, {efforts.shape}")
        if not (np.all(np.isfinite(positions)) and np.all(np.isfinite(efforts))):
            raise InputError("non-finite position or effort: sample dropped")
        if self._times and abs(float(t) - self._times[-1] - self.period) > 0.5 * self.period:
            # a gap (lost messages) or a step back: the derivative window restarts, the estimate goes on
            self._times.clear()
            self._positions.clear()
            self._efforts.clear()
        self._times.append(float(t))
        self._positions.append(positions)
        self._efforts.append(efforts)
        self._count += 1
        if len(self._times) < self._times.maxlen or self._count % self.decimation:
            return False
        window = np.array(self._positions)  # (2m+1, n_m)
        readings, rates, accelerations = self._filters @ window.reshape(window.shape[0], -1)
        effort = self._effort_filter @ np.array(self._efforts)
        q = self.robot.solve_forward(readings[:n_a], sensed=readings[n_a:] if readings.size > n_a else None,
                                     start=self._q, checks=False).q
        self._q = q
        qdot, qddot = self.robot.differential.states_from(q, self.robot.measured_indices, rates, accelerations)
        observation, measured = self.regressor.equations(q, qdot, qddot, effort)
        rows = observation[:, self.base.independent]
        self.t = self._times[self.window]
        if self.changes and self.t < self.changes[-1] + self.change_holdoff_s:
            return False  # the transient after a change: not the new robot's steady behaviour
        self._rows.append(rows)
        self._measured.append(measured)
        self._blocks += 1
        if self._detect_change(rows, measured):
            return self._solve()
        if self._blocks % self.solve_every:
            return False
        return self._solve()

    def _detect_change(self, rows: np.ndarray, measured: np.ndarray) -> bool:
        """Record the block's normalised residual; restart the window on a change (module docstring)."""
        if self._estimate is None or not self._variance > 0.0:
            self._ratios.append(0.0)
            return False
        residual = measured - rows @ self.chi
        self._ratios.append(float(residual @ residual) / (residual.size * self._variance))
        if not self.change_threshold or len(self._ratios) < self.change_blocks:
            return False
        recent = list(self._ratios)[-self.change_blocks:]
        if sum(recent) / self.change_blocks <= self.change_threshold:
            return False
        first = next(k for k, ratio in enumerate(recent) if ratio > self.change_threshold)
        keep = self.change_blocks - first
        if self.change_holdoff_s > 0.0:
            keep = 0
        for ring in (self._rows, self._measured, self._ratios):
            kept = list(ring)[-keep:] if keep else []
            ring.clear()
            ring.extend(kept)
        self._variance = math.nan  # no change test until the new robot's window is solved
        self.changes.append(self.t)
        return True

    def _solve(self) -> bool:
        """Least squares of the window through its column-scaled normal equations.

        ``D W^T W D`` (n_b, n_b) with ``D`` the inverse column norms: well scaled, its
        condition number is the square of the scaled ``W``'s (``max_condition`` 1e4 ->
        1e8, far from round-off). Small dense products only: LAPACK on the tall window
        matrix is slow when the BLAS threads compete with other processes.
        """
        if len(self._rows) < self.min_blocks:
            return False
        rows = np.concatenate(self._rows)  # (blocks * r, n_b), sample after sample
        measured = np.concatenate(self._measured)
        count, n = rows.shape
        if count <= 2 * n:
            return False
        scale = np.sqrt(np.einsum("ij,ij->j", rows, rows))
        if np.any(scale == 0.0):
            return False  # a parameter without any effect in the window (the robot at rest)
        scaled = rows / scale
        normal = scaled.T @ scaled  # (n, n), unit diagonal
        eigenvalues = np.linalg.eigvalsh(normal)
        if eigenvalues[0] <= 1e-12 * eigenvalues[-1]:
            return False  # rank deficient window: keep the previous estimate
        condition = float(np.sqrt(eigenvalues[-1] / eigenvalues[0]))
        inverse = np.linalg.inv(normal)
        chi = (inverse @ (scaled.T @ measured)) / scale
        residual = measured - rows @ chi
        variance = float(residual @ residual) / (count - n)  # eq. (46)
        std = np.sqrt(variance * np.diag(inverse)) / scale  # eq. (47)
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = 100.0 * std / np.abs(chi)
        self.chi = chi
        self._variance = variance
        self._estimate = OnlineEstimate(self.t, self.base.names, chi, std, relative, condition, count)
        return True

    def estimate(self) -> OnlineEstimate | None:
        """The last solution (``None`` before the first)."""
        return self._estimate

    @property
    def window_full(self) -> bool:
        """True once the estimation window holds ``window_s`` of data."""
        return len(self._rows) == self._rows.maxlen

    @property
    def window_ready(self) -> bool:
        """True once the window holds ``min_window_s`` of data (of the current robot, after a change)."""
        return len(self._rows) >= self.min_blocks

    def well_conditioned(self) -> bool:
        """A window of at least ``min_window_s``, solved since its last restart, whose column-scaled observation
        matrix has a condition number below ``max_condition``."""
        return (self._estimate is not None and self.window_ready and self._variance > 0.0
                and self._estimate.condition < self.max_condition)

    def save(self, path: str | Path) -> OnlineEstimate:
        """Write the estimate's standard parameters to ``path`` with its conditioning (``online_estimate``).

        Raises:
            InputError: the estimate is not well conditioned (the reason; nothing written).
            OSError: the file cannot be written.
        """
        estimate = self._estimate
        if not self.well_conditioned():
            if estimate is None:
                reason = "no estimate yet"
            elif not self.window_ready or not self._variance > 0.0:
                reason = f"window not full ({len(self._rows)} of {self.min_blocks} blocks since the last restart)"
            else:
                reason = f"condition number {estimate.condition:.3g} >= {self.max_condition:g}"
            raise InputError(f"estimate not well conditioned ({reason}): not saved")
        window_s = len(self._rows) * self.decimation * self.period
        write_parameter_file(path, self.parameters(), **{ESTIMATE_KEY: {
            "t": estimate.t, "condition": estimate.condition, "max_condition": self.max_condition,
            "window_s": window_s, "rows": estimate.rows}})
        return estimate

    def parameters(self) -> DynamicParameters:
        """The standard parameters of the current estimate (closest to the layout's, same base values)."""
        vector = self.layout.vector().copy()
        vector[self._columns] = standard_from_base(self.base, self.chi, self._nominal_columns)
        return self.layout.with_vector(vector)
