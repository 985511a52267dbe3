"""Newton's method on the closure equations, for any choice of given coordinates.

The forward problem (actuated, or actuated + sensed passive joints given), the
inverse problem (task coordinates given) and any mix are one problem: find the
configuration ``q`` (nv,) that closes every loop, ``phi(q) = 0``, and matches
the given coordinates ``q[I] = y``. Each iteration linearizes both:

* square case (``len(I) + m == nv``, e.g. the inverse problem, a non-redundant
  forward problem): Newton on the dependent coordinates D,
  ``K_D dq_D = -(phi + K_I dq_I)`` with ``dq_I = y - q[I]``;
* over-determined case (more given coordinates than degrees of freedom:
  actuation-redundant forward problem, redundant sensors): the closest point
  to the readings on the constraint manifold, a Gauss-Newton step of
  ``min |dq_I - (y - q[I])|^2  s.t.  K dq = -phi`` solved through its KKT
  system. Consistent readings are matched exactly; noisy ones in the
  least-squares sense, while the loops still close to the tolerance.

The robot's branch (working and assembly mode) is kept by starting from a
configuration on that branch (the previous solution, else the robot's home)
and, when the direct Newton fails or lands on another branch, by continuation:
the given coordinates move from their value at home to the target in small
steps, each solved from the previous one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.linalg import _umath_linalg as _gufuncs


from pardyn.errors import ConvergenceError, SingularityError, WorkingModeError
from pardyn.kinematics.closure import LoopClosures
from pardyn.kinematics.task import FrameTask

__all__ = ["ClosureSolver", "Solution", "revolute_mask", "solve_regular"]


GIVEN_TOLERANCE = 1e-10
"""Largest distance (m, rad) between a solution's given coordinates and the values asked for."""


def revolute_mask(model: pin.Model) -> np.ndarray:
    """Boolean (nv,) mask of the coordinates that are angles (revolute joints)."""
    mask = np.zeros(model.nv, dtype=bool)
    for joint_id in range(1, model.njoints):
        joint = model.joints[joint_id]
        name = joint.shortname()
        if "Revolute" in name or name in ("JointModelRX", "JointModelRY", "JointModelRZ"):
            mask[joint.idx_v] = True
    return mask


FIT_STEP_TOLERANCE = 1e-10
"""Largest step (rad, m) at which the least-squares fit of redundant readings stops."""


# numpy's own LAPACK gufuncs (dgesv, dgesdd), called without numpy.linalg's Python wrapper: as fast as
# scipy.linalg.lapack's for these small systems (1.3 against 1.2 us for a 3 x 3 solve, 7.4 through np.linalg.solve),
# the same results, and no scipy.linalg to import (0.2-0.45 s of every node's start-up).
_SOLVE_VECTOR = _gufuncs.solve1  # (n, n), (n,) -> (n,)
_SOLVE_MATRIX = _gufuncs.solve  # (n, n), (n, k) -> (n, k)
_SINGULAR_VALUES = getattr(_gufuncs, "svd", None) or _gufuncs.svd_n  # (m, n) -> (min(m, n),); svd_n before numpy 2

try:  # numpy >= 2: the floating-point error state is one context variable (what np.errstate sets), set directly
    from numpy._core._ufunc_config import _extobj_contextvar as _ERROR_STATE, _make_extobj

    _IGNORE: object = _make_extobj(all="ignore")
except ImportError:  # pragma: no cover - numpy 1.x: np.seterr, undone by reset
    class _SetErr:
        @staticmethod
        def set(_: object) -> dict:
            return np.seterr(all="ignore")

        @staticmethod
        def reset(token: dict) -> None:
            np.seterr(**token)

    _ERROR_STATE, _IGNORE = _SetErr(), None


def _lu_solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """``matrix^-1 rhs`` by LAPACK's ``dgesv`` (numpy's gufunc); None when ``matrix`` is singular.

    On a zero pivot the gufunc fills its whole output with NaN and raises the invalid flag (ignored here, no
    warning). A NaN first element is then told apart from non-finite inputs (LAPACK's answer is NaN without a
    failure there, returned as it is) by the LU's determinant: 0 exactly on a zero pivot.
    """
    token = _ERROR_STATE.set(_IGNORE)
    try:
        solution = _SOLVE_VECTOR(matrix, rhs) if rhs.ndim == 1 else _SOLVE_MATRIX(matrix, rhs)
        first = solution.item(0) if solution.size else 0.0
        if first != first and np.isfinite(matrix).all() and _gufuncs.det(matrix) == 0.0:
            return None
    finally:
        _ERROR_STATE.reset(token)
    return solution


