"""The physical mechanism of a robot: links, tree joints, loop-closing welds, frames, at home.

pardyn's model is a pinocchio tree plus closure equations (and, for robots described
with a platform on a virtual chain, the task joints ``x, y, phi`` from the world to the
platform). A simulator needs the mechanism instead: bodies joined by joints, loops
included. :func:`build_mechanism` makes it, every pose at ``robot.home`` in the world
frame, and decides:

**The virtual chain.** The task joints from the world down to the first link with
mass (the platform) are not parts of the robot. When they span every motion the
platform could have (3 for a planar mechanism, whose revolute axes are all parallel
to ``n``; 6 otherwise), they are dropped and the platform is a free body held by its
loops only (dualv, rrr3, wu3r, wu3n). When they span fewer (five_bar: x, y;
h4: x, y, z), they also stand for a constraint the closures do not state (the
five-bar's end-effector does not spin; the H4's parallelogram forearms, modelled as
distance rods, keep the nacelle from tilting): they are kept as **guide** joints
under their pardyn names, on placeholder links, and the export says so.

**Closures.** Every closure becomes a weld (a ``fixed`` joint) between the link of its
first frame and a link that carries the closure's physical joint in the tree, so that
one primitive, the weld, closes every loop (libsdformat and Gazebo Classic's ODE read
it as a loop joint; gz-sim closes it with a DetachableJoint, see :mod:`pardyn.export.sdf`):

================== ===========================================================================
closure            tree side of the weld
================== ===========================================================================
``6D``, ``planar`` the link of the second frame itself (pardyn's leg tips: the last revolute
                   joint of the leg is already in the tree); the frames must coincide at home
``2D``             a pin link on a revolute joint about the plane normal ``n`` at the point
``3D``             a pin link on a ball joint at the point
``distance``       a rod on a ball joint at the second frame, its end on a universal joint
                   (axes normal to the rod: no spin about the rod) at the first frame
``[rz]`` only      a parallelogram: a coupler on revolute joints (axes ``n``) between two links
                   hinged on one parent about ``n`` (the H4's bars), as wide as the hinges are apart
other components   :class:`~pardyn.export.errors.ExportError`: no joint reproduces them
================== ===========================================================================

**Masses.** Links pardyn models as massless (leg tips, pins, rods, couplers, guide
links) need a mass in a simulator: they get ``placeholder_mass`` with the isotropic
inertia ``placeholder_inertia`` (listed in :attr:`BodyGraph.placeholders`). Inertias
violating ``A + B >= C`` on a planar mechanism are completed in the plane's normal
directions (:func:`pardyn.description.tree.physical_inertia`: same planar dynamics).
The rotor inertia ``ia`` of a revolute drive whose parent is the world becomes a
massless disk on the child link (``ia`` about the axis, ``ia / 2`` across, at the joint):
exact, the link turns about that fixed axis only. Other drive terms SDF cannot hold
(``ia`` of a moving or prismatic joint, e.g. wu3r's counterweights; torque offsets)
are listed in :attr:`BodyGraph.unrepresented`.

**Joint zero.** SDF measures a joint's position from the pose the model is written in
(here: home), so a simulator reports ``q - robot.home``; :attr:`BodyGraph.home_offsets`
gives what to add back (the ``gazebo_joint_states`` node does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.description.tree import joint_axis, link_names, physical_inertia
from pardyn.export.errors import ExportError

if TYPE_CHECKING:
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.robot import Robot

__all__ = ["Link", "Joint", "Frame", "BodyGraph", "build_mechanism"]

_TOLERANCE = 1e-9  # m, rad: frames that must coincide at home


@dataclass(frozen=True)
class Link:
    """A rigid body. ``pose``: link frame in the world at home; ``com`` (3,) in the link frame (m);
    ``inertia`` (3, 3) about the com in link axes (kg m^2); ``role``: ``tree``, ``platform``,
    ``guide``, ``pin``, ``rod``, ``coupler``."""

    name: str
    pose: pin.SE3
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    role: str = "tree"


@dataclass(frozen=True)
class Joint:
    """A joint. ``pose``: joint frame in the world at home (= the child link frame for tree joints);
    ``axis``, ``axis2`` (3,) in the world; limits in the simulator's coordinate ``q - home``
    (rad, m); ``effort`` (N m, N), ``velocity`` (rad/s, m/s), ``damping`` (N m s/rad),
    ``friction`` (N m); ``spring_stiffness`` (N m/rad, N/m) and ``spring_reference`` (simulator coordinate);
    ``closure``: the pardyn closure it belongs to (welds close it)."""

    name: str
    kind: str  # revolute | prismatic | fixed | ball | universal | gearbox
    parent: str  # link name or "world"
    child: str
    pose: pin.SE3
    axis: np.ndarray | None = None
    axis2: np.ndarray | None = None
    lower: float = -np.inf
    upper: float = np.inf
    effort: float = np.inf
    velocity: float = np.inf
    damping: float = 0.0
    friction: float = 0.0
    spring_stiffness: float = 0.0
    spring_reference: float = 0.0
    role: str = "tree"  # tree | guide | closure (inside a closure's chain) | weld (closes the loop) | gearbox
    closure: str | None = None
    gearbox_ratio: float = 1.0
    """``gearbox`` joints (a joint coupling): SDF's ``theta_2 = -gearbox_ratio theta_1``."""
    reference: str | None = None
    """``gearbox`` joints: the link both coupled joints hang from (SDF's ``gearbox_reference_body``)."""


