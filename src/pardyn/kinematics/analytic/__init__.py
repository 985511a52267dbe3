"""Closed-form kinematics of specific robots, registered by name.

A robot YAML opts in with ``analytic: <name>``. The generic Newton solver
(:mod:`pardyn.kinematics.solver`) works for every robot; these closed forms
come from the papers, serve as fast paths and as independent references in
the tests (they must agree with the generic solver to 1e-10).

Each implementation reads its geometry from the pinocchio model (joint
placements and frames of the URDF), never from a second copy of the numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pardyn.errors import DescriptionError, InputError

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["AnalyticKinematics", "analytic_kinematics", "register"]


class AnalyticKinematics:
    """Interface of a closed-form solver bound to one robot.

    Subclasses implement :meth:`inverse` and :meth:`forward`; both return the
    whole tree configuration ``q`` (nv,) on the branch (working and assembly
    mode) declared in the robot's YAML.
    """

    def __init__(self, robot: Robot) -> None:
        self.robot = robot

    def inverse(self, task: np.ndarray) -> np.ndarray:
        """Every joint from the task coordinates, shape (nv,)."""
        raise NotImplementedError

    def forward(self, actuated: np.ndarray, sensed: np.ndarray | None = None) -> np.ndarray:
        """Every joint from the actuated (and sensed) joint positions, shape (nv,)."""
        raise NotImplementedError

    def _vector(self, values: np.ndarray, size: int, what: str) -> np.ndarray:
        """``values`` as a finite float vector (size,); else InputError naming the robot and ``what``."""
        array = np.asarray(values, dtype=float).reshape(-1)
        if array.shape != (size,) or not np.all(np.isfinite(array)):
            raise InputError(f"{self.robot.name}: expected {size} finite values for the {what}, got {array.tolist()}")
        return array


_REGISTRY: dict[str, type[AnalyticKinematics]] = {}


def register(name: str):
    """Class decorator: make a closed form available as ``analytic: <name>``."""

    def decorate(cls: type[AnalyticKinematics]) -> type[AnalyticKinematics]:
        _REGISTRY[name] = cls
        return cls

    return decorate


def analytic_kinematics(robot: Robot) -> AnalyticKinematics | None:
    """The closed form the robot's YAML names under ``analytic``, or None."""
    name = robot.description.analytic
    if name is None:
        return None
    if name not in _REGISTRY:
        raise DescriptionError(
            f"{robot.description.source}: analytic: unknown closed form {name!r}; known: {sorted(_REGISTRY)}"
        )
    return _REGISTRY[name](robot)
from pardyn.kinematics.analytic import delta, dualv, five_bar, h4, hexapod, rrr3, wu  # noqa: E402,F401  (registers the closed forms)
