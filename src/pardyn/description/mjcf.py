"""MJCF (MuJoCo's XML) as a pinocchio tree plus its loop closures.

:func:`read_mjcf` compiles the file with MuJoCo's own parser
(``mujoco.MjModel.from_xml_path``: defaults, ``<include>``, ``fromto``, angle
units and inertia from geoms are all MuJoCo's business) and rebuilds the
equivalent ``pinocchio.Model`` by hand from the compiled ``MjModel``:

* every body at its pose relative to its parent (``body_pos``, ``body_quat``),
  and a ``BODY`` frame named after it (the world body too: ``world``);
* each ``hinge``/``slide`` joint as a one-dof joint (``RX``/``RY``/``RZ``,
  ``PX``/``PY``/``PZ`` when its axis is a unit axis, ``RevoluteUnaligned``/
  ``PrismaticUnaligned`` otherwise) at ``jnt_pos`` on ``jnt_axis`` in the body
  frame, with a ``JOINT`` frame; a body with several joints becomes a chain
  (the first ones massless), applied in MuJoCo's order (``mj_kinematics``)::

      X_body = X_parent · B · Π_k M_k,   B = (body_quat, body_pos)
      M_k = T(p_k) R(a_k, q_k - ref_k) T(-p_k)    hinge
      M_k = T(a_k (q_k - ref_k))                  slide

  The pinocchio joint ``k`` sits at ``T(p_k) · R(a_k, -ref_k)`` (or
  ``T(-a_k ref_k)``) after its predecessor's ``T(-p_{k-1})``, so that its
  coordinate *is* MuJoCo's ``qpos`` (pinocchio ``q`` = MuJoCo ``qpos``, same
  order, also when a joint has a ``ref``), and the body hangs at ``T(-p_n)``
  from the last joint;
* a body without joints is merged into its parent's joint (its inertia
  appended); such bodies under the world stay on the universe as frames (their
  mass moves nothing and is kept only in their frame's ``inertia``);
* each body's compiled inertia (``body_mass``, ``body_ipos``, ``body_iquat``,
  ``body_inertia``) is appended to its joint through its ``BODY`` frame
  (``Frame.inertia``, pinocchio's convention for merged links);
* every named site as an ``OP_FRAME`` named after it (a task frame can be a site);
* ``jnt_range`` (when limited), ``dof_damping``, ``dof_armature`` and
  ``dof_frictionloss`` go into ``lowerPositionLimit``/``upperPositionLimit``,
  ``damping``, ``armature`` and the dry-friction limits ``∓frictionloss``
  (``model.friction``), ``opt.gravity`` into ``model.gravity`` (zero when the
  file disables gravity), ``qpos0`` and every keyframe into
  ``model.referenceConfigurations``.

Loop closures: each active ``<equality>`` ``connect`` (3D point) or ``weld``
(6D; 3D when its ``torquescale`` is 0, as MuJoCo documents) becomes two
``OP_FRAME`` frames ``<name>_a`` on ``body1`` and ``<name>_b`` on ``body2``
(the world when omitted), ``<name>`` being the equality's name or
``equality<i>`` (its index), placed so that the constraint holds exactly
when the two frames coincide (position for 3D, position and orientation for
6D). With MuJoCo's ``eq_data`` layout (checked numerically against
``efc_pos`` in the test)::

    connect, bodies: r = (x1 + R1 d[0:3]) - (x2 + R2 d[3:6])
        frame_a = body1 · T(d[0:3]),           frame_b = body2 · T(d[3:6])
    weld, bodies:    r = (x1 + R1 d[3:6]) - (x2 + R2 d[0:3]),
                     r_rot = torquescale · Im(q2⁻¹ · q1 · d[6:10])
        frame_a = body1 · (d[6:10], d[3:6]),  frame_b = body2 · T(d[0:3])
    connect/weld, sites (site1, site2): r = site1 - site2 (and Im(q_s2⁻¹ q_s1))
        frame_a = site1,                       frame_b = site2

so ``r = p_a - p_b`` in world coordinates. The compiler fills the body2 side
(connect) or the relative pose (weld without ``relpose``) from ``qpos0``,
where body-based constraints therefore hold. Joint, tendon and flex
equalities are refused when active (pardyn's closures are frame pairs) and
skipped with a warning when inactive; inactive connect/weld are skipped with
a note. A ball joint is read as three hinges about its body's x, y, z axes (:func:`_expand_ball_joints`:
pardyn's coordinates are one angle per joint). A free joint (a floating base) is fixed where
the YAML's ``base:`` says (the file's pose or a keyframe's), else refused with that remedy. Texture files that are
absent and materials that are not defined are skipped with one note (they only colour the bodies).

Why not pinocchio's own ``buildModelAndConstraintsFromMJCF`` (pin 4.1.0,
tried with MuJoCo 4.0.0 on four-bar files): its parser keeps only the *first*
body tree under ``<worldbody>`` and silently drops every later one. A planar
four-bar with the crank first and a jointless ``ground`` body (carrying the
rocker) second loads as ``universe, crank_joint, coupler_joint``: ground,
rocker and ``rocker_joint`` are gone, and the ``connect`` to the rocker fails
with ``ValueError: Model does not have any body named rocker``; a ``connect``
to the static ``ground`` itself fails the same way (``... named ground``).
With the static ground placed first, only ``ground``/``rocker`` load and the
crank and coupler after it are dropped (``... named coupler``). Two moving
top-level bodies: only the first is kept, also with ``buildModelFromMJCF``.
MuJoCo itself compiles all of these files, so this module reads MuJoCo's
compiled model instead.

Warnings (unnamed joints or bodies, skipped actuators or equalities, what
pinocchio cannot hold) are raised with
:func:`warnings.warn` and kept in :attr:`MjcfRobot.notes`.

Needs ``mujoco`` (the ``sim`` extra); ``pardyn.description`` does not import
this module, so the URDF path works without it.
"""

from __future__ import annotations

