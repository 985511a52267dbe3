"""The ``limits:`` section of a robot YAML: per-actuator limits, typed.

Optional. Today it holds the effort limits, N m for a revolute joint, N for a
prismatic one, one per actuated joint::

    limits:
      effort: {motor1: 15.0, motor2: 15.0, motor3: 15.0, motor4: 15.0}   # actuated joint -> limit (> 0)

Without the section, the URDF's ``<limit effort>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pardyn.description.fields import YamlFields

__all__ = ["Limits", "parse_limits"]


@dataclass(frozen=True)
class Limits:
    """``effort``: ``{actuated joint: limit}`` (N m, or N for a prismatic joint), every actuated joint or none."""

    effort: dict[str, float] = field(default_factory=dict)


def parse_limits(reader: YamlFields, raw: Any, *, actuated: Sequence[str]) -> Limits:
    """The typed ``limits:`` section (one positive limit per actuated joint)."""
    if raw is None:
        return Limits()
    section = reader.mapping(raw, "limits")
    reader.check_keys(section, "limits", {"effort"})
    effort = {}
    for joint, value in reader.mapping(section.get("effort", {}), "limits.effort").items():
        key = f"limits.effort.{joint}"
        if joint not in actuated:
            raise reader.fail(key, f"{joint!r} is not an actuated joint {list(actuated)}")
        effort[joint] = reader.number(value, key)
        if not effort[joint] > 0.0:
            raise reader.fail(key, f"must be positive (N m, N), got {effort[joint]}")
    missing = [joint for joint in actuated if joint not in effort]
    if missing:
        raise reader.fail("limits.effort", f"no limit for the actuated joints {missing} (one per actuated joint)")
    return Limits(effort=effort)
