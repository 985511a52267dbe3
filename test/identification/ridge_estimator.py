"""An estimator with an option of its own, as a user adds one: this file is the whole estimator.

``ridge``: Tikhonov-regularised least squares, ``chi = argmin ||W chi - Y||^2 + lambda ||chi||^2``,
solved as the least squares of the stacked system ``[W; sqrt(lambda) I] chi = [Y; 0]`` (QR, never
the normal equations). ``estimator_ridge`` (``lambda``, in the squared units of ``Y``: (N m)^2 per
unit of parameter^2) is its option: ``pardyn identify --estimator ridge --estimator-ridge 0.1``.
The module registers nothing at import: :func:`register_estimator` does (the test), as a module
of ``pardyn.identification.estimators`` would with ``@register`` on the class.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pardyn.identification.estimators.protocol import EstimatorResult, finish, register
from pardyn.registry import option


@dataclass(frozen=True)
class RidgeOptions:
    ridge: float = option(0.0, "Tikhonov weight lambda of ||chi||^2 (0: ordinary least squares)", unit="(N m)^2",
                          low=0.0, high=1e12)


class Ridge:
    name = "ridge"
    summary = "ridge regression (least squares + lambda ||chi||^2)"
    closed_loop = False
    Options = RidgeOptions

    def build(self, system, options: RidgeOptions, context) -> EstimatorResult:
        n = system.W.shape[1]
        stacked = np.vstack([system.W, np.sqrt(options.ridge) * np.eye(n)])
        chi = np.linalg.lstsq(stacked, np.concatenate([system.Y, np.zeros(n)]), rcond=None)[0]
        rows = system.rows
        sigma2 = float(np.sum((system.Y - system.W @ chi) ** 2)) / max(rows - n, 1)
        covariance = sigma2 * np.linalg.pinv(stacked.T @ stacked)
        estimate = finish(system, chi, covariance, float(np.sqrt(sigma2)), self.name, None,
                          float(np.linalg.cond(stacked)))
        return EstimatorResult(estimate, self.name)


def register_estimator() -> str:
    register(Ridge)
    return Ridge.name
