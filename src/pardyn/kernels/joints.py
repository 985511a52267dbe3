"""What the kernels' generator accepts of a pinocchio joint, without CasADi.

:func:`joint_kind` and :class:`UnsupportedModel` live here, not in
:mod:`pardyn.kernels.symbolic`, so that a node loading cached kernels
(:func:`pardyn.kernels.library.load_kernels` checks the robot and hashes its
description) never imports CasADi (~0.3 s; issue 34: a node imports what its
parameters need).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

__all__ = ["UnsupportedModel", "joint_kind"]

_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}


class UnsupportedModel(Exception):
    """The generator cannot write this robot (the message says why); the Python path serves it."""


def joint_kind(joint: pin.JointModel) -> tuple[str, np.ndarray]:
    """``("revolute" | "prismatic", axis (3,))`` of a one-dof joint, or UnsupportedModel."""
    name = joint.shortname()
    if name in ("JointModelRX", "JointModelRY", "JointModelRZ"):
        return "revolute", np.array(_AXES[name[-1]])
    if name in ("JointModelPX", "JointModelPY", "JointModelPZ"):
        return "prismatic", np.array(_AXES[name[-1]])
    if name == "JointModelRevoluteUnaligned":
        return "revolute", np.array(joint.extract().axis, dtype=float)
    if name == "JointModelPrismaticUnaligned":
        return "prismatic", np.array(joint.extract().axis, dtype=float)
    raise UnsupportedModel(f"joint type {name} (only one-dof revolute and prismatic joints are generated)")
