"""The ``springs:`` section of a robot YAML: joint springs, typed.

::

    springs:                         # tau_j = stiffness (q_j - reference) is what the drives add to hold them
      - joints: [finger1_joint, finger2_joint]
        stiffness: 0.5               # N m/rad (N/m for a prismatic joint), >= 0
        reference: 0.1               # rad (m): where the spring is relaxed (default 0)

A URDF has no place for springs; an MJCF tree gives its ``stiffness``/``springref`` itself (the section, when
present, replaces them). The stiffnesses become standard parameters ``k_<joint>``
(:class:`pardyn.dynamics.parameters.Spring`).
"""

from __future__ import annotations

from typing import Any

from pardyn.description.fields import YamlFields

__all__ = ["parse_springs"]


def parse_springs(reader: YamlFields, raw: Any) -> tuple[tuple[str, float, float], ...]:
    """``((joint, stiffness, reference), ...)`` of the section; joint names are checked on the tree at load."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise reader.fail("springs", "expected a list of {joints, stiffness, reference}")
    springs: list[tuple[str, float, float]] = []
    for i, item in enumerate(raw):
        key = f"springs[{i}]"
        entry = reader.mapping(item, key)
        reader.check_keys(entry, key, {"joints", "stiffness", "reference"})
        if "stiffness" not in entry:
            raise reader.fail(key, "missing 'stiffness' (N m/rad, N/m)")
        stiffness = reader.number(entry["stiffness"], f"{key}.stiffness")
        if stiffness < 0.0:
            raise reader.fail(f"{key}.stiffness", f"must be >= 0, got {stiffness}")
        reference = reader.number(entry.get("reference", 0.0), f"{key}.reference")
        for j, joint in enumerate(reader.names(entry.get("joints"), f"{key}.joints")):
            if any(joint == name for name, _, _ in springs):
                raise reader.fail(f"{key}.joints[{j}]", f"joint {joint!r} listed twice")
            springs.append((joint, stiffness, reference))
    return tuple(springs)
