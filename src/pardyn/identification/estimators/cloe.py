"""CLOE: closed-loop output error on the positions (Landau and Karimi 1997; Leboutet et al. 2021, sec. 4.3).

The base parameters that make the model, simulated in closed loop with the recorded controller and
reference, reproduce the measured actuated positions: ``min ||vec(q_m - q_s(chi))||^2``, every joint
weighted alike, by Levenberg-Marquardt started from the eq. (48) WLS estimate (:mod:`._output_error`, its
eqs. 38-39), the sensitivities from the linearised closed loop along each run (its eq. L1: one simulation a
step). Unlike DIDIM (whose output is the torque), the noise it sees is the encoders', not the torque sensors'.
"""

from __future__ import annotations

from pardyn.identification.estimators._output_error import (
    OutputErrorOptions,
    identity_covariance,
    position_output_error,
)
from pardyn.identification.estimators.protocol import EstimatorContext, EstimatorResult, register
from pardyn.identification.least_squares import LinearSystem

__all__ = ["ClosedLoopOutputError"]


@register
class ClosedLoopOutputError:
    name = "cloe"
    summary = "CLOE (closed-loop output error on the positions, Levenberg-Marquardt)"
    closed_loop = True
    Options = OutputErrorOptions

    def build(self, system: LinearSystem, options: OutputErrorOptions, context: EstimatorContext) -> EstimatorResult:
        return position_output_error(self.name, system, context, options, identity_covariance)