@dataclass(frozen=True)
class Frame:
    """A named pardyn frame fixed to ``link`` (or ``world``), pose in the world at home."""

    name: str
    link: str
    pose: pin.SE3


@dataclass(frozen=True)
class BodyGraph:
    """The robot as bodies and joints, closures included: what the exporters write (module docstring)."""

    name: str
    links: tuple[Link, ...]
    joints: tuple[Joint, ...]
    frames: tuple[Frame, ...]
    gravity: np.ndarray
    actuated: tuple[str, ...]
    sensed: tuple[str, ...]
    home_offsets: dict[str, float]
    platform: str | None = None
    free_platform: bool = False
    dropped_joints: tuple[str, ...] = ()
    guide_joints: tuple[str, ...] = ()
    placeholders: tuple[str, ...] = ()
    completed_inertias: tuple[str, ...] = ()
    rotor_disks: dict[str, float] = field(default_factory=dict)
    unrepresented: tuple[str, ...] = ()
    plane_normal: np.ndarray | None = None

    @property
    def welds(self) -> tuple[Joint, ...]:
        """The joints that close the loops, one per closure."""
        return tuple(joint for joint in self.joints if joint.role == "weld")


def _inertia_at_com(lumped: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, com (3,), inertia about the com (3, 3)) of pinocchio-ordered parameters at the joint origin."""
    mass, first = float(lumped[0]), np.asarray(lumped[1:4])
    ixx, ixy, iyy, ixz, iyz, izz = lumped[4:10]
    origin = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if mass == 0.0:
        return 0.0, np.zeros(3), origin
    com = first / mass
    return mass, com, origin - mass * (com @ com * np.eye(3) - np.outer(com, com))


def _virtual_chain(robot: Robot, lumped: np.ndarray) -> list[int]:
    """Joint ids of the task joints from the world down to (and including) the one carrying the platform."""
    model = robot.model
    task = set(getattr(robot.description, "task_joints", ())) - set(robot.actuated_names)
    chain: list[int] = []
    parent = 0
    while True:
        children = [j for j in range(1, model.njoints) if model.parents[j] == parent and model.names[j] in task]
        if len(children) != 1:
            break
        chain.append(children[0])
        if lumped[children[0] - 1][0] > 0.0:  # the first body with mass: the platform
            break
        parent = children[0]
    return chain


def _plane_normal(model: pin.Model, data: pin.Data) -> np.ndarray | None:
    """The common direction of every revolute axis (world, at home) if prismatic axes are normal to it."""
    revolute, prismatic = [], []
    for joint_id in range(1, model.njoints):
        kind, axis = joint_axis(model, joint_id)
        (revolute if kind == "revolute" else prismatic).append(data.oMi[joint_id].rotation @ axis)
    if not revolute:
        return None
    normal = revolute[0] / np.linalg.norm(revolute[0])
    if any(np.linalg.norm(np.cross(normal, a)) > 1e-9 for a in revolute):
        return None
    if any(abs(normal @ a) > 1e-9 for a in prismatic):
        return None
    return normal


def _rotation_with_x(direction: np.ndarray) -> np.ndarray:
    """A rotation (3, 3) whose x axis is ``direction``."""
    x = direction / np.linalg.norm(direction)
    helper = np.eye(3)[int(np.argmin(np.abs(x)))]
    y = np.cross(x, helper)
    y /= np.linalg.norm(y)
    return np.column_stack([x, y, np.cross(x, y)])


def sdf_link_names(model: pin.Model, dropped: set[int] | frozenset[int] = frozenset()) -> list[str]:
    """:func:`~pardyn.description.tree.link_names`, each differing from every joint name: SDF wants the names of a
    model's links, joints and frames unique (libsdformat: 'Non-unique name[...] detected in 2 children of type
    [...]'), URDF and MJCF keep links and joints apart (a joint named like a link, pardyn's ``body:``/``joint:``;
    a body of several joints or three hinges of a ball joint, whose massless links take their joints' names).
    A link named like an exported joint (not one of ``dropped``, the virtual chain's) is ``<name>_link``
    (``_link2``, ... while taken)."""
    names = link_names(model)
    joints = {model.names[j] for j in range(1, model.njoints) if j not in dropped}
    taken = set(model.names) | set(names)
    for index, name in enumerate(names[1:], start=1):
        if name in joints:
            new, k = f"{name}_link", 2
            while new in taken:
                new, k = f"{name}_link{k}", k + 1
            taken.add(new)
            names[index] = new
    return names


class _Builder:
    def __init__(self, robot: Robot, params: DynamicParameters, placeholder_mass: float,
                 placeholder_inertia: float) -> None:
        self.robot = robot
        self.model = robot.model
        self.data = self.model.createData()
        self.q = np.asarray(robot.home, dtype=float)
        pin.framesForwardKinematics(self.model, self.data, self.q)
        self.params = params
        self.placeholder_mass = float(placeholder_mass)
        self.placeholder_inertia = float(placeholder_inertia)
        self.links: list[Link] = []
        self.joints: list[Joint] = []
        self.placeholders: list[str] = []
        self.completed: list[str] = []
        self.unrepresented: list[str] = []
        self.rotor_disks: dict[str, float] = {}
        self.normal = _plane_normal(self.model, self.data)

    # ------------------------------------------------------------- helpers
    def where(self) -> str:
        return str(self.robot.source)

    def placeholder(self, name: str, pose: pin.SE3, role: str, disk: np.ndarray | None = None) -> Link:
        self.placeholders.append(name)
        inertia = self.placeholder_inertia * np.eye(3) + (0.0 if disk is None else disk)
        link = Link(name, pose, self.placeholder_mass, np.zeros(3), inertia, role)
        self.links.append(link)
        return link

    def body(self, name: str, pose: pin.SE3, lumped: np.ndarray, role: str, disk: np.ndarray | None) -> None:
        mass, com, inertia = _inertia_at_com(lumped)
        if mass <= 0.0:
            if mass < 0.0 or np.any(inertia):
                raise ExportError(f"{self.where()}: link {name!r}: mass {mass} kg with inertia "
                                  f"{inertia.tolist()} is not a rigid body")
            self.placeholder(name, pose, role, disk)  # e.g. the H4's massless arms carry their rotor disk
            return
        if disk is not None:
            inertia = inertia + disk
        normal = None if self.normal is None else pose.rotation.T @ self.normal
        physical = physical_inertia(inertia, normal, name)
        if not np.array_equal(physical, inertia):
            self.completed.append(name)
        self.links.append(Link(name, pose, mass, com, physical, role))

    # ------------------------------------------------------------- pieces
    def tree(self, virtual: list[int], free: bool) -> dict[int, str]:
        """Links and joints of the pinocchio tree; returns the link name of each joint id (0: world)."""
        model, data = self.model, self.data
        lumped = self.params.joint_parameters()
        drives = {drive.joint: drive for drive in self.params.drives}
        springs = {spring.joint: spring for spring in self.params.springs}
        link_of = {0: "world"}
        dropped = set(virtual) if free else set()
        names = sdf_link_names(model, dropped)
        for joint_id in range(1, model.njoints):
            name = model.names[joint_id]
            pose = data.oMi[joint_id].copy()
            kind, local_axis = joint_axis(model, joint_id)
            if joint_id in dropped:
                if joint_id != virtual[-1]:
                    if np.any(lumped[joint_id - 1]):
                        raise ExportError(f"{self.where()}: virtual joint {name!r} carries a body with mass")
                    link_of[joint_id] = link_of[model.parents[joint_id]]
                    continue
                link_of[joint_id] = names[joint_id]
                self.body(names[joint_id], pose, lumped[joint_id - 1], "platform", None)
                continue
            drive = drives.get(name)
            disk = None
            if drive is not None and drive.ia != 0.0:
                if kind == "revolute" and model.parents[joint_id] == 0:
                    a = local_axis
                    disk = drive.ia * (np.outer(a, a) + 0.5 * (np.eye(3) - np.outer(a, a)))
                    self.rotor_disks[name] = float(drive.ia)
                else:
                    self.unrepresented.append(
                        f"{name}: drive inertia ia = {drive.ia} ({'kg' if kind == 'prismatic' else 'kg m^2'}) "
                        "of a joint whose axis moves or translates (SDF 1.9 has no armature nor coupled "
                        "prismatic joints, e.g. a counterweight): left out"
                    )
            if drive is not None and drive.offset != 0.0:
                self.unrepresented.append(f"{name}: drive torque offset {drive.offset} (N m or N): left out")
            link_role = "platform" if virtual and joint_id == virtual[-1] else ("guide" if joint_id in virtual else "tree")
            link_of[joint_id] = names[joint_id]
            self.body(names[joint_id], pose, lumped[joint_id - 1], link_role, disk)
            v = model.joints[joint_id].idx_v
            q = self.q[model.joints[joint_id].idx_q]
            self.joints.append(Joint(
                name=name, kind=kind, parent=link_of[model.parents[joint_id]], child=names[joint_id], pose=pose,
                axis=pose.rotation @ local_axis,
                lower=float(model.lowerPositionLimit[v]) - q, upper=float(model.upperPositionLimit[v]) - q,
                effort=float(model.effortLimit[v]), velocity=float(model.velocityLimit[v]),
                damping=0.0 if drive is None else float(drive.fv),
                friction=0.0 if drive is None else float(drive.fs),
                spring_stiffness=float(springs[name].stiffness) if name in springs else 0.0,
                spring_reference=float(springs[name].reference) - q if name in springs else 0.0,
                role="guide" if joint_id in virtual else "tree",
            ))
        return link_of

    def closure(self, closure, link_of: dict[int, str]) -> None:
        if closure.type == "coupling":
            self.gearbox(closure, link_of)
            return
        model, data = self.model, self.data
        frame_a, frame_b = (model.getFrameId(name) for name in closure.frames)
        link_a = link_of[model.frames[frame_a].parentJoint]
        link_b = link_of[model.frames[frame_b].parentJoint]
        pose_a, pose_b = data.oMf[frame_a], data.oMf[frame_b]
        gap = float(np.linalg.norm(pose_b.translation - pose_a.translation))
        components = {("x", "y", "z", "rx", "ry", "rz")[c] for c in closure.components}
        where = f"{self.where()}: closure {closure.name!r}"
        welded_to = None
        if closure.type == "distance":
            if abs(gap - float(closure.length)) > _TOLERANCE:
                raise ExportError(f"{where}: its frames are {gap} m apart at home, not {closure.length} m")
            rod_pose = pin.SE3(_rotation_with_x(pose_a.translation - pose_b.translation), pose_b.translation)
            rod = self.placeholder(f"{closure.name}_rod", rod_pose, "rod")
            self.joints.append(Joint(f"{closure.name}_ball", "ball", link_b, rod.name, rod_pose,
                                     role="closure", closure=closure.name))
            end_pose = pin.SE3(rod_pose.rotation, pose_a.translation)
            end = self.placeholder(f"{closure.name}_rod_end", end_pose, "pin")
            self.joints.append(Joint(f"{closure.name}_universal", "universal", rod.name, end.name, end_pose,
                                     axis=rod_pose.rotation[:, 1], axis2=rod_pose.rotation[:, 2],
                                     role="closure", closure=closure.name))
            welded_to = end
        elif components in ({"x", "y", "z", "rx", "ry", "rz"}, {"x", "y", "rz"}):
            relative = pose_a.inverse() * pose_b
            if gap > _TOLERANCE or np.linalg.norm(pin.log3(relative.rotation)) > _TOLERANCE:
                raise ExportError(f"{where}: a weld needs its frames to coincide at home; they are {gap} m and "
                                  f"{np.linalg.norm(pin.log3(relative.rotation))} rad apart")
            if components != {"x", "y", "z", "rx", "ry", "rz"} and (
                self.normal is None or np.linalg.norm(np.cross(self.normal, [0.0, 0.0, 1.0])) > 1e-9
            ):
                raise ExportError(f"{where}: constrains x, y, rz only, a weld reproduces that in a mechanism "
                                  "planar about z only; this one is not")
            self.weld(closure.name, link_a, link_b, pose_b)
            return
        elif components in ({"x", "y"}, {"x", "y", "z"}):
            if gap > _TOLERANCE:
                raise ExportError(f"{where}: its points are {gap} m apart at home")
            if components == {"x", "y"} and (
                self.normal is None or np.linalg.norm(np.cross(self.normal, [0.0, 0.0, 1.0])) > 1e-9
            ):
                raise ExportError(f"{where}: constrains x, y only, a revolute joint about z reproduces that in a "
                                  "mechanism planar about z only; this one is not")
            pin_pose = pin.SE3(pose_b.rotation, pose_b.translation)
            pin_link = self.placeholder(f"{closure.name}_pin", pin_pose, "pin")
            if components == {"x", "y"}:
                self.joints.append(Joint(f"{closure.name}_revolute", "revolute", link_b, pin_link.name, pin_pose,
                                         axis=np.array([0.0, 0.0, 1.0]), role="closure", closure=closure.name))
            else:
                self.joints.append(Joint(f"{closure.name}_ball", "ball", link_b, pin_link.name, pin_pose,
                                         role="closure", closure=closure.name))
            welded_to = pin_link
        elif components == {"rz"}:
            welded_to = self.coupler(closure, frame_a, frame_b, link_of, where)
        else:
            raise ExportError(
                f"{where}: constrains {sorted(components)}: no SDF joint (nor chain of them) reproduces these "
                "components honestly; use a standard type (6D, planar, 3D, 2D, distance) or [rz] between two "
                "links hinged on one parent"
            )
        self.weld(closure.name, link_a, welded_to.name, welded_to.pose)

    def coupler(self, closure, frame_a: int, frame_b: int, link_of: dict[int, str], where: str) -> Link:
        """Parallelogram keeping two links hinged on one parent about ``n`` at the same angle."""
        model, data = self.model, self.data
        hinge_a, hinge_b = model.frames[frame_a].parentJoint, model.frames[frame_b].parentJoint
        z = np.array([0.0, 0.0, 1.0])
        for hinge in (hinge_a, hinge_b):
            kind, axis = joint_axis(model, hinge)
            if kind != "revolute" or np.linalg.norm(np.cross(data.oMi[hinge].rotation @ axis, z)) > 1e-9:
                raise ExportError(f"{where}: an [rz] closure is a parallelogram between two links hinged about z; "
                                  f"{model.names[hinge]!r} is not such a hinge")
        if model.parents[hinge_a] != model.parents[hinge_b]:
            raise ExportError(f"{where}: an [rz] closure is a parallelogram between two links hinged on ONE "
                              f"parent; {model.names[hinge_a]!r} and {model.names[hinge_b]!r} have different ones")
        centre_a, centre_b = data.oMi[hinge_a].translation, data.oMi[hinge_b].translation
        offset = np.cross(z, centre_b - centre_a)
        offset[2] = 0.0
        if np.linalg.norm(offset) < 1e-6:
            raise ExportError(f"{where}: the two hinges are on one axis: no parallelogram")
        point_a, point_b = centre_a + offset, centre_b + offset
        coupler_pose = pin.SE3(_rotation_with_x(point_a - point_b), point_b)
        coupler = self.placeholder(f"{closure.name}_coupler", coupler_pose, "coupler")
        self.joints.append(Joint(f"{closure.name}_coupler_b", "revolute", link_of[hinge_b], coupler.name, coupler_pose,
                                 axis=z, role="closure", closure=closure.name))
        end_pose = pin.SE3(coupler_pose.rotation, point_a)
        end = self.placeholder(f"{closure.name}_coupler_end", end_pose, "pin")
        self.joints.append(Joint(f"{closure.name}_coupler_a", "revolute", coupler.name, end.name, end_pose,
                                 axis=z, role="closure", closure=closure.name))
        return end

    def gearbox(self, closure, link_of: dict[int, str]) -> None:
        """A linear joint coupling ``q_b = c0 + c1 q_a`` as SDF's ``gearbox`` joint: parent the link of joint a,
        child the link of joint b, reference body their common parent link; SDF's ``theta_2 = -ratio theta_1``
        (angles from home, which closes the coupling) gives ``ratio = -c1``."""
        where = f"{self.where()}: closure {closure.name!r}"
        model = self.model
        if len(closure.coefficients) > 2:
            raise ExportError(f"{where}: a polynomial joint coupling (coefficients {list(closure.coefficients)}) has "
                              "no SDF joint; SDF's gearbox joint is linear (q_b = c0 + c1 q_a)")
        ids = [model.getJointId(name) for name in closure.joints]
        kinds = [joint_axis(model, joint_id) for joint_id in ids]
        if any(kind != "revolute" for kind, _ in kinds):
            raise ExportError(f"{where}: SDF's gearbox joint couples two revolute joints; {list(closure.joints)} "
                              f"are {[kind for kind, _ in kinds]}")
        parents = {link_of[model.parents[joint_id]] for joint_id in ids}
        if len(parents) != 1:
            raise ExportError(f"{where}: SDF's gearbox joint couples two joints on one reference link; "
                              f"{list(closure.joints)} hang from {sorted(parents)}")
        (axis_a, axis_b) = (self.data.oMi[joint_id].rotation @ axis for joint_id, (_, axis) in zip(ids, kinds))
        pose = self.data.oMi[ids[1]].copy()
        self.joints.append(Joint(f"{closure.name}_gearbox", "gearbox", link_of[ids[0]], link_of[ids[1]], pose,
                                 axis=axis_a, axis2=axis_b, role="gearbox", closure=closure.name,
                                 gearbox_ratio=-float(closure.coefficients[1]), reference=parents.pop()))

    def weld(self, closure: str, parent: str, child: str, pose: pin.SE3) -> None:
        self.joints.append(Joint(f"{closure}_closure", "fixed", parent, child, pose.copy(), role="weld",
                                 closure=closure))

    def frames(self, link_of: dict[int, str], used: set[str]) -> list[Frame]:
        out = []
        for frame_id, frame in enumerate(self.model.frames):
            if frame.type not in (pin.FrameType.BODY, pin.FrameType.OP_FRAME) or frame.name in used:
                continue
            if frame.parentJoint not in link_of:
                continue
            link = link_of[frame.parentJoint]
            if _reserved(frame.name):  # SDF reserves these (libsdformat: "frame name [world] is reserved")
                if link == "world":  # the world body of an MJCF: SDF's own world frame
                    continue
                self.unrepresented.append(f"{frame.name}: a frame name SDF reserves; left out")
                continue
            out.append(Frame(frame.name, link, self.data.oMf[frame_id].copy()))
            used.add(frame.name)
        return out


def _reserved(name: str) -> bool:
    """A name SDF 1.9 reserves for its own frames: ``world`` and ``__...__`` (``__model__``, ``__root__``)."""
    return name == "world" or (name.startswith("__") and name.endswith("__"))


def build_mechanism(
    robot: Robot,
    params: DynamicParameters | None = None,
    *,
    placeholder_mass: float = 1e-3,
    placeholder_inertia: float = 1e-6,
) -> BodyGraph:
    """The robot's mechanism at ``robot.home`` (module docstring).

    Args:
        robot: the robot (tree, closures, actuated and sensed joints, home).
        params: dynamic parameters; the YAML's nominal ones by default
            (``robot.nominal_parameters``).
        placeholder_mass: mass of the links pardyn models as massless (kg), > 0.
        placeholder_inertia: their isotropic inertia about their origin (kg m^2), > 0.

    Raises:
        ExportError: a closure no SDF joint reproduces, frames apart at home, a massless link with inertia.
    """
    if not (placeholder_mass > 0.0 and placeholder_inertia > 0.0):
        raise ExportError(f"placeholder mass and inertia must be > 0, got {placeholder_mass}, {placeholder_inertia}")
    if params is None:
        params = robot.nominal_parameters
    builder = _Builder(robot, params, placeholder_mass, placeholder_inertia)
    lumped = params.joint_parameters()
    virtual = _virtual_chain(robot, lumped)
    freedom = 3 if builder.normal is not None else 6
    free = bool(virtual) and len(virtual) == freedom
    link_of = builder.tree(virtual, free)
    for closure in robot.description.closures:
        builder.closure(closure, link_of)
    names = [link.name for link in builder.links] + [joint.name for joint in builder.joints]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ExportError(f"{builder.where()}: names used twice by links and joints: {twice}")
    frames = builder.frames(link_of, set(names))
    model = robot.model
    dropped = tuple(model.names[j] for j in virtual) if free else ()
    exported = {joint.name for joint in builder.joints}
    return BodyGraph(
        name=robot.name,
        links=tuple(builder.links),
        joints=tuple(builder.joints),
        frames=tuple(frames),
        gravity=np.asarray(params.gravity, dtype=float).copy(),
        actuated=tuple(robot.actuated_names),
        sensed=tuple(robot.sensed_names),
        home_offsets={name: float(robot.home[i]) for i, name in enumerate(robot.joint_names) if name in exported},
        platform=link_of[virtual[-1]] if virtual else None,
        free_platform=free,
        dropped_joints=dropped,
        guide_joints=() if free else tuple(model.names[j] for j in virtual),
        placeholders=tuple(builder.placeholders),
        completed_inertias=tuple(builder.completed),
        rotor_disks=builder.rotor_disks,
        unrepresented=tuple(builder.unrepresented),
        plane_normal=builder.normal,
    )
