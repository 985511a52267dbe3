"""Robot description formats, one registry: pardyn's, Gepetto's, MJCF and a bare URDF.

=========== ====================================== ===========================================
format      files                                  detected by
=========== ====================================== ===========================================
``pardyn``  ``<name>.yaml`` + its URDF             a YAML file with ``urdf:`` (or a robot name)
``gepetto`` ``robot.yaml`` + ``robot.urdf``        a YAML file with ``closed_loop:``
``mjcf``    one MuJoCo XML file                    ``.xml`` (or ``.mjcf``) with a ``<mujoco>`` root
``urdf``    one URDF file                          ``.urdf`` (or ``.xml``) with a ``<robot>`` root
=========== ====================================== ===========================================

A bare URDF is read with its starting description (:mod:`pardyn.description.starting`: closures from
onshape-to-robot's closing frames, actuated joints from its transmissions, else the joints on its root link), the
YAML that ``pardyn robots --init FILE`` writes; an SDF file is refused with what to give instead.

Every format becomes one :class:`~pardyn.description.config.RobotDescription`:
the rest of pardyn does not know where a robot came from.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from pardyn.description.config import (
    CLOSURE_TYPES,
    COMPONENT_NAMES,
    Closure,
    RobotDescription,
    coupling,
    parse_description,
)
from pardyn.description.gepetto import is_gepetto, parse_gepetto
from pardyn.errors import DescriptionError
from pardyn.registry import Registry
from pardyn.resources import robots_directory
from pardyn.textio import load_yaml

__all__ = ["FORMATS", "detect_format", "load_description"]


FORMATS: Registry[Callable[[Path], RobotDescription]] = Registry("description format")
"""Format name -> loader of a description file."""


def _read_yaml(path: Path) -> Any:
    return load_yaml(path, what="robot YAML", error=DescriptionError)


@FORMATS.register("pardyn")
def _load_pardyn(path: Path) -> RobotDescription:
    description = parse_description(_read_yaml(path), source=path)
    if description.tree_format == "mjcf":  # the vendor's equalities and springs, unless the YAML gives its own
        from pardyn.description.mjcf import read_mjcf  # noqa: PLC0415 - needs mujoco

        tree = read_mjcf(description.urdf, description.inertials, yaml=path, base=description.base)
        description = replace(description, closures=description.closures or _mjcf_closures(tree),
                              springs=description.springs or tree.springs,
                              transmissions=description.transmissions or _tendon_transmission(
                                  tree, description.actuated, source=path))
    return description


def _mjcf_closures(robot) -> tuple[Closure, ...]:
    """The closures of an MJCF's ``<equality>`` section (``connect``: 3D, ``weld``: 6D), from its
    :class:`~pardyn.description.mjcf.MjcfRobot`."""
    return tuple(
        coupling(c.name, c.frame_a, c.frame_b, *c.coefficients) if c.type == "coupling" else
        Closure(name=c.name, frames=(c.frame_a, c.frame_b), type=c.type,
                components=tuple(COMPONENT_NAMES.index(k) for k in CLOSURE_TYPES[c.type]))
        for c in robot.closures
    )


def _tendon_transmission(robot, actuated=None, *, source: Path | None = None):
    """The fixed-tendon actuators of an MJCF as a :class:`~pardyn.dynamics.transmission.Transmission` (motor: the
    tendon's length, ``theta = ratio (q_a - q_0)``); joint motors keep ratio 1. None without tendon actuators.

    ``actuated``: the joints of a pardyn YAML around the MJCF (default: the MJCF's own); a tendon whose driving
    joint is not among them is left out, said once (``source``: that YAML).
    """
    actuated = tuple(robot.actuated if actuated is None else actuated)
    unused = [(actuator, joint) for actuator, joint, _, _ in robot.tendon_drives if joint not in actuated]
    if unused and source is not None:
        warnings.warn(f"{source}: actuated: {list(actuated)} leaves out the joints that the MJCF's tendon actuators "
                      f"drive {[joint for _, joint in unused]} (actuators {[a for a, _ in unused]}): their "
                      "transmissions are not used", stacklevel=4)
    drives = {joint: (actuator, ratio, constant) for actuator, joint, ratio, constant in robot.tendon_drives
              if joint in actuated}
    if not drives:
        return None
    from pardyn.dynamics.transmission import Transmission  # noqa: PLC0415

    motors = [drives[j][0] if j in drives else j for j in actuated]
    ratio = np.diag([drives[j][1] if j in drives else 1.0 for j in actuated])
    offset = np.array([-drives[j][2] / drives[j][1] if j in drives else 0.0 for j in actuated])
    return Transmission(tuple(motors), actuated, ratio, offset)


@FORMATS.register("urdf")
def _load_urdf(path: Path) -> RobotDescription:
    """A bare URDF: its starting description (:mod:`pardyn.description.starting`: closures from onshape-to-robot's
    closing frames, actuated joints from its transmissions), said in a note; what to do when it does not load."""
    from pardyn.description.starting import starting_description  # noqa: PLC0415

    raw, comments = starting_description(path)
    try:
        description = parse_description(raw, source=path)
    except DescriptionError as error:
        raise DescriptionError(f"{error} (read as a bare URDF; `pardyn robots --init {path}` writes the YAML to "
                               "edit)") from error
    note = (f"a bare URDF, read with a starting description ({'; '.join(comments)}); `pardyn robots --init "
            f"{path.name}` writes it as a YAML to edit")
    return replace(description, description_format="urdf", notes=(*description.notes, note))


@FORMATS.register("gepetto")
def _load_gepetto(path: Path) -> RobotDescription:
    return parse_gepetto(_read_yaml(path), source=path)


@FORMATS.register("mjcf")
def _load_mjcf(path: Path) -> RobotDescription:
    from pardyn.description.mjcf import read_mjcf  # noqa: PLC0415 - needs mujoco

    robot = read_mjcf(path)
    closures = _mjcf_closures(robot)
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
        springs=robot.springs,
        transmissions=_tendon_transmission(robot),
        home_task_given=False,
        description_format="mjcf",
    )


def detect_format(path: Path) -> str:
    """The format of a description file, from its content (module docstring)."""
    if path.suffix.lower() in (".yaml", ".yml"):
        return "gepetto" if is_gepetto(_read_yaml(path)) else "pardyn"
    if path.suffix.lower() in TREE_SUFFIXES:
        from pardyn.description.starting import tree_kind  # noqa: PLC0415

        kind = tree_kind(path)
        if kind == "sdf":
            raise DescriptionError(f"{path}: an SDF file: pardyn reads URDF and MJCF trees (with a pardyn YAML "
                                   "around them, or bare); export the robot as URDF or MJCF and give that file")
        return kind
    raise DescriptionError(
        f"{path}: unknown description format (expected a pardyn or Gepetto .yaml, an MJCF .xml or a URDF)"
    )


TREE_SUFFIXES = (".urdf", ".sdf", ".xml", ".mjcf")
"""Suffixes of tree files read bare (:func:`_load_urdf`, :func:`_load_mjcf`)."""


def load_description(robot: str | Path, *, format: str | None = None) -> RobotDescription:  # noqa: A002
    """A robot description by name (``config/robots/<name>.yaml``) or file path, in any format.

    Args:
        robot: a shipped robot's name or the path of a description file.
        format: one of :data:`FORMATS`; detected from the file by default.
    """
    path = Path(robot)
    if path.suffix.lower() not in (".yaml", ".yml", *TREE_SUFFIXES):
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
