"""Compiled real-time kernels: a robot's closed-loop model as generated C.

The tree's kinematics and dynamics are written symbolically from the pinocchio model
(:mod:`pardyn.kernels.symbolic`, CasADi SX), generated to C with a generic Newton
solver (:mod:`pardyn.kernels.codegen`), compiled with the system C compiler at first
use and cached by a hash of the robot description (:mod:`pardyn.kernels.library`).
The same sources are what ``pardyn export c`` ships to C/C++ controllers.

The Python path (pinocchio + numpy) stays the reference and the fallback. Which one a
robot uses is chosen explicitly (``load_robot(name, kernels="python"|"compiled"|"auto")``)
and said in one line (:attr:`pardyn.robot.Robot.kernel_note`, also logged on the
``pardyn.kernels`` logger):

* ``"python"`` (the library's default): no kernels;
* ``"compiled"``: the kernels, or an error saying why they cannot be built;
* ``"auto"`` (the nodes' default): the kernels when they can be built, else Python with
  the reason (no compiler, an unsupported joint or description key).

A compiled call that does not end in the plain case (Newton's budget spent: continuation
needed; another branch; a singular or ill-conditioned answer) is re-run on the Python path,
which gives the same answer or raises the same typed error: only the common case is
compiled, and the semantics are the Python path's.

This package never imports rclpy.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

import numpy as np

from pardyn.errors import InputError

if TYPE_CHECKING:
    from pardyn.kernels.library import KernelLibrary
    from pardyn.dynamics.parameters import DynamicParameters
    from pardyn.kinematics.solver import ClosureSolver
    from pardyn.mechanism import Mechanism

__all__ = ["CHOICES", "CompiledSolver", "select_kernels"]

CHOICES = ("python", "compiled", "auto")
ENVIRONMENT = "PARDYN_KERNELS"
"""The choice of a robot loaded without one (default ``python``): ``PARDYN_KERNELS=auto make test-compiled`` runs
the kinematics, dynamics and identification tests on the compiled path."""
LOG = logging.getLogger("pardyn.kernels")


class CompiledSolver:
    """The robot's closure solves through the compiled kernels (module docstring).

    Args:
        robot: the robot (its Python solver is the fallback).
        library: its loaded kernels.
    """

    INVERSE, FORWARD, FORWARD_SENSED = 0, 1, 2

    def __init__(self, robot: Mechanism, library: KernelLibrary) -> None:
        self.robot = robot
        self.library = library
        self.fallbacks = 0  # calls re-run on the Python path
        self._problems = {  # given coordinates -> the C problem that has them
            np.asarray(indices, dtype=int).tobytes(): problem
            for problem, indices in ((self.FORWARD_SENSED, robot.measured_indices),
                                     (self.FORWARD, robot.actuated_indices), (self.INVERSE, robot.task_indices))
        }

    def states(self, indices, q, rates, accelerations=None, velocity_map: bool = False):
        """``(qdot, qddot, W)`` from the rates (and accelerations) of the coordinates ``indices`` (k,), or None
        when they are not the task, actuated or measured joints or the C path declines (a singular system)."""
        problem = self._problems.get(np.asarray(indices, dtype=int).tobytes())
        if problem is None:
            return None
        return self.library.states(problem, q, rates, accelerations, velocity_map)

    def solve(self, problem: int, values: np.ndarray, start: np.ndarray, checks: bool = True):
        """A :class:`pardyn.kinematics.solver.Solution`, or None when the Python path must decide."""
        from pardyn.kinematics.solver import Solution

        q, info = self.library.solve(problem, values, start, checks)
        if info.status != 0:
            self.fallbacks += 1
            return None
        conditioning = {"serial": info.serial, "parallel": info.parallel} if checks else {}
        return Solution(q=q, iterations=info.iterations, residual=info.residual, conditioning=conditioning)


def select_kernels(robot: Mechanism, choice: str | None, *, solver: ClosureSolver, nominal: DynamicParameters,
                   ) -> tuple[KernelLibrary | None, str]:
    """Load the robot's kernels as ``choice`` says (None: :data:`ENVIRONMENT`, else ``python``); return them (or
    None) and the one-line note. ``solver`` and ``nominal``: :func:`pardyn.kernels.codegen.generate_sources`.

    Raises:
        InputError: ``choice`` unknown, or ``"compiled"`` and the kernels cannot be built.
    """
    if choice is None:
        choice = os.environ.get(ENVIRONMENT) or "python"
        if choice not in CHOICES:
            raise InputError(f"environment variable {ENVIRONMENT} must be one of {list(CHOICES)}, got {choice!r}")
    if choice not in CHOICES:
        raise InputError(f"kernels must be one of {list(CHOICES)}, got {choice!r}")
    if choice == "python":
        note = f"{robot.name}: Python kinematics and dynamics (kernels='python')"
        LOG.info(note)
        return None, note
    from pardyn.kernels.joints import UnsupportedModel  # noqa: PLC0415
    from pardyn.kernels.library import CompileError, load_kernels  # noqa: PLC0415

    try:
        library = load_kernels(robot, solver=solver, nominal=nominal)  # imports CasADi only to generate kernels not in the cache
        reason = ""
    except ImportError as error:  # casadi missing
        library, reason = None, f"cannot import the generator ({error})"
    except (UnsupportedModel, CompileError, OSError) as error:
        library, reason = None, str(error)
    if library is None:
        if choice == "compiled":
            raise InputError(f"{robot.name}: compiled kernels unavailable: {reason}")
        note = f"{robot.name}: Python kinematics and dynamics (compiled kernels unavailable: {reason})"
        LOG.warning(note)
        return None, note
    how = f"built in {library.built_s:.2f} s" if library.built_s else f"cached, loaded in {library.load_s * 1e3:.1f} ms"
    note = f"{robot.name}: compiled kernels ({how}) from {library.folder}"
    LOG.info(note)
    return library, note