import math
import re
import warnings
import xml.etree.ElementTree as ElementTree
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import mujoco
import numpy as np
import pinocchio as pin

from pardyn.description.dynamics import BodyValues
from pardyn.description.inertials import given_bodies, set_mjcf_inertials
from pardyn.description.starting import closing_frame_pairs
from pardyn.description.validation import check_compiled_mjcf
from pardyn.errors import DescriptionError

__all__ = ["MjcfClosure", "MjcfRobot", "read_mjcf"]

_UNIT_AXIS_JOINTS = {
    int(mujoco.mjtJoint.mjJNT_HINGE): (pin.JointModelRX, pin.JointModelRY, pin.JointModelRZ),
    int(mujoco.mjtJoint.mjJNT_SLIDE): (pin.JointModelPX, pin.JointModelPY, pin.JointModelPZ),
}
_UNALIGNED_JOINTS = {
    int(mujoco.mjtJoint.mjJNT_HINGE): pin.JointModelRevoluteUnaligned,
    int(mujoco.mjtJoint.mjJNT_SLIDE): pin.JointModelPrismaticUnaligned,
}
_JOINT_TYPE_NAMES = {
    int(mujoco.mjtJoint.mjJNT_FREE): "free",
    int(mujoco.mjtJoint.mjJNT_BALL): "ball",
    int(mujoco.mjtJoint.mjJNT_SLIDE): "slide",
    int(mujoco.mjtJoint.mjJNT_HINGE): "hinge",
}
_JOINT_TRANSMISSIONS = (mujoco.mjtTrn.mjTRN_JOINT, mujoco.mjtTrn.mjTRN_JOINTINPARENT)


class MjcfClosure(NamedTuple):
    """One loop closure: ``frame_a`` and ``frame_b`` coincide (``type`` ``'3D'``: position; ``'6D'``: pose)."""

    name: str
    frame_a: str
    frame_b: str
    type: str
    coefficients: tuple[float, ...] = ()
    """``coupling`` (a ``joint`` equality): ``frame_a``/``frame_b`` are the joints ``a``/``b`` of
    ``q_b = c0 + c1 q_a`` in pinocchio's ``q`` (= ``qpos``), and this is ``(c0, c1)``."""


@dataclass(frozen=True)
class MjcfRobot:
    """An MJCF file as a pinocchio tree plus its closures.

    Attributes:
        model: the tree; ``q`` is MuJoCo's ``qpos`` (same order), joint names are
            the MJCF joint names.
        closures: one :class:`MjcfClosure` per active ``connect``/``weld``.
        actuated: joints driven by an ``<actuator>`` with a joint transmission,
            in actuator order (each joint once).
        gravity: ``opt.gravity`` in m/s², world frame, shape ``(3,)`` (zero when disabled).
        source: the MJCF file.
        qpos0: MuJoCo's reference configuration, shape ``(nq,)``, where the
            body-based constraints hold (also ``model.referenceConfigurations['qpos0']``).
        notes: what was renamed, skipped or dropped, one sentence each.
    """

    model: pin.Model
    closures: tuple[MjcfClosure, ...]
    actuated: tuple[str, ...]
    gravity: np.ndarray
    source: Path
    qpos0: np.ndarray
    notes: tuple[str, ...] = ()
    springs: tuple[tuple[str, float, float], ...] = ()
    """``(joint, stiffness, reference)`` of every joint with ``stiffness`` (N m/rad or N/m; ``springref``, rad or
    m, in ``qpos`` units): MuJoCo's ``qfrc_spring = -stiffness (qpos - qpos_spring)``."""
    keyframes: tuple[str, ...] = ()
    """Names of the file's keyframes in file order (unnamed: ``key<i>``), each in ``model.referenceConfigurations``."""
    tendon_drives: tuple[tuple[str, str, float, float], ...] = ()
    """Fixed-tendon actuators ``(actuator, joint a, ratio, constant)``: tendon length ``ratio q_a + constant``,
    joint torque ``tau_a = ratio f``."""


def read_mjcf(path: str | Path, inertials: Sequence[BodyValues] = (), *, yaml: Path | None = None,
              base: str | None = None) -> MjcfRobot:
    """Read an MJCF file with MuJoCo's parser and build its pinocchio tree and closures.

    ``inertials``: the ``inertials:`` section of a pardyn YAML around the file (``yaml``): these bodies' explicit
    inertials, set in MuJoCo's spec before it compiles (:mod:`pardyn.description.inertials`). ``base``: the YAML's
    ``base:``, where a free joint (a floating base) is fixed: ``"qpos0"`` (the file's pose) or a keyframe's name
    (:func:`_fix_free_joints`).

    Raises :class:`DescriptionError` naming the file and the element at fault:
    missing file, not MJCF, MuJoCo's compile error, a ball joint driven or coupled, a free joint without ``base``, active
    joint/tendon/flex equalities, an ``inertials`` body the file does not have.
    """
    source = Path(path)
    mj_model = _compile(source, tuple(inertials), yaml, base)
    return _Builder(mj_model, source).build()


_MISSING_INCLUDE = re.compile(r"Error opening file '(?P<file>[^']*)'\s*Element 'include', line (?P<line>\d+)")


def mjcf_spec(source: Path) -> mujoco.MjSpec:
    """MuJoCo's spec of the MJCF file ``source`` (parsed, ``<include>`` files read, not compiled).

    Raises:
        DescriptionError: the file is absent, not XML, not ``<mujoco>``, or MuJoCo cannot parse it; an
            ``<include>`` whose file is absent is named with its line and the path it was looked for at.
    """
    if not source.is_file():
        raise DescriptionError(f"{source}: no such MJCF file")
    try:  # the root tag only; the file closed here (an abandoned iterparse on a path leaves it open: ResourceWarning)
        with source.open("rb") as file:
            root = next(ElementTree.iterparse(file, events=("start",)))[1].tag
    except ElementTree.ParseError as error:
        raise DescriptionError(f"{source}: not an XML file: {error}") from error
    if root != "mujoco":
        raise DescriptionError(f"{source}: root element <{root}> is not <mujoco>: not an MJCF file")
    try:
        return mujoco.MjSpec.from_file(str(source))
    except ValueError as error:
        message = " ".join(str(error).split())
        missing = _MISSING_INCLUDE.search(message)
        if missing:  # MuJoCo reads include files relative to the main file's folder
            wanted = source.parent / missing["file"]
            raise DescriptionError(
                f"{source}: line {missing['line']}: <include file=\"{missing['file']}\">: no such file {wanted}: "
                "put the included file there or correct the path (relative to this file's folder)") from error
        raise DescriptionError(f"{source}: MuJoCo cannot compile this MJCF: {message}") from error


