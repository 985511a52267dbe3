"""Closed-loop inverse dynamics: actuator torques from a closed-loop motion.

Two steps, as in the DualV paper (Briot, Krut, Gautier 2015, section 2.1):

1. the tree (every leg from the base, the platform as the free end of its
   virtual chain) gives the efforts of every tree joint by pinocchio's RNEA,
   plus the drive terms of eq. (5) (the rotor inertia ``ia`` is pinocchio's
   ``model.armature``):

       tau_t = RNEA(q, qdot, qddot) + fv qdot + fs sign(qdot) + offset      # (nv,), eq. (1), (6)

2. the loops are closed with the velocity map ``W`` (``qdot = W xdot``,
   :meth:`pardyn.kinematics.differential.DifferentialKinematics.task_velocity_map`)
   and the inverse Jacobian ``J = W[actuated]`` (eq. 20): by virtual power

       J^T tau_a = W^T tau_t =: Gamma                                       # (n,), eq. (19), (30)

   * non-redundant robots (``n_a == n``): ``tau_a = J^-T Gamma`` (eq. 19);
   * actuation-redundant robots (DualV): infinitely many ``tau_a`` (eq. 26).
     The default is the minimum-norm one ``tau_a = J (J^T J)^-1 Gamma``, which
     has no internal stress and equals the eq. (50) projection of any valid
     torque; an *internal stress* ``c`` (n_a,) adds its projection on the null
     space of ``J^T``, as the ``(I - (A^T)^+ A^T) c`` term of eq. (26):

       tau_a = J (J^T J)^-1 Gamma + (I - J (J^T J)^-1 J^T) c               # (n_a,)

The states are full tree states (``q``, ``qdot``, ``qddot``, each (nv,)) that
close the loops (from :meth:`Robot.solve_inverse` / ``solve_forward`` and
``robot.differential``); :func:`task_trajectory_states` builds them from a
task-space trajectory. Units: rad, m, s; torques N m (N for prismatic joints).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.dynamics.actuation import ActuationMaps
from pardyn.dynamics.parameters import DynamicParameters
from pardyn.errors import InputError, KinematicsError, SingularityError

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["InverseDynamics", "minimum_norm_torques", "null_space_projector", "task_trajectory_states"]


def minimum_norm_torques(jacobian: np.ndarray, forces: np.ndarray) -> np.ndarray:
    """The minimum-norm solution of ``J^T tau = Gamma`` (the exact one if J is square).

    Args:
        jacobian: ``J`` (n_a, n) or a stack (N, n_a, n), full column rank.
        forces: ``Gamma`` (n,) or (N, n).

    Returns:
        ``tau = J (J^T J)^-1 Gamma``, shape (n_a,) or (N, n_a).
    """
    if jacobian.ndim == 2:
        if jacobian.shape[0] == jacobian.shape[1]:
            return np.linalg.solve(jacobian.T, forces)
        return jacobian @ np.linalg.solve(jacobian.T @ jacobian, forces)
    transposed = np.swapaxes(jacobian, 1, 2)
    if jacobian.shape[1] == jacobian.shape[2]:
        return np.linalg.solve(transposed, forces[..., None])[..., 0]
    return np.einsum("nak,nk->na", jacobian, np.linalg.solve(transposed @ jacobian, forces[..., None])[..., 0])


def null_space_projector(jacobian: np.ndarray) -> np.ndarray:
    """Orthogonal projector on the null space of ``J^T`` (internal stress), (n_a, n_a).

    ``I - J (J^T J)^-1 J^T``: zero for a non-redundant robot; for the DualV it
    is ``sum_i u_i u_i^T`` with the ``u_i`` of eq. (50). Accepts a stack (N, n_a, n).
    """
    eye = np.eye(jacobian.shape[-2])
    if jacobian.ndim == 2:
        return eye - jacobian @ np.linalg.solve(jacobian.T @ jacobian, jacobian.T)
    transposed = np.swapaxes(jacobian, 1, 2)
    return eye - jacobian @ np.linalg.solve(transposed @ jacobian, transposed)


class InverseDynamics:
    """Closed-loop inverse dynamics of a robot (eqs. 1, 19, 26, 30).

    Works on its own copy of ``robot.model`` with ``params`` applied (the
    robot's model is left untouched).

    Args:
        robot: the robot.
        params: dynamic parameters; the YAML nominal values by default. Parameters
            that pinocchio cannot hold as inertias (regrouped base parameters with
            a zero mass and a nonzero first moment) are evaluated with the tree
            regressor instead of RNEA (``uses_rnea`` is then False).

    Example::

        inverse = InverseDynamics(robot)
        q = robot.solve_inverse(x).q
        tau = inverse.torques_from_task(q, xdot, xddot)         # (n_a,), N m
    """

    def __init__(self, robot: Robot, params: DynamicParameters | None = None) -> None:
        self.robot = robot
        self.params = robot.nominal_parameters if params is None else params
        self.model = robot.model.copy()
        self.uses_rnea = self.params.representable()
        if self.uses_rnea:
            self.params.apply(self.model)  # inertias, armature (rnea adds ia qddot), gravity
            self._joint_parameters = None
        else:
            self.model.gravity = pin.Motion(np.asarray(self.params.gravity, dtype=float), np.zeros(3))
            self._joint_parameters = self.params.joint_parameters().reshape(-1)  # (10 (njoints-1),)
        self.data = self.model.createData()
        self.nv = self.model.nv
        self.actuated_indices = np.asarray(robot.actuated_indices, dtype=int)
        self.n_actuated = len(self.actuated_indices)
        self.n_task = len(robot.task_names)
        self.redundancy = self.n_actuated - self.n_task
        drives = self.params.drive_values()  # (n_d, 4)
        self._drive_index = self.params.drive_indices
        self._ia = drives[:, 0].copy()
        # fv, fs, offset as tree vectors (nv,), None when all zero: the one-pass hot path of torques()
        terms = np.zeros((4, self.nv))
        terms[:, self._drive_index] = drives.T
        self._tree_fv, self._tree_fs, self._tree_offset = (row if np.any(row) else None for row in terms[1:])
        self._springs = bool(self.params.springs)
        maps = ActuationMaps(robot)
        self._maps = maps if maps.supported and self.uses_rnea else None
        # the robot's compiled kernels (pardyn.kernels), when it loaded them: the whole closed-loop
        # inverse dynamics in one C call, parameters as a vector (any values, representable or not)
        self._kernels = robot.kernels
        if self._kernels is not None:
            from pardyn.kernels.codegen import parameter_vector

            self._kernel_params = np.ascontiguousarray(parameter_vector(robot.mechanism, self.params))

    # ------------------------------------------------------------------ tree
    def tree_torques(self, q: np.ndarray, qdot: np.ndarray, qddot: np.ndarray) -> np.ndarray:
        """Efforts of every tree joint ``tau_t`` (nv,), drive terms included (eq. 1, 5)."""
        if self._kernels is not None:
            return self._kernels.tree_torques(q, qdot, qddot, self._kernel_params)
        if self.uses_rnea:
            torques = pin.rnea(self.model, self.data, q, qdot, qddot)  # a new array, ia qddot included
        else:
            regressor = pin.computeJointTorqueRegressor(self.model, self.data, q, qdot, qddot)
            torques = regressor @ self._joint_parameters
            torques[self._drive_index] += self._ia * qddot[self._drive_index]
        return self._add_friction(torques, qdot, q)

    def friction_torques(self, qdot: np.ndarray, q: np.ndarray | None = None) -> np.ndarray:
        """Drive friction and offset ``fv qdot + fs sign(qdot) + offset`` (nv,) or (N, nv), eq. (5), and with ``q``
        the joint springs' ``k (q - q_ref)``."""
        qdot = np.asarray(qdot, dtype=float)
        return self._add_friction(np.zeros_like(qdot), qdot, q)

    def _add_friction(self, torques: np.ndarray, qdot: np.ndarray, q: np.ndarray | None = None) -> np.ndarray:
        """``torques += fv qdot + fs sign(qdot) + offset`` (the drive terms as tree vectors, zero ones skipped)
        ``+ k (q - q_ref)`` (joint springs, when ``q`` is given)."""
        if q is not None and self._springs:
            torques += self.params.spring_torques(q)
        if self._tree_fv is not None:
            torques += self._tree_fv * qdot
        if self._tree_fs is not None:
            torques += self._tree_fs * np.sign(qdot)
        if self._tree_offset is not None:
            torques += self._tree_offset
        return torques

    # ----------------------------------------------------------- closed loop
    def task_forces(self, q: np.ndarray, qdot: np.ndarray, qddot: np.ndarray) -> np.ndarray:
        """``Gamma = W^T tau_t`` (n,): the actuator efforts projected on the platform, eq. (30)."""
        velocity_map = self.robot.differential.task_velocity_map(q)
        return velocity_map.T @ self.tree_torques(q, qdot, qddot)

    def check_internal_stress(self, internal_stress: Sequence[float] | np.ndarray | None) -> np.ndarray | None:
        """The internal stress as an array (n_a,) or (N, n_a); InputError if wrong or not redundant."""
        if internal_stress is None:
            return None
        stress = np.asarray(internal_stress, dtype=float)
        if stress.shape[-1:] != (self.n_actuated,) or not np.all(np.isfinite(stress)):
            raise InputError(
                f"internal stress: expected {self.n_actuated} finite values (N m or N for prismatic joints, one per actuated joint "
                f"{list(self.robot.actuated_names)}), got {stress.tolist()}"
            )
        if self.redundancy == 0:
            raise InputError(f"internal stress: {self.robot.name} has no actuation redundancy (no internal stress)")
        return stress

    def _close(self, velocity_map: np.ndarray, tree: np.ndarray, stress: np.ndarray | None) -> np.ndarray:
        jacobian = velocity_map[self.actuated_indices]  # (n_a, n), eq. (20)
        torques = minimum_norm_torques(jacobian, velocity_map.T @ tree)
        if stress is not None:
            torques += null_space_projector(jacobian) @ stress
        return torques

    def torques(
        self,
        q: np.ndarray,
        qdot: np.ndarray,
        qddot: np.ndarray,
        *,
        internal_stress: Sequence[float] | np.ndarray | None = None,
    ) -> np.ndarray:
        """Actuator torques ``tau_a`` (n_a,) of a closed-loop state (eq. 19 / 26).

        Args:
            q, qdot, qddot: tree state (nv,) each, closing the loops.
            internal_stress: ``c`` (n_a,), N m; its null-space projection is added
                (actuation-redundant robots only). Default: none (minimum norm).
        """
        if self._kernels is not None:
            stress = None if internal_stress is None else self.check_internal_stress(internal_stress)
            torques = self._kernels.inverse_dynamics(q, qdot, qddot, self._kernel_params, stress)
            if torques is not None:
                return torques
        if internal_stress is None and self._maps is not None:  # the hot path (a controller's message)
            return self._torques_one_pass(q, qdot, qddot, None)
        stress = self.check_internal_stress(internal_stress)
        if self._maps is None:
            velocity_map = self.robot.differential.task_velocity_map(q)
            return self._close(velocity_map, self.tree_torques(q, qdot, qddot), stress)
        return self._torques_one_pass(q, qdot, qddot, stress)

    def _torques_one_pass(self, q: np.ndarray, qdot: np.ndarray, qddot: np.ndarray,
                          stress: np.ndarray | None) -> np.ndarray:
        """:meth:`torques` by RNEA, the loops' row space from the joint Jacobians and one KKT solve
        (:class:`pardyn.dynamics.actuation.ActuationMaps`): the hot path."""
        tree = self._add_friction(pin.rnea(self.model, self.data, q, qdot, qddot), qdot, q)  # ia qddot in RNEA
        maps = self._maps
        if stress is None:
            return maps.torques(q, tree)
        pin.computeJointJacobians(maps.model, maps.data, q)
        jacobian = maps.last_constraint_jacobian()
        torques, range_part = maps.minimum_norm(jacobian, tree, stress)
        return torques + stress - range_part  # + (I - J (J^T J)^-1 J^T) c

    def torques_from_task(
        self,
        q: np.ndarray,
        task_velocity: np.ndarray,
        task_acceleration: np.ndarray,
        *,
        internal_stress: Sequence[float] | np.ndarray | None = None,
    ) -> np.ndarray:
        """Actuator torques (n_a,) from a closed configuration ``q`` (nv,) and ``xdot``, ``xddot`` (n,).

        Every joint velocity and acceleration follows from eqs. (9)-(10):
        ``qdot = W xdot``, ``qddot = W xddot + w``.
        """
        stress = self.check_internal_stress(internal_stress)
        velocity_map, qdot, qddot = self.robot.differential.task_states(q, task_velocity, task_acceleration)
        if self._kernels is not None:
            torques = self._kernels.inverse_dynamics(q, qdot, qddot, self._kernel_params, stress)
            if torques is not None:
                return torques
        if self._maps is not None:
            return self._torques_one_pass(q, qdot, qddot, stress)
        return self._close(velocity_map, self.tree_torques(q, qdot, qddot), stress)

    def torques_batch(
        self,
        q: np.ndarray,
        qdot: np.ndarray,
        qddot: np.ndarray,
        *,
        internal_stress: Sequence[float] | np.ndarray | None = None,
    ) -> np.ndarray:
        """Actuator torques of N states, shape (N, n_a).

        Args:
            q, qdot, qddot: (N, nv) each.
            internal_stress: (n_a,) for every sample or (N, n_a).
        """
        q, qdot, qddot = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (q, qdot, qddot))
        stress = self.check_internal_stress(internal_stress)
        count = q.shape[0]
        tree = np.empty((count, self.nv))
        if self.uses_rnea:  # RNEA per sample, the drive terms batched
            for k in range(count):
                tree[k] = pin.rnea(self.model, self.data, q[k], qdot[k], qddot[k])
            tree += self.friction_torques(qdot, q)
        else:
            for k in range(count):
                tree[k] = self.tree_torques(q[k], qdot[k], qddot[k])
        if self._maps is not None:  # one computeJointJacobians per sample, the rest batched
            maps = self._maps.velocity_maps(self._maps.constraint_jacobians(q))
        else:
            maps = np.stack([self.robot.differential.task_velocity_map(sample) for sample in q])  # (N, nv, n)
        jacobians = maps[:, self.actuated_indices, :]  # (N, n_a, n)
        torques = minimum_norm_torques(jacobians, np.einsum("nvk,nv->nk", maps, tree))
        if stress is not None:
            stress = np.broadcast_to(stress, (count, self.n_actuated))
            torques += np.einsum("nab,nb->na", null_space_projector(jacobians), stress)
        return torques


