"""The ``dynamics:`` section of a robot YAML: nominal bodies, drives and gravity, typed.

::

    dynamics:
      gravity: [0.0, -9.81, 0.0]         # m/s^2, world frame (default [0, 0, -9.81])
      bodies:                            # one entry may list several links with equal values
        - links: [leg1_link1, leg2_link1]
          mass: 0.4239                   # kg (required)
          com: [0.25, 0.0, 0.0]          # m, link frame (default: the origin)
          inertia_com: {xx: 1.0e-6, yy: 0.0088, zz: 0.0088}   # kg m^2 about the com, link axes
      drives:                            # eq. (2), (5) of the DualV paper
        - joints: [leg1_joint1, leg2_joint1]
          ia: 0.02                       # kg m^2 (kg for a prismatic joint)
          fv: 0.05                       # N m s/rad
          fs: 0.3                        # N m
          offset: 0.0                    # N m
      two_end_bars: [leg1_bar1, ...]     # optional: links that the simplified model replaces by half
                                         # their mass at each end (Codourey 1998; pardyn.dynamics.lumped)

Parsing checks the form (keys, numbers, names listed once, no drive on a virtual
task coordinate); the link and joint names are checked against the URDF tree
when the robot loads (:func:`pardyn.dynamics.parameters.parameters_from_description`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pardyn.description.fields import YamlFields
from pardyn.description.validation import check_body, check_drive

__all__ = [
    "BodyValues", "DRIVE_NAMES", "DriveValues", "DynamicsSection", "parse_bodies", "parse_dynamics", "standard_from_com",
]

DRIVE_NAMES: tuple[str, ...] = ("ia", "fv", "fs", "offset")
"""The 4 drive-chain parameters of a joint, eq. (2) order (``offset`` is tau_off): the keys of a
``dynamics.drives`` entry besides ``joints`` (each optional, 0 by default)."""

_INERTIA_KEYS = ("xx", "xy", "xz", "yy", "yz", "zz")


def standard_from_com(mass: float, com: np.ndarray, inertia_com: np.ndarray) -> np.ndarray:
    """Standard parameters ``[xx xy xz yy yz zz mx my mz m]`` at the frame origin, shape (10,), of a body of
    ``mass`` (kg) with its centre of mass at ``com`` (3,) m and inertia ``inertia_com`` (3, 3) kg m^2 about it
    (parallel-axis theorem, DualV paper eqs. 2-4)."""
    origin = inertia_com + mass * (com @ com * np.eye(3) - np.outer(com, com))
    return np.array([origin[0, 0], origin[0, 1], origin[0, 2], origin[1, 1], origin[1, 2], origin[2, 2],
                     *(mass * com), mass])


@dataclass(frozen=True)
class BodyValues:
    """One ``dynamics.bodies`` entry: the links it names share these values.

    Attributes:
        links: link names (URDF BODY frames).
        mass: kg; com: centre of mass in the link frame (3,), m;
        inertia_com: inertia about the centre of mass in link axes (3, 3), kg m^2.
    """

    links: tuple[str, ...]
    mass: float
    com: np.ndarray
    inertia_com: np.ndarray

    def standard(self) -> np.ndarray:
        """``[xx xy xz yy yz zz mx my mz m]`` at the link origin (DualV paper eqs. 2-4), shape (10,)."""
        return standard_from_com(self.mass, self.com, self.inertia_com)


@dataclass(frozen=True)
class DriveValues:
    """One ``dynamics.drives`` entry: ``ia`` (kg m^2), ``fv`` (N m s/rad), ``fs`` (N m), ``offset`` (N m)."""

    joints: tuple[str, ...]
    ia: float = 0.0
    fv: float = 0.0
    fs: float = 0.0
    offset: float = 0.0

    def values(self) -> dict[str, float]:
        """``{ia, fv, fs, offset}``."""
        return {name: getattr(self, name) for name in DRIVE_NAMES}


@dataclass(frozen=True)
class DynamicsSection:
    """The nominal dynamic parameters as written: gravity (3,) m/s^2, body and drive entries in YAML order;
    ``two_end_bars``: the links of the simplified model's two-end bars (empty: no simplified model)."""

    gravity: np.ndarray
    bodies: tuple[BodyValues, ...]
    drives: tuple[DriveValues, ...]
    two_end_bars: tuple[str, ...] = ()


