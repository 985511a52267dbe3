"""``extended_ctc``: :class:`pardyn.control.computed_torque.ExtendedComputedTorque` (Zubizarreta et al. 2010, eq. 59).

Actuated and sensed joints; gains as ``ctc`` (:meth:`.registry.CtcOptions.ctc_gains`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pardyn.control import ControlLaw
from pardyn.control.laws.registry import CtcOptions, LawCommon, limits_or_none, register

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot


@register
class ExtendedCTC:
    name = "extended_ctc"
    Options = CtcOptions

    def build(self, robot: Robot, params: DynamicParameters | None, options: CtcOptions,
              common: LawCommon) -> ControlLaw:
        from pardyn.control.computed_torque import ExtendedComputedTorque  # noqa: PLC0415

        kp, kd = options.ctc_gains()
        return ExtendedComputedTorque(robot, params, kp=kp, kd=kd, limits=limits_or_none(common))
