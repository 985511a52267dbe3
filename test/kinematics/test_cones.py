"""Cone angles of the passive U and S joints (``limits: cones:``) against the legs' geometry.

Independent references: the hexapod's published joint layout (Wolfram StewartPlatform, written
here) gives each leg's direction ``d = p + R b - a``: the universal joint swings by the angle
between ``d`` and its home value, the ball joint by the angle between ``R^T d`` and it. For the
Delta, each bar's direction from the frame *positions* of its two ends (pinocchio placements),
seen from its arm and from the platform.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

from pardyn.errors import DescriptionError
from pardyn.kinematics.cones import ConeAngles
from pardyn.resources import robots_directory
from pardyn.robot import load_robot

BASE = [0.15 * np.array([math.cos(math.radians(a)), math.sin(math.radians(a)), 0.0]) for a in (15, 105, 135, 225, 255, 345)]
PLATFORM = [0.1 * np.array([math.cos(math.radians(a)), math.sin(math.radians(a)), 0.0]) for a in (45, 75, 165, 195, 285, 315)]


def angle(u, v) -> float:
    return math.acos(np.clip(np.dot(u, v) / np.linalg.norm(u) / np.linalg.norm(v), -1.0, 1.0))


def test_hexapod_cones_are_the_swing_of_each_leg(load):
    robot = load("hexapod")
    cones = ConeAngles(robot)
    assert cones.groups == ("universal", "spherical") and len(cones) == 12
    home = [np.array([0.0, 0.0, 0.15]) + b - a for a, b in zip(BASE, PLATFORM)]
    rng = np.random.default_rng(3)
    for _ in range(5):
        task = robot.home[robot.task_indices] + rng.uniform(-1, 1, 6) * [0.02, 0.02, 0.02, 0.2, 0.2, 0.2]
        rotation = Rotation.from_euler("ZYX", task[3:]).as_matrix()
        legs = [task[:3] + rotation @ b - a for a, b in zip(BASE, PLATFORM)]
        expected = [angle(d, d0) for d, d0 in zip(legs, home)] + [angle(rotation.T @ d, d0) for d, d0 in zip(legs, home)]
        np.testing.assert_allclose(cones.angles(robot.solve_inverse(task).q), expected, atol=1e-9)


def test_delta_cones_are_the_swing_of_each_bar(load):
    robot = load("delta")
    cones = ConeAngles(robot)
    model, data = robot.model, robot.model.createData()

    def directions(q):
        pin.framesForwardKinematics(model, data, q)
        frame = lambda name: data.oMf[model.getFrameId(name)]  # noqa: E731
        bars = [(i, k) for i in (1, 2, 3) for k in (1, 2)]
        span = {bar: frame(f"leg{bar[0]}_bar{bar[1]}_end").translation - frame(f"leg{bar[0]}_bar{bar[1]}").translation
                for bar in bars}
        elbow = [frame(f"arm{i}").rotation.T @ span[(i, k)] for i, k in bars]
        ball = [frame("platform").rotation.T @ span[bar] for bar in bars]
        return elbow + ball

    home = directions(robot.home)
    q = robot.solve_inverse(robot.home[robot.task_indices] + [0.12, -0.08, 0.05]).q
    expected = [angle(d, d0) for d, d0 in zip(directions(q), home)]
    np.testing.assert_allclose(cones.angles(q), expected, atol=1e-9)
    assert max(expected) > 0.05  # the pose moves every bar


def test_cone_sections_are_checked(tmp_path):
    text = (robots_directory() / "hexapod.yaml").read_text()
    for bad, message in ((text.replace("max: 0.5 ", "max: 4.0 ", 1), "limits.cones[0].max"),
                         (text.replace("[leg1_cylinder, base_link]", "[leg1_cylinder]"), "limits.cones[0].frames[0]")):
        path = tmp_path / "hexapod.yaml"
        path.write_text(bad)
        with pytest.raises(DescriptionError, match=message.replace("[", r"\[").replace("]", r"\]")):
            load_robot(path)
