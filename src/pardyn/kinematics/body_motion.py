"""Planar motion of a body through a reference point, as a function of the generalized speeds.

Wu, Wang, Wang, Li 2009 (Mechatronics 19), section 2: a body's *pivotal point*
``P`` has the partial velocity matrix ``H`` (eq. 1) and the body the partial
angular velocity matrix ``G`` (eq. 2) with respect to the generalized speeds
``v`` (n,)::

    v_P = H v             # (2,), H: (2, n), eq. (13)
    omega = G v           # scalar (planar), G: (n,), eq. (12)

The kinematics computes these (:mod:`pardyn.kinematics.analytic.wu`); the
dynamics turns them into inertia wrenches (:mod:`pardyn.dynamics.virtual_work`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BodyMotion"]


@dataclass(frozen=True)
class BodyMotion:
    """Motion of one body through its pivotal point, for samples ``...``.

    Attributes:
        name: body name (the parameters are named ``<p>_<name>``).
        position: pivotal point ``P`` (..., 2), m.
        velocity_map: partial velocity matrix ``H`` (..., 2, n), eq. (1).
        velocity: ``v_P = H v`` (..., 2), m/s.
        acceleration: ``a_P`` (..., 2), m/s^2.
        angle: body frame angle ``theta`` (...), rad CCW, None for a translating body.
        angular_velocity_map: partial angular velocity matrix ``G`` (..., n), eq. (2).
        angular_velocity, angular_acceleration: (...), rad/s, rad/s^2.
    """

    name: str
    position: np.ndarray
    velocity_map: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    angle: np.ndarray | None = None
    angular_velocity_map: np.ndarray | None = None
    angular_velocity: np.ndarray | None = None
    angular_acceleration: np.ndarray | None = None

    @property
    def rotates(self) -> bool:
        """Whether the body rotates (has an angle), or only translates (sliders, counterweights)."""
        return self.angle is not None
