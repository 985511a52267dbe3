"""SDF (1.9) files of a robot's mechanism, for libsdformat, gz-sim and Gazebo Classic.

Four files from one :class:`~pardyn.export.mechanism.BodyGraph` (every pose at home, in
the model frame = the world frame):

* ``model.sdf``: the model with its **loops as SDF joints**: every closure is a ``fixed``
  joint ``<closure>_closure`` between the link of its first frame and the tree-side link
  of the closure (:mod:`pardyn.export.mechanism`); a joint coupling ``q_b = c0 + c1 q_a`` (MJCF's
  ``<equality joint>``, a gear) is SDF's ``gearbox`` joint ``<closure>_gearbox`` (ratio ``-c1``). SDF allows
  kinematic loops; libsdformat loads them and Gazebo Classic's ODE closes them natively. Frame names
  SDF reserves (``world``: an MJCF's world body) are left out.
* ``world_classic.sdf``: a Gazebo Classic world (SDF 1.7, what Gazebo 11 reads) with that model inline, ODE with the
  ``world`` (direct) step so the loop constraints are solved exactly each step, 1 ms.
* ``model.gz.sdf``: the model for gz-sim. gz-physics builds trees only (gazebosim/gz-physics
  issue 25, open: "the child link already has a parent joint" for a loop joint), so the
  welds are not joints here but one ``gz::sim::systems::DetachableJoint`` per closure, which
  attaches the tree-side link to the other with a fixed constraint at start (the workaround of
  gazebosim/gz-sim issue 3006: a dummy link, DetachableJoint, DART's PGS solver; DART closes
  loops only with weld or ball constraints, dartsim/dart issue 465, hence the weld as the one
  closing primitive). Also the ``gz_ros2_control`` system with the controllers file.
* ``world.sdf``: a gz-sim world: DART with the PGS solver, 1 ms steps, the Physics,
  UserCommands (spawning) and SceneBroadcaster systems, the robot's gravity.

No collision geometry is written (the loops' links overlap at the joints; contacts would fight
the constraints); each link gets a small sphere to be seen.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pinocchio as pin

from pardyn.export.mechanism import Joint, Link, BodyGraph

__all__ = ["CLASSIC_SDF_VERSION", "SDF_VERSION", "model_element", "model_sdf", "gz_model_sdf", "gz_world_sdf", "classic_world_sdf"]

SDF_VERSION = "1.9"
CLASSIC_SDF_VERSION = "1.7"
"""Gazebo Classic 11 reads SDF up to 1.7 (libsdformat 9); the features used here (``relative_to``,
``expressed_in``, ``<frame attached_to>``) are 1.7's."""
STEP_S = 1e-3
"""Physics step of both worlds (s): pardyn's control period."""


def _numbers(values: Sequence[float]) -> str:
    return " ".join(repr(float(v)) for v in values)


def _pose_text(pose: pin.SE3) -> str:
    return _numbers([*pose.translation, *pin.rpy.matrixToRpy(pose.rotation)])


def _limit(value: float, unlimited: float) -> float:
    return float(unlimited if not math.isfinite(value) else value)


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, tag, attributes)
    if text is not None:
        element.text = text
    return element


def _link(parent: ET.Element, link: Link) -> None:
    element = _sub(parent, "link", name=link.name)
    _sub(element, "pose", _pose_text(link.pose), relative_to="__model__")
    inertial = _sub(element, "inertial")
    _sub(inertial, "pose", _numbers([*link.com, 0.0, 0.0, 0.0]))
    _sub(inertial, "mass", repr(float(link.mass)))
    inertia = _sub(inertial, "inertia")
    matrix = link.inertia
    for name, (i, j) in zip(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"),
                            ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))):
        _sub(inertia, name, repr(float(matrix[i, j])))
    visual = _sub(element, "visual", name="origin")
    _sub(_sub(_sub(visual, "geometry"), "sphere"), "radius", "0.01")


def _axis(parent: ET.Element, tag: str, joint: Joint, axis: np.ndarray) -> None:
    element = _sub(parent, tag)
    _sub(element, "xyz", _numbers(axis), expressed_in="__model__")
    limit = _sub(element, "limit")
    _sub(limit, "lower", repr(_limit(joint.lower, -1e16)))
    _sub(limit, "upper", repr(_limit(joint.upper, 1e16)))
    _sub(limit, "effort", repr(_limit(joint.effort, -1.0)))
    _sub(limit, "velocity", repr(_limit(joint.velocity, -1.0)))
    dynamics = _sub(element, "dynamics")
    _sub(dynamics, "damping", repr(float(joint.damping)))
    _sub(dynamics, "friction", repr(float(joint.friction)))
    _sub(dynamics, "spring_reference", repr(float(joint.spring_reference)))
    _sub(dynamics, "spring_stiffness", repr(float(joint.spring_stiffness)))


def _joint(parent: ET.Element, joint: Joint) -> None:
    element = _sub(parent, "joint", name=joint.name, type=joint.kind)
    _sub(element, "parent", joint.parent)
    _sub(element, "child", joint.child)
    _sub(element, "pose", _pose_text(joint.pose), relative_to="__model__")
    if joint.kind == "gearbox":
        _sub(element, "gearbox_ratio", repr(float(joint.gearbox_ratio)))
        _sub(element, "gearbox_reference_body", joint.reference)
    if joint.axis is not None:
        _axis(element, "axis", joint, joint.axis)
    if joint.axis2 is not None:
        _axis(element, "axis2", joint, joint.axis2)


