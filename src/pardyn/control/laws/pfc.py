"""``pfc``: :class:`pardyn.control.pfc.PredictiveFunctionalControl` (Vivas & Poignet 2003, section 3).

Its options are the controller node's ``pfc_*`` parameters (``prefix``) and the period.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pardyn.control import ControlLaw
from pardyn.control.laws.registry import LawCommon, limits_or_none, register
from pardyn.registry import option

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot


@dataclass(frozen=True)
class PFCOptions:
    kp: float = option(50.0, "PFC inner-loop proportional gain (1/s^2)", unit="1/s^2", low=1e-9, high=1e9)
    kv: float = option(68.0, "PFC inner-loop derivative gain (1/s)", unit="1/s", low=0.0, high=1e9)
    response_periods: float = option(18.0, "PFC closed-loop response time CLTR (control periods)",
                                     unit="control periods", low=1e-3, high=1e6)
    points: tuple[int, ...] = option((), "PFC coincidence points (control periods); empty: 6, 12, 18",
                                     unit="control periods")
    degree: int = option(1, "PFC error extrapolation degree (eq. 29)", low=0, high=5)
    error_window: int = option(20, "past errors the PFC extrapolation is fitted to", low=1, high=10_000)


@register
class PFC:
    name = "pfc"
    prefix = "pfc_"
    Options = PFCOptions

    def build(self, robot: Robot, params: DynamicParameters | None, options: PFCOptions,
              common: LawCommon) -> ControlLaw:
        from pardyn.control.pfc import PredictiveFunctionalControl  # noqa: PLC0415

        points = {"points": options.points} if options.points else {}
        return PredictiveFunctionalControl(robot, params, kp=options.kp, kv=options.kv,
                                           response_periods=options.response_periods, degree=options.degree,
                                           error_window=options.error_window, period_s=common.period_s,
                                           limits=limits_or_none(common), **points)
