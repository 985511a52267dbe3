"""What the physically consistent filters (``pc_ekf``, ``pc_ukf``) share: the projection of a filtered estimate.

A filter ends at the estimate ``chi_hat`` (n_b,) of the base parameters with covariance
``sigma^2 P`` (:mod:`._kalman`); nothing keeps the bodies behind it physical. The physically
consistent estimate is its projection onto the set of base values that physical bodies can have,
in the filter's own metric (the estimate-projection approach of constrained Kalman filtering:
D. Simon, "Kalman filtering with state constraints: a survey of linear and nonlinear algorithms",
IET Control Theory & Applications 4(8), 2010, where the projection weighted by ``P^-1`` is the
constrained estimate of least variance)::

    minimise    (K phi - chi_hat)^T P^-1 (K phi - chi_hat) / sigma^2 + lambda ||N^T (phi - phi_nom) / s||^2   (P1)
    subject to  J_b(phi) >= eps_b 1_4 for every body b;  ia_j, fv_j, fs_j >= 0 for every drive j      (P2)

over the standard parameters ``phi`` (n_st,) (``K`` the regrouping, ``J_b`` the pseudo-inertia,
Wensing, Kim, Slotine 2017, Thm. 1). It is the semidefinite program of the physically consistent
WLS (:func:`pardyn.identification.physical.physical_estimate`: the same LMIs, margins, prior along the
unidentifiable directions, solver), given the system ``[R; 0] chi = [R chi_hat; sigma]`` with
``R^T R = P^-1`` in place of the weighted data: its data term is (P1)'s, its residual variance
``sigma^2``. With constant parameters the filters' ``P^-1`` is the weighted data's information
(the EKF's exactly, the UKF's up to its finite prior), so ``pc_ekf`` is the physically consistent
WLS; with a random walk it is the last estimate's. The projection is applied once, at the end of
the record (Simon 2010's projection of the final estimate; projecting at every update would make
the filter nonlinear in the data). Where the filtered estimate is already consistent (the
constraints inactive) the projection returns it (to the solver's tolerance).
"""

from __future__ import annotations

import numpy as np

from pardyn.errors import InputError
from pardyn.identification.estimators.protocol import EstimatorContext
from pardyn.identification.least_squares import LinearSystem

__all__ = ["consistent_projection"]


def consistent_projection(name: str, chi: np.ndarray, p: np.ndarray, sigma: float, context: EstimatorContext):
    """(P1)-(P2) for the filtered ``chi`` (n_b,), covariance ``P`` (n_b, n_b) unscaled and ``sigma``: a
    :class:`pardyn.identification.physical.PhysicalEstimate` (``base_values`` the projected estimate)."""
    from pardyn.identification.physical import physical_estimate  # noqa: PLC0415 - cvxpy on demand

    base, layout = context.base, context.layout
    if base is None or layout is None:
        raise InputError(f"the {name} estimator projects onto physically consistent standard parameters: it needs "
                         "the base parameters and the parameter layout (pardyn identify passes them)")
    n = chi.size
    values, vectors = np.linalg.eigh(0.5 * (p + p.T))
    values = np.maximum(values, 1e-300 + 1e-30 * values.max())
    root = (vectors / np.sqrt(values)).T  # R^T R = P^-1
    columns = np.zeros((n + 1, len(base.standard_names)))
    columns[:n, base.independent] = root
    target = np.append(root @ chi, sigma)
    system = LinearSystem(columns, target, (n + 1,), tuple(base.standard_names))
    return physical_estimate(system, base, layout)
