"""Inverse dynamic identification models (IDIM): observation matrices linear in the parameters.

The tree model is linear in the standard parameters chi_st
(:class:`pardyn.dynamics.parameters.DynamicParameters`, eq. 2):

    tau_t = Y_t(q, qdot, qddot) chi_st                                   # (nv,), eq. (1), (6)

with ``Y_t = [Y_pin B, Y_drive]``: pinocchio's ``computeJointTorqueRegressor``
mapped to each body's own parameters by ``B``
(:meth:`DynamicParameters.body_map`), and for each drive joint ``j`` the
columns ``[qddot_j, qdot_j, sign(qdot_j), 1]`` (eq. 5) on row ``j``. The
platform and the payload (eq. 38) are bodies like the others, so the payload
columns ``IDM_l`` sit among the columns (:meth:`Regressor.payload_columns`).

Closing the loops with ``W`` (``qdot = W xdot``) and ``J = W[actuated]``
(eq. 20), ``J^T tau = W^T tau_t``, gives three identification models
``Gamma = Y chi_st`` (the ``projection`` of :class:`Regressor`):

``"standard"`` (non-redundant robots, eq. 19)
    ``Gamma = tau`` (n_a rows), ``Y = J^-T W^T Y_t``.
``"platform"`` (case 1, eq. 30)
    ``Gamma^1 = J^T tau`` (n rows, one per task coordinate), ``Y = W^T Y_t``.
``"actuators"`` (case 2, eqs. 31-36)
    the ``n_a - n`` *projected* actuators (default: the last ones) are moved to
    the left side; with ``J_1 = J[kept]``, ``J_2 = J[projected]``:
    ``Gamma^2 = tau_1 + J_1^-T J_2^T tau_2`` (n rows, one per kept actuator),
    ``Y = J_1^-T W^T Y_t``. (The paper writes ``Gamma^2 = tau^{1:r} - J_{tau r+1:n}^T tau^{r+1:n}``,
    i.e. ``J_{tau r+1:n}^T = -J_1^-T J_2^T``.)

Both projected models are unique whatever the internal stress of a redundant
robot (the null space of ``J^T`` vanishes in ``J^T tau`` and in ``Gamma^2``).
Every function is vectorized over samples: states ``(N, nv)``, torques
``(N, n_a)``, observations ``(N, rows, n_st)``;
:func:`pardyn.identification.filtering.stack_equations` sorts them as in
section 4.1 (all samples of row 1, then row 2, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.dynamics.actuation import ActuationMaps
from pardyn.dynamics.parameters import DynamicParameters
from pardyn.errors import InputError
from pardyn.kinematics.solver import solve_regular

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["PROJECTIONS", "Regressor"]

PROJECTIONS = ("standard", "platform", "actuators")
_CHUNK = 128
"""Samples per batch of :meth:`Regressor.equations` (memory: 128 x nv x 10 njoints floats, ~2 MB for the DualV)."""


class Regressor:
    """Observation matrices of a robot's identification model (eqs. 1, 19, 30, 36, 38).

    Args:
        robot: the robot.
        params: the parameter layout (bodies, drives, gravity); the YAML nominal
            one by default. Only the layout and gravity matter, not the values.
        projection: ``"standard"``, ``"platform"`` (case 1) or ``"actuators"``
            (case 2); default ``"standard"`` for non-redundant robots, else ``"platform"``.
        projected: names of the actuated joints moved to the left side in case 2
            (``n_a - n`` of them); default the last ``n_a - n``.

    Attributes:
        names: parameter names in column order (n_st,).
        row_names: what each row is: task coordinates (case 1), kept actuators
            (case 2), actuators (standard).
    """

    def __init__(
        self,
        robot: Robot,
        params: DynamicParameters | None = None,
        *,
        projection: str | None = None,
        projected: Sequence[str] | None = None,
    ) -> None:
        self.robot = robot
        self.params = robot.nominal_parameters if params is None else params
        actuated = list(robot.actuated_names)
        self.n_actuated = len(actuated)
        self.n_task = len(robot.task_names)
        redundancy = self.n_actuated - self.n_task
        if projection is None:
            projection = "standard" if redundancy == 0 else "platform"
        if projection not in PROJECTIONS:
            raise InputError(f"projection must be one of {PROJECTIONS}, got {projection!r}")
        if projection == "standard" and redundancy:
            raise InputError(
                f"projection 'standard': {robot.name} has actuation redundancy {redundancy}; "
                "use 'platform' (case 1, eq. 30) or 'actuators' (case 2, eq. 36)"
            )
        self.projection = projection
        if projected is None:
            projected = actuated[self.n_task:] if projection == "actuators" else []
        projected = list(projected)
        unknown = [name for name in projected if name not in actuated]
        if unknown or len(set(projected)) != len(projected):
            raise InputError(f"projected: {projected} must be distinct actuated joints of {actuated}")
        if projection == "actuators" and len(projected) != redundancy:
            raise InputError(
                f"projected: case 2 moves n_a - n = {redundancy} actuators of {robot.name}, got {projected}"
            )
        if projection != "actuators" and projected:
            raise InputError("projected: only with projection 'actuators' (case 2)")
        self.projected = np.array([actuated.index(name) for name in projected], dtype=int)
        self.kept = np.array([k for k in range(self.n_actuated) if k not in set(self.projected.tolist())], dtype=int)
        if projection == "platform":
            self.row_names = tuple(robot.task_names)
        elif projection == "actuators":
            self.row_names = tuple(actuated[k] for k in self.kept)
        else:
            self.row_names = tuple(actuated)

        self.model = robot.model.copy()
        self.model.gravity = pin.Motion(np.asarray(self.params.gravity, dtype=float), np.zeros(3))
        self.data = self.model.createData()
        self.names = self.params.names
        self.size = self.params.size
        self._body_map = self.params.body_map()  # (10 (njoints-1), 10 n_bodies)
        self._inertial = self._body_map.shape[1]
        # B is block-sparse: body k takes the 10 columns of its joint through a 10 x 10 block T_k, in practice
        # a permutation (pinocchio's order of the inertial parameters): a gather; other blocks a small product
        self._body_gather = np.zeros(self._inertial, dtype=int)  # column of X feeding column of X B
        mixed = []
        for k, body in enumerate(self.params.bodies):
            block = self._body_map[10 * (body.joint - 1):10 * body.joint, 10 * k:10 * k + 10]
            if np.all((block == 0.0) | (block == 1.0)) and np.all(block.sum(axis=0) == 1.0):
                self._body_gather[10 * k:10 * k + 10] = 10 * (body.joint - 1) + np.argmax(block, axis=0)
            else:
                mixed.append(k)
        self._mixed_columns = np.array([10 * k + c for k in mixed for c in range(10)], dtype=int)
        self._mixed_sources = np.array([10 * (self.params.bodies[k].joint - 1) + r for k in mixed for r in range(10)],
                                       dtype=int)
        self._mixed_blocks = np.array([self._body_map[10 * (self.params.bodies[k].joint - 1):
                                                      10 * self.params.bodies[k].joint, 10 * k:10 * k + 10]
                                       for k in mixed]).reshape(len(mixed), 10, 10)
        self._drive_index = self.params.drive_indices
        self.actuated_indices = np.asarray(robot.actuated_indices, dtype=int)
        maps = ActuationMaps(robot)
        self._fast = maps if maps.supported else None
        self._drive_values = np.ones((len(self._drive_index), 4))
        self._drive_end = self._inertial + 4 * len(self._drive_index)  # spring columns k_j after: q_j - q_ref,j
        self._spring_index = np.array([spring.index for spring in self.params.springs], dtype=int)
        self._spring_reference = np.array([spring.reference for spring in self.params.springs])
        # the robot's compiled kernels (pardyn.kernels): the whole observation matrix of N states in one C call
        kernels = robot.kernels
        self._compiled = None if kernels is None or len(self._spring_index) else kernels.observations(
            self._body_map, self._drive_index,
            robot.task_indices if projection == "platform" else self.actuated_indices[self.kept], self.params.gravity)

    @property
    def rows(self) -> int:
        """Rows of the model per sample."""
        return len(self.row_names)

    def payload_columns(self, body: str = "payload") -> np.ndarray:
        """Columns of the payload's parameters (``IDM_l`` of eq. 38), (10,)."""
        return self.params.body_columns(body)

    # ------------------------------------------------------------- tree
    def tree(self, q: np.ndarray, qdot: np.ndarray, qddot: np.ndarray) -> np.ndarray:
        """Tree regressor ``Y_t`` with ``tau_t = Y_t chi_st``: (nv, n_st), or (N, nv, n_st) for (N, nv) states."""
        q, qdot, qddot = (np.asarray(a, dtype=float) for a in (q, qdot, qddot))
        single = q.ndim == 1
        q, qdot, qddot = (np.atleast_2d(a) for a in (q, qdot, qddot))
        count, nv = q.shape
        joint = self._joint_regressors(q, qdot, qddot)
        out = np.zeros((count, nv, self.size))
        out[:, :, :self._inertial] = joint @ self._body_map
        for d, index in enumerate(self._drive_index):
            column = self._inertial + 4 * d
            out[:, index, column] = qddot[:, index]
            out[:, index, column + 1] = qdot[:, index]
            out[:, index, column + 2] = np.sign(qdot[:, index])
            out[:, index, column + 3] = 1.0
        for k, index in enumerate(self._spring_index):
            out[:, index, self._drive_end + k] = q[:, index] - self._spring_reference[k]
        return out[0] if single else out

    def _joint_regressors(self, q: np.ndarray, qdot: np.ndarray, qddot: np.ndarray) -> np.ndarray:
        """pinocchio's ``computeJointTorqueRegressor`` of N states (N, nv) each: (N, nv, 10 (njoints-1))."""
        if self.robot.kernels is not None:  # pardyn.kernels: the same regressors in one C loop
            return self.robot.kernels.joint_regressors(q, qdot, qddot, self.params.gravity)
        model, data = self.model, self.data
        joint = np.empty((q.shape[0], q.shape[1], self._body_map.shape[0]))
        for k in range(q.shape[0]):
            joint[k] = pin.computeJointTorqueRegressor(model, data, q[k], qdot[k], qddot[k])
        return joint

    def _apply_body_map(self, joint_columns: np.ndarray) -> np.ndarray:
        """``X B`` for ``X`` (..., 10 (njoints-1)) by B's 10 x 10 blocks (B is 99 % zeros): (..., 10 n_bodies)."""
        out = joint_columns.take(self._body_gather, axis=-1)
        if len(self._mixed_blocks):
            shape = joint_columns.shape[:-1]
            blocks = joint_columns.reshape(-1, joint_columns.shape[-1]).take(self._mixed_sources, axis=1)
            blocks = blocks.reshape(-1, len(self._mixed_blocks), 10).transpose(1, 0, 2) @ self._mixed_blocks
            out[..., self._mixed_columns] = blocks.transpose(1, 0, 2).reshape(*shape, -1)
        return out

    def projected_tree(self, velocity_map: np.ndarray, q: np.ndarray, qdot: np.ndarray,
                       qddot: np.ndarray) -> np.ndarray:
        """``W^T Y_t`` (N, n, n_st) for ``W`` (N, nv, n) and states (N, nv), without forming ``Y_t``.

        ``(W^T Y_pin) B`` for the bodies (the small product first) and, for each drive joint ``j``,
        ``W[j]`` times ``[qddot_j, qdot_j, sign(qdot_j), 1]`` (eq. 5)."""
        count = q.shape[0]
        joint = self._joint_regressors(q, qdot, qddot)
        transposed = velocity_map.transpose(0, 2, 1)  # (N, n, nv)
        rows = transposed.shape[1]
        out = np.empty((count, rows, self.size))
        out[:, :, :self._inertial] = self._apply_body_map(transposed @ joint)
        index = self._drive_index
        if len(index):
            velocity = qdot[:, index]
            values = np.stack([qddot[:, index], velocity, np.sign(velocity), np.ones_like(velocity)], axis=2)
            drives = transposed[:, :, index, None] * values[:, None]  # (N, n, n_d, 4)
            out[:, :, self._inertial:self._drive_end] = drives.reshape(count, transposed.shape[1], -1)
        if len(self._spring_index):  # W[j] (q_j - q_ref,j) per spring joint j
            stretch = q[:, self._spring_index] - self._spring_reference  # (N, n_s)
            out[:, :, self._drive_end:] = transposed[:, :, self._spring_index] * stretch[:, None, :]
        return out

    # ------------------------------------------------------ closed loop
    def velocity_maps(self, q: np.ndarray) -> np.ndarray:
        """The closed loops' velocity maps ``W`` (N, nv, n), ``qdot = W xdot``, at the states ``q`` (N, nv)."""
        return self._maps(np.atleast_2d(np.asarray(q, dtype=float)))

    def _maps(self, q: np.ndarray) -> np.ndarray:
        if self._fast is not None:  # the loops' row space from computeJointJacobians (ActuationMaps)
            return self._fast.velocity_maps(self._fast.constraint_jacobians(q))
        differential = self.robot.differential
        return np.stack([differential.task_velocity_map(sample) for sample in q])  # (N, nv, n)

    def _left(self, maps: np.ndarray) -> np.ndarray:
        """The matrix ``P`` (N, rows, n) with ``Gamma = P W^T tau_t``."""
        count = maps.shape[0]
        if self.projection == "platform":
            return np.broadcast_to(np.eye(self.n_task), (count, self.n_task, self.n_task))
        jacobian = maps[:, self.actuated_indices[self.kept], :]  # J_1 (N, n, n) or J (standard)
        return np.linalg.inv(np.swapaxes(jacobian, 1, 2))

    def equations(
        self, q: np.ndarray, qdot: np.ndarray, qddot: np.ndarray, torques: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Observation matrices and (if ``torques`` are given) the measured side ``Gamma``.

        Args:
            q, qdot, qddot: states (nv,) or (N, nv).
            torques: actuator torques (n_a,) or (N, n_a), N m.

        Returns:
            ``Y`` (rows, n_st) or (N, rows, n_st), and ``Gamma`` (rows,) or (N, rows) or None;
            ``Gamma = Y chi_st`` for the torques of the model (eq. 37 without error).
        """
        q = np.asarray(q, dtype=float)
        single = q.ndim == 1
        if self._compiled is not None:
            answer = self._compiled_equations(q, qdot, qddot, torques, single)
            if answer is not None:
                return answer
        if single and self._fast is not None:
            return self._single_equations(q, np.asarray(qdot, dtype=float), np.asarray(qddot, dtype=float),
                                          None if torques is None else np.asarray(torques, dtype=float))
        q2, qdot2, qddot2 = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (q, qdot, qddot))
        count = q2.shape[0]
        if torques is not None:
            torques = np.atleast_2d(np.asarray(torques, dtype=float))
            if torques.shape != (count, self.n_actuated):
                raise InputError(f"torques: expected ({count}, {self.n_actuated}), got {torques.shape}")
        observation = np.empty((count, self.rows, self.size))
        measured = None if torques is None else np.empty((count, self.rows))
        for start in range(0, count, _CHUNK):  # chunks: the (chunk, nv, 10 njoints) tree regressors stay in cache
            part = slice(start, start + _CHUNK)
            maps = self._maps(q2[part])
            left = self._left(maps)
            chunk = self.projected_tree(maps, q2[part], qdot2[part], qddot2[part])  # W^T Y_t (N, n, n_st)
            observation[part] = chunk if self.projection == "platform" else left @ chunk
            if torques is not None:
                measured[part] = self._measure(maps, left, torques[part])
        if single:
            return observation[0], None if measured is None else measured[0]
        return observation, measured

    def _compiled_equations(self, q: np.ndarray, qdot, qddot, torques, single: bool):
        """:meth:`equations` through the compiled kernels, or None (a singular state: the Python path decides)."""
        qdot, qddot = np.asarray(qdot, dtype=float), np.asarray(qddot, dtype=float)
        if q.ndim not in (1, 2) or q.shape[-1] != self.robot.nv or qdot.shape != q.shape or qddot.shape != q.shape:
            return None  # the Python path says what is wrong
        wanted = torques is not None and self.projection != "standard"  # standard: Gamma = tau itself
        if torques is not None:
            torques = np.asarray(torques, dtype=float)
            if not single:
                torques = np.atleast_2d(torques)
            expected = (self.n_actuated,) if single else (q.shape[0], self.n_actuated)
            if torques.shape != expected:
                raise InputError(f"torques: expected {expected}, got {torques.shape}")
        if single:
            answer = self._compiled.single(q, qdot, qddot, torques if wanted else None)
        else:
            answer = self._compiled(q, qdot, qddot, torques if wanted else None)
        if answer is None:
            return None
        observation, measured = answer
        if torques is not None and not wanted:
            measured = torques.copy()
        return observation, measured

    def _single_equations(self, q: np.ndarray, qdot: np.ndarray, qddot: np.ndarray,
                          torques: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`equations` of one state without the batch axis (an online estimator's sample)."""
        if torques is not None and torques.shape != (self.n_actuated,):
            raise InputError(f"torques: expected ({self.n_actuated},), got {torques.shape}")
        maps = self._fast
        pin.computeJointJacobians(maps.model, maps.data, q)
        transposed = maps.velocity_map_from(maps.last_constraint_jacobian()).T  # (n, nv)
        joint = pin.computeJointTorqueRegressor(self.model, self.data, q, qdot, qddot)
        out = np.empty((transposed.shape[0], self.size))
        out[:, :self._inertial] = self._apply_body_map(transposed @ joint)
        index = self._drive_index
        if len(index):
            values = self._drive_values  # (n_d, 4): [qddot_j, qdot_j, sign(qdot_j), 1]
            values[:, 0] = qddot.take(index)
            values[:, 1] = qdot.take(index)
            np.sign(values[:, 1], out=values[:, 2])
            out[:, self._inertial:self._drive_end] = (transposed.take(index, axis=1)[:, :, None] * values).reshape(
                len(out), -1)
        if len(self._spring_index):
            out[:, self._drive_end:] = transposed[:, self._spring_index] * (q[self._spring_index]
                                                                           - self._spring_reference)
        if torques is None:
            measured = None
        elif self.projection == "standard":
            measured = torques.copy()
        else:
            measured = transposed.take(self.actuated_indices, axis=1) @ torques  # J^T tau, eq. (30)
        if self.projection == "platform":
            return out, measured
        kept = transposed.T.take(self.actuated_indices[self.kept], axis=0)  # J_1 (n, n) or J (standard)
        if self.projection == "standard" or measured is None:
            return solve_regular(kept.T, out), measured  # J^-T W^T Y_t, eq. (19); J_1^-T W^T Y_t, eq. (36)
        both = solve_regular(kept.T, np.column_stack([out, measured]))  # J_1^-T [W^T Y_t, J^T tau], eq. (36)
        return both[:, :-1], both[:, -1]

    def _measure(self, maps: np.ndarray, left: np.ndarray, torques: np.ndarray) -> np.ndarray:
        if torques.shape != (maps.shape[0], self.n_actuated):
            raise InputError(f"torques: expected ({maps.shape[0]}, {self.n_actuated}), got {torques.shape}")
        jacobian = maps[:, self.actuated_indices, :]  # (N, n_a, n)
        if self.projection == "standard":
            return torques.copy()
        platform = np.einsum("nak,na->nk", jacobian, torques)  # J^T tau, eq. (30)
        if self.projection == "platform":
            return platform
        return np.einsum("nrk,nk->nr", left, platform)  # tau_1 + J_1^-T J_2^T tau_2, eq. (36)

    def matrix(self, q: np.ndarray, qdot: np.ndarray, qddot: np.ndarray) -> np.ndarray:
        """Observation matrix ``Y`` of one state (rows, n_st), or (N, rows, n_st)."""
        return self.equations(q, qdot, qddot)[0]

    def measurement(self, q: np.ndarray, torques: np.ndarray) -> np.ndarray:
        """The measured side ``Gamma`` (rows,) or (N, rows) from actuator torques (n_a,) or (N, n_a)."""
        q = np.asarray(q, dtype=float)
        q2 = np.atleast_2d(q)
        maps = self._maps(q2)
        out = self._measure(maps, self._left(maps), np.atleast_2d(np.asarray(torques, dtype=float)))
        return out[0] if q.ndim == 1 else out
