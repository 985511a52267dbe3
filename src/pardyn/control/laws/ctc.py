"""``ctc`` and ``ctc_task``: :class:`pardyn.control.computed_torque.ComputedTorque` in actuated / task space.

The task-space law is Vivas et al. 2003, eqs. 35-37. Both read ``ctc_kp``, ``ctc_kd`` or
``natural_frequency_hz``, ``damping`` (:meth:`.registry.CtcOptions.ctc_gains`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pardyn.control import ControlLaw
from pardyn.control.laws.registry import CtcOptions, LawCommon, limits_or_none, register

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot


@register
class ActuatedComputedTorque:
    name = "ctc"
    space = "actuated"
    Options = CtcOptions

    def build(self, robot: Robot, params: DynamicParameters | None, options: CtcOptions,
              common: LawCommon) -> ControlLaw:
        from pardyn.control.computed_torque import ComputedTorque  # noqa: PLC0415

        kp, kd = options.ctc_gains()
        return ComputedTorque(robot, params, kp=kp, kd=kd, space=self.space, limits=limits_or_none(common))


@register
class TaskComputedTorque(ActuatedComputedTorque):
    name = "ctc_task"
    space = "task"
