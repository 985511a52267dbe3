"""pardyn: dynamics, identification and control of parallel robots and cobots.

The pure core (this package minus :mod:`pardyn.nodes`) never imports rclpy.
"""

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
