"""Computed torque control (feedback linearization) with the closed-loop model.

**Classical CTC** (Vivas et al. 2003, section 4, eqs. 31-37). With the dynamic
model ``Gamma = M(q) qddot + H(q, qdot)`` (eq. 31) the input

    Gamma = H + M v                                                    eq. (35)

turns the robot into decoupled double integrators ``yddot = v`` (eq. 36), and
the outer loop

    v = qddot_ref + Kv (qdot_ref - qdot) + Kp (q_ref - q)               eq. (37)

gives every coordinate the error dynamics ``e'' + Kv e' + Kp e = 0``
(``e = q_ref - q``); with ``Kp = w^2``, ``Kv = 2 xi w`` (:func:`pardyn.control.gains.ctc_gains`)
a second-order system of natural pulsation ``w``, critically damped at
``xi = 1``: ``e(t) = e0 (1 + w t) exp(-w t)`` from rest.

:class:`ComputedTorque` applies it to a closed-loop robot with pardyn's
closed-loop inverse dynamics (Briot et al. 2015, eqs. 19 and 26, the
minimum-norm solution on actuation-redundant robots: no internal stress):

* ``space="actuated"``: ``v`` (n_a,) on the actuated joints; the closed
  configuration from the forward problem on the measured actuated joints
  (warm-started from the previous call), every joint rate from ``qdot_a`` and
  ``v`` by eqs. (21)/(24) (``robot.differential.states_from``), and
  ``tau = InverseDynamics.torques(q, qdot, qddot)``. On a redundant robot an
  inconsistent ``v`` is replaced by its least-squares consistent part
  (``J_a J_a^+ (v - w_a) + w_a``).
* ``space="task"``: ``v`` (n,) on the task coordinates ``x`` (the platform's
  virtual chain, read from the closed configuration), the task reference from
  the actuated reference through the forward problem and eqs. (21)/(24).

**Extended CTC** (Zubizarreta et al. 2010, sections 4.7-4.8, eqs. 58-59):
the model in active + sensed passive coordinates ``q_I`` (n_m,),
``tau = D qddot_I + C qdot_I + G`` (eq. 58, ``D``, ``C`` (n_a, n_m)), and

    tau = D (Kp e + Kv edot) + (D qddot_ref + C qdot + G)               eq. (59)

with the errors over every measured joint (:class:`ExtendedComputedTorque`).
Here the drive friction and offsets ``F`` of the model are added too
(``F = 0`` with friction-free parameters, as in the paper).

Units: rad, m, s; gains ``Kp`` in 1/s^2, ``Kv`` in 1/s (accelerations per
error, not torques); torques N m (N).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from pardyn.control import ControlLaw, JointReference, actuator_limits, finite_vector
from pardyn.dynamics.closed_loop import ClosedLoopModel
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.errors import InputError

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot

__all__ = ["ComputedTorque", "ExtendedComputedTorque", "MeasuredReference"]

SPACES = ("actuated", "task")


def _gains(values: Sequence[float] | np.ndarray | float, size: int, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).reshape(-1)
    if array.size == 1:
        array = np.full(size, float(array[0]))
    array = finite_vector(array, size, what)
    if np.any(array < 0.0):
        raise InputError(f"{what}: must be >= 0, got {array.tolist()}")
    return array


def _reference(reference: JointReference, size: int, names: Sequence[str]) -> tuple[np.ndarray, ...]:
    what = f"reference of {list(names)}"
    return (
        finite_vector(reference.position, size, f"{what} positions"),
        finite_vector(reference.velocity, size, f"{what} velocities"),
        finite_vector(reference.acceleration, size, f"{what} accelerations"),
    )


class MeasuredReference:
    """Lift a reference of the actuated joints to every measured joint (actuated + sensed).

    The closed configuration of ``q_ref,a`` by the forward problem (warm-started
    from the previous call), then ``qdot``, ``qddot`` of every joint from
    ``qdot_ref,a``, ``qddot_ref,a`` by eqs. (21)/(24); returns the reference
    over ``robot.measured_names`` (n_m,), what :class:`ExtendedComputedTorque`
    reads when only actuated references exist (the ``trajectory`` node's).

    Args:
        robot: the robot.
        start: warm start of the first call (nv,); home by default.
    """

    def __init__(self, robot: Robot, *, start: np.ndarray | None = None) -> None:
        self.robot = robot
        self.q = (robot.home if start is None else np.asarray(start, dtype=float)).copy()

    def state(self, reference: JointReference) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The closed tree state ``(q, qdot, qddot)`` (nv,) each of an actuated reference (n_a,)."""
        robot = self.robot
        position, velocity, acceleration = _reference(reference, len(robot.actuated_names), robot.actuated_names)
        self.q = robot.solve_forward(position, start=self.q).q
        qdot, qddot = robot.differential.states_from(self.q, robot.actuated_indices, velocity, acceleration)
        return self.q, qdot, qddot

    def __call__(self, reference: JointReference) -> JointReference:
        """The reference over ``robot.measured_names`` (n_m,) of an actuated reference (n_a,)."""
        q, qdot, qddot = self.state(reference)
        index = self.robot.measured_indices
        return JointReference(q[index].copy(), qdot[index].copy(), qddot[index].copy())


class ComputedTorque(ControlLaw):
    """Computed torque control in actuated or task space (Vivas et al. 2003, eqs. 35, 37).

    ``tau = InverseDynamics.torques(q, qdot, qddot_cmd)`` (Briot et al. 2015,
    eqs. 19/26, minimum norm) with ``qddot_cmd`` closing the loops and giving
    ``v = ref'' + Kv (ref' - y') + Kp (ref - y)`` on ``y = q_a`` (actuated) or
    ``y = x`` (task). Reads the actuated joints (``joints = robot.actuated_names``)
    and an actuated reference.

    Args:
        robot: the robot.
        params: model parameters (nominal, or identified
            :class:`~pardyn.dynamics.parameters.DynamicParameters`); YAML nominal by default.
        kp: ``Kp`` (1/s^2), one per coordinate of the space (n_a actuated, n task) or one for all, >= 0.
        kd: ``Kv`` (1/s), same shape.
        space: ``"actuated"`` or ``"task"``.
        limits: torque limits (see :func:`pardyn.control.actuator_limits`); the URDF's by default.

    Stateful only through the warm starts of the forward problem (:meth:`reset`).
    """

    minimum_norm = True

    def __init__(
        self,
        robot: Robot,
        params: DynamicParameters | None = None,
        *,
        kp: Sequence[float] | np.ndarray | float,
        kd: Sequence[float] | np.ndarray | float,
        space: str = "actuated",
        limits: Sequence[float] | np.ndarray | None = None,
    ) -> None:
        if space not in SPACES:
            raise InputError(f"computed torque: space must be one of {list(SPACES)}, got {space!r}")
        self.robot = robot
        self.space = space
        self.limits = actuator_limits(robot, limits)
        self.joints = tuple(robot.actuated_names)
        self.inverse = InverseDynamics(robot, params)
        size = len(robot.actuated_names) if space == "actuated" else len(robot.task_names)
        self.kp = _gains(kp, size, f"computed torque ({space} space) gains kp")
        self.kd = _gains(kd, size, f"computed torque ({space} space) gains kd")
        self._reference_state = MeasuredReference(robot)
        self.q = robot.home.copy()

    def reset(self, start: np.ndarray | None = None) -> None:
        """Restart the warm starts of the forward problems from ``start`` (nv,), home by default."""
        q = self.robot.home if start is None else np.asarray(start, dtype=float)
        self.q = q.copy()
        self._reference_state.q = q.copy()

    def closed_state(self, position: np.ndarray, velocity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(q, qdot)`` (nv,) of the measured actuated ``q_a``, ``qdot_a`` (n_a,): forward problem, eq. (21)."""
        robot = self.robot
        self.q = robot.solve_forward(position, start=self.q).q
        qdot = robot.differential.velocities_from(self.q, robot.actuated_indices, velocity)
        return self.q, qdot

    def describe(self) -> str:
        return self.describe_gains()

    def unsaturated(self, position: np.ndarray, velocity: np.ndarray, reference: JointReference) -> np.ndarray:
        robot = self.robot
        if self.space == "actuated":
            q_ref, qdot_ref, qddot_ref = _reference(reference, self.size, self.joints)
            command = qddot_ref + self.kd * (qdot_ref - velocity) + self.kp * (q_ref - position)  # (n_a,), eq. (37)
            self.q = robot.solve_forward(position, start=self.q).q
            qdot, qddot = robot.differential.states_from(self.q, robot.actuated_indices, velocity, command)
            return self.inverse.torques(self.q, qdot, qddot)  # eq. (35) with eqs. (19)/(26)
        reference_q, reference_qdot, reference_qddot = self._reference_state.state(reference)
        task = robot.task_indices
        q, qdot = self.closed_state(position, velocity)
        command = (reference_qddot[task] + self.kd * (reference_qdot[task] - qdot[task])
                   + self.kp * (reference_q[task] - q[task]))  # (n,), eq. (37) on x
        return self.inverse.torques_from_task(q, qdot[task], command)


class ExtendedComputedTorque(ControlLaw):
    """The extended CTC of Zubizarreta et al. 2010, eq. (59), on actuated + sensed passive joints.

    ``tau = D (Kp e + Kv edot) + (D qddot_ref + C qdot + G + F)`` (n_a,) with
    ``D``, ``C`` (n_a, n_m) of the model in measured coordinates (eq. 58,
    :meth:`pardyn.dynamics.closed_loop.ClosedLoopModel.measured_space`),
    ``e = q_ref - q``, ``edot = qdot_ref - qdot`` (n_m,) over
    ``joints = robot.measured_names``. The configuration comes from the forward
    problem on every measured joint (least squares, warm-started), ``qdot`` of
    the tree from the measured rates (eq. 21 with ``I`` = measured).

    Args:
        robot: the robot; it must have sensed passive joints (rrr3).
        params: model parameters (rigid bodies: not regrouped base parameters); nominal by default.
        kp: ``Kp`` (1/s^2), (n_m,) or one for all, >= 0.
        kd: ``Kv`` (1/s), (n_m,) or one for all, >= 0.
        limits: torque limits; the URDF's by default.

    Raises:
        InputError: a robot without sensed joints, gains of the wrong count or sign.
    """

    minimum_norm = True

    def __init__(
        self,
        robot: Robot,
        params: DynamicParameters | None = None,
        *,
        kp: Sequence[float] | np.ndarray | float,
        kd: Sequence[float] | np.ndarray | float,
        limits: Sequence[float] | np.ndarray | None = None,
    ) -> None:
        if len(robot.sensed_names) == 0:
            raise InputError(
                f"{robot.description.source}: the extended computed torque needs sensed passive joints "
                f"('sensed'), {robot.name} has none"
            )
        self.robot = robot
        self.limits = actuator_limits(robot, limits)
        self.joints = tuple(robot.measured_names)
        self.model = ClosedLoopModel(robot, params)
        size = len(self.joints)
        self.kp = _gains(kp, size, "extended computed torque gains kp")
        self.kd = _gains(kd, size, "extended computed torque gains kd")
        self.q = robot.home.copy()

    def reset(self, start: np.ndarray | None = None) -> None:
        """Restart the warm start of the forward problem from ``start`` (nv,), home by default."""
        self.q = (self.robot.home if start is None else np.asarray(start, dtype=float)).copy()

    def describe(self) -> str:
        return self.describe_gains()

    def unsaturated(self, position: np.ndarray, velocity: np.ndarray, reference: JointReference) -> np.ndarray:
        robot = self.robot
        size = len(self.joints)
        q_ref, qdot_ref, qddot_ref = _reference(reference, size, self.joints)
        n_a = len(robot.actuated_names)
        self.q = robot.solve_forward(position[:n_a], sensed=position[n_a:], start=self.q).q
        qdot = robot.differential.velocities_from(self.q, robot.measured_indices, velocity)  # eq. (21)
        model = self.model.measured_space(self.q, qdot)  # eq. (58): D, C (n_a, n_m), G, F (n_a,)
        feedback = self.kp * (q_ref - position) + self.kd * (qdot_ref - velocity)  # (n_m,)
        return model.inertia @ (feedback + qddot_ref) + model.coriolis @ velocity + model.gravity + model.friction
