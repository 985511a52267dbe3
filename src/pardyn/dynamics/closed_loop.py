"""The reduced closed-loop model: inertia, Coriolis/centrifugal, gravity and friction terms.

What a computed-torque controller needs, in task coordinates and in joint
(actuated, or actuated + sensed passive) coordinates. Everything comes from
the tree terms of pinocchio (RNEA-based):

    tau_t = M(q) qddot + C_t(q, qdot) qdot + g(q) + f(qdot)       # (nv,)

(``M`` with the rotor inertias ``ia`` on its diagonal, ``C_t`` pinocchio's
Coriolis matrix, ``Mdot - 2 C_t`` skew, ``f`` the drive friction and offsets of
eq. 5) and the velocity map ``W`` of the loops (``qdot = W xdot``,
``qddot = W xddot + Wdot xdot``).

**Task coordinates** (``x``, n): with ``Gamma = W^T tau_t`` (eq. 30)

    Gamma = M_x xddot + C_x xdot + g_x + f_x                         # (n,)
    M_x = W^T M W,  C_x = W^T (C_t W + M Wdot),  g_x = W^T g,  f_x = W^T f

``M_x`` is symmetric positive definite (away from singularities) and
``Mdot_x - 2 C_x`` is skew-symmetric.

**Joint coordinates** ``q_I`` (the 3-RRR paper, Zubizarreta et al. 2010, eqs. 13-15,
26 and 58): ``I`` are the control coordinates, the actuated joints
(``I = a``) or the actuated plus sensed passive joints (the extended model of
eq. 58). With ``J_I = W[I]`` (|I|, n) and its pseudo-inverse
``J_I^+ = (J_I^T J_I)^-1 J_I^T`` (eq. 11):

    T   = W J_a^+        (nv, n_a)   qdot = T qdot_a                   eq. (13)
    T_q = W J_I^+        (nv, n_I)   qdot = T_q qdot_I                 eq. (15)
    J_C = W_L^+          (n, n_L)    xdot = J_C qdot_L (legs L)        eq. (12)

    tau_a = D qddot_I + C qdot_I + G + F                             # (n_a,), eq. (26), (58)
    D = T^T M T_q,  C = T^T (C_t T_q + M Tdot_q),  G = T^T g,  F = T^T f

Here the tree contains the platform (its virtual chain), so the paper's
``D_r + J_C^T D_x J_C`` is pinocchio's ``M`` seen through ``T_q`` and the
platform is not a separate Lagrangian. ``T^T tau_t`` is the minimum-norm
actuator torque (:mod:`pardyn.dynamics.inverse`); for a non-redundant robot it
is the only one. ``D`` is (n_a, n_I): with sensed joints only ``n`` of the
``n_I`` accelerations are independent, so ``D`` is not unique. This one
differs as a matrix from the paper's ``T^T (D_r + J_C^T D_x J_C)`` (same
product ``D qddot_I`` for any consistent ``qddot_I``, i.e. for any motion of
the robot): an inconsistent ``qddot_I`` (a controller's reference plus
feedback) is first mapped to the closest consistent one in the least-squares
sense by ``J_I^+``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.dynamics.inertia_terms import InertiaTerms
from pardyn.dynamics.parameters import DynamicParameters
from pardyn.errors import InputError

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = [
    "ClosedLoopModel",
    "JointSpaceModel",
    "TaskSpaceModel",
    "velocity_map_derivative",
]

def velocity_map_derivative(
    robot: Robot, q: np.ndarray, qdot: np.ndarray, *, velocity_map: np.ndarray | None = None
) -> np.ndarray:
    """``Wdot = dW/dt`` along ``qdot`` (nv, n).

    Differentiating ``K W = 0`` with constant task rows:
    ``Wdot[L] = -K_L^-1 Kdot W`` for the leg coordinates ``L``; ``Wdot xdot`` is
    the acceleration bias ``w`` of eq. (10). Frame tasks: see
    :meth:`pardyn.kinematics.differential.DifferentialKinematics.task_map_rate`.
    """
    differential = robot.differential
    velocity_map = differential.task_velocity_map(q) if velocity_map is None else velocity_map
    return differential.task_map_rate(q, qdot, velocity_map)


@dataclass(frozen=True)
class TaskSpaceModel:
    """The closed-loop dynamics in task coordinates: ``Gamma = M xddot + C xdot + g + f``.

    Attributes:
        inertia: ``M_x = W^T M W`` (n, n).
        coriolis: ``C_x = W^T (C_t W + M Wdot)`` (n, n); ``Mdot_x - 2 C_x`` is skew.
        gravity: ``g_x = W^T g`` (n,).
        friction: ``f_x = W^T f(qdot)`` (n,), drive friction and offsets.
        velocity_map: ``W`` (nv, n); velocity_map_rate: ``Wdot`` (nv, n).
    """

    inertia: np.ndarray
    coriolis: np.ndarray
    gravity: np.ndarray
    friction: np.ndarray
    velocity_map: np.ndarray
    velocity_map_rate: np.ndarray

    def forces(self, task_acceleration: np.ndarray, task_velocity: np.ndarray) -> np.ndarray:
        """``Gamma = W^T tau_t`` (n,) for the given ``xddot``, ``xdot`` (eq. 30)."""
        return self.inertia @ task_acceleration + self.coriolis @ task_velocity + self.gravity + self.friction


@dataclass(frozen=True)
class JointSpaceModel:
    """The closed-loop dynamics in joint coordinates ``q_I`` (3-RRR paper eqs. 26, 58).

    ``tau_a = D qddot_I + C qdot_I + G + F`` (the minimum-norm torque for a
    redundant robot).

    Attributes:
        indices: positions in ``q`` of the coordinates ``I`` (n_I,).
        inertia: ``D = T^T M T_q`` (n_a, n_I).
        coriolis: ``C = T^T (C_t T_q + M Tdot_q)`` (n_a, n_I).
        gravity: ``G = T^T g`` (n_a,).
        friction: ``F = T^T f(qdot)`` (n_a,).
        T: ``W J_a^+`` (nv, n_a), eq. (13); T_q: ``W J_I^+`` (nv, n_I), eq. (15).
        J_C: ``xdot = J_C qdot_L`` (n, n_L) on the leg coordinates, eq. (12).
    """

    indices: np.ndarray
    inertia: np.ndarray
    coriolis: np.ndarray
    gravity: np.ndarray
    friction: np.ndarray
    T: np.ndarray
    T_q: np.ndarray
    J_C: np.ndarray

    def torques(self, acceleration: np.ndarray, velocity: np.ndarray) -> np.ndarray:
        """``tau_a = D qddot_I + C qdot_I + G + F`` (n_a,)."""
        return self.inertia @ acceleration + self.coriolis @ velocity + self.gravity + self.friction


def _pseudo_inverse_and_rate(matrix: np.ndarray, rate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``A^+ = (A^T A)^-1 A^T`` of a full-column-rank ``A`` and its time derivative."""
    gram = matrix.T @ matrix
    pseudo = np.linalg.solve(gram, matrix.T)
    pseudo_rate = np.linalg.solve(gram, rate.T - (rate.T @ matrix + matrix.T @ rate) @ pseudo)
    return pseudo, pseudo_rate


