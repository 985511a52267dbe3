"""Exciting trajectories: exact derivatives, rest at both ends, bounds, feasibility, excitation."""

from __future__ import annotations

import numpy as np
import pytest

from pardyn.errors import KinematicsError
from pardyn.excitation.design import design_exciting_trajectory, optimize_fourier_coefficients
from pardyn.excitation.fourier import FourierTrajectory

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


def _dense_limits_hold(trajectory, center, amplitude, max_velocity, max_acceleration):
    """Every limit on a 2 kHz grid of the whole trajectory (not the optimiser's grid)."""
    samples = trajectory.evaluate(trajectory.sample_times(2000.0))
    return (np.all(np.abs(samples.position - center) <= np.asarray(amplitude) + 1e-12)
            and np.all(np.abs(samples.velocity) <= np.asarray(max_velocity) + 1e-12)
            and np.all(np.abs(samples.acceleration) <= np.asarray(max_acceleration) + 1e-12))


def test_spring_mass_optimum_is_the_hand_derived_one():
    """Columns [xddot, x] of x = a sin(t) + b (cos(t) - 1) over a period: cond is minimal (1 + sqrt 2) at a = 0.

    Period means: E[xddot^2] = (a^2 + b^2)/2, E[x xddot] = -(a^2 + b^2)/2, E[x^2] = a^2/2 + 3 b^2/2;
    with a^2 + b^2 = 1 the Gram matrix has trace 1 + b^2 and determinant b^2/2, whose
    eigenvalue ratio (trace^2/det = 2 (1 + b^2)^2 / b^2) is smallest at b^2 = 1:
    eigenvalues (2 +- sqrt 2)/2, cond = sqrt((2 + sqrt 2)/(2 - sqrt 2)) = 1 + sqrt 2.
    """
    times = np.linspace(0.0, 2 * np.pi, 200, endpoint=False)

    def observation(trajectory):
        x, _, xddot = trajectory.series(times)
        return np.column_stack([xddot[:, 0], x[:, 0]])

    limits = dict(amplitude=[1.0], max_velocity=[10.0], max_acceleration=[10.0])
    start = FourierTrajectory([0.0], [[0.3]], [[0.1]], base_frequency_hz=1 / (2 * np.pi), duration_s=20.0, ramp_s=1.0)
    assert _dense_limits_hold(start, 0.0, **limits)
    result = optimize_fourier_coefficients(start, observation, max_iterations=100, **limits)
    assert result.condition_before > 3.0
    assert result.condition_after == pytest.approx(1 + np.sqrt(2), rel=1e-6)
    a, b = result.trajectory.sine[0, 0], result.trajectory.cosine[0, 0]
    assert abs(a) < 1e-2 * abs(b)  # cond is flat (quadratic) around the optimum
    assert _dense_limits_hold(result.trajectory, 0.0, **limits)


def _period_condition(robot, trajectory, rate_hz):
    """cond of the base columns over one steady period sampled at ``rate_hz`` (another grid than the design's)."""
    from pardyn.dynamics.regressor import Regressor
    from pardyn.identification import base_parameters, stack_equations, symmetric_order

    regressor = Regressor(robot)
    times = np.arange(0.0, 1.0 / trajectory.base_frequency_hz, 1.0 / rate_hz)
    d, ddot, dddot = trajectory.series(times)
    q, qdot, qddot = np.empty((times.size, robot.nv)), np.empty((times.size, robot.nv)), np.empty((times.size, robot.nv))
    start = robot.home
    for k in range(times.size):
        q[k] = start = robot.solve_inverse(trajectory.start + d[k], start=start).q
        _, qdot[k], qddot[k] = robot.differential.task_states(q[k], ddot[k], dddot[k])
    w = stack_equations(np.zeros((times.size, regressor.rows)), regressor.matrix(q, qdot, qddot)).W
    base = base_parameters(w, names=regressor.names, order=symmetric_order(regressor.names))
    return np.linalg.cond(w[:, base.independent])


def test_optimised_five_bar_trajectory_respects_the_limits_and_excites_better(load):
    robot = load("five_bar")
    limits = dict(amplitude=[0.05, 0.05], max_velocity=[0.3, 0.3], max_acceleration=[3.0, 3.0])
    design = design_exciting_trajectory(robot, duration_s=6.0, base_frequency_hz=0.5, harmonics=2, candidates=3,
                                        seed=3, check_rate_hz=20.0, optimize=True, max_iterations=6, **limits)
    center = robot.home[robot.task_indices]
    assert _dense_limits_hold(design.trajectory, center, **limits)
    assert design.condition_number < 0.7 * design.random_condition_number
    run = design.optimization[0]
    assert run.condition_before == pytest.approx(design.random_condition_number)
    # on a 4x denser period grid the optimised trajectory still excites better than the random start
    assert _period_condition(robot, design.trajectory, 80.0) < _period_condition(robot, run.start, 80.0)
    q = robot.home
    for pose in design.trajectory.evaluate(design.trajectory.sample_times(20.0)).position:  # ramps included
        q = robot.solve_inverse(pose, start=q).q


