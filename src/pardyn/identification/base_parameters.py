"""Base parameters by QR factorization, with symmetric column ordering (Briot et al. Sect. 4.1).

The observation matrix ``W_st`` (r, n_st) of the standard parameters (eq. 40)
has dependent columns: some parameters have no effect, others act only in
linear combinations. With the QR factorization of eq. (42) (no pivoting),
``Q^T W_st = [R; 0]``, column ``k`` is dependent on the columns before it when

    |R_kk| < eps * max_j |R_jj|                                    # eq. (42)

(``|R_kk|`` is the distance of column ``k`` from the span of the previous
ones). Which parameters are kept therefore depends on the column order: eq.
(43) puts the platform (and other non-leg) parameters first, then each leg
parameter *type* for all legs in turn, so that identical legs keep the same
base parameters (:func:`symmetric_order`).

With ``b`` the independent (base) columns and ``d`` the dependent ones,
``W_d = W_b beta`` (n_b, n_d), hence

    W_st = W_b [I  beta] P,      chi_b = chi_st[b] + beta chi_st[d]

(``P`` the column permutation putting ``b`` first): each base parameter is its
standard parameter plus a linear combination of dropped ones, e.g.
``zz_leg1_link1R = zz_leg1_link1 + 1.0*ia_leg1_joint1 + 0.0784*m_leg1_link2``
(the paper's ``zz_1iR = zz_1i + ia_1i + d_2^2 m_2i``). Dependent columns with
a zero ``beta`` column are unidentifiable (no effect on the model).

``beta`` is the least-squares solution of ``W_b beta = W_d`` (computed on the
triangular factor). Round-off makes exact coefficients such as 1 or 0.0784
come out as ``1.0000000000002``; ``beta`` is therefore cleaned (documented
defaults, keyword options of :func:`base_parameters`):

* a dependent column that is zero up to round-off *relative to the whole
  matrix*, ``||W_d,j|| <= eps max_k |R_kk|``, is unidentifiable and its
  ``beta`` column 0 (its own scale is round-off: fitting it would put
  coefficients of 1e-18 in every relation);
* an entry is set to 0 when its contribution to the dependent column is
  negligible: ``|beta_ij| ||W_b,i|| < coefficient_tol ||W_d,j||``
  (scale-invariant, ``coefficient_tol = 1e-8``);
* the others are rounded to ``significant_digits`` (10) significant digits.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from pardyn.errors import InputError
from pardyn.identification.least_squares import LinearSystem, triangular_factor

__all__ = [
    "BaseParameters",
    "base_parameters",
    "symmetric_order",
]

DEFAULT_EPS = 1e-8
"""``eps`` of eq. (42): structural dependencies hold to round-off in W, noise does not enter W's rank."""

DEFAULT_COEFFICIENT_TOL = 1e-8
DEFAULT_SIGNIFICANT_DIGITS = 10
LEG_PATTERN = r"leg\d+"
"""Default leg label: a name token (``_``-separated) such as ``leg1``, ``leg12``."""


def symmetric_order(
    names: Sequence[str], *, legs: Sequence[str] | None = None, leg_pattern: str = LEG_PATTERN
) -> np.ndarray:
    """Column order of eq. (43): non-leg parameters first, then each leg parameter type across legs.

    A parameter belongs to a leg when one ``_``-separated token of its name is a
    leg label (``legs``, default: every token matching ``leg_pattern``, sorted by
    number); its *type* is its name with that token replaced, e.g.
    ``zz_leg2_link1`` has type ``zz_{leg}_link1``. Non-leg parameters
    (platform, payload, ...) keep their relative order and come first; the
    types follow in the order of their first appearance in ``names``, each
    listing its legs in leg order.

    Returns:
        permutation (n_st,): ``names[order]`` is the eq. (43) order.
    """
    names = [str(n) for n in names]
    if len(set(names)) != len(names):
        raise InputError("parameter names are not unique")
    regex = re.compile(leg_pattern)
    leg_of: list[str | None] = []
    kind_of: list[str | None] = []
    for name in names:
        tokens = name.split("_")
        hits = [k for k, tok in enumerate(tokens) if (tok in legs if legs is not None else regex.fullmatch(tok))]
        if len(hits) > 1:
            raise InputError(f"parameter {name!r} names several legs {[tokens[k] for k in hits]}")
        if not hits:
            leg_of.append(None)
            kind_of.append(None)
            continue
        leg_of.append(tokens[hits[0]])
        kind_of.append("_".join(tokens[: hits[0]] + ["{leg}"] + tokens[hits[0] + 1 :]))
    if legs is None:
        found = {leg for leg in leg_of if leg is not None}
        legs = sorted(found, key=lambda s: (int(re.sub(r"\D", "", s) or 0), s))
    leg_rank = {leg: k for k, leg in enumerate(legs)}
    kinds: list[str] = []
    for kind in kind_of:
        if kind is not None and kind not in kinds:
            kinds.append(kind)
    index = {(kind_of[k], leg_of[k]): k for k in range(len(names)) if kind_of[k] is not None}
    order = [k for k in range(len(names)) if kind_of[k] is None]
    for kind in kinds:
        members = [(leg_rank[leg], index[(kind, leg)]) for leg in leg_rank if (kind, leg) in index]
        order.extend(k for _, k in sorted(members))
    return np.asarray(order, dtype=int)


