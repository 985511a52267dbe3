"""IDIM-OLS (Briot et al. 2015 eqs. 44-47): ordinary least squares, every equation weighted alike.

``chi = W^+ Y`` by QR (never the normal equations), ``sigma_rho^2 = ||Y - W chi||^2 / (r - n_b)``
(eq. 46), ``C = sigma_rho^2 (W^T W)^-1`` (eq. 47): the standard deviations assume one noise level
for every equation, which WLS (eq. 48) does not. The estimator for data whose joints have comparable
torque noise, and the reference the weighted estimators are compared with.
"""

from __future__ import annotations

from pardyn.identification.estimators.protocol import EstimatorContext, EstimatorResult, NoOptions, register
from pardyn.identification.least_squares import LinearSystem, ols


@register
class OrdinaryLeastSquares:
    name = "ols"
    summary = "IDIM-OLS (eqs. 44-47, unweighted)"
    closed_loop = False

    def build(self, system: LinearSystem, options: NoOptions, context: EstimatorContext) -> EstimatorResult:
        estimate = ols(system.W, system.Y, names=system.names, block_sizes=system.block_sizes,
                       rank_eps=context.rank_eps)
        return EstimatorResult(estimate, self.name)
