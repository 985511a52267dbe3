"""The DualV controller: augmented PD with inverse-dynamics feedforward (Briot et al. 2015, Fig. 4).

Section 5.1 of the DualV paper: a PD on the actuated joints whose gains give
the tracking error a second-order response of bandwidth ``f_c = 70 Hz`` and
damping ``xi = 0.7`` (:func:`pardyn.control.gains.pd_gains_from_bandwidth`:
``Kp = J w^2``, ``Kd = 2 xi J w``, ``w = 2 pi f_c``, ``J`` the inertia seen by
each drive), the derivative term filtered by a first-order low-pass at
``f_c``, and a feedforward of the inverse dynamics of the reference that can be
switched on or off:

    e_k = q_ref,k - q_k                                                  # (n_a,)
    edot_k = a edot_{k-1} + (1 - a) (e_k - e_{k-1}) / T,  a = exp(-2 pi f_c T)
    tau_k = Kp e_k + Kd edot_k + [tau_id(q_ref, qdot_ref, qddot_ref)]   # (n_a,)

(the filtered difference of :class:`pardyn.control.differentiator.FilteredDifferentiator`,
``T`` the control period; its response to a unit ramp of the error is
``1 - exp(-2 pi f_c t_k)``). ``tau_id`` is the minimum-norm closed-loop
inverse dynamics (eqs. 19/26) at the reference's closed state. The PD part
is not minimum-norm on a redundant robot: the internal-stress avoidance of
Fig. 4 is the eq. (50) projection that the host applies
(``minimum_norm = False``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from pardyn.control import ControlLaw, JointReference, actuator_limits, finite_vector
from pardyn.control.computed_torque import MeasuredReference
from pardyn.control.differentiator import FilteredDifferentiator
from pardyn.control.gains import pd_gains_from_bandwidth
from pardyn.dynamics.inverse import InverseDynamics

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot

__all__ = ["AugmentedPD"]


class AugmentedPD(ControlLaw):
    """Augmented PD of the DualV (Briot et al. 2015, section 5.1, Fig. 4).

    Args:
        robot: the robot.
        params: dynamic parameters of the gains' inertia and of the feedforward; nominal by default.
        bandwidth_hz: ``f_c`` (Hz), the closed-loop bandwidth and the derivative filter's cut-off.
        damping: ``xi``.
        feedforward: add the inverse dynamics of the reference.
        period_s: control period ``T`` (s) of the filtered derivative: call :meth:`torques` once per period.
        limits: torque limits; the URDF's by default.

    Attributes:
        kp, kd: the gains (n_a,) (N m/rad, N m s/rad), at the robot's home configuration.

    Stateful: the filtered derivative of the error and the forward problem's
    warm start. Call :meth:`reset` before a new run (the first call after it
    gives a zero derivative term). The measured ``velocity`` is not used: the
    derivative comes from the error samples.
    """

    def __init__(
        self,
        robot: Robot,
        params: DynamicParameters | None = None,
        *,
        bandwidth_hz: float = 70.0,
        damping: float = 0.7,
        feedforward: bool = True,
        period_s: float = 1e-3,
        limits: Sequence[float] | np.ndarray | None = None,
    ) -> None:
        self.robot = robot
        self.limits = actuator_limits(robot, limits)
        self.joints = tuple(robot.actuated_names)
        self.bandwidth_hz = float(bandwidth_hz)
        self.damping = float(damping)
        self.kp, self.kd = pd_gains_from_bandwidth(robot, bandwidth_hz=bandwidth_hz, damping=damping, params=params)
        self.feedforward = bool(feedforward)
        self.inverse = InverseDynamics(robot, params) if feedforward else None
        self.differentiator = FilteredDifferentiator(self.size, period_s=period_s, cutoff_hz=bandwidth_hz)
        self._reference_state = MeasuredReference(robot)

    def reset(self, start: np.ndarray | None = None) -> None:
        """Forget the error history (next derivative term zero) and restart the warm start at ``start`` (nv,)."""
        self.differentiator.reset()
        self._reference_state.q = (self.robot.home if start is None else np.asarray(start, dtype=float)).copy()

    def feedforward_torques(self, reference: JointReference) -> np.ndarray:
        """``tau_id`` (n_a,) of the reference: minimum-norm inverse dynamics at its closed state (eqs. 19/26)."""
        if self.inverse is None:
            return np.zeros(self.size)
        q, qdot, qddot = self._reference_state.state(reference)
        return self.inverse.torques(q, qdot, qddot)

    def describe(self) -> str:
        return self.describe_gains()

    def unsaturated(self, position: np.ndarray, velocity: np.ndarray, reference: JointReference) -> np.ndarray:
        error = finite_vector(reference.position, self.size, "reference positions") - position  # (n_a,)
        error_rate = self.differentiator.update(error)  # filtered, first-order low-pass at f_c
        tau = self.kp * error + self.kd * error_rate
        if self.feedforward:
            tau = tau + self.feedforward_torques(reference)
        return tau
