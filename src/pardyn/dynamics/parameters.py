"""Standard dynamic parameters of a robot: bodies, drive chains, gravity.

The parameters follow the DualV paper (Briot, Krut, Gautier 2015), eq. (2):
every moving body ``b`` (a URDF link: leg links, the platform, a payload, a
sensor housing...) has the 10 inertial standard parameters

    [xx_b xy_b xz_b yy_b yz_b zz_b mx_b my_b mz_b m_b]              # eq. (2)-(4)

``xx .. zz`` being the inertia matrix at the origin of the link frame, in link
axes (eq. 3), ``[mx my mz] = m * com`` the first moments in link axes (eq. 4),
``m`` the mass. Every drive chain (each actuated joint, plus any other joint
given friction in the YAML) has

    [ia_j fv_j fs_j offset_j]                                     # eq. (2), (5)

rotor + gear inertia (kg m^2), viscous (N m s/rad) and Coulomb (N m) friction
and the torque offset (N m); the drive torque is (eq. 5, plus the rotor term)

    tau_drive_j = ia_j qddot_j + fv_j qdot_j + fs_j sign(qdot_j) + offset_j.

Parameter names are ``<parameter>_<link or joint>``: ``zz_leg1_link1``,
``m_platform``, ``m_payload``, ``ia_leg1_joint1``... :attr:`DynamicParameters.names`
gives the column order used by the observation matrices
(:mod:`pardyn.dynamics.regressor`): the bodies in YAML order, then the drives
(actuated joints first, in the robot's actuated order).

Pinocchio orders the 10 inertial parameters of a body differently
(``Inertia.toDynamicParameters()``)::

    pinocchio: [m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]
    standard:  [xx, xy, xz, yy, yz, zz, mx, my, mz, m]

and lumps the bodies rigidly attached to one joint (a sensor fixed to a distal
link, a payload fixed to the platform, eq. 38) into the joint's inertia. Each
body here keeps its own parameters in its own frame; :meth:`DynamicParameters.body_map`
is the linear map to pinocchio's per-joint parameters.

The parameters are a value passed explicitly to whatever evaluates a model
(:class:`~pardyn.dynamics.inverse.InverseDynamics`, :class:`~pardyn.dynamics.forward.ForwardDynamics`,
the plants, the control laws), which writes them into its own copy of the
pinocchio tree with :meth:`DynamicParameters.apply`:

* ``model.inertias[j]``: the sum of the bodies attached to joint ``j``;
* ``model.armature[v]``: ``ia``, ``model.damping[v]``: ``fv``,
  ``model.friction[v]``: ``fs`` of the drive joints (0 elsewhere);
* ``model.gravity``: the gravity of the YAML (m/s^2, world frame);

and keeps ``offset`` (pinocchio has no field for it) in the
:class:`DynamicParameters` object. ``robot.model`` is never changed, so one
robot serves a plant with its true parameters and a controller with nominal
ones at once.

Nominal values come from the typed ``dynamics:`` section of the robot YAML
(:mod:`pardyn.description.dynamics`), turned into parameters and checked against
the URDF once, when the robot loads: ``robot.nominal_parameters``
(:func:`parameters_from_description`). A robot without a ``dynamics:`` section
gets one body per moving joint (named after the joint's child link) from the
URDF inertias, and zero drive parameters for its actuated joints
(:func:`parameters_from_model`).

Identified parameters are read from a JSON result file (see
:func:`read_parameter_file`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pinocchio as pin

from pardyn.description.dynamics import DRIVE_NAMES, DynamicsSection
from pardyn.resources import robots_directory
from pardyn.description.fields import YamlFields
from pardyn.description.validation import check_parameters
from pardyn.errors import DescriptionError, InputError
from pardyn.textio import load_json, shown

if TYPE_CHECKING:
    from pardyn.mechanism import Mechanism

__all__ = [
    "Spring",
    "INERTIAL_NAMES",
    "DRIVE_NAMES",
    "PINOCCHIO_FROM_STANDARD",
    "STANDARD_FROM_PINOCCHIO",
    "RESULT_FORMAT",
    "Body",
    "Drive",
    "DynamicParameters",
    "standard_from_inertia",
    "inertia_from_standard",
    "body_to_joint_matrix",
    "parameters_from_description",
    "parameters_from_model",
    "payload_body",
    "read_parameter_file",
    "write_parameter_file",
]

INERTIAL_NAMES: tuple[str, ...] = ("xx", "xy", "xz", "yy", "yz", "zz", "mx", "my", "mz", "m")
"""The 10 inertial standard parameters of a body, eq. (2) order."""

STANDARD_FROM_PINOCCHIO = np.array([4, 5, 7, 6, 8, 9, 1, 2, 3, 0])
"""``standard = pinocchio[STANDARD_FROM_PINOCCHIO]``, pinocchio = toDynamicParameters()."""

PINOCCHIO_FROM_STANDARD = np.argsort(STANDARD_FROM_PINOCCHIO)
"""``pinocchio = standard[PINOCCHIO_FROM_STANDARD]``."""

RESULT_FORMAT = "pardyn-dynamic-parameters"
"""Value of the ``format`` key of a parameter result file (version 1)."""

def standard_from_inertia(inertia: pin.Inertia) -> np.ndarray:
    """The 10 standard parameters of a pinocchio inertia, eq. (2) order, shape (10,).

    The inertia matrix is taken at the origin of the inertia's frame (eq. 3).
    """
    return np.asarray(inertia.toDynamicParameters())[STANDARD_FROM_PINOCCHIO]


def inertia_from_standard(standard: np.ndarray, *, where: str = "parameters") -> pin.Inertia:
    """The pinocchio inertia of 10 standard parameters (eq. 2 order).

    Any mass sign is accepted (the algebra is linear); a zero mass requires zero
    first moments (``mx = my = mz = 0``), otherwise the centre of mass is
    undefined and :class:`InputError` is raised naming ``where``.
    """
    standard = np.asarray(standard, dtype=float)
    mass = standard[9]
    if mass == 0.0:
        if np.any(standard[6:9] != 0.0):
            raise InputError(
                f"{where}: zero mass with nonzero first moments {standard[6:9].tolist()} is not a "
                "rigid body (regrouped base parameters?); pinocchio cannot hold it"
            )
        xx, xy, xz, yy, yz, zz = standard[:6]
        matrix = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
        return pin.Inertia(0.0, np.zeros(3), matrix)
    return pin.Inertia.FromDynamicParameters(standard[PINOCCHIO_FROM_STANDARD])


def _skew(vector: np.ndarray) -> np.ndarray:
    x, y, z = vector
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def _transform_standard(placement: pin.SE3, standard: np.ndarray) -> np.ndarray:
    """Pinocchio-ordered parameters, in the parent frame, of a body given in its own frame.

    With ``r_parent = R r_body + p``: ``m' = m``, ``h' = R h + m p`` and
    ``I'_O = R I_O R^T - S(R h) S(p) - S(p) S(R h) - m S(p)^2`` (linear in the
    parameters; valid for non-physical values, unlike pinocchio's Inertia).
    """
    xx, xy, xz, yy, yz, zz, mx, my, mz, mass = standard
    rotation, translation = placement.rotation, placement.translation
    inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    moment = rotation @ np.array([mx, my, mz])
    s_p, s_h = _skew(translation), _skew(moment)
    inertia = rotation @ inertia @ rotation.T - s_h @ s_p - s_p @ s_h - mass * s_p @ s_p
    moment = moment + mass * translation
    return np.array([
        mass, *moment,
        inertia[0, 0], inertia[0, 1], inertia[1, 1], inertia[0, 2], inertia[1, 2], inertia[2, 2],
    ])


def body_to_joint_matrix(placement: pin.SE3) -> np.ndarray:
    """Linear map from a body's standard parameters to its joint's pinocchio parameters.

    ``pinocchio_joint = A @ standard_body`` for a body whose frame sits at
    ``placement`` in the joint frame; shape (10, 10). Equals
    ``placement.act(inertia).toDynamicParameters()`` for a physical inertia.
    """
    identity = np.eye(10)
    return np.column_stack([_transform_standard(placement, identity[k]) for k in range(10)])


@dataclass(frozen=True)
class Body:
    """One moving rigid body (a URDF link) and its standard parameters.

    Attributes:
        name: link (pinocchio BODY frame) name, e.g. ``leg1_link1``, ``platform``.
        joint: pinocchio joint id carrying the body (the body moves with it).
        placement: body frame in the joint frame.
        standard: ``[xx xy xz yy yz zz mx my mz m]`` at the body frame origin, (10,).
    """

    name: str
    joint: int
    placement: pin.SE3
    standard: np.ndarray


@dataclass(frozen=True)
class Drive:
    """Drive-chain parameters of one joint (eq. 2, 5).

    Attributes:
        joint: joint name; ``index``: its position in ``q`` / ``v``.
        ia: rotor + gear inertia (kg m^2, or kg for a prismatic joint).
        fv: viscous friction (N m s/rad); fs: Coulomb friction (N m);
        offset: torque offset tau_off (N m).
    """

    joint: str
    index: int
    ia: float = 0.0
    fv: float = 0.0
    fs: float = 0.0
    offset: float = 0.0

    def values(self) -> np.ndarray:
        """``[ia fv fs offset]``, shape (4,)."""
        return np.array([self.ia, self.fv, self.fs, self.offset])


@dataclass(frozen=True)
class Spring:
    """A joint spring: ``tau_j = k (q_j - reference)`` is what the drives must add to hold it (MJCF
    ``stiffness``/``springref``; the ``springs:`` section of a robot YAML). The stiffness ``k`` (N m/rad, N/m) is a
    standard parameter (identifiable, column ``q_j - reference``); the reference (rad, m) is geometry.
    """

    joint: str
    index: int
    stiffness: float
    reference: float = 0.0


@dataclass(frozen=True)
class DynamicParameters:
    """The standard dynamic parameters of a robot (eq. 2 for every body and drive).

    Get them as ``robot.nominal_parameters`` (YAML values) or from
    :func:`read_parameter_file` (identified values); change with
    :meth:`with_vector` / :meth:`with_values`; write into a pinocchio model with
    :meth:`apply`.

    Attributes:
        robot: robot name.
        bodies: the moving bodies, in column order.
        drives: the drive chains, in column order (actuated joints first).
        gravity: gravity vector in the world frame, m/s^2, shape (3,).
        njoints: number of pinocchio joints of the model (universe included).
        nv: number of tree coordinates.
        springs: joint springs (:class:`Spring`), their stiffnesses last in column order (``k_<joint>``).
    """

    robot: str
    bodies: tuple[Body, ...]
    drives: tuple[Drive, ...]
    gravity: np.ndarray
    njoints: int
    nv: int
    springs: tuple[Spring, ...] = ()

    # ------------------------------------------------------------- naming
    @property
    def names(self) -> tuple[str, ...]:
        """Parameter names in column order, e.g. ``zz_leg1_link1``, ``ia_leg1_joint1``."""
        names = [f"{p}_{body.name}" for body in self.bodies for p in INERTIAL_NAMES]
        names += [f"{p}_{drive.joint}" for drive in self.drives for p in DRIVE_NAMES]
        names += [f"k_{spring.joint}" for spring in self.springs]
        return tuple(names)

    @property
    def size(self) -> int:
        """Number of standard parameters ``n_st``."""
        return 10 * len(self.bodies) + 4 * len(self.drives) + len(self.springs)

    def body_columns(self, body: str) -> np.ndarray:
        """Column indices of one body's 10 parameters (e.g. ``"payload"``, eq. 38)."""
        for k, item in enumerate(self.bodies):
            if item.name == body:
                return np.arange(10 * k, 10 * k + 10)
        raise InputError(f"{self.robot}: no body {body!r}; bodies: {[b.name for b in self.bodies]}")

    @property
    def drive_indices(self) -> np.ndarray:
        """Positions in ``q`` of the drive joints, shape (n_d,)."""
        return np.array([drive.index for drive in self.drives], dtype=int)

    def drive_values(self) -> np.ndarray:
        """``[[ia fv fs offset], ...]`` per drive, shape (n_d, 4)."""
        return np.array([drive.values() for drive in self.drives]).reshape(-1, 4)

    @property
    def offsets(self) -> dict[str, float]:
        """``{joint: offset}`` (N m): the term pinocchio's model cannot hold."""
        return {drive.joint: drive.offset for drive in self.drives}

    def offset_vector(self) -> np.ndarray:
        """The offsets tau_off as a tree vector (nv,), N m (N), zero off the drive joints."""
        out = np.zeros(self.nv)
        for drive in self.drives:
            out[drive.index] = drive.offset
        return out

    # ------------------------------------------------------------- vector
    def vector(self) -> np.ndarray:
        """The standard parameter vector chi_st in column order, shape (n_st,)."""
        parts = [body.standard for body in self.bodies] + [drive.values() for drive in self.drives]
        parts.append(np.array([spring.stiffness for spring in self.springs]))
        return np.concatenate(parts)

    def as_dict(self) -> dict[str, float]:
        """``{name: value}`` in column order."""
        return {name: float(value) for name, value in zip(self.names, self.vector())}

    def with_vector(self, vector: np.ndarray) -> DynamicParameters:
        """A copy with the parameters replaced by ``vector`` (n_st,), column order."""
        vector = np.asarray(vector, dtype=float).reshape(-1)
        if vector.shape != (self.size,):
            raise InputError(f"{self.robot}: expected {self.size} standard parameters, got {vector.size}")
        if not np.all(np.isfinite(vector)):
            bad = [n for n, v in zip(self.names, vector) if not math.isfinite(v)]
            raise InputError(f"{self.robot}: parameters must be finite: {bad}")
        nb = len(self.bodies)
        bodies = tuple(replace(b, standard=vector[10 * k:10 * k + 10].copy()) for k, b in enumerate(self.bodies))
        drives = tuple(
            replace(d, **dict(zip(DRIVE_NAMES, map(float, vector[10 * nb + 4 * k:10 * nb + 4 * k + 4]))))
            for k, d in enumerate(self.drives)
        )
        first = 10 * nb + 4 * len(self.drives)
        springs = tuple(replace(spring, stiffness=float(vector[first + k])) for k, spring in enumerate(self.springs))
        return replace(self, bodies=bodies, drives=drives, springs=springs)

    def spring_torques(self, q: np.ndarray) -> np.ndarray | float:
        """``k (q - reference)`` on the spring joints as a tree vector (nv,) or (N, nv) for q (nv,) or (N, nv);
        0.0 without springs."""
        if not self.springs:
            return 0.0
        q = np.asarray(q, dtype=float)
        out = np.zeros_like(q)
        for spring in self.springs:
            out[..., spring.index] = spring.stiffness * (q[..., spring.index] - spring.reference)
        return out

    def without_payload(self) -> DynamicParameters:
        """A copy whose ``payload`` body (``*_payload`` parameters) is empty: the bare robot, e.g. an
        identification's model (identified with a payload) for a controller of the unloaded robot."""
        return self.with_values({name: 0.0 for name in self.names if name.endswith("_payload")})

    def with_values(
        self, values: Mapping[str, float], *, unlisted: str = "keep", where: str = "values"
    ) -> DynamicParameters:
        """A copy with the named parameters set.

        Args:
            values: ``{parameter name: value}`` (SI units).
            unlisted: ``"keep"`` the current value of parameters not named, or
                set them to ``"zero"`` (base parameters written under the name of
                the standard parameter they regroup into).
            where: what to name in error messages (a file, an option).
        """
        if unlisted not in ("keep", "zero"):
            raise InputError(f"{where}: unlisted must be 'keep' or 'zero', got {unlisted!r}")
        names = self.names
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise InputError(f"{where}: unknown parameters {unknown} for {self.robot}; known: {list(names)}")
        vector = self.vector() if unlisted == "keep" else np.zeros(self.size)
        position = {name: k for k, name in enumerate(names)}
        for name, value in values.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value_or_inf(value)):
                raise InputError(f"{where}: {name}: expected a finite number, got {shown(value)}")
            vector[position[name]] = float(value)
        return self.with_vector(vector)

    def with_gravity(self, gravity: Sequence[float]) -> DynamicParameters:
        """A copy with another gravity vector (m/s^2, world frame, (3,))."""
        array = np.asarray(gravity, dtype=float).reshape(-1)
        if array.shape != (3,) or not np.all(np.isfinite(array)):
            raise InputError(f"gravity: expected 3 finite numbers, got {list(gravity)}")
        return replace(self, gravity=array)

    # ---------------------------------------------------- pinocchio side
    def body_map(self) -> np.ndarray:
        """Map of the inertial parameters to pinocchio's per-joint parameters.

        ``pi = B @ chi_inertial`` with ``pi`` the concatenated
        ``model.inertias[j].toDynamicParameters()`` for j = 1 .. njoints-1 and
        ``chi_inertial = vector()[:10 * len(bodies)]``; shape (10 (njoints-1), 10 n_bodies).
        ``computeJointTorqueRegressor(...) @ B`` is the tree regressor of the bodies.
        """
        matrix = np.zeros((10 * (self.njoints - 1), 10 * len(self.bodies)))
        for k, body in enumerate(self.bodies):
            rows = slice(10 * (body.joint - 1), 10 * body.joint)
            matrix[rows, 10 * k:10 * k + 10] = body_to_joint_matrix(body.placement)
        return matrix

    def joint_parameters(self) -> np.ndarray:
        """Pinocchio-ordered parameters of every joint (bodies lumped), shape (njoints-1, 10)."""
        inertial = np.concatenate([b.standard for b in self.bodies]) if self.bodies else np.zeros(0)
        return (self.body_map() @ inertial).reshape(self.njoints - 1, 10)

    def representable(self) -> bool:
        """True if every joint's lumped parameters are a pinocchio ``Inertia``.

        False for regrouped (base) parameters that give a joint zero mass but a
        nonzero first moment; :meth:`apply` refuses those, the inverse dynamics
        then uses the regressor instead of RNEA.
        """
        lumped = self.joint_parameters()
        return not bool(np.any((lumped[:, 0] == 0.0) & np.any(lumped[:, 1:4] != 0.0, axis=1)))

    def apply(self, model: pin.Model) -> pin.Model:
        """Write the parameters into ``model`` (in place) and return it.

        Sets ``model.inertias`` (bodies lumped per joint), ``model.armature``
        (ia), ``model.damping`` (fv), ``model.friction`` (fs) of the drive joints
        (0 for every other joint) and ``model.gravity``. The offsets stay in
        :attr:`offsets`. Raises :class:`InputError` if the model does not match
        (other joint count) or a joint's lumped parameters are not a rigid body.
        """
        if model.njoints != self.njoints or model.nv != self.nv:
            raise InputError(
                f"{self.robot}: parameters are for a model with {self.njoints} joints / nv={self.nv}, "
                f"got {model.njoints} / {model.nv}"
            )
        lumped = self.joint_parameters()
        inertias = [
            inertia_from_standard(lumped[j - 1][STANDARD_FROM_PINOCCHIO], where=f"{self.robot}: joint {model.names[j]}")
            for j in range(1, model.njoints)
        ]
        for j, inertia in enumerate(inertias, start=1):
            model.inertias[j] = inertia
        armature, damping, friction = np.zeros(model.nv), np.zeros(model.nv), np.zeros(model.nv)
        for drive in self.drives:
            armature[drive.index], damping[drive.index], friction[drive.index] = drive.ia, drive.fv, drive.fs
        model.armature, model.damping, model.friction = armature, damping, friction
        model.gravity = pin.Motion(self.gravity, np.zeros(3))
        return model

    def to_json(self) -> dict[str, Any]:
        """The result-file content of these parameters (see :func:`read_parameter_file`)."""
        return {
            "format": RESULT_FORMAT,
            "version": 1,
            "robot": self.robot,
            "unlisted": "nominal",
            "standard_parameters": self.as_dict(),
        }


