"""The flexible-joint plant against energy and power balances (independent of its equations' form)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from pardyn import load_robot
from pardyn.dynamics.rotor import load_rotor_model
from pardyn.plants.flexible_joint import FlexibleJointPlant


@pytest.fixture(scope="module")
def robot():
    return load_robot("ur5e")


def test_conservative_plant_keeps_its_energy(robot):
    rotors = load_rotor_model(robot).with_values(coulomb=0.0, static=0.0, viscous=0.0, load_coulomb=0.0, damping=0.0)
    plant = FlexibleJointPlant(robot, rotors, timestep=1e-4)
    plant.reset(robot.home, np.array([0.5, -0.3, 0.4, 1.0, -1.0, 1.5]))
    start = plant.energy()
    for _ in range(200):
        plant.step(np.zeros(6), 1e-3)
    assert abs(plant.energy() - start) < 1e-10 * abs(start)


def test_power_balance_with_friction_and_input(robot):
    """dE/dt = K_tau i . thetadot - tau_f . thetadot - D |thetadot - qdot|^2 (trapezoid over 1 ms steps)."""
    rotors = load_rotor_model(robot)
    plant = FlexibleJointPlant(robot, rotors, timestep=5e-5)
    state = plant.reset(robot.home, np.array([0.4, 0.2, -0.3, 0.6, -0.5, 0.8]))
    gravity = pin.computeGeneralizedGravity(plant.model, plant.data, robot.home)
    energy = [plant.energy()]
    supplied = 0.0
    period = 1e-3

    def power(state, motor):
        joint = state.joint_torque
        friction = rotors.friction.torque(state.theta_dot, joint, rotors.temperature_c)
        slip = state.theta_dot - state.qdot
        return motor @ state.theta_dot - friction @ state.theta_dot - rotors.damping @ slip**2

    for k in range(100):
        motor = gravity + 5.0 * np.sin(np.arange(6) + 20.0 * k * period)
        # trapezoid on a finer grid: 10 sub-intervals of 0.1 ms
        before = power(state, motor)
        for _ in range(10):
            state = plant.step(motor, period / 10)
            after = power(state, motor)
            supplied += 0.5 * (before + after) * period / 10
            before = after
        energy.append(plant.energy())
    change = energy[-1] - energy[0]
    assert abs(change - supplied) < 1e-4 * max(abs(supplied), abs(change))


def test_rest_under_gravity_holding_torque(robot):
    plant = FlexibleJointPlant(robot, load_rotor_model(robot))
    state = plant.reset(robot.home)
    gravity = pin.computeGeneralizedGravity(plant.model, plant.data, robot.home)
    np.testing.assert_allclose(state.joint_torque, gravity, atol=1e-9)  # the spring carries the link's weight
    for _ in range(50):
        state = plant.step(gravity, 1e-3)
    np.testing.assert_allclose(state.q, robot.home, atol=1e-12)
    assert plant.closure_violation() == 0.0  # a serial robot has no closure equation
