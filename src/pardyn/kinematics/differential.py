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
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pardyn.kinematics.closure import LoopClosures

__all__ = ["DifferentialKinematics"]


class DifferentialKinematics:
    """Velocity and acceleration maps of a closed-loop robot.

    Args:
        closures: the closure equations.
        task_indices: coordinates of the platform's virtual chain (n,).
    """

    def __init__(self, closures: LoopClosures, task_indices: Sequence[int]) -> None:
        self.closures = closures
        self.nv = closures.model.nv
        self.task_indices = np.asarray(task_indices, dtype=int)
        self.leg_indices = np.setdiff1d(np.arange(self.nv), self.task_indices)

    def task_velocity_map(self, q: np.ndarray) -> np.ndarray:
        """``W(q)`` such that ``qdot = W xdot``, shape (nv, n)."""
        return self.velocity_map_from(self.closures.jacobian(q))

    def maps(self, q: np.ndarray, qdot: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(K, W, w)`` from one kinematic pass: the closure Jacobian (m, nv), the
        velocity map (nv, n) and the acceleration bias (nv,), ``qddot = W xddot + w``."""
        jacobian, rate = self.closures.jacobian_and_rate(q, qdot)
        return jacobian, self.velocity_map_from(jacobian), self.bias_from(jacobian, rate @ qdot)

    def velocity_map_from(self, jacobian: np.ndarray) -> np.ndarray:
        """``W`` from a closure Jacobian ``K`` (m, nv) already evaluated, shape (nv, n)."""
        velocity_map = np.zeros((self.nv, len(self.task_indices)))
        velocity_map[self.task_indices] = np.eye(len(self.task_indices))
        velocity_map[self.leg_indices] = -np.linalg.solve(
            jacobian[:, self.leg_indices], jacobian[:, self.task_indices]
        )
        return velocity_map

    def inverse_jacobian(self, q: np.ndarray, indices: Sequence[int]) -> np.ndarray:
        """``J_I = W[I]``: ``qdot_I = J_I xdot``, shape (|I|, n). For I = actuated: eq. (20)."""
        return self.task_velocity_map(q)[np.asarray(indices, dtype=int)]

    def velocities_from_task(self, q: np.ndarray, task_velocity: np.ndarray) -> np.ndarray:
        """Every joint velocity from the task velocity, shape (nv,)."""
        return self.task_velocity_map(q) @ np.asarray(task_velocity, dtype=float)

    def velocities_from(self, q: np.ndarray, indices: Sequence[int], velocity: np.ndarray) -> np.ndarray:
        """Every joint velocity from measured velocities ``qdot_I``, shape (nv,). Eqs. (21), (64)."""
        velocity_map = self.task_velocity_map(q)
        task_velocity = np.linalg.lstsq(
            velocity_map[np.asarray(indices, dtype=int)], np.asarray(velocity, dtype=float), rcond=None
        )[0]
        return velocity_map @ task_velocity

    def acceleration_bias(self, q: np.ndarray, qdot: np.ndarray) -> np.ndarray:
        """``w(q, qdot)``: joint accelerations when ``xddot = 0``, shape (nv,)."""
        return self.maps(q, qdot)[2]

    def bias_from(self, jacobian: np.ndarray, drift: np.ndarray) -> np.ndarray:
        """``w`` from ``K`` (m, nv) and the drift ``Kdot qdot`` (m,) already evaluated, shape (nv,)."""
        bias = np.zeros(self.nv)
        bias[self.leg_indices] = -np.linalg.solve(jacobian[:, self.leg_indices], drift)
        return bias

    def task_states(
        self, q: np.ndarray, task_velocity: np.ndarray, task_acceleration: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(W, qdot, qddot)`` at ``q`` from the task rates: eqs. (9)-(10) with one Jacobian evaluation."""
        jacobian = self.closures.jacobian(q)
        velocity_map = self.velocity_map_from(jacobian)
        qdot = velocity_map @ np.asarray(task_velocity, dtype=float)
        bias = self.bias_from(jacobian, self.closures.drift(q, qdot))
        return velocity_map, qdot, velocity_map @ np.asarray(task_acceleration, dtype=float) + bias

    def states_from(
        self, q: np.ndarray, indices: Sequence[int], velocity: np.ndarray, acceleration: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(qdot, qddot)`` (nv,) each from measured ``qdot_I``, ``qddot_I``: eqs. (21), (24), one Jacobian evaluation."""
        indices = np.asarray(indices, dtype=int)
        jacobian = self.closures.jacobian(q)
        velocity_map = self.velocity_map_from(jacobian)
        measured_map = velocity_map[indices]  # J_I (|I|, n), full column rank away from singularities
        pseudo_inverse = np.linalg.solve(measured_map.T @ measured_map, measured_map.T)  # J_I^+ (n, |I|), eq. (22)
        qdot = velocity_map @ (pseudo_inverse @ np.asarray(velocity, dtype=float))
        bias = self.bias_from(jacobian, self.closures.drift(q, qdot))
        task_acceleration = pseudo_inverse @ (np.asarray(acceleration, dtype=float) - bias[indices])
        return qdot, velocity_map @ task_acceleration + bias

    def accelerations_from_task(
        self, q: np.ndarray, qdot: np.ndarray, task_acceleration: np.ndarray
    ) -> np.ndarray:
        """Every joint acceleration from the task acceleration, shape (nv,). Eq. (10)."""
        _, velocity_map, bias = self.maps(q, qdot)
        return velocity_map @ np.asarray(task_acceleration, dtype=float) + bias

    def accelerations_from(
        self, q: np.ndarray, qdot: np.ndarray, indices: Sequence[int], acceleration: np.ndarray
    ) -> np.ndarray:
        """Every joint acceleration from measured accelerations ``qddot_I``, shape (nv,). Eq. (24)."""
        indices = np.asarray(indices, dtype=int)
        _, velocity_map, bias = self.maps(q, qdot)
        task_acceleration = np.linalg.lstsq(
            velocity_map[indices], np.asarray(acceleration, dtype=float) - bias[indices], rcond=None
        )[0]
        return velocity_map @ task_acceleration + bias