def _independent_columns(r: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """``|R_kk|`` of eq. (42) against the *kept* earlier columns only, and the kept mask.

    ``r`` (n, n) has the column geometry of W (``||W v|| = ||R v||``). Plain QR
    also orthogonalizes against a dependent column's round-off residue (e.g. a
    first moment along a joint axis, ``cos(pi/2) = 6e-17`` times another
    column): that residue then spans the direction of a later, independent
    column, which comes out dependent too (the UR5e tilted base: ``my`` of the
    shoulder link hides ``mz``). Gram-Schmidt on the kept columns only (twice,
    for orthogonality) gives the distance of column ``k`` from the span of the
    kept ones, equal to ``|R_kk|`` whenever the dropped columns are exactly dependent.
    """
    n = r.shape[1]
    basis = np.zeros((r.shape[0], 0))
    diag = np.zeros(n)
    keep = np.zeros(n, dtype=bool)
    for k in range(n):
        residual = r[:, k].copy()
        for _ in range(2):
            residual -= basis @ (basis.T @ residual)
        diag[k] = np.linalg.norm(residual)
        if diag[k] > threshold:
            keep[k] = True
            basis = np.column_stack([basis, residual / diag[k]])
    return diag, keep


def _round_significant(values: np.ndarray, digits: int) -> np.ndarray:
    out = np.zeros_like(values)
    nonzero = values != 0.0
    exponent = np.floor(np.log10(np.abs(values[nonzero])))
    scale = 10.0 ** (digits - 1 - exponent)
    out[nonzero] = np.round(values[nonzero] * scale) / scale
    return out


def _format_coefficient(value: float) -> str:
    magnitude = abs(value)
    if 1e-4 <= magnitude < 1e6:
        text = np.format_float_positional(magnitude, precision=8, unique=True, trim="0")
    else:
        text = np.format_float_scientific(magnitude, precision=8, unique=True, trim="0")
    return text


@dataclass(frozen=True)
class BaseParameters:
    """Base parameters of an observation matrix (Sect. 4.1).

    Attributes:
        standard_names: names of the standard parameters (n_st,).
        independent: columns kept as base parameters (n_b,), ascending.
        dependent: columns removed (n_st - n_b,), ascending.
        beta: regrouping coefficients (n_b, n_st - n_b): ``W[:, dependent] = W[:, independent] @ beta``.
        names: base parameter names (n_b,): the standard name, suffixed ``R`` when regrouped.
        relations: one ``"xR = x + c*y + ..."`` string per regrouped base parameter.
        unidentifiable: dependent parameters without any effect (zero ``beta`` column).
        diagonal: ``|R_kk| / max |R_jj|`` of each standard column in the order used (n_st,),
            indexed like the standard parameters.
        order: column order used for the QR factorization (n_st,).
    """

    standard_names: tuple[str, ...]
    independent: np.ndarray
    dependent: np.ndarray
    beta: np.ndarray
    names: tuple[str, ...]
    relations: tuple[str, ...]
    unidentifiable: tuple[str, ...]
    diagonal: np.ndarray
    order: np.ndarray

    @property
    def n_base(self) -> int:
        """Number of base parameters n_b."""
        return int(self.independent.size)

    @property
    def regrouping(self) -> np.ndarray:
        """``K = [I beta] P`` (n_b, n_st): ``chi_b = K chi_st`` and ``W_st = W_b K``."""
        k = np.zeros((self.n_base, len(self.standard_names)))
        k[np.arange(self.n_base), self.independent] = 1.0
        k[:, self.dependent] = self.beta
        return k

    def reduce(self, W: np.ndarray) -> np.ndarray:
        """The base columns ``W_b`` of an observation matrix (..., n_st) -> (..., n_b)."""
        W = np.asarray(W)
        if W.shape[-1] != len(self.standard_names):
            raise InputError(f"W has {W.shape[-1]} columns, expected {len(self.standard_names)} standard parameters")
        return W[..., self.independent]

    def reduce_system(self, system: LinearSystem) -> LinearSystem:
        """The system restricted to the base columns, with base names."""
        if system.names is not None and system.names != self.standard_names:
            raise InputError("the system's parameter names differ from the base parameters' standard names")
        return system.select(self.independent, names=self.names)

    def from_standard(self, chi_st: np.ndarray) -> np.ndarray:
        """Base parameter values (n_b,) of standard values (n_st,)."""
        return self.regrouping @ np.asarray(chi_st, dtype=float)

    def as_dict(self) -> dict:
        """JSON-ready description."""
        return {
            "base": list(self.names),
            "relations": list(self.relations),
            "unidentifiable": list(self.unidentifiable),
            "regrouping": {
                self.names[i]: {
                    self.standard_names[self.independent[i]]: 1.0,
                    **{
                        self.standard_names[self.dependent[j]]: float(self.beta[i, j])
                        for j in np.flatnonzero(self.beta[i])
                    },
                }
                for i in range(self.n_base)
            },
        }


def base_parameters(
    W: np.ndarray | Sequence[np.ndarray],
    *,
    names: Sequence[str] | None = None,
    order: Sequence[int] | None = None,
    eps: float = DEFAULT_EPS,
    coefficient_tol: float = DEFAULT_COEFFICIENT_TOL,
    significant_digits: int | None = DEFAULT_SIGNIFICANT_DIGITS,
) -> BaseParameters:
    """Base parameters of ``W_st`` by QR factorization without pivoting (eqs. 42-43).

    Args:
        W: observation matrix (r, n_st), or several (r_i, n_st) stacked row-wise
            (several trajectories / random samples; r >= n_st).
        names: standard parameter names (n_st,), default ``p0, p1, ...``.
        order: column order for the factorization (a permutation of
            ``range(n_st)``, e.g. :func:`symmetric_order`); earlier columns are
            kept preferentially. Default: the given order.
        eps: rank threshold of eq. (42), relative to ``max |R_jj|``.
        coefficient_tol: relative contribution below which a regrouping
            coefficient is set to 0 (see module docstring).
        significant_digits: rounding of the coefficients (``None``: no rounding).
    """
    if isinstance(W, np.ndarray):
        stacked = np.asarray(W, dtype=float)
    else:
        blocks = [np.asarray(w, dtype=float) for w in W]
        if not blocks or any(b.ndim != 2 or b.shape[1] != blocks[0].shape[1] for b in blocks):
            raise InputError(f"observation matrices must be 2-D with equal columns, got {[b.shape for b in blocks]}")
        stacked = np.vstack(blocks)
    if stacked.ndim != 2:
        raise InputError(f"W must be (r, n_st), got shape {stacked.shape}")
    rows, n_st = stacked.shape
    if rows < n_st:
        raise InputError(f"{rows} equations for {n_st} standard parameters: stack more samples")
    if not np.all(np.isfinite(stacked)):
        raise InputError("W contains NaN or infinity")
    names = tuple(str(n) for n in names) if names is not None else tuple(f"p{k}" for k in range(n_st))
    if len(names) != n_st:
        raise InputError(f"{len(names)} names for {n_st} columns")
    order = np.arange(n_st) if order is None else np.asarray(order, dtype=int)
    if sorted(order.tolist()) != list(range(n_st)):
        raise InputError(f"order must be a permutation of range({n_st})")

    r = triangular_factor(stacked[:, order])  # eq. (42), (n_st, n_st)
    top = np.abs(np.diag(r)).max()
    if top == 0.0:
        raise InputError("W is zero: no parameter has any effect")
    diag, keep = _independent_columns(r, eps * top)
    base_pos, dep_pos = np.flatnonzero(keep), np.flatnonzero(~keep)
    # W_d = W_b beta, solved on the triangular factor (||W v|| = ||R v||)
    beta_o = np.zeros((base_pos.size, dep_pos.size))
    if dep_pos.size:
        beta_o = linalg.lstsq(r[:, base_pos], r[:, dep_pos], check_finite=False)[0]
        norms = np.linalg.norm(r, axis=0)
        # a column that is zero up to round-off relative to the whole matrix has no effect:
        # unidentifiable, in no relation (its beta would only fit round-off)
        beta_o[:, norms[dep_pos] <= eps * top] = 0.0
        contribution = np.abs(beta_o) * norms[base_pos][:, None]
        beta_o[contribution < coefficient_tol * norms[dep_pos][None, :]] = 0.0
        if significant_digits is not None:
            beta_o = _round_significant(beta_o, int(significant_digits))

    independent, dependent = order[base_pos], order[dep_pos]
    rows_sort, cols_sort = np.argsort(independent), np.argsort(dependent)
    independent, dependent = independent[rows_sort], dependent[cols_sort]
    beta = beta_o[rows_sort][:, cols_sort]

    base_names, relations = [], []
    for i, col in enumerate(independent):
        terms = [(beta[i, j], names[dependent[j]]) for j in np.flatnonzero(beta[i])]
        if not terms:
            base_names.append(names[col])
            continue
        base = names[col] + "R"
        text = f"{base} = {names[col]}"
        for value, name in terms:
            text += f" {'-' if value < 0 else '+'} {_format_coefficient(value)}*{name}"
        base_names.append(base)
        relations.append(text)
    unidentifiable = tuple(names[dependent[j]] for j in range(dependent.size) if not beta[:, j].any())
    ratio = np.empty(n_st)
    ratio[order] = diag / top
    return BaseParameters(
        standard_names=names,
        independent=independent,
        dependent=dependent,
        beta=beta,
        names=tuple(base_names),
        relations=tuple(relations),
        unidentifiable=unidentifiable,
        diagonal=ratio,
        order=order,
    )