# ------------------------------------------------------- from the description
def _body_frame(robot: Mechanism, link: str, fields: YamlFields, key: str) -> tuple[int, pin.SE3]:
    model = robot.model
    frame_id = model.getFrameId(link, pin.FrameType.BODY)
    if frame_id >= len(model.frames):
        links = sorted(f.name for f in model.frames if f.type == pin.FrameType.BODY)
        raise fields.fail(key, f"unknown link {link!r}; URDF links: {links}")
    frame = model.frames[frame_id]
    if frame.parentJoint == 0:
        raise fields.fail(key, f"link {link!r} is fixed to the base: it has no dynamics")
    return frame.parentJoint, frame.placement.copy()


def _drive(robot: Mechanism, joint: str, values: Mapping[str, float]) -> Drive:
    return Drive(joint=joint, index=robot.joint_names.index(joint), **values)


def _order_drives(robot: Mechanism, drives: dict[str, Drive]) -> tuple[Drive, ...]:
    """Actuated joints first (robot order, zero parameters if not given), then the others."""
    ordered = [drives.get(name) or _drive(robot, name, {}) for name in robot.actuated_names]
    ordered += [drive for name, drive in drives.items() if name not in robot.actuated_names]
    return tuple(ordered)


def _from_section(robot: Mechanism, section: DynamicsSection) -> DynamicParameters:
    """The parameters of the typed ``dynamics:`` section, its link and joint names checked against the tree.

    What the section leaves out comes from the tree (each value stated once, in either file): no ``bodies``
    -> the tree's inertias; a joint without a ``drives`` entry -> the tree's armature, damping and friction
    (URDF ``<dynamics damping friction>``, MJCF ``damping``/``frictionloss``/``armature``).
    """
    fields = YamlFields(robot.source)
    tree = parameters_from_model(robot)
    bodies: list[Body] = [] if section.bodies else list(tree.bodies)
    for i, values in enumerate(section.bodies):
        standard = values.standard()
        for j, link in enumerate(values.links):
            joint, placement = _body_frame(robot, link, fields, f"dynamics.bodies[{i}].links[{j}]")
            bodies.append(Body(name=link, joint=joint, placement=placement, standard=standard.copy()))
    drives: dict[str, Drive] = {drive.joint: drive for drive in tree.drives if drive.ia or drive.fv or drive.fs}
    for i, values in enumerate(section.drives):
        for j, joint in enumerate(values.joints):
            if joint not in robot.joint_names:
                raise fields.fail(f"dynamics.drives[{i}].joints[{j}]",
                                  f"unknown joint {joint!r}; joints: {list(robot.joint_names)}")
            drives[joint] = _drive(robot, joint, values.values())
    return DynamicParameters(
        robot=robot.name, bodies=tuple(bodies), drives=_order_drives(robot, drives),
        gravity=section.gravity.copy(), njoints=robot.model.njoints, nv=robot.model.nv,
    )


