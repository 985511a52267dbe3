"""Build the pinocchio tree of a robot and check the YAML against it."""

from __future__ import annotations

import pinocchio as pin

from pardyn.description.config import RobotDescription
from pardyn.errors import DescriptionError

__all__ = ["build_model", "joint_names"]


def joint_names(model: pin.Model) -> tuple[str, ...]:
    """Names of the model's joints in configuration order (universe excluded)."""
    return tuple(model.names[1:])


def build_model(description: RobotDescription) -> pin.Model:
    """Load the URDF tree with pinocchio and check every name the YAML uses.

    Only one-degree-of-freedom joints (revolute, prismatic) are accepted, so
    that ``q`` and ``v`` share indices (``nq == nv``) and a joint name is one
    coordinate. Raises :class:`DescriptionError` naming the YAML key at fault.
    """
    try:
        model = pin.buildModelFromUrdf(str(description.urdf))
    except (RuntimeError, ValueError) as error:
        raise DescriptionError(f"{description.urdf}: pinocchio cannot read this URDF: {error}") from error

    names = joint_names(model)
    for joint_id in range(1, model.njoints):
        joint = model.joints[joint_id]
        if joint.nq != 1 or joint.nv != 1:
            raise DescriptionError(
                f"{description.urdf}: joint {model.names[joint_id]!r} has nq={joint.nq}, nv={joint.nv}; "
                "only revolute and prismatic joints are supported (use 'revolute' with limits, "
                "not 'continuous', and no floating joints)"
            )
    source = description.source

    def check_joints(key: str, wanted: tuple[str, ...]) -> None:
        unknown = [n for n in wanted if n not in names]
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
        check_frames(f"closures[{i}].frames", closure.frames)
    for label in ("working_mode", "assembly_mode"):
        for i, condition in enumerate(getattr(description, label)):
            check_frames(f"{label}[{i}]", condition.frames)
    return model
