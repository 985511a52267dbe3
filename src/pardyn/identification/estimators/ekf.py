"""EKF: the base parameters as random-walk states of an extended Kalman filter over the recorded data.

State, observation and tuning: :mod:`._kalman` (the parameter-only filter on the inverse dynamic
identification model of the closed chain, ``y_k = W_k chi_k + v_k``, ``chi_{k+1} = chi_k + w_k``).
The observation is linear in the state, so the EKF's Jacobian ``H_k = d y_k / d chi`` is ``W_k``
itself and the filter is the Kalman filter of that model. It runs in square-root information form
(Bierman 1977, ch. V; Simon 2006, sec. 6.4), exact to round-off for any prior (a diffuse one
included), where the covariance form loses the digits the prior has in excess of the data::

    information pair (R_k, z_k), R_k upper-triangular, R_k chi_k = z_k, P_k = R_k^-1 R_k^-T      (K1)
    prior: R_0 = diag(1 / (prior s_i)), z_0 = R_0 chi_0                                         (K2)
    time update (random walk, Q = L_Q L_Q^T):
        T [[L_Q^-1, 0, 0], [-R_k, R_k, z_k]] = [[*, *, *], [0, R_k+, z_k+]]  (T orthogonal)     (K3)
    measurement update (D_k = diag(1 / sigma_j) of the step's rows):
        T [[R_k+, z_k+], [D_k W_k, D_k y_k]] = [[R_{k+1}, z_{k+1}], [0, e_k]]                    (K4)
    estimate and covariance at the end: chi = R^-1 z, P = R^-1 R^-T                             (K5)

With ``process_noise = 0`` (K3) is the identity and (K4) accumulates the QR factor of the weighted
system: the estimate is the eq. (48) WLS estimate regularised by the prior, ``|chi - chi_WLS|``
of the order of ``cond / prior^2`` (Gautier and Poignet 2001). ``P`` is reported scaled by the
weighted residual variance ``sigma_rho^2`` (eq. 46), as WLS does.

The physically consistent variant is :mod:`.pc_ekf` (the filtered estimate projected onto the
physically consistent set in the filter's metric). Not done: the DDIM form of BIRDy (state
``[qdot, q, chi]``, prediction by the direct dynamic model of the closed chain, observation ``q``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg

from pardyn.identification.estimators._kalman import FilterData, filter_data, filter_result
from pardyn.identification.estimators.protocol import EstimatorContext, EstimatorResult, register
from pardyn.identification.least_squares import LinearSystem
from pardyn.registry import option

__all__ = ["ExtendedKalmanFilter", "KalmanOptions", "information_filter"]


@dataclass(frozen=True)
class KalmanOptions:
    """The filters' tuning (:mod:`._kalman`).

    Attributes:
        prior: initial standard deviation of each parameter, in units of its resolution ``s_i`` from
            the whole record (large: diffuse).
        process_noise: spread of the parameters' random walk over the whole record, in units of ``s_i``
            (0: constant parameters).
    """

    prior: float = option(1e8, "initial standard deviation of each parameter, in units of its resolution from "
                          "the whole record (large: diffuse prior)", low=0.0, low_open=True, high=1e12)
    process_noise: float = option(0.0, "spread of the parameters' random walk over the record, in units of "
                                  "their resolution (0: constant parameters)", low=0.0, high=1e6)


@register
class ExtendedKalmanFilter:
    name = "ekf"
    summary = "EKF (base parameters as random-walk states, square-root information form)"
    closed_loop = False
    Options = KalmanOptions

    def build(self, system: LinearSystem, options: KalmanOptions, context: EstimatorContext) -> EstimatorResult:
        data = filter_data(system, context)
        chi, p = information_filter(system, options, data)
        return filter_result(self.name, system, data, chi, p, context)


def information_filter(system: LinearSystem, options: KalmanOptions, data: FilterData) -> tuple[np.ndarray, np.ndarray]:
    """(K1)-(K5) over the record: the last estimate (n_b,) and its covariance ``P`` (n_b, n_b), unscaled."""
    n = system.n_parameters
    r = np.diag(1.0 / (options.prior * data.scale))  # (K2)
    z = r @ data.start
    walk = options.process_noise * data.scale / np.sqrt(len(data.steps))  # per-step std of the random walk
    for rows in data.steps:
        if options.process_noise > 0.0:  # (K3)
            top = np.hstack([np.diag(1.0 / walk), np.zeros((n, n)), np.zeros((n, 1))])
            bottom = np.hstack([-r, r, z[:, None]])
            factor = linalg.qr(np.vstack([top, bottom]), mode="r")[0]
            r, z = factor[n:2 * n, n:2 * n], factor[n:2 * n, 2 * n]
        weights = data.weights[rows]
        stacked = np.vstack([np.column_stack([r, z]),
                             np.column_stack([system.W[rows] * weights[:, None], system.Y[rows] * weights])])
        factor = linalg.qr(stacked, mode="r")[0]  # (K4)
        r, z = factor[:n, :n], factor[:n, n]
    chi = linalg.solve_triangular(r, z)  # (K5)
    inverse = linalg.solve_triangular(r, np.eye(n))
    return chi, inverse @ inverse.T
