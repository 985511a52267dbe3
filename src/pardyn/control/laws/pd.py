"""``pd``: :class:`pardyn.control.pd.JointPD` from ``kp``, ``kd`` (no dynamic model)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pardyn.control import ControlLaw, actuator_limits
from pardyn.control.laws.registry import LawCommon, PDGains, register
from pardyn.errors import InputError

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot


@register
class PD:
    name = "pd"
    model = False
    Options = PDGains

    def build(self, robot: Robot, params: DynamicParameters | None, options: PDGains, common: LawCommon) -> ControlLaw:
        from pardyn.control.pd import JointPD  # noqa: PLC0415

        if not len(options.kp) or not len(options.kd):
            raise InputError(f"parameters kp and kd: the PD law needs gains for {list(robot.actuated_names)}, "
                             f"got {list(options.kp)}, {list(options.kd)}")
        return JointPD(options.kp, options.kd, limits=actuator_limits(robot, common.limits),
                       joints=tuple(robot.actuated_names))
