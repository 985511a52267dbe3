"""Decentralized joint PD control of the actuated joints.

Each actuator ``i`` is driven by its own joint error (the classical
independent-joint control of parallel robots, e.g. the PD used as the
baseline in Zubizarreta et al. 2010, section 5):

    tau_i = sat_i( Kp_i (q_ref,i - q_i) + Kd_i (qdot_ref,i - qdot_i) )       # (n_a,)
    sat_i(u) = min(max(u, -tau_max,i), tau_max,i)

with ``Kp`` (N m/rad) and ``Kd`` (N m s/rad) diagonal. On an actuation-
redundant robot (DualV) every actuated joint follows its own reference; with
consistent references (from the inverse kinematics) there is no fight between
the drives, with inconsistent ones (encoder quantization) the antagonism is
only ``Kp`` times the inconsistency.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pardyn.control import ControlLaw, JointReference, actuator_limits, finite_vector
from pardyn.errors import InputError

__all__ = ["JointPD"]


class JointPD(ControlLaw):
    """``tau = sat(Kp (q_ref - q) + Kd (qdot_ref - qdot))`` on the actuated joints.

    Args:
        kp: proportional gains (n_a,) (N m/rad), or one value for all, >= 0.
        kd: derivative gains (n_a,) (N m s/rad), or one value for all, >= 0.
        limits: torque limits (n_a,) (N m), > 0 (see :func:`pardyn.control.actuator_limits`).
        joints: the actuated joint names (n_a,) (``robot.actuated_names``, as
            :meth:`for_robot` sets them); empty: unnamed actuated joints.

    Raises:
        InputError: a gain that is negative, non-finite or of the wrong count.
    """

    def __init__(
        self,
        kp: Sequence[float] | np.ndarray | float,
        kd: Sequence[float] | np.ndarray | float,
        *,
        limits: Sequence[float] | np.ndarray,
        joints: Sequence[str] = (),
    ) -> None:
        limits = np.asarray(limits, dtype=float).reshape(-1)
        if limits.size == 0 or not np.all(np.isfinite(limits)) or np.any(limits <= 0.0):
            raise InputError(f"PD limits: expected positive finite torque limits, got {limits.tolist()}")
        self.limits = limits.copy()
        self.joints = tuple(joints)
        if self.joints and len(self.joints) != self.size:
            raise InputError(f"PD joints: {len(self.joints)} names {list(self.joints)} for {self.size} limits")
        self.kp = self._gains(kp, "kp")
        self.kd = self._gains(kd, "kd")

    @classmethod
    def for_robot(cls, robot, kp, kd, *, limits: Sequence[float] | None = None) -> JointPD:
        """A PD for ``robot``'s actuators with its URDF torque limits unless ``limits`` overrides them."""
        return cls(kp, kd, limits=actuator_limits(robot, limits), joints=tuple(robot.actuated_names))

    def _gains(self, values, name: str) -> np.ndarray:
        array = np.asarray(values, dtype=float).reshape(-1)
        if array.size == 1:
            array = np.full(self.size, float(array[0]))
        array = finite_vector(array, self.size, f"PD gains {name}")
        if np.any(array < 0.0):
            raise InputError(f"PD gains {name}: must be >= 0, got {array.tolist()}")
        return array

    def describe(self) -> str:
        return self.describe_gains()

    def unsaturated(self, position: np.ndarray, velocity: np.ndarray, reference: JointReference) -> np.ndarray:
        q_ref = finite_vector(reference.position, self.size, "reference positions")
        qdot_ref = finite_vector(reference.velocity, self.size, "reference velocities")
        return self.kp * (q_ref - position) + self.kd * (qdot_ref - velocity)  # (n_a,)
