"""Closed-form kinematics of the 3-RRR (Zubizarreta, Cabanes, Marcos, Pinto 2010, section 4.2).

Leg ``i`` (``L_i = |A_iB_i|``, ``l_i = |B_iC_i|``) carries an encoder on its
active joint ``q_ai`` (``leg{i}_joint1``) and on its passive joint ``q_pi``
(``leg{i}_joint2``); the platform vertices are ``C_i = P - d_i (cos(theta +
phi_i), sin(theta + phi_i))`` (eq. 28).

* forward from active + passive readings (the fully sensed legs make it
  unique and explicit):

  - eq. (31): ``C_i = A_i + L_i (cos q_ai, sin q_ai) + l_i (cos(q_ai + q_pi), sin(q_ai + q_pi))``;
  - eq. (32): ``P`` is the centroid of the ``C_i``;
  - eqs. (33)-(34): ``theta`` is the mean over the legs of
    ``angle(C_iP) - phi_i``, (34) being that mean with ``sum phi_i = 5 pi / 2``.
    The three angles are averaged after wrapping each to within pi of the
    first one (eq. 34 with plain ``arctan`` would mix branches).

  Written for any attachment offsets ``c_i`` read from the URDF (``C_i = P +
  R(theta) c_i``): ``theta = mean_i [angle(C_i - C_mean) - angle(c_i - c_mean)]``,
  ``P = C_mean - R(theta) c_mean``, which is (32)-(34) for the paper's
  platform (``c_mean = 0``, ``-c_i = d_i (cos phi_i, sin phi_i)``).
  The readings are kept (modulo 2 pi); ``leg{i}_joint3`` closes the orientation
  (eq. 27: ``q_ai + q_pi + q_3i = theta``). Consistent readings close the loops
  to rounding; noisy ones leave them open by the noise (``Solution.residual``),
  while the generic solver (``method="newton"``) fits the closest closed
  configuration in the least-squares sense.
* forward from the active joints alone: the paper gives no closed form (it is
  a polynomial of degree 6), so this falls back to the generic Newton solver.
* inverse: eq. (35) for ``q_ai`` and eq. (36) for ``q_pi``, as the 2R leg
  inverse problem of :class:`~pardyn.kinematics.analytic.planar_legs.PlanarLeg`
  (same roots; the sign is the working mode, chosen by the YAML conditions).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from pardyn.errors import DescriptionError
from pardyn.kinematics.analytic.closed_form import register
from pardyn.kinematics.analytic.planar_geometry import angle_of, rotate, wrap_angle
from pardyn.kinematics.analytic.planar_legs import PlanarClosedForm

if TYPE_CHECKING:
    from pardyn.mechanism import Mechanism

__all__ = ["RRR3Kinematics"]


@register("rrr3")
class RRR3Kinematics(PlanarClosedForm):
    """3-RRR closed forms: Zubizarreta 2010 eqs. (31)-(36), geometry from the URDF."""

    def __init__(self, robot: Mechanism) -> None:
        super().__init__(robot)
        source = robot.source
        if len(self.legs) < 2 or self.platform.phi is None:
            raise DescriptionError(f"{source}: analytic: rrr3 needs at least two legs and a task (x, y, theta)")
        anchors = np.array([leg.anchor for leg in self.legs])  # c_i (n_legs, 2), m
        self._anchor_mean = anchors.mean(axis=0)
        self._anchor_angles = np.array([angle_of(c - self._anchor_mean) for c in anchors])
        if np.min(np.linalg.norm(anchors - self._anchor_mean, axis=1)) < 1e-9:
            raise DescriptionError(f"{source}: closures: an attachment point is at the platform's centroid")
        sensed = list(robot.sensed_names)
        names = [f"leg{leg.number}_joint2" for leg in self.legs]
        # Positions in the sensed vector of every leg's passive joint, or None (then Newton).
        self._sensed = np.array([sensed.index(n) for n in names]) if set(names) <= set(sensed) else None

    def pose_from_points(self, points: np.ndarray) -> np.ndarray:
        """Task pose (3,) (m, m, rad) from the platform vertices ``C_i`` (n_legs, 2): eqs. (32)-(34)."""
        centroid = points.mean(axis=0)
        angles = [angle_of(p - centroid) - a for p, a in zip(points, self._anchor_angles)]
        reference = angles[0]
        angle = reference + float(np.mean([wrap_angle(a, reference) - reference for a in angles]))
        return self.platform.pose(centroid - rotate(angle, self._anchor_mean), angle)

    def forward(self, actuated: np.ndarray, sensed: np.ndarray | None = None) -> np.ndarray:
        """Every joint (nv,) from the active angles (3,) and the passive readings (3,), rad.

        Without ``sensed`` (or if the passive joints are not all sensed) this is
        the generic Newton solver (:meth:`~pardyn.kinematics.analytic.closed_form.AnalyticKinematics.newton_forward`).

        Raises:
            WorkingModeError: the answer violates the YAML ``assembly_mode``.
            ConvergenceError, SingularityError: from the Newton fallback.
        """
        readings = self._vector(actuated, len(self.robot.actuated_names), "actuated")
        if sensed is None or self._sensed is None:
            return self.newton_forward(readings, sensed)
        passive = self._vector(sensed, len(self.robot.sensed_names), "sensed")
        q1 = readings[self._actuated]
        q2 = passive[self._sensed]
        points = np.array([leg.tip(a, p) for leg, a, p in zip(self.legs, q1, q2)])  # eq. (31)
        pose = self.pose_from_points(points)
        angle = self.platform.angle(pose)
        joints = [
            (a, p, math.nan if leg.joints[2] is None else angle + leg.anchor_yaw - a - p - leg.offset3)
            for leg, a, p in zip(self.legs, q1, q2)
        ]
        given = (f"actuated {self._describe(readings, self.robot.actuated_names)}, "
                 f"sensed {self._describe(passive, self.robot.sensed_names)}")
        return self._first_on_branch([self._configuration(pose, joints)], self.robot.assembly_mode_violations,
                                     "assembly_mode", given)