def _list(reader: YamlFields, raw: Any, key: str) -> list:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise reader.fail(key, "expected a list")
    return raw


def parse_bodies(reader: YamlFields, raw: Any, key: str) -> tuple[BodyValues, ...]:
    """A list of body entries ``{links, mass, com, inertia_com}`` at ``key`` (``dynamics.bodies``, ``inertials``),
    each checked physical (:func:`check_body`; an ``inertials:`` entry, which replaces a tree file's inertial
    as a real body's, also ``A + B >= C``), no link listed twice."""
    bodies = []
    for i, raw_body in enumerate(_list(reader, raw, key)):
        entry = f"{key}[{i}]"
        item = reader.mapping(raw_body, entry)
        reader.check_keys(item, entry, {"links", "mass", "com", "inertia_com"})
        if "mass" not in item:
            raise reader.fail(entry, "missing 'mass' (kg)")
        raw_inertia = reader.mapping(item.get("inertia_com", {}), f"{entry}.inertia_com")
        reader.check_keys(raw_inertia, f"{entry}.inertia_com", set(_INERTIA_KEYS))
        xx, xy, xz, yy, yz, zz = (reader.number(raw_inertia.get(k, 0.0), f"{entry}.inertia_com.{k}")
                                  for k in _INERTIA_KEYS)
        bodies.append(BodyValues(
            links=tuple(reader.names(item.get("links"), f"{entry}.links")),
            mass=reader.number(item["mass"], f"{entry}.mass"),
            com=reader.vector(item["com"], f"{entry}.com", 3) if "com" in item else np.zeros(3),
            inertia_com=np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]),
        ))
        check_body(bodies[-1].mass, bodies[-1].inertia_com, f"{reader.source}: {entry}",
                   triangle=key == "inertials")
    links = [link for body in bodies for link in body.links]
    twice = sorted({link for link in links if links.count(link) > 1})
    if twice:
        raise reader.fail(key, f"links listed twice: {twice}")
    return tuple(bodies)


def parse_dynamics(
    reader: YamlFields, raw: Any, *, task_joints: Sequence[str], actuated: Sequence[str]
) -> DynamicsSection:
    """The typed ``dynamics:`` section; :class:`DescriptionError` naming file and key on bad content."""
    section = reader.mapping(raw, "dynamics")
    reader.check_keys(section, "dynamics", {"gravity", "bodies", "drives", "two_end_bars"})
    gravity = (reader.vector(section["gravity"], "dynamics.gravity", 3) if "gravity" in section
               else np.array([0.0, 0.0, -9.81]))

    bodies = parse_bodies(reader, section.get("bodies"), "dynamics.bodies")
    links = [link for body in bodies for link in body.links]

    drives = []
    seen: set[str] = set()
    for i, raw_drive in enumerate(_list(reader, section.get("drives"), "dynamics.drives")):
        key = f"dynamics.drives[{i}]"
        item = reader.mapping(raw_drive, key)
        reader.check_keys(item, key, {"joints", *DRIVE_NAMES})
        joints = tuple(reader.names(item.get("joints"), f"{key}.joints"))
        for j, joint in enumerate(joints):
            if joint in task_joints and joint not in actuated:
                raise reader.fail(f"{key}.joints[{j}]", f"{joint!r} is a virtual task coordinate, not a drive")
            if joint in seen:
                raise reader.fail(f"{key}.joints[{j}]", f"joint {joint!r} listed twice")
            seen.add(joint)
        drives.append(DriveValues(joints, **{p: reader.number(item.get(p, 0.0), f"{key}.{p}") for p in DRIVE_NAMES}))
        check_drive(drives[-1].values(), f"{reader.source}: {key}")
    bars = tuple(reader.names(section["two_end_bars"], "dynamics.two_end_bars")) if "two_end_bars" in section else ()
    for j, bar in enumerate(bars):
        if bar not in links:
            raise reader.fail(f"dynamics.two_end_bars[{j}]", f"{bar!r} is not a link of dynamics.bodies")
    return DynamicsSection(gravity=gravity, bodies=bodies, drives=tuple(drives), two_end_bars=bars)
