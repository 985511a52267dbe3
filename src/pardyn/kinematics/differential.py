"""Velocities and accelerations of every joint from the independent coordinates.

The generic form of the DualV paper's relations (eqs. 9-13 and 20-24). Split
the tree coordinates into the task coordinates ``x`` (the platform's virtual
chain) and the leg coordinates ``D`` (every other joint). Differentiating the
closure equations ``phi(q) = 0``:

    K_D qdot_D + K_x xdot = 0
        => qdot = W xdot,   W = [I ; -K_D^-1 K_x]          # (nv, n), eq. (9): J_k^-1 J_tk
    K qddot + k(q, qdot) = 0,  k = Kdot qdot
        => qddot = W xddot + w,  w = [0 ; -K_D^-1 k]        # eq. (10)

Measured coordinates ``I`` (actuated, plus sensed passive joints) relate to the
task by the inverse Jacobian ``J_I = W[I]`` (|I|, n), eq. (20) for I = actuated:

    qdot_I = J_I xdot            => xdot = J_I^+ qdot_I                     # eqs. (21)-(22)
    qddot_I = J_I xddot + w_I    => xddot = J_I^+ (qddot_I - w_I)           # eq. (24)

with the pseudo-inverse ``J_I^+ = (J_I^T J_I)^-1 J_I^T``: exact for consistent
measurements, least squares otherwise (actuation-redundant robots, redundant
sensors). All arrays are in the tree's coordinate order (rad, m, per second).

Robots whose task is not a set of tree joints (a frame's pose,
:mod:`pardyn.kinematics.task`; or actuated joints plus internal motions no
motor drives) use a *chart* for the linear algebra: ``n_c`` independent joints
``C`` (the task joints when there are, else chosen numerically) with the legs
``D`` = every other joint, so that ``K_D`` stays square and invertible. The
task maps then come from the stacked equations

    B = [K; G; S_i]  (nv, nv):  B W_x = [0; I; 0],  B w_x = -[k; j_x; 0]

with ``G = J_x`` (frame task rows, ``xddot = J_x qddot + j_x``) and ``S_i``
selecting the internal chart coordinates, held still (zero velocity and
acceleration) in every task map.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pardyn.kinematics.closure import LoopClosures
from pardyn.kinematics.solver import solve_regular
from pardyn.kinematics.task import FrameTask

__all__ = ["DifferentialKinematics"]


class DifferentialKinematics:
    """Velocity and acceleration maps of a closed-loop robot.

    Args:
        closures: the closure equations.
        task_indices: coordinates of the platform's virtual chain (n,), or of
            the tree joints that are the task (e.g. the actuated joints).
        chart_indices: independent joints for the linear algebra, task joints
            first when the task is made of joints, internal ones last; the task
            joints by default.
        frame_task: task coordinates read from a frame instead of joints.
        internal: how many chart coordinates (the last ones) are internal
            motions, held still by the task maps.
    """

    def __init__(
        self,
        closures: LoopClosures,
        task_indices: Sequence[int] = (),
        *,
        chart_indices: Sequence[int] | None = None,
        frame_task: FrameTask | None = None,
        internal: int = 0,
    ) -> None:
        self.closures = closures
        self.nv = closures.model.nv
        self.task_indices = np.asarray(task_indices, dtype=int)
        self.chart_indices = np.asarray(self.task_indices if chart_indices is None else chart_indices, dtype=int)
        self.leg_indices = np.setdiff1d(np.arange(self.nv), self.chart_indices)
        self._chart_identity = np.zeros((self.nv, len(self.chart_indices)))  # [I; 0] rows of W_c, (nv, n_c)
        self._chart_identity[self.chart_indices, np.arange(len(self.chart_indices))] = 1.0
        self.frame_task = frame_task
        self.internal = int(internal)
        self.internal_indices = self.chart_indices[len(self.chart_indices) - self.internal:]
        self.n_task = frame_task.size if frame_task is not None else len(self.task_indices)
        # Task maps are the chart maps restricted to the task joints when the task joints
        # lead the chart (virtual chains, actuated tasks): no extra linear algebra.
        self._task_is_chart = frame_task is None and np.array_equal(
            self.chart_indices[: self.n_task], self.task_indices
        )
        # compiled kernels (pardyn.kernels.CompiledSolver, set by the robot that loaded them): their
        # ``states(indices, q, rates, accelerations=None, velocity_map=False)`` answers (qdot, qddot, W)
        # or None (then the Python path below answers)
        self.compiled = None

    # ------------------------------------------------------------- chart maps
    def velocity_map_from(self, jacobian: np.ndarray, legs: np.ndarray | None = None) -> np.ndarray:
        """Chart map ``W_c`` from a closure Jacobian ``K`` (m, nv): ``qdot = W_c qdot_C``, shape (nv, n_c).
        ``legs``: ``K_D = K[:, leg_indices]`` when the caller has it."""
        velocity_map = self._chart_identity.copy()
        legs = jacobian[:, self.leg_indices] if legs is None else legs
        velocity_map[self.leg_indices] = -solve_regular(legs, jacobian[:, self.chart_indices])
        return velocity_map

    def bias_from(self, jacobian: np.ndarray, drift: np.ndarray, legs: np.ndarray | None = None) -> np.ndarray:
        """Chart bias ``w_c`` from ``K`` (m, nv) and the drift ``Kdot qdot`` (m,), shape (nv,).
        ``legs``: ``K_D = K[:, leg_indices]`` when the caller has it."""
        bias = np.zeros(self.nv)
        bias[self.leg_indices] = -solve_regular(jacobian[:, self.leg_indices] if legs is None else legs, drift)
        return bias

    def maps(self, q: np.ndarray, qdot: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(K, W_c, w_c)`` from one kinematic pass: the closure Jacobian (m, nv), the
        chart velocity map (nv, n_c) and bias (nv,), ``qddot = W_c qddot_C + w_c``.

        For robots whose task is the chart (virtual chains) these are the task maps. ``K_D`` is taken once and
        factorised twice (one solve with both right-hand sides would change the last bits of the answers)."""
        jacobian, rate = self.closures.jacobian_and_rate(q, qdot)
        legs = jacobian[:, self.leg_indices]
        return jacobian, self.velocity_map_from(jacobian, legs), self.bias_from(jacobian, rate @ qdot, legs)

    # -------------------------------------------------------------- task maps
    def _stacked(self, jacobian: np.ndarray, task_jacobian: np.ndarray) -> np.ndarray:
        """``B = [K; G; S_i]`` (nv, nv) of the module docstring."""
        internal = np.zeros((self.internal, self.nv))
        internal[np.arange(self.internal), self.internal_indices] = 1.0
        return np.vstack([jacobian, task_jacobian, internal])

    def _task_rows(self, q: np.ndarray) -> np.ndarray:
        if self.frame_task is not None:
            return self.frame_task.jacobian(q)
        rows = np.zeros((self.n_task, self.nv))
        rows[np.arange(self.n_task), self.task_indices] = 1.0
        return rows

    def _task_map_and_bias(
        self, q: np.ndarray, qdot: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """``W_x`` (nv, n) and, given ``qdot``, ``w_x`` (nv,)."""
        if qdot is None:
            jacobian = self.closures.jacobian(q)
            rate = None
        else:
            jacobian, rate = self.closures.jacobian_and_rate(q, qdot)
        if self._task_is_chart:
            velocity_map = self.velocity_map_from(jacobian)[:, : self.n_task]
            bias = None if rate is None else self.bias_from(jacobian, rate @ qdot)
            return velocity_map, bias
        if self.frame_task is None:
            task_jacobian, task_drift = self._task_rows(q), np.zeros(self.n_task)
        elif qdot is None:
            task_jacobian, task_drift = self.frame_task.jacobian(q), None
        else:
            task_jacobian, task_drift = self.frame_task.jacobian_and_drift(q, qdot)
        stacked = self._stacked(jacobian, task_jacobian)
        m = jacobian.shape[0]
        right = np.zeros((self.nv, self.n_task))
        right[m : m + self.n_task] = np.eye(self.n_task)
        velocity_map = np.linalg.solve(stacked, right)
        if rate is None:
            return velocity_map, None
        drift = np.zeros(self.nv)
        drift[:m] = rate @ qdot
        drift[m : m + self.n_task] = task_drift
        return velocity_map, -np.linalg.solve(stacked, drift)

    def task_velocity_map(self, q: np.ndarray) -> np.ndarray:
        """``W(q)`` such that ``qdot = W xdot``, shape (nv, n)."""
        return self._task_map_and_bias(q, None)[0]

    def task_maps(self, q: np.ndarray, qdot: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(W, w)``: ``qdot = W xdot``, ``qddot = W xddot + w``; (nv, n) and (nv,)."""
        velocity_map, bias = self._task_map_and_bias(q, qdot)
        return velocity_map, bias

    def task_map_rate(self, q: np.ndarray, qdot: np.ndarray, velocity_map: np.ndarray) -> np.ndarray:
        """``Wdot = dW/dt`` along ``qdot`` (nv, n): differentiating ``B W = [0; I; 0]``,
        ``Wdot = -B^-1 [Kdot W; Gdot W; 0]`` (``-K_D^-1 Kdot W`` on the legs for joint tasks)."""
        jacobian, rate = self.closures.jacobian_and_rate(q, qdot)
        if self._task_is_chart:
            out = np.zeros_like(velocity_map)
            out[self.leg_indices] = -np.linalg.solve(jacobian[:, self.leg_indices], rate @ velocity_map)
            return out
        if self.frame_task is None:
            task_jacobian, task_rate = self._task_rows(q), np.zeros((self.n_task, self.nv))
        else:
            task_jacobian = self.frame_task.jacobian(q)
            task_rate = self.frame_task.jacobian_rate(q, qdot)
        stacked = self._stacked(jacobian, task_jacobian)
        right = np.zeros((self.nv, velocity_map.shape[1]))
        m = jacobian.shape[0]
        right[:m] = rate @ velocity_map
        right[m : m + self.n_task] = task_rate @ velocity_map
        return -np.linalg.solve(stacked, right)

    def inverse_jacobian(self, q: np.ndarray, indices: Sequence[int]) -> np.ndarray:
        """``J_I = W[I]``: ``qdot_I = J_I xdot``, shape (|I|, n). For I = actuated: eq. (20)."""
        return self.task_velocity_map(q)[np.asarray(indices, dtype=int)]

    def velocities_from_task(self, q: np.ndarray, task_velocity: np.ndarray) -> np.ndarray:
        """Every joint velocity from the task velocity, shape (nv,)."""
        if self.compiled is not None and self.frame_task is None and not self.internal:
            answer = self.compiled.states(self.task_indices, q, task_velocity)
            if answer is not None:
                return answer[0]
        return self.task_velocity_map(q) @ np.asarray(task_velocity, dtype=float)

    def velocities_from(self, q: np.ndarray, indices: Sequence[int], velocity: np.ndarray) -> np.ndarray:
        """Every joint velocity from measured velocities ``qdot_I``, shape (nv,). Eqs. (21), (64)."""
        if self.compiled is not None:
            answer = self.compiled.states(indices, q, velocity)
            if answer is not None:
                return answer[0]
        velocity_map = self.task_velocity_map(q)
        task_velocity = np.linalg.lstsq(
            velocity_map[np.asarray(indices, dtype=int)], np.asarray(velocity, dtype=float), rcond=None
        )[0]
        return velocity_map @ task_velocity

    def acceleration_bias(self, q: np.ndarray, qdot: np.ndarray) -> np.ndarray:
        """``w(q, qdot)``: joint accelerations when ``xddot = 0``, shape (nv,)."""
        return self.task_maps(q, qdot)[1]

    def task_states(
        self, q: np.ndarray, task_velocity: np.ndarray, task_acceleration: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(W, qdot, qddot)`` at ``q`` from the task rates: eqs. (9)-(10)."""
        if self.compiled is not None and self.frame_task is None and not self.internal:
            answer = self.compiled.states(self.task_indices, q, task_velocity, task_acceleration, velocity_map=True)
            if answer is not None:
                return answer[2], answer[0], answer[1]
        if self._task_is_chart:  # one Jacobian evaluation
            jacobian = self.closures.jacobian(q)
            velocity_map = self.velocity_map_from(jacobian)[:, : self.n_task]
            qdot = velocity_map @ np.asarray(task_velocity, dtype=float)
            bias = self.bias_from(jacobian, self.closures.drift(q, qdot))
        else:
            velocity_map = self.task_velocity_map(q)
            qdot = velocity_map @ np.asarray(task_velocity, dtype=float)
            _, bias = self.task_maps(q, qdot)
        return velocity_map, qdot, velocity_map @ np.asarray(task_acceleration, dtype=float) + bias

    def states_from(
        self, q: np.ndarray, indices: Sequence[int], velocity: np.ndarray, acceleration: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(qdot, qddot)`` (nv,) each from measured ``qdot_I``, ``qddot_I``: eqs. (21), (24)."""
        if self.compiled is not None:
            answer = self.compiled.states(indices, q, velocity, acceleration)
            if answer is not None:
                return answer[0], answer[1]
        indices = np.asarray(indices, dtype=int)
        jacobian = self.closures.jacobian(q) if self._task_is_chart else None
        velocity_map = (
            self.velocity_map_from(jacobian)[:, : self.n_task] if self._task_is_chart else self.task_velocity_map(q)
        )
        measured_map = velocity_map[indices]  # J_I (|I|, n), full column rank away from singularities
        pseudo_inverse = solve_regular(measured_map.T @ measured_map, measured_map.T)  # J_I^+ (n, |I|), eq. (22)
        qdot = velocity_map @ (pseudo_inverse @ np.asarray(velocity, dtype=float))
        if self._task_is_chart:  # one Jacobian evaluation
            bias = self.bias_from(jacobian, self.closures.drift(q, qdot))
        else:
            _, bias = self.task_maps(q, qdot)
        task_acceleration = pseudo_inverse @ (np.asarray(acceleration, dtype=float) - bias[indices])
        return qdot, velocity_map @ task_acceleration + bias

    def accelerations_from_task(
        self, q: np.ndarray, qdot: np.ndarray, task_acceleration: np.ndarray
    ) -> np.ndarray:
        """Every joint acceleration from the task acceleration, shape (nv,). Eq. (10)."""
        velocity_map, bias = self.task_maps(q, qdot)
        return velocity_map @ np.asarray(task_acceleration, dtype=float) + bias

    def accelerations_from(
        self, q: np.ndarray, qdot: np.ndarray, indices: Sequence[int], acceleration: np.ndarray
    ) -> np.ndarray:
        """Every joint acceleration from measured accelerations ``qddot_I``, shape (nv,). Eq. (24)."""
        indices = np.asarray(indices, dtype=int)
        velocity_map, bias = self.task_maps(q, qdot)
        task_acceleration = np.linalg.lstsq(
            velocity_map[indices], np.asarray(acceleration, dtype=float) - bias[indices], rcond=None
        )[0]
        return velocity_map @ task_acceleration + bias
