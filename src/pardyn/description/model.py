"""Build the pinocchio tree of a robot and check the YAML against it."""

from __future__ import annotations

import math

import pinocchio as pin

from pardyn.description.config import RobotDescription
from pardyn.description.frames import resolve_description_frames, separate_clashing_frames
from pardyn.description.inertials import set_urdf_inertials
from pardyn.description.validation import build_urdf_model, check_urdf
from pardyn.errors import DescriptionError
from pardyn.textio import shown

__all__ = ["build_model", "joint_names"]


def joint_names(model: pin.Model) -> tuple[str, ...]:
    """Names of the model's joints in configuration order (universe excluded)."""
    return tuple(model.names[1:])


def _lock_joints(model: pin.Model, description: RobotDescription, values_out: dict | None = None) -> pin.Model:
    """The model with the YAML's ``locked`` joints fixed (pinocchio's ``buildReducedModel``).

    ``locked: {joint: value, ...}`` (rad, m), ``locked: [joint, ...]`` (at 0) or
    ``locked: others`` (every joint the YAML does not name in ``task``,
    ``actuated`` or ``sensed``, at 0): a mobile manipulator's wheels, head and
    hand when only its arm is modelled. The bodies of a locked joint are
    welded to its parent (their inertia lumped into the parent body). ``values_out`` receives
    ``{joint: value}`` (rad, m; ``lower``/``upper`` resolved to the limit).
    """
    locked = description.locked
    if locked is None:
        return model
    names = list(model.names[1:])
    used = set(description.task_joints) | set(description.actuated) | set(description.sensed)
    values = {name: 0.0 for name in names if name not in used} if locked == "others" else dict(locked)
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise DescriptionError(f"{description.source}: locked: unknown joints {unknown}; URDF joints: {names}")
    clash = sorted(set(values) & used)
    if clash:
        raise DescriptionError(f"{description.source}: locked: {clash} are used by task, actuated or sensed")
    reference = pin.neutral(model)
    for name, value in values.items():
        joint = model.joints[model.getJointId(name)]
        if value in ("lower", "upper"):  # an adaptive mechanism's coupler resting on its limit
            side, limits = value, model.lowerPositionLimit if value == "lower" else model.upperPositionLimit
            value = float(limits[joint.idx_q])
            if not math.isfinite(value):
                raise DescriptionError(f"{description.source}: locked.{name}: {name!r} has no {side} limit in "
                                       f"{description.urdf}; give a value (rad, m)")
        lower, upper = (float(model.lowerPositionLimit[joint.idx_q]), float(model.upperPositionLimit[joint.idx_q]))
        if joint.nq == 1 and math.isfinite(lower) and math.isfinite(upper) and lower < upper and not (
                lower - 1e-9 <= value <= upper + 1e-9):
            raise DescriptionError(f"{description.source}: locked.{name}: {shown(value)} is outside {name!r}'s limits "
                                   f"[{lower:.6g}, {upper:.6g}] in {description.urdf.name}; lock it within them "
                                   "(or at lower/upper)")
        if not abs(value) <= 1e3:  # a continuous joint has no limits: a thousand radians is not a position
            raise DescriptionError(f"{description.source}: locked.{name}: {shown(value)} (rad, m) is not a position")
        if values_out is not None:
            values_out[name] = float(value)
        if joint.nq == 1:
            reference[joint.idx_q] = value
        elif joint.nq == 2:  # continuous: (cos, sin)
            reference[joint.idx_q:joint.idx_q + 2] = (math.cos(value), math.sin(value))
    return pin.buildReducedModel(model, [model.getJointId(name) for name in values], reference)


