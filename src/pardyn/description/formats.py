"""Robot description formats, one registry: pardyn's, Gepetto's and MJCF.

=========== ====================================== ===========================================
format      files                                  detected by
=========== ====================================== ===========================================
``pardyn``  ``<name>.yaml`` + its URDF             a YAML file with ``urdf:`` (or a robot name)
``gepetto`` ``robot.yaml`` + ``robot.urdf``        a YAML file with ``closed_loop:``
``mjcf``    one MuJoCo XML file                    ``.xml`` (or ``.mjcf``) with a ``<mujoco>`` root
=========== ====================================== ===========================================

Every format becomes one :class:`~pardyn.description.config.RobotDescription`:
the rest of pardyn does not know where a robot came from.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from pardyn.description.config import CLOSURE_TYPES, COMPONENT_NAMES, Closure, RobotDescription, parse_description
from pardyn.description.gepetto import is_gepetto, parse_gepetto
from pardyn.errors import DescriptionError
from pardyn.registry import Registry
from pardyn.resources import robots_directory

__all__ = ["FORMATS", "detect_format", "load_description"]


FORMATS: Registry[Callable[[Path], RobotDescription]] = Registry("description format")
"""Format name -> loader of a description file."""


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise DescriptionError(f"{path}: not valid YAML: {error}") from error


@FORMATS.register("pardyn")
def _load_pardyn(path: Path) -> RobotDescription:
    return parse_description(_read_yaml(path), source=path)


@FORMATS.register("gepetto")
def _load_gepetto(path: Path) -> RobotDescription:
    return parse_gepetto(_read_yaml(path), source=path)


@FORMATS.register("mjcf")
def _load_mjcf(path: Path) -> RobotDescription:
    from pardyn.description.mjcf import read_mjcf  # noqa: PLC0415 - needs mujoco

    robot = read_mjcf(path)
    closures = tuple(
        Closure(
            name=name,
            frames=(frame_a, frame_b),
            type=kind,
            components=tuple(COMPONENT_NAMES.index(c) for c in CLOSURE_TYPES[kind]),
        )
        for name, frame_a, frame_b, kind in robot.closures
    )
    if not robot.actuated:
        raise DescriptionError(f"{path}: <actuator>: no motor drives a joint; pardyn needs the actuated joints")
    return RobotDescription(
        name=path.stem,
        source=path,
        urdf=path,
        task_names=tuple(robot.actuated),
        task_joints=tuple(robot.actuated),
        actuated=tuple(robot.actuated),
        sensed=(),
        closures=closures,
        working_mode=(),
        assembly_mode=(),
        home_task=(),
        home_joints={},
        tree_format="mjcf",
        home_task_given=False,
        description_format="mjcf",
    )


def detect_format(path: Path) -> str:
    """The format of a description file, from its content (module docstring)."""
    if path.suffix.lower() in (".xml", ".mjcf"):
        head = path.read_text(errors="replace")[:4096]
        if "<mujoco" in head:
            return "mjcf"
        raise DescriptionError(f"{path}: an XML file without a <mujoco> root is not a robot description pardyn reads")
    if path.suffix.lower() in (".yaml", ".yml"):
        return "gepetto" if is_gepetto(_read_yaml(path)) else "pardyn"
    raise DescriptionError(
        f"{path}: unknown description format (expected a pardyn or Gepetto .yaml, or an MJCF .xml)"
    )


def load_description(robot: str | Path, *, format: str | None = None) -> RobotDescription:  # noqa: A002
    """A robot description by name (``config/robots/<name>.yaml``) or file path, in any format.

    Args:
        robot: a shipped robot's name or the path of a description file.
        format: one of :data:`FORMATS`; detected from the file by default.
    """
    path = Path(robot)
    if path.suffix.lower() not in (".yaml", ".yml", ".xml", ".mjcf"):
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
    return FORMATS.get(format)(path)
