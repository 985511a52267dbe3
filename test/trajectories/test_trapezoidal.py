"""Trapezoidal velocity profile: closed form at hand-computed instants, finite differences, limits."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pardyn.errors import InputError
from pardyn.trajectories import Trapezoidal


def test_trapezoid_matches_the_hand_computed_profile():
    # 1-D: distance 2 m, vmax 1 m/s, amax 2 m/s^2 -> t_a = 0.5 s, cruise 1.5 s, T = 2.5 s.
    # s(t) distances: 0.25 m after t_a (a t^2/2), 1.75 m at T - t_a, 2 m at T.
    trajectory = Trapezoidal([1.0], [3.0], 1.0, 2.0)
    assert trajectory.duration_s == pytest.approx(2.5, abs=1e-15)
    samples = trajectory.evaluate([-1.0, 0.25, 0.5, 1.0, 2.0, 2.25, 2.5, 3.0])
    np.testing.assert_allclose(samples.position[:, 0],
                               [1.0, 1.0625, 1.25, 1.75, 2.75, 2.9375, 3.0, 3.0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(samples.velocity[:, 0], [0.0, 0.5, 1.0, 1.0, 1.0, 0.5, 0.0, 0.0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(samples.acceleration[:, 0], [0.0, 2.0, 0.0, 0.0, 0.0, -2.0, 0.0, 0.0],
                               rtol=0, atol=1e-14)


def test_triangle_when_the_cruise_speed_is_not_reached_and_coordinates_are_synchronized():
    # x: 0.1 m with amax 1 m/s^2 alone would take 2 sqrt(0.1) s; phi: 0.4 rad with amax 2 rad/s^2
    # -> 2 sqrt(0.2) s: the slowest coordinate sets the time law, both end together.
    trajectory = Trapezoidal([0.0, 0.0], [0.1, 0.4], [10.0, 10.0], [1.0, 2.0])
    assert trajectory.duration_s == pytest.approx(2.0 * math.sqrt(0.2), rel=1e-14)
    middle = trajectory.evaluate([trajectory.duration_s / 2])
    np.testing.assert_allclose(middle.position[0], [0.05, 0.2], rtol=1e-14)
    np.testing.assert_allclose(middle.velocity[0], [0.1, 0.4] / np.float64(math.sqrt(0.2)), rtol=1e-12)
    samples = trajectory.evaluate(np.linspace(0.0, trajectory.duration_s, 501))
    assert np.all(np.abs(samples.velocity) <= [10.0, 10.0])
    assert np.all(np.abs(samples.acceleration) <= np.array([1.0, 2.0]) + 1e-12)
    assert np.max(np.abs(samples.acceleration[:, 1])) == pytest.approx(2.0, rel=1e-14)


def test_derivatives_match_finite_differences():
    trajectory = Trapezoidal([0.2, -0.1, 0.0], [0.35, 0.05, 0.5], [0.3, 0.3, 1.0], [2.0, 2.0, 4.0])
    h = 1e-6
    times = np.linspace(0.01, trajectory.duration_s - 0.01, 97)
    # away from the two acceleration switches
    times = times[(np.abs(times - trajectory.accel_time_s) > 1e-3)
                  & (np.abs(times - (trajectory.duration_s - trajectory.accel_time_s)) > 1e-3)]
    center, plus, minus = (trajectory.evaluate(times + d) for d in (0.0, h, -h))
    np.testing.assert_allclose((plus.position - minus.position) / (2 * h), center.velocity, rtol=0, atol=1e-8)
    np.testing.assert_allclose((plus.velocity - minus.velocity) / (2 * h), center.acceleration, rtol=0, atol=1e-6)
    # the velocity is continuous across the switches
    for switch in (trajectory.accel_time_s, trajectory.duration_s - trajectory.accel_time_s):
        before, after = trajectory.evaluate([switch - 1e-9]), trajectory.evaluate([switch + 1e-9])
        np.testing.assert_allclose(before.velocity, after.velocity, rtol=0, atol=1e-7)


def test_no_motion_and_bad_limits():
    still = Trapezoidal([0.1, 0.2], [0.1, 0.2], 1.0, 1.0)
    assert still.duration_s == 0.0
    np.testing.assert_array_equal(still.evaluate([0.0, 1.0]).position, [[0.1, 0.2], [0.1, 0.2]])
    with pytest.raises(InputError, match="max_acceleration"):
        Trapezoidal([0.0], [1.0], 1.0, 0.0)
    with pytest.raises(InputError, match="max_velocity"):
        Trapezoidal([0.0, 0.0], [1.0, 1.0], [1.0, 1.0, 1.0], 1.0)
