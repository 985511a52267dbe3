"""The ``limits:`` section of a robot YAML: per-actuator limits and passive-joint cones, typed.

Optional. Effort limits (N m for a revolute joint, N for a prismatic one) and
velocity limits (rad/s, m/s), one per actuated joint; angle limits of passive
universal (U) and spherical (S) joints as cones::

    limits:
      effort: {motor1: 15.0, motor2: 15.0, motor3: 15.0, motor4: 15.0}   # actuated joint -> limit (> 0)
      velocity: {motor1: 100.0, ...}                                     # optional
      cones:                                                             # optional
        - name: universal                  # a group of joints sharing one limit
          max: 0.6                         # rad: largest angle between the link axis and its home direction
          axis: [0.0, 0.0, 1.0]            # the link axis, in the moving frame (default z)
          frames: [[leg1_cylinder, base_link], [leg2_cylinder, base_link]]   # [moving, reference] per joint

A joint's angle is the angle between the moving frame's ``axis`` seen from the reference
frame and the same at home: the swing a U joint's cross or an S joint's socket allows
(:class:`pardyn.kinematics.cones.ConeAngles`; the exciting-trajectory design keeps
within them). Without the section, the URDF's ``<limit effort velocity>`` and no cones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pardyn.description.fields import YamlFields

__all__ = ["JointCone", "Limits", "parse_limits"]


@dataclass(frozen=True)
class JointCone:
    """A group of passive joints (U, S) of one angle limit ``max_rad`` (rad): ``frames`` ``(moving, reference)``
    pairs, ``axis`` (3,) the unit link axis in the moving frame."""

    name: str
    max_rad: float
    axis: tuple[float, float, float]
    frames: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Limits:
    """Per actuated joint, every one or none: ``effort`` (N m, or N for a prismatic joint) and
    ``velocity`` (rad/s, or m/s for a prismatic joint)."""

    effort: dict[str, float] = field(default_factory=dict)
    velocity: dict[str, float] = field(default_factory=dict)
    cones: tuple[JointCone, ...] = ()


def _per_actuator(reader: YamlFields, raw: Any, key: str, actuated: Sequence[str], unit: str) -> dict[str, float]:
    values = {}
    for joint, value in reader.mapping(raw, key).items():
        if joint not in actuated:
            raise reader.fail(f"{key}.{joint}", f"{joint!r} is not an actuated joint {list(actuated)}")
        values[joint] = reader.number(value, f"{key}.{joint}")
        if not values[joint] > 0.0:
            raise reader.fail(f"{key}.{joint}", f"must be positive ({unit}), got {values[joint]}")
    missing = [joint for joint in actuated if joint not in values]
    if values and missing:
        raise reader.fail(key, f"no limit for the actuated joints {missing} (one per actuated joint)")
    return values


def parse_limits(reader: YamlFields, raw: Any, *, actuated: Sequence[str]) -> Limits:
    """The typed ``limits:`` section (one positive limit per actuated joint in each given kind)."""
    if raw is None:
        return Limits()
    section = reader.mapping(raw, "limits")
    reader.check_keys(section, "limits", {"effort", "velocity", "cones"})
    return Limits(effort=_per_actuator(reader, section.get("effort", {}), "limits.effort", actuated, "N m, N"),
                  velocity=_per_actuator(reader, section.get("velocity", {}), "limits.velocity", actuated,
                                         "rad/s, m/s"),
                  cones=_cones(reader, section.get("cones", [])))


def _cones(reader: YamlFields, raw: Any) -> tuple[JointCone, ...]:
    if not isinstance(raw, list):
        raise reader.fail("limits.cones", "expected a list of {name, max, axis, frames}")
    cones = []
    for i, item in enumerate(raw):
        key = f"limits.cones[{i}]"
        item = reader.mapping(item, key)
        reader.check_keys(item, key, {"name", "max", "axis", "frames"})
        limit = reader.number(item.get("max"), f"{key}.max")
        if not 0.0 < limit < math.pi:
            raise reader.fail(f"{key}.max", f"must be in (0, pi) rad, got {limit}")
        axis = reader.vector(item.get("axis", [0.0, 0.0, 1.0]), f"{key}.axis", 3)
        if not np.linalg.norm(axis) > 0.0:
            raise reader.fail(f"{key}.axis", "must not be zero")
        frames = item.get("frames")
        if not isinstance(frames, list) or not frames:
            raise reader.fail(f"{key}.frames", "expected a non-empty list of [moving, reference] frame pairs")
        pairs = []
        for j, pair in enumerate(frames):
            names = reader.strings(pair, f"{key}.frames[{j}]")
            if len(names) != 2:
                raise reader.fail(f"{key}.frames[{j}]", f"expected [moving, reference], got {pair!r}")
            pairs.append((names[0], names[1]))
        unit = axis / np.linalg.norm(axis)
        cones.append(JointCone(str(item.get("name", f"cone{i}")), limit, (float(unit[0]), float(unit[1]), float(unit[2])),
                               tuple(pairs)))
    return tuple(cones)