def _compile(source: Path, inertials: tuple[BodyValues, ...] = (), yaml: Path | None = None,
             base: str | None = None) -> mujoco.MjModel:
    try:
        return _checked_inertials(check_compiled_mjcf(_spec(source, inertials, yaml, base).compile(), source),
                                  inertials, source, yaml)
    except ValueError as error:
        message = " ".join(str(error).split())
        if "Error opening file" in message:  # a vendor's meshes left out: needed only where they define a mass
            return _checked_inertials(_compile_without_meshes(source, message, inertials, yaml, base), inertials,
                                      source, yaml)
        raise DescriptionError(f"{source}: MuJoCo cannot compile this MJCF: {message}") from error


def _spec(source: Path, inertials: tuple[BodyValues, ...], yaml: Path | None, base: str | None = None) -> mujoco.MjSpec:
    """The file's spec with the YAML's inertials, its absent looks skipped and its free joints fixed."""
    spec = mjcf_spec(source)
    set_mjcf_inertials(spec, inertials, source, yaml)
    _skip_absent_looks(spec, source)
    _fix_free_joints(spec, source, base, yaml)
    _expand_ball_joints(spec, source)
    return spec


def _layout(spec: mujoco.MjSpec) -> mujoco.MjModel:
    """A compiled copy of ``spec`` for its ``qpos`` layout and keyframes only: mesh geoms and meshes removed and
    every body given a unit explicit inertia, so that absent mesh files (a vendor's assets left out) do not stop it."""
    copy = spec.copy()
    for geom in [g for g in copy.geoms if g.type == mujoco.mjtGeom.mjGEOM_MESH]:
        copy.delete(geom)
    for mesh in list(copy.meshes):
        copy.delete(mesh)
    for body in copy.bodies:
        if body.name != "world":
            body.explicitinertial, body.mass, body.ipos = True, 1.0, [0.0, 0.0, 0.0]
            body.fullinertia, body.inertia = [np.nan] * 6, [1.0, 1.0, 1.0]  # NaN: fullinertia unset
    try:
        return copy.compile()
    except ValueError as error:
        raise DescriptionError(f"{spec.modelfiledir or ''}: MuJoCo cannot compile this MJCF: "
                               f"{' '.join(str(error).split())}") from error


BALL_AXES = ("x", "y", "z")
"""A ball joint ``NAME`` is read as three hinges ``NAME_x``, ``NAME_y``, ``NAME_z`` (:func:`_expand_ball_joints`)."""


def ball_angles(quaternion: Sequence[float]) -> np.ndarray:
    """The hinge angles ``(a, b, c)`` of a ball joint's orientation ``R = Rx(a) Ry(b) Rz(c)`` (MuJoCo quaternion
    ``(w, x, y, z)``, normalised here), ``b`` in [-pi/2, pi/2]."""
    quat = np.asarray(quaternion, dtype=float)
    rotation = _rotation(quat / np.linalg.norm(quat))
    return np.array([math.atan2(-rotation[1, 2], rotation[2, 2]), math.asin(float(np.clip(rotation[0, 2], -1, 1))),
                     math.atan2(-rotation[0, 1], rotation[0, 0])])


