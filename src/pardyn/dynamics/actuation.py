"""Actuation maps of a closed-loop robot from one pinocchio pass: the hot path of the dynamics.

Every closed-loop quantity of the dynamics that is linear in the actuator efforts
depends on the closure Jacobian ``K`` (m, nv) only through its row space
``null(K)`` = the closed-loop velocities:

    W = [I ; -K_D^-1 K_x]               (nv, n)   qdot = W xdot,          eq. (9)
    J = W[actuated]                      (n_a, n)  inverse Jacobian,       eq. (20)
    tau_a = J (J^T J)^-1 W^T tau_t       (n_a,)    minimum-norm torques,   eqs. (19), (26)
    tau* = J (J^T J)^-1 J^T tau          (n_a,)    internal stress removed, eq. (50)

so any ``K' = T K`` with ``T`` (m, m) invertible gives the same results. This
module builds such a ``K'`` straight from pinocchio's joint Jacobians in the world
frame ``D = data.J`` (6, nv) (spatial velocities at the world origin, one
``computeJointJacobians``), with no per-frame Jacobian call::

    D_c = D * s_c,   s_c = support(b) - support(a)   in {-1, 0, 1}^nv     # (6, nv), closure (a, b)
    K_c = rows C_c of X(p) D_c,   X(p) = [[I, -[p]x], [0, I]]              # exactly the rows of
                                                                           # J_b - J_a (LOCAL_WORLD_ALIGNED)

at a closed configuration (frames ``a`` and ``b`` at the same point ``p``). When
every angular row that ``-[p]x`` mixes into a selected linear row is selected too
or identically zero (6D loops; planar loops of robots whose joints all turn about
z), ``X(p)`` only adds selected rows to selected rows, and the rows ``C_c`` of
``D_c`` themselves span the same space: ``p`` is not needed. Otherwise (3D ball
and 2D loops) ``p`` comes from ``data.oMi`` (one placement per loop).

:class:`ActuationMaps` applies to robots whose task coordinates are tree joints
leading the chart, with no internal motion and no distance loop
(``ActuationMaps.supported``); the callers keep their generic path for the others
(:meth:`pardyn.kinematics.differential.DifferentialKinematics.task_velocity_map`).
The linear algebra goes to LAPACK directly (``dgesv`` through
:func:`pardyn.kinematics.solver.solve_regular`: numpy's ``solve`` costs 6 us of Python per call on these sizes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.kinematics.solver import solve_regular

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["ActuationMaps"]

_CROSS_PARTNERS = {0: (4, 5), 1: (3, 5), 2: (3, 4)}
"""Angular rows that ``-[p]x`` mixes into linear row x, y, z: ``(w x p)_x = w_y p_z - w_z p_y`` ..."""


def _support_mask(model: pin.Model, joint: int) -> np.ndarray:
    mask = np.zeros(model.nv)
    for ancestor in model.supports[joint]:
        if ancestor > 0:
            start = model.joints[ancestor].idx_v
            mask[start : start + model.joints[ancestor].nv] = 1.0
    return mask


class ActuationMaps:
    """``K'``, ``W`` and the minimum-norm actuator solves of one robot (module docstring).

    The minimum-norm solves are one LAPACK call on the KKT system of eq. (26)
    (``E`` = diag of the actuated joints, (nv, nv)):

        [E  K'^T] [y     ]   [b]        tau_a = y[actuated]                     # (nv + m,)
        [K'  0  ] [lambda] = [0],

    i.e. ``y = W xi`` with ``J^T J xi = W^T b``: ``b = tau_t`` gives the minimum-norm
    torques ``J (J^T J)^-1 W^T tau_t`` (eq. 26), ``b = S_a^T tau`` the eq. (50) projection
    ``J (J^T J)^-1 J^T tau``. It is regular wherever ``K_D`` and ``J^T J`` are.

    Works on its own ``pin.Data`` of ``robot.model`` (kinematics only: the dynamic
    parameters do not matter).

    Args:
        robot: the robot.

    Attributes:
        supported: whether this fast path applies to the robot (module docstring); the
            other methods must not be called otherwise.
    """

    def __init__(self, robot: Robot) -> None:
        self.robot = robot
        self.model = robot.model
        self.data = self.model.createData()
        differential = robot.differential
        self.nv = nv = self.model.nv
        self.n = differential.n_task
        self.actuated = np.asarray(robot.actuated_indices, dtype=int)
        self.n_actuated = len(self.actuated)
        self.legs = np.asarray(differential.leg_indices, dtype=int)
        self.chart = np.asarray(differential.chart_indices, dtype=int)
        self.size = m = robot.closures.size
        closures = robot.closures.closures
        self.supported = bool(
            differential._task_is_chart  # noqa: SLF001 (the same test as the generic path)
            and differential.internal == 0
            and differential.frame_task is None
            and len(self.chart) == self.n
            and m == len(self.legs)
            and m > 0
            and all(closure.type != "distance" for closure in closures)
            and not robot.closures.couplings  # joint couplings: the generic path
        )
        if not self.supported:
            return
        model = self.model
        rows, signs, points = [], [], []
        for closure in closures:
            frame_a, frame_b = (model.frames[model.getFrameId(name)] for name in closure.frames)
            sign = _support_mask(model, frame_b.parentJoint) - _support_mask(model, frame_a.parentJoint)
            components = list(closure.components)
            if self._needs_point(components):
                points.append((len(rows), components, frame_b.parentJoint, frame_b.placement.translation.copy()))
            rows += components
            signs += [sign] * len(components)
        # columns ordered [legs, chart]; K'[i, j] = D[rows[i], order[j]] * signs, read from the
        # C-contiguous D^T (pinocchio's data.J is column-major) by one np.take
        self._order = np.concatenate([self.legs, self.chart])
        self._identity_order = bool(np.array_equal(self._order, np.arange(nv)))
        self._flat = self._order[None, :] * 6 + np.asarray(rows, dtype=int)[:, None]  # (m, nv)
        order_signs = np.asarray(signs).reshape(m, nv)[:, self._order]
        self._signs = order_signs  # (m, nv)
        # loops whose rows need the point p: rows K'[target] += (w x p)[source] of (c, 3, nv)
        self._point_joints = [joint for _, _, joint, _ in points]
        self._point_placements = [placement for _, _, _, placement in points]
        self._point_signs = order_signs[[start for start, _, _, _ in points]][:, None, :]  # (c, 1, nv)
        self._point_target = np.array([start + k for start, comps, _, _ in points
                                       for k, c in enumerate(comps) if c < 3], dtype=int)
        self._point_source = np.array([3 * i + c for i, (_, comps, _, _) in enumerate(points)
                                       for c in comps if c < 3], dtype=int)
        self._bind_views()
        self._point_offsets = np.array(self._point_placements).reshape(-1, 3, 1)  # frame origin in its joint, (c, 3, 1)
        self._point_scatter = np.zeros((m, 3 * len(points)))  # K'[target] += mixed[source] as one product
        self._point_scatter[self._point_target, self._point_source] = 1.0
        levi_civita = np.zeros((3, 3, 3))
        for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
            levi_civita[i, j, k], levi_civita[i, k, j] = 1.0, -1.0
        self._cross = levi_civita.transpose(2, 0, 1).reshape(3, 9)  # p @ this = [p_k eps_ijk]_ij, (w x p)_i
        self._leg_prefix = bool(np.array_equal(self.legs, np.arange(m)))  # W = [W_legs; I]: a stack
        self._identity = np.eye(self.n)
        self._template = np.vstack([np.zeros((m, self.n)), self._identity])  # W in the order [legs, chart]
        self._inverse_order = np.argsort(self._order)
        # the KKT system in the permuted coordinates y[order] of K'; square [S_a^T K'^T] without redundancy
        self._actuated_rows = self._inverse_order[self.actuated]  # positions of the actuators in y[order]
        self.redundant = self.n_actuated > self.n
        if self.redundant:
            self._kkt = np.zeros((nv + m, nv + m), order="F")
            self._kkt[self._actuated_rows, self._actuated_rows] = 1.0
        else:  # unknowns [tau_a, lambda]
            self._kkt = np.zeros((nv, nv), order="F")
            self._kkt[self._actuated_rows, np.arange(self.n_actuated)] = 1.0
        self._rhs = np.zeros((self._kkt.shape[0], 2))
        self._leading = np.arange(self.n_actuated)
        self._maps_rhs = np.zeros((m, self.n + 1))
        self.point_free = not self._point_joints  # :meth:`maps` applies


    _VIEWS = ("_placement_owners", "_point_rotations", "_point_origins")

    def _bind_views(self) -> None:
        """Live views of the joints' placements in ``self.data`` (pinocchio writes them in place)."""
        self._placement_owners = self.data.oMi.tolist()
        self._point_rotations = [self._placement_owners[joint].rotation for joint in self._point_joints]
        self._point_origins = [self._placement_owners[joint].translation for joint in self._point_joints]

    def __getstate__(self) -> dict:
        # views of this process's data: a copy would read a stale placement (workers of pardyn.distributed)
        return {k: v for k, v in self.__dict__.items() if k not in self._VIEWS}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if self.supported:
            self._bind_views()
    def _needs_point(self, components: list[int]) -> bool:
        """Whether ``X(p)`` mixes an unselected, not identically zero angular row into a selected linear one."""
        partners = {row for c in components if c < 3 for row in _CROSS_PARTNERS[c]} - set(components)
        if not partners:
            return False
        # angular rows of the joint Jacobians that are zero for every joint (planar robots: wx, wy)
        model, data = self.model, self.data
        bound = np.full(model.nq, np.pi)
        for q in [self.robot.home] + [pin.randomConfiguration(model, -bound, bound) for _ in range(3)]:
            pin.computeJointJacobians(model, data, q)
            if any(np.any(np.abs(data.J[row]) > 1e-12) for row in partners):
                return True
        return False

    # ------------------------------------------------------------ per configuration
    def constraint_jacobian(self, q: np.ndarray) -> np.ndarray:
        """``K'`` (m, nv), columns in the order ``[legs, chart]`` (module docstring), at a closed ``q``.

        Row-equivalent to ``robot.closures.jacobian(q)[:, [legs, chart]]``.
        """
        pin.computeJointJacobians(self.model, self.data, q)
        return self.last_constraint_jacobian()

    def _picked(self, joint_matrix: np.ndarray) -> np.ndarray:
        """The signed loop rows (m, nv) of a (6, nv) world joint matrix (``data.J`` or ``data.dJ``, column-major:
        its transpose is C-contiguous, and the ``take`` method costs a third of ``np.take``)."""
        rows = joint_matrix.T.take(self._flat)
        rows *= self._signs
        return rows

    def _points(self) -> np.ndarray:
        """The loops' points ``p`` (c, 3) from the live joint placements of ``self.data``."""
        points = (np.array(self._point_rotations) @ self._point_offsets)[:, :, 0]
        points += self._point_origins
        return points

    def last_constraint_jacobian(self) -> np.ndarray:
        """:meth:`constraint_jacobian` at the ``q`` of the last ``computeJointJacobians`` on ``self.data``."""
        joint_jacobians = self.data.J  # (6, nv)
        jacobian = self._picked(joint_jacobians)
        if self._point_joints:
            # rows of X(p) D_c: the linear rows plus (w x p) per column, w the loop's angular rows
            points = self._points()
            cross = (points @ self._cross).reshape(-1, 3, 3)  # (c, 3, 3): (w x p) = cross @ w
            angular = joint_jacobians[3:] if self._identity_order else joint_jacobians[3:, self._order]
            mixed = (cross @ (angular * self._point_signs)).reshape(-1, self.nv)  # (3 c, nv)
            jacobian += self._point_scatter @ mixed
        return jacobian

    def velocity_map_from(self, jacobian: np.ndarray) -> np.ndarray:
        """``W`` (nv, n) from ``K'`` of :meth:`constraint_jacobian`: ``W[chart] = I``, ``W[legs] = -K_D^-1 K_x``."""
        m = self.size
        legs = solve_regular(jacobian[:, :m], jacobian[:, m:])
        velocity_map = self._template.copy()  # [0; I]
        np.negative(legs, out=velocity_map[:m])
        return velocity_map if self._leg_prefix else velocity_map[self._inverse_order]

    def velocity_map(self, q: np.ndarray) -> np.ndarray:
        """``W(q)`` (nv, n), equal to ``robot.differential.task_velocity_map(q)`` at a closed ``q``."""
        return self.velocity_map_from(self.constraint_jacobian(q))

    def maps(self, q: np.ndarray, qdot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(W, w)`` (nv, n), (nv,): ``qdot = W xdot``, ``qddot = W xddot + w`` (eqs. 9-10), loops without point
        (:attr:`point_free`) only.

        One ``computeJointJacobiansTimeVariation``: ``K'`` from ``D``, ``K'dot`` from ``Ddot`` by the same rows,
        and ``[W_legs, w_legs] = -K'_D^-1 [K'_x, K'dot qdot]`` in one solve. At a closed state
        (``K qdot = 0``) ``K'dot qdot = T Kdot qdot``; off it (RK4's inner stages) the two differ by
        ``Tdot K qdot``: another extension of the same constrained dynamics off the manifold, on which
        both agree (RK4 keeps its order)."""
        data = self.data
        pin.computeJointJacobiansTimeVariation(self.model, data, q, qdot)
        jacobian, rate = self._picked(data.J), self._picked(data.dJ)
        m, n = self.size, self.n
        right = self._maps_rhs
        right[:, :n] = jacobian[:, m:]
        right[:, n] = rate @ (qdot if self._identity_order else qdot[self._order])
        legs = solve_regular(jacobian[:, :m], right)
        velocity_map = self._template.copy()
        np.negative(legs[:, :n], out=velocity_map[:m])
        bias = np.zeros(self.nv)
        np.negative(legs[:, n], out=bias[:m])
        if self._leg_prefix:
            return velocity_map, bias
        return velocity_map[self._inverse_order], bias[self._inverse_order]

    # ------------------------------------------------------------ N configurations
    def constraint_jacobians(self, q: np.ndarray) -> np.ndarray:
        """:meth:`constraint_jacobian` of N closed configurations (N, nv): (N, m, nv).

        One ``computeJointJacobians`` per sample in Python, the rest batched."""
        count = q.shape[0]
        model, data = self.model, self.data
        stack = np.empty((count, self.nv, 6))  # D^T per sample
        joints = self._point_joints
        points = np.empty((count, len(joints), 3))
        for k in range(count):
            pin.computeJointJacobians(model, data, q[k])
            stack[k] = data.J.T
            if joints:
                points[k] = self._points()
        jacobian = stack.reshape(count, -1).take(self._flat, axis=1)  # (N, m, nv)
        jacobian *= self._signs
        if joints:
            cross = (points @ self._cross).reshape(count, -1, 3, 3)  # (N, c, 3, 3)
            angular = stack[:, self._order, 3:].transpose(0, 2, 1)[:, None] * self._point_signs  # (N, c, 3, nv)
            jacobian[:, self._point_target] += (cross @ angular).reshape(count, -1, self.nv)[:, self._point_source]
        return jacobian

    def velocity_maps(self, jacobian: np.ndarray) -> np.ndarray:
        """:meth:`velocity_map_from` of N ``K'`` (N, m, nv): ``W`` (N, nv, n)."""
        m = self.size
        legs = np.linalg.solve(jacobian[:, :, :m], -jacobian[:, :, m:])  # (N, m, n)
        stacked = np.concatenate([legs, np.broadcast_to(self._identity, (len(legs), self.n, self.n))], axis=1)
        return stacked if self._leg_prefix else stacked[:, self._inverse_order]

    # ------------------------------------------------------------ actuator solves
    def minimum_norm(self, jacobian: np.ndarray, tree: np.ndarray, actuated: np.ndarray | None = None) -> np.ndarray:
        """One KKT solve (class docstring) with ``K'`` of :meth:`constraint_jacobian`.

        Args:
            jacobian: ``K'`` (m, nv).
            tree: ``b`` (nv,), tree efforts in the tree's joint order (``tau_t``).
            actuated: optionally ``c`` (n_a,), actuator efforts whose eq. (50) projection is wanted.

        Returns:
            ``tau_a`` (n_a,) of least norm with ``W^T S_a^T tau_a = W^T b``, or with ``actuated`` a
            (2, n_a) array: that and the projection of ``c``.
        """
        rows = self._load(jacobian)
        rhs = self._rhs
        rhs[:self.nv, 0] = tree if self._identity_order else tree[self._order]
        if actuated is None:
            return solve_regular(self._kkt, rhs[:, 0])[rows]
        rhs[self._actuated_rows, 1] = actuated
        solution = solve_regular(self._kkt, rhs)
        rhs[self._actuated_rows, 1] = 0.0
        return solution[rows].T

    def _load(self, jacobian: np.ndarray) -> np.ndarray:
        """Write ``K'`` into the KKT matrix; the positions of ``tau_a`` in its solution."""
        nv, kkt = self.nv, self._kkt
        if self.redundant:
            kkt[:nv, nv:] = jacobian.T
            kkt[nv:, :nv] = jacobian
            return self._actuated_rows
        kkt[:, self.n_actuated:] = jacobian.T
        return self._leading

    def torques(self, q: np.ndarray, tree: np.ndarray) -> np.ndarray:
        """Minimum-norm actuator torques (n_a,) at a closed ``q`` (nv,) balancing ``tau_t`` (nv,): eqs. (19), (26).

        :meth:`constraint_jacobian` then :meth:`minimum_norm`, written out: the inverse dynamics' hot path,
        where each Python call layer costs ~0.3 us against constraintDynamics' 13 us."""
        data = self.data
        pin.computeJointJacobians(self.model, data, q)
        if self._point_joints:
            jacobian = self.last_constraint_jacobian()
        else:
            jacobian = data.J.T.take(self._flat)
            jacobian *= self._signs
        rows = self._load(jacobian)
        rhs = self._rhs[:, 0]
        rhs[:self.nv] = tree if self._identity_order else tree[self._order]
        return solve_regular(self._kkt, rhs)[rows]

    def project(self, jacobian: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Eq. (50) with ``K'`` of :meth:`constraint_jacobian`: ``tau*`` (n_a,), the least-norm torques with
        the same ``J^T tau`` (``tau`` (n_a,)); ``tau`` itself (a copy) without actuation redundancy."""
        if not self.redundant:
            return np.array(tau, dtype=float)
        rows = self._load(jacobian)
        rhs = self._rhs[:, 1]
        rhs[rows] = tau
        solution = solve_regular(self._kkt, rhs)
        rhs[rows] = 0.0
        return solution[rows]
