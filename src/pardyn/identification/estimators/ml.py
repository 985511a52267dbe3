"""Maximum likelihood: the position output error with the joints' noise covariance estimated.

For Gaussian position noise of unknown covariance ``Sigma`` (n_a, n_a), the likelihood of the
closed-loop output error ``E(chi) = q_m - q_s(chi)`` (N, n_a) is maximal where ``det(E^T E / N)`` is
least (Goodwin and Payne 1977, ch. 5; Leboutet et al. 2021, sec. 4.3). It is reached by iterated
generalised least squares: each Levenberg-Marquardt step weighs the errors by ``Sigma^-1`` with
``Sigma = E^T E / N`` of the current estimate (:mod:`._output_error`). Joints with unlike noise
(an encoder of lower resolution, a prismatic joint in m beside revolute ones in rad) are so weighed
by what they are worth, which CLOE does not do.
"""

from __future__ import annotations

from pardyn.identification.estimators._output_error import (
    OutputErrorOptions,
    estimated_covariance,
    position_output_error,
)
from pardyn.identification.estimators.protocol import EstimatorContext, EstimatorResult, register
from pardyn.identification.least_squares import LinearSystem

__all__ = ["MaximumLikelihood"]


@register
class MaximumLikelihood:
    name = "ml"
    summary = "maximum likelihood (position output error, the joints' noise covariance estimated)"
    closed_loop = True
    Options = OutputErrorOptions

    def build(self, system: LinearSystem, options: OutputErrorOptions, context: EstimatorContext) -> EstimatorResult:
        return position_output_error(self.name, system, context, options, estimated_covariance)