def _expand_ball_joints(spec: mujoco.MjSpec, source: Path) -> None:
    """Each ball joint replaced by three hinges about its body's x, y and z axes at its position, in that order
    (MuJoCo composes a body's joints in order: ``R = Rx(a) Ry(b) Rz(c)``, the same rotation group), so that every
    coordinate stays one angle (pardyn's ``q`` and ``v`` share indices). The bodies between the hinges are massless:
    the dynamics are the ball joint's, in the chart of these three angles, singular where ``b = +-pi/2`` (a ball
    at rest at the reference orientation has ``b = 0``). Keyframe quaternions become these angles
    (:func:`ball_angles`). The ball's damping, armature, frictionloss and stiffness go to each hinge: MuJoCo applies
    them to the ball's angular velocity and rotation, equal at the reference orientation only; a ball's cone limit
    (``range``) is not kept. An actuator, joint equality or sensor on a ball joint is refused (sensors: dropped)."""
    balls = [joint for joint in spec.joints if joint.type == mujoco.mjtJoint.mjJNT_BALL]
    if not balls:
        return
    model = _layout(spec)
    compiled = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_BALL]  # spec's order
    taken = {joint.name for joint in spec.joints}
    names, limited, dropped, addresses = [], [], [], []
    for joint, index in zip(balls, compiled):
        body = joint.parent
        name = joint.name or f"{body.name or 'body'}_ball"
        if len(body.joints) > 1:
            raise DescriptionError(f"{source}: ball joint {name!r} shares body {body.name!r} with other joints; "
                                   "pardyn reads a ball joint alone in its body: give the others a body of their own")
        for actuator in spec.actuators:
            if joint.name and actuator.target == joint.name:
                raise DescriptionError(f"{source}: actuator {actuator.name!r} drives ball joint {name!r}; pardyn's "
                                       "actuated joints are hinges and slides: drive three hinges instead")
        for equality in spec.equalities:
            if joint.name and equality.type == mujoco.mjtEq.mjEQ_JOINT and joint.name in (equality.name1,
                                                                                         equality.name2):
                raise DescriptionError(f"{source}: joint equality {equality.name!r} couples ball joint {name!r}: "
                                       "pardyn couples hinges and slides only")
        for sensor in list(spec.sensors):
            if joint.name and sensor.objtype == mujoco.mjtObj.mjOBJ_JOINT and sensor.objname == joint.name:
                dropped.append(sensor.name or "(unnamed)")
                spec.delete(sensor)
        hinges = [f"{name}_{axis}" for axis in BALL_AXES]
        clash = [hinge for hinge in hinges if hinge in taken]
        if clash:
            raise DescriptionError(f"{source}: ball joint {name!r}: the file already has joints {clash}, the names "
                                   "pardyn gives its three hinges: rename them in a copy of the file")
        if joint.limited == mujoco.mjtLimited.mjLIMITED_TRUE or (
                joint.limited == mujoco.mjtLimited.mjLIMITED_AUTO and joint.range[1] > joint.range[0]):
            limited.append(name)
        for axis, hinge in zip(np.eye(3), hinges):
            added = body.add_joint(name=hinge, type=mujoco.mjtJoint.mjJNT_HINGE, axis=axis, pos=joint.pos)
            added.damping, added.armature, added.frictionloss = joint.damping, joint.armature, joint.frictionloss
            added.stiffness, added.limited, added.ref, added.springref = (joint.stiffness,
                                                                          mujoco.mjtLimited.mjLIMITED_FALSE, 0.0, 0.0)
        taken.update(hinges)
        names.append(name)
        addresses.append(int(model.jnt_qposadr[index]))
        spec.delete(joint)
    for key in spec.keys:
        if len(key.qpos):
            qpos = list(key.qpos)
            for address in sorted(addresses, reverse=True):
                qpos[address:address + 4] = ball_angles(qpos[address:address + 4]).tolist()
            key.qpos = qpos
    notes = [f"ball joints {names} read as three hinges each about the body's x, y, z (NAME_x, NAME_y, NAME_z: "
             "R = Rx Ry Rz, singular at NAME_y = +-90 deg); their damping/armature/frictionloss/stiffness on each "
             "hinge (MuJoCo's at the reference orientation)"]
    if limited:
        notes.append(f"the cone limits (range) of {limited} are not kept")
    if dropped:
        notes.append(f"sensors {dropped} of the ball joints dropped")
    warnings.warn(f"{source}: {'; '.join(notes)}", stacklevel=5)


def _skip_absent_looks(spec: mujoco.MjSpec, source: Path) -> None:
    """Textures whose files are absent (and the material references to them), and material references to
    materials the file does not define, removed with one note: they only colour the bodies."""
    folder = Path(spec.modelfiledir or source.parent)
    texture_folder = folder / (spec.compiler.texturedir or "")
    missing = []
    for texture in list(spec.textures):
        files = [texture.file] if texture.file else [f for f in texture.cubefiles if f]
        if any(not (Path(f) if Path(f).is_absolute() else texture_folder / f).is_file() for f in files):
            missing.append(texture.name or files[0])
            spec.delete(texture)
    if missing:
        for material in spec.materials:
            material.textures = ["" if name in missing else name for name in material.textures]
    defined = {material.name for material in spec.materials}
    unknown = set()
    for element in (*spec.geoms, *spec.sites):
        if element.material and element.material not in defined:
            unknown.add(element.material)
            element.material = ""
    if missing or unknown:
        parts = ([f"texture files missing: {sorted(missing)} skipped"] if missing else []) + (
            [f"undefined materials {sorted(unknown)} dropped from their geoms"] if unknown else [])
        warnings.warn(f"{source}: {'; '.join(parts)} (looks only: the dynamics do not change)", stacklevel=5)


def _fix_free_joints(spec: mujoco.MjSpec, source: Path, base: str | None, yaml: Path | None) -> None:
    """Each free joint (a floating base) removed and its body fixed where the YAML's ``base:`` says: ``qpos0``
    (the body's pose in the file, MuJoCo's reference for a free joint) or the named keyframe's pose (its
    position and quaternion in ``qpos``); every keyframe's ``qpos`` loses those 7 entries. A legged robot's
    leg loops are then studied with its base held. Without ``base`` a free joint is refused with the remedy."""
    free = [joint for joint in spec.joints if joint.type == mujoco.mjtJoint.mjJNT_FREE]
    if not free:
        return
    names = [joint.name or "(unnamed)" for joint in free]
    if base is None:
        raise DescriptionError(
            f"{source}: joint {names[0]!r} is a free joint (a floating base); pardyn studies mechanisms on a fixed "
            "base: fix it in a pardyn YAML around this file with 'base: fixed' (at the file's pose) or "
            "'base: {keyframe: NAME}' (`pardyn robots --init FILE` writes one)")
    model = _layout(spec)  # the qpos layout before the free joints go (absent meshes do not matter here)
    keys = {key.name: key for key in spec.keys}
    if base != "qpos0" and base not in keys:
        raise DescriptionError(f"{yaml or source}: base: no keyframe {base!r} in {source.name}; its keyframes: "
                               f"{sorted(keys)}")
    drop = []
    compiled = [j for j in range(model.njnt) if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE]  # spec's order
    for joint, index in zip(free, compiled):
        address = int(model.jnt_qposadr[index])
        key = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, base) if base != "qpos0" else -1
        qpos = model.qpos0 if key < 0 else model.key_qpos[key]
        pose = np.array(qpos[address:address + 7], dtype=float)
        body = joint.parent
        if body.parent is not None and body.parent.name != "world":
            raise DescriptionError(f"{source}: free joint {joint.name!r} is not on a body of the world")
        body.pos, body.quat = pose[:3], pose[3:] / np.linalg.norm(pose[3:])
        drop.extend(range(address, address + 7))
        spec.delete(joint)
    for key in spec.keys:
        if len(key.qpos):
            key.qpos = [value for i, value in enumerate(list(key.qpos)) if i not in drop]
    where = "at the file's pose" if base == "qpos0" else f"at keyframe {base!r}"
    warnings.warn(f"{source}: free joint(s) {names} fixed {where} (the YAML's base:)", stacklevel=5)


