"""What a closed form of :mod:`pardyn.kinematics.analytic` is, and how it registers itself.

One module per closed form in this package decorates its class with :func:`register`; the
package finds them (:func:`pardyn.registry.import_modules`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pardyn.errors import InputError
from pardyn.registry import Registry

if TYPE_CHECKING:
    from pardyn.kinematics.solver import ClosureSolver
    from pardyn.mechanism import Mechanism

__all__ = ["CLOSED_FORMS", "AnalyticKinematics", "register"]


class AnalyticKinematics:
    """Interface of a closed-form solver bound to one robot.

    Subclasses implement :meth:`inverse` and :meth:`forward`; both return the
    whole tree configuration ``q`` (nv,) on the branch (working and assembly
    mode) declared in the robot's YAML.
    """

    solver: ClosureSolver | None = None
    """The robot's generic solver (set by :func:`pardyn.kinematics.analytic.analytic_kinematics`)."""

    def __init__(self, robot: Mechanism) -> None:
        self.robot = robot

    def inverse(self, task: np.ndarray) -> np.ndarray:
        """Every joint from the task coordinates, shape (nv,)."""
        raise NotImplementedError

    def forward(self, actuated: np.ndarray, sensed: np.ndarray | None = None) -> np.ndarray:
        """Every joint from the actuated (and sensed) joint positions, shape (nv,)."""
        raise NotImplementedError

    def newton_forward(self, actuated: np.ndarray, sensed: np.ndarray | None = None) -> np.ndarray:
        """Every joint (nv,) from the actuated (and sensed) joints by the generic Newton solver, on the YAML's
        assembly mode: what ``robot.solve_forward(..., method="newton")`` answers on the Python path."""
        robot = self.robot
        values, indices = self._vector(actuated, len(robot.actuated_names), "actuated"), robot.actuated_indices
        if sensed is not None:
            values = np.concatenate([values, self._vector(sensed, len(robot.sensed_names), "sensed")])
            indices = robot.measured_indices
        return self.solver.solve(indices, values, start=robot.home, home=robot.home,
                                 branch_violations=robot.assembly_mode_violations).q

    def _vector(self, values: np.ndarray, size: int, what: str) -> np.ndarray:
        """``values`` as a finite float vector (size,); else InputError naming the robot and ``what``."""
        array = np.asarray(values, dtype=float).reshape(-1)
        if array.shape != (size,) or not np.all(np.isfinite(array)):
            raise InputError(f"{self.robot.name}: expected {size} finite values for the {what}, got {array.tolist()}")
        return array


CLOSED_FORMS: Registry[type[AnalyticKinematics]] = Registry("closed form")
"""Closed-form kinematics by name (a robot YAML's ``analytic: <name>``)."""


def register(name: str):
    """Class decorator: make a closed form available as ``analytic: <name>``."""
    return CLOSED_FORMS.register(name)
