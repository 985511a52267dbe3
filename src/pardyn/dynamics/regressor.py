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

from pardyn.dynamics.parameters import DynamicParameters
from pardyn.errors import InputError

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["PROJECTIONS", "Regressor"]

PROJECTIONS = ("standard", "platform", "actuators")


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
        self._drive_index = self.params.drive_indices
        self.actuated_indices = np.asarray(robot.actuated_indices, dtype=int)

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
        joint = np.empty((count, nv, self._body_map.shape[0]))
        for k in range(count):
            joint[k] = pin.computeJointTorqueRegressor(self.model, self.data, q[k], qdot[k], qddot[k])
        out = np.zeros((count, nv, self.size))
        out[:, :, :self._inertial] = joint @ self._body_map
        for d, index in enumerate(self._drive_index):
            column = self._inertial + 4 * d
            out[:, index, column] = qddot[:, index]
            out[:, index, column + 1] = qdot[:, index]
            out[:, index, column + 2] = np.sign(qdot[:, index])
            out[:, index, column + 3] = 1.0
        return out[0] if single else out

    # ------------------------------------------------------ closed loop
    def _maps(self, q: np.ndarray) -> np.ndarray:
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
        q2 = np.atleast_2d(q)
        tree = self.tree(q2, np.atleast_2d(qdot), np.atleast_2d(qddot))
        maps = self._maps(q2)
        left = self._left(maps)
        observation = np.swapaxes(maps, 1, 2) @ tree  # W^T Y_t (N, n, n_st)
        if self.projection != "platform":
            observation = left @ observation
        measured = None
        if torques is not None:
            measured = self._measure(maps, left, np.atleast_2d(np.asarray(torques, dtype=float)))
        if single:
            return observation[0], None if measured is None else measured[0]
        return observation, measured

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
