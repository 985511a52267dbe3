"""Planar geometry shared by the closed-form kinematics (:mod:`pardyn.kinematics.analytic`).

Plain 2-D helpers on points and vectors of shape (2,), m and rad CCW: angle
wrapping, polar angle, rotation, the z component of a cross product, and the
meeting point of two circles (the five-bar forward problem of Briot 2015,
eqs. 56-57, used by the five-bar, DualV and Wu closed forms).
"""

from __future__ import annotations

import math

import numpy as np

from pardyn.errors import ConvergenceError

__all__ = ["TOLERANCE", "angle_of", "circle_intersection", "cross", "format_point", "rotate", "wrap_angle"]

TOLERANCE = 1e-12
"""Distances (m) below which two points coincide."""


def wrap_angle(angle: float, reference: float = 0.0) -> float:
    """``angle`` plus a multiple of 2 pi, within [reference - pi, reference + pi) (rad)."""
    return reference + (angle - reference + math.pi) % (2.0 * math.pi) - math.pi


def angle_of(vector: np.ndarray) -> float:
    """Polar angle of a planar vector (2,), rad in (-pi, pi]."""
    return math.atan2(vector[1], vector[0])


def rotate(angle: float, vector: np.ndarray) -> np.ndarray:
    """``R(angle) vector`` for a planar vector (2,), shape (2,)."""
    c, s = math.cos(angle), math.sin(angle)
    x, y = float(vector[0]), float(vector[1])
    return np.array([c * x - s * y, s * x + c * y])


def cross(a: np.ndarray, b: np.ndarray) -> float:
    """z component of ``a x b`` for planar vectors (2,): > 0 when ``b`` is left of ``a``."""
    return float(a[0] * b[1] - a[1] * b[0])


def format_point(point: np.ndarray) -> str:
    """``(x, y)`` with 6 significant digits, for error messages."""
    return "(" + ", ".join(f"{v:.6g}" for v in point) + ")"


def circle_intersection(
    centre_a: np.ndarray, radius_a: float, centre_b: np.ndarray, radius_b: float, side: int, *, what: str
) -> np.ndarray:
    """A meeting point (2,) of the circles (centre_a, radius_a) and (centre_b, radius_b), m.

    The five-bar forward problem (Briot 2015 eqs. 56-57), derived in vector
    form: with ``D = |b - a|``, ``u = (b - a) / D`` and ``u_perp`` its +90 deg
    rotation, subtracting the two circle equations gives the radical line
    ``(p - a) . u = s = (r_a^2 - r_b^2 + D^2) / (2 D)`` (the paper's
    ``x_C = f y_C + k``), and then ``p = a + s u + side * h u_perp`` with
    ``h^2 = r_a^2 - s^2`` (the paper's discriminant ``p^2 - 4 g r`` up to a
    positive factor). ``side = +1`` is the point left of ``a -> b``.

    Raises:
        ConvergenceError: the circles do not meet (negative discriminant).
    """
    ax, ay = float(centre_a[0]), float(centre_a[1])
    dx, dy = float(centre_b[0]) - ax, float(centre_b[1]) - ay
    distance = math.hypot(dx, dy)
    if distance < TOLERANCE:
        raise ConvergenceError(f"{what}: the circle centres coincide at {format_point(centre_a)} m")
    along = (radius_a**2 - radius_b**2 + distance**2) / (2.0 * distance)
    discriminant = radius_a**2 - along**2
    if discriminant < 0.0:
        raise ConvergenceError(
            f"{what}: the circles of radius {radius_a:.6g} m about {format_point(centre_a)} and "
            f"{radius_b:.6g} m about {format_point(centre_b)} do not meet (centres {distance:.6g} m apart, "
            f"discriminant h^2 = {discriminant:.3g} m^2 < 0)"
        )
    ux, uy = dx / distance, dy / distance
    height = side * math.sqrt(discriminant)
    return np.array([ax + along * ux - height * uy, ay + along * uy + height * ux])
