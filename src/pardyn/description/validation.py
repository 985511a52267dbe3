"""Checks of a robot's files before anything else reads them: URDF structure and physical plausibility.

pinocchio's URDF parser (urdfdom) crashes on a parent/child cycle (signal 11,
nothing printed), turns ``<mass value="nan"/>`` into a massless link with a
message on stderr, and reports any other fault as ``does not contain a valid
URDF model``. :func:`check_urdf` reads the XML itself first and refuses, in one
line naming the file, the element and what to do:

* not XML, not a ``<robot>``, nested deeper than :data:`MAX_DEPTH`, no link;
* link or joint names empty or given twice, an unknown joint type (a joint may have a link's name, as pinocchio
  accepts: :mod:`pardyn.description.frames` addresses such frames);
* a joint whose parent or child link does not exist, a link that is the child
  of two joints, a joint from a link to itself, a cycle, more than one root;
* an ``origin`` / ``axis`` / ``limit`` / ``dynamics`` / ``mass`` / ``inertia``
  attribute that is not a finite number (``nan``, ``inf``, ``heavy``),
  an origin farther than :data:`MAX_LENGTH`, a zero axis;
* a revolute or prismatic joint without ``<limit effort velocity>``, limits
  out of order (``lower > upper``), negative effort, velocity, damping or
  friction;
* a negative mass or moment of inertia (the YAML ``dynamics:`` section is
  also checked positive semi-definite, :func:`check_body`).

:func:`check_body` and :func:`check_drive` apply the same physics to the
``dynamics:`` section of a robot YAML and to parameter files.
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pardyn.errors import DescriptionError, PardynError
from pardyn.textio import read_text, shown

__all__ = ["MAX_DEPTH", "MAX_LENGTH", "MAX_MASS", "UrdfTree", "build_urdf_model", "check_body", "check_drive",
           "check_robot_sections", "check_urdf"]

MAX_DEPTH = 64
"""Deepest XML nesting accepted (a URDF is 4 levels deep)."""
MAX_LENGTH = 1.0e6
"""Largest origin component accepted (m, rad): a robot is not 1000 km long."""
MAX_MASS = 1.0e9
"""Largest mass (kg) and moment of inertia (kg m^2) accepted: a million tonnes is no robot's part."""
_JOINT_TYPES = {"revolute", "continuous", "prismatic", "fixed", "floating", "planar", "spherical"}
_TOLERANCE = 1e-9


class UrdfTree:
    """What :func:`check_urdf` read: ``links``, ``joints`` (name -> (type, parent, child)), ``root``."""

    def __init__(self, links: list[str], joints: dict[str, tuple[str, str, str]], root: str,
                 unbounded: tuple[str, ...] = ()) -> None:
        self.links = links
        self.joints = joints
        self.root = root
        self.unbounded = unbounded
        """Revolute joints whose ``<limit>`` gives neither ``lower`` nor ``upper``: unbounded (urdfdom would read
        ``[0, 0]``), read as continuous joints are."""

    @property
    def movable_joints(self) -> list[str]:
        return [name for name, (kind, _, _) in self.joints.items() if kind != "fixed"]


_CACHE: dict[tuple[str, int, int], UrdfTree] = {}


def _fail(path: Path, where: str, message: str) -> DescriptionError:
    return DescriptionError(f"{path}: {where}: {message}")


def _numbers(path: Path, element: ET.Element, attribute: str, where: str, count: int,
             default: str | None = None) -> list[float]:
    text = element.get(attribute, default)
    if text is None:
        raise _fail(path, where, f"missing attribute {attribute!r}")
    items = text.split()
    if len(items) != count:
        raise _fail(path, where, f"{attribute}: expected {count} number{'s' * (count > 1)}, got {shown(text)}")
    values = []
    for item in items:
        try:
            value = float(item)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise _fail(path, where, f"{attribute}: expected a finite number, got {shown(item)}")
        values.append(value)
    return values


