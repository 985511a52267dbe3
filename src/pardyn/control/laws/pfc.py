"""``pfc``: :class:`pardyn.control.pfc.PredictiveFunctionalControl` (Vivas & Poignet 2003, section 3).

Reads ``period_s`` and ``pfc`` (the law's keyword arguments), from the controller node's ``pfc_*``
parameters (:func:`parameter_options`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pardyn.control import ControlLaw
from pardyn.control.laws.registry import LawOptions, limits_or_none, register

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot


def parameter_options(p: Mapping[str, Any]) -> dict[str, Any]:
    """The controller node's ``pfc_*`` parameters as :attr:`LawOptions.pfc` (empty ``pfc_points``: the law's)."""
    pfc = {"kp": p["pfc_kp"], "kv": p["pfc_kv"], "response_periods": p["pfc_response_periods"],
           "degree": p["pfc_degree"], "error_window": p["pfc_error_window"]}
    if p["pfc_points"]:
        pfc["points"] = p["pfc_points"]
    return {"pfc": pfc}


@register("pfc", options=parameter_options)
def build(robot: Robot, params: DynamicParameters | None, options: LawOptions) -> ControlLaw:
    from pardyn.control.pfc import PredictiveFunctionalControl  # noqa: PLC0415

    return PredictiveFunctionalControl(robot, params, period_s=options.period_s, limits=limits_or_none(options),
                                       **options.pfc)
