"""The plant registry: names, and errors naming what is wrong."""

from __future__ import annotations

import pytest

from pardyn.errors import InputError
from pardyn.plants.payload import Payload
from pardyn.plants.pinocchio_plant import PinocchioPlant
from pardyn.plants.registry import PLANTS, make_plant


def test_registry_names_and_unknown_plant(load):
    assert PLANTS == ("mujoco", "pinocchio", "flexible")
    robot = load("five_bar")
    with pytest.raises(InputError, match=r"unknown plant 'gazebo', expected one of \['mujoco', 'pinocchio', 'flexible'\]"):
        make_plant(robot, "gazebo")
    plant = make_plant(robot, "pinocchio", options={"plant_timestep": 5e-4, "coulomb_width": 0.02})
    assert isinstance(plant, PinocchioPlant)
    with pytest.raises(InputError, match=r"parameter integrator: only the mujoco plant reads it \(plant pinocchio\)"):
        make_plant(robot, "pinocchio", options={"integrator": "Euler"})


def test_flexible_plant_refuses_a_payload(load):
    with pytest.raises(InputError, match="flexible-joint plant carries no payload"):
        make_plant(load("ur5e"), "flexible", payload=Payload(1.0))