def parameters_from_model(robot: Mechanism, model: pin.Model | None = None) -> DynamicParameters:
    """The parameters a pinocchio model carries (``robot.model``, i.e. the URDF's, by default).

    One body per moving joint carrying mass (named after its child link, at the
    joint frame), an empty ``payload`` body on a link of that name (if any), a drive for every actuated joint and every joint with
    armature, damping or friction, the model's gravity; offsets zero.
    ``parameters_from_model(robot, model).apply(robot.model.copy())`` gives
    ``model``'s dynamics back.
    """
    model = robot.model if model is None else model
    bodies = []
    for joint in range(1, model.njoints):
        standard = standard_from_inertia(model.inertias[joint])
        if not np.any(standard):
            continue
        link = next(f.name for f in model.frames if f.type == pin.FrameType.BODY and f.parentJoint == joint)
        bodies.append(Body(name=link, joint=joint, placement=pin.SE3.Identity(), standard=standard))
    # a massless link named "payload": where a load is identified (eq. 38), empty
    if model.existFrame("payload", pin.FrameType.BODY) and all(body.name != "payload" for body in bodies):
        if model.frames[model.getFrameId("payload", pin.FrameType.BODY)].parentJoint != 0:
            bodies.append(payload_body(model, "payload"))
    drives = {}
    for index, name in enumerate(robot.joint_names):
        values = {"ia": float(model.armature[index]), "fv": float(model.damping[index]),
                  "fs": float(model.friction[index])}
        if name in robot.actuated_names or any(values.values()):
            drives[name] = _drive(robot, name, values)
    return DynamicParameters(
        robot=robot.name, bodies=tuple(bodies), drives=_order_drives(robot, drives),
        gravity=np.asarray(model.gravity.linear, dtype=float).copy(), njoints=model.njoints, nv=model.nv,
    )


