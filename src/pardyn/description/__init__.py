"""Robot description: the URDF tree and the YAML file that closes its loops."""

from pardyn.description.config import (
    CLOSURE_TYPES,
    COMPONENT_NAMES,
    Closure,
    ModeCondition,
    RobotDescription,
    load_description,
    parse_description,
)
from pardyn.description.model import build_model, joint_names

__all__ = [
    "CLOSURE_TYPES",
    "COMPONENT_NAMES",
    "Closure",
    "ModeCondition",
    "RobotDescription",
    "build_model",
    "joint_names",
    "load_description",
    "parse_description",
]
