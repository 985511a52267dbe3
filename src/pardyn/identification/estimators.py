"""Estimators of the base parameters by name: ``wls`` (IDIM-WLS), ``iv`` (IDIM-IV), ``didim`` (DIDIM).

All three solve the filtered, decimated identification system of the pipeline

    Y = W(q_m, qdot_m, qddot_m) chi + rho                   # (r,) = (r, n_b) (n_b,), eqs. (40)-(41)

with its equation blocks weighted by ``1 / sigma_j`` (eq. 48, ``sigma_j`` from
the WLS of the blocks, kept fixed through the iterations). They differ in how
they treat the measured states ``q_m`` and their derivatives, which carry the
noise and the lag of the derivative filter into ``W``:

``wls``  (Briot et al. 2015 eq. 48)
    ``chi = W^+ Y`` (weighted): biased when ``W`` is noisy or the band-pass
    filter is mistuned (the noise in ``W`` is correlated with ``rho``).
``iv``   (Janot, Vandanjon, Gautier 2014, IEEE TCST 22(1), IDIM-IV)
    instruments ``Z = W(q_s, qdot_s, qddot_s)`` from the closed-loop simulation
    of the model with the previous estimate, driven by the recorded reference
    through the robot's own controller (:mod:`pardyn.identification.simulation`):
    noise-free and correlated with ``W``. Iterated from the WLS estimate,

        chi_k = (Z_k^T W)^-1 Z_k^T Y,                       Z_k = W(sim(chi_{k-1}))

    until the parameters settle. Covariance (the IV "sandwich")
    ``C = sigma^2 (Z^T W)^-1 Z^T Z (W^T Z)^-1``, ``sigma^2 = ||Y - W chi||^2 / (r - n_b)``.
``didim`` (Gautier, Janot, Vandanjon 2013, IEEE TCST 21(2))
    closed-loop output error on the torques: minimise ``||Y - Y_s(chi)||`` with
    ``Y_s`` the simulated torque output (the controller's command in the
    simulation, through the same projection, filter and decimation), by
    Gauss-Newton with DIDIM's Jacobian ``dY_s / dchi ~ Z = W(sim(chi))``:

        chi_{k+1} = chi_k + (Z_k^T Z_k)^-1 Z_k^T (Y - Y_s(chi_k))

    initialised from the WLS estimate (``start="wls"``) or the nominal
    parameters (``start="nominal"``). Covariance ``sigma^2 (Z^T Z)^-1`` with
    ``sigma`` from the output error.

Both iterations stop when the step moves the model's torques by less than
``tolerance`` of their norm, ``||W (chi_k - chi_{k-1})|| / ||Y|| < tolerance``
(weighted; 1e-3 by default), or after ``max_iterations`` (then ``converged``
is False and the result says so). The fit figures of every result
(``relative_error``, per block) are those of the measured system ``Y - W chi``,
comparable across estimators.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from pardyn.errors import InputError
from pardyn.identification.estimation import Estimate, LinearSystem, wls
from pardyn.identification.metrics import relative_error_norm

__all__ = ["ESTIMATORS", "EstimatorResult", "Simulation", "estimate", "instrumental_variables"]

Simulation = Callable[[np.ndarray], LinearSystem]
"""``simulate(chi_base) -> LinearSystem``: the system evaluated on the model's closed-loop run with
``chi_base``: ``W`` = the instruments ``Z`` (same rows and columns as the data system), ``Y`` = the
simulated output ``Y_s``."""

DEFAULT_TOLERANCE = 1e-3
DEFAULT_MAX_ITERATIONS = 8


@dataclass(frozen=True)
class EstimatorResult:
    """An estimate and how it was reached.

    Attributes:
        estimate: the parameters (``method`` = the estimator's name), their std and %sigma, the fit.
        estimator: ``"wls"``, ``"iv"`` or ``"didim"``.
        iterations: simulations run (0 for WLS).
        converged: the last step was below the tolerance (True for WLS).
        changes: ``||W (chi_k - chi_{k-1})|| / ||Y||`` of each iteration (weighted).
        output_errors: DIDIM: ``||Y - Y_s(chi_k)|| / ||Y||`` at each simulated estimate; IV: the
            measured fit ``||Y - W chi_k|| / ||Y||``.
        start: where the iteration started (``"wls"`` or ``"nominal"``).
    """

    estimate: Estimate
    estimator: str
    iterations: int = 0
    converged: bool = True
    changes: tuple[float, ...] = ()
    output_errors: tuple[float, ...] = ()
    start: str = "wls"

    def as_dict(self) -> dict:
        return {
            "name": self.estimator,
            "iterations": self.iterations,
            "converged": self.converged,
            "start": self.start,
            "changes": list(self.changes),
            "output_errors": list(self.output_errors),
        }


def _row_weights(system: LinearSystem, block_sigmas: np.ndarray | None) -> np.ndarray:
    if block_sigmas is None:
        return np.ones(system.rows)
    return np.repeat(1.0 / np.asarray(block_sigmas, dtype=float), system.block_sizes)


def _finish(system: LinearSystem, chi: np.ndarray, covariance: np.ndarray, sigma: float, method: str,
            block_sigmas: np.ndarray | None, condition: float) -> Estimate:
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
    weights = _row_weights(system, block_sigmas)
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
    return _finish(system, chi, covariance, float(np.sqrt(sigma2)), "iv", block_sigmas, float(np.linalg.cond(w)))


def _output_error_step(system: LinearSystem, simulated: LinearSystem, chi: np.ndarray,
                       block_sigmas: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, float]:
    """DIDIM's Gauss-Newton step: new chi, covariance ``sigma^2 (Z^T Z)^-1``, sigma."""
    weights = _row_weights(system, block_sigmas)
    z = simulated.W * weights[:, None]
    residual = (system.Y - simulated.Y) * weights
    step, _, rank, _ = linalg.lstsq(z, residual, check_finite=True)
    if rank < z.shape[1]:
        raise InputError(f"the simulated observation matrix has rank {rank} < {z.shape[1]}: the simulated run "
                         "does not excite every base parameter")
    new = chi + step
    sigma2 = float(np.sum((residual - z @ step) ** 2)) / (z.shape[0] - z.shape[1])
    r = linalg.qr(z, mode="r")[0][: z.shape[1]]
    r_inv = linalg.solve_triangular(r, np.eye(z.shape[1]))
    return new, sigma2 * (r_inv @ r_inv.T), float(np.sqrt(sigma2))


def _change(system: LinearSystem, weights: np.ndarray, delta: np.ndarray) -> float:
    return float(np.linalg.norm((system.W @ delta) * weights) / max(np.linalg.norm(system.Y * weights), 1e-300))


def _wls(system: LinearSystem, **_: object) -> EstimatorResult:
    return EstimatorResult(wls(system.W, system.Y, block_sizes=system.block_sizes, names=system.names), "wls")


def _iv(system: LinearSystem, *, simulate: Simulation, start: np.ndarray, block_sigmas: np.ndarray | None,
        tolerance: float, max_iterations: int, start_name: str, progress: Callable[[str], None] | None) -> EstimatorResult:
    weights = _row_weights(system, block_sigmas)
    chi, changes, fits = np.asarray(start, dtype=float), [], []
    result = None
    for k in range(1, max_iterations + 1):
        result = instrumental_variables(system, simulate(chi).W, block_sigmas=block_sigmas)
        changes.append(_change(system, weights, result.chi - chi))
        fits.append(result.relative_error)
        chi = result.chi
        if progress:
            progress(f"iv iteration {k}: change {changes[-1]:.3g}, fit error {100 * fits[-1]:.3g} %")
        if changes[-1] < tolerance:
            break
    return EstimatorResult(result, "iv", len(changes), changes[-1] < tolerance, tuple(changes), tuple(fits),
                           start_name)


def _didim(system: LinearSystem, *, simulate: Simulation, start: np.ndarray, block_sigmas: np.ndarray | None,
           tolerance: float, max_iterations: int, start_name: str,
           progress: Callable[[str], None] | None) -> EstimatorResult:
    weights = _row_weights(system, block_sigmas)
    chi, changes, errors = np.asarray(start, dtype=float), [], []
    y_norm = max(float(np.linalg.norm(system.Y * weights)), 1e-300)
    for k in range(1, max_iterations + 1):
        simulated = simulate(chi)
        errors.append(float(np.linalg.norm((system.Y - simulated.Y) * weights)) / y_norm)
        new, covariance, sigma = _output_error_step(system, simulated, chi, block_sigmas)
        changes.append(_change(system, weights, new - chi))
        chi = new
        if progress:
            progress(f"didim iteration {k}: output error {100 * errors[-1]:.3g} %, change {changes[-1]:.3g}")
        if changes[-1] < tolerance:
            break
    condition = float(np.linalg.cond(simulated.W * weights[:, None]))
    estimate = _finish(system, chi, covariance, sigma, "didim", block_sigmas, condition)
    return EstimatorResult(estimate, "didim", len(changes), changes[-1] < tolerance, tuple(changes), tuple(errors),
                           start_name)


ESTIMATORS: dict[str, Callable[..., EstimatorResult]] = {"wls": _wls, "iv": _iv, "didim": _didim}
"""The estimators by name (``pardyn identify --estimator``)."""


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
) -> EstimatorResult:
    """The base parameters of ``system`` by the estimator ``name`` (module docstring).

    Args:
        system: the data system (base columns), blocks as eq. (48).
        simulate: ``iv`` and ``didim``: the closed-loop simulation of the model (:data:`Simulation`).
        start: the first estimate of the iteration (n_b,); default the WLS estimate.
        start_name: what ``start`` is, for the report.
        block_sigmas: block weights' inverses; default the WLS's.
        tolerance, max_iterations: the stopping rule.
        progress: called with one line per iteration.
    """
    if name not in ESTIMATORS:
        raise InputError(f"unknown estimator {name!r}, expected one of {list(ESTIMATORS)}")
    if name == "wls":
        return _wls(system)
    if simulate is None:
        raise InputError(f"the {name} estimator needs the closed-loop simulation of the model (controller and reference)")
    if not (tolerance > 0.0 and max_iterations >= 1):
        raise InputError(f"tolerance must be > 0 and max_iterations >= 1, got {tolerance}, {max_iterations}")
    if start is None or block_sigmas is None:
        reference = wls(system.W, system.Y, block_sizes=system.block_sizes, names=system.names)
        start = reference.chi if start is None else start
        block_sigmas = reference.block_sigmas if block_sigmas is None else block_sigmas
    return ESTIMATORS[name](system, simulate=simulate, start=start, block_sigmas=block_sigmas, tolerance=tolerance,
                            max_iterations=max_iterations, start_name=start_name, progress=progress)
