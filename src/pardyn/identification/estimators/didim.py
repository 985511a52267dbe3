"""DIDIM (Gautier, Janot, Vandanjon 2013, IEEE TCST 21(2)): closed-loop output error on the torques.

Minimise ``||Y - Y_s(chi)||`` with ``Y_s`` the simulated torque output (the controller's command in
the simulation, through the same projection, filter and decimation), by Gauss-Newton with DIDIM's
Jacobian ``dY_s / dchi ~ Z = W(sim(chi))``:

    chi_{k+1} = chi_k + (Z_k^T Z_k)^-1 Z_k^T (Y - Y_s(chi_k))

initialised from the WLS estimate (``start="wls"``) or the nominal parameters (``start="nominal"``).
Covariance ``sigma^2 (Z^T Z)^-1`` with ``sigma`` from the output error.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from pardyn.errors import InputError
from pardyn.identification.estimators.protocol import (
    EstimatorContext,
    EstimatorResult,
    IterationOptions,
    finish,
    iterate,
    register,
    row_weights,
)
from pardyn.identification.least_squares import LinearSystem

__all__ = ["DirectAndInverseDynamics"]


def _output_error_step(system: LinearSystem, simulated: LinearSystem, chi: np.ndarray,
                       block_sigmas: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, float]:
    """DIDIM's Gauss-Newton step: new chi, covariance ``sigma^2 (Z^T Z)^-1``, sigma."""
    weights = row_weights(system, block_sigmas)
    z = simulated.W * weights[:, None]
    residual = (system.Y - simulated.Y) * weights
    norms = np.linalg.norm(z, axis=0)  # columns scaled to unit norm: the rank is the data's, not the units'
    norms[norms == 0.0] = 1.0
    scaled, _, rank, _ = linalg.lstsq(z / norms, residual, check_finite=True)
    step = scaled / norms
    if rank < z.shape[1]:
        raise InputError(f"the simulated observation matrix has rank {rank} < {z.shape[1]}: the simulated run "
                         "does not excite every base parameter")
    new = chi + step
    sigma2 = float(np.sum((residual - z @ step) ** 2)) / (z.shape[0] - z.shape[1])
    r = linalg.qr(z, mode="r")[0][: z.shape[1]]
    r_inv = linalg.solve_triangular(r, np.eye(z.shape[1]))
    return new, sigma2 * (r_inv @ r_inv.T), float(np.sqrt(sigma2))


@register
class DirectAndInverseDynamics:
    name = "didim"
    summary = "DIDIM (closed-loop output error on the torques)"
    closed_loop = True

    def build(self, system: LinearSystem, options: IterationOptions, context: EstimatorContext) -> EstimatorResult:
        block_sigmas = context.block_sigmas
        weights = row_weights(system, block_sigmas)
        y_norm = max(float(np.linalg.norm(system.Y * weights)), 1e-300)
        last: list = []  # the last step's simulated system, covariance and sigma

        def step(chi: np.ndarray) -> tuple[np.ndarray, float, str]:
            simulated = context.simulate(chi)
            error = float(np.linalg.norm((system.Y - simulated.Y) * weights)) / y_norm
            new, covariance, sigma = _output_error_step(system, simulated, chi, block_sigmas)
            last[:] = [simulated, covariance, sigma]
            return new, error, f"output error {100 * error:.3g} %"

        chi, changes, errors = iterate(self.name, system, context, options, step)
        simulated, covariance, sigma = last
        condition = float(np.linalg.cond(simulated.W * weights[:, None]))
        estimate = finish(system, chi, covariance, sigma, self.name, block_sigmas, condition)
        return EstimatorResult.of_iteration(estimate, self.name, changes, errors, options)
