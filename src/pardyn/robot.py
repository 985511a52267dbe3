"""The robot object: a :class:`~pardyn.mechanism.Mechanism` with its solvers, closed forms, nominal parameters
and kernels, assembled by :func:`load_robot` (the one place that builds them).

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
from typing import Any

import numpy as np

from pardyn.description.config import RobotDescription
from pardyn.description.formats import load_description
from pardyn.description.validation import check_robot_sections
from pardyn.dynamics.parameters import DynamicParameters, parameters_from_description, payload_body
from pardyn.errors import ConvergenceError, DescriptionError, InputError, KinematicsError
from pardyn.kernels import CompiledSolver, select_kernels
from pardyn.kernels.library import KernelLibrary
from pardyn.kinematics.analytic import AnalyticKinematics, analytic_kinematics
from pardyn.kinematics.differential import DifferentialKinematics
from pardyn.kinematics.solver import ClosureSolver, Solution
from pardyn.kinematics.structure import analyse_structure
from pardyn.mechanism import Mechanism

__all__ = ["MAX_COORDINATE", "Robot", "load_robot"]

MAX_COORDINATE = 1.0e6
"""Largest task coordinate or joint value accepted (m, rad): beyond it an angle has no digits left below 2 pi."""


class _FromMechanism:
    """An attribute of the robot that is its mechanism's (read and written there)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.__doc__ = f"``robot.mechanism.{name}`` (:class:`~pardyn.mechanism.Mechanism`)."

    def __get__(self, robot: Robot | None, owner: type | None = None) -> Any:
        return self if robot is None else getattr(robot.mechanism, self.name)

    def __set__(self, robot: Robot, value: Any) -> None:
        setattr(robot.mechanism, self.name, value)


class Robot:
    """A closed-loop (or serial) robot ready for kinematics: its mechanism, solvers and parameters.

    Built by :func:`load_robot`. What the robot *is* (description, tree, names, indices, closures, home) is
    :attr:`mechanism`'s, and reads the same here (``robot.model`` is ``robot.mechanism.model``).

    Attributes:
        mechanism: description, pinocchio model, names and indices, closures, home
            (:class:`~pardyn.mechanism.Mechanism`; its attributes and naming methods read the same on the robot).
        solver: Newton solver (:class:`ClosureSolver`).
        differential: velocity/acceleration maps (:class:`DifferentialKinematics`).
        analytic: the YAML's closed form (:mod:`pardyn.kinematics.analytic`), or None.
        nominal_parameters: the YAML's nominal dynamic parameters, checked against the URDF
            at load (:class:`~pardyn.dynamics.parameters.DynamicParameters`); whatever
            evaluates dynamics takes its parameters explicitly, ``model`` carries none.
        kernels: the compiled kernels (:class:`pardyn.kernels.library.KernelLibrary`), or None (the Python path).
        kernel_note: which path the robot uses, in one line (:func:`pardyn.kernels.select_kernels`).
    """

    structure = _FromMechanism()
    description = _FromMechanism()
    name = _FromMechanism()
    model = _FromMechanism()
    data = _FromMechanism()
    closures = _FromMechanism()
    joint_names = _FromMechanism()
    nv = _FromMechanism()
    locked_joints = _FromMechanism()
    task_names = _FromMechanism()
    task_frame = _FromMechanism()
    frame_task = _FromMechanism()
    actuated_names = _FromMechanism()
    actuated_indices = _FromMechanism()
    sensed_names = _FromMechanism()
    sensed_indices = _FromMechanism()
    measured_names = _FromMechanism()
    measured_indices = _FromMechanism()
    internal_indices = _FromMechanism()
    home = _FromMechanism()
    reference = _FromMechanism()
    source = _FromMechanism()
    urdf = _FromMechanism()
    working_mode = _FromMechanism()
    assembly_mode = _FromMechanism()
    task_units = _FromMechanism()
    task_indices = _FromMechanism()
    effector_frame = _FromMechanism()
    virtual_joints = _FromMechanism()
    payload_frame = _FromMechanism()
    summary = _FromMechanism()
    indices = _FromMechanism()
    joint_dict = _FromMechanism()
    task_dict = _FromMechanism()
    task_values = _FromMechanism()
    task_velocity = _FromMechanism()
    mode_violations = _FromMechanism()
    working_mode_violations = _FromMechanism()
    assembly_mode_violations = _FromMechanism()

    def __init__(
        self,
        mechanism: Mechanism,
        *,
        solver: ClosureSolver,
        differential: DifferentialKinematics,
        analytic: AnalyticKinematics | None,
        nominal_parameters: DynamicParameters,
        kernels: KernelLibrary | None = None,
        kernel_note: str = "",
    ) -> None:
        self.mechanism = mechanism
        self.solver = solver
        self.differential = differential
        self.analytic = analytic
        self.nominal_parameters = nominal_parameters
        self.kernels = kernels
        self.kernel_note = kernel_note
        self._compiled = CompiledSolver(mechanism, kernels) if kernels is not None else None
        differential.compiled = self._compiled  # velocity and acceleration maps (eqs. 9-10, 21-24)

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

    # ---------------------------------------------------------------- solving
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
            self.frame_task if self.frame_task is not None else self.task_indices,
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


