"""Estimators of the base parameters, one module each, registered by name in :data:`ESTIMATORS`.

All solve the filtered, decimated identification system of the pipeline

    Y = W(q_m, qdot_m, qddot_m) chi + rho                   # (r,) = (r, n_b) (n_b,), eqs. (40)-(41)

with its equation blocks weighted by ``1 / sigma_j`` (eq. 48, ``sigma_j`` from
the WLS of the blocks, kept fixed through the iterations) -- except ``ols``,
which weights every equation alike. They differ in how they treat the measured
states ``q_m`` and their derivatives, which carry the noise and the lag of the
derivative filter into ``W``:

* :mod:`.wls`: IDIM-WLS (eq. 48), the default;
* :mod:`.ols`: IDIM-OLS (eqs. 44-47);
* :mod:`.iv`: IDIM-IV (Janot, Vandanjon, Gautier 2014): instruments from the closed-loop
  simulation of the model (:mod:`pardyn.identification.simulation`);
* :mod:`.didim`: DIDIM (Gautier, Janot, Vandanjon 2013): closed-loop output error on the torques;
* :mod:`.cloe`: CLOE (Landau and Karimi 1997; Brunot et al. 2017): closed-loop output error on the
  positions, Levenberg-Marquardt on finite-difference sensitivities;
* :mod:`.ml`: maximum likelihood: the same output error with the noise covariance of the joints
  estimated (Goodwin and Payne 1977; Brunot et al. 2017).

The closed-loop iterations (``iv``, ``didim``) stop when the step moves the
model's torques by less than ``tolerance`` of their norm,
``||W (chi_k - chi_{k-1})|| / ||Y|| < tolerance`` (weighted; 1e-3 by default),
or after ``max_iterations`` (then ``converged`` is False and the result says
so). The fit figures of every result (``relative_error``, per block) are those
of the measured system ``Y - W chi``, comparable across estimators.

Adding an estimator is one module here: a class with ``name``, ``summary``,
``closed_loop`` and ``estimate(system, context)`` (:class:`.protocol.Estimator`),
decorated with :func:`.protocol.register`; the CLI, the report and the
estimators study read :data:`ESTIMATORS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from pardyn.errors import InputError
from pardyn.identification.estimators.protocol import (
    DEFAULT_ESTIMATOR,
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_TOLERANCE,
    ESTIMATORS,
    STARTS,
    Estimator,
    EstimatorContext,
    EstimatorResult,
    SimulatedSystem,
    Simulation,
)
from pardyn.identification.least_squares import DEFAULT_RANK_EPS, Estimate, LinearSystem
from pardyn.registry import import_modules

import_modules(__name__, first=("wls", "iv", "didim", "cloe", "ml"))  # the papers' estimators first, then the others

from pardyn.identification.estimators.iv import instrumental_variables  # noqa: E402 - after the registration

__all__ = [
    "DEFAULT_ESTIMATOR",
    "ESTIMATORS",
    "STARTS",
    "Estimator",
    "EstimatorContext",
    "EstimatorResult",
    "SimulatedSystem",
    "Simulation",
    "estimate",
    "instrumental_variables",
]


def estimate(
    name: str,
    system: LinearSystem,
    *,
    simulate: Simulation | None = None,
    start: np.ndarray | None = None,
    start_name: str = "wls",
    block_sigmas: np.ndarray | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    max_iterations: int = DEFAULT_MAX_ITERATIONS,
    progress: Callable[[str], None] | None = None,
    weighted: Estimate | None = None,
    rank_eps: float = DEFAULT_RANK_EPS,
    positions: np.ndarray | None = None,
) -> EstimatorResult:
    """The base parameters of ``system`` by the estimator ``name`` (module docstring).

    Args:
        system: the data system (base columns), blocks as eq. (48).
        simulate: closed-loop estimators: the simulation of the model (:data:`Simulation`).
        start: the first estimate of the iteration (n_b,); default the WLS estimate.
        start_name: what ``start`` is, for the report.
        block_sigmas: block weights' inverses; default the WLS's.
        tolerance, max_iterations: the stopping rule.
        progress: called with one line per iteration.
        weighted: the eq. (48) WLS estimate of ``system`` if already computed.
        rank_eps: QR rank threshold of eq. (42).
        positions: the measured actuated positions (N, n_a), for the position output-error estimators.
    """
    estimator = ESTIMATORS.get(name)
    context = EstimatorContext(weighted=weighted, simulate=simulate, start=start, start_name=start_name,
                               block_sigmas=block_sigmas, tolerance=tolerance, max_iterations=max_iterations,
                               rank_eps=rank_eps, progress=progress, positions=positions)
    if estimator.closed_loop:
        if simulate is None:
            raise InputError(f"the {name} estimator needs the closed-loop simulation of the model "
                             "(controller and reference)")
        if not (tolerance > 0.0 and max_iterations >= 1):
            raise InputError(f"tolerance must be > 0 and max_iterations >= 1, got {tolerance}, {max_iterations}")
        if start is None or block_sigmas is None:
            reference = context.reference(system)
            context = replace(context, weighted=reference, start=reference.chi if start is None else start,
                              block_sigmas=reference.block_sigmas if block_sigmas is None else block_sigmas)
    return estimator.estimate(system, context)
