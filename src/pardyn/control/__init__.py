"""Control laws of the pure core (no rclpy): actuator torques from measured joints.

A control law maps the measured joints it reads (``law.joints``, n_j: the
actuated joints, or actuated + sensed passive joints for the extended CTC)
``q``, ``qdot`` (n_j,) and a joint-space reference over the same joints
(:class:`JointReference`) to actuator torques
``tau_a`` (n_a,) in ``robot.actuated_names`` order, saturated per actuator at
``|tau_a[i]| <= limits[i]`` (N m, N for prismatic joints). The ROS node
:mod:`pardyn.nodes.controller` hosts them; the laws themselves never see a
message.

* :class:`pardyn.control.pd.JointPD`: decentralized joint PD,
  ``tau = Kp (q_ref - q) + Kd (qdot_ref - qdot)``.
* :class:`pardyn.control.feedforward.AugmentedPD`: the DualV controller
  (Briot et al. 2015, Fig. 4): PD from a bandwidth, filtered derivative,
  inverse-dynamics feedforward.
* :class:`pardyn.control.computed_torque.ComputedTorque` (actuated or task
  space) and :class:`pardyn.control.computed_torque.ExtendedComputedTorque`
  (Zubizarreta et al. 2010, eq. 59, actuated + sensed joints).

:func:`actuator_limits` gives the per-actuator torque limits: the robot YAML's
``limits: effort:`` (realistic per-actuator figures, N m or N), else the URDF's
``<limit effort=...>`` (pinocchio's ``model.effortLimit``), unless overridden.
:mod:`pardyn.control.safety` checks commands against them and gives the safe
command of a controller that cannot compute one.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from pardyn.errors import InputError

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["ControlLaw", "JointReference", "actuator_limits", "finite_vector", "saturate", "yaml_effort_limits"]


def finite_vector(values: Sequence[float] | np.ndarray, size: int, what: str) -> np.ndarray:
    """``values`` as a float array of shape (size,), or InputError naming ``what`` and the problem."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size != size:
        raise InputError(f"{what}: expected {size} values, got {array.size} (shape {array.shape})")
    bad = [i for i, value in enumerate(array) if not math.isfinite(value)]
    if bad:
        raise InputError(f"{what}: non-finite values at indices {bad}: {array.tolist()}")
    return array


@dataclass(frozen=True)
class JointReference:
    """Reference of joints at one instant, in the order of the law's ``joints``.

    Attributes:
        position: ``q_ref`` (n_j,) (rad, m).
        velocity: ``qdot_ref`` (n_j,) (rad/s, m/s).
        acceleration: ``qddot_ref`` (n_j,) (rad/s^2, m/s^2).
    """

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray

    @classmethod
    def hold(cls, position: Sequence[float] | np.ndarray) -> JointReference:
        """A fixed setpoint: ``position`` (n_a,) with zero velocity and acceleration."""
        position = np.array(position, dtype=float)
        return cls(position, np.zeros_like(position), np.zeros_like(position))


