"""The ``limits:`` section of a robot YAML: per-actuator limits, typed.

Optional. Effort limits (N m for a revolute joint, N for a prismatic one) and
velocity limits (rad/s, m/s), one per actuated joint::

    limits:
      effort: {motor1: 15.0, motor2: 15.0, motor3: 15.0, motor4: 15.0}   # actuated joint -> limit (> 0)
      velocity: {motor1: 100.0, ...}                                     # optional

Without the section, the URDF's ``<limit effort velocity>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pardyn.description.fields import YamlFields

__all__ = ["Limits", "parse_limits"]


@dataclass(frozen=True)
class Limits:
    """Per actuated joint, every one or none: ``effort`` (N m, or N for a prismatic joint) and
    ``velocity`` (rad/s, or m/s for a prismatic joint)."""

    effort: dict[str, float] = field(default_factory=dict)
    velocity: dict[str, float] = field(default_factory=dict)


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
    reader.check_keys(section, "limits", {"effort", "velocity"})
    return Limits(effort=_per_actuator(reader, section.get("effort", {}), "limits.effort", actuated, "N m, N"),
                  velocity=_per_actuator(reader, section.get("velocity", {}), "limits.velocity", actuated,
                                         "rad/s, m/s"))
