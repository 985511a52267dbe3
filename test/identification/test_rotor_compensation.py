"""Rotor dynamics compensation on synthetic two-encoder data with known friction (UR5e paper, section 3.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pardyn import load_robot
from pardyn.bags import write_joint_states
from pardyn.dynamics.inverse import InverseDynamics
from pardyn.dynamics.regressor import Regressor
from pardyn.dynamics.rotor import load_rotor_model
from pardyn.identification.base_parameters import base_parameters
from pardyn.identification.filtering import zero_phase_lowpass
from pardyn.identification.rotor_compensation import augment_with_rotor_inertia, compensate_bag_torques

RATE_HZ = 1000.0


def _motion(t: np.ndarray, home: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Analytic joint motion (N, 6) with exact rates: two sines per joint, several velocity reversals."""
    amplitude = np.array([[0.6, 0.3], [0.3, 0.15], [0.4, 0.2], [0.5, 0.3], [0.5, 0.2], [0.8, 0.3]])
    pulsation = 2 * math.pi * np.array([[0.3, 0.7], [0.25, 0.6], [0.35, 0.8], [0.4, 0.9], [0.3, 0.75], [0.45, 1.0]])
    phase = np.outer(t, np.ones(2))[:, None, :] * pulsation[None] + np.arange(6)[None, :, None]
    q = home + (amplitude * np.sin(phase)).sum(axis=2)
    qdot = (amplitude * pulsation * np.cos(phase)).sum(axis=2)
    qddot = -(amplitude * pulsation**2 * np.sin(phase)).sum(axis=2)
    return q, qdot, qddot


@pytest.fixture(scope="module")
def setup():
    robot = load_robot("ur5e")
    return robot, load_rotor_model(robot)


def test_compensation_recovers_the_link_torque_from_a_bag(setup, tmp_path):
    """theta(t) analytic, tau_J = RNEA (the known link torque), K_tau i = tau_J + B thetaddot + tau_f:
    from the bag's quantized motor encoder alone the compensation gives tau_J back."""
    robot, rotors = setup
    t = np.arange(0.0, 6.0, 1.0 / RATE_HZ)
    theta, theta_dot, theta_ddot = _motion(t, robot.home)
    link = InverseDynamics(robot).torques_batch(theta, theta_dot, theta_ddot)  # the known tau_J
    motor = link + rotors.rotor_torque(theta_ddot, theta_dot, link)
    resolution = 2 * math.pi / 2**20
    encoders = np.round(theta / resolution) * resolution
    bag = write_joint_states(tmp_path / "bag", t, robot.joint_names, encoders, effort=motor,
                             extra_topics={"/motor_states": (robot.joint_names, encoders, None, motor)})
    compensated = compensate_bag_torques(bag, robot, t, motor, rotors, cutoff_hz=20.0)
    lowpass = lambda x: zero_phase_lowpass(x, sample_rate_hz=RATE_HZ, cutoff_hz=20.0)  # noqa: E731
    inner = slice(500, -500)
    error = np.sqrt(np.mean((lowpass(compensated) - lowpass(link))[inner] ** 2, axis=0))
    rotor_rms = np.sqrt(np.mean((motor - link)[inner] ** 2, axis=0))
    assert np.all(rotor_rms > 1.0)  # the rotor's share is large (N m) ...
    assert np.all(error < 0.005)  # ... and removed to within 5e-3 N m RMS (measured 2e-4..1.1e-3), reversals included
    assert np.all(error < 1e-3 * rotor_rms)


def test_augmented_regressor_identifies_rotor_inertias(setup):
    """[Y, diag(thetaddot)] (section 3.1): B_3..B_6 come out exactly; B_1, B_2 only regrouped with the
    link inertias about joints 1 and 2 (found by QR, not assumed)."""
    robot, rotors = setup
    rotors = rotors.with_values(load_coulomb=0.0)  # friction known exactly without B
    rng = np.random.default_rng(2)
    t = rng.uniform(0.0, 20.0, 150)
    theta, theta_dot, theta_ddot = _motion(t, robot.home)
    link = InverseDynamics(robot).torques_batch(theta, theta_dot, theta_ddot)
    motor = link + rotors.rotor_torque(theta_ddot, theta_dot, link)
    target = rotors.joint_torque(motor, theta_dot, theta_ddot, inertia=False)  # tau_J + B thetaddot
    regressor = Regressor(robot)
    observation = regressor.matrix(theta, theta_dot, theta_ddot)[:, :, :60]
    augmented, names = augment_with_rotor_inertia(observation, theta_ddot, regressor.names[:60], robot.joint_names)
    W = augmented.reshape(-1, len(names))  # rows: sample by sample
    base = base_parameters(W, names=names)
    estimate = np.linalg.lstsq(base.reduce(W), target.reshape(-1), rcond=None)[0]
    values = dict(zip(base.names, estimate))
    for j, joint in enumerate(robot.joint_names[2:], start=2):
        assert values[f"B_{joint}"] == pytest.approx(rotors.inertia[j], rel=1e-8)
    regrouped = " ".join(base.relations)
    assert "1.0*B_shoulder_pan_joint" in regrouped and "1.0*B_shoulder_lift_joint" in regrouped
