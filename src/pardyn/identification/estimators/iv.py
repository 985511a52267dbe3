"""IDIM-IV (Janot, Vandanjon, Gautier 2014, IEEE TCST 22(1)): instrumental variables from the closed-loop model.

Instruments ``Z = W(q_s, qdot_s, qddot_s)`` from the closed-loop simulation of the model with the
previous estimate, driven by the recorded reference through the robot's own controller
(:mod:`pardyn.identification.model_simulation`): noise-free and correlated with ``W``. Iterated from the
WLS estimate,

    chi_k = (Z_k^T W)^-1 Z_k^T Y,                       Z_k = W(sim(chi_{k-1}))

until the parameters settle. Covariance (the IV "sandwich")
``C = sigma^2 (Z^T W)^-1 Z^T Z (W^T Z)^-1``, ``sigma^2 = ||Y - W chi||^2 / (r - n_b)``.
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
from pardyn.identification.least_squares import Estimate, LinearSystem

__all__ = ["InstrumentalVariables", "instrumental_variables"]


def instrumental_variables(
    system: LinearSystem, instruments: np.ndarray, *, block_sigmas: np.ndarray | None = None
) -> Estimate:
    """One IV estimate ``chi = (Z^T W)^-1 Z^T Y`` (weighted by ``1 / sigma_j`` per block) and its covariance.

    Args:
        system: ``Y = W chi`` (r,), (r, n).
        instruments: ``Z`` (r, n), uncorrelated with the noise of ``Y`` and ``W``, correlated with ``W``.
        block_sigmas: per-block weights' inverses (blocks,), ``None``: unweighted.
    """
    z = np.asarray(instruments, dtype=float)
    if z.shape != system.W.shape:
        raise InputError(f"instruments {z.shape} do not match W {system.W.shape}")
    weights = row_weights(system, block_sigmas)
    w, y, z = system.W * weights[:, None], system.Y * weights, z * weights[:, None]
    cross = z.T @ w  # (n, n)
    try:
        chi = linalg.solve(cross, z.T @ y, check_finite=True)
        inverse = linalg.inv(cross)
    except (linalg.LinAlgError, ValueError) as error:
        raise InputError(f"the instruments are not correlated with W (Z^T W singular): {error}") from error
    rows, n = w.shape
    sigma2 = float(np.sum((y - w @ chi) ** 2)) / (rows - n)
    covariance = sigma2 * inverse @ (z.T @ z) @ inverse.T
    return finish(system, chi, covariance, float(np.sqrt(sigma2)), "iv", block_sigmas, float(np.linalg.cond(w)))


@register
class InstrumentalVariables:
    name = "iv"
    summary = "IDIM-IV (instruments from the closed-loop simulation of the model)"
    closed_loop = True

    def build(self, system: LinearSystem, options: IterationOptions, context: EstimatorContext) -> EstimatorResult:
        last: list[Estimate] = []

        def step(chi: np.ndarray) -> tuple[np.ndarray, float, str]:
            last[:] = [instrumental_variables(system, context.simulate(chi).W, block_sigmas=context.block_sigmas)]
            return last[0].chi, last[0].relative_error, f"fit error {100 * last[0].relative_error:.3g} %"

        _, changes, fits = iterate(self.name, system, context, options, step)
        return EstimatorResult.of_iteration(last[0], self.name, changes, fits, options)
