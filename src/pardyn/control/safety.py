"""Command safety: what the sim accepts, and what a controller sends when it cannot compute a command.

A command is one effort per actuator, in ``robot.actuated_names`` order (N m,
N for prismatic drives), the ``data`` of a std_msgs/Float64MultiArray on
``effort_controller/commands``. :func:`check_command` accepts it or raises
:class:`CommandRejected` with one of :data:`REJECT_REASONS`:

* ``length``: not one value per actuator;
* ``non_finite``: NaN or inf;
* ``implausible``: some ``|tau_i| > implausible_factor * limit_i`` (10x by
  default): no controller of this robot means that (a unit error, a corrupted
  or hostile message); it is refused instead of being saturated, so it cannot
  push the robot out of its assembly mode at full torque. Values between the
  limit and the plausibility bound are saturated by the receiver;
* ``joint_names``: the message names its joints (:func:`joint_label`, in
  ``layout.dim[0].label``) in another order or other joints.

Joint names in the layout: pardyn's controller writes
``layout.dim[0].label = "leg1_joint1,leg2_joint1,..."`` (comma-separated, the
order of ``data``); a label that does not split into one name per value (empty,
``"joints"``, as ros2_control's forward_command_controller leaves it) is not
checked -- the order is then the contract: the effort controller's ``joints``
list must be ``robot.actuated_names``.

:class:`SafeCommand` is the command a controller holds when its law cannot give
one (the closure solve failed, the robot left its assembly mode): zero torque,
or a joint damping ``tau = -D qdot_a`` (saturated), which brakes the actuators
without any model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pardyn.errors import InputError

__all__ = ["REJECT_REASONS", "SAFE_COMMANDS", "CommandRejected", "SafeCommand", "check_command",
           "joint_label", "label_joint_names"]

REJECT_REASONS = ("length", "non_finite", "implausible", "joint_names")
SAFE_COMMANDS = ("zero", "damping")
DEFAULT_IMPLAUSIBLE_FACTOR = 10.0


class CommandRejected(InputError):
    """A command that must not be applied; ``reason`` is one of :data:`REJECT_REASONS`."""

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def joint_label(names: Sequence[str]) -> str:
    """The layout label naming the joints of a command: ``"a,b,c"``."""
    return ",".join(names)


def label_joint_names(label: str, size: int) -> list[str] | None:
    """The joint names a layout label gives for ``size`` values, or None when it names none.

    A label names joints when it splits at commas into ``size`` non-empty names
    (``size`` >= 2; a single-actuator robot's label is taken as a name when non-empty
    and not the generic ``"joints"``).
    """
    label = label.strip()
    if not label or label == "joints":
        return None
    names = [item.strip() for item in label.split(",")]
    if len(names) != size or not all(names):
        return None
    return names


def check_command(
    data: Sequence[float] | np.ndarray,
    names: Sequence[str],
    limits: np.ndarray,
    *,
    label: str = "",
    implausible_factor: float = DEFAULT_IMPLAUSIBLE_FACTOR,
) -> np.ndarray:
    """The command's efforts (n_a,), unsaturated, or :class:`CommandRejected` naming the problem.

    Args:
        data: the values, one per actuator in ``names`` order (N m, N).
        names: the actuated joints (n_a,).
        limits: per-actuator effort limits (n_a,) (:func:`pardyn.control.actuator_limits`).
        label: ``layout.dim[0].label`` of the message, checked when it names joints.
        implausible_factor: commands beyond this multiple of a limit are refused (> 1).
    """
    names = list(names)
    values = np.asarray(data, dtype=float).reshape(-1)
    if values.size != len(names):
        raise CommandRejected(f"expected {len(names)} torques {names}, got {values.size}", reason="length")
    labelled = label_joint_names(label, len(names))
    if labelled is not None and labelled != names:
        raise CommandRejected(
            f"the command's layout names its joints {labelled}, expected {names} in this order "
            "(the effort controller's 'joints' list must follow robot.actuated_names)",
            reason="joint_names",
        )
    bad = [name for name, value in zip(names, values) if not math.isfinite(value)]
    if bad:
        raise CommandRejected(f"non-finite torques for {bad}: {values.tolist()}", reason="non_finite")
    with np.errstate(over="ignore"):  # an unlimited joint (limit: the largest float) has an infinite bound
        bound = implausible_factor * np.asarray(limits, dtype=float)
    wild = [f"{name} {value:.6g}" for name, value, b in zip(names, values, bound) if abs(value) > b]
    if wild:
        raise CommandRejected(
            f"implausible torques {wild}: beyond {implausible_factor:g}x the limits {np.asarray(limits).tolist()} "
            "(N m, N for prismatic drives)",
            reason="implausible",
        )
    return values


class SafeCommand:
    """The command held when no law output is available: zero torque or joint damping.

    ``tau = -D qdot_a`` saturated at ``limits`` (``kind="damping"``, ``D`` in N m s/rad
    or N s/m per actuator), or ``tau = 0`` (``kind="zero"``, or without velocities).

    Args:
        kind: one of :data:`SAFE_COMMANDS`.
        limits: per-actuator limits (n_a,).
        damping: ``D``, one value or one per actuator (>= 0).
    """

    def __init__(self, kind: str, limits: np.ndarray, damping: Sequence[float] | float = 0.0) -> None:
        if kind not in SAFE_COMMANDS:
            raise InputError(f"safe command: unknown kind {kind!r}, expected one of {list(SAFE_COMMANDS)}")
        self.kind = kind
        self.limits = np.asarray(limits, dtype=float)
        damping = np.broadcast_to(np.asarray(damping, dtype=float).reshape(-1), self.limits.shape).copy()
        if not np.all(np.isfinite(damping)) or np.any(damping < 0.0):
            raise InputError(f"safe command: damping must be finite and >= 0, got {damping.tolist()}")
        self.damping = damping

    def __call__(self, velocity: np.ndarray | None = None) -> np.ndarray:
        """The safe efforts (n_a,) for the actuated velocities ``velocity`` (n_a,) or None."""
        if self.kind == "zero" or velocity is None or not np.all(np.isfinite(velocity)):
            return np.zeros_like(self.limits)
        return np.clip(-self.damping * np.asarray(velocity, dtype=float), -self.limits, self.limits)

    def describe(self) -> str:
        if self.kind == "zero":
            return "zero torque"
        return f"joint damping -D qdot, D = {self.damping.tolist()} (N m s/rad)"
