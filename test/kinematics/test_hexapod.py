"""Hexapod kinematics against the published geometry, the generic Newton solver and finite differences.

Independent references:
* the Wolfram System Modeler StewartPlatform geometry written here (joint radii, angles) and its
  published home leg length 0.170350338674353 m (``Legs.initialLengths``) at height 0.15 m;
* scipy's rotations for R = Rz(yaw) Ry(pitch) Rx(roll) (intrinsic "ZYX");
* the generic solver for the closed-form inverse problem and the Newton forward problem;
* central finite differences for eq. (3) and the velocity / acceleration maps;
* Fichter (1986): this layout turned by 90 deg about z is singular.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from pardyn.errors import SingularityError

BASE = [0.15 * np.array([math.cos(math.radians(a)), math.sin(math.radians(a)), 0.0]) for a in (15, 105, 135, 225, 255, 345)]
PLATFORM = [0.1 * np.array([math.cos(math.radians(a)), math.sin(math.radians(a)), 0.0]) for a in (45, 75, 165, 195, 285, 315)]
TOL = 1e-10


@pytest.fixture(scope="module")
def hexapod(load):
    return load("hexapod")


def poses(robot, rng, count=6):
    """Poses around home: +-20 mm, +-0.2 rad."""
    spread = np.array([0.02, 0.02, 0.02, 0.2, 0.2, 0.2])
    return robot.home[robot.task_indices] + rng.uniform(-spread, spread, size=(count, 6))


def test_home_leg_length_is_the_published_one(hexapod):
    assert np.allclose(hexapod.home[hexapod.actuated_indices], 0.170350338674353, atol=1e-12)


def test_closed_form_inverse_matches_the_geometry_and_newton(hexapod):
    worst = 0.0
    for task in poses(hexapod, np.random.default_rng(1)):
        rotation = Rotation.from_euler("ZYX", task[3:]).as_matrix()
        expected = [np.linalg.norm(task[:3] + rotation @ b - a) for a, b in zip(BASE, PLATFORM)]
        closed = hexapod.solve_inverse(task, method="analytic")
        assert np.allclose(closed.q[hexapod.actuated_indices], expected, atol=1e-14)
        assert closed.residual < 1e-13
        worst = max(worst, np.max(np.abs(closed.q - hexapod.solve_inverse(task).q)))
    assert worst < TOL


def test_forward_newton_keeps_the_assembly_mode_by_continuation(hexapod):
    """A 0.4 s path sampled at 50 points, each forward problem warm-started at the previous pose."""
    closed = hexapod.analytic
    rng = np.random.default_rng(2)
    start, end = poses(hexapod, rng, 2)
    previous, worst = None, 0.0
    for s in np.linspace(0.0, 1.0, 50):
        task = start + s * (end - start)
        lengths = closed.lengths(task)
        q = closed.forward(lengths, start=previous)
        previous = q[hexapod.task_indices]
        worst = max(worst, np.max(np.abs(previous - task)))
        generic = hexapod.solve_forward(lengths).q
        worst = max(worst, np.max(np.abs(generic - q)))
    assert worst < TOL


def test_eq3_and_the_maps_against_finite_differences(hexapod):
    closed = hexapod.analytic
    rng = np.random.default_rng(3)
    h = 1e-4
    for task in poses(hexapod, rng, 3):
        velocity, acceleration = rng.normal(size=6) * 0.1, rng.normal(size=6)

        def q_of(t):
            return closed.inverse(task + velocity * t + 0.5 * acceleration * t * t)

        q = q_of(0.0)
        qdot_fd = (q_of(h) - q_of(-h)) / (2 * h)
        qddot_fd = (q_of(h) - 2 * q + q_of(-h)) / h**2
        _, qdot, qddot = hexapod.differential.task_states(q, velocity, acceleration)
        assert np.allclose(qdot, qdot_fd, atol=1e-8)
        assert np.allclose(qddot, qddot_fd, atol=1e-5)
        assert np.allclose(closed.jacobian(task) @ velocity, qdot_fd[hexapod.actuated_indices], atol=1e-9)


def test_fichter_singularity(hexapod):
    task = np.array([0.0, 0.0, 0.15, math.pi / 2, 0.0, 0.0])
    with pytest.raises(SingularityError) as caught:
        hexapod.analytic.jacobian(task)
    assert caught.value.kind == "parallel"
    with pytest.raises(SingularityError) as caught:
        hexapod.solve_inverse(task)
    assert caught.value.kind == "parallel"
