"""UKF: the base parameters as random-walk states of an unscented Kalman filter over the recorded data.

State, observation and tuning: :mod:`._kalman` and :class:`.ekf.KalmanOptions`. Covariance form with
the symmetric set of ``2 n`` sigma points (Julier and Uhlmann 2004; Wan and van der Merwe 2000 with
``alpha = 1, beta = 0, kappa = 0``: equal weights ``1 / 2n``, none negative)::

    time update: P_k+ = P_k + Q                                                               (K6)
    sigma points: X_i = chi_k +/- sqrt(n) L_k e_i, L_k L_k^T = P_k+ (Cholesky), i = 1..n      (K7)
    update: Y_i = W_k X_i, y_hat = mean(Y_i), P_yy = cov(Y_i) + R_k, P_xy = cov(X_i, Y_i),
            K = P_xy P_yy^-1, chi_{k+1} = chi_k + K (y_k - y_hat), P_{k+1} = P_k+ - K P_yy K^T     (K8)

The observation ``W_k chi`` is linear, so the unscented transform is exact: the UKF computes the
Kalman filter of the model, as the EKF (:mod:`.ekf`) does, in covariance form. That form cannot hold
a diffuse prior to round-off (``P_{k+1}`` is a difference of terms ``prior^2`` times larger), so the
prior is moderate (``min(prior, 1e3)``) and the record is filtered ``passes`` times, each pass
restarting from the previous pass's estimate with the prior covariance (iterated filtering): the
prior's pull ``~ kappa / prior^2`` (``kappa`` the condition number of the Jacobi-scaled information
``W^T R^-1 W``) contracts geometrically from pass to pass. Where ``kappa`` reaches ``prior^2 = 1e6``
(poorly excited directions: the Delta's and the UR5e's exciting runs of the estimator benchmark) it
does not: the UKF then ends between the WLS estimate and its start, a ridge-like shrinkage of the
poorly excited directions, which the EKF (diffuse prior, exact) does not have. Reported covariance:
the last pass's ``P`` scaled by ``sigma_rho^2`` (eq. 46).

The physically consistent variant is :mod:`.pc_ukf` (the filtered estimate projected onto the
physically consistent set in the filter's metric). Not done: sigma points on a log-Cholesky
parameterisation of each body's pseudo-inertia (consistent at every update, the observation then
nonlinear); the DDIM form of BIRDy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from pardyn.identification.estimators._kalman import FilterData, filter_data, filter_result, weighted_fit
from pardyn.identification.estimators.ekf import KalmanOptions
from pardyn.identification.estimators.protocol import EstimatorContext, EstimatorResult, register
from pardyn.identification.least_squares import LinearSystem
from pardyn.registry import option

__all__ = ["UnscentedKalmanFilter", "UnscentedOptions", "unscented_filter"]

COVARIANCE_PRIOR = 1e3
"""The covariance form's largest usable prior, in units of each parameter's resolution."""


@dataclass(frozen=True)
class UnscentedOptions(KalmanOptions):
    """The UKF's tuning: :class:`.ekf.KalmanOptions` (the same options) and the passes over the record."""

    passes: int = option(3, "passes of the UKF over the record, each from the previous pass's estimate",
                         low=1, high=100)


@register
class UnscentedKalmanFilter:
    name = "ukf"
    summary = "UKF (base parameters as random-walk states, sigma points, iterated passes)"
    closed_loop = False
    Options = UnscentedOptions

    def build(self, system: LinearSystem, options: UnscentedOptions, context: EstimatorContext) -> EstimatorResult:
        data = filter_data(system, context)
        chi, p = unscented_filter(system, options, data, context.progress)
        return filter_result(self.name, system, data, chi, p, context, iterations=0, converged=True)


def unscented_filter(system: LinearSystem, options: UnscentedOptions, data: FilterData,
                     progress=None) -> tuple[np.ndarray, np.ndarray]:
    """``passes`` of (K6)-(K8): the last estimate (n_b,) and the last pass's covariance ``P`` (n_b, n_b), unscaled."""
    prior = np.diag((min(options.prior, COVARIANCE_PRIOR) * data.scale) ** 2)
    q = np.diag((options.process_noise * data.scale) ** 2 / len(data.steps))
    chi, p = data.start.copy(), prior
    for k in range(options.passes):
        chi, p = _pass(system, data.steps, data.weights, chi, prior.copy(), q)
        if progress:
            progress(f"ukf pass {k + 1}: weighted fit {weighted_fit(system, chi, data.weights):.4g}")
    return chi, p


def _pass(system: LinearSystem, steps: list[np.ndarray], weights: np.ndarray, chi: np.ndarray, p: np.ndarray,
          q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One pass of (K6)-(K8) over the record from ``chi``, ``p``; returns the last estimate and covariance."""
    n = chi.size
    for rows in steps:
        p = p + q  # (K6)
        root = np.linalg.cholesky(0.5 * (p + p.T)) * np.sqrt(n)  # (K7)
        spread = np.hstack([root, -root])  # X_i - chi (n, 2n)
        w = system.W[rows]
        predicted = w @ (chi[:, None] + spread)  # Y_i (m, 2n)
        mean = predicted.mean(axis=1)
        deviation = predicted - mean[:, None]
        p_yy = deviation @ deviation.T / (2 * n) + np.diag(1.0 / weights[rows] ** 2)  # (K8)
        p_xy = spread @ deviation.T / (2 * n)
        factor = linalg.cho_factor(p_yy)
        gain = linalg.cho_solve(factor, p_xy.T).T
        chi = chi + gain @ (system.Y[rows] - mean)
        p = p - gain @ p_yy @ gain.T
    return chi, 0.5 * (p + p.T)
