"""The ``inertials:`` section of a robot YAML: a body's inertial given where the tree file lacks it or is wrong.

::

    inertials:                       # the dynamics.bodies form; replaces the tree's own inertial of each body
      - links: [right_silicone_pad, left_silicone_pad]   # URDF links or MJCF bodies
        mass: 0.0013                 # kg
        com: [0.0, -0.0025, 0.0185]  # m, body frame (default: the origin)
        inertia_com: {xx: 1.0e-7, yy: 1.0e-7, zz: 2.0e-8}   # kg m^2 about the com, body axes (xy xz yz: 0)

A vendor's MJCF whose moving bodies take their mass from mesh files that are not shipped (the Robotiq 2F-85's
silicone pads) loads when every such body is given here; a URDF's or MJCF's inertial can be corrected without
editing the vendor's file. The values are written into the tree itself, in the file's own terms, before pinocchio
or MuJoCo read it: the URDF link's ``<inertial>`` (origin at the com, no rotation) or the MJCF body's explicit
inertial (``mass``, ``ipos``, ``fullinertia``: MuJoCo compiles it as if the file said so). Every later user
of the tree (dynamics, regressor, the MuJoCo plant, the SDF export) sees them. Unlike ``dynamics.bodies`` (the
nominal parameters, which must agree with the tree), this section *changes* the tree.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from pathlib import Path

from pardyn.description.dynamics import BodyValues
from pardyn.errors import DescriptionError

__all__ = ["given_bodies", "set_mjcf_inertials", "set_urdf_inertials"]


def given_bodies(inertials: Sequence[BodyValues]) -> dict[str, BodyValues]:
    """``{body name: its entry}`` of the section."""
    return {link: entry for entry in inertials for link in entry.links}


def _unknown(source: Path | None, index: tuple[int, int], name: str, tree: Path, kind: str, known) -> DescriptionError:
    where = f"{source}: " if source is not None else ""
    return DescriptionError(f"{where}inertials[{index[0]}].links[{index[1]}]: no {kind} {name!r} in {tree}; "
                            f"its {'bodies' if kind == 'body' else kind + 's'}: {sorted(known)}")


def _entries(inertials: Sequence[BodyValues]):
    for i, entry in enumerate(inertials):
        for j, name in enumerate(entry.links):
            yield (i, j), name, entry


def set_urdf_inertials(root: ElementTree.Element, inertials: Sequence[BodyValues], tree: Path,
                       source: Path | None) -> None:
    """Replace each named link's ``<inertial>`` in a parsed URDF (``root`` is ``<robot>``).

    Raises:
        DescriptionError: a name that is no link of the URDF (naming the entry and the links).
    """
    links = {link.get("name"): link for link in root.findall("link")}
    for index, name, entry in _entries(inertials):
        link = links.get(name)
        if link is None:
            raise _unknown(source, index, name, tree, "link", links)
        for old in link.findall("inertial"):
            link.remove(old)
        inertial = ElementTree.SubElement(link, "inertial")
        ElementTree.SubElement(inertial, "origin", xyz=" ".join(repr(float(c)) for c in entry.com), rpy="0 0 0")
        ElementTree.SubElement(inertial, "mass", value=repr(float(entry.mass)))
        matrix = entry.inertia_com
        ElementTree.SubElement(inertial, "inertia", **{f"i{a}{b}": repr(float(matrix[i, j])) for a, b, i, j in (
            ("x", "x", 0, 0), ("x", "y", 0, 1), ("x", "z", 0, 2), ("y", "y", 1, 1), ("y", "z", 1, 2),
            ("z", "z", 2, 2))})


def set_mjcf_inertials(spec, inertials: Sequence[BodyValues], tree: Path, source: Path | None) -> None:
    """Give each named body of an ``mujoco.MjSpec`` the entry as its explicit inertial (``fullinertia``).

    Raises:
        DescriptionError: a name that is no body of the MJCF, or the world body (naming the entry).
    """
    for index, name, entry in _entries(inertials):
        body = spec.body(name) if name != "world" else None
        if body is None:
            raise _unknown(source, index, name, tree, "body", (b.name for b in spec.bodies if b.name))
        matrix = entry.inertia_com
        body.explicitinertial = True
        body.mass = float(entry.mass)
        body.ipos = [float(c) for c in entry.com]
        body.fullinertia = [float(matrix[i, j]) for i, j in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))]