def _checked_inertials(model: mujoco.MjModel, inertials: tuple[BodyValues, ...], source: Path,
                       yaml: Path | None) -> mujoco.MjModel:
    """The compiled masses are the given ones (a file with ``<compiler inertiafromgeom="true">`` ignores every
    explicit inertial)."""
    for body, entry in given_bodies(inertials).items():
        compiled = float(model.body_mass[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body)])
        if compiled != float(entry.mass):
            raise DescriptionError(f"{yaml or source}: inertials: MuJoCo compiled body {body!r} of {source} with {compiled} kg, "
                                   f"not the {entry.mass} kg given (its <compiler inertiafromgeom=\"true\"> takes "
                                   "masses from geoms): set inertiafromgeom to auto in a copy of the file")
    return model


def _compile_without_meshes(source: Path, message: str, inertials: tuple[BodyValues, ...] = (),
                            yaml: Path | None = None, base: str | None = None) -> mujoco.MjModel:
    """The model with its mesh geoms and mesh assets removed, when every body that has a mesh geom either carries
    an explicit ``<inertial>`` or is fixed to the world (no joint between it and the world: its mass moves nothing;
    the 2F-85's ``base_mount``). The meshes are then only visual and collision shapes: the dynamics do not change.

    ``inertials`` (a pardyn YAML's section) count as explicit inertials.

    Raises:
        DescriptionError: a mesh geom defines the mass of a moving body (no ``<inertial>``), naming the body, the
            mesh and the two remedies.
    """
    spec = _spec(source, inertials, yaml, base)
    meshes = [geom for geom in spec.geoms if geom.type == mujoco.mjtGeom.mjGEOM_MESH]
    static = set()
    for geom in meshes:
        body = geom.parent
        if body.explicitinertial:
            continue
        if _fixed_to_world(body):
            static.add(body.name)
            continue
        raise DescriptionError(
            f"{source}: MuJoCo cannot compile this MJCF ({message}) and body {body.name!r} takes its mass "
            f"from mesh geom {geom.name or geom.meshname!r}: provide the mesh files (meshdir), give the body "
            "an <inertial>, or give its mass, com and inertia in a pardyn YAML around this file (inertials:)"
        )
    for geom in meshes:
        spec.delete(geom)
    for mesh in list(spec.meshes):
        spec.delete(mesh)
    try:
        model = spec.compile()
    except ValueError as error:
        raise DescriptionError(f"{source}: MuJoCo cannot compile this MJCF: {' '.join(str(error).split())}") from error
    fixed = f"; the mass of {sorted(static)} (fixed to the world: it moves nothing) is left out" if static else ""
    warnings.warn(f"{source}: mesh files missing ({message}); {len(meshes)} mesh geoms skipped (visual and "
                  "collision only: every moving body carrying one has an explicit <inertial> or an inertials: "
                  f"entry{fixed})", stacklevel=4)
    return model


def _fixed_to_world(body) -> bool:
    """Whether no joint (nor mocap) moves an ``MjsBody`` relative to the world: it and its ancestors have none."""
    while body is not None and body.name != "world":
        if body.joints or body.mocap:
            return False
        body = body.parent
    return True


def _rotation(quaternion: np.ndarray) -> np.ndarray:
    """Rotation matrix of a MuJoCo quaternion ``(w, x, y, z)``, shape (3, 3)."""
    matrix = np.empty(9)
    mujoco.mju_quat2Mat(matrix, np.asarray(quaternion, dtype=float))
    return matrix.reshape(3, 3)


def _pose(quaternion: np.ndarray, position: np.ndarray) -> pin.SE3:
    return pin.SE3(_rotation(quaternion), np.array(position, dtype=float))


def _translation(position: np.ndarray) -> pin.SE3:
    return pin.SE3(np.eye(3), np.array(position, dtype=float))


