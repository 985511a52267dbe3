"""Closed-form kinematics of the DualV (Briot, Krut, Gautier 2015, section 5.2.2).

Loop closures, eq. (53), for legs ``i = 1..4`` (``k = 0, k_bar = 1`` for legs
1, 2; ``k = 1, k_bar = 0`` for legs 3, 4)::

    x - r_p sin(phi + k pi) = x_Ai + d2 cos q1i + d3 cos(q1i + q2i)      # = x_Ci
    y + r_p cos(phi + k pi) = y_Ai + d2 sin q1i + d3 sin(q1i + q2i)      # = y_Ci
    phi + k_bar pi = q1i + q2i + q3i

* inverse: each leg is a 2R inverse problem for its point ``C_i`` (eq. 54
  solved for ``q1i``), then ``q2i``, ``q3i`` from eq. (58).
* forward from the four actuated angles: legs 1-2 and legs 3-4 are five-bar
  loops, so ``C_1`` (= ``C_2``) and ``C_3`` (= ``C_4``) are meeting points of
  two circles of radius ``d3`` about ``B_j``, ``B_j+1`` (eqs. 54, 56-57); then the
  pose from eq. (55) and the passive joints from eq. (58).

Eq. (57) as printed has a typo: its ``k_j`` numerator reads
``x_Bj^2 + y_Bj^2 - y_Bj^2 - y_Bj+1^2``. Subtracting the two circle equations
``|C - B_j|^2 = |C - B_j+1|^2 = d3^2`` gives
``2 C . (B_j+1 - B_j) = |B_j+1|^2 - |B_j|^2``, i.e. ``x_C = f_j y_C + k_j`` with
``f_j`` as printed and::

    k_j = (x_Bj+1^2 + y_Bj+1^2 - x_Bj^2 - y_Bj^2) / (2 (x_Bj+1 - x_Bj))

(``p_j``, ``g_j``, ``r_j`` are right). The implementation uses the equivalent
vector form of :func:`~pardyn.kinematics.analytic.planar_geometry.circle_intersection`,
which also holds when ``x_Bj+1 = x_Bj`` (where eq. 56 divides by zero).

Eq. (55) is written here for any attachment offsets ``c_1``, ``c_3`` of the
URDF platform: ``phi = angle(C_1 - C_3) - angle(c_1 - c_3)`` (eq. 55 with
``c_1 = (0, r_p)``, ``c_3 = (0, -r_p)``, atan2 instead of atan) and
``(x, y) = (C_1 + C_3) / 2 - R(phi) (c_1 + c_3) / 2``.

The four readings over-determine the three degrees of freedom. The answer
keeps them (modulo 2 pi): with consistent readings the loops close to rounding;
with inconsistent ones (``|C_1 C_3| != 2 r_p``) eq. (55) splits the mismatch
between ``C_1`` and ``C_3`` and the loops stay open by it (``Solution.residual``
shows it); the generic solver (``method="newton"``) returns the closed
configuration nearest to the readings instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pardyn.errors import DescriptionError
from pardyn.kinematics.analytic.closed_form import register
from pardyn.kinematics.analytic.planar_geometry import angle_of, circle_intersection, cross, rotate
from pardyn.kinematics.analytic.planar_legs import PlanarClosedForm

if TYPE_CHECKING:
    from pardyn.mechanism import Mechanism

__all__ = ["DualVKinematics"]

_LOOPS = ((0, 1), (2, 3))  # legs 1-2 and legs 3-4 close on C_1 and C_3


@register("dualv")
class DualVKinematics(PlanarClosedForm):
    """DualV closed forms: Briot 2015 eqs. (53)-(58), geometry from the URDF."""

    def __init__(self, robot: Mechanism) -> None:
        super().__init__(robot)
        source = robot.source
        if len(self.legs) != 4 or self.platform.phi is None:
            raise DescriptionError(f"{source}: analytic: dualv needs four legs and a task (x, y, phi)")
        for j, k in _LOOPS:
            a, b = self.legs[j], self.legs[k]
            if np.linalg.norm(a.anchor - b.anchor) > 1e-12:
                raise DescriptionError(
                    f"{source}: closures: legs {a.number} and {b.number} must close on one platform point "
                    f"({a.attachment!r} and {b.attachment!r} differ)"
                )
        self._anchors = np.array([self.legs[j].anchor for j, _ in _LOOPS])  # c_1, c_3 (2, 2), m
        if np.linalg.norm(self._anchors[0] - self._anchors[1]) < 1e-9:
            raise DescriptionError(f"{source}: closures: the two five-bar loops close on the same platform point")
        home = self._home
        sides = []
        for j, k in _LOOPS:
            a, b = self.legs[j], self.legs[k]
            b_j, b_k = a.elbow(home[a.joints[0]]), b.elbow(home[b.joints[0]])
            tip = a.tip(home[a.joints[0]], home[a.joints[1]])
            sides.append(1 if cross(b_k - b_j, tip - b_j) > 0.0 else -1)
        self._home_assembly = tuple(sides)

    def pose_from_points(self, c1: np.ndarray, c3: np.ndarray) -> np.ndarray:
        """Task pose (3,) (m, m, rad) from the platform points ``C_1``, ``C_3`` (2,): eq. (55)."""
        anchor_1, anchor_3 = self._anchors
        angle = angle_of(c1 - c3) - angle_of(anchor_1 - anchor_3)
        position = 0.5 * (c1 + c3) - rotate(angle, 0.5 * (anchor_1 + anchor_3))
        return self.platform.pose(position, angle)

    def loop_points(self, actuated: np.ndarray, sides: tuple[int, int], *, what: str) -> tuple[np.ndarray, np.ndarray]:
        """``C_1``, ``C_3`` (2,) of the five-bar loops (eqs. 54, 56-57 corrected) on the given sides.

        ``sides[n] = +1`` puts the point left of ``B_j -> B_j+1``.
        """
        q1 = actuated[self._actuated]
        points = []
        for (j, k), side in zip(_LOOPS, sides):
            a, b = self.legs[j], self.legs[k]
            points.append(circle_intersection(
                a.elbow(q1[j]), a.distal, b.elbow(q1[k]), b.distal, side,
                what=f"{what}: distal circles of legs {a.number}, {b.number} (eq. 56)",
            ))
        return points[0], points[1]

    def forward(self, actuated: np.ndarray, sensed: np.ndarray | None = None) -> np.ndarray:
        """Every joint (nv,) from the four actuated angles (4,), rad: eqs. (54)-(58).

        Raises:
            ConvergenceError: a five-bar loop cannot close (negative discriminant of eq. 56).
            WorkingModeError: no root lies in the YAML ``assembly_mode``.
        """
        readings = self._vector(actuated, len(self.robot.actuated_names), "actuated")
        given = f"actuated {self._describe(readings, self.robot.actuated_names)}"
        what = f"{self.robot.name}: {given}"

        def candidates():
            for sides in self._ordered(self._home_assembly):
                c1, c3 = self.loop_points(readings, sides, what=what)
                yield self._with_readings(self.pose_from_points(c1, c3), readings)

        return self._first_on_branch(candidates(), self.robot.assembly_mode_violations, "assembly_mode", given)