def saturate(tau: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """``tau`` (n_a,) clipped per actuator to ``[-limits[i], limits[i]]``, shape (n_a,)."""
    return np.minimum(np.maximum(tau, -limits), limits)  # np.clip costs 3x more on these sizes


def yaml_effort_limits(robot: Robot) -> np.ndarray | None:
    """The robot YAML's per-actuator effort limits (n_a,), ``robot.actuated_names`` order, or None.

    The typed ``limits:`` section (:mod:`pardyn.description.limits`: N m for a revolute
    actuator, N for a prismatic one, every actuated joint, checked when the robot loads)::

        limits:
          effort: {leg1_joint1: 127.0, leg2_joint1: 127.0, ...}   # every actuated joint
    """
    effort = robot.description.limits.effort
    return np.array([effort[name] for name in robot.actuated_names]) if effort else None


def actuator_limits(robot: Robot, override: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
    """Per-actuator torque limits (n_a,) in ``robot.actuated_names`` order (N m, N).

    Args:
        robot: the robot; the default is its YAML's ``limits: effort:``
            (:func:`yaml_effort_limits`), else the URDF ``<limit effort=...>`` of each
            actuated joint, read by pinocchio into ``robot.model.effortLimit``.
        override: None or empty for the robot's limits; one positive value for
            every actuator; or one per actuator.

    Raises:
        InputError: wrong count, or a limit that is not positive and finite;
            the message names the joint at fault.
    """
    names = list(robot.actuated_names)
    if override is None or len(override) == 0:
        limits = yaml_effort_limits(robot)
        source = f"{robot.description.source}: limits.effort"
        if limits is None:
            limits = np.asarray(robot.model.effortLimit, dtype=float)[robot.actuated_indices]
            source = f"{robot.description.source}: URDF <limit effort>"
    else:
        values = np.asarray(override, dtype=float).reshape(-1)
        if values.size == 1:
            values = np.full(len(names), float(values[0]))
        if values.size != len(names):
            raise InputError(
                f"effort limits: expected 1 or {len(names)} values {names}, got {values.size}"
            )
        limits = values
        source = "effort limits"
    bad = [name for name, value in zip(names, limits) if not (math.isfinite(value) and value > 0.0)]
    if bad:
        remedy = ("; give those joints <limit effort=... velocity=...> in the tree, or the YAML a 'limits: effort:' "
                  "section" if source.endswith("<limit effort>") else "")
        raise InputError(f"{source}: the limits of {bad} must be positive and finite, got {limits.tolist()}{remedy}")
    return limits.copy()


class ControlLaw(ABC):
    """A joint-space control law: actuator torques from measured joints.

    Attributes:
        limits: per-actuator torque limits (n_a,) (N m, N); every output is
            saturated at ``|tau[i]| <= limits[i]``.
        joints: names of the measured joints the law reads, in the order of
            its inputs (n_j,): ``robot.actuated_names`` for every law but the
            extended computed torque, which reads ``robot.measured_names``
            (actuated, then sensed passive joints). Empty for a law built
            without a robot (e.g. ``JointPD(kp, kd, limits=...)``): it then
            reads the n_a actuated joints.
        minimum_norm: True when the law's torques are already the minimum-norm
            ones (no internal stress, the inverse-dynamics-based laws): the
            eq. (50) projection of Briot et al. 2015 is then useless and the
            hosts (``run_closed_loop``, the controller node) skip it.
    """

    limits: np.ndarray
    joints: tuple[str, ...] = ()
    minimum_norm: bool = False

    @property
    def size(self) -> int:
        """The number of actuators ``n_a``."""
        return int(self.limits.size)

    @property
    def inputs(self) -> int:
        """The number of joints read ``n_j``: ``len(joints)``, or ``n_a`` when ``joints`` is empty."""
        return len(self.joints) if self.joints else self.size

    def torques(self, position: np.ndarray, velocity: np.ndarray, reference: JointReference) -> np.ndarray:
        """Saturated actuator torques (n_a,) for the measured ``q``, ``qdot`` (n_j,) each, over ``joints``.

        Raises:
            InputError: a measurement of the wrong size or with NaN/inf.
        """
        position = finite_vector(position, self.inputs, "measured positions")
        velocity = finite_vector(velocity, self.inputs, "measured velocities")
        return saturate(self.unsaturated(position, velocity, reference), self.limits)

    def describe(self) -> str:
        """One line for the logs: the law and its gains (here the class name; laws with gains say more)."""
        return type(self).__name__

    def describe_gains(self) -> str:
        """``Name, kp [...], kd [...], joints [...]``: the description of the laws with joint gains ``kp``, ``kd``."""
        kp, kd = getattr(self, "kp"), getattr(self, "kd")
        return f"{type(self).__name__}, kp {kp.tolist()}, kd {kd.tolist()}, joints {list(self.joints)}"

    @abstractmethod
    def unsaturated(self, position: np.ndarray, velocity: np.ndarray, reference: JointReference) -> np.ndarray:
        """The law itself, before saturation, (n_a,); inputs already checked."""