def load_robot(
    robot: str | Path | RobotDescription,
    *,
    format: str | None = None,  # noqa: A002
    tolerance: float = 1e-12,
    max_condition: float = 1e6,
    check_urdf: bool = True,
    kernels: str | None = None,
) -> Robot:
    """Load a robot by name (``config/robots/<name>.yaml``) or by description file, in any format, and assemble
    it: its mechanism, solvers, closed form, nominal parameters and kernels.

    Args:
        robot: a shipped robot's name, or a pardyn YAML, a Gepetto ``robot.yaml``
            or an MJCF file (:mod:`pardyn.description.formats`), or a description already loaded.
        format: ``pardyn``, ``gepetto`` or ``mjcf``; detected from the file by default.
        tolerance, max_condition: the Newton solver's (:class:`ClosureSolver`).
        check_urdf: False accepts a URDF whose inertias or friction differ from the YAML's ``dynamics:``.
        kernels: ``"python"``, ``"compiled"`` or ``"auto"``, :mod:`pardyn.kernels`; default ``$PARDYN_KERNELS``,
            else ``"python"``.
    """
    description = robot if isinstance(robot, RobotDescription) else load_description(robot, format=format)
    structure = analyse_structure(description)
    mechanism = Mechanism(structure)
    solver = ClosureSolver(
        mechanism.closures,
        task_indices=structure.chart_indices[: len(mechanism.task_names)],
        actuated_indices=mechanism.actuated_indices,
        internal_indices=mechanism.internal_indices,
        frame_task=mechanism.frame_task,
        tolerance=tolerance,
        max_condition=max_condition,
    )
    differential = DifferentialKinematics(
        mechanism.closures,
        () if mechanism.frame_task is not None else mechanism.task_indices,
        chart_indices=structure.chart_indices,
        frame_task=mechanism.frame_task,
        internal=len(mechanism.internal_indices),
    )
    check_robot_sections(mechanism)  # springs, cones, excitation against the model, before anything uses them
    mechanism.home = _solve_home(mechanism, solver, structure.assembled)
    analytic = analytic_kinematics(mechanism, solver)
    nominal = parameters_from_description(mechanism, check_urdf=check_urdf)
    library, note = select_kernels(mechanism, kernels, solver=solver, nominal=nominal)
    return Robot(mechanism, solver=solver, differential=differential, analytic=analytic, nominal_parameters=nominal,
                 kernels=library, kernel_note=note)


def _solve_home(mechanism: Mechanism, solver: ClosureSolver, assembled: np.ndarray) -> np.ndarray:
    """The home configuration: the YAML's home task solved from the assembled guess."""
    given = mechanism.frame_task if mechanism.frame_task is not None else mechanism.task_indices
    target = np.asarray(mechanism.description.home_task, dtype=float)
    if not mechanism.description.home_task_given:
        target = mechanism.task_values(assembled)
    try:
        q, *_ = solver.newton(given, target, assembled)
    except KinematicsError as error:
        raise DescriptionError(f"{mechanism.description.source}: home: {error}") from error
    for label, violations in (
        ("working_mode", mechanism.working_mode_violations(q)),
        ("assembly_mode", mechanism.assembly_mode_violations(q)),
    ):
        if violations:
            raise DescriptionError(
                f"{mechanism.description.source}: home: the home configuration violates {label} "
                f"{violations}; adjust home.joints"
            )
    if mechanism.closures.size:  # a serial robot has no closure Jacobian to condition
        mechanism.closures.linearize(q)
        for kind, condition in solver.loop_conditioning(mechanism.closures.last_jacobian(), q).items():
            if not condition < solver.max_condition:
                raise DescriptionError(
                    f"{mechanism.description.source}: home: near a {kind} singularity (condition number "
                    f"{condition:.3g} of the closure Jacobian block, limit {solver.max_condition:.3g}); "
                    f"move home.task (and home.joints) away from it"
                )
    return q

