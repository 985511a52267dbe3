"""A planar four-bar written in MJCF, and its closed configurations derived by hand (shared by the
MJCF reader's tests and the format tests)."""

from __future__ import annotations

import math

import numpy as np
import pytest

# Planar four-bar in the xz plane (hinges about y), closed at qpos0 by construction:
# ground pivots A = (0, 0, 0) and D = (0.4, 0, 0), crank A-B, coupler B-C, rocker C-D,
# B = (0.1, 0, 0.2), C = (0.45, 0, 0.3). Grashof crank-rocker (0.224 + 0.4 < 0.364 + 0.304):
# the crank turns fully. The rocker's free end is connected to a static ground body at D.
A, B, C, D = (np.array(p) for p in ((0.0, 0.0), (0.1, 0.2), (0.45, 0.3), (0.4, 0.0)))  # (x, z)
FOUR_BAR = """
<mujoco model="four_bar">
  <worldbody>
    <body name="crank">
      <joint name="crank_joint" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.1 0 0.2" size="0.01"/>
      <body name="coupler" pos="0.1 0 0.2">
        <joint name="coupler_joint" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.35 0 0.1" size="0.01"/>
        <body name="rocker" pos="0.35 0 0.1">
          <joint name="rocker_joint" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 -0.05 0 -0.3" size="0.01"/>
        </body>
      </body>
    </body>
    <body name="ground" pos="0.4 0 0">
      <geom type="box" size="0.02 0.02 0.02"/>
    </body>
  </worldbody>
  <equality>
    <connect name="loop" body1="rocker" body2="ground" anchor="-0.05 0 -0.3"/>
  </equality>
  <actuator>
    <motor name="crank_motor" joint="crank_joint"/>
  </actuator>
</mujoco>
"""


def closed_four_bar(crank: float) -> np.ndarray:
    """Joint angles closing the four-bar for a crank angle, by circle intersection (hand-derived).

    A rotation by ``theta`` about +y maps (x, z) to (x cos + z sin, -x sin + z cos), so the angle
    ``atan2(x, z)`` of a vector grows by ``theta``; C is the intersection of the circles about B and D
    on the same side of BD as at qpos0.
    """
    def angle(v):
        return math.atan2(v[0], v[1])

    def rotate(v, theta):
        cos, sin = math.cos(theta), math.sin(theta)
        return np.array([v[0] * cos + v[1] * sin, -v[0] * sin + v[1] * cos])

    b = rotate(B - A, crank) + A
    coupler, rocker = np.linalg.norm(C - B), np.linalg.norm(D - C)
    base = D - b
    distance = np.linalg.norm(base)
    along = (coupler**2 - rocker**2 + distance**2) / (2 * distance)
    height = math.sqrt(coupler**2 - along**2)
    normal = np.array([-base[1], base[0]]) / distance
    def cross(u, v):
        return u[0] * v[1] - u[1] * v[0]

    side = np.sign(cross(D - B, C - B))
    c = b + along * base / distance + side * np.sign(cross(base, normal)) * height * normal
    coupler_angle = angle(c - b) - angle(C - B)
    rocker_angle = angle(D - c) - angle(D - C)
    return np.array([crank, coupler_angle - crank, rocker_angle - coupler_angle])


@pytest.fixture(scope="session")
def four_bar_xml() -> str:
    """The four-bar's MJCF text (one motor on the crank, a ``connect`` named ``loop`` to a static ground)."""
    return FOUR_BAR


@pytest.fixture(scope="session")
def assembled_four_bar():
    """``assembled_four_bar(crank) -> q`` (3,): the closed configuration, hand-derived."""
    return closed_four_bar


@pytest.fixture(scope="session")
def four_bar_pivot() -> np.ndarray:
    """The ground pivot D (x, z), m."""
    return D
