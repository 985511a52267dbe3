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
    from pardyn.mechanism import Mechanism
    from pardyn.resources import list_robots
    from pardyn.robot import Robot, load_robot

    __version__: str

_LAZY = {
    "ConvergenceError": "pardyn.errors",
    "DescriptionError": "pardyn.errors",
    "InputError": "pardyn.errors",
    "KinematicsError": "pardyn.errors",
    "PardynError": "pardyn.errors",
    "SingularityError": "pardyn.errors",
    "WorkingModeError": "pardyn.errors",
    "list_robots": "pardyn.resources",
    "Mechanism": "pardyn.mechanism",
    "Robot": "pardyn.robot",
    "load_robot": "pardyn.robot",
}

_MANIFEST = "package.xml"
"""The one source of the version (what ROS reads; setup.py copies it into the installed metadata)."""

__all__ = [
    "ConvergenceError",
    "DescriptionError",
    "InputError",
    "KinematicsError",
    "Mechanism",
    "PardynError",
    "Robot",
    "SingularityError",
    "WorkingModeError",
    "__version__",
    "list_robots",
    "load_robot",
]


def _version() -> str:
    """``<version>`` of package.xml: read from the source checkout this module runs from, else the installed metadata.

    The checkout first: an editable install's metadata is the version at its last ``pip install`` and a
    ``PYTHONPATH=src`` checkout would otherwise report another install's. A wheel or ``colcon build`` has no
    package.xml two folders up (``site-packages/pardyn``), so its metadata (setup.py: package.xml's) answers.
    """
    from pathlib import Path  # noqa: PLC0415 (import pardyn stays free of imports)

    manifest = Path(__file__).resolve().parents[2] / _MANIFEST
    if manifest.is_file():
        from xml.etree import ElementTree  # noqa: PLC0415

        root = ElementTree.parse(manifest).getroot()
        if root.findtext("name") == "pardyn" and root.findtext("version"):
            return root.findtext("version", "").strip()
    from importlib import metadata  # noqa: PLC0415 (~0.1 s scanning sys.path: only when asked)

    try:
        return metadata.version("pardyn")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def __getattr__(name: str) -> Any:
    """The public names on first use; a subpackage (``pardyn.description``) imported when named."""
    if name == "__version__":
        globals()[name] = value = _version()
        return value
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
