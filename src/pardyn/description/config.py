"""The robot YAML file: what the URDF tree cannot say about a closed-loop robot.

A robot is a URDF tree (every leg from the base, the platform as a virtual
serial chain of its task coordinates) plus ``config/robots/<name>.yaml``::

    name: dualv
    urdf: package://pardyn/urdf/dualv.urdf   # or a path relative to this file
    task:                  # task coordinate -> joint of the platform's virtual chain
      x: platform_x
      y: platform_y
      phi: platform_phi
    actuated: [leg1_joint1, leg2_joint1, leg3_joint1, leg4_joint1]
    sensed: []             # passive joints that carry an encoder
    closures:              # pairs of frames that coincide in the real robot
      - {name: leg1, frames: [leg1_tip, platform_c1], type: planar}
    working_mode:          # which inverse-kinematic branch (conditions on frame positions)
      - {point: leg1_B, above: leg1_A, axis: y}
    assembly_mode:         # which forward-kinematic branch
      - {point: platform_c1, line: [leg1_B, leg2_B], side: left}
    home:
      task: {x: 0.0, y: 0.0, phi: 0.0}
      joints: {leg1_joint1: 2.4, ...}   # rough guess in the working mode, refined at load

This is close to Gepetto's ``example-parallel-robots`` convention (its
``closed_loop`` frame pairs with a ``type``, its ``name_mot`` motor list are
our ``closures`` and ``actuated``), with the working mode made explicit.

Closure types and the components of the frame-placement error they constrain
(``x y z`` translation, ``rx ry rz`` rotation, world-aligned):

============ ======================= ============================================
type         components              use
============ ======================= ============================================
``6D``       x y z rx ry rz          welded frames
``3D``       x y z                   spherical joint (coincident points)
``planar``   x y rz                  revolute joint of a loop in the xy plane
``2D``       x y                     coincident points of a loop in the xy plane
``distance`` |p_b - p_a| = length    massless rod between two ball joints
============ ======================= ============================================

A serial robot (``ur5e``) is the trivial case: no ``closures``, the task
coordinates *are* the actuated joints (``task: {q1: shoulder_pan_joint, ...}``,
``actuated`` the same joints), so that every velocity map is the identity.

A planar loop written as ``6D`` would give three identically-zero, hence
redundant, rows: the type selects the independent ones. ``components:`` may
override the selection.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from pardyn.description.dynamics import BodyValues, DynamicsSection, parse_bodies, parse_dynamics
from pardyn.description.excitation import ExcitationSettings, parse_excitation
from pardyn.description.fields import YamlFields
from pardyn.description.limits import Limits, parse_limits
from pardyn.description.rotors import RotorsSection, parse_rotors
from pardyn.description.springs import parse_springs
from pardyn.description.validation import check_joint_names
from pardyn.resources import resolve_path
from pardyn.textio import shown

__all__ = [
    "COMPONENT_NAMES",
    "CLOSURE_TYPES",
    "Closure",
    "coupling",
    "ModeCondition",
    "RobotDescription",
    "parse_description",
]

COMPONENT_NAMES = ("x", "y", "z", "rx", "ry", "rz")
CLOSURE_TYPES: dict[str, tuple[str, ...]] = {
    "6D": ("x", "y", "z", "rx", "ry", "rz"),
    "3D": ("x", "y", "z"),
    "planar": ("x", "y", "rz"),
    "2D": ("x", "y"),
    "distance": (),
    "coupling": (),
}
_AXES = {"x": 0, "y": 1, "z": 2}
_TOP_KEYS = {
    "name", "urdf", "task", "actuated", "sensed", "closures", "working_mode", "assembly_mode", "home",
    "analytic", "counterweights", "dynamics", "rotors", "excitation", "limits", "transmissions", "locked",
    "springs", "inertials", "base",
}


@dataclass(frozen=True)
class Closure:
    """One loop closure: frame ``frames[1]`` must coincide with ``frames[0]``.

    ``components`` index the world-aligned placement error
    ``[p_b - p_a, log3(R_a^T R_b) in world axes]``; for ``type == "distance"``
    the single constraint is ``|p_b - p_a| - length``.
    """

    name: str
    frames: tuple[str, str]
    type: str
    components: tuple[int, ...]
    length: float | None = None
    joints: tuple[str, str] = ()
    """``coupling``: the joints ``(a, b)`` of ``q_b = c0 + c1 q_a + ... + c4 q_a^4`` (``frames`` is then empty)."""
    coefficients: tuple[float, ...] = ()
    """``coupling``: ``(c0, c1, ...)``, 2 to 5 of them (SI units of ``q_b / q_a^k``), e.g. MJCF
    ``<equality joint polycoef>`` re-expanded about ``q = 0``."""

    @property
    def size(self) -> int:
        """Number of scalar constraints this closure contributes."""
        return 1 if self.type in ("distance", "coupling") else len(self.components)


@dataclass(frozen=True)
class ModeCondition:
    """A sign condition on frame positions that picks one kinematic branch.

    Two kinds:

    * ``side``: ``{point: B, line: [A, C], side: left|right}``, point B lies
      left/right of the directed line A -> C in the xy plane, i.e. the sign of
      ``((C - A) x (B - A))_z`` is + for left, - for right;
    * ``above``: ``{point: B, above: A, axis: y}`` (or ``below``), the sign of
      ``(B - A)[axis]``.
    """

    point: str
    reference: tuple[str, ...]
    kind: str
    sign: int
    axis: int = 1
    text: str = ""

    @property
    def frames(self) -> tuple[str, ...]:
        return (self.point, *self.reference)

    def signed_value(self, positions: Mapping[str, Sequence[float]]) -> float:
        """The quantity whose sign must equal ``self.sign`` (positions in m)."""
        point = positions[self.point]
        if self.kind == "side":
            start, end = (positions[name] for name in self.reference)
            line = (end[0] - start[0], end[1] - start[1])
            offset = (point[0] - start[0], point[1] - start[1])
            return line[0] * offset[1] - line[1] * offset[0]
        return point[self.axis] - positions[self.reference[0]][self.axis]

    def holds(self, positions: Mapping[str, Sequence[float]]) -> bool:
        return self.sign * self.signed_value(positions) > 0.0


@dataclass(frozen=True)
class RobotDescription:
    """Everything the YAML file says, validated for form (not yet against the URDF).

    Every section is typed; a key the parser does not know is an error naming
    the file and the key path. The optional sections (module in parentheses):
    ``analytic`` (the closed form's name, :mod:`pardyn.kinematics.analytic`),
    ``counterweights`` (prismatic base joints whose drive ``ia`` is a
    counterweight, :mod:`pardyn.plants.mujoco_plant`), ``dynamics``
    (:mod:`pardyn.description.dynamics`), ``rotors`` (:mod:`pardyn.description.rotors`),
    ``excitation`` (:mod:`pardyn.description.excitation`), ``limits`` (:mod:`pardyn.description.limits`),
    ``inertials`` (:mod:`pardyn.description.inertials`).
    """

    name: str
    source: Path
    urdf: Path
    task_names: tuple[str, ...]
    task_joints: tuple[str, ...]
    actuated: tuple[str, ...]
    sensed: tuple[str, ...]
    closures: tuple[Closure, ...]
    working_mode: tuple[ModeCondition, ...]
    assembly_mode: tuple[ModeCondition, ...]
    home_task: tuple[float, ...]
    home_joints: dict[str, float]
    analytic: str | None = None
    counterweights: tuple[str, ...] = ()
    dynamics: DynamicsSection | None = None
    rotors: RotorsSection | None = None
    excitation: ExcitationSettings | None = None
    limits: Limits = field(default_factory=Limits)
    transmissions: Any = None
    """The ``transmissions:`` section, a :class:`pardyn.dynamics.transmission.Transmission` (or None)."""
    locked: str | dict[str, float] | None = None
    """``locked:``: ``"others"`` or ``{joint: value}`` (rad, m), resolved on the tree (:mod:`pardyn.description.model`)."""
    task_frame: str | None = None
    """Frame whose pose components are the task (``task_names`` are then among
    x y z rx ry rz, :mod:`pardyn.kinematics.task`); ``None``: the task is ``task_joints``."""
    tree_format: str = "urdf"
    """Format of the tree file ``urdf``: ``"urdf"`` or ``"mjcf"``."""
    massless_links: tuple[str, ...] = ()
    """Links whose inertia is set to zero (placeholders of a loop cut)."""
    notes: tuple[str, ...] = ()
    """What the loader decided for the user (logged, shown by ``pardyn robots --describe``)."""
    home_task_given: bool = True
    """Whether ``home.task`` was given (frame tasks may omit it: home is then the assembled guess)."""
    springs: tuple[tuple[str, float, float], ...] = ()
    """Joint springs ``(joint, stiffness, reference)`` (:mod:`pardyn.description.springs`, or the MJCF's)."""
    inertials: tuple[BodyValues, ...] = ()
    """``inertials:``: bodies whose inertial the YAML gives, written into the tree (:mod:`pardyn.description.inertials`)."""
    base: str | None = None
    """``base:`` where an MJCF's free joint is fixed: ``"qpos0"`` (``base: fixed``, the file's pose) or a keyframe's
    name (``base: {keyframe: NAME}``); None: the file has no free joint (:func:`pardyn.description.mjcf.read_mjcf`)."""
    description_format: str = "pardyn"
    """Which file format the description came from (``pardyn``, ``gepetto``, ``mjcf``)."""

    @property
    def redundancy(self) -> int:
        """Degree of actuation redundancy: actuators minus degrees of freedom."""
        return len(self.actuated) - len(self.task_names)


def _parse_closure(reader: YamlFields, raw: Any, index: int) -> Closure:
    key = f"closures[{index}]"
    item = reader.mapping(raw, key)
    reader.check_keys(item, key, {"name", "frames", "type", "components", "length", "joints", "coefficients"})
    if item.get("type") == "coupling":  # q_b = c0 + c1 q_a (+ c2 q_a^2 ... + c4 q_a^4) between two joints
        joints = reader.strings(item.get("joints"), f"{key}.joints")
        raw = item.get("coefficients")
        if not (isinstance(raw, list) and 2 <= len(raw) <= MAX_COUPLING_COEFFICIENTS):
            raise reader.fail(f"{key}.coefficients", f"expected 2 to {MAX_COUPLING_COEFFICIENTS} numbers "
                                                     f"[c0, c1, ...] of q_b = c0 + c1 q_a + c2 q_a^2 ..., got {raw!r}")
        coefficients = reader.vector(raw, f"{key}.coefficients", len(raw))
        if len(joints) != 2:
            raise reader.fail(f"{key}.joints", f"expected two joint names [a, b] (q_b = c0 + c1 q_a), got {list(joints)}")
        name = reader.string(item.get("name", f"closure{index}"), f"{key}.name")
        return coupling(name, joints[0], joints[1], *(float(c) for c in coefficients))
    frames = reader.strings(item.get("frames"), f"{key}.frames")
    if len(frames) != 2:
        raise reader.fail(f"{key}.frames", f"expected two frame names, got {list(frames)}")
    kind = reader.string(item.get("type"), f"{key}.type")
    if kind not in CLOSURE_TYPES:
        raise reader.fail(f"{key}.type", f"unknown type {kind!r}; known: {sorted(CLOSURE_TYPES)}")
    name = reader.string(item.get("name", f"closure{index}"), f"{key}.name")
    length = None
    if kind == "distance":
        if "length" not in item:
            raise reader.fail(key, "a distance closure needs 'length' (m)")
        length = reader.number(item["length"], f"{key}.length")
        if length <= 0.0:
            raise reader.fail(f"{key}.length", f"must be positive, got {length}")
        components: tuple[int, ...] = ()
    else:
        names = reader.strings(item.get("components"), f"{key}.components") or CLOSURE_TYPES[kind]
        bad = [c for c in names if c not in COMPONENT_NAMES]
        if bad:
            raise reader.fail(f"{key}.components", f"unknown {bad}; known: {list(COMPONENT_NAMES)}")
        components = tuple(COMPONENT_NAMES.index(c) for c in names)
    return Closure(name=name, frames=(frames[0], frames[1]), type=kind, components=components, length=length)


MAX_COUPLING_COEFFICIENTS = 5
"""A coupling polynomial has at most five coefficients (degree 4), as MuJoCo's ``polycoef``."""


def coupling(name: str, joint_a: str, joint_b: str, c0: float, c1: float, *higher: float) -> Closure:
    """The closure ``q_b = c0 + c1 q_a + c2 q_a^2 + ...`` (one row ``q_b - P(q_a)``: a gear, a linkage's
    coupling; ``higher`` up to ``c4``; trailing zeros dropped, so a linear one keeps ``(c0, c1)``)."""
    coefficients = [c0, c1, *higher]
    while len(coefficients) > 2 and coefficients[-1] == 0.0:
        coefficients.pop()
    return Closure(name=name, frames=(), type="coupling", components=(), joints=(joint_a, joint_b),
                   coefficients=tuple(float(c) for c in coefficients))


def _parse_condition(reader: YamlFields, raw: Any, key: str) -> ModeCondition:
    item = reader.mapping(raw, key)
    reader.check_keys(item, key, {"point", "line", "side", "above", "below", "axis"})
    point = reader.string(item.get("point"), f"{key}.point")
    text = ", ".join(f"{k}: {v}" for k, v in item.items())
    if "line" in item:
        line = reader.strings(item["line"], f"{key}.line")
        if len(line) != 2:
            raise reader.fail(f"{key}.line", f"expected two frame names, got {list(line)}")
        side = item.get("side")
        if side not in ("left", "right"):
            raise reader.fail(f"{key}.side", f"expected 'left' or 'right', got {shown(side)}")
        return ModeCondition(point, line, "side", 1 if side == "left" else -1, text=text)
    for word, sign in (("above", 1), ("below", -1)):
        if word in item:
            reference = reader.string(item[word], f"{key}.{word}")
            axis = item.get("axis", "y")
            if not isinstance(axis, str) or axis not in _AXES:
                raise reader.fail(f"{key}.axis", f"expected one of x, y, z, got {shown(axis)}")
            return ModeCondition(point, (reference,), "above", sign, axis=_AXES[axis], text=text)
    raise reader.fail(key, "a condition needs 'line' + 'side', or 'above'/'below' (+ 'axis')")


def _parse_task(
    reader: YamlFields, raw: Any, actuated: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...], str | None]:
    """``task:`` in one of its three forms -> (task names, task joints, task frame).

    * ``{x: platform_x, ...}``: coordinates of the platform's virtual chain;
    * ``{frame: effector, coordinates: [x, y, z]}``: pose components of a frame
      (:mod:`pardyn.kinematics.task`);
    * ``actuated``: the actuated joints themselves.
    """
    if raw == "actuated":
        return actuated, actuated, None
    task = reader.mapping(raw, "task")
    if not task:
        raise reader.fail("task", "at least one task coordinate is needed")
    if "frame" in task:
        reader.check_keys(task, "task", {"frame", "coordinates"})
        frame = reader.string(task["frame"], "task.frame")
        coordinates = reader.names(task.get("coordinates"), "task.coordinates")
        bad = [c for c in coordinates if c not in COMPONENT_NAMES]
        if bad:
            raise reader.fail("task.coordinates", f"unknown {bad}; known: {list(COMPONENT_NAMES)}")
        return tuple(coordinates), (), frame
    names = tuple(reader.string(k, "task") for k in task)
    return names, tuple(reader.string(v, f"task.{k}") for k, v in task.items()), None


def _parse_locked(reader: YamlFields, raw: Any) -> str | dict[str, float] | None:
    """``locked: others``, ``[joint, ...]`` (at 0) or ``{joint: value | lower | upper}``; joint names are checked
    on the tree."""
    if raw is None or raw == "others":
        return raw
    if isinstance(raw, list):
        return dict.fromkeys(reader.strings(raw, "locked"), 0.0)
    if isinstance(raw, Mapping):  # a value (rad, m), or "lower"/"upper": the joint's limit (adaptive mechanisms)
        return {reader.string(k, "locked"): v if v in ("lower", "upper") else reader.number(v, f"locked.{k}")
                for k, v in raw.items()}
    raise reader.fail("locked", f"expected 'others', a list of joints or {{joint: value}}, got {shown(raw)}")


def _parse_base(reader: YamlFields, raw: Any) -> str | None:
    """``base: fixed`` -> ``"qpos0"``; ``base: {keyframe: NAME}`` -> ``NAME``; absent -> None."""
    if raw is None:
        return None
    if raw == "fixed":
        return "qpos0"
    if isinstance(raw, Mapping) and set(raw) == {"keyframe"}:
        return reader.string(raw["keyframe"], "base.keyframe")
    raise reader.fail("base", f"expected 'fixed' (a free joint held at the file's pose) or {{keyframe: NAME}}, got "
                              f"{shown(raw)}")


def parse_description(raw: Any, *, source: Path) -> RobotDescription:
    """Validate the content of a robot YAML file (already parsed) and return it typed."""
    from pardyn.description.transmission import parse_transmissions  # noqa: PLC0415 - its type is dynamics'

    reader = YamlFields(source)
    top = reader.mapping(raw, "<top>")
    reader.check_keys(top, "<top>", _TOP_KEYS)
    name = reader.string(top.get("name", source.stem), "name")
    if "urdf" not in top:
        raise reader.fail("urdf", "missing: path of the URDF tree")
    urdf = resolve_path(reader.string(top["urdf"], "urdf"), relative_to=source.parent)
    if not urdf.is_file():
        raise reader.fail("urdf", f"file not found: {urdf}")
    tree_format = _tree_format(urdf)

    actuated = reader.strings(top.get("actuated"), "actuated")
    task_names, task_joints, task_frame = _parse_task(reader, top.get("task"), actuated)

    if not actuated:
        raise reader.fail("actuated", "at least one actuated joint is needed")
    if len(actuated) < len(task_names):
        raise reader.fail(
            "actuated",
            f"{len(actuated)} actuated joints cannot drive {len(task_names)} task coordinates",
        )
    sensed = reader.strings(top.get("sensed"), "sensed")
    notes = []
    if urdf.suffix.lower() == ".urdf":  # names checked before the sections that use them (limits, dynamics)
        tree = check_joint_names(urdf, source, {"task": task_joints, "actuated": actuated, "sensed": sensed})
        if tree.unbounded:
            notes.append(f"revolute joints {list(tree.unbounded)} of {urdf.name} have no lower/upper limit: "
                         "unbounded (as continuous joints)")
    raw_closures = top.get("closures") or []
    serial = not raw_closures
    if serial and tree_format == "urdf" and task_frame is None and set(actuated) != set(task_joints):
        raise reader.fail(
            "task",
            f"a serial robot (no closures) has its actuated joints as task coordinates: task lists "
            f"{list(task_joints)}, actuated {list(actuated)}",
        )
    task_is_actuated = set(task_joints) == set(actuated)
    for label, names in (("actuated", actuated), ("sensed", sensed)):
        clash = sorted(set(names) & set(task_joints))
        if clash and not (task_is_actuated and label == "actuated"):
            raise reader.fail(label, f"{clash} are task coordinates of the virtual chain")
    both = sorted(set(actuated) & set(sensed))
    if both:
        raise reader.fail("sensed", f"{both} are already actuated (actuated joints are always measured)")

    if not isinstance(raw_closures, list):
        raise reader.fail("closures", "expected a list")
    closures = tuple(_parse_closure(reader, item, i) for i, item in enumerate(raw_closures))
    closures = tuple(sorted(closures, key=lambda c: c.type == "coupling"))  # their rows come last (LoopClosures)
    names = [c.name for c in closures]
    if len(set(names)) != len(names):
        raise reader.fail("closures", f"closure names must be unique, got {names}")

    modes = {}
    for label in ("working_mode", "assembly_mode"):
        items = top.get(label) or []
        if not isinstance(items, list):
            raise reader.fail(label, "expected a list of conditions")
        modes[label] = tuple(_parse_condition(reader, c, f"{label}[{i}]") for i, c in enumerate(items))

    home = reader.mapping(top.get("home", {}), "home")
    reader.check_keys(home, "home", {"task", "joints"})
    home_task_raw = reader.mapping(home.get("task", {}), "home.task")
    unknown = sorted(set(home_task_raw) - set(task_names))
    if unknown:
        raise reader.fail("home.task", f"unknown task coordinates {unknown}; known: {list(task_names)}")
    home_joints_raw = reader.mapping(home.get("joints", {}) or {}, "home.joints")
    home_joints = {
        reader.string(k, "home.joints"): reader.number(v, f"home.joints.{k}")
        for k, v in home_joints_raw.items()
    }
    # A joint task's coordinate missing from home.task is its joint's home.joints value (what `robots --init`
    # writes from a keyframe), else 0: was 0 always, which overrode home.joints (Cassie's knees at 0 instead of
    # the keyframe's -1.2 rad: the loops assembled 600 rad away, at a singularity).
    defaults = dict(zip(task_names, task_joints)) if task_frame is None else {}
    home_task = tuple(reader.number(home_task_raw.get(n, home_joints.get(defaults.get(n, ""), 0.0)), f"home.task.{n}")
                      for n in task_names)

    analytic = reader.string(top["analytic"], "analytic") if top.get("analytic") is not None else None
    counterweights = reader.strings(top.get("counterweights"), "counterweights")
    clash = sorted(set(counterweights) & set(task_joints))
    if clash:
        raise reader.fail("counterweights", f"{clash} are task coordinates of the virtual chain")
    inertials = parse_bodies(reader, top.get("inertials"), "inertials")
    return RobotDescription(
        name=name,
        source=source,
        urdf=urdf,
        task_names=task_names,
        task_joints=task_joints,
        actuated=actuated,
        sensed=sensed,
        closures=closures,
        working_mode=modes["working_mode"],
        assembly_mode=modes["assembly_mode"],
        home_task=home_task,
        home_joints=home_joints,
        analytic=analytic,
        counterweights=counterweights,
        dynamics=(None if top.get("dynamics") is None
                  else parse_dynamics(reader, top["dynamics"], task_joints=task_joints, actuated=actuated)),
        rotors=None if top.get("rotors") is None else parse_rotors(reader, top["rotors"], actuated=actuated),
        excitation=(None if top.get("excitation") is None
                    else parse_excitation(reader, top["excitation"], task_names=task_names)),
        limits=parse_limits(reader, top.get("limits"), actuated=actuated),
        transmissions=parse_transmissions(reader, top.get("transmissions"), actuated=actuated),
        locked=_parse_locked(reader, top.get("locked")),
        task_frame=task_frame,
        home_task_given=bool(home_task_raw) or task_frame is None,
        tree_format=tree_format,
        springs=parse_springs(reader, top.get("springs")),
        base=_parse_base(reader, top.get("base")),
        inertials=inertials,
        notes=(*notes, *((f"inertials: {[link for entry in inertials for link in entry.links]} take their mass, com "
                          f"and inertia from this YAML, not from {urdf.name}",) if inertials else ())),
    )


def _tree_format(path: Path) -> str:
    """``"mjcf"`` when the tree file's root element is ``<mujoco>``, else ``"urdf"`` (the ``urdf:`` key takes
    either: a vendor's MJCF keeps its joints, bodies and equalities; the YAML adds what pardyn needs)."""
    with open(path, "rb") as file:
        head = file.read(4096).decode("utf-8", errors="replace")
    return "mjcf" if re.search(r"<mujoco[\s>]", head) else "urdf"
