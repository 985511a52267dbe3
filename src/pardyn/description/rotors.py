"""The ``rotors:`` section of a robot YAML: the drive side of flexible joints, typed.

::

    rotors:
      reference_temperature_c: 25.0      # T_ref of the temperature coefficients (default 25)
      drives:                            # every actuated joint exactly once
        - joints: [shoulder_pan_joint, shoulder_lift_joint, elbow_joint]
          inertia: 0.40                  # every key of ROTOR_FIELDS, required
          ...

The model these values feed is :mod:`pardyn.dynamics.rotor` (UR5e paper, sections 2 and 3.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pardyn.description.fields import YamlFields

__all__ = ["ROTOR_FIELDS", "RotorsSection", "parse_rotors"]

ROTOR_FIELDS: dict[str, str] = {
    "inertia": "B, rotor inertia reflected to the link side, kg m^2",
    "torque_constant": "K_tau, link-side torque constant, N m/A",
    "stiffness": "transmission stiffness, N m/rad (plant)",
    "damping": "transmission damping, N m s/rad (plant)",
    "coulomb": "F_c, Coulomb friction at T_ref, N m",
    "static": "F_s, breakaway (Stribeck) friction, N m",
    "stribeck_velocity": "v_s, Stribeck velocity, rad/s",
    "load_coulomb": "F_l, Coulomb friction per N m of transmitted torque, -",
    "viscous": "F_v, viscous friction at T_ref, N m s/rad",
    "viscous_temperature": "k_v, F_v(T) = F_v exp(-k_v (T - T_ref)), 1/K",
    "coulomb_temperature": "k_c, F_c(T) = F_c (1 - k_c (T - T_ref)), 1/K",
    "coulomb_width": "w, velocity scale of the Coulomb sign s = tanh(thetadot / w) (presliding), rad/s",
    "temperature_c": "operating temperature T, deg C",
}
"""Keys of a ``rotors.drives`` entry and their meaning / unit (every one required)."""


@dataclass(frozen=True)
class RotorsSection:
    """The rotor values per actuated joint.

    Attributes:
        joints: the actuated joints, in the robot's actuated order.
        values: ``{field of ROTOR_FIELDS: per-joint values (n_a,) in joints order}``.
        reference_temperature_c: T_ref (deg C).
    """

    joints: tuple[str, ...]
    values: dict[str, tuple[float, ...]]
    reference_temperature_c: float = 25.0


def parse_rotors(reader: YamlFields, raw: Any, *, actuated: Sequence[str]) -> RotorsSection:
    """The typed ``rotors:`` section; every actuated joint needs exactly one entry."""
    section = reader.mapping(raw, "rotors")
    reader.check_keys(section, "rotors", {"reference_temperature_c", "drives"})
    reference = reader.number(section.get("reference_temperature_c", 25.0), "rotors.reference_temperature_c")
    drives = section.get("drives") or []
    if not isinstance(drives, list):
        raise reader.fail("rotors.drives", "expected a list")
    per_joint: dict[str, dict[str, float]] = {}
    for i, raw_drive in enumerate(drives):
        key = f"rotors.drives[{i}]"
        item = reader.mapping(raw_drive, key)
        reader.check_keys(item, key, {"joints", *ROTOR_FIELDS})
        missing = [name for name in ROTOR_FIELDS if name not in item]
        if missing:
            raise reader.fail(key, f"missing {missing} ({'; '.join(ROTOR_FIELDS[m] for m in missing)})")
        numbers = {name: reader.number(item[name], f"{key}.{name}") for name in ROTOR_FIELDS}
        for name in ("inertia", "stribeck_velocity", "torque_constant"):
            if not numbers[name] > 0.0:
                raise reader.fail(f"{key}.{name}", f"must be positive, got {numbers[name]}")
        if not 0.0 <= numbers["load_coulomb"] < 1.0:
            raise reader.fail(f"{key}.load_coulomb", f"must be in [0, 1), got {numbers['load_coulomb']}")
        for j, joint in enumerate(reader.names(item.get("joints"), f"{key}.joints")):
            if joint not in actuated:
                raise reader.fail(f"{key}.joints[{j}]", f"{joint!r} is not an actuated joint {list(actuated)}")
            if joint in per_joint:
                raise reader.fail(f"{key}.joints[{j}]", f"joint {joint!r} listed twice")
            per_joint[joint] = numbers
    missing = [name for name in actuated if name not in per_joint]
    if missing:
        raise reader.fail("rotors.drives", f"no entry for the actuated joints {missing}")
    joints = tuple(actuated)
    values = {name: tuple(per_joint[joint][name] for joint in joints) for name in ROTOR_FIELDS}
    return RotorsSection(joints=joints, values=values, reference_temperature_c=float(reference))
