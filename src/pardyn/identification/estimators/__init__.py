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
  simulation of the model (:mod:`pardyn.identification.model_simulation`);
* :mod:`.didim`: DIDIM (Gautier, Janot, Vandanjon 2013): closed-loop output error on the torques;
* :mod:`.cloe`: CLOE (Landau and Karimi 1997; Brunot et al. 2017): closed-loop output error on the
  positions, Levenberg-Marquardt on the linearised closed loop's sensitivities;
* :mod:`.ml`: maximum likelihood: the same output error with the noise covariance of the joints
  estimated (Goodwin and Payne 1977; Brunot et al. 2017);
* :mod:`.ekf`, :mod:`.ukf`: extended and unscented Kalman filters with the base parameters as
  random-walk states over the recorded data, observed through ``y_k = W_k chi_k`` (Gautier and
  Poignet 2001; :mod:`._kalman`).

The closed-loop iterations (``iv``, ``didim``) stop when the step moves the
model's torques by less than ``tolerance`` of their norm,
``||W (chi_k - chi_{k-1})|| / ||Y|| < tolerance`` (weighted; 1e-3 by default),
or after ``iterations`` (then ``converged`` is False and the result says
so). The fit figures of every result (``relative_error``, per block) are those
of the measured system ``Y - W chi``, comparable across estimators.

Adding an estimator is one module here: a class with ``name``, ``summary``,
``closed_loop``, ``Options`` (its settings, if it has any) and ``build(system, options, context)``
(:class:`.protocol.Estimator`), decorated with :func:`.protocol.register`; the CLI (its
``--estimator`` choices and the options' flags), the settings' ``estimator_*`` keywords, the
report and the estimators study read :data:`ESTIMATORS`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pardyn.errors import InputError
from pardyn.identification.estimators.protocol import (
    DEFAULT_ESTIMATOR,
    ESTIMATORS,
    OPTION_PREFIX,
    STARTS,
    Estimator,
    EstimatorContext,
    EstimatorResult,
    IterationOptions,
    NoOptions,
    SimulatedSystem,
    Simulation,
    estimator_options,
    options_of_estimators,
)
from pardyn.identification.least_squares import LinearSystem
from pardyn.registry import import_modules

import_modules(__name__, first=("wls", "iv", "didim", "cloe", "ml", "ekf", "ukf"))  # the papers' estimators first, then the others

from pardyn.identification.estimators.iv import instrumental_variables  # noqa: E402 - after the registration

__all__ = [
    "DEFAULT_ESTIMATOR",
    "ESTIMATORS",
    "OPTION_PREFIX",
    "STARTS",
    "Estimator",
    "EstimatorContext",
    "EstimatorResult",
    "IterationOptions",
    "NoOptions",
    "SimulatedSystem",
    "Simulation",
    "estimate",
    "estimator_options",
    "instrumental_variables",
    "options_of_estimators",
]


def estimate(name: str, system: LinearSystem, options: Any = None,
             context: EstimatorContext | None = None) -> EstimatorResult:
    """The base parameters of ``system`` by the estimator ``name`` (module docstring).

    Args:
        system: the data system (base columns), blocks as eq. (48).
        options: the estimator's ``Options`` (e.g. :class:`IterationOptions`), values by parameter
            name (``{"estimator_iterations": 1}``: :func:`estimator_options`) or None (its defaults).
        context: the data beside the system (:class:`EstimatorContext`): the closed-loop
            estimators' simulation, the first estimate (n_b,) (default the WLS estimate), the
            block weights (default the WLS's), the measured positions, a progress callback...
    """
    estimator = ESTIMATORS.get(name)
    options = estimator_options(name, options)
    context = context or EstimatorContext()
    if estimator.closed_loop:
        if context.simulate is None:
            raise InputError(f"the {name} estimator needs the closed-loop simulation of the model "
                             "(controller and reference)")
        if context.start is None or context.block_sigmas is None:
            reference = context.reference(system)
            context = replace(context, weighted=reference,
                              start=reference.chi if context.start is None else context.start,
                              block_sigmas=reference.block_sigmas if context.block_sigmas is None
                              else context.block_sigmas)
    return estimator.build(system, options, context)
