"""Measurement model: encoder quantization, velocity estimates, torque noise, reproducibility.

References: the definition of an encoder grid (counts * 2 pi / N), the sample
standard deviation of 1e5 draws (its own standard error is sigma / sqrt(2e5),
0.16 %), and exact finite differences of a uniform motion.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pardyn.errors import InputError
from pardyn.plants import PlantState
from pardyn.plants.measurement import MeasurementModel

COUNTS = 2**17


def state_of(robot, rng: np.random.Generator, *, time: float = 0.0, tau=None) -> PlantState:
    q = robot.home + rng.uniform(-0.5, 0.5, robot.nv)  # the model does not need a closed q
    tau = rng.uniform(-3.0, 3.0, len(robot.actuated_names)) if tau is None else np.asarray(tau, dtype=float)
    return PlantState(time=time, q=q, qdot=rng.uniform(-1.0, 1.0, robot.nv), tau=tau)


@pytest.mark.parametrize("name", ["dualv", "rrr3", "five_bar"])
def test_positions_are_quantized_measured_joints_only(name, load):
    robot = load(name)
    model = MeasurementModel(robot, counts_per_revolution=COUNTS)
    assert model.names == tuple(robot.actuated_names) + tuple(robot.sensed_names)
    rng = np.random.default_rng(0)
    step = 2 * math.pi / COUNTS
    for _ in range(200):
        state = state_of(robot, rng)
        sample = model.measure(state)
        true = state.q[robot.measured_indices]
        assert sample.names == model.names and sample.positions.shape == true.shape
        assert sample.counts.dtype == np.int64
        np.testing.assert_array_equal(sample.positions, sample.counts * step)  # on the grid
        assert np.all(np.abs(sample.positions - true) <= 0.5 * step * (1 + 1e-9))  # half a count
        assert sample.velocities is None
        assert sample.torque_names == tuple(robot.actuated_names) and sample.torques.shape == state.tau.shape


def test_unmeasured_joints_never_appear(load):
    """Changing every unmeasured coordinate changes nothing that is published (same noise seed)."""
    robot = load("rrr3")
    unmeasured = np.setdiff1d(np.arange(robot.nv), robot.measured_indices)
    assert len(unmeasured) == 6  # leg{i}_joint3 and the platform chain
    rng = np.random.default_rng(1)
    state = state_of(robot, rng)
    moved_q = state.q.copy()
    moved_q[unmeasured] += 0.3
    moved_v = state.qdot.copy()
    moved_v[unmeasured] -= 2.0
    moved = PlantState(time=state.time, q=moved_q, qdot=moved_v, tau=state.tau)
    a = MeasurementModel(robot, velocities="exact", seed=3).measure(state)
    b = MeasurementModel(robot, velocities="exact", seed=3).measure(moved)
    for field in ("counts", "positions", "velocities", "torques"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    np.testing.assert_array_equal(a.velocities, state.qdot[robot.measured_indices])


def test_prismatic_joints_use_the_length_resolution(load):
    robot = load("dualv")
    model = MeasurementModel(robot, joints=["leg1_joint1", "platform_x"], length_resolution=1e-5,
                             counts_per_revolution=4096)
    np.testing.assert_array_equal(model.resolution, [2 * math.pi / 4096, 1e-5])
    rng = np.random.default_rng(2)
    for _ in range(100):
        state = state_of(robot, rng)
        sample = model.measure(state)
        np.testing.assert_array_equal(sample.positions, sample.counts * model.resolution)
        true = state.q[robot.indices(["leg1_joint1", "platform_x"])]
        assert np.all(np.abs(sample.positions - true) <= 0.5 * model.resolution * (1 + 1e-9))


def test_torque_noise_statistics(load):
    """1e5 samples: mean tau, std hypot(1 % |tau|, floor) within 2 % (standard error 0.16 %)."""
    robot = load("dualv")
    tau = np.array([5.0, -2.0, 0.05, 0.0])  # relative part dominant, mixed, floor dominant, floor only
    floor = 0.01
    model = MeasurementModel(robot, torque_noise=0.01, torque_noise_floor=floor, seed=42)
    expected = np.sqrt((0.01 * np.abs(tau)) ** 2 + floor**2)
    np.testing.assert_allclose(model.torque_sigma(tau), expected, rtol=1e-15)
    state = PlantState(time=0.0, q=robot.home, qdot=np.zeros(robot.nv), tau=tau)
    samples = np.array([model.measure(state).torques for _ in range(100_000)])
    np.testing.assert_allclose(samples.std(axis=0), expected, rtol=0.02)
    assert np.all(np.abs(samples.mean(axis=0) - tau) < 5 * expected / math.sqrt(100_000))
    correlation = np.corrcoef(samples.T)[np.triu_indices(4, 1)]
    assert np.abs(correlation).max() < 0.02  # independent channels


def test_same_seed_same_output(load):
    robot = load("rrr3")
    rng = np.random.default_rng(4)
    states = [state_of(robot, rng, time=0.001 * k) for k in range(20)]

    def run(seed):
        model = MeasurementModel(robot, velocities="difference", seed=seed)
        return np.array([np.concatenate([m.positions, m.velocities, m.torques]) for m in map(model.measure, states)])

    np.testing.assert_array_equal(run(7), run(7))
    np.testing.assert_array_equal(run(np.random.default_rng(7)), run(7))
    assert np.abs(run(8) - run(7)).max() > 0.0


def test_difference_velocity_of_a_uniform_motion(load):
    """Backward difference of quantized positions: within one count per period of the true speed."""
    robot = load("five_bar")
    model = MeasurementModel(robot, velocities="difference", counts_per_revolution=COUNTS)
    speed = np.linspace(-1.0, 1.0, robot.nv)  # rad/s, m/s
    period = 1e-3
    step = 2 * math.pi / COUNTS
    for k in range(50):
        t = k * period
        sample = model.measure(PlantState(time=t, q=robot.home + speed * t, qdot=speed, tau=np.zeros(2)))
        if k == 0:
            np.testing.assert_array_equal(sample.velocities, 0.0)  # no previous sample
        else:
            assert np.all(np.abs(sample.velocities - speed[robot.measured_indices]) <= step / period * (1 + 1e-6))
    model.reset()
    restarted = model.measure(PlantState(time=1.0, q=robot.home, qdot=speed, tau=np.zeros(2)))
    np.testing.assert_array_equal(restarted.velocities, 0.0)


def test_invalid_options(load):
    robot = load("five_bar")
    with pytest.raises(InputError, match="counts_per_revolution"):
        MeasurementModel(robot, counts_per_revolution=0)
    with pytest.raises(InputError, match="torque_noise"):
        MeasurementModel(robot, torque_noise=-0.1)
    with pytest.raises(InputError, match="velocities"):
        MeasurementModel(robot, velocities="kalman")
    with pytest.raises(InputError, match="unknown joints"):
        MeasurementModel(robot, joints=["nope"])
    with pytest.raises(InputError, match="state"):
        MeasurementModel(robot).measure(PlantState(time=0.0, q=np.zeros(3), qdot=np.zeros(3), tau=np.zeros(2)))
