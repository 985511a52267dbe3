"""Rotor friction model and the rotor dynamics compensation's closed form (UR5e paper, sections 2, 3.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml

from pardyn import load_robot
from pardyn.description.formats import load_description
from pardyn.dynamics.rotor import load_rotor_model
from pardyn.errors import DescriptionError


@pytest.fixture(scope="module")
def model():
    return load_rotor_model(load_robot("ur5e"))


def test_yaml_values_and_units(model):
    assert model.joints[0] == "shoulder_pan_joint"
    np.testing.assert_array_equal(model.inertia, [0.4, 0.4, 0.4, 0.08, 0.08, 0.08])
    np.testing.assert_array_equal(model.friction.coulomb_width, 0.01)
    assert model.friction.reference_temperature_c == 25.0


def test_friction_terms_by_hand(model):
    """tau_f = s [F_c(T) + F_l |tau_J| + (F_s - F_c) exp(-(v/v_s)^2)] + F_v(T) v, hand-evaluated on joint 1."""
    friction = model.friction
    velocity, load, temperature = 0.08, -40.0, 35.0  # rad/s, N m, deg C
    coulomb = 4.0 * (1.0 - 0.004 * 10.0)
    viscous = 8.0 * math.exp(-0.02 * 10.0)
    expected = math.tanh(velocity / 0.01) * (coulomb + 0.02 * 40.0 + 2.0 * math.exp(-((0.08 / 0.05) ** 2))) + viscous * velocity
    got = friction.torque(np.full(6, velocity), np.full(6, load), temperature)[0]
    assert got == pytest.approx(expected, rel=1e-14)
    # odd in the velocity, even in the load
    assert friction.torque(np.full(6, -velocity), np.full(6, -load), temperature)[0] == pytest.approx(-expected, rel=1e-14)
    # at the reference temperature the coefficients are the YAML's
    assert friction.coefficients(25.0)[0][0] == 4.0 and friction.coefficients(25.0)[1][0] == 8.0


def test_compensation_inverts_the_rotor_equation(model):
    """K_tau i = tau_J + B thetaddot + tau_f(thetadot, tau_J): the closed form recovers tau_J exactly,
    including the implicit load-dependent Coulomb term, on both signs of velocity and load."""
    rng = np.random.default_rng(0)
    joint = rng.normal(scale=60.0, size=(200, 6))
    velocity = rng.normal(scale=0.5, size=(200, 6))
    acceleration = rng.normal(scale=3.0, size=(200, 6))
    motor = joint + model.rotor_torque(acceleration, velocity, joint)
    np.testing.assert_allclose(model.joint_torque(motor, velocity, acceleration), joint, rtol=0.0, atol=1e-11)
    # friction only (B unknown): the load term then sees tau_J + B thetaddot, off by at most
    # F_l B |thetaddot| / (1 - F_l)
    friction_only = model.joint_torque(motor, velocity, acceleration, inertia=False)
    load = model.friction.load_coulomb
    bound = load * model.inertia * np.abs(acceleration) / (1.0 - load) + 1e-11
    assert np.all(np.abs(friction_only - (joint + model.inertia * acceleration)) <= bound)


def test_scaled_and_with_values(model):
    scaled = model.scaled({"coulomb": 1.1, "inertia": [1, 1, 1, 2, 2, 2]})
    np.testing.assert_allclose(scaled.friction.coulomb, 1.1 * model.friction.coulomb)
    np.testing.assert_allclose(scaled.inertia, [0.4, 0.4, 0.4, 0.16, 0.16, 0.16])
    with pytest.raises(Exception, match="unknown fields"):
        model.scaled({"mass": 2.0})


def test_yaml_errors_name_the_key(tmp_path):
    description = load_description("ur5e")
    raw = yaml.safe_load(description.source.read_text())
    del raw["rotors"]["drives"][1]["viscous"]
    path = tmp_path / "ur5e.yaml"
    raw["urdf"] = str(description.urdf)
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(DescriptionError, match=r"rotors.drives\[1\].*viscous"):
        load_rotor_model(load_robot(load_description(path)))