def _condition(block: np.ndarray) -> float:
    """2-norm condition number (ratio of extreme singular values); inf when rank-deficient.

    An empty block (a serial robot: no closure equation) is perfectly conditioned (1).
    LAPACK's ``dgesdd`` directly (numpy's ``svd`` wrapper costs more than the decomposition here).
    """
    if block.size == 0:
        return 1.0
    token = _ERROR_STATE.set(_IGNORE)
    try:
        singular = _SINGULAR_VALUES(block)
    finally:
        _ERROR_STATE.reset(token)
    if singular.item(0) != singular.item(0):  # NaN: dgesdd did not converge; numpy.linalg raises LinAlgError
        singular = np.linalg.svd(block, compute_uv=False)
    return float(singular[0] / singular[-1]) if singular[-1] > 0.0 else math.inf


def _solve_or_minimum_norm(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``matrix^-1 rhs`` when square and regular, else the minimum-norm least-squares solution.

    LAPACK's ``dgesv`` directly for the square case (numpy's ``solve`` wrapper costs more than the
    factorization of these small systems).
    """
    if matrix.size == 0:  # no closure equation (a serial robot)
        return np.zeros(matrix.shape[1])
    if matrix.shape[0] == matrix.shape[1]:
        solution = _lu_solve(matrix, rhs)
        if solution is not None:
            return solution
    return np.linalg.lstsq(matrix, rhs, rcond=None)[0]


def solve_regular(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``matrix^-1 rhs`` for a square regular ``matrix`` (n, n) and ``rhs`` (n,) or (n, k), by LAPACK's
    ``dgesv`` directly (numpy's ``solve`` wrapper costs several times these small factorizations).

    Raises:
        np.linalg.LinAlgError: ``matrix`` is singular (as ``np.linalg.solve``).
    """
    if matrix.size == 0:
        return np.zeros(rhs.shape)
    solution = _lu_solve(matrix, rhs)
    if solution is None:
        raise np.linalg.LinAlgError("singular matrix (LAPACK dgesv met a zero pivot)")
    return solution


def _max_abs(values: np.ndarray) -> float:
    return float(np.abs(values).max()) if values.size else 0.0


@dataclass(frozen=True)
class Solution:
    """A closed configuration and how it was found.

    Attributes:
        q: joint positions of the whole tree, shape (nv,), rad or m.
        iterations: Newton iterations used (all continuation steps included).
        residual: max |phi(q)| at the answer (m, rad).
        conditioning: condition numbers of the closure Jacobian blocks,
            ``{"serial": cond K[:, non-task], "parallel": cond K[:, non-actuated]}``.
    """

    q: np.ndarray
    iterations: int
    residual: float
    conditioning: dict[str, float]


