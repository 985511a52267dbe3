"""Least-squares estimation of dynamic parameters: OLS, WLS, essential parameters.

Briot, Krut, Gautier 2015, Sect. 4.2-4.3 and 5.3, for the sampled and filtered
identification model (eqs. 40-41)

    Y = W chi + rho                                        # (r,) = (r, n_b) (n_b,)

* OLS, eq. (44): ``chi_hat = W^+ Y`` computed by QR (never the normal equations).
* eq. (46): ``sigma_rho^2 = ||Y - W chi_hat||^2 / (r - n_b)``.
* eq. (47): ``C = sigma_rho^2 (W^T W)^-1``, ``sigma_i^2 = C_ii``; the relative
  standard deviation ``%sigma_i = 100 sigma_i / |chi_i|`` (Sect. 5.3, Table 2).
* WLS, eq. (48): the equations are grouped in blocks ``Y^j = W^j chi + rho^j``
  (one per joint/equation row, see :mod:`pardyn.identification.filtering`);
  each block is weighted by ``1 / sigma_j``, ``sigma_j`` being the standard
  deviation of the error of an OLS on that block alone; the weighted system is
  solved by OLS and eqs. (46)-(47) are applied to it (``sigma_rho ~ 1``).
* Essential parameters (Sect. 5.3): the parameter with the largest ``%sigma``
  is removed and the (WLS) estimation repeated until
  ``max %sigma / min %sigma < r_sigma`` (10 in the paper) -- or until the next
  removal would let the fit error grow beyond ``(1 + fit_tolerance)`` times the
  base model's (pardyn's stopping rule: on low-noise data the ratio alone strips
  the model bare).
* Payload, eq. (49): unloaded and loaded trajectories stacked as
  ``[[W_a, 0], [W_b, W_l]]`` (:func:`payload_system`).

Implementation: each block is reduced once to the triangular factor ``R_j``
of ``[W^j  Y^j]`` (Householder QR). Since ``||[W^j Y^j] v|| = ||R_j v||`` for
every ``v``, all later least-squares problems (any column subset, any block
weights) are solved exactly on these small factors: the essential-parameter
loop never touches the data again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import linalg

from pardyn.errors import InputError
from pardyn.identification.metrics import relative_error_norm

__all__ = [
    "LinearSystem",
    "Estimate",
    "Removal",
    "EssentialParameters",
    "ols",
    "wls",
    "essential_parameters",
    "condition_number",
    "stack_systems",
    "payload_system",
    "triangular_factor",
    "block_sigmas",
    "RankDeficientError",
]

DEFAULT_RANK_EPS = 1e-10
"""Relative threshold on ``|R_kk|`` below which W is declared rank deficient (eq. 42 test)."""

EXACT_FIT = 1e-10
"""A block whose error deviation is below ``EXACT_FIT`` x its RMS input is fitted exactly (no noise)."""

DEFAULT_RATIO = 10.0
"""``r_sigma`` of the essential-parameter loop (Briot et al. Sect. 5.3)."""

DEFAULT_FIT_TOLERANCE = 0.05
"""The essential model's relative error norm may exceed the base model's by at most 5 % of it."""


class RankDeficientError(InputError):
    """The solved columns are dependent: ``column`` (its name) at ``ratio = |R_kk| / max |R_jj|``.

    Raised by the estimators when they are given dependent columns: the rank is decided once, by
    :func:`pardyn.identification.base_parameters.base_parameters` on the matrix that is solved, before.
    """

    def __init__(self, message: str, *, column: str, ratio: float) -> None:
        super().__init__(message)
        self.column = column
        self.ratio = ratio


# --------------------------------------------------------------------------------------
# The linear system
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LinearSystem:
    """``Y = W chi + rho`` (eqs. 39-41), equations stored block after block (eq. 48).

    Attributes:
        W: observation matrix (r, p).
        Y: measured inputs (r,).
        block_sizes: number of equations of each block (one block per joint /
            equation row, and per trajectory when systems are stacked); sums to r.
        names: parameter (column) names (p,), or ``None``.
    """

    W: np.ndarray
    Y: np.ndarray
    block_sizes: tuple[int, ...] = ()
    names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        w = np.asarray(self.W, dtype=float)
        y = np.asarray(self.Y, dtype=float)
        if w.ndim != 2 or y.ndim != 1 or w.shape[0] != y.shape[0]:
            raise InputError(f"expected W (r, p) and Y (r,), got W {w.shape} and Y {y.shape}")
        sizes = tuple(int(s) for s in self.block_sizes) or (y.shape[0],)
        if sum(sizes) != y.shape[0] or min(sizes) < 1:
            raise InputError(f"block sizes {sizes} do not split the {y.shape[0]} equations")
        names = None if self.names is None else tuple(str(n) for n in self.names)
        if names is not None and len(names) != w.shape[1]:
            raise InputError(f"{len(names)} parameter names for {w.shape[1]} columns of W")
        object.__setattr__(self, "W", w)
        object.__setattr__(self, "Y", y)
        object.__setattr__(self, "block_sizes", sizes)
        object.__setattr__(self, "names", names)

    @property
    def rows(self) -> int:
        """Number of equations r."""
        return int(self.Y.shape[0])

    @property
    def n_parameters(self) -> int:
        """Number of columns p."""
        return int(self.W.shape[1])

    @property
    def parameter_names(self) -> tuple[str, ...]:
        """``names``, or ``p0, p1, ...`` when unnamed."""
        return self.names if self.names is not None else _default_names(self.n_parameters)

    def block_slices(self) -> list[slice]:
        """Row slice of each block."""
        edges = np.concatenate([[0], np.cumsum(self.block_sizes)])
        return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]

    def select(self, columns: Sequence[int], *, names: Sequence[str] | None = None) -> LinearSystem:
        """The system restricted to ``columns`` (e.g. base parameters), renamed if ``names``."""
        columns = np.asarray(columns, dtype=int)
        if names is None:
            names = [self.parameter_names[c] for c in columns] if self.names is not None else None
        return LinearSystem(self.W[:, columns], self.Y, self.block_sizes, names)


def _default_names(count: int) -> tuple[str, ...]:
    return tuple(f"p{k}" for k in range(count))


def stack_systems(*systems: LinearSystem) -> LinearSystem:
    """Several trajectories' systems stacked row-wise (same columns); blocks are concatenated."""
    if not systems:
        raise InputError("no system to stack")
    names = systems[0].names
    for k, s in enumerate(systems[1:], start=1):
        if s.n_parameters != systems[0].n_parameters or (names is not None and s.names not in (None, names)):
            raise InputError(f"system {k} has other parameters than system 0: {s.names} vs {names}")
    return LinearSystem(
        np.vstack([s.W for s in systems]),
        np.concatenate([s.Y for s in systems]),
        tuple(b for s in systems for b in s.block_sizes),
        names,
    )


