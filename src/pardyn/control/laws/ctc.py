"""``ctc`` and ``ctc_task``: :class:`pardyn.control.computed_torque.ComputedTorque` in actuated / task space.

The task-space law is Vivas et al. 2003, eqs. 35-37. Both read ``ctc_kp``, ``ctc_kd`` or
``natural_frequency_hz``, ``damping`` (:meth:`LawOptions.ctc_gains`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pardyn.control import ControlLaw
from pardyn.control.laws.registry import LawOptions, limits_or_none, register

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot


def _computed_torque(space: str, robot: Robot, params: DynamicParameters | None, options: LawOptions) -> ControlLaw:
    from pardyn.control.computed_torque import ComputedTorque  # noqa: PLC0415

    kp, kd = options.ctc_gains()
    return ComputedTorque(robot, params, kp=kp, kd=kd, space=space, limits=limits_or_none(options))


@register("ctc")
def build_actuated(robot: Robot, params: DynamicParameters | None, options: LawOptions) -> ControlLaw:
    return _computed_torque("actuated", robot, params, options)


@register("ctc_task")
def build_task(robot: Robot, params: DynamicParameters | None, options: LawOptions) -> ControlLaw:
    return _computed_torque("task", robot, params, options)