def _with_context(error: KinematicsError, prefix: str) -> KinematicsError:
    if isinstance(error, SingularityError):
        return SingularityError(f"{prefix}: {error}", kind=error.kind, condition=error.condition)
    return type(error)(f"{prefix}: {error}")


def task_trajectory_states(
    robot: Robot,
    task: np.ndarray,
    task_velocity: np.ndarray,
    task_acceleration: np.ndarray,
    *,
    start: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tree states along a task-space trajectory, solved with warm starts.

    Each configuration is solved from the previous one (the first from
    ``start``, else the robot's home), which keeps the working mode along a
    continuous trajectory; velocities and accelerations by eqs. (9)-(10).

    Args:
        task, task_velocity, task_acceleration: (N, n) in ``robot.task_names`` order.
        start: warm start of the first sample (nv,).

    Returns:
        ``q``, ``qdot``, ``qddot``, each (N, nv).

    Raises:
        KinematicsError: (or a subclass) naming the sample that has no solution.
    """
    task, task_velocity, task_acceleration = (
        np.atleast_2d(np.asarray(a, dtype=float)) for a in (task, task_velocity, task_acceleration)
    )
    count, n = task.shape
    if n != len(robot.task_names) or task_velocity.shape != task.shape or task_acceleration.shape != task.shape:
        raise InputError(
            f"task trajectory: expected three (N, {len(robot.task_names)}) arrays "
            f"({list(robot.task_names)}), got {task.shape}, {task_velocity.shape}, {task_acceleration.shape}"
        )
    q = np.empty((count, robot.nv))
    qdot = np.empty_like(q)
    qddot = np.empty_like(q)
    previous = start
    differential = robot.differential
    for k in range(count):
        try:
            q[k] = robot.solve_inverse(task[k], start=previous).q
        except KinematicsError as error:
            raise _with_context(error, f"sample {k} (task {task[k].tolist()})") from error
        _, qdot[k], qddot[k] = differential.task_states(q[k], task_velocity[k], task_acceleration[k])
        previous = q[k]
    return q, qdot, qddot