def payload_system(
    unloaded: LinearSystem, loaded: LinearSystem, *, payload: Sequence[str | int]
) -> LinearSystem:
    """Eq. (49): trajectories without and with payload in one system.

    ``loaded`` has every column (robot and payload, e.g. ``m_payload``);
    ``payload`` lists the payload columns by name or index in ``loaded``.
    ``unloaded`` either has the same columns (its payload columns are replaced
    by zeros: no payload on these trajectories) or only the robot columns (zero
    columns are inserted). The result, in ``loaded``'s column order, is eq. (49)
    up to a column permutation:

        [Y_a]   [W_a  0  ] [chi  ]
        [Y_b] = [W_b  W_l] [chi_l]

    so that the payload parameters are not regrouped with the platform's.
    """
    names = loaded.parameter_names
    columns = []
    for item in payload:
        if isinstance(item, (int, np.integer)):
            if not 0 <= int(item) < loaded.n_parameters:
                raise InputError(f"payload column {item} outside the {loaded.n_parameters} columns")
            columns.append(int(item))
        elif item in names:
            columns.append(names.index(item))
        else:
            raise InputError(f"payload parameter {item!r} is not a column of the loaded system")
    payload_mask = np.zeros(loaded.n_parameters, dtype=bool)
    payload_mask[columns] = True
    if unloaded.n_parameters == loaded.n_parameters:
        w_a = unloaded.W.copy()
        if unloaded.names is not None and loaded.names is not None and unloaded.names != loaded.names:
            raise InputError("unloaded and loaded systems have different parameter names")
    elif unloaded.n_parameters == loaded.n_parameters - payload_mask.sum():
        robot = [names[k] for k in np.flatnonzero(~payload_mask)]
        if unloaded.names is not None and loaded.names is not None and list(unloaded.names) != robot:
            raise InputError(f"unloaded columns {unloaded.names} are not the loaded robot columns {robot}")
        w_a = np.zeros((unloaded.rows, loaded.n_parameters))
        w_a[:, ~payload_mask] = unloaded.W
    else:
        raise InputError(
            f"unloaded system has {unloaded.n_parameters} columns, loaded {loaded.n_parameters} "
            f"with {payload_mask.sum()} payload columns"
        )
    w_a[:, payload_mask] = 0.0
    return LinearSystem(
        np.vstack([w_a, loaded.W]),
        np.concatenate([unloaded.Y, loaded.Y]),
        unloaded.block_sizes + loaded.block_sizes,
        loaded.names,
    )


