"""Physically consistent EKF: the EKF's estimate projected onto the physically consistent set.

The filter of :mod:`.ekf` ((K1)-(K5), square-root information form), then the projection (P1)-(P2) of
:mod:`._consistent` in the filter's metric ``P^-1 / sigma^2``: the base values of standard parameters
whose every pseudo-inertia is positive definite (Wensing, Kim, Slotine 2017) and whose drive
parameters are non-negative, nearest the filtered estimate. Needs the base parameters and the layout
(:attr:`EstimatorContext.base`, ``layout``) and cvxpy. The result's ``physical`` holds the standard
parameters; the covariance reported is the filter's.
"""

from __future__ import annotations


from pardyn.identification.estimators._kalman import filter_data, filter_result
from pardyn.identification.estimators.ekf import KalmanOptions, information_filter
from pardyn.identification.estimators.protocol import EstimatorContext, EstimatorResult, register
from pardyn.identification.least_squares import LinearSystem

__all__ = ["PhysicalExtendedKalmanFilter"]


@register
class PhysicalExtendedKalmanFilter:
    name = "pc_ekf"
    summary = "physically consistent EKF (the EKF's estimate projected on the pseudo-inertia LMIs)"
    closed_loop = False
    Options = KalmanOptions

    def build(self, system: LinearSystem, options: KalmanOptions, context: EstimatorContext) -> EstimatorResult:
        data = filter_data(system, context)
        chi, p = information_filter(system, options, data)
        return filter_result(self.name, system, data, chi, p, context, consistent=True)