def payload_body(model: pin.Model, frame: str) -> Body:
    """An empty body named ``payload`` fixed at ``frame`` of ``model``: the 10 parameters of a load carried
    there (eq. 38), zero until identified."""
    placed = model.frames[model.getFrameId(frame)]
    return Body(name="payload", joint=int(placed.parentJoint), placement=placed.placement.copy(),
                standard=np.zeros(10))


def _remedy(robot: Mechanism) -> str:
    """What to do about a YAML/tree mismatch: shipped robots regenerate their URDF; a user states it once."""
    shipped = robot.source.resolve().parent == robots_directory().resolve()
    if shipped:
        return "regenerate the URDF (python tools/generate_*_urdf.py) or fix the YAML"
    return "state the values in one file only (the YAML's dynamics: or the tree), or make them agree"


def _tree_side(robot: Mechanism, joint: int) -> tuple[str, str | None]:
    """Who gives the tree's inertia on ``joint``: the tree file's ``<inertial>`` of its links, or the YAML's
    ``inertials:`` entries that replaced them (the value then comes from the YAML, not the tree); and the
    remedy when the YAML's two sections disagree (None: the tree file does)."""
    model, urdf_path = robot.model, robot.urdf
    bodies = [f for f in model.frames if f.type == pin.FrameType.BODY and f.parentJoint == joint]
    links = [f.name for f in bodies]
    entry_of = {link: i for i, entry in enumerate(robot.description.inertials) for link in entry.links}
    replaced = [link for link in links if link in entry_of]
    if not replaced:
        return f"{urdf_path} gives", None
    named = ", ".join(f"inertials[{entry_of[link]}] ({link})" for link in replaced)
    others = [f.name for f in bodies if f.name not in entry_of and f.inertia.mass != 0.0]  # massless: no share
    with_tree = f" with the <inertial> of {others} in {urdf_path}" if others else ""
    return (f"the YAML's own {named}{with_tree} give",
            f"inertials: and dynamics: state {replaced} twice: keep the values in one of the two sections, or make "
            "them agree")