class ClosureSolver:
    """Solve the closure equations with some coordinates given.

    Args:
        closures: the robot's closure equations.
        task_indices: coordinates of the platform's virtual chain (n_task,).
        actuated_indices: actuated coordinates (n_a,).
        internal_indices: chart coordinates of the internal motions (moved by no
            motor, no task frame): left free, moved as little as possible (minimum norm).
        frame_task: the task read from a frame (:mod:`pardyn.kinematics.task`), if any.
        tolerance: max |phi| accepted (m, rad); 1e-12 by default.
        max_iterations: per Newton run.
        max_condition: condition number above which a block is declared singular.
        continuation_step: largest change of a given coordinate between two
            continuation steps (rad or m).
    """

    def __init__(
        self,
        closures: LoopClosures,
        *,
        task_indices: Sequence[int],
        actuated_indices: Sequence[int],
        internal_indices: Sequence[int] = (),
        frame_task: FrameTask | None = None,
        tolerance: float = 1e-12,
        max_iterations: int = 40,
        max_condition: float = 1e6,
        continuation_step: float = 0.05,
    ) -> None:
        self.closures = closures
        self.model = closures.model
        self.nv = self.model.nv
        self.tolerance = tolerance
        self.max_iterations = max_iterations
        self.max_condition = max_condition
        self.continuation_step = continuation_step
        self.angles = revolute_mask(self.model)
        all_indices = np.arange(self.nv)
        internal = np.asarray(internal_indices, dtype=int)
        self.internal = len(internal)
        self.frame_task = frame_task
        self._internal_rows = np.zeros((len(internal), self.nv))
        self._internal_rows[np.arange(len(internal)), internal] = 1.0
        self._non_task = np.setdiff1d(all_indices, np.concatenate([np.asarray(task_indices, dtype=int), internal]))
        self._non_actuated = np.setdiff1d(all_indices, np.concatenate([np.asarray(actuated_indices, dtype=int), internal]))
        self._names = tuple(self.model.names[1:])
        self._partitions: dict[bytes, tuple[np.ndarray, np.ndarray | None]] = {}

    # ------------------------------------------------------------------ helpers
    def describe(self, q: np.ndarray) -> str:
        """Human-readable configuration for error messages."""
        return "{" + ", ".join(f"{n}: {v:.6g}" for n, v in zip(self._names, q)) + "}"

    def _offset(self, target: np.ndarray, current: np.ndarray, indices: np.ndarray) -> np.ndarray:
        """``target - current`` with angle differences wrapped to (-pi, pi]."""
        delta = target - current
        wrap = self.angles[indices]
        delta[wrap] = (delta[wrap] + math.pi) % (2.0 * math.pi) - math.pi
        return delta

    def wrapped(self, q: np.ndarray, reference: np.ndarray) -> np.ndarray:
        """``q`` (nv,) with every revolute coordinate within pi of ``reference`` (the robot's home), in place.

        The closed forms of :mod:`pardyn.kinematics.analytic` answer the same way, so both paths
        give the same numbers (not only the same configuration modulo 2 pi).
        """
        angles = self.angles
        q[angles] = reference[angles] + (q[angles] - reference[angles] + math.pi) % (2.0 * math.pi) - math.pi
        return q

    def conditioning(self, jacobian: np.ndarray, q: np.ndarray | None = None) -> dict[str, float]:
        """Condition numbers of the serial and parallel blocks of ``K`` (m, nv).

        Serial: ``K`` on the non-task joints (frame task: ``[K; J_x; S_i]``, which
        needs ``q``); parallel: ``K`` on the non-actuated joints. Internal
        chart coordinates are left out of both (they are free by design).
        """
        if self.frame_task is not None and q is not None:
            serial = _condition(np.vstack([jacobian, self.frame_task.jacobian(q), self._internal_rows]))
        else:
            serial = _condition(jacobian[:, self._non_task])
        return {"serial": serial, "parallel": _condition(jacobian[:, self._non_actuated])}

    def loop_conditioning(self, jacobian: np.ndarray, q: np.ndarray) -> dict[str, float]:
        """:meth:`conditioning` without the joints no closure row involves (zero columns of ``K``: a serial
        appendage such as an unactuated spinning link is no singularity of the loops)."""
        touched = np.any(jacobian != 0.0, axis=0)
        if self.frame_task is not None:
            return self.conditioning(jacobian, q)
        return {"serial": _condition(jacobian[:, self._non_task[touched[self._non_task]]]),
                "parallel": _condition(jacobian[:, self._non_actuated[touched[self._non_actuated]]])}

    # ------------------------------------------------------------------- Newton
    def _partition(self, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Dependent coordinates, the KKT matrix buffer of the over-determined case, and which
        given coordinates are angles (None when all are: the whole offset is wrapped)."""
        key = indices.tobytes()
        cached = self._partitions.get(key)
        if cached is None:
            dependent = np.setdiff1d(np.arange(self.nv), indices)
            m = self.closures.size
            if len(dependent) - m > self.internal:
                raise ConvergenceError(
                    f"{len(indices)} given coordinates and {m} closure equations leave "
                    f"{len(dependent) - m} coordinates undetermined"
                )
            kkt = None
            if len(dependent) < m:  # more readings than degrees of freedom
                kkt = np.zeros((self.nv + m, self.nv + m))
                kkt[indices, indices] = 1.0  # S^T S
            wrap = self.angles[indices]
            cached = self._partitions[key] = (dependent, kkt, None if wrap.all() else wrap)
        return cached

    def newton(
        self, indices: np.ndarray | FrameTask, values: np.ndarray, q0: np.ndarray, *, with_jacobian: bool = True
    ) -> tuple[np.ndarray, int, np.ndarray, np.ndarray | None]:
        """Run Newton from ``q0`` with ``q[indices]`` (or the task frame's coordinates) driven to ``values``.

        Returns the configuration, the number of iterations, and the residual
        (m,) and closure Jacobian (m, nv) evaluated there (None unless
        ``with_jacobian``: a caller that checks nothing saves its evaluation).
        Raises :class:`ConvergenceError` if the loops do not close.
        """
        q = np.array(q0, dtype=float)
        if isinstance(indices, FrameTask):
            return self._newton_frame(indices, values, q)
        dependent, kkt, wrap = self._partition(indices)
        closures = self.closures
        m, nv = closures.size, self.nv
        tolerance = self.tolerance
        residual_norm = offset_norm = best_norm = math.inf
        best = q0
        for iteration in range(self.max_iterations + 1):
            residual = closures.linearize(q)
            offset = values - q[indices]  # angle differences wrapped to (-pi, pi]
            if wrap is None:
                offset += math.pi
                offset %= 2.0 * math.pi
                offset -= math.pi
            else:
                offset[wrap] = (offset[wrap] + math.pi) % (2.0 * math.pi) - math.pi
            residual_norm = _max_abs(residual)
            offset_norm = _max_abs(offset)
            if residual_norm <= tolerance and offset_norm <= GIVEN_TOLERANCE:
                return q, iteration, residual, closures.last_jacobian() if with_jacobian else None
            if residual_norm + offset_norm < best_norm:  # kept for the diagnosis of a failure
                best_norm, best = residual_norm + offset_norm, q.copy()
            if iteration == self.max_iterations:
                break
            jacobian = closures.last_jacobian()
            if kkt is None:
                # Square: dq_I = offset, K_D dq_D = -(phi + K_I dq_I).
                rhs = -(residual + jacobian[:, indices] @ offset)
                q[indices] += offset
                q[dependent] += _solve_or_minimum_norm(jacobian[:, dependent], rhs)
                continue
            # Over-determined: [[S^T S, K^T], [K, 0]] [dq; mu] = [S^T offset; -phi].
            kkt[nv:, :nv] = jacobian
            kkt[:nv, nv:] = jacobian.T
            rhs = np.zeros(nv + m)
            rhs[indices] = offset
            rhs[nv:] = -residual
            step = _solve_or_minimum_norm(kkt, rhs)[:nv]
            if not np.isfinite(step).all():
                break
            if residual_norm <= tolerance and _max_abs(step) <= FIT_STEP_TOLERANCE:
                # Inconsistent readings: the least-squares fit has converged (the
                # remaining step is far below any encoder resolution).
                return q, iteration, residual, jacobian
            q += step
        closed = residual_norm <= tolerance
        raise ConvergenceError(
            f"Newton did not converge in {self.max_iterations} iterations: "
            + ("the loops close but the given coordinates are not reached" if closed
               else "the loops do not close")
            + f" (closure residual {residual_norm:.3g}, tolerance {tolerance:.3g} m/rad; given coordinates "
            f"off by {offset_norm:.3g}, tolerance {GIVEN_TOLERANCE:.3g}); {self.diagnosis(np.asarray(q0), best)}"
        )

    def diagnosis(self, start: np.ndarray, best: np.ndarray) -> str:
        """Why a solve failed: the condition numbers of the closure Jacobian blocks (:meth:`conditioning`) at the
        start and at the closest configuration reached, the worse one named (a singularity on the way)."""
        figures = {}
        for label, q in (("start", start), ("closest configuration reached", best)):
            self.closures.linearize(q)
            figures[label] = self.conditioning(self.closures.last_jacobian(), q)
        kind, where = max(((k, w) for w, c in figures.items() for k in c), key=lambda kw: figures[kw[1]][kw[0]])
        worst = figures[where][kind]
        near = (f"near a {kind} singularity (condition number {worst:.3g} at the {where}, limit "
                f"{self.max_condition:.3g})" if worst >= self.max_condition else
                f"no singularity at the start or the closest configuration (worst condition number {worst:.3g}, "
                f"{kind}): the values may be out of reach")
        shown = "; ".join(f"{w}: " + ", ".join(f"{k} {c:.3g}" for k, c in cond.items()) for w, cond in figures.items())
        return f"{near}; condition numbers {shown}; closest configuration {self.describe(best)}"

    def _newton_frame(
        self, task: FrameTask, values: np.ndarray, q: np.ndarray
    ) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
        """Newton on ``[phi(q); x(q) - values] = 0`` with ``[K; J_x]``; internal motions
        (``[K; J_x]`` wide) take the minimum-norm step, i.e. stay where they are."""
        residual_norm = task_norm = math.inf
        for iteration in range(self.max_iterations + 1):
            residual, jacobian = self.closures.residual_and_jacobian(q)
            error = task.error(q, values)
            residual_norm, task_norm = _max_abs(residual), _max_abs(error)
            if residual_norm <= self.tolerance and task_norm <= 1e-10:
                return q, iteration, residual, jacobian
            if iteration == self.max_iterations:
                break
            stacked = np.vstack([jacobian, task.jacobian(q)])
            step = _solve_or_minimum_norm(stacked, -np.concatenate([residual, error]))
            if not np.all(np.isfinite(step)):
                break
            q += step
        raise ConvergenceError(
            f"the inverse problem did not converge in {self.max_iterations} iterations (max closure "
            f"error {residual_norm:.3g}, max task error {task_norm:.3g}); last configuration {self.describe(q)}"
        )

    # ------------------------------------------------------------------ solving
    def solve(
        self,
        indices: Sequence[int] | FrameTask,
        values: Sequence[float],
        *,
        start: np.ndarray,
        home: np.ndarray,
        branch_violations: Callable[[np.ndarray], list[str]],
        checks: bool = True,
    ) -> Solution:
        """Solve with ``q[indices] = values`` on the robot's branch.

        Args:
            indices: given coordinates (k,).
            values: their values (k,), rad or m.
            start: warm start (nv,), e.g. the previous solution.
            home: a closed configuration on the robot's branch (nv,).
            branch_violations: returns the mode conditions a configuration
                violates (empty when it is on the branch).
            checks: check the branch and the conditioning of the answer (raising
                :class:`WorkingModeError`, :class:`SingularityError`). Batch callers
                warm-starting along a trajectory may check every few samples only;
                without checks ``conditioning`` is empty.
        """
        if not isinstance(indices, FrameTask):
            indices = np.asarray(indices, dtype=int)
        values = np.asarray(values, dtype=float)
        expected = indices.size if isinstance(indices, FrameTask) else len(indices)
        if values.shape != (expected,) or not np.isfinite(values).all():
            raise ConvergenceError(f"given values must be {expected} finite numbers, got {values}")
        total = 0
        try:
            q, total, residual, jacobian = self.newton(indices, values, start, with_jacobian=checks)
            on_branch = not checks or not branch_violations(q)
        except ConvergenceError:
            on_branch = False
        if not on_branch:
            q, total, residual, jacobian = self._continuation(indices, values, home, total)
            violations = branch_violations(q)
            if violations:
                raise WorkingModeError(
                    f"the solution is on another branch than the robot's: violates {violations}; "
                    f"configuration {self.describe(q)}"
                )
        q = self.wrapped(q, home)
        conditioning = self.conditioning(jacobian, q) if checks else {}
        if checks:
            for kind, condition in conditioning.items():
                if not condition < self.max_condition:
                    raise SingularityError(
                        f"{kind} singularity: condition number {condition:.3g} of the closure "
                        f"Jacobian block exceeds {self.max_condition:.3g} at {self.describe(q)}",
                        kind=kind,
                        condition=condition,
                    )
        return Solution(
            q=q,
            iterations=total,
            residual=_max_abs(residual),
            conditioning=conditioning,
        )

    def _continuation(
        self, indices: np.ndarray, values: np.ndarray, home: np.ndarray, used: int
    ) -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
        if isinstance(indices, FrameTask):
            start_values = indices.values(home)
            offset = indices.error(home, values) * -1.0 if not indices.full_rotation else values - start_values
        else:
            start_values = home[indices]
            offset = self._offset(values, start_values, indices)
        steps = max(1, math.ceil(np.max(np.abs(offset), initial=0.0) / self.continuation_step))
        q = np.array(home, dtype=float)
        total = used
        for k in range(1, steps + 1):
            try:
                q, iterations, residual, jacobian = self.newton(
                    indices, start_values + offset * (k / steps), q
                )
            except ConvergenceError as error:
                raise ConvergenceError(
                    f"no closed configuration reached for the given values {values.tolist()} "
                    f"(continuation from home failed at step {k}/{steps}: {error})"
                ) from error
            total += iterations
        return q, total, residual, jacobian
