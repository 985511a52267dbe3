"""Exciting trajectories: exact derivatives, rest at both ends, bounds, feasibility, excitation."""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.errors import KinematicsError
from pardyn.trajectories.exciting import FourierTrajectory, design_exciting_trajectory

BOUNDS = {
    "dualv": dict(amplitude=[0.06, 0.05, 0.25], max_velocity=[0.4, 0.4, 1.5], max_acceleration=[4.0, 4.0, 15.0]),
    "rrr3": dict(amplitude=[0.06, 0.06, 0.15], max_velocity=[0.3, 0.3, 1.0], max_acceleration=[3.0, 3.0, 10.0]),
}


def test_derivatives_match_finite_differences():
    rng = np.random.default_rng(0)
    trajectory = FourierTrajectory([0.1, -0.2], rng.normal(size=(2, 4)) * 0.01, rng.normal(size=(2, 4)) * 0.01,
                                   base_frequency_hz=0.3, duration_s=8.0, ramp_s=1.5)
    times = np.array([0.4, 1.2, 3.3, 7.1])  # inside the ramps and in the steady part
    h = 1e-5
    samples = trajectory.evaluate(times)
    ahead, behind = trajectory.evaluate(times + h), trajectory.evaluate(times - h)
    np.testing.assert_allclose(samples.velocity, (ahead.position - behind.position) / (2 * h), atol=1e-9)
    np.testing.assert_allclose(samples.acceleration, (ahead.velocity - behind.velocity) / (2 * h), atol=1e-8)


def test_rests_at_the_center_at_both_ends():
    trajectory = FourierTrajectory([0.0, 0.3, 0.1], np.ones((3, 2)) * 0.01, np.ones((3, 2)) * 0.02,
                                   base_frequency_hz=0.5, duration_s=6.0)
    ends = trajectory.evaluate(np.array([0.0, 6.0]))
    np.testing.assert_allclose(ends.position, [[0.0, 0.3, 0.1]] * 2, atol=1e-15)
    np.testing.assert_allclose(ends.velocity, 0.0, atol=1e-15)
    np.testing.assert_allclose(ends.acceleration, 0.0, atol=1e-15)


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_designed_trajectory_is_feasible_and_within_bounds(load, name):
    robot = load(name)
    bounds = BOUNDS[name]
    design = design_exciting_trajectory(robot, duration_s=12.0, base_frequency_hz=0.25, candidates=4, seed=1, **bounds)
    assert design.candidates_feasible >= 1 and design.max_kinematic_condition <= 1e3
    assert np.isfinite(design.condition_number) and design.base_parameter_count > 0
    samples = design.trajectory.evaluate(design.trajectory.sample_times(100.0))
    center = robot.home[robot.task_indices]
    assert np.all(np.abs(samples.position - center) <= np.asarray(bounds["amplitude"]) + 1e-12)
    assert np.all(np.abs(samples.velocity) <= np.asarray(bounds["max_velocity"]) + 1e-12)
    assert np.all(np.abs(samples.acceleration) <= np.asarray(bounds["max_acceleration"]) + 1e-12)
    q = robot.home
    for pose in samples.position[::10]:  # every 0.1 s, ramps included
        q = robot.solve_inverse(pose, start=q).q


def test_more_candidates_never_excite_worse(load):
    """The design keeps the best of its draws: a superset of draws cannot be worse."""
    robot = load("five_bar")
    bounds = dict(amplitude=[0.05, 0.05], max_velocity=[0.3, 0.3], max_acceleration=[3.0, 3.0])
    few = design_exciting_trajectory(robot, candidates=2, seed=3, duration_s=10.0, **bounds)
    many = design_exciting_trajectory(robot, candidates=6, seed=3, duration_s=10.0, **bounds)
    assert many.condition_number <= few.condition_number


def test_unreachable_amplitude_is_reported(load):
    robot = load("five_bar")
    with pytest.raises(KinematicsError, match="reduce the amplitude"):
        design_exciting_trajectory(robot, amplitude=[2.0, 2.0], max_velocity=[50.0, 50.0],
                                   max_acceleration=[500.0, 500.0], candidates=2, duration_s=10.0)