def test_nonlinear_constraint_moves_the_spring_mass_optimum_where_hand_derived():
    """With ``a^2 >= b^2`` (a nonlinear constraint) the optimum of the spring-mass case above moves to
    ``a^2 = b^2``: Gram matrix (a^2 + b^2)/2 [[1, -1], [-1, 1 + 2 r]], r = b^2 / (a^2 + b^2) = 1/2,
    eigenvalue ratio (3 + sqrt 5) / (3 - sqrt 5), so cond = (3 + sqrt 5) / 2 (unconstrained: 1 + sqrt 2 at r = 1)."""
    times = np.linspace(0.0, 2 * np.pi, 200, endpoint=False)

    def observation(trajectory):
        x, _, xddot = trajectory.series(times)
        return np.column_stack([xddot[:, 0], x[:, 0]])

    def margin(trajectory):  # >= 0: a^2 - b^2
        return np.array([trajectory.sine[0, 0] ** 2 - trajectory.cosine[0, 0] ** 2])

    limits = dict(amplitude=[1.0], max_velocity=[10.0], max_acceleration=[10.0])
    start = FourierTrajectory([0.0], [[0.3]], [[0.1]], base_frequency_hz=1 / (2 * np.pi), duration_s=20.0, ramp_s=1.0)
    result = optimize_fourier_coefficients(start, observation, max_iterations=100, constraints=margin, **limits)
    assert result.condition_after == pytest.approx((3 + np.sqrt(5)) / 2, rel=1e-5)
    assert margin(result.trajectory)[0] >= 0.0
    assert _dense_limits_hold(result.trajectory, 0.0, **limits)


def test_design_keeps_the_passive_joints_within_their_cones(load, tmp_path):
    """A Delta whose elbow and ball joints may swing 0.09 rad only: the chosen trajectory stays within
    (angles of :class:`~pardyn.kinematics.cones.ConeAngles`, checked against the bars' geometry in
    test/kinematics/test_cones.py), and 0.005 rad leaves no feasible draw."""
    from pardyn.kinematics.cones import ConeAngles
    from pardyn.resources import robots_directory
    from pardyn.robot import load_robot
    from pardyn.excitation.bounds import excitation_settings
    from pardyn.trajectories.joint import joint_trajectory

    text = (robots_directory() / "delta.yaml").read_text()
    settings = excitation_settings(load("delta")).design_options()
    free = design_exciting_trajectory(load("delta"), duration_s=3.0, candidates=4, seed=2, **settings)
    for limit in (0.09, 0.005):
        path = tmp_path / f"delta_{limit}.yaml"
        path.write_text(text.replace("max: 0.6 ", f"max: {limit} "))
        robot = load_robot(path)
        if limit == 0.005:
            with pytest.raises(KinematicsError, match="joint cones"):
                design_exciting_trajectory(robot, duration_s=3.0, candidates=4, seed=2, **settings)
            continue
        design = design_exciting_trajectory(robot, duration_s=3.0, candidates=4, seed=2, **settings)
        cones = ConeAngles(robot)
        angles = cones.angles(joint_trajectory(robot, design.trajectory, rate_hz=40.0).q)
        assert angles.max() <= 1.02 * limit  # the design checks a 25 Hz grid of one period
        unconstrained = cones.angles(joint_trajectory(robot, free.trajectory, rate_hz=40.0).q)
        assert unconstrained.max() > limit  # the cones changed the choice
        assert design.candidates_feasible < free.candidates_feasible


def test_optimisation_restarts_on_the_cluster_equal_the_serial_ones(load, dask_engine):
    """The ``optimize_starts`` restarts are tasks of pardyn.distributed: a two-process LocalCluster gives the serial
    restarts bit for bit, and the design keeps the best of them."""
    robot = load("five_bar")
    options = dict(amplitude=[0.05, 0.05], max_velocity=[0.3, 0.3], max_acceleration=[3.0, 3.0], duration_s=6.0,
                   base_frequency_hz=0.5, harmonics=2, candidates=3, seed=3, check_rate_hz=20.0, optimize=True,
                   optimize_starts=2, max_iterations=3)
    serial = design_exciting_trajectory(robot, workers=1, **options)
    distributed = design_exciting_trajectory(robot, **options)  # the session's engine
    assert len(distributed.optimization) == 2
    for a, b in zip(serial.optimization, distributed.optimization):
        assert a.condition_after == b.condition_after and a.condition_before == b.condition_before
        assert np.array_equal(a.trajectory.sine, b.trajectory.sine)
    assert distributed.condition_number == min(min(r.condition_after for r in serial.optimization),
                                               serial.random_condition_number)
