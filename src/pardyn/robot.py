"""The robot object: description, pinocchio tree, closure equations and solvers.

>>> from pardyn import load_robot
>>> robot = load_robot("dualv")
>>> solution = robot.solve_inverse([0.02, -0.01, 0.1])       # x (m), y (m), phi (rad)
>>> robot.joint_dict(solution.q)["leg1_joint1"]               # rad
>>> robot.solve_forward(solution.q[robot.actuated_indices]).q  # back to every joint
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pinocchio as pin

from pardyn.description.config import ModeCondition, RobotDescription
from pardyn.description.formats import load_description
from pardyn.description.model import joint_names
from pardyn.description.validation import check_robot_sections
from pardyn.dynamics.parameters import parameters_from_description, payload_body
from pardyn.errors import ConvergenceError, DescriptionError, InputError, KinematicsError
from pardyn.kernels import CompiledSolver, select_kernels
from pardyn.kinematics.analytic import analytic_kinematics
from pardyn.kinematics.closure import LoopClosures
from pardyn.kinematics.differential import DifferentialKinematics
from pardyn.kinematics.solver import ClosureSolver, Solution
from pardyn.kinematics.structure import analyse_structure
from pardyn.resources import robots_directory

__all__ = ["MAX_COORDINATE", "Robot", "load_robot"]

MAX_COORDINATE = 1.0e6
"""Largest task coordinate or joint value accepted (m, rad): beyond it an angle has no digits left below 2 pi."""


class Robot:
    """A closed-loop (or serial) robot ready for kinematics.

    Attributes:
        description: the validated YAML content.
        model: pinocchio model of the URDF tree.
        joint_names: names of the tree coordinates, in ``q`` order (nv,).
        task_indices, actuated_indices, sensed_indices: positions in ``q``
            (``task_indices`` only when the task is made of joints; see :meth:`task_values`).
        locked_joints: joints of the file's tree locked out of ``model`` (the YAML's ``locked:``,
            massless internal motions), ``{name: value}``.
        internal_indices: coordinates of internal motions that carry inertia (kept).
        structure: what the load found (:class:`pardyn.kinematics.structure.Structure`).
        closures: the closure equations (:class:`LoopClosures`).
        solver: Newton solver (:class:`ClosureSolver`).
        differential: velocity/acceleration maps (:class:`DifferentialKinematics`).
        home: closed home configuration on the robot's branch (nv,).
        nominal_parameters: the YAML's nominal dynamic parameters, checked against the URDF
            at construction (:class:`~pardyn.dynamics.parameters.DynamicParameters`); whatever
            evaluates dynamics takes its parameters explicitly, ``model`` carries none.
    """

    def __init__(
        self,
        description: RobotDescription,
        *,
        tolerance: float = 1e-12,
        max_condition: float = 1e6,
        check_urdf: bool = True,
        kernels: str | None = None,
    ) -> None:
        structure = analyse_structure(description)
        self.structure = structure
        self.description = description = structure.description  # frame names as the model's
        self.name = description.name
        self.model = structure.model
        self.joint_names = joint_names(self.model)
        self.nv = self.model.nv
        self.locked_joints = structure.locked_joints
        self.task_names = description.task_names
        self.task_frame = description.task_frame
        self.actuated_names = description.actuated
        self.actuated_indices = self.indices(description.actuated)
        self.sensed_names = description.sensed
        self.sensed_indices = self.indices(description.sensed)
        self.measured_names = description.actuated + description.sensed
        self.measured_indices = self.indices(self.measured_names)
        self.closures = LoopClosures(self.model, structure.closures)
        self._mode_frames: dict[int, tuple] = {}  # frames the mode conditions read, per condition list
        self.frame_task = structure.frame_task
        self._task_indices = None if self.frame_task is not None else self.indices(description.task_joints)
        self.internal_indices = structure.internal_indices
        self.solver = ClosureSolver(
            self.closures,
            task_indices=structure.chart_indices[: len(self.task_names)],
            actuated_indices=self.actuated_indices,
            internal_indices=self.internal_indices,
            frame_task=self.frame_task,
            tolerance=tolerance,
            max_condition=max_condition,
        )
        self.differential = DifferentialKinematics(
            self.closures,
            () if self._task_indices is None else self._task_indices,
            chart_indices=structure.chart_indices,
            frame_task=self.frame_task,
            internal=len(self.internal_indices),
        )
        check_robot_sections(self)  # springs, cones, excitation against the model, before anything uses them
        self.home = self._solve_home(structure.assembled)
        self.analytic = analytic_kinematics(self)
        self.nominal_parameters = parameters_from_description(self, check_urdf=check_urdf)
        library, self.kernel_note = select_kernels(self, kernels)
        self.kernels = library  # pardyn.kernels.library.KernelLibrary or None (the Python path)
        self._compiled = CompiledSolver(self, library) if library is not None else None
        self.differential.compiled = self._compiled  # velocity and acceleration maps (eqs. 9-10, 21-24)

    @property
    def reference(self) -> str:
        """What :func:`load_robot` (and a node's ``robot`` parameter) takes to load this robot again: the name
        of a shipped robot, else the absolute path of its description file."""
        source = self.description.source.resolve()
        if source.parent == robots_directory().resolve() and source.stem == self.name:
            return self.name
        return str(source)

    @property
    def task_units(self) -> tuple[str, ...]:
        """Unit of each task coordinate, ``"rad"`` or ``"m"`` (joint type, or the frame component)."""
        if self.frame_task is not None:
            return tuple("rad" if name in ("rx", "ry", "rz") else "m" for name in self.task_names)
        return tuple("rad" if self.solver.angles[i] else "m" for i in self._task_indices)

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

    def with_payload_body(self) -> Robot:
        """This robot, its nominal parameters carrying an empty ``payload`` body on :attr:`payload_frame` (what
        a loaded run identifies, eq. 38); itself when they carry one already. A shallow copy: everything else is
        shared."""
        params = self.nominal_parameters
        if any(body.name == "payload" for body in params.bodies):
            return self
        robot = copy.copy(self)
        robot.nominal_parameters = replace(params, bodies=(*params.bodies, payload_body(self.model, self.payload_frame)))
        return robot

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
        return self.mode_violations(q, self.description.working_mode)

    def assembly_mode_violations(self, q: np.ndarray) -> list[str]:
        return self.mode_violations(q, self.description.assembly_mode)

    # ---------------------------------------------------------------- solving
    def _solve_home(self, assembled: np.ndarray) -> np.ndarray:
        """The home configuration: the YAML's home task solved from the assembled guess."""
        given = self.frame_task if self.frame_task is not None else self._task_indices
        target = np.asarray(self.description.home_task, dtype=float)
        if not self.description.home_task_given:
            target = self.task_values(assembled)
        try:
            q, *_ = self.solver.newton(given, target, assembled)
        except KinematicsError as error:
            raise DescriptionError(f"{self.description.source}: home: {error}") from error
        for label, violations in (
            ("working_mode", self.working_mode_violations(q)),
            ("assembly_mode", self.assembly_mode_violations(q)),
        ):
            if violations:
                raise DescriptionError(
                    f"{self.description.source}: home: the home configuration violates {label} "
                    f"{violations}; adjust home.joints"
                )
        if self.closures.size:  # a serial robot has no closure Jacobian to condition
            self.closures.linearize(q)
            for kind, condition in self.solver.loop_conditioning(self.closures.last_jacobian(), q).items():
                if not condition < self.solver.max_condition:
                    raise DescriptionError(
                        f"{self.description.source}: home: near a {kind} singularity (condition number "
                        f"{condition:.3g} of the closure Jacobian block, limit {self.solver.max_condition:.3g}); "
                        f"move home.task (and home.joints) away from it"
                    )
        return q

    def _values(self, values: Sequence[float] | Mapping[str, float], names: Sequence[str], what: str) -> np.ndarray:
        if isinstance(values, Mapping):
            missing = [n for n in names if n not in values]
            unknown = [n for n in values if n not in names]
            if missing or unknown:
                raise InputError(f"{what}: missing {missing}, unknown {unknown}; expected {list(names)}")
            values = [values[n] for n in names]
        array = np.asarray(values, dtype=float).reshape(-1)
        if array.shape != (len(names),):
            raise InputError(f"{what}: expected {len(names)} values {list(names)}, got {array.size}")
        if not np.all(np.isfinite(array)):
            raise InputError(f"{what}: values must be finite, got {array.tolist()}")
        if np.abs(array).max(initial=0.0) > MAX_COORDINATE:
            raise InputError(f"{what}: {array.tolist()} has a value beyond {MAX_COORDINATE:g} (m, rad): not a pose")
        return array

    def solve_inverse(
        self,
        task: Sequence[float] | Mapping[str, float],
        *,
        start: np.ndarray | None = None,
        method: str = "newton",
    ) -> Solution:
        """Every joint from the task coordinates (inverse kinematic problem).

        Args:
            task: task coordinates in ``task_names`` order, or a name mapping (m, rad).
            start: warm start (nv,), e.g. the previous solution; home by default.
            method: ``"newton"`` (generic) or ``"analytic"`` (the robot's closed form).

        Raises:
            ConvergenceError: the pose is out of reach.
            WorkingModeError: only other working modes reach it.
            SingularityError: the pose is at (or too near) a singularity.
        """
        values = self._values(task, self.task_names, "task")
        if method == "analytic":
            return self._analytic_solution(self._analytic().inverse(values))
        self._check_method(method)
        if self._compiled is not None:
            solution = self._compiled.solve(CompiledSolver.INVERSE, values, self.home if start is None else start)
            if solution is not None:
                return solution
        return self.solver.solve(
            self.frame_task if self.frame_task is not None else self._task_indices,
            values,
            start=self.home if start is None else start,
            home=self.home,
            branch_violations=self.working_mode_violations,
        )

    def _analytic(self):
        if self.analytic is None:
            raise InputError(f"{self.name} has no closed-form kinematics (no 'analytic' key in its YAML)")
        return self.analytic

    ANALYTIC_RESIDUAL = 1e-8
    """Largest closure residual (m, rad) of a closed form's answer to as many values as dof."""
    READINGS_RESIDUAL = 1e-4
    """The same with redundant readings (actuation redundancy, sensed passive joints): quantized encoders
    (17 bits: 4.8e-5 rad) never agree exactly; 2 quantization steps are accepted."""

    def _analytic_solution(self, q: np.ndarray, *, redundant: bool = False) -> Solution:
        """The closed form's answer, verified: finite, and closing every loop (:attr:`ANALYTIC_RESIDUAL`,
        :attr:`READINGS_RESIDUAL` for ``redundant`` readings).

        A closed form solves a subset of the equations (e.g. the DualV's from two
        of its four legs): inconsistent redundant readings give joints that leave
        the other loops open, which must not pass as an answer.
        """
        limit = self.READINGS_RESIDUAL if redundant else self.ANALYTIC_RESIDUAL
        if not np.isfinite(q).all():
            raise ConvergenceError(f"{self.name}: the closed form gave non-finite joints (out of reach)")
        residual, jacobian = self.closures.residual_and_jacobian(q)
        worst = float(np.max(np.abs(residual), initial=0.0))
        if not worst <= limit:
            raise ConvergenceError(
                f"{self.name}: the closed form's answer leaves the loops open by {worst:.3g} (> "
                f"{limit:g}): the values are inconsistent or out of reach; method 'newton' fits "
                "inconsistent readings in the least-squares sense"
            )
        return Solution(q=q, iterations=0, residual=worst, conditioning=self.solver.conditioning(jacobian, q))

    @staticmethod
    def _check_method(method: str) -> None:
        if method not in ("newton", "analytic"):
            raise InputError(f"method must be 'newton' or 'analytic', got {method!r}")

    def solve_forward(
        self,
        actuated: Sequence[float] | Mapping[str, float],
        *,
        sensed: Sequence[float] | Mapping[str, float] | None = None,
        start: np.ndarray | None = None,
        method: str = "newton",
        checks: bool = True,
    ) -> Solution:
        """Every joint from the actuated (and optionally sensed passive) joints.

        With more readings than degrees of freedom (actuation redundancy,
        sensed passive joints) the answer closes the loops exactly and fits
        the readings in the least-squares sense (exactly if they agree).

        Args:
            actuated: actuated joint positions in ``actuated_names`` order (rad, m).
            sensed: sensed passive joint positions in ``sensed_names`` order.
            start: warm start (nv,); home by default.
            method: ``"newton"`` (generic) or ``"analytic"`` (the robot's closed
                form, see :mod:`pardyn.kinematics.analytic`).
            checks: check the assembly mode and the singularities of the answer
                (see :meth:`pardyn.kinematics.solver.ClosureSolver.solve`); with
                ``method="analytic"``, False returns the closed form unverified
                (``residual`` NaN, ``conditioning`` empty): a third of the cost.
        """
        values = self._values(actuated, self.actuated_names, "actuated")
        indices = self.actuated_indices
        if sensed is not None:
            values = np.concatenate([values, self._values(sensed, self.sensed_names, "sensed")])
            indices = self.measured_indices
        if method == "analytic":
            n_a = len(self.actuated_names)
            readings = None if sensed is None else values[n_a:]
            q = self._analytic().forward(values[:n_a], readings)
            if not checks:  # the closed form alone: no residual, no conditioning (NaN, empty)
                if not np.isfinite(q).all():
                    raise KinematicsError(f"{self.name}: the closed form gave non-finite joints for {values.tolist()}")
                return Solution(q=q, iterations=0, residual=float("nan"), conditioning={})
            return self._analytic_solution(q, redundant=len(values) > len(self.task_names))
        self._check_method(method)
        if self._compiled is not None:
            problem = CompiledSolver.FORWARD if sensed is None else CompiledSolver.FORWARD_SENSED
            solution = self._compiled.solve(problem, values, self.home if start is None else start, checks)
            if solution is not None:
                return solution
        return self.solver.solve(
            indices,
            values,
            start=self.home if start is None else start,
            home=self.home,
            branch_violations=self.assembly_mode_violations,
            checks=checks,
        )


def load_robot(robot: str | Path, *, format: str | None = None, **options: float | bool | str) -> Robot:  # noqa: A002
    """Load a robot by name (``config/robots/<name>.yaml``) or by description file, in any format.

    Args:
        robot: a shipped robot's name, or a pardyn YAML, a Gepetto ``robot.yaml``
            or an MJCF file (:mod:`pardyn.description.formats`).
        format: ``pardyn``, ``gepetto`` or ``mjcf``; detected from the file by default.
        options: go to :class:`Robot` (``tolerance``, ``max_condition``, ``check_urdf``: False accepts a URDF
            whose inertias or friction differ from the YAML's ``dynamics:``; ``kernels``: ``"python"``,
            ``"compiled"`` or ``"auto"``, :mod:`pardyn.kernels`; default ``$PARDYN_KERNELS``, else ``"python"``).
    """
    return Robot(load_description(robot, format=format), **options)
