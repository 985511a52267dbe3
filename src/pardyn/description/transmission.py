"""The ``transmissions:`` section of a robot YAML: motors, their ratios to the joints, their zero.

One entry per motor; its angle is ``theta_m = sum_j ratio_mj q_j + offset_m``
(the ratio matrix ``R`` (n_motors, n_joints): gear ratios on the diagonal,
couplings off it), so that the joint angles are ``q = R^-1 (theta - offset)``
and the joint torques ``tau = R^T tau_motor`` (:mod:`pardyn.dynamics.transmission`)::

    transmissions:                        # the Staubli TX40 (dataset README)
      - {motor: motor_1, joints: {joint_1: 32.0}}
      - {motor: motor_2, joints: {joint_2: 32.0}, offset: 50.26548245743669}   # rad: joint 2 at -pi/2 of the URDF
      - {motor: motor_3, joints: {joint_3: 45.0}, offset: -70.68583470577035}  # joint 3 at +pi/2
      - {motor: motor_4, joints: {joint_4: -48.0}}
      - {motor: motor_5, joints: {joint_5: 45.0}}
      - {motor: motor_6, joints: {joint_5: 32.0, joint_6: 32.0}}              # motor 6 turns with q5 + q6

``offset`` (rad, default 0) is the motor angle when its joints are at zero.
Joints must be actuated; every actuated joint needs a motor (the ratio matrix is
square and invertible). ``rotor_inertia``, ``viscous`` and ``coulomb`` (motor
side, default 0) are accepted for the nominal model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pardyn.description.fields import YamlFields
from pardyn.dynamics.transmission import Transmission
from pardyn.errors import InputError

__all__ = ["SECTION", "load_transmission", "parse_transmissions"]

SECTION = "transmissions"
_MOTOR_KEYS = {"motor", "joints", "offset", "rotor_inertia", "viscous", "coulomb"}


def parse_transmissions(fields: YamlFields, raw: Any, *, actuated: Sequence[str]) -> Transmission | None:
    """The typed ``transmissions:`` section; None without one. Errors name the file and the key."""
    if raw is None:
        return None
    if not isinstance(raw, list) or not raw:
        raise fields.fail(SECTION, "expected a list of motors ({motor, joints: {joint: ratio}, offset})")
    motors, rows, offsets = [], [], []
    for i, raw_motor in enumerate(raw):
        key = f"{SECTION}[{i}]"
        item = fields.mapping(raw_motor, key)
        fields.check_keys(item, key, _MOTOR_KEYS)
        motors.append(fields.string(item.get("motor"), f"{key}.motor"))
        ratios = fields.mapping(item.get("joints"), f"{key}.joints")
        if not ratios:
            raise fields.fail(f"{key}.joints", "expected at least one {joint: ratio}")
        row = np.zeros(len(actuated))
        for joint, value in ratios.items():
            if joint not in actuated:
                raise fields.fail(f"{key}.joints.{joint}", f"{joint!r} is not an actuated joint {list(actuated)}")
            row[list(actuated).index(joint)] = fields.number(value, f"{key}.joints.{joint}")
        rows.append(row)
        offsets.append(fields.number(item.get("offset", 0.0), f"{key}.offset"))
        for name in ("rotor_inertia", "viscous", "coulomb"):
            fields.number(item.get(name, 0.0), f"{key}.{name}")
    twice = sorted({name for name in motors if motors.count(name) > 1})
    if twice:
        raise fields.fail(SECTION, f"motors listed twice: {twice}")
    ratio = np.array(rows)  # (n_motors, n_actuated)
    try:
        if ratio.shape[0] != ratio.shape[1]:
            raise InputError(f"{ratio.shape[0]} motors for {ratio.shape[1]} actuated joints: the ratio must be square")
        joint_offset = -np.linalg.solve(ratio, np.array(offsets)) if abs(np.linalg.det(ratio)) > 0 else None
        return Transmission(tuple(motors), tuple(actuated), ratio, joint_offset)
    except InputError as error:
        raise fields.fail(SECTION, str(error).removeprefix("transmission: ")) from None


def load_transmission(robot: Any) -> Transmission | None:
    """The robot's ``transmissions:`` section, typed when the robot loaded; None without one."""
    return robot.description.transmissions
