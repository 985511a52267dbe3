"""The mechanism: a robot's description, pinocchio tree, coordinate names and indices, closure equations.

What a robot *is*, as found at load (:func:`pardyn.kinematics.structure.analyse_structure`), with nothing that
solves or evaluates dynamics: the kinematics, dynamics, parameters and kernels type against it, and
:func:`pardyn.robot.load_robot` assembles it with its solvers, closed forms, nominal parameters and kernels into
a :class:`pardyn.robot.Robot` (``robot.mechanism``). Like pink's ``Configuration``, it imports almost nothing.

>>> from pardyn import load_robot
>>> mechanism = load_robot("dualv").mechanism
>>> mechanism.joint_dict(mechanism.home)["leg1_joint1"]     # rad
>>> mechanism.task_values(mechanism.home)                   # x (m), y (m), phi (rad)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pinocchio as pin

from pardyn.description.model import joint_names
from pardyn.errors import InputError
from pardyn.kinematics.closure import LoopClosures
from pardyn.kinematics.solver import revolute_mask
from pardyn.resources import robots_directory

if TYPE_CHECKING:
    from pardyn.description.config import ModeCondition
    from pardyn.kinematics.structure import Structure

__all__ = ["Mechanism"]


class Mechanism:
    """A robot's tree and loops, named and indexed.

    Attributes:
        structure: what the load found (:class:`pardyn.kinematics.structure.Structure`).
        description: the validated YAML content, frame names as the model's.
        name: the robot's name.
        model: pinocchio model of the URDF tree (locked joints removed); it carries no parameters that anything
            evaluates (dynamics take theirs explicitly).
        data: the pinocchio data the closure equations compute in (frame placements after a closure call).
        closures: the closure equations (:class:`pardyn.kinematics.closure.LoopClosures`).
        joint_names: names of the tree coordinates, in ``q`` order (nv,).
        nv: number of tree coordinates.
        angles: which coordinates are angles (revolute joints, bool (nv,)).
        task_names, actuated_names, sensed_names, measured_names (actuated then sensed): coordinate names.
        actuated_indices, sensed_indices, measured_indices, internal_indices: positions in ``q``
            (``internal_indices``: internal motions that carry inertia, kept).
        task_frame, frame_task: the frame the task is read from and its map, or None (a joint task:
            :attr:`task_indices`).
        locked_joints: joints of the file's tree locked out of ``model``, ``{name: value}``.
        home: closed home configuration on the robot's branch (nv,): the assembled configuration until
            :func:`pardyn.robot.load_robot` solves the YAML's home task.
    """

    def __init__(self, structure: Structure) -> None:
        description = structure.description
        self.structure = structure
        self.description = description
        self.name = description.name
        self.model = structure.model
        self.closures = LoopClosures(self.model, structure.closures)
        self.data = self.closures.data
        self.joint_names = joint_names(self.model)
        self.nv = self.model.nv
        self.angles = revolute_mask(self.model)
        self.locked_joints = structure.locked_joints
        self.task_names = description.task_names
        self.task_frame = description.task_frame
        self.frame_task = structure.frame_task
        self.actuated_names = description.actuated
        self.actuated_indices = self.indices(description.actuated)
        self.sensed_names = description.sensed
        self.sensed_indices = self.indices(description.sensed)
        self.measured_names = description.actuated + description.sensed
        self.measured_indices = self.indices(self.measured_names)
        self.internal_indices = structure.internal_indices
        self._task_indices = None if self.frame_task is not None else self.indices(description.task_joints)
        self._mode_frames: dict[int, tuple] = {}  # frames the mode conditions read, per condition list
        self.home = structure.assembled

    @property
    def source(self) -> Path:
        """The description file (pardyn YAML, Gepetto ``robot.yaml`` or MJCF): what an error about it names."""
        return self.description.source

    @property
    def urdf(self) -> Path:
        """The tree's file (URDF, or the MJCF itself)."""
        return self.description.urdf

    @property
    def working_mode(self) -> tuple[ModeCondition, ...]:
        """The YAML's working-mode conditions (the inverse problem's branch, :meth:`working_mode_violations`)."""
        return self.description.working_mode

    @property
    def assembly_mode(self) -> tuple[ModeCondition, ...]:
        """The YAML's assembly-mode conditions (the forward problem's branch, :meth:`assembly_mode_violations`)."""
        return self.description.assembly_mode

    @property
    def reference(self) -> str:
        """What :func:`pardyn.robot.load_robot` (and a node's ``robot`` parameter) takes to load this robot
        again: the name of a shipped robot, else the absolute path of its description file."""
        source = self.description.source.resolve()
        if source.parent == robots_directory().resolve() and source.stem == self.name:
            return self.name
        return str(source)

    @property
    def task_units(self) -> tuple[str, ...]:
        """Unit of each task coordinate, ``"rad"`` or ``"m"`` (joint type, or the frame component)."""
        if self.frame_task is not None:
            return tuple("rad" if name in ("rx", "ry", "rz") else "m" for name in self.task_names)
        return tuple("rad" if self.angles[i] else "m" for i in self._task_indices)

    @property
    def task_indices(self) -> np.ndarray:
        """Positions in ``q`` of the task joints (virtual chain, or actuated joints used as the task)."""
        if self._task_indices is None:
            raise InputError(
                f"{self.name}: the task is read from frame {self.task_frame!r}, not from joints: "
                "use robot.task_values(q)"
            )
        return self._task_indices

    @property
    def effector_frame(self) -> str:
        """Name of the pinocchio frame the task moves: the YAML's task frame; else the body at the end of the
        task's virtual chain (a platform); else (a serial robot whose task is its joints) the tree's last frame,
        its last link."""
        if self.task_frame is not None:
            return self.task_frame
        model = self.model
        virtual = self.virtual_joints
        if virtual:
            joint = max(virtual)
            return next((f.name for f in model.frames if f.type == pin.FrameType.BODY and f.parentJoint == joint
                         and f.placement.isIdentity()), model.names[joint])  # else the joint's own frame
        return model.frames[len(model.frames) - 1].name

    @property
    def virtual_joints(self) -> list[int]:
        """Pinocchio ids of the task joints that are not actuated (the platform's virtual chain: not bodies of
        the robot); none when the task is read from a frame or is the actuated joints."""
        if self._task_indices is None:
            return []
        return [int(i) + 1 for i in self._task_indices if self.joint_names[i] not in self.actuated_names]

    @property
    def payload_frame(self) -> str:
        """Name of the frame a payload is carried on: the tree's link named ``payload`` (a massless link fixed
        where the load sits, whose body the identification fills, eq. 38), else :attr:`effector_frame`."""
        return "payload" if self.model.existFrame("payload", pin.FrameType.BODY) else self.effector_frame

    def task_velocity(self, q: np.ndarray, qdot: np.ndarray) -> np.ndarray:
        """``xdot`` (n,) of a closed state: ``qdot[task]``, or ``J_x(q) qdot`` for a frame task (m/s, rad/s)."""
        if self.frame_task is not None:
            return self.frame_task.jacobian(q) @ qdot
        return np.asarray(qdot)[self._task_indices]

    def task_values(self, q: np.ndarray) -> np.ndarray:
        """The task coordinates of a configuration (n,), in ``task_names`` order (m, rad)."""
        if self.frame_task is not None:
            return self.frame_task.values(q)
        return np.asarray(q)[self._task_indices]

    def summary(self) -> dict:
        """What the robot is, as found at load: joints, closures and their rank, degrees of freedom,
        actuated/sensed joints, task, internal motions, locked joints, loader notes (JSON-ready)."""
        structure = self.structure
        names = ("x", "y", "z", "rx", "ry", "rz")
        closures = []
        for closure in structure.closures:
            if closure.type == "coupling":
                a, b = closure.joints
                terms = " + ".join([f"{closure.coefficients[0]:g}", f"{closure.coefficients[1]:g} {a}"] + [
                    f"{c:g} {a}^{k}" for k, c in enumerate(closure.coefficients[2:], start=2)])
                closures.append({"name": closure.name, "frames": [a, b], "type": "coupling", "independent_rows": 1,
                                 "components": [f"{b} = {terms}"]})
                continue
            rows = 1 if closure.type == "distance" else len(closure.components)
            closures.append({
                "name": closure.name, "frames": list(closure.frames), "type": closure.type,
                "independent_rows": rows,
                "components": ["distance"] if closure.type == "distance" else [names[c] for c in closure.components],
            })
        task = (
            {"frame": self.task_frame, "coordinates": list(self.task_names)}
            if self.task_frame is not None
            else {"joints": dict(zip(self.task_names, self.description.task_joints))}
        )
        return {
            "name": self.name,
            "file": str(self.description.source),
            "format": self.description.description_format,
            "tree": str(self.description.urdf),
            "joints": list(self.joint_names),
            "locked_joints": self.locked_joints,
            "closures": closures,
            "closure_rows_declared": structure.declared_rows,
            "closure_rank": structure.rank,
            "degrees_of_freedom": structure.mobility,
            "internal_motions": [self.joint_names[i] for i in self.internal_indices],
            "actuated": list(self.actuated_names),
            "sensed": list(self.sensed_names),
            "redundancy": len(self.actuated_names) - (structure.mobility - len(self.internal_indices)),
            "task": task,
            "home": self.joint_dict(self.home),
            "notes": list(structure.notes),
        }

    # ----------------------------------------------------------------- naming
    def indices(self, names: Sequence[str]) -> np.ndarray:
        """Positions in ``q`` of the named joints."""
        try:
            return np.array([self.joint_names.index(n) for n in names], dtype=int)
        except ValueError as error:
            unknown = [n for n in names if n not in self.joint_names]
            raise InputError(f"unknown joints {unknown}; {self.name} has {list(self.joint_names)}") from error

    def joint_dict(self, q: np.ndarray) -> dict[str, float]:
        """``{joint name: value}`` for every tree coordinate."""
        return {name: float(value) for name, value in zip(self.joint_names, q)}

    def task_dict(self, q: np.ndarray) -> dict[str, float]:
        """``{task coordinate name: value}`` of a configuration."""
        return {name: float(v) for name, v in zip(self.task_names, self.task_values(q))}

    # ------------------------------------------------------------------ modes
    def mode_violations(self, q: np.ndarray, conditions: Sequence[ModeCondition]) -> list[str]:
        """The conditions (as written in the YAML) that ``q`` violates."""
        if not conditions:
            return []
        key = id(conditions)
        cached = self._mode_frames.get(key)
        if cached is None or cached[0] is not conditions:
            names = sorted({name for c in conditions for name in c.frames})
            ids = [self.model.getFrameId(name) for name in names]
            cached = self._mode_frames[key] = (conditions, names, ids)
        _, names, ids = cached
        positions = dict(zip(names, self.closures.frame_points(q, ids)))
        return [c.text for c in conditions if not c.holds(positions)]

    def working_mode_violations(self, q: np.ndarray) -> list[str]:
        return self.mode_violations(q, self.working_mode)

    def assembly_mode_violations(self, q: np.ndarray) -> list[str]:
        return self.mode_violations(q, self.assembly_mode)
