"""Closed-form kinematics of the planar 5R five-bar (Briot 2015, eqs. 54-58).

Two 2R legs (:class:`~pardyn.kinematics.analytic.planar_legs.PlanarLeg`, conventions
and branch selection in :mod:`pardyn.kinematics.analytic.planar_legs`) whose tips
meet at the end-effector.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pardyn.errors import DescriptionError, InputError
from pardyn.kinematics.analytic.closed_form import register
from pardyn.kinematics.analytic.planar_geometry import TOLERANCE, circle_intersection, cross
from pardyn.kinematics.analytic.planar_legs import PlanarClosedForm

if TYPE_CHECKING:
    from pardyn.mechanism import Mechanism

__all__ = ["FiveBarKinematics"]


@register("five_bar")
class FiveBarKinematics(PlanarClosedForm):
    """Planar 5R five-bar: two 2R legs whose tips meet at the end-effector.

    inverse: two 2R inverse problems (:meth:`PlanarClosedForm.inverse`).
    forward: the end-effector is a meeting point of the distal circles
    ``|C - B_1| = L2_1``, ``|C - B_2| = L2_2`` (:func:`circle_intersection`,
    the five-bar part of Briot 2015 eqs. 54-57), on the YAML ``assembly_mode``;
    the distal angles follow from eq. (58).
    """

    def __init__(self, robot: Mechanism) -> None:
        super().__init__(robot)
        if len(self.legs) != 2 or self.platform.phi is not None:
            raise DescriptionError(f"{robot.source}: analytic: five_bar needs two legs and a task (x, y)")
        first, second = self.legs
        if np.linalg.norm(first.anchor - second.anchor) > TOLERANCE:
            raise DescriptionError(f"{robot.source}: closures: five_bar legs must close on one point")
        home = self._home
        b1, b2 = first.elbow(home[first.joints[0]]), second.elbow(home[second.joints[0]])
        tip = first.tip(home[first.joints[0]], home[first.joints[1]])
        self._home_assembly = 1 if cross(b2 - b1, tip - b1) > 0.0 else -1

    def forward(self, actuated: np.ndarray, sensed: np.ndarray | None = None) -> np.ndarray:
        """Every joint (nv,) from the two actuated angles (2,), rad.

        Raises:
            ConvergenceError: the distal circles do not meet.
            WorkingModeError: the root in the YAML ``assembly_mode`` is not found.
        """
        readings = self._vector(actuated, len(self.robot.actuated_names), "actuated")
        if sensed is not None and np.size(sensed):
            raise InputError(f"{self.robot.name}: the five-bar closed form uses no sensed joints, got {sensed}")
        first, second = self.legs
        q1 = readings[self._actuated]
        given = f"actuated {self._describe(readings, self.robot.actuated_names)}"
        b1, b2 = first.elbow(q1[0]), second.elbow(q1[1])

        def candidates():
            for side in (self._home_assembly, -self._home_assembly):
                point = circle_intersection(b1, first.distal, b2, second.distal, side,
                                            what=f"{self.robot.name}: {given}: distal circles of legs 1, 2")
                yield self._with_readings(self.platform.pose(point - first.anchor, 0.0), readings)

        return self._first_on_branch(candidates(), self.robot.assembly_mode_violations, "assembly_mode", given)