def _depth(element: ET.Element) -> int:
    deepest, stack = 1, [(element, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            break
        stack.extend((child, level + 1) for child in node)
    return deepest


def _check_inertial(path: Path, link: str, inertial: ET.Element) -> None:
    where = f"link {shown(link)} <inertial>"
    mass_element = inertial.find("mass")
    if mass_element is None:
        raise _fail(path, where, "missing <mass value=...>")
    (mass,) = _numbers(path, mass_element, "value", f"{where} <mass>", 1)
    for origin in inertial.findall("origin"):
        _check_origin(path, origin, where)
    element = inertial.find("inertia")
    moments = np.zeros((3, 3))
    if element is None:
        raise _fail(path, where, "missing <inertia ixx ixy ixz iyy iyz izz> (urdfdom refuses an inertial without it)")
    if element is not None:
        values = {k: _numbers(path, element, k, f"{where} <inertia>", 1, default="0")[0]
                  for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        moments = np.array([[values["ixx"], values["ixy"], values["ixz"]],
                            [values["ixy"], values["iyy"], values["iyz"]],
                            [values["ixz"], values["iyz"], values["izz"]]])
    check_body(mass, moments, f"{path}: {where}", definite=False)


def _check_origin(path: Path, origin: ET.Element, where: str) -> None:
    for attribute in ("xyz", "rpy"):
        values = _numbers(path, origin, attribute, f"{where} <origin>", 3, default="0 0 0")
        if max(abs(v) for v in values) > MAX_LENGTH:
            raise _fail(path, f"{where} <origin>", f"{attribute} {shown(origin.get(attribute))} is beyond "
                        f"{MAX_LENGTH:g} (m, rad): not a robot's dimension")


def _check_joint(path: Path, joint: ET.Element, name: str, kind: str) -> None:
    where = f"joint {shown(name)}"
    for origin in joint.findall("origin"):
        _check_origin(path, origin, where)
    axis = joint.find("axis")
    if axis is not None:
        values = _numbers(path, axis, "xyz", f"{where} <axis>", 3, default="1 0 0")
        if kind != "fixed" and math.hypot(*values) < 1e-12:
            raise _fail(path, f"{where} <axis>", f"xyz {shown(axis.get('xyz'))} is the zero vector; give the "
                        "joint's direction")
    limit = joint.find("limit")
    if kind in ("revolute", "prismatic") and (limit is None or "effort" not in limit.attrib
                                              or "velocity" not in limit.attrib):
        raise _fail(path, where, f"a {kind} joint needs <limit lower upper effort velocity> (urdfdom refuses it)")
    if limit is not None:
        values = {k: _numbers(path, limit, k, f"{where} <limit>", 1, default="0")[0]
                  for k in ("lower", "upper", "effort", "velocity")}
        if kind in ("revolute", "prismatic") and values["lower"] > values["upper"]:
            raise _fail(path, f"{where} <limit>", f"lower {values['lower']:g} > upper {values['upper']:g}")
        for key in ("effort", "velocity"):
            if values[key] < 0.0:
                raise _fail(path, f"{where} <limit>", f"{key} {values[key]:g} is negative")
    dynamics = joint.find("dynamics")
    if dynamics is not None:
        for key in ("damping", "friction"):
            (value,) = _numbers(path, dynamics, key, f"{where} <dynamics>", 1, default="0")
            if value < 0.0:
                raise _fail(path, f"{where} <dynamics>", f"{key} {value:g} is negative (friction >= 0)")


def _name(path: Path, element: ET.Element, seen) -> str:
    """The ``name`` of a ``<link>`` or ``<joint>``: present, and not among ``seen``."""
    name = element.get("name", "")
    if not name:
        raise DescriptionError(f"{path}: a <{element.tag}> without a name")
    if name in seen:
        raise DescriptionError(f"{path}: {element.tag} {shown(name)} is defined twice")
    return name


def check_urdf(path: str | Path) -> UrdfTree:
    """Read and check a URDF file (module docstring); the tree it describes, or :class:`DescriptionError`."""
    path = Path(path)
    try:
        stat = os.stat(path)
        key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    except OSError as cause:
        raise DescriptionError(f"{path}: cannot read the URDF: {cause.strerror or cause}") from cause
    if key in _CACHE:
        return _CACHE[key]
    text = read_text(path, what="URDF", error=DescriptionError)
    if not text.strip():
        raise DescriptionError(f"{path}: the URDF is empty")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as cause:
        raise DescriptionError(f"{path}: not XML: {shown(str(cause), 120)}") from None
    except RecursionError:
        raise DescriptionError(f"{path}: XML nested too deeply") from None
    if root.tag != "robot":
        raise DescriptionError(f"{path}: the root element is <{shown(root.tag, 40)}>, a URDF has <robot>")
    if _depth(root) > MAX_DEPTH:
        raise DescriptionError(f"{path}: XML nested deeper than {MAX_DEPTH} levels: not a URDF")
    links: list[str] = []
    for element in root.findall("link"):
        name = _name(path, element, links)
        links.append(name)
        for inertial in element.findall("inertial"):
            _check_inertial(path, name, inertial)
    if not links:
        raise DescriptionError(f"{path}: no <link>: not a robot")
    joints: dict[str, tuple[str, str, str]] = {}
    parent_of: dict[str, str] = {}
    unbounded: list[str] = []
    for element in root.findall("joint"):
        name = _name(path, element, joints)
        kind = element.get("type", "")
        if kind not in _JOINT_TYPES:
            raise _fail(path, f"joint {shown(name)}", f"unknown type {shown(kind)}; known: {sorted(_JOINT_TYPES)}")
        ends = []
        for tag in ("parent", "child"):
            end = element.find(tag)
            link = None if end is None else end.get("link")
            if not link:
                raise _fail(path, f"joint {shown(name)}", f"missing <{tag} link=...>")
            if link not in links:
                raise _fail(path, f"joint {shown(name)} <{tag}>", f"unknown link {shown(link)}")
            ends.append(link)
        parent, child = ends
        if parent == child:
            raise _fail(path, f"joint {shown(name)}", f"joins link {shown(parent)} to itself")
        if child in parent_of:
            raise _fail(path, f"joint {shown(name)}", f"link {shown(child)} is already the child of joint "
                        f"{shown(parent_of[child])}: a URDF is a tree (close loops in the robot YAML's closures)")
        parent_of[child] = name
        joints[name] = (kind, parent, child)
        _check_joint(path, element, name, kind)
        limit = element.find("limit")
        if kind == "revolute" and limit is not None and "lower" not in limit.attrib and "upper" not in limit.attrib:
            unbounded.append(name)
    roots = [link for link in links if link not in parent_of]
    for link in links:  # follow parents upwards: a cycle never reaches a root
        seen, current = [link], link
        while current in parent_of:
            current = joints[parent_of[current]][1]
            if current in seen:
                cycle = seen[seen.index(current):] + [current]
                raise DescriptionError(
                    f"{path}: the links {shown(' <- '.join(cycle), 160)} form a cycle (joint "
                    f"{shown(parent_of[seen[-1]])}): a URDF is a tree; close loops in the robot YAML's closures"
                )
            seen.append(current)
    if len(roots) != 1:
        raise DescriptionError(f"{path}: {len(roots)} root links {shown(roots)}: a URDF tree has exactly one")
    tree = UrdfTree(links, joints, roots[0], tuple(unbounded))
    _CACHE[key] = tree
    return tree


def build_urdf_model(path: str | Path):
    """pinocchio's model of a URDF, after :func:`check_urdf`; pinocchio's own refusal as a DescriptionError."""
    import pinocchio as pin  # noqa: PLC0415 - a leaf check module

    check_urdf(path)
    try:
        return pin.buildModelFromUrdf(str(path))
    except (RuntimeError, ValueError) as error:
        raise DescriptionError(f"{path}: pinocchio cannot read this URDF: {shown(str(error), 160)}") from error


def check_body(mass: float, inertia: np.ndarray, where: str, *, error: type[PardynError] = DescriptionError,
               definite: bool = True, triangle: bool = False) -> None:
    """A rigid body's mass (kg) and rotational inertia (3, 3) kg m^2 must be physical.

    Always: finite, ``mass >= 0``, moments ``Ixx, Iyy, Izz >= 0``. ``definite``:
    the inertia positive semi-definite (up to 1e-9 relative). ``triangle``: its
    principal moments satisfy ``A + B >= C`` (a body about its centre of mass;
    the planar robots' YAMLs give only ``zz`` meaningfully, and published URDFs
    (TIAGo's antenna links) carry rounding-level violations: those are completed
    where a simulator needs them, :func:`pardyn.description.tree.physical_inertia`).
    """
    if not math.isfinite(mass):
        raise error(f"{where}: mass {shown(mass)} is not a finite number")
    if mass < 0.0:
        raise error(f"{where}: mass {mass:.6g} kg is negative; a body's mass is > 0 (0: no body)")
    if mass > MAX_MASS:
        raise error(f"{where}: mass {mass:.6g} kg is beyond {MAX_MASS:g} kg: not a robot's part (units?)")
    inertia = np.asarray(inertia, dtype=float)
    if not np.isfinite(inertia).all() or np.abs(inertia).max(initial=0.0) > MAX_MASS:
        raise error(f"{where}: inertia {shown(inertia.tolist())} kg m^2: entries must be finite, at most {MAX_MASS:g}")
    diagonal = np.diag(inertia)
    if (diagonal < 0.0).any():
        raise error(f"{where}: inertia moments (xx, yy, zz) {[float(f'{m:.4g}') for m in diagonal]} kg m^2: "
                    "a moment of inertia is >= 0")
    if not (definite or triangle):
        return
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    scale = max(float(np.abs(moments).max(initial=0.0)), 1e-300)
    if moments[0] < -_TOLERANCE * scale:
        raise error(f"{where}: inertia {shown(inertia.tolist())} kg m^2 has a negative principal moment "
                    f"{moments[0]:.4g}: not positive semi-definite")
    if triangle and moments[0] + moments[1] < moments[2] - _TOLERANCE * scale:
        raise error(f"{where}: principal moments {[float(f'{m:.4g}') for m in moments]} kg m^2 violate "
                    "A + B >= C: no rigid body has them")


def check_drive(values: dict[str, float], where: str, *, error: type[PardynError] = DescriptionError,
                names: Sequence[str] = ("ia", "fv", "fs")) -> None:
    """Drive parameters ``ia`` (kg m^2), ``fv`` (N m s/rad), ``fs`` (N m) must be finite and >= 0."""
    for name in names:
        value = values.get(name, 0.0)
        if not math.isfinite(value) or abs(value) > MAX_MASS:
            raise error(f"{where}: {name} {shown(value)} is not a finite number of magnitude <= {MAX_MASS:g}")
        if value < 0.0:
            raise error(f"{where}: {name} = {value:g} is negative; rotor inertia and friction are >= 0")


def check_joint_names(urdf: str | Path, source: str | Path, keys: dict[str, Sequence[str]]) -> UrdfTree:
    """Every name listed under a YAML key (``{"actuated": [...]}``) must be a joint of the URDF.

    Checked right after the URDF, so that a typo is reported at the key where it
    is (``actuated: leg4_jont1``), not at the first section that uses the name.
    """
    import difflib  # noqa: PLC0415

    tree = check_urdf(urdf)
    for key, names in keys.items():
        for name in names:
            if name not in tree.joints:
                near = difflib.get_close_matches(name, list(tree.joints), n=1)
                hint = f"; did you mean {near[0]!r}?" if near else f"; URDF joints: {shown(list(tree.joints), 200)}"
                raise DescriptionError(f"{source}: {key}: {shown(name)} is not a joint of {Path(urdf).name}{hint}")
            kind = tree.joints[name][0]
            if kind in ("fixed", "floating", "planar"):  # not a one-dof joint: nothing to drive, sense or command
                raise DescriptionError(
                    f"{source}: {key}: {shown(name)} is a {kind} joint in {Path(urdf).name}, not a moving one-dof "
                    f"joint (revolute, continuous, prismatic): it cannot be listed in {key}; remove it")
    return tree


_MJCF_ARRAYS = ("body_pos", "body_quat", "body_ipos", "body_iquat", "body_mass", "body_inertia", "jnt_pos",
                "jnt_axis", "qpos0", "site_pos", "site_quat", "eq_data", "opt.gravity", "dof_armature",
                "dof_damping", "dof_frictionloss", "jnt_range")


def _mjcf_element(mj_model, field: str, index: int) -> str:
    import mujoco  # noqa: PLC0415 - only MJCF files need it

    kinds = {"body": ("body", mujoco.mjtObj.mjOBJ_BODY), "jnt": ("joint", mujoco.mjtObj.mjOBJ_JOINT),
             "qpos0": ("joint", None), "site": ("site", mujoco.mjtObj.mjOBJ_SITE),
             "eq": ("equality", mujoco.mjtObj.mjOBJ_EQUALITY), "dof": ("joint", mujoco.mjtObj.mjOBJ_DOF)}
    kind, obj = kinds.get(field.split("_")[0], (field, None))
    name = mujoco.mj_id2name(mj_model, obj, index) if obj is not None else None
    return f"<{kind}> {shown(name)}" if name else f"<{kind}> number {index}"


def check_compiled_mjcf(mj_model, source: str | Path):
    """A compiled MuJoCo model (``mujoco.MjModel``) must be finite and physical; returns it.

    MuJoCo compiles ``pos="nan 0 0"`` without a word; pinocchio's tree built from
    it then fails in an SVD. Named here: the array (``body_pos``: an element's
    ``pos``) and the element's index; masses, rotor inertia and friction >= 0.
    """
    for name in _MJCF_ARRAYS:
        holder, _, field = name.rpartition(".")
        values = np.asarray(getattr(getattr(mj_model, holder) if holder else mj_model, field), dtype=float)
        bad = np.argwhere(~np.isfinite(values) | (np.abs(values) > 1e12))
        if bad.size:
            index = tuple(int(i) for i in bad[0])
            raise DescriptionError(f"{source}: {_mjcf_element(mj_model, field, index[0])}: {field} has "
                                   f"{shown(values[index].item())}: MJCF numbers must be finite (and below 1e12)")
    for field, what in (("body_mass", "mass"), ("body_inertia", "inertia"), ("dof_armature", "armature"),
                        ("dof_damping", "damping"), ("dof_frictionloss", "frictionloss")):
        values = np.asarray(getattr(mj_model, field), dtype=float)
        bad = np.argwhere(values < 0.0)
        if bad.size:
            index = int(bad[0][0])
            raise DescriptionError(f"{source}: {_mjcf_element(mj_model, field, index)}: {what} "
                                   f"{values[tuple(bad[0])]:.6g} is negative: must be >= 0")
    return mj_model


def check_parameters(params, where: str, *, error: type[PardynError] = DescriptionError) -> None:
    """Standard parameters (a :class:`pardyn.dynamics.parameters.DynamicParameters`) that no robot can have.

    Every body's mass (eq. 2's ``m``, kg) finite and >= 0, every drive's ``ia``, ``fv``,
    ``fs`` finite and >= 0. Not the inertia's definiteness: identified base
    parameters regroup inertias (eq. 43) into values that need not be a body's,
    yet give the right torques. Masses only regroup as sums of masses.
    """
    for body in params.bodies:
        mass = float(body.standard[-1])
        if not math.isfinite(mass) or mass < 0.0:
            raise error(f"{where}: m_{body.name} = {shown(mass)} kg: a body's mass is finite and >= 0")
    for drive in params.drives:
        check_drive({"ia": drive.ia, "fv": drive.fv, "fs": drive.fs}, f"{where}: joint {drive.joint!r}", error=error)


MAX_SPRING_REFERENCE = 1.0e3
"""Largest spring reference believed (rad, m): beyond it the value is a typo or another unit."""
MAX_EXCITATION_AMPLITUDE = {"m": 10.0, "rad": 2.0 * math.pi}
"""Largest excitation amplitude believed per task unit: 10 m, one turn."""


def check_robot_sections(robot) -> None:
    """The robot YAML's sections against the model they act on (a :class:`pardyn.mechanism.Mechanism` being assembled):
    values that no machine can have are refused at load, naming the key and what to do.

    * ``springs:`` on a joint of the platform's virtual chain (``task:``, not actuated nor sensed: it models
      no hardware, a spring there has nothing to act on), or a reference beyond :data:`MAX_SPRING_REFERENCE`;
    * ``limits.cones`` naming a frame the model does not have;
    * ``excitation.amplitude`` beyond :data:`MAX_EXCITATION_AMPLITUDE` for the coordinate's unit.

    Raises:
        DescriptionError: naming the file, the key and the value.
    """
    description, source = robot.description, robot.source
    virtual = set(description.task_joints) - set(description.actuated) - set(description.sensed)
    if set(description.task_joints) == set(description.actuated):
        virtual = set()  # a serial arm: its task joints are its motors
    for joint, _, reference in description.springs:
        if joint in virtual:
            raise DescriptionError(f"{source}: springs: {joint!r} is a joint of the platform's virtual chain (task:), "
                                   "no hardware: a spring there acts on nothing; put it on a physical joint")
        if not abs(reference) <= MAX_SPRING_REFERENCE:
            raise DescriptionError(f"{source}: springs: {joint!r} reference {shown(reference)} (rad, m) is beyond "
                                   f"{MAX_SPRING_REFERENCE:g}: give where the spring is relaxed, in rad or m")
    for cone in description.limits.cones:
        for j, pair in enumerate(cone.frames):
            for frame in pair:
                if not robot.model.existFrame(frame):
                    known = [f.name for f in robot.model.frames if f.name != "universe"]
                    raise DescriptionError(f"{source}: limits.cones {cone.name!r} frames[{j}]: no frame {frame!r} "
                                           f"in {description.urdf.name} (its frames: {shown(known, 200)})")
    if description.excitation is not None:
        for name, unit, amplitude in zip(robot.task_names, robot.task_units, description.excitation.amplitude):
            if amplitude > MAX_EXCITATION_AMPLITUDE[unit]:
                raise DescriptionError(f"{source}: excitation.amplitude.{name}: {amplitude:.6g} {unit} is beyond "
                                       f"{MAX_EXCITATION_AMPLITUDE[unit]:.4g} {unit}: the largest deviation from the "
                                       "centre, in m or rad")
