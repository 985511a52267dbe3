"""Robot description: the URDF tree and the YAML file that closes its loops.

The YAML is parsed once, into typed sections (:class:`RobotDescription`: one module
per optional section: ``dynamics``, ``rotors``, ``excitation``, ``limits``); an unknown key anywhere is an error naming the file and the key path.
"""

from pardyn.description.config import (
    CLOSURE_TYPES,
    COMPONENT_NAMES,
    Closure,
    ModeCondition,
    RobotDescription,
    parse_description,
)
from pardyn.description.dynamics import DynamicsSection
from pardyn.description.excitation import ExcitationSettings
from pardyn.description.limits import Limits
from pardyn.description.formats import FORMATS, detect_format, load_description
from pardyn.description.model import build_model, joint_names
from pardyn.description.rotors import RotorsSection

__all__ = [
    "CLOSURE_TYPES",
    "COMPONENT_NAMES",
    "Closure",
    "DynamicsSection",
    "ExcitationSettings",
    "Limits",
    "ModeCondition",
    "RobotDescription",
    "RotorsSection",
    "FORMATS",
    "build_model",
    "detect_format",
    "joint_names",
    "load_description",
    "parse_description",
]
