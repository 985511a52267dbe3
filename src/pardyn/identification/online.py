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
``window_s`` after the change. (Recursive least squares with exponential
forgetting was tried first: on the DualV its covariance winds up in the
directions the last second did not excite -- drive offsets, Coulomb friction --
and the platform mass wandered by up to 2.7 kg on exact data.)
:meth:`OnlineIdentifier.well_conditioned` tells when the estimate may replace a
controller's model: a full window and the condition number of the window's
observation matrix with unit-norm columns (units do not count) below
``max_condition``.

Hand-off to a controller: :meth:`OnlineIdentifier.save` writes the estimate as a
parameters file (the format of :func:`pardyn.dynamics.parameters.read_parameter_file`)
only when it is well conditioned, with an ``online_estimate`` entry (time, condition
number, window); :func:`check_estimate_file` is the controller's side of it: the file
must exist and, if it carries that entry, its condition number must be below the
controller's own bound (a batch ``pardyn identify`` result carries none and passes).
"""

from __future__ import annotations

import json
import math
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.signal import savgol_coeffs

from pardyn.dynamics.parameters import DynamicParameters, write_parameter_file
from pardyn.dynamics.regressor import Regressor
from pardyn.errors import InputError, PardynError
from pardyn.identification.base_parameters import BaseParameters, base_parameters, symmetric_order
from pardyn.identification.simulation import standard_from_base

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["ESTIMATE_KEY", "OnlineEstimate", "OnlineIdentifier", "check_estimate_file", "structural_base"]

ESTIMATE_KEY = "online_estimate"
"""Key of a saved estimate's conditioning in its parameters file."""


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
    rng = np.random.default_rng(seed)
    n_a = len(robot.actuated_names)
    rows = []
    home = robot.home[robot.measured_indices]
    start = robot.home
    for _ in range(samples):
        readings = home + rng.uniform(-0.05, 0.05, home.shape)
        try:
            q = robot.solve_forward(readings[:n_a], sensed=readings[n_a:] if readings.size > n_a else None,
                                    start=start).q
        except PardynError:
            continue
        qdot, qddot = robot.differential.states_from(q, robot.measured_indices, rng.standard_normal(home.size),
                                                     rng.standard_normal(home.size))
        rows.append(regressor.matrix(q, qdot, qddot))
    observation = np.concatenate(rows)
    return base_parameters(observation, names=regressor.names, order=symmetric_order(regressor.names), eps=eps)


class OnlineIdentifier:
    """The recursive estimate of a robot's base parameters from its joint-state stream (module docstring).

    Args:
        robot: the robot; params: the parameter layout and the first estimate (nominal by default).
        rate_hz: the stream's sampling rate (Hz); decimation: one equation block every this many samples.
        window: Savitzky-Golay half-width ``m`` (samples; the estimate lags by ``m / rate_hz``);
        order: its polynomial degree (> 2; the bias on fast motion falls, the noise gain rises with it).
        window_s: length of the estimation window (s); solve_every: blocks between two solutions.
        max_condition: :meth:`well_conditioned` threshold (column-scaled observation matrix).
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
    ) -> None:
        if decimation < 1 or window < 2 or rate_hz <= 0.0 or not 2 < order < 2 * window + 1:
            raise InputError(f"decimation >= 1, window >= 2, 2 < order < 2 window + 1, rate_hz > 0 expected, "
                             f"got {decimation}, {window}, {order}, {rate_hz}")
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
        self.solve_every = int(solve_every)
        self._blocks = 0
        self.period = 1.0 / rate_hz
        self.decimation = int(decimation)
        self.window = int(window)
        self.max_condition = float(max_condition)
        length = 2 * window + 1
        # position, velocity, acceleration at the window's centre (scipy: coefficients for a dot product)
        self._filters = np.stack([savgol_coeffs(length, order, deriv=d, delta=self.period, use="dot") for d in range(3)])
        # an effort stamped t is the torque held over the period before t (the sim node's convention, as the
        # pipeline's effort_delay_s): the torque at the centre is the mean of the centre's and the next sample's
        self._effort_filter = 0.5 * (self._filters[0] + savgol_coeffs(length, order, pos=window + 1, use="dot"))
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
        self._rows.append(observation[:, self.base.independent])
        self._measured.append(measured)
        self._blocks += 1
        self.t = self._times[self.window]
        if self._blocks % self.solve_every:
            return False
        return self._solve()

    def _solve(self) -> bool:
        """Least squares of the window through its column-scaled normal equations.

        ``D W^T W D`` (n_b, n_b) with ``D`` the inverse column norms: well scaled, its
        condition number is the square of the scaled ``W``'s (``max_condition`` 1e4 ->
        1e8, far from round-off). Small dense products only: LAPACK on the tall window
        matrix is slow when the BLAS threads compete with other processes.
        """
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
        self._estimate = OnlineEstimate(self.t, self.base.names, chi, std, relative, condition, count)
        return True

    def estimate(self) -> OnlineEstimate | None:
        """The last solution (``None`` before the first)."""
        return self._estimate

    @property
    def window_full(self) -> bool:
        """True once the estimation window holds ``window_s`` of data."""
        return len(self._rows) == self._rows.maxlen

    def well_conditioned(self) -> bool:
        """A full window whose column-scaled observation matrix has a condition number below ``max_condition``."""
        return self._estimate is not None and self.window_full and self._estimate.condition < self.max_condition

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
            elif not self.window_full:
                reason = f"window not full ({len(self._rows)} of {self._rows.maxlen} blocks)"
            else:
                reason = f"condition number {estimate.condition:.3g} >= {self.max_condition:g}"
            raise InputError(f"estimate not well conditioned ({reason}): not saved")
        window_s = self._rows.maxlen * self.decimation * self.period
        write_parameter_file(path, self.parameters(), **{ESTIMATE_KEY: {
            "t": estimate.t, "condition": estimate.condition, "max_condition": self.max_condition,
            "window_s": window_s, "rows": estimate.rows}})
        return estimate

    def parameters(self) -> DynamicParameters:
        """The standard parameters of the current estimate (closest to the layout's, same base values)."""
        vector = self.layout.vector().copy()
        vector[self._columns] = standard_from_base(self.base, self.chi, self._nominal_columns)
        return self.layout.with_vector(vector)


def check_estimate_file(path: str | Path, *, max_condition: float) -> dict[str, Any]:
    """The ``online_estimate`` entry of a parameters file a controller is asked to adopt (``{}`` if none).

    Raises:
        InputError: no such file (the estimate is not available: nothing saved yet), not JSON, or an
            estimate whose condition number is missing, non-finite or not below ``max_condition``.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no estimate available: {path} does not exist (the identifier's ~/save writes it "
                         "once its estimate is well conditioned)")
    try:
        content = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise InputError(f"{path}: not a readable parameters file: {error}") from error
    entry = content.get(ESTIMATE_KEY) if isinstance(content, dict) else None
    if entry is None:
        return {}
    condition = entry.get("condition") if isinstance(entry, dict) else None
    if not isinstance(condition, (int, float)) or not math.isfinite(condition) or condition >= max_condition:
        raise InputError(f"{path}: estimate ill-conditioned ({ESTIMATE_KEY}.condition {condition!r}, "
                         f"accepted below {max_condition:g})")
    return dict(entry)
