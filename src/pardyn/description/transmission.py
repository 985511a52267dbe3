"""The ``transmission:`` section of a robot YAML: motor-side data to the joint side.

::

    transmission:
      motors: [motor_1, motor_2, motor_3, motor_4, motor_5, motor_6]   # names of the motor-side columns
      joints: [joint_1, joint_2, joint_3, joint_4, joint_5, joint_6]   # default: the actuated joints
      ratio:                      # theta = ratio (q - offset), one row per motor (the TX40's)
        - [32, 0, 0, 0, 0, 0]
        - [0, 32, 0, 0, 0, 0]
        - [0, 0, 45, 0, 0, 0]
        - [0, 0, 0, -48, 0, 0]
        - [0, 0, 0, 0, 45, 0]
        - [0, 0, 0, 0, 32, 32]    # motor 6 turns with q5 + q6
      offset: [0, -1.5707963267948966, 1.5707963267948966, 0, 0, 0]   # rad, joint side

or ``gear_ratios: [32, 32, 45, -48, 45, 32]`` for a diagonal ``ratio``. The
semantics (torques ``tau = ratio^T tau_m``, coupled motors' regressor columns)
are :mod:`pardyn.dynamics.transmission`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pardyn.description.fields import YamlFields
from pardyn.dynamics.transmission import Transmission
from pardyn.errors import InputError

__all__ = ["SECTION", "load_transmission", "parse_transmission"]

SECTION = "transmission"


def parse_transmission(fields: YamlFields, raw: Any, *, actuated: Sequence[str], joint_names: Sequence[str]) -> Transmission:
    """The typed ``transmission:`` section; errors name the file and the key."""
    section = fields.mapping(raw, SECTION)
    fields.check_keys(section, SECTION, {"motors", "joints", "ratio", "gear_ratios", "offset"})
    joints = fields.names(section["joints"], f"{SECTION}.joints") if "joints" in section else list(actuated)
    for i, joint in enumerate(joints):
        if joint not in joint_names:
            raise fields.fail(f"{SECTION}.joints[{i}]", f"unknown joint {joint!r}; joints: {list(joint_names)}")
    n = len(joints)
    if "motors" not in section:
        raise fields.fail(SECTION, "missing 'motors' (names of the motor-side data columns)")
    motors = fields.names(section["motors"], f"{SECTION}.motors")
    if len(motors) != n:
        raise fields.fail(f"{SECTION}.motors", f"{len(motors)} motors for {n} joints: the ratio must be square")
    if ("ratio" in section) == ("gear_ratios" in section):
        raise fields.fail(SECTION, "give either 'ratio' (a matrix, one row per motor) or 'gear_ratios'")
    if "gear_ratios" in section:
        ratio = np.diag(fields.vector(section["gear_ratios"], f"{SECTION}.gear_ratios", n))
    else:
        rows = section["ratio"]
        if not isinstance(rows, list) or len(rows) != n:
            raise fields.fail(f"{SECTION}.ratio", f"expected {n} rows of {n} numbers, got {rows!r}")
        ratio = np.array([fields.vector(row, f"{SECTION}.ratio[{i}]", n) for i, row in enumerate(rows)])
    offset = fields.vector(section["offset"], f"{SECTION}.offset", n) if "offset" in section else np.zeros(n)
    try:
        return Transmission(tuple(motors), tuple(joints), ratio, offset)
    except InputError as error:
        raise fields.fail(SECTION, str(error).removeprefix("transmission: ")) from None


def load_transmission(robot: Any) -> Transmission | None:
    """The robot's ``transmission:`` section, typed; None without one."""
    description = robot.description
    raw = description.extra.get(SECTION)
    if raw is None:
        return None
    return parse_transmission(YamlFields(description.source), raw, actuated=robot.actuated_names,
                              joint_names=robot.joint_names)
