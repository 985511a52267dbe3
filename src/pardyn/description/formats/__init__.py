"""Robot description formats, one registry: pardyn's, Gepetto's, MJCF and a bare URDF (SDF recognised, refused).

=========== ====================================== ===========================================
format      files                                  detected by
=========== ====================================== ===========================================
``gepetto`` ``robot.yaml`` + ``robot.urdf``        a YAML file with ``closed_loop:``
``pardyn``  ``<name>.yaml`` + its URDF             a YAML file with ``urdf:`` (or a robot name)
``mjcf``    one MuJoCo XML file                    ``.xml`` (or ``.mjcf``) with a ``<mujoco>`` root
``urdf``    one URDF file                          ``.urdf`` (or ``.xml``) with a ``<robot>`` root
``sdf``     refused: what to give instead          ``.sdf`` (or ``.xml``) with an ``<sdf>`` root
=========== ====================================== ===========================================

Each format is a plug-in of :data:`FORMATS` (:class:`~pardyn.description.formats.protocol.DescriptionFormat`:
``name``, ``accepts(path)``, ``Options``, ``load(path, options)``), one module of this package (found by
:func:`pardyn.registry.import_modules`), or one registered from anywhere with ``@FORMATS.plugin``
(``test/description/json_format.py``): adding a format is one file. :func:`detect_format` asks them in order.

A bare URDF is read with its starting description (:mod:`pardyn.description.starting`: closures from
onshape-to-robot's closing frames, actuated joints from its transmissions, else the joints on its root link), the
YAML that ``pardyn robots --init FILE`` writes.

Every format becomes one :class:`~pardyn.description.config.RobotDescription`:
the rest of pardyn does not know where a robot came from.
"""

from __future__ import annotations

from pathlib import Path

from pardyn.description.config import RobotDescription
from pardyn.description.formats.protocol import FORMATS, TREE_SUFFIXES, YAML_SUFFIXES, DescriptionFormat
from pardyn.errors import DescriptionError
from pardyn.registry import import_modules
from pardyn.resources import robots_directory

__all__ = ["FORMATS", "TREE_SUFFIXES", "DescriptionFormat", "detect_format", "load_description"]

import_modules(__name__, first=("protocol", "gepetto_yaml", "pardyn_yaml", "mjcf", "urdf", "sdf"))


def detect_format(path: Path) -> str:
    """The format of a description file: the first of :data:`FORMATS` that accepts it (module docstring)."""
    for name in FORMATS:
        if FORMATS.get(name).accepts(path):
            return name
    if path.suffix.lower() in TREE_SUFFIXES:
        from pardyn.description.starting import tree_kind  # noqa: PLC0415

        tree_kind(path)  # a tree file of no known root: says so
    raise DescriptionError(
        f"{path}: unknown description format (expected a pardyn or Gepetto .yaml, an MJCF .xml or a URDF)"
    )


def load_description(robot: str | Path, *, format: str | None = None) -> RobotDescription:  # noqa: A002
    """A robot description by name (``config/robots/<name>.yaml``) or file path, in any format.

    Args:
        robot: a shipped robot's name or the path of a description file.
        format: one of :data:`FORMATS`; detected from the file by default.
    """
    path = Path(robot)
    if path.suffix.lower() not in (*YAML_SUFFIXES, *TREE_SUFFIXES) and not path.is_file():  # a robot's name
        candidate = robots_directory() / f"{robot}.yaml"
        if not candidate.is_file():
            from pardyn.resources import list_robots  # noqa: PLC0415

            raise DescriptionError(f"unknown robot {str(robot)!r}; known robots: {list_robots()}")
        path = candidate
    if not path.is_file():
        raise DescriptionError(f"{path}: robot file not found")
    path = path.resolve()
    if format is None:
        format = detect_format(path)  # noqa: A001
    if format not in FORMATS:
        raise DescriptionError(f"{path}: unknown format {format!r}; known: {sorted(FORMATS)}")
    plugin = FORMATS.get(format)
    return plugin.load(path, plugin.Options())