def _check_against_urdf(robot: Mechanism, params: DynamicParameters) -> None:
    """Values stated in both files must agree: bodies (when the YAML lists any) and friction (where the tree has any)."""
    model, source, urdf_path = robot.model, robot.source, robot.urdf
    section = robot.description.dynamics
    lumped = params.joint_parameters()  # (njoints - 1, 10)
    urdf = np.array([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)])
    rows = np.flatnonzero(~np.isclose(urdf, lumped, rtol=1e-8, atol=1e-12).all(axis=1)) if section.bodies else []
    for row in rows[:1]:
        tree_side, remedy = _tree_side(robot, int(row) + 1)
        raise DescriptionError(
            f"{source}: dynamics: the bodies on joint {model.names[int(row) + 1]!r} add up to "
            f"[m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] = {np.round(lumped[row], 10).tolist()} but "
            f"{tree_side} {np.round(urdf[row], 10).tolist()}; {remedy or _remedy(robot)}"
        )
    index = params.drive_indices
    drives = params.drive_values()[:, 1:3]  # (n_d, 2): fv, fs
    friction = np.column_stack([model.damping[index], model.friction[index]])
    stated = np.any(friction != 0.0, axis=1)  # the tree states friction for these joints
    for k in np.flatnonzero(stated & ~np.isclose(friction, drives, rtol=1e-8, atol=1e-12).all(axis=1))[:1]:
        drive = params.drives[int(k)]
        raise DescriptionError(
            f"{source}: dynamics.drives: joint {drive.joint!r} has fv, fs = {drive.fv}, {drive.fs} but {urdf_path} "
            f"gives {tuple(friction[k].tolist())}; {_remedy(robot)}"
        )


