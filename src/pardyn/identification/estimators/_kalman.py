"""What the Kalman-filter estimators (``ekf``, ``ukf``) share: the state model, the data's order, the tuning.

The filters estimate the base parameters ``chi`` (n_b,) as the state of a random walk observed
through the inverse dynamic identification model, sample after sample of the recording:

    chi_{k+1} = chi_k + w_k,          w_k ~ N(0, Q)                               # state (random walk)
    y_k = W_k chi_k + v_k,            v_k ~ N(0, R_k),  R_k = diag(sigma_j^2)     # observation, eqs. (40)-(41)

``W_k`` (m_k, n_b) and ``y_k`` (m_k,) are the rows of the pipeline's filtered, decimated system taken
at one time: the ``k``-th equation of every block (one block per equation row of the closed-chain
model and per run, :class:`~pardyn.identification.least_squares.LinearSystem`), so the loop
constraints are kept as the pipeline keeps them (the reduced model of the closed chain, Briot et al.
2015 eqs. 27-41). ``sigma_j``: the eq. (48) WLS block standard deviations (the same weights as WLS).
This is the parameter-only ("IDIM-KF") form of the filter (Gautier and Poignet 2001, who show that
it ends at the WLS estimate when the parameters are constant); BIRDy's DDIM-EKF/UKF (Leboutet et al.
2021) augment the state with ``qdot, q`` and predict with the direct dynamic model, observing the
positions (not done here: see :mod:`.ekf`). The equations below are numbered (K1)-(K8) in
:mod:`.ekf` and :mod:`.ukf`.

Tuning, dimensionless and relative to the data: ``s_i = diag(W^T R^-1 W)_ii^-1/2`` is the
resolution of parameter ``i`` alone from the whole record;

* prior: ``chi_0 = 0`` (or ``context.start``), ``P_0 = diag((prior s_i)^2)`` (diffuse by default);
* process noise: ``Q = diag((process_noise s_i)^2) / n_steps`` per step, so that the random walk
  spreads by ``process_noise s_i`` over the whole record (0: constant parameters; the filter is
  then recursive weighted least squares and ends at the eq. (48) WLS estimate, up to the prior).

Rows are taken in their order within each block (time) and the blocks interleaved by the fraction
of their length (several runs are filtered as if recorded side by side). Steps group ``ceil(N /
MAX_STEPS)`` consecutive samples so that a long record costs at most ``MAX_STEPS`` updates.

References: M. Gautier, P. Poignet, "Extended Kalman filtering and weighted least squares dynamic
identification of robot", Control Engineering Practice 9(12), 2001; Q. Leboutet, J. Roux, A. Janot,
J. R. Guadarrama-Olvera, G. Cheng, "Inertial parameter identification in robotics: a survey",
Applied Sciences 11(9) 4303, 2021.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pardyn.identification.estimators._consistent import consistent_projection
from pardyn.identification.estimators.protocol import EstimatorContext, EstimatorResult, finish, row_weights
from pardyn.identification.least_squares import LinearSystem

__all__ = ["MAX_STEPS", "FilterData", "filter_data"]

MAX_STEPS = 2000
"""Most filter steps over a record: longer records group consecutive samples per step."""


@dataclass(frozen=True)
class FilterData:
    """The system as the filters read it.

    Attributes:
        steps: row indices of each step (time order), each (m_k,).
        weights: ``1 / sigma_j`` of every row (r,).
        scale: ``s_i`` (n_b,): each parameter's resolution alone from the whole record.
        start: ``chi_0`` (n_b,).
        block_sigmas: ``sigma_j`` (blocks,).
    """

    steps: list[np.ndarray]
    weights: np.ndarray
    scale: np.ndarray
    start: np.ndarray
    block_sigmas: np.ndarray


def filter_data(system: LinearSystem, context: EstimatorContext) -> FilterData:
    """The steps, weights and scales of the filters (module docstring)."""
    reference = context.reference(system)
    sigmas = np.asarray(context.block_sigmas if context.block_sigmas is not None else reference.block_sigmas,
                        dtype=float)
    weights = row_weights(system, sigmas)
    keys = np.concatenate([(np.arange(size) + 0.5) / size for size in system.block_sizes])
    order = np.argsort(keys, kind="stable")
    samples = max(system.block_sizes)
    group = int(np.ceil(samples / MAX_STEPS))
    per_step = max(1, int(round(group * system.rows / samples)))
    steps = [order[i:i + per_step] for i in range(0, system.rows, per_step)]
    information = np.sum((system.W * weights[:, None]) ** 2, axis=0)
    scale = 1.0 / np.sqrt(np.maximum(information, 1e-300))
    start = np.zeros(system.n_parameters) if context.start is None else np.asarray(context.start, dtype=float)
    return FilterData(steps, weights, scale, start, sigmas)


def weighted_fit(system: LinearSystem, chi: np.ndarray, weights: np.ndarray) -> float:
    """``sigma_rho`` of the weighted system at ``chi`` (eq. 46, ~1 at the WLS estimate)."""
    residual = (system.Y - system.W @ chi) * weights
    return float(np.sqrt(np.sum(residual**2) / max(system.rows - system.n_parameters, 1)))


def filter_result(name: str, system: LinearSystem, data: FilterData, chi: np.ndarray, p: np.ndarray,
                  context: EstimatorContext, *, consistent: bool = False, **details) -> EstimatorResult:
    """The estimator's result from a filter's last estimate ``chi`` (n_b,) and its scaled covariance ``p``
    (n_b, n_b): the covariance ``sigma^2 p`` with ``sigma`` the weighted fit of ``chi``. ``consistent``: ``chi``
    first projected onto the physically consistent set in the filter's metric (:mod:`._consistent`), the
    standard parameters in ``physical``. ``details``: further :class:`EstimatorResult` fields."""
    sigma = weighted_fit(system, chi, data.weights)
    physical = consistent_projection(name, chi, p, sigma, context) if consistent else None
    kept = chi if physical is None else physical.base_values
    fit = sigma if physical is None else weighted_fit(system, kept, data.weights)
    estimate = finish(system, kept, sigma**2 * p, fit, name, data.block_sigmas, float(np.linalg.cond(system.W)))
    return EstimatorResult(estimate, name, physical=physical, **details)
