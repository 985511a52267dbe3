"""``augmented_pd``: :class:`pardyn.control.feedforward.AugmentedPD` (Briot et al. 2015, Fig. 4).

Options: ``natural_frequency_hz`` (its bandwidth), ``damping``, ``feedforward``; and the period.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pardyn.control import ControlLaw
from pardyn.control.laws.registry import ErrorDynamics, LawCommon, limits_or_none, register
from pardyn.registry import option

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot


@dataclass(frozen=True)
class AugmentedPDOptions(ErrorDynamics):
    feedforward: bool = option(True, "augmented_pd: add the inverse dynamics of the reference "
                                     "(Briot et al. 2015, Fig. 4)")


@register
class AugmentedPDLaw:
    name = "augmented_pd"
    Options = AugmentedPDOptions

    def build(self, robot: Robot, params: DynamicParameters | None, options: AugmentedPDOptions,
              common: LawCommon) -> ControlLaw:
        from pardyn.control.feedforward import AugmentedPD  # noqa: PLC0415

        return AugmentedPD(robot, params, bandwidth_hz=options.natural_frequency_hz, damping=options.damping,
                           feedforward=options.feedforward, period_s=common.period_s, limits=limits_or_none(common))