# --------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """One least-squares estimation (eqs. 44-48).

    Attributes:
        method: ``"ols"`` or ``"wls"``.
        names: parameter names (n,).
        chi: estimated parameters (n,), SI units.
        std: standard deviations ``sigma_i`` (n,), eq. (47).
        relative_std: ``%sigma_i = 100 sigma_i / |chi_i|`` (n,), percent (``inf`` if ``chi_i = 0``).
        covariance: ``C = sigma_rho^2 (W^T W)^-1`` (n, n), eq. (47); of the
            weighted system for WLS.
        sigma_rho: eq. (46), of the weighted system for WLS (then ~1).
        rows: number of equations r.
        condition_number: 2-norm condition number of the (unweighted) W.
        relative_error: ``||Y - W chi|| / ||Y||`` over all equations.
        block_relative_errors: the same per block (blocks,), ``nan`` for a block of zero inputs.
        block_sigmas: WLS only: the ``sigma_j`` of eq. (48) (block weights ``1/sigma_j``), else ``None``.
        prediction: ``W chi`` (r,).
    """

    method: str
    names: tuple[str, ...]
    chi: np.ndarray
    std: np.ndarray
    relative_std: np.ndarray
    covariance: np.ndarray
    sigma_rho: float
    rows: int
    condition_number: float
    relative_error: float
    block_relative_errors: np.ndarray
    block_sigmas: np.ndarray | None = None
    prediction: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)

    def table(self) -> str:
        """Human-readable parameter table (name, value, sigma, %sigma)."""
        width = max([len(n) for n in self.names] + [9])
        lines = [f"{'parameter':<{width}}  {'value':>13}  {'sigma':>11}  {'%sigma':>8}"]
        for name, value, std, rel in zip(self.names, self.chi, self.std, self.relative_std):
            lines.append(f"{name:<{width}}  {value:>13.6g}  {std:>11.4g}  {rel:>8.3g}")
        lines.append(
            f"{self.method.upper()}: {self.rows} equations, cond(W) = {self.condition_number:.4g}, "
            f"sigma_rho = {self.sigma_rho:.4g}, relative error = {100 * self.relative_error:.3g} %"
        )
        return "\n".join(lines)

    def as_dict(self) -> dict:
        """JSON-ready values (no prediction)."""
        return {
            "method": self.method,
            "parameters": {
                n: {"value": float(v), "std": float(s), "relative_std_percent": float(r)}
                for n, v, s, r in zip(self.names, self.chi, self.std, self.relative_std)
            },
            "sigma_rho": self.sigma_rho,
            "rows": self.rows,
            "condition_number": self.condition_number,
            "relative_error": self.relative_error,
            "block_relative_errors": self.block_relative_errors.tolist(),
            "block_sigmas": None if self.block_sigmas is None else self.block_sigmas.tolist(),
        }


@dataclass(frozen=True)
class Removal:
    """One step of the essential-parameter loop: the parameter removed and why."""

    index: int  # column in the system given to essential_parameters
    name: str
    relative_std: float  # its %sigma when removed
    ratio: float  # max %sigma / min %sigma before the removal


@dataclass(frozen=True)
class EssentialParameters:
    """Result of :func:`essential_parameters`.

    Attributes:
        estimate: estimation of the essential parameters only.
        kept: their column indices in the input system (ascending).
        removed: removal steps, in order.
        ratio: final ``max %sigma / min %sigma`` (< ``r_sigma`` when ``stopped_by == "ratio"``).
        stopped_by: ``"ratio"`` (the paper's test met), ``"fit"`` (the next removal would
            have left the fit tolerance) or ``"min_parameters"``.
        fit_tolerance: the tolerance used (relative growth of the fit error allowed).
    """

    estimate: Estimate
    kept: np.ndarray
    removed: tuple[Removal, ...]
    ratio: float
    stopped_by: str = "ratio"
    fit_tolerance: float = DEFAULT_FIT_TOLERANCE


# --------------------------------------------------------------------------------------
# Core: triangular factors of [W Y] per block
# --------------------------------------------------------------------------------------


def _checked(W: np.ndarray, Y: np.ndarray, block_sizes, names) -> LinearSystem:
    return LinearSystem(W, Y, tuple(block_sizes) if block_sizes is not None else (), names)


QR_CHUNK = 4096
"""Rows per Householder QR in :func:`triangular_factor` (cache-friendly tall-skinny QR)."""


def triangular_factor(w: np.ndarray, y: np.ndarray | None = None, *, chunk: int = QR_CHUNK) -> np.ndarray:
    """Upper-triangular factor ``R`` of ``A = w`` or ``A = [w y]``: ``||A v|| = ||R v||`` for all ``v``.

    Shape (min(rows, cols), cols). Tall-skinny QR: Householder QR (LAPACK,
    no pivoting, so the diagonal keeps the meaning of eq. 42) of chunks of
    ``chunk`` rows, then of the stacked chunk factors; about twice as fast as
    one QR of a 100 000-row matrix and without a copy of the whole matrix.
    """
    w = np.asarray(w, dtype=float)
    cols = w.shape[1] + (y is not None)
    factors = []
    for start in range(0, w.shape[0], chunk):
        part = np.empty((min(chunk, w.shape[0] - start), cols))
        part[:, : w.shape[1]] = w[start : start + chunk]
        if y is not None:
            part[:, -1] = y[start : start + chunk]
        factors.append(linalg.qr(part, mode="r", overwrite_a=True, check_finite=False)[0][: min(part.shape)])
    if len(factors) == 1:
        return factors[0]
    stacked = np.vstack(factors)
    return linalg.qr(stacked, mode="r", overwrite_a=True, check_finite=False)[0][: min(stacked.shape)]


def _factors(system: LinearSystem) -> list[np.ndarray]:
    if not (np.all(np.isfinite(system.W)) and np.all(np.isfinite(system.Y))):
        raise InputError("W or Y contains NaN or infinity")
    return [triangular_factor(system.W[s], system.Y[s]) for s in system.block_slices()]


@dataclass
class _Fit:
    chi: np.ndarray
    covariance: np.ndarray
    sigma_rho: float
    cond: float
    block_sigmas: np.ndarray | None


def _solve_stacked(
    factors: Sequence[np.ndarray], weights: np.ndarray, keep: np.ndarray, rows: int, names, rank_eps: float
) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """OLS on the weighted stacked factors restricted to ``keep``: chi, covariance, sigma_rho, R11."""
    n = len(keep)
    cols = np.append(keep, factors[0].shape[1] - 1)
    stacked = np.vstack([w * f[:, cols] for w, f in zip(weights, factors)])
    r = linalg.qr(stacked, mode="r", check_finite=False)[0]
    if r.shape[0] < n + 1 or rows <= n:
        raise InputError(f"{rows} equations for {n} parameters: the system is not over-determined")
    r11, qty, residual = r[:n, :n], r[:n, n], abs(r[n, n])
    diag = np.abs(np.diag(r11))
    bad = np.flatnonzero(diag <= rank_eps * max(diag.max(), np.finfo(float).tiny))
    if bad.size:
        k = int(bad[0])
        ratio = diag[k] / max(diag.max(), np.finfo(float).tiny)
        raise RankDeficientError(
            f"W is rank deficient: column {keep[k]} ({names[keep[k]]}) depends on the previous columns "
            f"(|R_kk| / max = {ratio:.3g}); identify base parameters first (pardyn.identification.base_parameters)",
            column=str(names[keep[k]]), ratio=float(ratio),
        )
    chi = linalg.solve_triangular(r11, qty, check_finite=False)
    sigma2 = residual**2 / (rows - n)  # eq. (46)
    r_inv = linalg.solve_triangular(r11, np.eye(n), check_finite=False)
    covariance = sigma2 * (r_inv @ r_inv.T)  # eq. (47): sigma^2 (W^T W)^-1 = sigma^2 R^-1 R^-T
    return chi, covariance, float(np.sqrt(sigma2)), r11


def _block_sigmas(
    factors: Sequence[np.ndarray],
    sizes: Sequence[int],
    keep: np.ndarray,
    mode: str,
    chi_ols: np.ndarray | None,
    rank_eps: float,
) -> np.ndarray:
    """Standard deviation of each block's error, the WLS weights' inverse (eq. 48)."""
    n = len(keep)
    total = sum(sizes)
    sigmas = np.empty(len(factors))
    scale = np.empty(len(factors))
    for j, (f, rows) in enumerate(zip(factors, sizes)):
        a, b = f[:, keep], f[:, -1]
        if mode == "block":  # OLS on block j alone (rank-deficient blocks: minimum-norm solution)
            solution, _, rank, _ = linalg.lstsq(a, b, cond=rank_eps, check_finite=False)
            dof = rows - rank
        else:  # residual of the global OLS on block j, its share of the n parameters
            solution, dof = chi_ols, rows - n * rows / total
        if dof <= 0:
            raise InputError(f"block {j} has {rows} equations: too few to estimate its error deviation")
        sigmas[j] = np.linalg.norm(a @ solution - b) / np.sqrt(dof)
        # round-off level: the block is fitted exactly (noise-free data)
        scale[j] = np.linalg.norm(b) / np.sqrt(rows)
    zero = sigmas <= EXACT_FIT * scale
    if zero.all():
        return np.ones_like(sigmas)  # noise-free data: WLS reduces to OLS
    if zero.any():
        raise InputError(
            f"blocks {np.flatnonzero(zero).tolist()} fit exactly (error deviation at round-off level) "
            "while others do not: the WLS weights are undefined, use OLS"
        )
    return sigmas


def _fit(
    factors: Sequence[np.ndarray],
    sizes: Sequence[int],
    keep: np.ndarray,
    names: Sequence[str],
    *,
    method: str,
    block_sigma: str,
    rank_eps: float,
) -> _Fit:
    rows = sum(sizes)
    ones = np.ones(len(factors))
    if method == "wls" and block_sigma == "block":
        # the weights need no global solution: W is solved once, weighted (its rank tested there only)
        unweighted = linalg.qr(np.vstack([f[:, keep] for f in factors]), mode="r", check_finite=False)[0]
        cond = float(np.linalg.cond(unweighted[: len(keep)]))
        sigmas = _block_sigmas(factors, sizes, keep, block_sigma, None, rank_eps)
        chi, covariance, sigma_rho, _ = _solve_stacked(factors, 1.0 / sigmas, keep, rows, names, rank_eps)
        return _Fit(chi, covariance, sigma_rho, cond, sigmas)
    chi, covariance, sigma_rho, r11 = _solve_stacked(factors, ones, keep, rows, names, rank_eps)
    cond = float(np.linalg.cond(r11))
    if method == "ols":
        return _Fit(chi, covariance, sigma_rho, cond, None)
    sigmas = _block_sigmas(factors, sizes, keep, block_sigma, chi, rank_eps)
    chi, covariance, sigma_rho, _ = _solve_stacked(factors, 1.0 / sigmas, keep, rows, names, rank_eps)
    return _Fit(chi, covariance, sigma_rho, cond, sigmas)


def _relative_std(chi: np.ndarray, std: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = 100.0 * std / np.abs(chi)
    rel[(std == 0.0) & (chi == 0.0)] = 0.0
    return rel


def _estimate(system: LinearSystem, keep: np.ndarray, fit: _Fit, method: str) -> Estimate:
    names = system.parameter_names
    full = np.zeros(system.n_parameters)
    full[keep] = fit.chi
    prediction = system.W @ full  # no copy of W's kept columns
    std = np.sqrt(np.diag(fit.covariance))
    blocks = np.array([
        relative_error_norm(system.Y[s], prediction[s]) if np.any(system.Y[s]) else np.nan
        for s in system.block_slices()
    ])  # nan for a block whose measured inputs are all zero
    return Estimate(
        method=method,
        names=tuple(names[k] for k in keep),
        chi=fit.chi,
        std=std,
        relative_std=_relative_std(fit.chi, std),
        covariance=fit.covariance,
        sigma_rho=fit.sigma_rho,
        rows=system.rows,
        condition_number=fit.cond,
        relative_error=relative_error_norm(system.Y, prediction),
        block_relative_errors=blocks,
        block_sigmas=fit.block_sigmas,
        prediction=prediction,
    )


def _check_options(method: str, block_sigma: str) -> None:
    if method not in ("ols", "wls"):
        raise InputError(f"method must be 'ols' or 'wls', got {method!r}")
    if block_sigma not in ("block", "global"):
        raise InputError(f"block_sigma must be 'block' or 'global', got {block_sigma!r}")


# --------------------------------------------------------------------------------------
# Public estimators
# --------------------------------------------------------------------------------------


def ols(
    W: np.ndarray,
    Y: np.ndarray,
    *,
    names: Sequence[str] | None = None,
    block_sizes: Sequence[int] | None = None,
    rank_eps: float = DEFAULT_RANK_EPS,
) -> Estimate:
    """Ordinary least squares, eqs. (44)-(47), by QR factorization of ``[W Y]``.

    Args:
        W: observation matrix of base parameters (r, n_b), full column rank.
        Y: measured inputs (r,).
        names: parameter names (n_b,).
        block_sizes: equation blocks, only used for the per-block relative errors.
        rank_eps: ``|R_kk| <= rank_eps max |R_jj|`` raises :class:`InputError`
            naming the dependent column (compute base parameters first).
    """
    system = _checked(W, Y, block_sizes, names)
    keep = np.arange(system.n_parameters)
    factors = _factors(system)
    fit = _fit(factors, system.block_sizes, keep, system.parameter_names, method="ols",
               block_sigma="block", rank_eps=rank_eps)
    return _estimate(system, keep, fit, "ols")


def wls(
    W: np.ndarray,
    Y: np.ndarray,
    *,
    block_sizes: Sequence[int] | None,
    names: Sequence[str] | None = None,
    block_sigma: str = "block",
    rank_eps: float = DEFAULT_RANK_EPS,
) -> Estimate:
    """Weighted least squares, eq. (48) (IDIM-WLS).

    Each block ``j`` of ``block_sizes`` rows (one per joint/equation row, eq. 48)
    is weighted by ``1 / sigma_j`` and the weighted system solved by OLS;
    ``std``/``covariance``/``sigma_rho`` are eqs. (46)-(47) of the weighted system.

    ``block_sigma``: ``"block"`` (default, eq. 48 / Gautier): ``sigma_j^2 =
    ||Y^j - W^j chi_j||^2 / (r_j - rank W^j)`` with ``chi_j`` the OLS (minimum
    norm if ``W^j`` is rank deficient) of block ``j`` alone; ``"global"``: the
    residual of the global OLS on block ``j`` over ``r_j - n_b r_j / r`` (UR5e
    paper Sect. 4.3). If every block fits exactly (noise-free data: ``sigma_j``
    below 1e-10 x the block's RMS input), the weights are 1 (WLS = OLS). ``block_sizes=None`` is a single block (WLS = OLS).
    """
    _check_options("wls", block_sigma)
    system = _checked(W, Y, block_sizes, names)
    keep = np.arange(system.n_parameters)
    factors = _factors(system)
    fit = _fit(factors, system.block_sizes, keep, system.parameter_names, method="wls",
               block_sigma=block_sigma, rank_eps=rank_eps)
    return _estimate(system, keep, fit, "wls")


def essential_parameters(
    W: np.ndarray,
    Y: np.ndarray,
    *,
    names: Sequence[str] | None = None,
    block_sizes: Sequence[int] | None = None,
    method: str = "wls",
    ratio: float = DEFAULT_RATIO,
    fit_tolerance: float = DEFAULT_FIT_TOLERANCE,
    min_parameters: int = 1,
    block_sigma: str = "block",
    rank_eps: float = DEFAULT_RANK_EPS,
) -> EssentialParameters:
    """Essential parameters by iterative removal (Briot et al. Sect. 5.3), fit kept.

    Starting from all columns (base parameters): estimate (``method``,
    :func:`wls` by default, weights recomputed at every step); while
    ``max %sigma / min %sigma >= ratio`` (``r_sigma``, 10 in the paper), remove
    the parameter with the largest ``%sigma`` -- but only if the reduced
    model still fits: its relative error norm ``||Y - W_e chi_e|| / ||Y||``
    (unweighted, all equations) must stay within

        e_essential <= (1 + fit_tolerance) e_base                      # the stopping rule

    of the base model's ``e_base``. The paper's ratio test alone stops too late
    on low-noise data: every ``%sigma`` is tiny but their ratio stays large, so
    the loop used to strip the model down to ``min_parameters`` (1 of the UR5e's
    58 base parameters, 100 % fit error). A removal that would break the
    tolerance ends the loop (``stopped_by == "fit"``) with the ratio unmet; the
    other ends are ``"ratio"`` and ``"min_parameters"``. The factors of
    ``[W Y]`` are computed once, each step solves on them only.

    Args:
        fit_tolerance: allowed relative growth of the fit error (0.05: 5 %); ``inf``
            restores the paper's ratio-only rule.

    Returns:
        :class:`EssentialParameters`: final estimate, kept columns, removal order, why it stopped.
    """
    _check_options(method, block_sigma)
    if not ratio > 1.0:
        raise InputError(f"r_sigma must exceed 1, got {ratio!r}")
    if not fit_tolerance >= 0.0:
        raise InputError(f"fit_tolerance must be >= 0, got {fit_tolerance!r}")
    system = _checked(W, Y, block_sizes, names)
    all_names = system.parameter_names
    factors = _factors(system)
    keep = np.arange(system.n_parameters)
    removed: list[Removal] = []
    y_norm = float(np.linalg.norm(system.Y)) or 1.0

    def fit_error(columns: np.ndarray, chi: np.ndarray) -> float:
        # ||[W Y] v|| = ||R v|| per block, v = (chi on the kept columns, -1): the residual without W
        return float(np.sqrt(sum(np.sum((f[:, columns] @ chi - f[:, -1]) ** 2) for f in factors))) / y_norm

    fit = _fit(factors, system.block_sizes, keep, all_names, method=method, block_sigma=block_sigma, rank_eps=rank_eps)
    allowed = (1.0 + fit_tolerance) * fit_error(keep, fit.chi)
    while True:
        rel = _relative_std(fit.chi, np.sqrt(np.diag(fit.covariance)))
        high, low = float(rel.max()), float(rel.min())
        current = 1.0 if high == 0.0 else (np.inf if low == 0.0 else high / low)
        if current < ratio:
            stopped_by = "ratio"
            break
        if len(keep) <= min_parameters:
            stopped_by = "min_parameters"
            break
        worst = int(np.argmax(rel))
        candidate = np.delete(keep, worst)
        trial = _fit(factors, system.block_sizes, candidate, all_names, method=method, block_sigma=block_sigma,
                     rank_eps=rank_eps)
        if fit_error(candidate, trial.chi) > allowed:
            stopped_by = "fit"
            break
        removed.append(Removal(int(keep[worst]), all_names[keep[worst]], high, current))
        keep, fit = candidate, trial
    return EssentialParameters(_estimate(system, keep, fit, method), keep, tuple(removed), current, stopped_by,
                               fit_tolerance)


def block_sigmas(system: LinearSystem, *, rank_eps: float = DEFAULT_RANK_EPS) -> np.ndarray:
    """Eq. (48)'s ``sigma_j`` of every block of ``system`` (blocks,), each from the OLS of its block alone.

    Rank-tolerant (a block's own least squares is a minimum-norm solution), so it is computed on the
    standard columns before any rank decision; ones when every block is fitted exactly (noise-free data).

    Raises:
        InputError: some blocks are fitted exactly while others are not (the weights are undefined).
    """
    factors = _factors(system)
    return _block_sigmas(factors, system.block_sizes, np.arange(system.n_parameters), "block", None, rank_eps)


def condition_number(W: np.ndarray) -> float:
    """2-norm condition number of the observation matrix (r, n), from its QR factor."""
    W = np.asarray(W, dtype=float)
    if W.ndim != 2 or W.shape[0] < W.shape[1]:
        raise InputError(f"condition number needs a tall (r, n) matrix, got {W.shape}")
    return float(np.linalg.cond(triangular_factor(W)))
