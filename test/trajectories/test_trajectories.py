"""Reference trajectories: time law, line, circle, joint-space image, Hermite interpolation.

Checked against the closed-form properties of each curve (boundary values,
radius, arc length), central finite differences (velocities, accelerations;
in joint space of *separately solved* inverse kinematics, independent of the
velocity maps), the closure equations, and exact reproduction of polynomials.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pinocchio as pin
import pytest

from pardyn.errors import InputError
from pardyn.trajectories import Circle, PointToPoint, SampledReference, joint_trajectory, quintic_time_law

H = 1e-6  # s, finite-difference step in time


def central(f, t, h=H):
    return (f(t + h) - f(t - h)) / (2.0 * h)


def test_quintic_time_law_boundary_values_and_derivatives():
    s, ds, dds = quintic_time_law(np.array([0.0, 0.5, 1.0, -0.3, 1.7]))
    np.testing.assert_allclose(s, [0.0, 0.5, 1.0, 0.0, 1.0], atol=1e-15)
    np.testing.assert_allclose(ds, [0.0, 15.0 / 8.0, 0.0, 0.0, 0.0], atol=1e-15)  # peak speed 15/8
    np.testing.assert_allclose(dds, [0.0, 0.0, 0.0, 0.0, 0.0], atol=1e-15)
    tau = np.linspace(0.05, 0.95, 19)
    np.testing.assert_allclose(quintic_time_law(tau)[1], central(lambda u: quintic_time_law(u)[0], tau), atol=1e-8)
    np.testing.assert_allclose(quintic_time_law(tau)[2], central(lambda u: quintic_time_law(u)[1], tau), atol=1e-7)


def test_point_to_point_ends_derivatives_and_rest_outside():
    start, goal, T = np.array([0.01, -0.02, 0.1]), np.array([0.05, 0.03, -0.2]), 1.5
    line = PointToPoint(start, goal, duration_s=T)
    ends = line.evaluate([-1.0, 0.0, T, T + 1.0])
    np.testing.assert_allclose(ends.position, [start, start, goal, goal], atol=1e-15)
    np.testing.assert_allclose(ends.velocity, 0.0, atol=1e-15)
    np.testing.assert_allclose(ends.acceleration, 0.0, atol=1e-15)
    t = np.linspace(0.01, T - 0.01, 37)
    samples = line.evaluate(t)
    np.testing.assert_allclose(samples.velocity, central(lambda x: line.evaluate(x).position, t), atol=1e-8)
    np.testing.assert_allclose(samples.acceleration, central(lambda x: line.evaluate(x).velocity, t), atol=1e-7)
    # straight: every point on the segment, peak speed 15/8 |goal - start| / T at mid-time
    along = (samples.position - start) @ (goal - start) / np.dot(goal - start, goal - start)
    np.testing.assert_allclose(samples.position, start + np.outer(along, goal - start), atol=1e-15)
    peak = np.linalg.norm(line.evaluate([T / 2]).velocity)
    assert peak == pytest.approx(15.0 / 8.0 * np.linalg.norm(goal - start) / T, rel=1e-14)


def test_circle_radius_arc_length_derivatives_and_held_angle():
    start, r, T = np.array([0.01, 0.02, 0.15]), 0.03, 2.0
    circle = Circle(start, radius_m=r, duration_s=T, turns=1.0, start_angle_rad=math.pi / 3)
    np.testing.assert_allclose(circle.center, start[:2] - r * np.array([0.5, math.sqrt(3) / 2]), atol=1e-16)
    t = np.linspace(0.0, T, 4001)
    samples = circle.evaluate(t)
    np.testing.assert_allclose(np.linalg.norm(samples.position[:, :2] - circle.center, axis=1), r, atol=1e-15)
    np.testing.assert_array_equal(samples.position[:, 2], start[2])
    np.testing.assert_allclose(samples.position[[0, -1]], [start, start], atol=1e-15)  # one full turn
    speed = np.linalg.norm(samples.velocity, axis=1)
    arc = np.sum(0.5 * (speed[1:] + speed[:-1]) * np.diff(t))
    assert arc == pytest.approx(2 * math.pi * r, rel=1e-6)
    inner = np.linspace(0.01, T - 0.01, 41)
    np.testing.assert_allclose(circle.evaluate(inner).velocity, central(lambda x: circle.evaluate(x).position, inner),
                               atol=1e-9)
    np.testing.assert_allclose(circle.evaluate(inner).acceleration,
                               central(lambda x: circle.evaluate(x).velocity, inner), atol=1e-8)


def test_trajectory_arguments_are_checked():
    with pytest.raises(InputError, match="circle radius_m: must be positive"):
        Circle([0.0, 0.0], radius_m=0.0, duration_s=1.0)
    with pytest.raises(InputError, match=re.escape("circle axes")):
        Circle([0.0, 0.0], radius_m=0.1, duration_s=1.0, axes=(0, 2))
    with pytest.raises(InputError, match="start has 2 coordinates, goal 3"):
        PointToPoint([0.0, 0.0], [0.0, 0.0, 0.0], duration_s=1.0)


def _closure_violation(robot, q) -> float:
    """Max distance between the frames each closure joins, by pinocchio's own forward kinematics (m)."""
    model, data = robot.model, robot.model.createData()
    pin.framesForwardKinematics(model, data, q)
    worst = 0.0
    for closure in robot.description.closures:
        a, b = (data.oMf[model.getFrameId(name)].translation for name in closure.frames)
        worst = max(worst, float(np.linalg.norm(a - b)))
    return worst


