"""Online identification: recursive least squares with forgetting on the decimated, filtered stream.

The batch pipeline filters whole records with zero-phase filters; online, the
filter must be causal. Each measured joint's position goes through a
Savitzky-Golay window of ``2 m + 1`` samples (cubic), which gives ``q``,
``qdot``, ``qddot`` at the window's centre (a delay of ``m`` samples, exact for
cubic motion, the least-squares smoothing of the noise otherwise), and the
efforts through the same window's smoothing (the "parallel filtering" of eq. 40:
one linear filter for both sides). One sample in ``decimation`` becomes an
equation row block of the identification model (:class:`pardyn.dynamics.regressor.Regressor`,
closed loops solved as in the pipeline), reduced to the base parameters of the
robot's structural model (computed once from random states).

Recursive least squares with exponential forgetting ``lambda`` (Ljung):

    K = P W^T (lambda I + W P W^T)^-1                      # (n_b, rows)
    chi <- chi + K (Y - W chi)
    P <- (P - K W P) / lambda                              # (n_b, n_b)

so that ``P^-1 = sum_k lambda^(N-k) W_k^T W_k`` (the information of an
effective window of ``1 / (1 - lambda)`` decimated samples). The noise variance
is tracked with the same forgetting, ``s^2 <- lambda s^2 + (1 - lambda) ||e||^2 / rows``
on the a-priori errors ``e``, and ``C = s^2 P`` gives ``sigma_i`` and ``%sigma_i``
as eq. (47). :meth:`OnlineIdentifier.well_conditioned` tells when the estimate
may replace a controller's model: the condition number of the scaled
information matrix ``D P^-1 D`` (``D = diag(P)^1/2``, so that units do not count) below
``max_condition`` and enough data since the start.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.signal import savgol_coeffs

from pardyn.dynamics.parameters import DynamicParameters, nominal_parameters
from pardyn.dynamics.regressor import Regressor
from pardyn.errors import InputError, PardynError
from pardyn.identification.base_parameters import BaseParameters, base_parameters, symmetric_order
from pardyn.identification.simulation import standard_from_base

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["OnlineEstimate", "OnlineIdentifier", "RecursiveLeastSquares", "structural_base"]


class RecursiveLeastSquares:
    """RLS with exponential forgetting (module docstring), ``n`` parameters.

    Args:
        initial: first estimate (n,); initial_covariance: ``P_0 = initial_covariance I`` (large: no prior).
        forgetting: ``lambda`` in (0, 1].
    """

    def __init__(self, initial: np.ndarray, *, forgetting: float = 0.995, initial_covariance: float = 1e6) -> None:
        if not 0.0 < forgetting <= 1.0:
            raise InputError(f"forgetting must be in (0, 1], got {forgetting}")
        self.chi = np.array(initial, dtype=float)
        self.P = initial_covariance * np.eye(self.chi.size)
        self.forgetting = float(forgetting)
        self.noise_variance = 0.0
        self.updates = 0

    def update(self, W: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """One block of equations ``Y = W chi`` (rows,), (rows, n); the a-priori errors (rows,)."""
        W = np.atleast_2d(np.asarray(W, dtype=float))
        Y = np.atleast_1d(np.asarray(Y, dtype=float))
        if not (np.all(np.isfinite(W)) and np.all(np.isfinite(Y))):
            raise InputError("non-finite observation row or measurement: update skipped")
        lam = self.forgetting
        error = Y - W @ self.chi
        pw = self.P @ W.T  # (n, rows)
        gain = np.linalg.solve(lam * np.eye(len(Y)) + W @ pw, pw.T).T  # (n, rows)
        self.chi = self.chi + gain @ error
        self.P = (self.P - gain @ pw.T) / lam
        self.P = 0.5 * (self.P + self.P.T)
        weight = 1.0 - lam if self.updates else 1.0
        self.noise_variance = (1.0 - weight) * self.noise_variance + weight * float(error @ error) / len(Y)
        self.updates += 1
        return error

    def covariance(self) -> np.ndarray:
        """``C = s^2 P`` (n, n)."""
        return self.noise_variance * self.P

    def scaled_condition(self) -> float:
        """Condition number of ``D P^-1 D`` with ``D = diag(P)^1/2`` (unit-free)."""
        scale = np.sqrt(np.clip(np.diag(self.P), 1e-300, None))
        information = np.linalg.inv(self.P) * np.outer(scale, scale)
        return float(np.linalg.cond(information))


@dataclass(frozen=True)
class OnlineEstimate:
    """The current estimate: base parameter names (n_b,), values, ``sigma``, ``%sigma``; its time (s)."""

    t: float
    names: tuple[str, ...]
    chi: np.ndarray
    std: np.ndarray
    relative_std: np.ndarray
    condition: float
    updates: int


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
        window: Savitzky-Golay half-width ``m`` (samples; the estimate lags by ``m / rate_hz``).
        forgetting: RLS ``lambda`` per decimated sample.
        max_condition: :meth:`well_conditioned` threshold on the scaled information matrix.
        min_updates: decimated samples needed before :meth:`well_conditioned` can be True.
    """

    def __init__(
        self,
        robot: Robot,
        params: DynamicParameters | None = None,
        *,
        rate_hz: float = 1000.0,
        decimation: int = 10,
        window: int = 15,
        forgetting: float = 0.995,
        max_condition: float = 1e4,
        min_updates: int = 200,
        initial_covariance: float = 1e3,
    ) -> None:
        if decimation < 1 or window < 2 or rate_hz <= 0.0:
            raise InputError(f"decimation >= 1, window >= 2, rate_hz > 0 expected, got {decimation}, {window}, {rate_hz}")
        self.robot = robot
        self.layout = params or nominal_parameters(robot)
        self.regressor = Regressor(robot, self.layout)
        self.base = structural_base(robot, self.regressor)
        columns = [self.layout.names.index(n) for n in self.base.standard_names]
        self._nominal_columns = self.layout.vector()[columns]
        self._columns = np.array(columns)
        initial = self.base.from_standard(self._nominal_columns)
        self.rls = RecursiveLeastSquares(initial, forgetting=forgetting, initial_covariance=initial_covariance)
        self.period = 1.0 / rate_hz
        self.decimation = int(decimation)
        self.window = int(window)
        self.max_condition = float(max_condition)
        self.min_updates = int(min_updates)
        length = 2 * window + 1
        # position, velocity, acceleration at the window's centre (scipy: coefficients for a dot product)
        self._filters = np.stack([savgol_coeffs(length, 3, deriv=d, delta=self.period, use="dot") for d in range(3)])
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

        Returns True when it completed an update of the estimate. Raises :class:`InputError` for a
        sample of the wrong size or with NaN (the estimator is unchanged).
        """
        positions = np.asarray(positions, dtype=float)
        efforts = np.asarray(efforts, dtype=float)
        n_a = len(self.robot.actuated_names)
        if positions.shape != (len(self.robot.measured_names),) or efforts.shape != (n_a,):
            raise InputError(f"expected {len(self.robot.measured_names)} positions and {n_a} efforts, "
                             f"got {positions.shape}, {efforts.shape}")
        if not (np.all(np.isfinite(positions)) and np.all(np.isfinite(efforts))):
            raise InputError("non-finite position or effort: sample dropped")
        self._times.append(float(t))
        self._positions.append(positions)
        self._efforts.append(efforts)
        self._count += 1
        if len(self._times) < self._times.maxlen or self._count % self.decimation:
            return False
        window = np.array(self._positions)  # (2m+1, n_m)
        readings, rates, accelerations = self._filters @ window.reshape(window.shape[0], -1)
        effort = self._filters[0] @ np.array(self._efforts)
        q = self.robot.solve_forward(readings[:n_a], sensed=readings[n_a:] if readings.size > n_a else None,
                                     start=self._q, checks=False).q
        self._q = q
        qdot, qddot = self.robot.differential.states_from(q, self.robot.measured_indices, rates, accelerations)
        observation, measured = self.regressor.equations(q, qdot, qddot, effort)
        self.rls.update(observation[:, self.base.independent], measured)
        self.t = self._times[self.window]
        return True

    def estimate(self) -> OnlineEstimate:
        std = np.sqrt(np.clip(np.diag(self.rls.covariance()), 0.0, None))
        with np.errstate(divide="ignore", invalid="ignore"):
            relative = 100.0 * std / np.abs(self.rls.chi)
        return OnlineEstimate(self.t, self.base.names, self.rls.chi.copy(), std, relative,
                              self.rls.scaled_condition(), self.rls.updates)

    def well_conditioned(self) -> bool:
        """Enough data and a scaled information matrix with condition number below ``max_condition``."""
        return self.rls.updates >= self.min_updates and self.rls.scaled_condition() < self.max_condition

    def parameters(self) -> DynamicParameters:
        """The standard parameters of the current estimate (closest to the layout's, same base values)."""
        vector = self.layout.vector().copy()
        vector[self._columns] = standard_from_base(self.base, self.rls.chi, self._nominal_columns)
        return self.layout.with_vector(vector)
