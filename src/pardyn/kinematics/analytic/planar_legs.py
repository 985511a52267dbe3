"""The planar leg machinery shared by the planar closed forms (:mod:`.five_bar`, :mod:`.dualv`, :mod:`.rrr3`).

Every leg ``i`` of these robots is a planar 2R chain from the base (the URDF
conventions of ``tools/generate_planar_urdf.py``, axes along +z, angles CCW)::

    A_i --q1 (leg{i}_joint1, absolute)--> B_i --q2 (leg{i}_joint2, relative)--> C_i [--q3 (leg{i}_joint3)]

    B_i = A_i + R(psi1 + q1) t2                     # (2,) t2: joint2 origin in link1 (m)
    C_i = B_i + R(psi1 + q1 + psi2 + q2) t3         # (2,) t3: tip in link2 (m)
    psi1 + q1 + psi2 + q2 + psi3 + q3 + psi_tip = angle of the platform attachment frame

where ``psi`` are the yaws of the URDF joint and frame placements (zero in the
shipped URDFs), so that with ``L1 = |t2|``, ``L2 = |t3|`` these are the legs of
Briot 2015 eq. (53) and Zubizarreta 2010 eq. (31). The platform is the virtual
chain ``platform_x`` -> ``platform_y`` [-> ``platform_phi``]; leg ``i`` meets it at
the attachment frame the robot's YAML closure pairs with ``leg{i}_tip``:
``C_i = (x, y) + R(phi) c_i`` with ``c_i`` the frame's offset in the platform.
All these numbers are read from the pinocchio model, never copied.

Branches. Each 2R inverse problem (point ``C_i`` given) has two roots, elbow
``B_i`` left (+1) or right (-1) of the directed line ``A_i -> C_i``; each
two-circle intersection (forward problem of a five-bar loop) has two roots,
``C`` left (+1) or right (-1) of ``B_j -> B_k``. Candidates are tried with
the labels of the robot's home configuration first, and the first one for
which the YAML conditions hold (``working_mode`` for the inverse problem,
``assembly_mode`` for the forward problem) is returned; if none does,
:class:`~pardyn.errors.WorkingModeError`.

Angles: every revolute coordinate of an answer is wrapped to within pi of its
value at the robot's home, like the generic Newton solver that starts there
(compare configurations modulo 2 pi).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.errors import ConvergenceError, DescriptionError, InputError, WorkingModeError
from pardyn.kinematics.analytic.closed_form import AnalyticKinematics
from pardyn.kinematics.analytic.planar_geometry import TOLERANCE, angle_of, cross, format_point, rotate
from pardyn.kinematics.solver import revolute_mask

if TYPE_CHECKING:
    from pardyn.mechanism import Mechanism

__all__ = ["PlanarClosedForm", "PlanarLeg", "PlatformChain"]


def _yaw(placement: pin.SE3, what: str, source: str) -> float:
    rotation = placement.rotation
    if abs(rotation[2, 2] - 1.0) > 1e-9:
        raise DescriptionError(
            f"{source}: {what}: the placement rotates out of the xy plane; planar closed forms need yaw-only rotations"
        )
    return math.atan2(rotation[1, 0], rotation[0, 0])


@dataclass(frozen=True)
class PlatformChain:
    """The platform's virtual chain ``platform_x -> platform_y [-> platform_phi]``.

    Attributes:
        x, y, phi: positions of the task coordinates in the task vector (phi None without rotation).
        joint_id: pinocchio id of the last joint of the chain (the platform body's joint).
    """

    x: int
    y: int
    phi: int | None
    joint_id: int

    @classmethod
    def from_robot(cls, robot: Mechanism) -> PlatformChain:
        model, source = robot.model, str(robot.source)
        kinds = {"JointModelPX": "x", "JointModelPY": "y", "JointModelRZ": "phi"}
        found: dict[str, int] = {}
        ids = []
        for position, name in enumerate(robot.description.task_joints):
            joint_id = model.getJointId(name)
            kind = kinds.get(model.joints[joint_id].shortname())
            if kind is None or kind in found:
                raise DescriptionError(
                    f"{source}: task: {name!r} is a {model.joints[joint_id].shortname()}; the planar closed "
                    "forms need a prismatic x, a prismatic y and optionally a revolute z joint"
                )
            placement = model.jointPlacements[joint_id]
            if not placement.isIdentity(1e-12):
                raise DescriptionError(f"{source}: task: joint {name!r} must have an identity origin in the URDF")
            found[kind] = position
            ids.append(joint_id)
        if "x" not in found or "y" not in found:
            raise DescriptionError(f"{source}: task: the planar closed forms need platform x and y coordinates")
        deepest = max(ids, key=lambda j: len(model.supports[j]))
        if sorted(j for j in model.supports[deepest] if j != 0) != sorted(ids):
            raise DescriptionError(
                f"{source}: task: the task joints {list(robot.description.task_joints)} are not one serial "
                "chain from the base"
            )
        return cls(x=found["x"], y=found["y"], phi=found.get("phi"), joint_id=deepest)

    def angle(self, pose: np.ndarray) -> float:
        """Platform orientation (rad), 0 without a rotation coordinate."""
        return 0.0 if self.phi is None else float(pose[self.phi])

    def position(self, pose: np.ndarray) -> np.ndarray:
        """Platform reference point (x, y) (2,), m."""
        return np.array([pose[self.x], pose[self.y]])

    def pose(self, position: np.ndarray, angle: float) -> np.ndarray:
        """Task vector (n_task,) from the platform point (2,) and orientation (rad)."""
        pose = np.zeros(2 if self.phi is None else 3)
        pose[self.x], pose[self.y] = position
        if self.phi is not None:
            pose[self.phi] = angle
        return pose


@dataclass(frozen=True)
class PlanarLeg:
    """A planar 2R leg ``A -> B -> C`` (optionally a platform joint at C), geometry from the URDF.

    Attributes:
        number: leg number ``i`` of ``leg{i}_joint*``.
        joints: indices in ``q`` of joint1, joint2 and joint3 (None without a platform joint).
        base: ``A`` (2,), m.
        offset1: ``psi1 + angle(t2)``, so that the angle of ``B - A`` is ``q1 + offset1`` (rad).
        proximal: ``L1 = |A B|`` (m).
        offset2: ``psi2 + angle(t3) - angle(t2)``: the angle of ``C - B`` is
            ``q1 + q2 + offset1 + offset2`` (rad).
        distal: ``L2 = |B C|`` (m).
        offset3: yaw of the tip frame is ``q1 + q2 + q3 + offset3`` (rad).
        attachment: name of the platform frame the leg's tip closes on.
        anchor: that frame's position in the platform frame ``c_i`` (2,), m.
        anchor_yaw: its yaw in the platform frame (rad).
    """

    number: int
    joints: tuple[int, int, int | None]
    base: np.ndarray
    offset1: float
    proximal: float
    offset2: float
    distal: float
    offset3: float
    attachment: str
    anchor: np.ndarray
    anchor_yaw: float

    @classmethod
    def from_robot(cls, robot: Mechanism, number: int, platform: PlatformChain) -> PlanarLeg:
        """Read leg ``number`` from the pinocchio model and the YAML closures."""
        model, source = robot.model, str(robot.source)
        names = [f"leg{number}_joint{j}" for j in (1, 2, 3)]
        ids = [model.getJointId(n) if model.existJointName(n) else None for n in names]
        if ids[0] is None or ids[1] is None:
            raise DescriptionError(f"{robot.urdf}: leg {number}: missing joints {names[:2]}")
        for name, joint_id in zip(names, ids):
            if joint_id is not None and model.joints[joint_id].shortname() != "JointModelRZ":
                raise DescriptionError(f"{robot.urdf}: {name} must be revolute about +z (axis 0 0 1)")
        if model.parents[ids[0]] != 0 or model.parents[ids[1]] != ids[0]:
            raise DescriptionError(
                f"{robot.urdf}: leg {number} is not the chain base -> {names[0]} -> {names[1]}"
            )
        place1, place2 = model.jointPlacements[ids[0]], model.jointPlacements[ids[1]]
        t2 = place2.translation[:2].copy()
        tip_name = f"leg{number}_tip"
        if not model.existFrame(tip_name):
            raise DescriptionError(f"{robot.urdf}: missing frame {tip_name!r}")
        tip = model.frames[model.getFrameId(tip_name)]
        if ids[2] is not None and tip.parentJoint == ids[2] and model.parents[ids[2]] == ids[1]:
            place3 = model.jointPlacements[ids[2]]
            if np.linalg.norm(tip.placement.translation[:2]) > TOLERANCE:
                raise DescriptionError(
                    f"{robot.urdf}: frame {tip_name!r} must lie on the axis of {names[2]}"
                )
            t3 = place3.translation[:2].copy()
            psi3 = _yaw(place3, names[2], source) + _yaw(tip.placement, tip_name, source)
        elif tip.parentJoint == ids[1]:
            ids[2] = None
            t3 = tip.placement.translation[:2].copy()
            psi3 = math.nan
        else:
            raise DescriptionError(
                f"{robot.urdf}: frame {tip_name!r} must be carried by {names[1]} or {names[2]}"
            )
        closure = next((c for c in robot.description.closures if tip_name in c.frames), None)
        if closure is None:
            raise DescriptionError(f"{source}: closures: no closure involves {tip_name!r}")
        attachment = closure.frames[0] if closure.frames[1] == tip_name else closure.frames[1]
        frame = model.frames[model.getFrameId(attachment)]
        if frame.parentJoint != platform.joint_id:
            raise DescriptionError(
                f"{source}: closures: {attachment!r} (closing leg {number}) must be fixed to the platform"
            )
        has_rz = 5 in closure.components
        if (ids[2] is not None) != has_rz:
            raise DescriptionError(
                f"{source}: closures: {closure.name!r}: a leg with a platform joint needs a planar (x y rz) "
                "closure and a leg without one a 2D (x y) closure for the planar closed forms"
            )
        offset1 = _yaw(place1, names[0], source) + angle_of(t2)
        return cls(
            number=number,
            joints=(model.joints[ids[0]].idx_q, model.joints[ids[1]].idx_q,
                    None if ids[2] is None else model.joints[ids[2]].idx_q),
            base=place1.translation[:2].copy(),
            offset1=offset1,
            proximal=float(np.linalg.norm(t2)),
            offset2=_yaw(place2, names[1], source) + angle_of(t3) - angle_of(t2),
            distal=float(np.linalg.norm(t3)),
            offset3=_yaw(place1, names[0], source) + _yaw(place2, names[1], source) + psi3,
            attachment=attachment,
            anchor=frame.placement.translation[:2].copy(),
            anchor_yaw=_yaw(frame.placement, attachment, source),
        )

    # ---------------------------------------------------------------- forward
    # (scalar math on floats, one small array per answer: these run at every sample of a 1 kHz loop)
    @functools.cached_property
    def _base_xy(self) -> tuple[float, float]:
        return float(self.base[0]), float(self.base[1])

    def _elbow_xy(self, q1: float) -> tuple[float, float]:
        angle = q1 + self.offset1
        x, y = self._base_xy
        return x + self.proximal * math.cos(angle), y + self.proximal * math.sin(angle)

    def elbow(self, q1: float) -> np.ndarray:
        """``B_i`` (2,), m, from the proximal angle."""
        return np.array(self._elbow_xy(q1))

    def tip(self, q1: float, q2: float) -> np.ndarray:
        """``C_i`` (2,), m: Zubizarreta 2010 eq. (31), Briot 2015 eq. (53) lines 1-2."""
        angle = q1 + q2 + self.offset1 + self.offset2
        x, y = self._elbow_xy(q1)
        return np.array([x + self.distal * math.cos(angle), y + self.distal * math.sin(angle)])

    def side(self, q1: float, q2: float) -> int:
        """Working-mode label: +1 if ``B_i`` is left of ``A_i -> C_i``, else -1."""
        return 1 if cross(self.tip(q1, q2) - self.base, self.elbow(q1) - self.base) > 0.0 else -1

    # ---------------------------------------------------------------- inverse
    def passive(self, q1: float, point: np.ndarray, frame_angle: float) -> tuple[float, float]:
        """``q2`` and ``q3`` (rad) reaching ``C_i = point`` with ``q1`` given: Briot 2015 eq. (58).

        ``q2 = angle(C_i - B_i) - q1`` and ``q3 = phi + k_bar pi - q1 - q2``
        (with this URDF's offsets); ``q3`` is NaN for a leg without platform joint.
        """
        x, y = self._elbow_xy(q1)
        q2 = math.atan2(point[1] - y, point[0] - x) - q1 - self.offset1 - self.offset2
        q3 = math.nan if self.joints[2] is None else frame_angle - q1 - q2 - self.offset3
        return q2, q3

    def inverse(self, point: np.ndarray, frame_angle: float, side: int, *, what: str) -> tuple[float, float, float]:
        """``(q1, q2, q3)`` (rad) putting the tip at ``point`` (2,) with elbow ``side`` (+1 left).

        The 2R inverse problem, Briot 2015 eq. (54) solved for ``q1``
        (Zubizarreta 2010 eq. 35 in half-angle form): with ``r = |C - A|``,
        ``cos beta = (L1^2 + r^2 - L2^2) / (2 L1 r)`` and
        ``angle(B - A) = angle(C - A) + side * beta``; then eq. (58).

        Raises:
            ConvergenceError: ``r`` is outside ``[|L1 - L2|, L1 + L2]`` (negative discriminant).
        """
        reach = point - self.base
        distance = math.hypot(reach[0], reach[1])
        adjacent = self.proximal**2 + distance**2 - self.distal**2
        discriminant = (2.0 * self.proximal * distance) ** 2 - adjacent**2
        if discriminant < 0.0 or distance < TOLERANCE:
            n = self.number
            raise ConvergenceError(
                f"{what}: leg {n} cannot reach C_{n} = {format_point(point)} m: |A_{n}C_{n}| = {distance:.6g} m is outside "
                f"[{abs(self.proximal - self.distal):.6g}, {self.proximal + self.distal:.6g}] m "
                f"(negative discriminant {discriminant:.3g} m^4 of the 2R inverse problem, Briot 2015 eq. 54 / "
                f"Zubizarreta 2010 eq. 35)"
            )
        beta = math.atan2(math.sqrt(discriminant), adjacent)
        q1 = angle_of(reach) + side * beta - self.offset1
        q2, q3 = self.passive(q1, point, frame_angle)
        return q1, q2, q3


class PlanarClosedForm(AnalyticKinematics):
    """Common part of the planar closed forms: legs, platform, branch selection, wrapping.

    Subclasses implement ``forward``; :meth:`inverse` (one 2R inverse
    problem per leg) is shared.
    """

    def __init__(self, robot: Mechanism) -> None:
        super().__init__(robot)
        self.platform = PlatformChain.from_robot(robot)
        numbers = sorted(int(n[3:-7]) for n in robot.joint_names if n.startswith("leg") and n.endswith("_joint1"))
        self.legs = tuple(PlanarLeg.from_robot(robot, number, self.platform) for number in numbers)
        actuated = list(robot.actuated_names)
        missing = [f"leg{leg.number}_joint1" for leg in self.legs if f"leg{leg.number}_joint1" not in actuated]
        if missing:
            raise DescriptionError(f"{robot.source}: actuated: the closed form needs {missing} actuated")
        self._actuated = np.array([actuated.index(f"leg{leg.number}_joint1") for leg in self.legs])  # (n_legs,)
        self._angles = revolute_mask(robot.model)
        self._home = robot.home.copy()
        self._home_sides = tuple(  # elbow labels of home, tried first
            leg.side(self._home[leg.joints[0]], self._home[leg.joints[1]]) for leg in self.legs
        )

    # ---------------------------------------------------------------- helpers
    def _vector(self, values: np.ndarray | Sequence[float], size: int, what: str) -> np.ndarray:
        array = np.asarray(values, dtype=float).reshape(-1)
        if array.shape != (size,) or not np.all(np.isfinite(array)):
            raise InputError(f"{self.robot.name}: {what}: expected {size} finite values, got {array.tolist()}")
        return array

    def _describe(self, values: np.ndarray, names: Sequence[str]) -> str:
        return "{" + ", ".join(f"{n}: {v:.6g}" for n, v in zip(names, values)) + "}"

    def attachments(self, pose: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World points ``C_i`` (n_legs, 2), m, and frame angles (n_legs,), rad, of the platform attachments."""
        angle = self.platform.angle(pose)
        position = self.platform.position(pose)
        points = np.array([position + rotate(angle, leg.anchor) for leg in self.legs])
        return points, np.array([angle + leg.anchor_yaw for leg in self.legs])

    def _wrapped(self, q: np.ndarray) -> np.ndarray:
        """Revolute coordinates wrapped to within pi of home, in place; returns ``q``."""
        home = self._home[self._angles]
        q[self._angles] = home + (q[self._angles] - home + math.pi) % (2.0 * math.pi) - math.pi
        return q

    def _configuration(self, pose: np.ndarray, joints: Sequence[tuple[float, float, float]]) -> np.ndarray:
        """The tree configuration (nv,) from the pose and ``(q1, q2, q3)`` of every leg."""
        q = np.zeros(self.robot.nv)
        q[self.robot.task_indices] = pose
        for leg, values in zip(self.legs, joints):
            for index, value in zip(leg.joints, values):
                if index is not None:
                    q[index] = value
        return self._wrapped(q)

    def _with_readings(self, pose: np.ndarray, actuated: np.ndarray) -> np.ndarray:
        """Configuration (nv,) with the actuated readings kept and the passive joints from eq. (58)."""
        points, frames = self.attachments(pose)
        joints = []
        for leg, q1, point, frame in zip(self.legs, actuated[self._actuated], points, frames):
            joints.append((q1, *leg.passive(q1, point, frame)))
        return self._configuration(pose, joints)

    @staticmethod
    @functools.cache
    def _ordered(home: tuple[int, ...]) -> list[tuple[int, ...]]:
        """Every sign combination, home's first, then by number of flips from home."""
        combos = itertools.product(*[(s, -s) for s in home])
        return sorted(combos, key=lambda c: sum(a != b for a, b in zip(c, home)))

    def _first_on_branch(
        self,
        candidates: Iterable[np.ndarray],
        violations: Callable[[np.ndarray], list[str]],
        label: str,
        given: str,
    ) -> np.ndarray:
        """First configuration of ``candidates`` (iterable of (nv,)) with no ``violations``."""
        reasons = []
        for q in candidates:
            broken = violations(q)
            if not broken:
                return q
            reasons.append(broken)
        raise WorkingModeError(
            f"{self.robot.name}: no closed-form root of {given} is in the robot's {label} "
            f"({self.robot.source}); violated conditions of each root: {reasons}"
        )

    # ---------------------------------------------------------------- inverse
    def inverse(self, task: np.ndarray) -> np.ndarray:
        """Every joint (nv,) from the task coordinates (n_task,): one 2R inverse problem per leg.

        Briot 2015 eqs. (53)-(54), (58); Zubizarreta 2010 eqs. (35)-(36).

        Raises:
            ConvergenceError: a leg cannot reach its attachment point.
            WorkingModeError: no elbow combination satisfies the YAML ``working_mode``.
        """
        pose = self._vector(task, len(self.robot.task_names), "task")
        given = f"task {self._describe(pose, self.robot.task_names)}"
        points, frames = self.attachments(pose)
        roots = []
        for leg, point, frame in zip(self.legs, points, frames):
            roots.append({s: leg.inverse(point, frame, s, what=f"{self.robot.name}: {given}") for s in (1, -1)})
        candidates = (
            self._configuration(pose, [root[s] for root, s in zip(roots, sides)])
            for sides in self._ordered(self._home_sides)
        )
        return self._first_on_branch(candidates, self.robot.working_mode_violations, "working_mode", given)