def model_element(mechanism: BodyGraph, *, loops: bool = True) -> ET.Element:
    """The ``<model>`` element; ``loops``: write the welds as ``fixed`` joints (else leave them out)."""
    model = _sub(ET.Element("root"), "model", name=mechanism.name)
    for link in mechanism.links:
        _link(model, link)
    for joint in mechanism.joints:
        if loops or joint.role != "weld":
            _joint(model, joint)
    for frame in mechanism.frames:
        attached = "__model__" if frame.link == "world" else frame.link
        element = _sub(model, "frame", name=frame.name, attached_to=attached)
        _sub(element, "pose", _pose_text(frame.pose), relative_to="__model__")
    return model


def _document(*children: ET.Element, comment: str, version: str = SDF_VERSION) -> str:
    root = ET.Element("sdf", version=version)
    root.append(ET.Comment(comment))
    for child in children:
        root.append(child)
    ET.indent(root)
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _summary(mechanism: BodyGraph) -> str:
    parts = [f" pardyn export of {mechanism.name}: poses at home (SDF joint positions are q - home). "]
    if mechanism.free_platform:
        parts.append(f"Platform {mechanism.platform} free, held by its loops (virtual joints "
                     f"{list(mechanism.dropped_joints)} are not parts of the robot). ")
    elif mechanism.guide_joints:
        parts.append(f"Guide joints {list(mechanism.guide_joints)}: pardyn's virtual task chain, kept because "
                     "the closures do not fix the platform's other motions (placeholder links). ")
    if mechanism.placeholders:
        parts.append(f"Placeholder masses (massless in pardyn): {list(mechanism.placeholders)}. ")
    for note in mechanism.unrepresented:
        parts.append(f"Not represented: {note}. ")
    return "".join(parts)


def model_sdf(mechanism: BodyGraph) -> str:
    """``model.sdf``: loops as ``fixed`` SDF joints (libsdformat, Gazebo Classic)."""
    return _document(model_element(mechanism), comment=_summary(mechanism))


def _plugin(parent: ET.Element, filename: str, name: str, **children: str) -> ET.Element:
    plugin = _sub(parent, "plugin", filename=filename, name=name)
    for tag, text in children.items():
        _sub(plugin, tag, text)
    return plugin


def gz_model_sdf(mechanism: BodyGraph, controllers: Path) -> str:
    """``model.gz.sdf``: the welds as DetachableJoint systems, plus gz_ros2_control (``controllers``: its YAML)."""
    model = model_element(mechanism, loops=False)
    for weld in mechanism.welds:
        _plugin(model, "gz-sim-detachable-joint-system", "gz::sim::systems::DetachableJoint",
                parent_link=weld.parent, child_model=mechanism.name, child_link=weld.child)
    _plugin(model, "gz_ros2_control-system", "gz_ros2_control::GazeboSimROS2ControlPlugin",
            parameters=str(Path(controllers).resolve()))
    return _document(model, comment=_summary(mechanism) + "Loops closed by DetachableJoint (gz-physics issue 25). ")


def _world(name: str, mechanism: BodyGraph, engine: str) -> ET.Element:
    world = ET.Element("world", name=name)
    physics = _sub(world, "physics", name="1ms", type=engine)
    _sub(physics, "max_step_size", repr(STEP_S))
    _sub(physics, "real_time_factor", "1.0")
    if engine == "dart":
        _sub(_sub(_sub(physics, "dart"), "solver"), "solver_type", "pgs")
    else:
        ode = _sub(physics, "ode")
        solver = _sub(ode, "solver")
        _sub(solver, "type", "world")
        _sub(solver, "iters", "100")
        constraints = _sub(ode, "constraints")
        _sub(constraints, "cfm", "0")
        _sub(constraints, "erp", "0.2")
    _sub(world, "gravity", _numbers(mechanism.gravity))
    light = _sub(world, "light", name="sun", type="directional")
    _sub(light, "pose", "0 0 10 0 0 0")
    _sub(light, "direction", "-0.5 0.1 -0.9")
    return world


def gz_world_sdf(mechanism: BodyGraph) -> str:
    """``world.sdf``: the gz-sim world (DART, PGS solver) the launch file spawns the model into."""
    world = _world("pardyn", mechanism, "dart")
    for filename, name in (("gz-sim-physics-system", "gz::sim::systems::Physics"),
                           ("gz-sim-user-commands-system", "gz::sim::systems::UserCommands"),
                           ("gz-sim-scene-broadcaster-system", "gz::sim::systems::SceneBroadcaster")):
        _plugin(world, filename, name)
    return _document(world, comment=" gz-sim world for pardyn: DART with PGS (loops closed by DetachableJoint). ")


def classic_world_sdf(mechanism: BodyGraph) -> str:
    """``world_classic.sdf``: Gazebo Classic world, ODE (closes SDF loops natively), the model inline."""
    world = _world("pardyn", mechanism, "ode")
    world.append(model_element(mechanism))
    return _document(world, comment=_summary(mechanism) + "Gazebo Classic: ODE closes the loop joints. ",
                     version=CLASSIC_SDF_VERSION)