def _springs(robot: Mechanism) -> tuple[Spring, ...]:
    """The description's joint springs (``springs:`` or the MJCF's), their joints checked on the tree."""
    springs = []
    for name, stiffness, reference in robot.description.springs:
        if name in robot.locked_joints:  # held still: its spring does no work on the robot's motion
            continue
        if name not in robot.joint_names:
            raise DescriptionError(f"{robot.source}: springs: unknown joint {name!r}; joints: "
                                   f"{list(robot.joint_names)}")
        springs.append(Spring(name, robot.joint_names.index(name), stiffness, reference))
    return tuple(springs)


def parameters_from_description(robot: Mechanism, *, check_urdf: bool = True) -> DynamicParameters:
    """The nominal parameters of the robot's typed ``dynamics:`` section, built once when the robot loads.

    :func:`pardyn.robot.load_robot` calls this and keeps the result as
    ``robot.nominal_parameters``: use that. Without a ``dynamics:`` section: the
    URDF's (:func:`parameters_from_model`). With ``check_urdf`` the URDF must
    agree with the YAML (:class:`DescriptionError` otherwise, naming the joint).
    """
    section = robot.description.dynamics
    params = parameters_from_model(robot) if section is None else _from_section(robot, section)
    params = replace(params, springs=_springs(robot))
    if section is not None and check_urdf:
        _check_against_urdf(robot, params)
    for array in (params.gravity, *(body.standard for body in params.bodies)):
        array.flags.writeable = False  # shared by every user of the robot: change copies (with_values, ...)
    return params


