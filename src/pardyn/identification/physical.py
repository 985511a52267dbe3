"""Physically consistent estimates: pseudo-inertias positive definite, by semidefinite programming.

The least-squares estimates of :mod:`pardyn.identification.least_squares` are
base parameters (regrouped combinations, Briot et al. Sect. 4.1); nothing
keeps the rigid bodies behind them physical, and on noisy or poorly exciting
data they often are not (a negative mass, an inertia violating the triangle
inequality, a negative friction). The UR5e paper names physically consistent
estimates as future work (Sect. 6, point 3); BIRDy and FloBaRoID solve the
same semidefinite program.

Physical consistency of one body (Wensing, Kim, Slotine 2017, Thm. 1): the
*pseudo-inertia*

    J = [[Sigma, h], [h^T, m]],   Sigma = tr(I)/2 * 1_3 - I                   # (4, 4)

(``I`` the inertia matrix at the body frame origin, ``h = m c`` the first
moment, ``Sigma = int r r^T dm`` the second moment of the mass distribution)
is positive definite iff a density with that mass, centre of mass and
inertia exists (positive mass, inertia about the centre of mass positive
definite *and* satisfying the triangle inequalities). ``J`` is linear in the
10 standard parameters ``[xx xy xz yy yz zz mx my mz m]`` (eq. 2 of the DualV
paper), so ``J >= eps 1_4`` is a linear matrix inequality (LMI).

Since only base parameters are identifiable, the program estimates the
*standard* parameters ``phi`` (n_st,) of every body and drive of the system::

    minimise    ||D (W_st phi - Y)||^2 / s_rho^2 + lambda ||N^T (phi - phi_nom) / s||^2
    subject to  J_b(phi) >= eps_b 1_4          for every body b     (LMI)
                ia_j, fv_j, fs_j >= 0          for every drive j

* ``D``: the WLS block weights ``1 / sigma_j`` of eq. (48) (the same weighting
  as the unconstrained estimate); ``W_st phi = W_b K phi`` with ``K`` the
  regrouping matrix (:attr:`BaseParameters.regrouping`), so the data term is
  evaluated on the ``(n_b + 1)``-square triangular factor of ``[D W_b, D Y]``.
* ``s_rho^2``: the residual variance of the unconstrained weighted fit (eq. 46,
  ~1 for WLS), floored at ``(1e-5 ||D Y||)^2 / r`` for noise-free data; the data
  term is then a chi-square: one standard deviation of an identifiable
  direction costs 1.
* ``lambda ||N^T (phi - phi_nom) / s||^2`` (``lambda = regularization``): a
  small pull towards the nominal (CAD) parameters along the directions of
  ``phi`` that do not change ``K phi`` (``N``: orthonormal basis of the null
  space of ``K diag(s)``, the unidentifiable combinations), where it is the
  only information; the identifiable directions are not pulled (no bias when
  the constraints are inactive: the result then reproduces the unconstrained
  base estimate), and the problem is strictly convex. Scales ``s`` per body: mass ``m_0``, first moments
  ``m_0 l``, inertias ``m_0 l^2`` (``m_0`` the nominal mass, ``l`` the radius
  of gyration of the nominal ``Sigma`` about the frame origin; 1 kg and 0.1 m
  for a body of zero nominal mass); drive parameters: the largest of the
  nominal value, a tenth of the mean nominal of that kind, and 1e-3 (SI).
* ``eps_b = margin * max(tr J_b(phi_nom), 1)``: a small margin so that the
  result is strictly positive definite.

The problem is convex (a least-squares objective, LMIs, linear inequalities)
and solved by cvxpy (Clarabel interior point). Install with
``pip install 'pardyn[physical]'`` (the Makefile does).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import linalg

from pardyn.dynamics.parameters import INERTIAL_NAMES, DynamicParameters
from pardyn.errors import InputError
from pardyn.identification.least_squares import LinearSystem, triangular_factor
from pardyn.identification.metrics import relative_error_norm

if TYPE_CHECKING:
    from pardyn.identification.base_parameters import BaseParameters
    from pardyn.identification.least_squares import Estimate

__all__ = [
    "DEFAULT_MARGIN",
    "DEFAULT_REGULARIZATION",
    "NONNEGATIVE_DRIVE_PARAMETERS",
    "PSEUDO_INERTIA_BASIS",
    "PhysicalEstimate",
    "physical_estimate",
    "pseudo_inertia",
]

DEFAULT_REGULARIZATION = 1e-2
"""``lambda``: cost of one scale unit of deviation from the nominal, in units of one standard deviation squared."""

DEFAULT_MARGIN = 1e-7
"""``eps_b / max(tr J_b(phi_nom), 1)``: strict positive definiteness margin of every pseudo-inertia."""

NONNEGATIVE_DRIVE_PARAMETERS = ("ia", "fv", "fs")
"""Drive parameters that are physical only when >= 0 (rotor inertia, viscous and Coulomb friction)."""

NOISE_FLOOR = 1e-5
"""Relative floor of ``s_rho`` (noise-free data: the data term then dominates by ~1e10)."""


def _basis() -> np.ndarray:
    """``E`` (10, 4, 4) with ``J = sum_i phi_i E_i`` for ``phi = [xx xy xz yy yz zz mx my mz m]``."""
    basis = np.zeros((10, 4, 4))
    diagonal = {"xx": (-1, 1, 1), "yy": (1, -1, 1), "zz": (1, 1, -1)}  # Sigma = tr(I)/2 - I
    for name, signs in diagonal.items():
        basis[INERTIAL_NAMES.index(name), [0, 1, 2], [0, 1, 2]] = 0.5 * np.array(signs)
    for name, (a, b) in {"xy": (0, 1), "xz": (0, 2), "yz": (1, 2)}.items():
        basis[INERTIAL_NAMES.index(name), [a, b], [b, a]] = -1.0
    for k, name in enumerate(("mx", "my", "mz")):
        basis[INERTIAL_NAMES.index(name), [k, 3], [3, k]] = 1.0
    basis[INERTIAL_NAMES.index("m"), 3, 3] = 1.0
    return basis


PSEUDO_INERTIA_BASIS = _basis()
"""``J(phi) = tensordot(phi, PSEUDO_INERTIA_BASIS, 1)``, (10, 4, 4) (Wensing et al. 2017)."""


def pseudo_inertia(standard: np.ndarray) -> np.ndarray:
    """Pseudo-inertia ``[[tr(I)/2 - I, h], [h^T, m]]`` of standard parameters (..., 10) -> (..., 4, 4)."""
    return np.tensordot(np.asarray(standard, dtype=float), PSEUDO_INERTIA_BASIS, axes=1)


@dataclass(frozen=True)
class PhysicalEstimate:
    """The physically consistent estimate beside the unconstrained one.

    Attributes:
        names: standard parameter names of the system's columns (n_st,).
        values: their estimate ``phi`` (n_st,), SI.
        parameters: the full parameter set (columns outside the system keep their nominal value).
        base_names: base parameter names (n_b,); base_values: ``K phi`` (n_b,).
        relative_error: ``||Y - W_st phi|| / ||Y||`` (unweighted, as the unconstrained fit's).
        block_relative_errors: the same per block (blocks,).
        eigenvalues: ``{body: eigenvalues of J_b(phi)}`` ascending (4,), kg m^2 / kg.
        nominal_min_eigenvalues: ``{body: smallest eigenvalue of J_b(phi_nom)}`` (negative: the
            nominal body itself is not physical).
        margins: ``{body: eps_b}``.
        regularization: ``lambda``; noise_std: ``s_rho`` of the weighted data term.
        solver, status: cvxpy's solver and status; solve_time_s: wall time (s).
    """

    names: tuple[str, ...]
    values: np.ndarray
    parameters: DynamicParameters
    base_names: tuple[str, ...]
    base_values: np.ndarray
    relative_error: float
    block_relative_errors: np.ndarray
    eigenvalues: dict[str, np.ndarray]
    nominal_min_eigenvalues: dict[str, float]
    margins: dict[str, float]
    regularization: float
    noise_std: float
    solver: str
    status: str
    solve_time_s: float

    @property
    def min_eigenvalue(self) -> float:
        """Smallest pseudo-inertia eigenvalue over every body (> 0: physical)."""
        return float(min(values[0] for values in self.eigenvalues.values())) if self.eigenvalues else np.inf

    def base_shift(self, estimate: Estimate) -> np.ndarray:
        """``(K phi - chi_hat) / sigma_hat`` per base parameter of ``estimate`` (its names), (n,)."""
        lookup = dict(zip(self.base_names, self.base_values))
        return np.array([(lookup[n] - v) / s if s > 0 else 0.0 for n, v, s in zip(estimate.names, estimate.chi,
                                                                                  estimate.std)])

    def as_dict(self, estimate: Estimate | None = None, *, block_labels: Sequence[str] | None = None) -> dict[str, Any]:
        """JSON-ready figures; with the unconstrained ``estimate``, its shift in standard deviations."""
        labels = block_labels or [f"block{k}" for k in range(len(self.block_relative_errors))]
        out: dict[str, Any] = {
            "fit": {
                "relative_error_norm": self.relative_error,
                "per_joint": dict(zip(labels, self.block_relative_errors.tolist())),
            },
            "base_parameters": dict(zip(self.base_names, self.base_values.tolist())),
            "pseudo_inertia_eigenvalues": {body: values.tolist() for body, values in self.eigenvalues.items()},
            "min_pseudo_inertia_eigenvalue": self.min_eigenvalue,
            "nominal_min_pseudo_inertia_eigenvalues": self.nominal_min_eigenvalues,
            "margins": self.margins,
            "regularization": self.regularization,
            "noise_std": self.noise_std,
            "solver": self.solver,
            "status": self.status,
            "solve_time_s": self.solve_time_s,
            "standard_parameters": dict(zip(self.parameters.names, self.parameters.vector().tolist())),
        }
        if estimate is not None:
            shift = self.base_shift(estimate)
            out["max_base_shift_in_std"] = float(np.abs(shift).max()) if shift.size else 0.0
        return out


def _body_scales(nominal: np.ndarray) -> np.ndarray:
    """Scales (10,) of one body's standard parameters (module docstring)."""
    mass = float(nominal[9])
    second = np.trace(pseudo_inertia(nominal)[:3, :3])
    if mass > 0.0 and second > 0.0:
        radius = np.sqrt(second / mass)
    else:
        mass, radius = 1.0, 0.1
    return np.array([mass * radius**2] * 6 + [mass * radius] * 3 + [mass])


def _scales(layout: DynamicParameters) -> np.ndarray:
    """Scales (n_st,) of every standard parameter of ``layout``, column order."""
    nominal = layout.vector()
    parts = [_body_scales(nominal[10 * k:10 * k + 10]) for k in range(len(layout.bodies))]
    drives = np.abs(layout.drive_values())  # (n_d, 4)
    if drives.size:
        floor = np.maximum(0.1 * drives.mean(axis=0), 1e-3)
        parts.append(np.maximum(drives, floor).reshape(-1))
    return np.concatenate(parts) if parts else np.zeros(0)


def _weighted_factor(system: LinearSystem, base: BaseParameters, sigmas: np.ndarray) -> np.ndarray:
    """Triangular factor (n_b + 1, n_b + 1) of ``[D W_b, D Y]``, block weights ``1 / sigma_j``."""
    weights = np.concatenate([np.full(size, 1.0 / s) for size, s in zip(system.block_sizes, sigmas)])
    return triangular_factor(base.reduce(system.W) * weights[:, None], system.Y * weights)


def _cvxpy():
    try:
        import cvxpy  # noqa: PLC0415 - optional dependency, only for physical estimates
    except ImportError as error:  # pragma: no cover - the Makefile installs it
        raise InputError(
            "physical estimates need cvxpy: pip install 'pardyn[physical]' (or pip install cvxpy)"
        ) from error
    return cvxpy


def physical_estimate(
    system: LinearSystem,
    base: BaseParameters,
    layout: DynamicParameters,
    *,
    block_sigmas: np.ndarray | None = None,
    regularization: float = DEFAULT_REGULARIZATION,
    margin: float = DEFAULT_MARGIN,
    solver: str | None = None,
    nonnegative_drive_parameters: Sequence[str] = NONNEGATIVE_DRIVE_PARAMETERS,
) -> PhysicalEstimate:
    """Standard parameters with every pseudo-inertia positive definite (module docstring's SDP).

    Args:
        system: the identification system of *standard* parameters, ``Y`` (r,) and
            ``W_st`` (r, n_st), columns named after ``layout``'s parameters (a subset:
            e.g. the payload's columns dropped).
        base: its base parameters (``base.standard_names == system.names``).
        layout: the parameter layout and nominal (CAD) values, the regularisation's prior.
        block_sigmas: the WLS weights' inverses per block of ``system`` (eq. 48); ``None``: 1.
        regularization: ``lambda`` (> 0).
        margin: relative pseudo-inertia margin (>= 0).
        solver: a cvxpy solver name; default Clarabel when installed.
        nonnegative_drive_parameters: drive parameters constrained to ``>= 0`` (default ia,
            fv, fs); ``()`` when the drive terms are residuals of a compensated model (rotor
            compensation: the link regressor's friction corrects the rotor model's, either sign).

    Raises:
        InputError: inconsistent inputs, or the solver failed (its status in the message).
    """
    if system.names is None or tuple(base.standard_names) != tuple(system.names):
        raise InputError("the system's columns must be named as the base parameters' standard parameters")
    if not regularization > 0.0 or not margin >= 0.0:
        raise InputError(f"regularization must be > 0 and margin >= 0, got {regularization!r}, {margin!r}")
    position = {name: k for k, name in enumerate(layout.names)}
    unknown = [name for name in system.names if name not in position]
    if unknown:
        raise InputError(f"{layout.robot}: system columns {unknown} are not parameters of the layout")
    sigmas = np.ones(len(system.block_sizes)) if block_sigmas is None else np.asarray(block_sigmas, dtype=float)
    if sigmas.shape != (len(system.block_sizes),) or not np.all(sigmas > 0.0):
        raise InputError(f"block_sigmas: expected {len(system.block_sizes)} positive values, got {sigmas.tolist()}")
    cp = _cvxpy()

    columns = np.array([position[name] for name in system.names])  # into layout order
    nominal = layout.vector()[columns]  # (n,)
    scale = _scales(layout)[columns]
    n_b = base.n_base
    factor = _weighted_factor(system, base, sigmas)  # (n_b + 1, n_b + 1)
    mapped = factor[:n_b, :n_b] @ base.regrouping  # D W_st = Q (R K): (n_b, n)
    target = factor[:n_b, n_b]
    weighted_norm2 = float(np.sum(factor[:, n_b] ** 2))  # ||D Y||^2
    residual2 = float(factor[n_b, n_b] ** 2) if factor.shape[0] > n_b else 0.0
    noise2 = max(residual2 / max(system.rows - n_b, 1), NOISE_FLOOR**2 * weighted_norm2 / system.rows)
    noise_std = float(np.sqrt(noise2))

    # phi = phi_nom + s * u, u dimensionless
    matrix = mapped * scale / noise_std
    offset = (target - mapped @ nominal) / noise_std
    u = cp.Variable(len(columns))
    phi = nominal + cp.multiply(scale, u)
    objective = cp.sum_squares(matrix @ u - offset)
    null = linalg.null_space(base.regrouping * scale)  # (n, n - n_b), exact: K is structural
    if null.shape[1]:
        objective = objective + regularization * cp.sum_squares(null.T @ u)
    constraints = []
    index = {name: k for k, name in enumerate(system.names)}
    bodies, margins, nominal_min = [], {}, {}
    full_nominal = layout.vector()
    for k, body in enumerate(layout.bodies):
        names = [f"{p}_{body.name}" for p in INERTIAL_NAMES]
        present = [name in index for name in names]
        if not any(present):
            continue
        if not all(present):
            raise InputError(f"{layout.robot}: body {body.name}: only some of its 10 parameters are columns")
        body_nominal = pseudo_inertia(full_nominal[10 * k:10 * k + 10])
        margins[body.name] = margin * max(float(np.trace(body_nominal)), 1.0)
        nominal_min[body.name] = float(np.linalg.eigvalsh(body_nominal)[0])
        cols = [index[name] for name in names]
        matrix_j = sum(phi[c] * PSEUDO_INERTIA_BASIS[i] for i, c in enumerate(cols))
        constraints.append(matrix_j >> margins[body.name] * np.eye(4))
        bodies.append((body.name, cols))
    nonnegative = [index[f"{p}_{d.joint}"] for d in layout.drives for p in nonnegative_drive_parameters
                   if f"{p}_{d.joint}" in index]
    if nonnegative:
        constraints.append(phi[nonnegative] >= 0.0)

    problem = cp.Problem(cp.Minimize(objective), constraints)
    chosen = solver or ("CLARABEL" if "CLARABEL" in cp.installed_solvers() else None)
    clock = time.perf_counter()
    try:
        problem.solve(solver=chosen)
    except cp.error.SolverError as error:
        raise InputError(f"{layout.robot}: physical estimate: solver {chosen} failed: {error}") from error
    elapsed = time.perf_counter() - clock
    if problem.status not in ("optimal", "optimal_inaccurate") or u.value is None:
        raise InputError(f"{layout.robot}: physical estimate: solver {chosen} returned status {problem.status!r}")

    values = nominal + scale * np.asarray(u.value)
    full = full_nominal.copy()
    full[columns] = values
    base_values = base.regrouping @ values
    prediction = base.reduce(system.W) @ base_values
    blocks = np.array([relative_error_norm(system.Y[s], prediction[s]) if np.any(system.Y[s]) else np.nan
                       for s in system.block_slices()])
    return PhysicalEstimate(
        names=tuple(system.names),
        values=values,
        parameters=layout.with_vector(full),
        base_names=tuple(base.names),
        base_values=base_values,
        relative_error=relative_error_norm(system.Y, prediction),
        block_relative_errors=blocks,
        eigenvalues={name: np.linalg.eigvalsh(pseudo_inertia(values[cols])) for name, cols in bodies},
        nominal_min_eigenvalues=nominal_min,
        margins=margins,
        regularization=float(regularization),
        noise_std=noise_std,
        solver=str(problem.solver_stats.solver_name if problem.solver_stats else chosen),
        status=str(problem.status),
        solve_time_s=elapsed,
    )

