"""Frames whose names clash: a joint named like a link (legal in URDF and MJCF, accepted by pinocchio).

Pinocchio names a joint's frame after the joint and a link's frame after the link; when the two names are equal,
``model.getFrameId(name)`` (and ``buildReducedModel``, which locks joints) stops with ``ValueError: Several frames
match the filter``. At load (:func:`separate_clashing_frames`) every frame that shares its name with another one
is renamed ``<kind>:<name>``: ``body:ring1`` (a link, an MJCF body), ``frame:ring1`` (a site, an operational
frame), ``fixed:ring1`` (a fixed joint's frame); a joint's own frame keeps the joint's name (pinocchio finds a
locked joint's frame by it). A YAML then addresses them as (:func:`resolve_frame`):

* ``joint:ring1``: the frame of joint ``ring1``; ``body:ring1``, ``frame:ring1``, ``fixed:ring1``: the others;
* ``ring1`` alone: the kind inferred when every frame of that name sits at the same place on the same body (a
  URDF joint named after its child link: both frames are the link's origin), else one line listing the choices.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pinocchio as pin

from pardyn.errors import DescriptionError

__all__ = ["KIND_PREFIXES", "resolve_description_frames", "resolve_frame", "separate_clashing_frames"]

KIND_PREFIXES = {pin.FrameType.BODY: "body", pin.FrameType.OP_FRAME: "frame", pin.FrameType.FIXED_JOINT: "fixed",
                 pin.FrameType.SENSOR: "sensor"}
"""The prefix a clashing frame of each pinocchio kind is renamed with (a joint's frame keeps its name)."""


def separate_clashing_frames(model: pin.Model) -> dict[str, list[str]]:
    """Rename, in place, every non-joint frame whose name another frame shares to ``<kind>:<name>`` (module
    docstring); ``{name: [every frame name it now stands for]}`` for each clash."""
    counts = Counter(frame.name for frame in model.frames)
    clashes: dict[str, list[str]] = {}
    for index, frame in enumerate(model.frames):
        if counts[frame.name] < 2:
            continue
        name = frame.name
        if frame.type != pin.FrameType.JOINT:
            renamed = f"{KIND_PREFIXES.get(frame.type, 'frame')}:{name}"
            while model.existFrame(renamed):
                renamed += "_"
            frame.name = renamed
            model.frames[index] = frame
        clashes.setdefault(name, []).append(frame.name)
    return clashes


def resolve_frame(model: pin.Model, clashes: dict[str, list[str]], name: str, where: str) -> str:
    """The model's frame name for a YAML reference ``name`` (module docstring); raises naming ``where``."""
    if name.startswith("joint:") and model.existFrame(name.removeprefix("joint:")):
        return name.removeprefix("joint:")
    if name not in clashes:
        return name
    candidates = clashes[name]
    frames = [model.frames[model.getFrameId(c)] for c in candidates]
    same_place = all(f.parentJoint == frames[0].parentJoint and f.placement.isApprox(frames[0].placement, 1e-12)
                     for f in frames)
    if same_place:
        return next((c for c in candidates if c != name), candidates[0])
    choices = sorted(c if c != name else f"joint:{name}" for c in candidates)
    raise DescriptionError(f"{where}: {name!r} names {len(candidates)} frames at different places "
                           f"({', '.join(choices)}): write one of them")


def resolve_description_frames(description, model: pin.Model, clashes: dict[str, list[str]]):
    """The description with every frame it names resolved by :func:`resolve_frame` (closures, task frame, mode
    conditions, massless links, cones); the same object when nothing clashes."""
    if not clashes and not any(name.startswith("joint:") for name in _names(description)):
        return description
    source = description.source

    def one(name: str, key: str) -> str:
        return resolve_frame(model, clashes, name, f"{source}: {key}")

    closures = tuple(
        c if c.type == "coupling" else replace(c, frames=tuple(one(f, f"closures[{i}].frames") for f in c.frames))
        for i, c in enumerate(description.closures))
    modes = {label: tuple(replace(m, point=one(m.point, f"{label}[{i}]"),
                                  reference=tuple(one(r, f"{label}[{i}]") for r in m.reference))
                          for i, m in enumerate(getattr(description, label)))
             for label in ("working_mode", "assembly_mode")}
    cones = tuple(replace(cone, frames=tuple((one(a, f"limits.cones[{i}]"), one(b, f"limits.cones[{i}]"))
                                             for a, b in cone.frames))
                  for i, cone in enumerate(description.limits.cones))
    return replace(
        description, closures=closures, **modes,
        task_frame=None if description.task_frame is None else one(description.task_frame, "task.frame"),
        massless_links=tuple(one(link, "massless_links") for link in description.massless_links),
        limits=replace(description.limits, cones=cones))


def _names(description) -> list[str]:
    names = [f for c in description.closures for f in c.frames]
    names += [f for label in ("working_mode", "assembly_mode") for m in getattr(description, label) for f in m.frames]
    names += [f for cone in description.limits.cones for pair in cone.frames for f in pair]
    return names + list(description.massless_links) + ([description.task_frame] if description.task_frame else [])


