"""IDIM-WLS (Briot et al. 2015 eq. 48), the default estimator.

``chi = W^+ Y`` with the equation blocks weighted by ``1 / sigma_j``
(:func:`pardyn.identification.least_squares.wls`): biased when ``W`` is noisy or
the band-pass filter is mistuned (the noise in ``W`` is correlated with ``rho``).
"""

from __future__ import annotations

from pardyn.identification.estimators.protocol import EstimatorContext, EstimatorResult, NoOptions, register
from pardyn.identification.least_squares import LinearSystem


@register
class WeightedLeastSquares:
    name = "wls"
    summary = "IDIM-WLS (eq. 48, the default)"
    closed_loop = False

    def build(self, system: LinearSystem, options: NoOptions, context: EstimatorContext) -> EstimatorResult:
        return EstimatorResult(context.reference(system), self.name)