def value_or_inf(value: float) -> float:
    """``float(value)``, inf for an integer too large for a float (JSON/YAML ``1`` followed by 400 zeros)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


# ------------------------------------------------------------ result files
class WithNominalParameters(Protocol):
    """What reading a result file needs of a robot (a :class:`pardyn.robot.Robot`): its name, and the nominal
    parameters the unlisted values come from."""

    name: str
    nominal_parameters: DynamicParameters


def read_parameter_file(path: str | Path, robot: WithNominalParameters, *, base: DynamicParameters | None = None) -> DynamicParameters:
    """Read identified parameters from a JSON result file.

    Format (version 1; other keys, e.g. the identification's statistics or
    the regrouping of base parameters, are ignored)::

        {
          "format": "pardyn-dynamic-parameters",   # optional; checked if present
          "version": 1,                            # optional; checked if present
          "robot": "dualv",                        # must be the robot's name
          "standard_parameters": {                 # names as DynamicParameters.names, SI units
            "zz_leg1_link1": 0.0445, "m_platform": 1.92, "fv_leg1_joint1": 0.05
          },
          "unlisted": "nominal"                    # or "zero"
        }

    A robot without a ``payload`` body skips the ``*_payload`` names (a load identified on its task frame,
    :meth:`~pardyn.robot.Robot.with_payload_body`: not part of the bare robot).
    ``unlisted`` says what the parameters not listed become: their nominal
    value (``base``, ``robot.nominal_parameters`` by default), or zero. Base parameters
    (section 4.1) are written with ``"unlisted": "zero"`` under the name of the
    standard parameter that carries the regrouped value (e.g. ``zz_leg1_link1``
    for ``zz1R = zz1 + d2^2 m2``): the model they give is then exactly the
    base-parameter model.

    Raises:
        InputError: unreadable file, wrong robot, unknown name, non-finite value
            (the message names the file and the key).
    """
    path = Path(path)
    content = load_json(path, what="parameter file")
    if not isinstance(content, Mapping):
        raise InputError(f"{path}: expected a JSON object")
    if "format" in content and content["format"] != RESULT_FORMAT:
        raise InputError(f"{path}: format: expected {RESULT_FORMAT!r}, got {content['format']!r}")
    if "version" in content and content["version"] != 1:
        raise InputError(f"{path}: version: only version 1 is known, got {content['version']!r}")
    if content.get("robot") != robot.name:
        raise InputError(f"{path}: robot: the file is for {content.get('robot')!r}, not {robot.name!r}")
    values = content.get("standard_parameters")
    if not isinstance(values, Mapping):
        raise InputError(f"{path}: standard_parameters: expected an object {{name: value}}")
    unlisted = content.get("unlisted", "nominal")
    if unlisted not in ("nominal", "zero"):
        raise InputError(f"{path}: unlisted: expected 'nominal' or 'zero', got {unlisted!r}")
    base = robot.nominal_parameters if base is None else base
    if not any(body.name == "payload" for body in base.bodies):  # a load identified on the task frame: not the robot's
        values = {name: value for name, value in values.items() if not name.endswith("_payload")}
    params = base.with_values(values, unlisted="keep" if unlisted == "nominal" else "zero",
                              where=f"{path}: standard_parameters")
    check_parameters(params, f"{path}: standard_parameters", error=InputError)
    return params


def write_parameter_file(path: str | Path, params: DynamicParameters, **extra: Any) -> None:
    """Write ``params`` as a result file (every parameter listed); ``extra`` keys are added."""
    content = params.to_json()
    content.update(extra)
    Path(path).write_text(json.dumps(content, indent=2) + "\n")