@pytest.mark.parametrize("name", ["dualv", "rrr3"])
def test_joint_trajectory_closes_the_loops_and_differentiates_like_separate_inverse_solutions(load, name):
    robot = load(name)
    start = robot.home[robot.task_indices]
    circle = Circle(start, radius_m=0.02, duration_s=1.0)
    samples = joint_trajectory(robot, circle, rate_hz=50.0)
    assert samples.times.shape == (51,) and samples.q.shape == (51, robot.nv)
    assert max(_closure_violation(robot, q) for q in samples.q) < 1e-10
    np.testing.assert_allclose(samples.q[:, robot.task_indices], circle.evaluate(samples.times).position, atol=1e-12)
    h = 1e-5
    for k in (7, 23, 40):
        t = samples.times[k]

        def q_at(time):
            return robot.solve_inverse(circle.evaluate([time]).position[0], start=samples.q[k]).q

        qdot_fd = (q_at(t + h) - q_at(t - h)) / (2 * h)
        np.testing.assert_allclose(samples.qdot[k], qdot_fd, atol=1e-7)
        # second differences need a larger step: Newton's 1e-12 tolerance / h^2 must stay small
        h2 = 1e-3
        qddot_fd = (q_at(t + h2) - 2 * q_at(t) + q_at(t - h2)) / h2**2
        np.testing.assert_allclose(samples.qddot[k], qddot_fd, atol=1e-4 * max(1.0, np.abs(qddot_fd).max()))


def test_joint_trajectory_names_a_task_of_the_wrong_size(load):
    robot = load("five_bar")
    with pytest.raises(InputError, match=re.escape("trajectory has 3 task coordinates, five_bar has 2")):
        joint_trajectory(robot, Circle([0.0, 0.3, 0.0], radius_m=0.01, duration_s=1.0), rate_hz=10)


def test_sampled_reference_reproduces_a_quintic_polynomial_exactly():
    rng = np.random.default_rng(4)
    coefficients = rng.normal(size=(6, 3))  # p(t) = sum c_i t^i, three joints

    def poly(t, derivative=0):
        powers = np.arange(6)
        factor = np.ones(6)
        exponents = powers.copy()
        for _ in range(derivative):
            factor = factor * exponents
            exponents = exponents - 1
        return sum(factor[i] * coefficients[i] * t ** max(exponents[i], 0) for i in range(6) if factor[i] != 0)

    times = np.array([0.0, 0.3, 0.45, 1.0])  # uneven, sparse
    reference = SampledReference(times, np.array([poly(t) for t in times]), np.array([poly(t, 1) for t in times]),
                                 np.array([poly(t, 2) for t in times]))
    for t in rng.uniform(0.0, 1.0, size=20):
        value = reference(float(t))
        np.testing.assert_allclose(value.position, poly(t), atol=1e-12)
        np.testing.assert_allclose(value.velocity, poly(t, 1), atol=1e-10)
        np.testing.assert_allclose(value.acceleration, poly(t, 2), atol=1e-8)
    before, after = reference(-1.0), reference(2.0)
    np.testing.assert_array_equal(before.position, poly(0.0))
    np.testing.assert_array_equal(after.position, poly(1.0))
    assert not before.velocity.any() and not after.acceleration.any()


def test_sampled_reference_of_a_circle_between_samples(load):
    robot = load("dualv")
    circle = Circle(robot.home[robot.task_indices], radius_m=0.02, duration_s=2.0)
    coarse = joint_trajectory(robot, circle, rate_hz=100.0).select(robot.actuated_indices)
    for t in (0.123, 0.9871, 1.5555):
        q = robot.solve_inverse(circle.evaluate([t]).position[0]).q[robot.actuated_indices]
        np.testing.assert_allclose(coarse(t).position, q, atol=1e-9)


def test_sampled_reference_rejects_bad_samples():
    with pytest.raises(InputError, match="strictly increasing"):
        SampledReference([0.0, 0.0], np.zeros((2, 1)))
    with pytest.raises(InputError, match=re.escape("velocities of shape (2, 2), positions (2, 1)")):
        SampledReference([0.0, 1.0], np.zeros((2, 1)), np.zeros((2, 2)))
    with pytest.raises(InputError, match="non-finite positions"):
        SampledReference([0.0, 1.0], np.array([[0.0], [math.nan]]))
