"""Robot description: the URDF tree and the YAML file that closes its loops."""

from pardyn.description.config import (
    CLOSURE_TYPES,
    COMPONENT_NAMES,
    Closure,
    ModeCondition,
    RobotDescription,
    parse_description,
)
from pardyn.description.formats import FORMATS, detect_format, load_description
from pardyn.description.model import build_model, joint_names

__all__ = [
    "CLOSURE_TYPES",
    "COMPONENT_NAMES",
    "Closure",
    "ModeCondition",
    "RobotDescription",
    "FORMATS",
    "build_model",
    "detect_format",
    "joint_names",
    "load_description",
    "parse_description",
]