class ClosedLoopModel:
    """Reduced dynamic model terms of a closed-loop robot (task and joint coordinates).

    Args:
        robot: the robot.
        params: dynamic parameters (YAML nominal values by default); they must be
            a rigid body per joint (not regrouped base parameters).

    The states are tree states ``q``, ``qdot`` (nv,) that close the loops.
    """

    def __init__(self, robot: Robot, params: DynamicParameters | None = None) -> None:
        self.robot = robot
        self.params = robot.nominal_parameters if params is None else params
        if not self.params.representable():
            raise InputError(
                f"{robot.name}: these parameters give a joint zero mass with a nonzero first moment "
                "(regrouped base parameters); the model terms need rigid bodies"
            )
        self.model = self.params.apply(robot.model.copy())
        self.data = self.model.createData()
        self.terms = InertiaTerms(self.model)  # M, C right for estimates with negative masses
        drives = self.params.drive_values()
        self._drive_index = self.params.drive_indices
        self._fv, self._fs, self._offset = drives[:, 1].copy(), drives[:, 2].copy(), drives[:, 3].copy()
        differential = robot.differential
        self.leg_indices = differential.leg_indices

    def tree_terms(self, q: np.ndarray, qdot: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``M`` (nv, nv), ``C_t`` (nv, nv), ``g`` (nv,), ``f`` (nv,) of the tree."""
        mass = self.terms.mass(q)
        coriolis = self.terms.coriolis(q, qdot)
        gravity = pin.computeGeneralizedGravity(self.model, self.data, q).copy()
        friction = np.zeros(self.model.nv)
        velocity = qdot[self._drive_index]
        friction[self._drive_index] = self._fv * velocity + self._fs * np.sign(velocity) + self._offset
        friction += self.params.spring_torques(q)  # joint springs k (q - q_ref), with the other joint-local terms
        return mass, coriolis, gravity, friction

    def task_space(self, q: np.ndarray, qdot: np.ndarray) -> TaskSpaceModel:
        """The model in task coordinates at the state ``q``, ``qdot`` (nv,)."""
        velocity_map = self.robot.differential.task_velocity_map(q)
        rate = velocity_map_derivative(self.robot, q, qdot, velocity_map=velocity_map)
        mass, coriolis, gravity, friction = self.tree_terms(q, qdot)
        return TaskSpaceModel(
            inertia=velocity_map.T @ mass @ velocity_map,
            coriolis=velocity_map.T @ (coriolis @ velocity_map + mass @ rate),
            gravity=velocity_map.T @ gravity,
            friction=velocity_map.T @ friction,
            velocity_map=velocity_map,
            velocity_map_rate=rate,
        )

    def joint_space(self, q: np.ndarray, qdot: np.ndarray, *, indices: np.ndarray | None = None) -> JointSpaceModel:
        """The model in the joint coordinates ``q[indices]`` (default: the actuated joints)."""
        robot = self.robot
        indices = robot.actuated_indices if indices is None else np.asarray(indices, dtype=int)
        velocity_map = robot.differential.task_velocity_map(q)
        rate = velocity_map_derivative(robot, q, qdot, velocity_map=velocity_map)
        actuated = robot.actuated_indices
        pseudo_a = np.linalg.solve(velocity_map[actuated].T @ velocity_map[actuated], velocity_map[actuated].T)
        pseudo_i, pseudo_i_rate = _pseudo_inverse_and_rate(velocity_map[indices], rate[indices])
        to_tree = velocity_map @ pseudo_a  # T (nv, n_a)
        to_tree_q = velocity_map @ pseudo_i  # T_q (nv, n_I)
        to_tree_q_rate = rate @ pseudo_i + velocity_map @ pseudo_i_rate
        legs = velocity_map[self.leg_indices]
        mass, coriolis, gravity, friction = self.tree_terms(q, qdot)
        return JointSpaceModel(
            indices=indices,
            inertia=to_tree.T @ mass @ to_tree_q,
            coriolis=to_tree.T @ (coriolis @ to_tree_q + mass @ to_tree_q_rate),
            gravity=to_tree.T @ gravity,
            friction=to_tree.T @ friction,
            T=to_tree,
            T_q=to_tree_q,
            J_C=np.linalg.solve(legs.T @ legs, legs.T),
        )

    def actuated_space(self, q: np.ndarray, qdot: np.ndarray) -> JointSpaceModel:
        """The model in actuated coordinates (classical computed torque control)."""
        return self.joint_space(q, qdot, indices=self.robot.actuated_indices)

    def measured_space(self, q: np.ndarray, qdot: np.ndarray) -> JointSpaceModel:
        """The model in actuated + sensed passive coordinates (extended CTC, eq. 58)."""
        return self.joint_space(q, qdot, indices=self.robot.measured_indices)
