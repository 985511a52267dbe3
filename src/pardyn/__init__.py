"""pardyn: dynamics, identification and control of parallel robots and cobots.

The pure core (this package minus :mod:`pardyn.nodes`) never imports rclpy.

The names below are imported on first use (PEP 562): ``import pardyn`` itself
costs nothing, so a node executable can take over Ctrl-C/SIGTERM before it
loads pinocchio, MuJoCo and rclpy (:mod:`pardyn.nodes.stopping`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pardyn.errors import (
        ConvergenceError,
        DescriptionError,
        InputError,
        KinematicsError,
        PardynError,
        SingularityError,
        WorkingModeError,
    )
    from pardyn.resources import list_robots
    from pardyn.robot import Robot, load_robot

__version__ = "0.1.0"

_LAZY = {
    "ConvergenceError": "pardyn.errors",
    "DescriptionError": "pardyn.errors",
    "InputError": "pardyn.errors",
    "KinematicsError": "pardyn.errors",
    "PardynError": "pardyn.errors",
    "SingularityError": "pardyn.errors",
    "WorkingModeError": "pardyn.errors",
    "list_robots": "pardyn.resources",
    "Robot": "pardyn.robot",
    "load_robot": "pardyn.robot",
}

__all__ = [
    "ConvergenceError",
    "DescriptionError",
    "InputError",
    "KinematicsError",
    "PardynError",
    "Robot",
    "SingularityError",
    "WorkingModeError",
    "__version__",
    "list_robots",
    "load_robot",
]


def __getattr__(name: str) -> Any:
    """The public names on first use; a subpackage (``pardyn.description``) imported when named."""
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name.startswith("_"):
        raise AttributeError(f"module 'pardyn' has no attribute {name!r}")
    try:
        return importlib.import_module(f"pardyn.{name}")
    except ModuleNotFoundError as error:
        if error.name != f"pardyn.{name}":
            raise
        raise AttributeError(f"module 'pardyn' has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
