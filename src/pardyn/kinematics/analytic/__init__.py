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

from pardyn.errors import DescriptionError
from pardyn.kinematics.analytic.closed_form import CLOSED_FORMS, AnalyticKinematics, register
from pardyn.registry import import_modules

if TYPE_CHECKING:
    from pardyn.kinematics.solver import ClosureSolver
    from pardyn.mechanism import Mechanism

__all__ = ["CLOSED_FORMS", "AnalyticKinematics", "analytic_kinematics", "register"]

import_modules(__name__)  # each closed form's module registers it


def analytic_kinematics(robot: Mechanism, solver: ClosureSolver) -> AnalyticKinematics | None:
    """The closed form the robot's YAML names under ``analytic``, or None; ``solver`` is the robot's generic
    one, for the closed forms that fall back to Newton (:meth:`AnalyticKinematics.newton_forward`)."""
    name = robot.description.analytic
    if name is None:
        return None
    if name not in CLOSED_FORMS:
        raise DescriptionError(
            f"{robot.source}: analytic: unknown closed form {name!r}; known: {sorted(CLOSED_FORMS)}"
        )
    closed_form = CLOSED_FORMS.get(name)(robot)
    closed_form.solver = solver
    return closed_form