class _Builder:
    """One pass over a compiled MjModel (bodies are in depth-first order, parents first)."""

    def __init__(self, mj_model: mujoco.MjModel, source: Path) -> None:
        self.mj = mj_model
        self.source = source
        self.model = pin.Model()
        self.model.name = mj_model.names[: mj_model.names.index(b"\0")].decode() or source.stem
        self.notes: list[str] = []
        self.body_names = self._names(mujoco.mjtObj.mjOBJ_BODY, mj_model.nbody, "body")
        self.joint_names = self._names(mujoco.mjtObj.mjOBJ_JOINT, mj_model.njnt, "joint")
        # body id -> (pinocchio joint id, frame id, placement of the body frame in that joint's frame)
        self.body_frames: dict[int, tuple[int, int, pin.SE3]] = {}
        self.tendon_drives: list[tuple[str, str, float, float]] = []

    def note(self, message: str) -> None:
        self.notes.append(message)
        warnings.warn(f"{self.source}: {message}", stacklevel=5)  # the caller of read_mjcf

    def _names(self, kind: mujoco.mjtObj, count: int, prefix: str) -> list[str]:
        """MJCF names; an unnamed object gets ``<prefix><id>`` (MuJoCo's id, made unique) and a note."""
        names = [mujoco.mj_id2name(self.mj, kind, i) for i in range(count)]
        taken = set(names)
        for index, name in enumerate(names):
            if name:
                continue
            name = f"{prefix}{index}"
            while name in taken:
                name += "_"
            taken.add(name)
            names[index] = name
            if not (kind == mujoco.mjtObj.mjOBJ_BODY and index == 0):
                self.note(f"{prefix} {index} has no name: called {name!r}")
        return names

    def build(self) -> MjcfRobot:
        self._check_joints()
        self._add_bodies()
        self._add_sites()
        self._set_joint_fields()
        closures = self._add_closures()
        actuated = self._actuated(closures)
        gravity = self._gravity()
        self._note_unsupported()
        qpos0 = np.array(self.mj.qpos0, dtype=float)
        self.model.referenceConfigurations["qpos0"] = qpos0
        keyframes = []
        for key in range(self.mj.nkey):
            name = mujoco.mj_id2name(self.mj, mujoco.mjtObj.mjOBJ_KEY, key) or f"key{key}"
            self.model.referenceConfigurations[name] = np.array(self.mj.key_qpos[key], dtype=float)
            keyframes.append(name)
        return MjcfRobot(self.model, tuple(closures), actuated, gravity, self.source, qpos0, tuple(self.notes),
                         self._springs(), tuple(keyframes), tuple(self.tendon_drives))

    def _springs(self) -> tuple[tuple[str, float, float], ...]:
        mj = self.mj
        return tuple((self.joint_names[j], float(mj.jnt_stiffness[j]), float(mj.qpos_spring[mj.jnt_qposadr[j]]))
                     for j in range(mj.njnt) if mj.jnt_stiffness[j] != 0.0)

    def _check_joints(self) -> None:
        for joint in range(self.mj.njnt):
            kind = int(self.mj.jnt_type[joint])
            if kind == mujoco.mjtJoint.mjJNT_BALL:
                body = self.body_names[self.mj.jnt_bodyid[joint]]
                raise DescriptionError(
                    f"{self.source}: joint {self.joint_names[joint]!r} of body {body!r} is a "
                    f"{_JOINT_TYPE_NAMES[kind]} joint; pardyn supports one-degree-of-freedom joints only "
                    "(hinge, slide): write a spherical joint as three hinges with intersecting axes"
                )

    # -- the tree -----------------------------------------------------------------------------

    def _add_bodies(self) -> None:
        model, mj = self.model, self.mj
        world = model.addBodyFrame(self.body_names[0], 0, pin.SE3.Identity(), 0)
        self.body_frames[0] = (0, world, pin.SE3.Identity())
        for body in range(1, mj.nbody):
            parent_joint, parent_frame, parent_placement = self.body_frames[mj.body_parentid[body]]
            placement = parent_placement * _pose(mj.body_quat[body], mj.body_pos[body])
            joint_id, frame = parent_joint, parent_frame
            first = mj.body_jntadr[body]
            for joint in range(first, first + mj.body_jntnum[body]):
                anchor = np.array(mj.jnt_pos[joint], dtype=float)
                placement = placement * _translation(anchor) * self._reference_offset(joint)
                joint_id = self._add_joint(joint, joint_id, placement)
                frame = model.addJointFrame(joint_id, frame)
                placement = _translation(-anchor)
            mass, inertia_diagonal = float(mj.body_mass[body]), np.array(mj.body_inertia[body], dtype=float)
            rotation = _rotation(mj.body_iquat[body])
            inertia = pin.Inertia(mass, np.array(mj.body_ipos[body], dtype=float),
                                  rotation @ np.diag(inertia_diagonal) @ rotation.T)
            frame = model.addFrame(
                pin.Frame(self.body_names[body], joint_id, frame, placement, pin.FrameType.BODY, inertia),
                joint_id != 0,
            )
            self.body_frames[body] = (joint_id, frame, placement)

    def _reference_offset(self, joint: int) -> pin.SE3:
        """``R(a, -ref)`` or ``T(-a ref)``: makes the pinocchio coordinate equal MuJoCo's qpos."""
        axis = np.array(self.mj.jnt_axis[joint], dtype=float)
        reference = float(self.mj.qpos0[self.mj.jnt_qposadr[joint]])
        if int(self.mj.jnt_type[joint]) == mujoco.mjtJoint.mjJNT_HINGE:
            return pin.SE3(pin.AngleAxis(-reference, axis).matrix(), np.zeros(3))
        return _translation(-reference * axis)

    def _add_joint(self, joint: int, parent: int, placement: pin.SE3) -> int:
        kind = int(self.mj.jnt_type[joint])
        axis = np.array(self.mj.jnt_axis[joint], dtype=float)
        unit = [i for i in range(3) if np.array_equal(axis, np.eye(3)[i])]
        joint_model = _UNIT_AXIS_JOINTS[kind][unit[0]]() if unit else _UNALIGNED_JOINTS[kind](axis)
        name = self.joint_names[joint]
        joint_id = self.model.addJoint(parent, joint_model, placement, name)
        if self.model.idx_qs[joint_id] != self.mj.jnt_qposadr[joint]:
            raise DescriptionError(
                f"{self.source}: joint {name!r}: MuJoCo's body order is not depth-first "
                f"(qpos address {self.mj.jnt_qposadr[joint]}, pinocchio index {self.model.idx_qs[joint_id]})"
            )
        return joint_id

    def _add_sites(self) -> None:
        for site in range(self.mj.nsite):
            name = mujoco.mj_id2name(self.mj, mujoco.mjtObj.mjOBJ_SITE, site)
            if not name:
                continue  # unnamed sites are not addressable; site-based equalities use their pose directly
            self._add_frame(name, self.mj.site_bodyid[site],
                            _pose(self.mj.site_quat[site], self.mj.site_pos[site]), f"site {name!r}")

    def _add_frame(self, name: str, body: int, in_body: pin.SE3, what: str) -> str:
        if self.model.existFrame(name, pin.FrameType.OP_FRAME):
            raise DescriptionError(f"{self.source}: {what}: a frame named {name!r} already exists")
        joint_id, body_frame, body_placement = self.body_frames[body]
        self.model.addFrame(pin.Frame(name, joint_id, body_frame, body_placement * in_body, pin.FrameType.OP_FRAME))
        return name

    def _set_joint_fields(self) -> None:
        model, mj = self.model, self.mj
        for joint in range(mj.njnt):
            q, v = mj.jnt_qposadr[joint], mj.jnt_dofadr[joint]
            if mj.jnt_limited[joint]:
                model.lowerPositionLimit[q], model.upperPositionLimit[q] = mj.jnt_range[joint]
            model.damping[v] = mj.dof_damping[v]
            model.armature[v] = mj.dof_armature[v]
            model.lowerDryFrictionLimit[v] = -mj.dof_frictionloss[v]
            model.upperDryFrictionLimit[v] = mj.dof_frictionloss[v]

    # -- closures, actuators, options ---------------------------------------------------------

    def _add_closures(self) -> list[MjcfClosure]:
        mj = self.mj
        closures = []
        for eq in range(mj.neq):
            name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_EQUALITY, eq) or self._closing_name(eq) or f"equality{eq}"
            kind = int(mj.eq_type[eq])
            supported = kind in (mujoco.mjtEq.mjEQ_CONNECT, mujoco.mjtEq.mjEQ_WELD, mujoco.mjtEq.mjEQ_JOINT)
            label = mujoco.mjtEq(kind).name.removeprefix("mjEQ_").lower()
            if not mj.eq_active0[eq]:
                self.note(f"equality {name!r} ({label}) is inactive (active=\"false\"): skipped")
                continue
            if not supported:
                raise DescriptionError(
                    f"{self.source}: equality {name!r} is a {label} equality; pardyn closes loops with "
                    "connect (3D) and weld (6D) equalities between bodies or sites, and joint couplings (polycoef): "
                    "set it active=\"false\" in a copy of the file, or write the constraint as one of those"
                )
            closures.append(self._coupling(eq, name) if kind == mujoco.mjtEq.mjEQ_JOINT else self._closure(eq, name, kind))
        return sorted(closures, key=lambda closure: closure.type == "coupling")  # their rows come last

    def _closing_name(self, eq: int) -> str | None:
        """An unnamed equality between onshape-to-robot's closing sites ``closing_<name>_1[_z]`` and
        ``closing_<name>_2[_z]`` is named ``<name>`` (``<name>_z``), as :mod:`pardyn.description.starting` names
        the same pair of a URDF."""
        if int(self.mj.eq_objtype[eq]) != mujoco.mjtObj.mjOBJ_SITE:
            return None
        sites = {mujoco.mj_id2name(self.mj, mujoco.mjtObj.mjOBJ_SITE, int(i)) or ""
                 for i in (self.mj.eq_obj1id[eq], self.mj.eq_obj2id[eq])}
        pairs = closing_frame_pairs(sites | {f"{s}_z" for s in sites})
        name = next((n for n, a, b in pairs if {a, b} == sites), None)
        if name is None:  # the _z pair: closing_<name>_1_z / closing_<name>_2_z
            stripped = {s.removesuffix("_z") for s in sites}
            name = next((f"{n}_z" for n, a, b in closing_frame_pairs(stripped) if {a, b} == stripped and
                         all(s.endswith("_z") for s in sites)), None)
        if name is None or mujoco.mj_name2id(self.mj, mujoco.mjtObj.mjOBJ_EQUALITY, name) >= 0:
            return None
        return name

    def _coupling(self, eq: int, name: str) -> MjcfClosure:
        """A ``joint`` equality ``q1 - q1_0 = P(q2 - q2_0)`` (MuJoCo's ``polycoef``, five coefficients, about
        ``qpos0``) as ``q_b = P'(q_a)`` with ``b = joint1``, ``a = joint2``: ``P`` re-expanded about ``q = 0``
        (binomial shift, exact), plus ``q1_0`` in the constant; linear: ``c0' = c0 + q1_0 - c1 q2_0``."""
        mj = self.mj
        polycoef = np.array(mj.eq_data[eq][:5], dtype=float)
        joint_b, joint_a = int(mj.eq_obj1id[eq]), int(mj.eq_obj2id[eq])
        if joint_a < 0:
            raise DescriptionError(f"{self.source}: equality {name!r} holds joint {self.joint_names[joint_b]!r} at a "
                                   "constant: lock it instead (a pardyn YAML around this file, locked:)")
        q1_0, q2_0 = mj.qpos0[mj.jnt_qposadr[joint_b]], mj.qpos0[mj.jnt_qposadr[joint_a]]
        shifted = np.polynomial.Polynomial(polycoef)(np.polynomial.Polynomial([-q2_0, 1.0])).coef
        coefficients = np.zeros(5)
        coefficients[: shifted.size] = shifted
        coefficients[0] += q1_0
        if not np.any(coefficients[1:]):
            raise DescriptionError(f"{self.source}: equality {name!r}: polycoef {polycoef.tolist()} does not depend "
                                   f"on joint {self.joint_names[joint_a]!r}: lock {self.joint_names[joint_b]!r} "
                                   "instead (a pardyn YAML around this file, locked:)")
        return MjcfClosure(name, self.joint_names[joint_a], self.joint_names[joint_b], "coupling",
                           tuple(float(c) for c in np.trim_zeros(coefficients, "b")))  # c1..c4 not all 0: >= 2

    def _closure(self, eq: int, name: str, kind: int) -> MjcfClosure:
        mj = self.mj
        data = np.array(mj.eq_data[eq], dtype=float)
        first, second = mj.eq_obj1id[eq], mj.eq_obj2id[eq]
        if int(mj.eq_objtype[eq]) == mujoco.mjtObj.mjOBJ_SITE:
            body_a, body_b = mj.site_bodyid[first], mj.site_bodyid[second]
            pose_a = _pose(mj.site_quat[first], mj.site_pos[first])
            pose_b = _pose(mj.site_quat[second], mj.site_pos[second])
        elif kind == mujoco.mjtEq.mjEQ_CONNECT:
            body_a, body_b = first, second
            pose_a, pose_b = _translation(data[0:3]), _translation(data[3:6])
        else:
            body_a, body_b = first, second
            pose_a, pose_b = _pose(data[6:10], data[3:6]), _translation(data[0:3])
        if body_a == body_b:
            raise DescriptionError(f"{self.source}: equality {name!r} joins body "
                                   f"{self.body_names[body_a]!r} to itself")
        closure_type = "3D" if kind == mujoco.mjtEq.mjEQ_CONNECT or data[10] == 0.0 else "6D"
        frame_a = self._add_frame(f"{name}_a", body_a, pose_a, f"equality {name!r}")
        frame_b = self._add_frame(f"{name}_b", body_b, pose_b, f"equality {name!r}")
        return MjcfClosure(name, frame_a, frame_b, closure_type)

    def _tendon_drive(self, actuator: int, name: str, closures) -> tuple[str, str, float, float] | None:
        """A fixed-tendon actuator as a transmission to one joint ``a``: the tendon's joints are ``a`` and joints
        coupled to it (``q_j = c0_j + c1_j q_a``, :meth:`_coupling`), so its length ``L = gear sum_j k_j q_j`` is
        ``ratio q_a + constant`` with ``ratio = gear sum_j k_j c1_j`` and the joint torque is ``ratio f``.
        ``(actuator, a, ratio, constant)``; None (a note) for other tendons."""
        mj = self.mj
        tendon = int(mj.actuator_trnid[actuator, 0])
        first, count = int(mj.tendon_adr[tendon]), int(mj.tendon_num[tendon])
        wraps = range(first, first + count)
        if any(int(mj.wrap_type[w]) != mujoco.mjtWrap.mjWRAP_JOINT for w in wraps):
            return None  # a spatial tendon: the note of _actuated
        coupled = {c.frame_b: (c.frame_a, *c.coefficients) for c in closures if c.type == "coupling"}
        terms = []
        for w in wraps:
            joint = self.joint_names[int(mj.wrap_objid[w])]
            a, c0, c1, *higher = coupled.get(joint, (joint, 0.0, 1.0))
            if any(higher):
                raise DescriptionError(
                    f"{self.source}: actuator {name!r}: its tendon runs over {joint!r}, coupled to {a!r} by a "
                    "nonlinear polycoef, so its length is not linear in the driving joint; pardyn's transmissions are "
                    "linear: drive the joint itself (<motor joint=...>) or couple it linearly")
            terms.append((a, float(mj.wrap_prm[w]) * c0, float(mj.wrap_prm[w]) * c1))
        driven = {a for a, _, _ in terms}
        if len(driven) != 1:
            raise DescriptionError(
                f"{self.source}: actuator {name!r} drives a fixed tendon over independent joints {sorted(driven)}; "
                "pardyn maps a tendon actuator to one joint: couple the others to it (<equality joint>)")
        gear = float(mj.actuator_gear[actuator, 0])
        ratio, constant = gear * sum(t[2] for t in terms), gear * sum(t[1] for t in terms)
        if ratio == 0.0:
            raise DescriptionError(f"{self.source}: actuator {name!r}: its tendon does not move with {driven.pop()!r}")
        return name, driven.pop(), ratio, constant

    def _actuated(self, closures=()) -> tuple[str, ...]:
        mj = self.mj
        actuated: list[str] = []
        for actuator in range(mj.nu):
            name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_ACTUATOR, actuator) or f"actuator{actuator}"
            transmission = int(mj.actuator_trntype[actuator])
            if transmission == mujoco.mjtTrn.mjTRN_TENDON:
                drive = self._tendon_drive(actuator, name, closures)
                if drive is not None and drive[1] not in actuated:
                    actuated.append(drive[1])
                    self.tendon_drives.append(drive)
                    self._effort_limit(actuator, drive[1], abs(drive[2]))
                    continue
            if transmission not in _JOINT_TRANSMISSIONS:
                label = mujoco.mjtTrn(transmission).name.removeprefix("mjTRN_").lower()
                self.note(f"actuator {name!r} has a {label} transmission, not a joint: not counted as actuation")
                continue
            joint = self.joint_names[mj.actuator_trnid[actuator, 0]]
            if joint in actuated:
                self.note(f"actuator {name!r} drives {joint!r} again: counted once")
                continue
            actuated.append(joint)
            self._effort_limit(actuator, joint, abs(float(mj.actuator_gear[actuator, 0])))
        return tuple(actuated)

    def _effort_limit(self, actuator: int, joint: str, ratio: float) -> None:
        """``model.effortLimit`` of a driven joint (N m or N) from the actuator's ``forcerange`` (when
        ``forcelimited``) times its ratio to the joint (gear, or the tendon's ratio), and the joint's own
        ``actuatorfrcrange``; unlimited (pinocchio's default) otherwise."""
        mj = self.mj
        joint_id = self.joint_names.index(joint)
        limits = []
        if mj.actuator_forcelimited[actuator]:
            limits.append(ratio * float(np.abs(mj.actuator_forcerange[actuator]).max()))
        if mj.jnt_actfrclimited[joint_id]:
            limits.append(float(np.abs(mj.jnt_actfrcrange[joint_id]).max()))
        if limits and min(limits) > 0.0:
            self.model.effortLimit[mj.jnt_dofadr[joint_id]] = min(limits)

    def _gravity(self) -> np.ndarray:
        gravity = np.array(self.mj.opt.gravity, dtype=float)
        if self.mj.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_GRAVITY:
            self.note("gravity is disabled (<flag gravity=\"disable\"/>): gravity set to zero")
            gravity = np.zeros(3)
        self.model.gravity = pin.Motion(gravity, np.zeros(3))
        return gravity

    def _note_unsupported(self) -> None:
        mj = self.mj
        driving = len(self.tendon_drives)
        if mj.ntendon > driving:
            self.note(f"{mj.ntendon - driving} tendon(s) ignored (their springs, dampers and limits are not in the tree)")
        mocap = [self.body_names[b] for b in range(mj.nbody) if mj.body_mocapid[b] >= 0]
        if mocap:
            self.note(f"mocap bodies {mocap} are fixed at their model pose")
        gravcomp = [self.body_names[b] for b in range(mj.nbody) if mj.body_gravcomp[b] != 0.0]
        if gravcomp:
            self.note(f"gravity compensation (gravcomp) of bodies {gravcomp} is ignored")
