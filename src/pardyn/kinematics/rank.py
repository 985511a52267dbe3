"""Closure rank, independent closure rows and internal degrees of freedom, found numerically.

The number of independent closure equations is a property of the mechanism,
not of the declared closure types: a planar loop closed by a ``6D`` closure
has three identically zero rows, a Delta's parallelograms make some rows of
the three leg closures dependent. Here it comes from the closure Jacobian
``K`` (m, nv) evaluated at several assembled configurations:

* :func:`assemble`: Gauss-Newton with minimum-norm steps on all declared rows
  (redundant rows are harmless: the residual is consistent), some coordinates
  optionally held at given values;
* :func:`independent_rows`: a greedy choice, closure by closure in the order
  of the description, of the rows that raise the rank of ``K``; the same rows
  must be independent at every sample configuration, else the rank changes
  inside the workspace (:class:`RankChange`, with the configuration);
* :func:`null_space`: motions left free by a set of equations, e.g. the
  *internal* motions ``K qdot = 0, qdot_actuated = 0`` that no motor drives
  (a rod spinning about its own axis between two ball joints, the two
  coincident half-joints of Gepetto's loop cuts).

Mobility = nv - rank(K).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from pardyn.errors import ConvergenceError

__all__ = [
    "RANK_TOLERANCE",
    "RankChange",
    "assemble",
    "independent_rows",
    "null_space",
    "numeric_rank",
    "select_columns",
]

RANK_TOLERANCE = 1e-8
"""Singular values below this fraction of the largest (and below it absolutely
for matrices of norm < 1) count as zero."""


def _threshold(singular: np.ndarray) -> float:
    return RANK_TOLERANCE * max(1.0, float(singular[0]) if singular.size else 0.0)


def numeric_rank(matrix: np.ndarray) -> int:
    """Rank of ``matrix`` by SVD with :data:`RANK_TOLERANCE`."""
    if matrix.size == 0:
        return 0
    singular = np.linalg.svd(matrix, compute_uv=False)
    return int(np.sum(singular > _threshold(singular)))


def null_space(matrix: np.ndarray, columns: int) -> np.ndarray:
    """Orthonormal basis of ``{v : matrix v = 0}``, shape (columns, k)."""
    if matrix.size == 0:
        return np.eye(columns)
    _, singular, vt = np.linalg.svd(matrix)
    rank = int(np.sum(singular > _threshold(singular)))
    return vt[rank:].T.copy()


class RankChange(Exception):
    """The closure rows independent at one configuration are dependent at another (the message names both)."""


def assemble(
    residual_and_jacobian: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    q0: np.ndarray,
    *,
    fixed: Sequence[int] = (),
    values: Sequence[float] | None = None,
    tolerance: float = 1e-12,
    max_iterations: int = 100,
) -> np.ndarray:
    """Close the loops from ``q0`` with ``q[fixed] = values``: minimum-norm Gauss-Newton.

    Each step solves ``[K; S] dq = -[phi; q[fixed] - values]`` in the least-squares,
    minimum-norm sense (SVD), so redundant closure rows and free internal
    motions are harmless. Raises :class:`ConvergenceError` when the loops do not close.
    """
    q = np.array(q0, dtype=float)
    fixed = np.asarray(fixed, dtype=int)
    target = np.zeros(0) if values is None else np.asarray(values, dtype=float)
    q[fixed] = target
    error = math.inf
    for _ in range(max_iterations):
        residual, jacobian = residual_and_jacobian(q)
        error = float(np.max(np.abs(residual), initial=0.0))
        if error <= tolerance:
            return q
        free = np.setdiff1d(np.arange(q.size), fixed)
        step = np.linalg.lstsq(jacobian[:, free], -residual, rcond=None)[0]
        q[free] += step
    raise ConvergenceError(
        f"the loops do not close from the starting configuration: max closure error {error:.3g} "
        f"after {max_iterations} minimum-norm Gauss-Newton steps"
    )


def independent_rows(jacobians: Sequence[np.ndarray], describe: Callable[[int], str]) -> np.ndarray:
    """Rows of ``K`` (m, nv) independent at every sample, chosen greedily in row order.

    Args:
        jacobians: ``K`` at several assembled configurations, each (m, nv).
        describe: text naming sample ``k`` (its configuration), for errors.

    Returns:
        the kept row indices (r,), r = rank K.

    Raises:
        RankChange: the rank differs between samples, or the rows chosen at the
            first sample are dependent at another one.
    """
    first = jacobians[0]
    kept: list[int] = []
    for row in range(first.shape[0]):
        if numeric_rank(first[kept + [row]]) > len(kept):
            kept.append(row)
    for k, jacobian in enumerate(jacobians[1:], start=1):
        rank = numeric_rank(jacobian)
        chosen = numeric_rank(jacobian[kept])
        if rank != len(kept) or chosen != len(kept):
            raise RankChange(
                f"the closure Jacobian has rank {len(kept)} at {describe(0)} but rank {rank} "
                f"(rank {chosen} on the rows independent there) at {describe(k)}"
            )
    return np.asarray(kept, dtype=int)


def select_columns(
    basis: np.ndarray, candidates: Sequence[int], count: int, *, start: Sequence[int] = ()
) -> list[int]:
    """``count`` of the ``candidates`` rows of ``basis`` (nv, k) that span its columns best.

    Greedy: at each step the candidate whose row keeps the selected block best
    conditioned (largest smallest singular value). Used to pick the joints
    that parametrize a null space (chart coordinates, joints to lock). Rows
    ``start`` are taken first; only the newly chosen ones are returned.
    """
    chosen: list[int] = [int(i) for i in start]
    first = len(chosen)
    for _ in range(count):
        best, best_value = None, 0.0
        for candidate in candidates:
            if candidate in chosen:
                continue
            block = basis[chosen + [candidate]]
            value = float(np.linalg.svd(block, compute_uv=False)[-1])
            if value > best_value + 1e-12:
                best, best_value = candidate, value
        if best is None or best_value <= RANK_TOLERANCE:
            break
        chosen.append(int(best))
    return chosen[first:]