def build_model(description: RobotDescription, *, locked: dict[str, float] | None = None,
                resolved: list | None = None) -> pin.Model:
    """Load the URDF tree with pinocchio and check every name the YAML uses.

    Only one-degree-of-freedom joints (revolute, prismatic) are accepted, so
    that ``q`` and ``v`` share indices (``nq == nv``) and a joint name is one
    coordinate. Raises :class:`DescriptionError` naming the YAML key at fault.
    ``locked`` (when given) receives the YAML's locked joints and their values.
    Frames whose names clash (a joint named like a link) are renamed and the YAML's frame names resolved
    (:mod:`pardyn.description.frames`); ``resolved`` (when given) receives the description so resolved.
    """
    tree = _read_tree(description)
    clashes = separate_clashing_frames(tree)
    description = resolve_description_frames(description, tree, clashes)
    if resolved is not None:
        resolved.append(description)
    held: dict[str, float] = {}
    model = _lock_joints(tree, description, held)
    if locked is not None:
        locked.update(held)

    names = joint_names(model)
    for joint_id in range(1, model.njoints):
        joint = model.joints[joint_id]
        if joint.nq != 1 or joint.nv != 1:
            raise DescriptionError(
                f"{description.urdf}: joint {model.names[joint_id]!r} has nq={joint.nq}, nv={joint.nv}; "
                "only one-degree-of-freedom joints (revolute, continuous, prismatic) are supported, no "
                "floating, planar or ball joints"
            )
    source = description.source

    def check_joints(key: str, wanted: tuple[str, ...]) -> None:
        unknown = [n for n in wanted if n not in names and n not in held]  # locked ones: analyse_structure
        if unknown:
            raise DescriptionError(f"{source}: {key}: unknown joints {unknown}; URDF joints: {list(names)}")

    check_joints("task", description.task_joints)
    check_joints("actuated", description.actuated)
    check_joints("sensed", description.sensed)
    check_joints("home.joints", tuple(description.home_joints))
    check_joints("counterweights", description.counterweights)
    for name in description.counterweights:
        joint_id = model.getJointId(name)
        kind = model.joints[joint_id].shortname().removeprefix("JointModel")
        if not kind.startswith("P") or model.parents[joint_id] != 0:
            raise DescriptionError(f"{source}: counterweights: {name!r} must be a prismatic joint of the base")

    frames = {frame.name for frame in model.frames}

    def check_frames(key: str, wanted: tuple[str, ...]) -> None:
        unknown = [n for n in wanted if n not in frames]
        if unknown:
            raise DescriptionError(
                f"{source}: {key}: unknown frames {unknown}; URDF frames: {sorted(frames)}"
            )

    for i, closure in enumerate(description.closures):
        if closure.type == "coupling":
            check_joints(f"closures[{i}].joints", closure.joints)
            continue
        check_frames(f"closures[{i}].frames", closure.frames)
        parents = {model.frames[model.getFrameId(name)].parentJoint for name in closure.frames}
        if len(parents) == 1:
            raise DescriptionError(
                f"{source}: closures[{i}].frames: {list(closure.frames)} are both fixed to the body of joint "
                f"{model.names[parents.pop()]!r}: a closure must join two different bodies"
            )
    if description.task_frame is not None:
        check_frames("task.frame", (description.task_frame,))
    _zero_massless_links(model, description)
    for label in ("working_mode", "assembly_mode"):
        for i, condition in enumerate(getattr(description, label)):
            check_frames(f"{label}[{i}]", condition.frames)
    return model


def _read_tree(description: RobotDescription) -> pin.Model:
    """The pinocchio tree of the description's tree file (URDF or MJCF)."""
    if description.tree_format == "mjcf":
        from pardyn.description.mjcf import read_mjcf  # noqa: PLC0415 - needs mujoco

        return read_mjcf(description.urdf, description.inertials, yaml=description.source,
                         base=description.base).model
    check_urdf(description.urdf)
    text, continuous = _urdf_text(description)
    if text is None:
        return build_urdf_model(description.urdf)
    try:
        model = pin.buildModelFromXML(text)
    except (RuntimeError, ValueError) as error:
        raise DescriptionError(f"{description.urdf}: pinocchio cannot read this URDF: {error}") from error
    for name in continuous:  # no position limit: one angle coordinate, wrapped like every revolute joint's
        index = model.joints[model.getJointId(name)].idx_q
        model.lowerPositionLimit[index], model.upperPositionLimit[index] = -math.inf, math.inf
    return model


def _urdf_text(description: RobotDescription) -> tuple[str | None, list[str]]:
    """The URDF's text as pardyn reads it, and the names of its ``continuous`` joints; ``None`` when the file is
    read as it is.

    * ``continuous`` joints written as ``revolute`` (limits +-1e9 rad, set to infinity once read). Pinocchio reads
      a continuous joint as a (cos, sin) pair (nq = 2, nv = 1); pardyn's coordinates are one angle per joint (``q``
      and ``v`` share indices), which a revolute joint without limits is. So are revolute joints whose ``<limit>``
      has no ``lower``/``upper`` (urdfdom reads ``[0, 0]``: a joint that could not move);
    * the YAML's ``inertials:`` as the links' ``<inertial>`` (:mod:`pardyn.description.inertials`).
    """
    import xml.etree.ElementTree as ElementTree  # noqa: PLC0415

    path = description.urdf
    text = path.read_text(encoding="utf-8", errors="replace")
    unbounded = set(check_urdf(path).unbounded)
    if "continuous" not in text and not description.inertials and not unbounded:
        return None, []
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError:
        return None, []  # check_urdf says what is wrong with it
    set_urdf_inertials(root, description.inertials, path, description.source)
    names = []
    for joint in root.iter("joint"):
        if joint.get("type") == "continuous" or joint.get("name") in unbounded:
            joint.set("type", "revolute")
            limit = joint.find("limit")
            if limit is None:
                limit = ElementTree.SubElement(joint, "limit", effort="0", velocity="0")
            limit.set("lower", "-1e9")
            limit.set("upper", "1e9")
            names.append(joint.get("name"))
    if not names and not description.inertials:
        return None, []
    return ElementTree.tostring(root, encoding="unicode"), names


def _zero_massless_links(model: pin.Model, description: RobotDescription) -> None:
    """Give no inertia to the description's ``massless_links`` (placeholders of a loop cut).

    Each must be the only body carried by its joint (its inertia is the joint's).
    """
    for link in description.massless_links:
        if not model.existFrame(link):
            raise DescriptionError(f"{description.source}: massless link {link!r} is not a frame of {description.urdf}")
        joint = model.frames[model.getFrameId(link)].parentJoint
        others = [
            f.name for f in model.frames
            if f.parentJoint == joint and f.type == pin.FrameType.BODY and f.name != link
        ]
        if others:
            raise DescriptionError(
                f"{description.source}: massless link {link!r} shares joint {model.names[joint]!r} with "
                f"bodies {others}; only a link alone on its joint can be made massless"
            )
        model.inertias[joint] = pin.Inertia.Zero()
