"""What every estimator of the base parameters is: the protocol, its inputs, its result, the registry.

An estimator solves the filtered, decimated identification system of the pipeline

    Y = W(q_m, qdot_m, qddot_m) chi + rho                   # (r,) = (r, n_b) (n_b,), eqs. (40)-(41)

for the base parameters ``chi``. It is a plug-in (:class:`pardyn.registry.Plugin`): a class with a
``name``, a one-line ``summary`` (the CLI's help), ``closed_loop`` (True if it simulates the model
in closed loop with the recorded controller: the pipeline then hands it
:attr:`EstimatorContext.simulate`), ``Options`` (its settings: a frozen dataclass of
:func:`pardyn.registry.option` fields, parameter names ``estimator_<field>``; the closed-loop
ones share :class:`IterationOptions`) and ``build(system, options, context)`` (the estimate).
Registered in :data:`ESTIMATORS` by the :func:`register` class decorator, one module per estimator
in this package (found by :func:`pardyn.registry.import_modules`). ``pardyn identify``'s flags and
the pipeline's ``estimator_*`` settings follow from ``Options``: an estimator with a setting of its
own is one module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from pardyn.errors import InputError
from pardyn.identification.least_squares import DEFAULT_RANK_EPS, Estimate, LinearSystem, wls
from pardyn.identification.metrics import relative_error_norm
from pardyn.registry import Registry, option, options_from, shared_options

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
    "estimator_options",
    "iterate",
    "options_of_estimators",
    "register",
]



@dataclass(frozen=True)
class SimulatedSystem(LinearSystem):
    """The system evaluated on the model's closed-loop run, with the run's actuated positions.

    Attributes:
        positions: the simulated actuated-joint positions at the data's sample times (N, n_a) (rad, m),
            the runs one after the other, as :attr:`EstimatorContext.positions`; ``None`` where the
            simulation does not give them.
    """

    positions: np.ndarray | None = None


Simulation = Callable[[np.ndarray], LinearSystem]
"""``simulate(chi_base) -> LinearSystem``: the system evaluated on the model's closed-loop run with
``chi_base``: ``W`` = the instruments ``Z`` (same rows and columns as the data system), ``Y`` = the
simulated output ``Y_s``; a :class:`SimulatedSystem` also carries the simulated positions (the output
of the position output-error estimators)."""

DEFAULT_TOLERANCE = 1e-3
DEFAULT_MAX_ITERATIONS = 8
DEFAULT_ESTIMATOR = "wls"
"""The pipeline's estimator unless told otherwise: IDIM-WLS (eq. 48), the papers' method."""
STARTS = ("wls", "nominal", "physical")
"""Where a closed-loop estimator's iteration starts: the eq. (48) WLS estimate, the nominal parameters, or the
physically consistent WLS (the semidefinite program of :func:`pardyn.identification.physical.physical_estimate`
on the same weighted system: every body's pseudo-inertia positive definite, Wensing, Kim, Slotine 2017, so the
model's reduced mass matrix is). ``pardyn identify`` starts from the latter when the WLS estimate's model cannot
be simulated (:mod:`pardyn.identification.pipeline`)."""
OPTION_PREFIX = "estimator_"
"""An estimator option's parameter name is this prefix and its field (the settings' flat keyword)."""


@dataclass(frozen=True)
class NoOptions:
    """An estimator without settings of its own."""


@dataclass(frozen=True)
class IterationOptions:
    """The closed-loop estimators' iteration: where it starts and when it stops.

    Attributes:
        start: the first estimate: ``"wls"`` (eq. 48), ``"nominal"`` (the robot's parameters) or ``"physical"``
            (the physically consistent WLS, :data:`STARTS`).
        tolerance: stop when a step moves the model's torques by less than this fraction of their norm.
        iterations: simulations at most.
    """

    start: str = option(STARTS[0], "first estimate of the iteration", choices=STARTS)
    tolerance: float = option(DEFAULT_TOLERANCE, "stop when a step changes ||W chi|| by less than this fraction of "
                              "||Y||", low=1e-15, high=1.0)
    iterations: int = option(DEFAULT_MAX_ITERATIONS, "simulations at most", low=1, high=1000, flag="max-iterations")

    def __post_init__(self) -> None:
        if self.start not in STARTS:
            raise InputError(f"estimator_start must be one of {list(STARTS)}, got {self.start!r}")
        if not (self.tolerance > 0.0 and self.iterations >= 1):
            raise InputError(f"tolerance must be > 0 and max_iterations >= 1, got {self.tolerance}, {self.iterations}")


@dataclass(frozen=True)
class EstimatorResult:
    """An estimate and how it was reached.

    Attributes:
        estimate: the parameters (``method`` = the estimator's name), their std and %sigma, the fit.
        estimator: the registered name (``"wls"``, ``"ols"``, ``"iv"``, ``"didim"``...).
        iterations: simulations run (0 for the one-shot least squares).
        converged: the last step was below the tolerance (True for the one-shot least squares).
        changes: ``||W (chi_k - chi_{k-1})|| / ||Y||`` of each iteration (weighted).
        output_errors: DIDIM: ``||Y - Y_s(chi_k)|| / ||Y||`` at each simulated estimate; IV: the
            measured fit ``||Y - W chi_k|| / ||Y||``.
        start: where the iteration started (``"wls"``, ``"nominal"`` or ``"physical"``).
        physical: the physically consistent estimators: the standard parameters behind ``estimate``
            (:class:`pardyn.identification.physical.PhysicalEstimate`, every pseudo-inertia positive
            definite, ``K phi = chi``); None for the others.
    """

    estimate: Estimate
    estimator: str
    iterations: int = 0
    converged: bool = True
    changes: tuple[float, ...] = ()
    output_errors: tuple[float, ...] = ()
    start: str = "wls"
    physical: Any = None

    @classmethod
    def of_iteration(cls, estimate: Estimate, estimator: str, changes: list[float], figures: list[float],
                     options: IterationOptions) -> EstimatorResult:
        """The result of a closed-loop iteration (:func:`iterate`): converged if its last step was below the
        tolerance."""
        return cls(estimate, estimator, len(changes), changes[-1] < options.tolerance, tuple(changes),
                   tuple(figures), options.start)

    def as_dict(self) -> dict:
        return {
            "name": self.estimator,
            "iterations": self.iterations,
            "converged": self.converged,
            "start": self.start,
            "changes": list(self.changes),
            "output_errors": list(self.output_errors),
        }


@dataclass(frozen=True)
class EstimatorContext:
    """What an estimator may use beside the system and its options: the data and what was computed before.

    Attributes:
        weighted: the eq. (48) WLS estimate of the system (its block weights ``1 / sigma_j`` are every
            estimator's; the closed-loop ones start from it); ``None``: computed on demand.
        simulate: closed-loop estimators: the model's simulation (:data:`Simulation`).
        start: the first estimate of an iteration (n_b,) (what :attr:`IterationOptions.start` names);
            ``None``: ``weighted``'s.
        block_sigmas: block weights' inverses (blocks,); ``None``: ``weighted``'s.
        rank_eps: QR rank threshold of eq. (42), relative to the largest |R_jj|.
        progress: called with one line per iteration.
        positions: the measured actuated-joint positions at the data's sample times (N, n_a) (rad, m),
            the runs one after the other: the output the position output-error estimators (``cloe``,
            ``ml``) fit; ``None`` where the data gives none.
        base: the base parameters of the system (its regrouping ``K`` and standard names): the
            physically consistent estimators (``pc_ekf``, ``pc_ukf``) project onto the standard
            parameters; ``None`` where the caller has none.
        layout: the standard-parameter layout with the nominal (CAD) values (``robot.nominal_parameters``),
            the same estimators' bodies and prior.
        simulate_positions: ``simulate_positions(chi) -> (N, n_a)``: the simulated actuated positions alone
            (no observation matrix, no accelerations: cheaper); the position output-error estimators use it
            when given, else ``simulate(chi).positions``.
        simulate_linearised: ``simulate_linearised(chi) -> (positions (N, n_a), sensitivity)``: the same positions
            and ``sensitivity() -> (N, n_a, n_b)``, their derivatives with respect to the base parameters from the
            same run's linearised closed loop (the ``"linearised"`` sensitivity of the position output-error
            estimators; ``None``: they take the secant one).
    """

    weighted: Estimate | None = None
    simulate: Simulation | None = None
    start: np.ndarray | None = None
    block_sigmas: np.ndarray | None = None
    rank_eps: float = DEFAULT_RANK_EPS
    progress: Callable[[str], None] | None = None
    positions: np.ndarray | None = None
    base: Any = None
    layout: Any = None
    simulate_positions: Callable[[np.ndarray], np.ndarray] | None = None
    simulate_linearised: Callable[[np.ndarray], tuple[np.ndarray, Callable[[], np.ndarray]]] | None = None

    def reference(self, system: LinearSystem) -> Estimate:
        """``weighted``, or the eq. (48) WLS of ``system`` when none was given."""
        if self.weighted is not None:
            return self.weighted
        return wls(system.W, system.Y, block_sizes=system.block_sizes, names=system.names, rank_eps=self.rank_eps)


class Estimator(Protocol):
    """An estimator of the base parameters (module docstring)."""

    name: str
    summary: str
    closed_loop: bool
    Options: type

    def build(self, system: LinearSystem, options: Any, context: EstimatorContext) -> EstimatorResult:
        """The base parameters of ``system`` (base columns, blocks as eq. 48) with its ``options``."""


ESTIMATORS: Registry[Estimator] = Registry("estimator")
"""The estimators by name (``pardyn identify --estimator``), the papers' first."""


def register(cls: type) -> type:
    """Class decorator: register the estimator ``cls`` under ``cls.name`` (``Options``: its, else
    :class:`IterationOptions` for a closed-loop one, :class:`NoOptions` for another)."""
    if not hasattr(cls, "Options"):
        cls.Options = IterationOptions if cls.closed_loop else NoOptions
    return ESTIMATORS.plugin(cls)


def estimator_options(name: str, options: Any = None) -> Any:
    """The ``Options`` of the estimator ``name``: ``options`` itself, or from values by parameter name
    (``estimator_<field>``; others ignored, absent ones default), or the defaults for None."""
    kind = ESTIMATORS.get(name).Options
    if options is None or isinstance(options, Mapping):
        return options_from(kind, options or {}, OPTION_PREFIX)
    if not isinstance(options, kind):
        raise InputError(f"estimator {name}: options must be a {kind.__name__}, got {type(options).__name__}")
    return options


def options_of_estimators() -> list:
    """Every registered estimator's options, each parameter once with the estimators using it
    (:func:`pardyn.registry.shared_options`): the CLI's flags, the settings' keywords."""
    return shared_options((name, ESTIMATORS.get(name).Options, OPTION_PREFIX) for name in ESTIMATORS)


def row_weights(system: LinearSystem, block_sigmas: np.ndarray | None) -> np.ndarray:
    """``1 / sigma_j`` repeated over block ``j``'s rows (r,); ones without ``block_sigmas``."""
    if block_sigmas is None:
        return np.ones(system.rows)
    return np.repeat(1.0 / np.asarray(block_sigmas, dtype=float), system.block_sizes)


def change(system: LinearSystem, weights: np.ndarray, delta: np.ndarray) -> float:
    """``||W delta|| / ||Y||`` (weighted): how much a step moves the model's torques."""
    return float(np.linalg.norm((system.W @ delta) * weights) / max(np.linalg.norm(system.Y * weights), 1e-300))


def iterate(name: str, system: LinearSystem, context: EstimatorContext, options: IterationOptions,
            step: Callable[[np.ndarray], tuple[np.ndarray, float, str]]) -> tuple[np.ndarray, list[float], list[float]]:
    """The closed-loop estimators' iteration from ``context.start``: ``step(chi) -> (next chi, figure, what to
    say)`` until the step moves the model's torques by less than the tolerance (:func:`change`) or
    ``options.iterations`` steps; one progress line per step. An estimate whose model cannot be simulated in
    closed loop (:class:`~pardyn.identification.model_simulation.ModelSimulationError`) after the first step ends
    the iteration at the last estimate, not converged (one progress line). Returns the last chi, the changes, the
    figures."""
    from pardyn.identification.model_simulation import ModelSimulationError  # noqa: PLC0415 - no cycle at import

    weights = row_weights(system, context.block_sigmas)
    chi, changes, figures = np.asarray(context.start, dtype=float), [], []
    for k in range(1, options.iterations + 1):
        try:
            new, figure, said = step(chi)
        except ModelSimulationError as error:
            if k == 1:
                raise
            if context.progress:  # the last estimate stands, not converged (its step was above the tolerance)
                context.progress(f"{name} iteration {k}: stopped, {error}")
            break
        changes.append(change(system, weights, new - chi))
        figures.append(figure)
        chi = new
        if context.progress:
            context.progress(f"{name} iteration {k}: {said}, change {changes[-1]:.3g}")
        if changes[-1] < options.tolerance:
            break
    return chi, changes, figures


def finish(system: LinearSystem, chi: np.ndarray, covariance: np.ndarray, sigma: float, method: str,
           block_sigmas: np.ndarray | None, condition: float) -> Estimate:
    """An :class:`Estimate` of ``chi`` with its covariance, the fit figures on the measured system."""
    prediction = system.W @ chi
    std = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = 100.0 * std / np.abs(chi)
    blocks = np.array([relative_error_norm(system.Y[s], prediction[s]) if np.any(system.Y[s]) else np.nan
                       for s in system.block_slices()])
    return Estimate(
        method=method, names=system.parameter_names, chi=chi, std=std, relative_std=relative,
        covariance=covariance, sigma_rho=sigma, rows=system.rows, condition_number=condition,
        relative_error=relative_error_norm(system.Y, prediction), block_relative_errors=blocks,
        block_sigmas=block_sigmas, prediction=prediction,
    )
