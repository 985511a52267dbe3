"""``augmented_pd``: :class:`pardyn.control.feedforward.AugmentedPD` (Briot et al. 2015, Fig. 4).

Reads ``natural_frequency_hz`` (its bandwidth), ``damping``, ``feedforward``, ``period_s``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pardyn.control import ControlLaw
from pardyn.control.laws.registry import LawOptions, limits_or_none, register

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot


@register("augmented_pd")
def build(robot: Robot, params: DynamicParameters | None, options: LawOptions) -> ControlLaw:
    from pardyn.control.feedforward import AugmentedPD  # noqa: PLC0415

    return AugmentedPD(robot, params, bandwidth_hz=options.natural_frequency_hz, damping=options.damping,
                       feedforward=options.feedforward, period_s=options.period_s, limits=limits_or_none(options))
