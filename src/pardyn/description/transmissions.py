"""The ``transmissions:`` section of a robot YAML: motors, gear ratios and coupled drives, typed.

Optional (no section: direct drives, motor and joint sides are the same). Each
entry is one motor, the joints it drives and the ratios, so that the motor
angles are ``theta = R q`` with the reduction matrix ``R`` (n_motors, n_joints)
(gear ratios on the diagonal, couplings off it: the Staubli TX40's motor 6
turns with ``32 q5 + 32 q6``) and, by virtual power, the joint torques are
``tau = R^T tau_motor``::

    transmissions:
      - motor: motor5
        joints: {joint5: 45.0}             # rad of motor per rad (m) of joint; the sign is the direction
      - motor: motor6
        joints: {joint5: 32.0, joint6: 32.0}
        rotor_inertia: 0.0                 # kg m^2, motor side (optional, 0)
        viscous: 0.0                       # N m s/rad, motor side (optional, 0)
        coulomb: 0.0                       # N m, motor side (optional, 0)

Joints must be actuated joints; motor names are free (unique).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pardyn.description.fields import YamlFields

__all__ = ["MOTOR_FIELDS", "Motor", "Transmissions", "parse_transmissions"]

MOTOR_FIELDS: dict[str, str] = {
    "rotor_inertia": "rotor inertia, motor side, kg m^2",
    "viscous": "viscous friction, motor side, N m s/rad",
    "coulomb": "Coulomb friction, motor side, N m",
}
"""Optional per-motor keys of a ``transmissions`` entry (0 by default) and their meaning / unit."""


@dataclass(frozen=True)
class Motor:
    """One motor: ``theta = sum_j ratios[j] q_j`` and its own drive values (motor side, :data:`MOTOR_FIELDS`)."""

    name: str
    ratios: dict[str, float]
    rotor_inertia: float = 0.0
    viscous: float = 0.0
    coulomb: float = 0.0


@dataclass(frozen=True)
class Transmissions:
    """The motors of a robot (empty: direct drives)."""

    motors: tuple[Motor, ...] = ()

    @property
    def joints(self) -> tuple[str, ...]:
        """The joints driven through a transmission, in order of first mention."""
        return tuple(dict.fromkeys(joint for motor in self.motors for joint in motor.ratios))

    def matrix(self, joints: Sequence[str] | None = None) -> np.ndarray:
        """The reduction matrix ``R`` (n_motors, n_joints): ``theta = R q``, ``tau = R^T tau_motor``.

        Columns in ``joints`` order (:attr:`joints` by default); a joint no motor drives is a zero column.
        """
        joints = self.joints if joints is None else tuple(joints)
        matrix = np.zeros((len(self.motors), len(joints)))
        for row, motor in enumerate(self.motors):
            for joint, ratio in motor.ratios.items():
                matrix[row, joints.index(joint)] = ratio
        return matrix


def parse_transmissions(reader: YamlFields, raw: Any, *, actuated: Sequence[str]) -> Transmissions:
    """The typed ``transmissions:`` section (a list of motors)."""
    if raw is None:
        return Transmissions()
    if not isinstance(raw, list):
        raise reader.fail("transmissions", "expected a list of motors ({motor, joints: {joint: ratio}, ...})")
    motors = []
    for i, raw_motor in enumerate(raw):
        key = f"transmissions[{i}]"
        item = reader.mapping(raw_motor, key)
        reader.check_keys(item, key, {"motor", "joints", *MOTOR_FIELDS})
        name = reader.string(item.get("motor"), f"{key}.motor")
        raw_ratios = reader.mapping(item.get("joints"), f"{key}.joints")
        if not raw_ratios:
            raise reader.fail(f"{key}.joints", "expected at least one {joint: ratio}")
        ratios = {}
        for joint, value in raw_ratios.items():
            if joint not in actuated:
                raise reader.fail(f"{key}.joints.{joint}", f"{joint!r} is not an actuated joint {list(actuated)}")
            ratios[joint] = reader.number(value, f"{key}.joints.{joint}")
            if ratios[joint] == 0.0:
                raise reader.fail(f"{key}.joints.{joint}", "a ratio of 0 drives nothing; leave the joint out")
        values = {field: reader.number(item.get(field, 0.0), f"{key}.{field}") for field in MOTOR_FIELDS}
        motors.append(Motor(name=name, ratios=ratios, **values))
    names = [motor.name for motor in motors]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise reader.fail("transmissions", f"motors listed twice: {twice}")
    return Transmissions(tuple(motors))
