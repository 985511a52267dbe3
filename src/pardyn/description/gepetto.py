"""Gepetto's ``example-parallel-robots`` format: ``robot.urdf`` + ``robot.yaml``, loaded unedited.

Their YAML (Gepetto/example-parallel-robots, ``robots/<name>/robot.yaml``)::

    closed_loop: [[closedloop1_A, closedloop1_B], ...]   # frame pairs that coincide
    type: [6d, ...]                                       # 6d (weld) or 3d (ball joint)
    name_mot: [mot1, mot2]                                # actuated joints
    joint_name: [...]                                     # optional, informative
    joint_type: [...]                                     # optional, informative

maps to a :class:`~pardyn.description.config.RobotDescription`:

* ``closed_loop`` + ``type`` -> ``closures`` of type ``6D`` / ``3D`` (their
  reference, pinocchio's ``RigidConstraintModel`` CONTACT_6D / CONTACT_3D in the
  LOCAL frame, has the same zero set); the independent rows are then found
  numerically (:mod:`pardyn.kinematics.rank`);
* ``name_mot`` -> ``actuated``; the task is the actuated joints themselves;
* their loop-cut convention splits a revolute joint into two coincident
  joints ``closedloopN_A`` / ``_B`` carrying placeholder sphere links (654 498 kg
  in ``5bar_linkage``): those links are made **massless** (logged in the
  description's notes). The motion of the two half-joints together then moves
  nothing with mass: it is an internal motion, locked at load
  (:mod:`pardyn.kinematics.structure`);
* home: the neutral configuration, closed by minimum-norm Gauss-Newton.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pinocchio as pin

from pardyn.description.config import CLOSURE_TYPES, COMPONENT_NAMES, Closure, RobotDescription
from pardyn.description.fields import YamlFields
from pardyn.description.validation import build_urdf_model, check_joint_names
from pardyn.errors import DescriptionError
from pardyn.textio import shown

__all__ = ["is_gepetto", "parse_gepetto"]

_TYPES = {"6d": "6D", "3d": "3D"}
_KEYS = {"closed_loop", "type", "name_mot", "joint_name", "joint_type"}


def is_gepetto(raw: Any) -> bool:
    """Whether a parsed YAML file is in Gepetto's format (it has ``closed_loop``)."""
    return isinstance(raw, dict) and "closed_loop" in raw


def _placeholder_links(urdf: Path, frames: set[str]) -> tuple[str, ...]:
    """Child links of the cut joints named in the closures (Gepetto's placeholders)."""
    model = build_urdf_model(urdf)
    links = []
    for name in sorted(frames):
        if not model.existFrame(name):
            continue
        frame = model.frames[model.getFrameId(name)]
        if frame.type != pin.FrameType.JOINT:
            continue
        children = [
            f.name for f in model.frames if f.type == pin.FrameType.BODY and f.parentJoint == frame.parentJoint
        ]
        if len(children) == 1:
            links.append(children[0])
    return tuple(links)


def parse_gepetto(raw: Any, *, source: Path) -> RobotDescription:
    """A description from Gepetto's ``robot.yaml`` (``source``) and the ``robot.urdf`` beside it."""
    reader = YamlFields(source)
    top = reader.mapping(raw, "<top>")
    reader.check_keys(top, "<top>", _KEYS)
    urdf = source.with_name("robot.urdf")
    if not urdf.is_file():
        candidates = sorted(source.parent.glob("*.urdf"))
        if len(candidates) != 1:
            raise DescriptionError(
                f"{source}: Gepetto format: expected robot.urdf (or one .urdf file) beside the YAML, "
                f"found {[c.name for c in candidates]}"
            )
        urdf = candidates[0]
    pairs = top.get("closed_loop") or []
    kinds = top.get("type") or []
    for key, value in (("closed_loop", pairs), ("type", kinds)):
        if not isinstance(value, list):
            raise reader.fail(key, f"expected a list (one entry per loop), got {type(value).__name__} {shown(value)}")
    if len(pairs) != len(kinds):
        raise reader.fail("type", f"one type per closed_loop pair expected, got {len(kinds)} for {len(pairs)} pairs")
    closures = []
    for i, (pair, kind) in enumerate(zip(pairs, kinds)):
        frames = reader.strings(pair, f"closed_loop[{i}]")
        if len(frames) != 2:
            raise reader.fail(f"closed_loop[{i}]", f"expected two frame names, got {list(frames)}")
        if not isinstance(kind, str) or kind not in _TYPES:  # a list (`[[6d]]`) is unhashable: named, not raised
            raise reader.fail(f"type[{i}]", f"unknown closure type {shown(kind)}; known: {sorted(_TYPES)}")
        closure_type = _TYPES[kind]
        closures.append(
            Closure(
                name=f"closed_loop{i + 1}",
                frames=(frames[0], frames[1]),
                type=closure_type,
                components=tuple(COMPONENT_NAMES.index(c) for c in CLOSURE_TYPES[closure_type]),
            )
        )
    actuated = reader.names(top.get("name_mot"), "name_mot")
    check_joint_names(urdf, source, {"name_mot": actuated})
    massless = _placeholder_links(urdf, {name for c in closures for name in c.frames})
    notes = []
    if massless:
        notes.append(
            f"placeholder links of the loop cuts treated as massless: {list(massless)} (Gepetto's convention: "
            "a cut revolute joint split into two coincident joints carrying dummy spheres)"
        )
    return RobotDescription(
        name=source.parent.name,
        source=source,
        urdf=urdf,
        task_names=tuple(actuated),
        task_joints=tuple(actuated),
        actuated=tuple(actuated),
        sensed=(),
        closures=tuple(closures),
        working_mode=(),
        assembly_mode=(),
        home_task=(),
        home_joints={},
        task_frame=None,
        massless_links=massless,
        notes=tuple(notes),
        home_task_given=False,
        description_format="gepetto",
    )
