"""Transmissions: motor-side measurements to the joint side, coupled drives as their own regressor columns.

Motor angles ``theta`` (n_m,) and joint angles ``q`` (n,) are related by a
constant ratio matrix ``R`` (n_m, n) and a joint-side zero offset::

    theta = R (q - q_0)            q = R^-1 theta + q_0                     # rad

Gear ratios are its diagonal; a coupling such as the Staubli TX40's wrist,
where motor 6 turns with ``q5 + q6``, is an off-diagonal entry (``R[5, 4] = 32``).
Power balance ``tau^T qdot = tau_m^T thetadot`` gives the joint torques from the
motor torques (current x torque constant, N m)::

    tau = R^T tau_m                                                        # (n,)

**Rotor inertia and friction on motor axes.** A motor ``m`` of inertia ``J_m``,
viscous ``F_v,m`` and Coulomb ``F_s,m`` friction (motor side) adds to the joint
torques ``R^T [J theta_ddot + F_v theta_dot + F_s sign(theta_dot)]``, i.e. with
``r_m`` the row ``m`` of ``R``::

    tau += r_m^T (J_m r_m . qddot + F_v,m r_m . qdot + F_s,m sign(r_m . qdot))

The diagonal part of ``r_m r_m^T`` (``R[m, j]^2`` on row ``j``) has the form of
joint ``j``'s own drive columns ``[qddot_j, qdot_j]`` (eq. 5) and is regrouped
with them; what remains of a *coupled* motor (a row of ``R`` with more than one
non-zero entry) is three columns of its own, with parameters scaled to the
motor's own joint ``j_m`` (``R[m, j_m]`` its gear ratio)::

    Iam_m = R[m, j_m]^2 J_m        column on row j: sum_{k != j} R[m,j] R[m,k] / R[m,j_m]^2 qddot_k
    fvm_m = R[m, j_m]^2 F_v,m      column on row j: sum_{k != j} R[m,j] R[m,k] / R[m,j_m]^2 qdot_k
    fsm_m = R[m, j_m] F_s,m        column on row j: R[m,j] / R[m,j_m] sign(r_m . qdot)

For the TX40 (``r_6 = [0, 0, 0, 0, 32, 32]``): row 5 gets ``[qddot_6, qdot_6,
sign(qdot_5 + qdot_6)]``, row 6 ``[qddot_5, qdot_5, sign(qdot_5 + qdot_6)]``:
the published ``Iam6, fvm6, fsm6`` columns (FIGAROH, ``has_coupled_wrist``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pardyn.errors import InputError

__all__ = ["MOTOR_COLUMNS", "Transmission"]

MOTOR_COLUMNS = ("iam", "fvm", "fsm")
"""Parameters of a coupled motor (column name prefixes): inertia, viscous, Coulomb, joint-side scaled."""


@dataclass(frozen=True)
class Transmission:
    """A constant ratio matrix between motor and joint coordinates (module docstring).

    Attributes:
        motors: motor names (n_m,), the names of the motor-side data columns.
        joints: joint names (n,), the robot's.
        ratio: ``R`` (n_m, n), ``theta = R (q - q_0)``; square and invertible.
        offset: ``q_0`` (n,), rad (m).
    """

    motors: tuple[str, ...]
    joints: tuple[str, ...]
    ratio: np.ndarray
    offset: np.ndarray

    def __post_init__(self) -> None:
        ratio = np.asarray(self.ratio, dtype=float)
        if ratio.shape != (len(self.motors), len(self.joints)) or ratio.shape[0] != ratio.shape[1]:
            raise InputError(
                f"transmission: ratio must be square ({len(self.motors)} motors x {len(self.joints)} joints), "
                f"got {ratio.shape}"
            )
        if not np.all(np.isfinite(ratio)) or abs(np.linalg.det(ratio)) < 1e-12 * max(1.0, np.abs(ratio).max()) ** len(ratio):
            raise InputError("transmission: ratio matrix is singular or not finite")
        offset = np.zeros(len(self.joints)) if self.offset is None else np.asarray(self.offset, dtype=float)
        if np.any(np.diag(ratio) == 0.0):
            raise InputError("transmission: every motor needs a non-zero ratio to its own joint (the diagonal)")
        if offset.shape != (len(self.joints),):
            raise InputError(f"transmission: offset must have {len(self.joints)} values, got {offset.shape}")
        object.__setattr__(self, "motors", tuple(self.motors))
        object.__setattr__(self, "joints", tuple(self.joints))
        object.__setattr__(self, "ratio", ratio)
        object.__setattr__(self, "offset", offset)

    # ------------------------------------------------------------- signals
    def joint_positions(self, motor_positions: np.ndarray) -> np.ndarray:
        """``q = R^-1 theta + q_0``: (N, n) from (N, n_m) motor angles."""
        theta = np.atleast_2d(np.asarray(motor_positions, dtype=float))
        return np.linalg.solve(self.ratio, theta.T).T + self.offset

    def joint_velocities(self, motor_velocities: np.ndarray) -> np.ndarray:
        """``qdot = R^-1 thetadot``: (N, n)."""
        return np.linalg.solve(self.ratio, np.atleast_2d(np.asarray(motor_velocities, dtype=float)).T).T

    def joint_torques(self, motor_torques: np.ndarray) -> np.ndarray:
        """``tau = R^T tau_m``: (N, n) from (N, n_m) motor torques (N m)."""
        return np.atleast_2d(np.asarray(motor_torques, dtype=float)) @ self.ratio

    # ------------------------------------------------------------- coupled motors
    @property
    def coupled(self) -> tuple[int, ...]:
        """Indices of the motors whose row of ``R`` has more than one non-zero entry."""
        return tuple(int(m) for m in range(len(self.motors)) if np.count_nonzero(self.ratio[m]) > 1)

    @property
    def column_names(self) -> tuple[str, ...]:
        """``iam_<motor>, fvm_<motor>, fsm_<motor>`` for each coupled motor."""
        return tuple(f"{prefix}_{self.motors[m]}" for m in self.coupled for prefix in MOTOR_COLUMNS)

    def columns(self, qdot: np.ndarray, qddot: np.ndarray) -> np.ndarray:
        """The coupled motors' regressor columns, (N, n, 3 n_coupled), joints in :attr:`joints` order.

        Args:
            qdot, qddot: joint velocities and accelerations (N, n) in :attr:`joints` order.
        """
        qdot = np.atleast_2d(np.asarray(qdot, dtype=float))
        qddot = np.atleast_2d(np.asarray(qddot, dtype=float))
        count, n = qdot.shape
        out = np.zeros((count, n, 3 * len(self.coupled)))
        for c, m in enumerate(self.coupled):
            row = self.ratio[m]  # r_m (n,)
            own = row[m]
            cross = np.outer(row, row) / own**2  # (n, n)
            np.fill_diagonal(cross, 0.0)
            out[:, :, 3 * c] = qddot @ cross.T
            out[:, :, 3 * c + 1] = qdot @ cross.T
            out[:, :, 3 * c + 2] = np.sign(qdot @ row)[:, None] * (row / own)[None, :]
        return out

    @classmethod
    def from_rows(
        cls, motors: Sequence[str], joints: Sequence[str], ratio: Sequence[Sequence[float]],
        offset: Sequence[float] | None = None,
    ) -> Transmission:
        return cls(tuple(motors), tuple(joints), np.asarray(ratio, dtype=float),
                   np.zeros(len(joints)) if offset is None else np.asarray(offset, dtype=float))
