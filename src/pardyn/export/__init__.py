"""Export a robot for other simulators: one registry of formats.

>>> import pardyn
>>> from pardyn.export import export
>>> files = export(pardyn.load_robot("dualv"), "sdf", "out/gazebo/dualv")
>>> sorted(files)   # model.sdf, model.gz.sdf, world.sdf, world_classic.sdf, robot_description.urdf, ...

A format is a plug-in (:class:`pardyn.registry.Plugin`) registered in :data:`FORMATS`: ``name``,
``Options`` (its settings; ``pardyn export``'s flags are generated from them) and
``build(robot, out_dir, options, overwrite) -> {role: path}``. ``sdf`` (:func:`write_sdf`) writes the SDF model with its loops
(:mod:`pardyn.export.sdf`), the gz-sim variant and worlds, and the ros2_control files
(:mod:`pardyn.export.ros2_control`) that ``launch/gazebo.launch.py`` uses; the
mechanism they describe (virtual chain, closures, placeholder masses) is decided once
in :mod:`pardyn.export.mechanism`. ``c`` writes the robot's closed-loop kernels as a C library with
a CMake target (:mod:`pardyn.export.c_library`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pardyn.export.errors import ExportError
from pardyn.export.mechanism import BodyGraph, build_mechanism
from pardyn.registry import Registry, option, options_from, refuse_unread, shared_options

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["FORMATS", "ExportError", "BodyGraph", "build_mechanism", "claim_files", "export", "format_options",
           "write_sdf"]


def _summary(mechanism: BodyGraph, robot: Robot) -> dict[str, Any]:
    return {
        "robot": mechanism.name,
        "platform": mechanism.platform,
        "free_platform": mechanism.free_platform,
        "dropped_virtual_joints": list(mechanism.dropped_joints),
        "guide_joints": list(mechanism.guide_joints),
        "closures": {weld.closure: {"parent": weld.parent, "child": weld.child, "joint": weld.name}
                     for weld in mechanism.welds},
        "placeholder_links": list(mechanism.placeholders),
        "completed_planar_inertias": list(mechanism.completed_inertias),
        "rotor_disks_kg_m2": mechanism.rotor_disks,
        "unrepresented": list(mechanism.unrepresented),
        "actuated": list(robot.actuated_names),
        "sensed": list(robot.sensed_names),
        "home_offsets": mechanism.home_offsets,
    }


class ExportFormat(Protocol):
    """An export format (module docstring)."""

    name: str
    Options: type

    def build(self, robot: Robot, out: Path, options: Any, overwrite: bool) -> dict[str, Path]:
        """Write ``robot`` into ``out``; ``{role: path}``."""


FORMATS: Registry[ExportFormat] = Registry("export format")
"""Export formats by name."""


@dataclass(frozen=True)
class SdfOptions:
    """The SDF model's settings (:func:`build_mechanism`)."""

    placeholder_mass: float = option(1e-3, "mass (kg) of links pardyn models as massless", unit="kg", low=0.0,
                                     high=1e6, low_open=True)
    placeholder_inertia: float = option(1e-6, "their isotropic inertia (kg m^2)", unit="kg m^2", low=0.0, high=1e6,
                                        low_open=True)


def write_sdf(robot: Robot, out: str | Path, options: SdfOptions | None = None, *,
              overwrite: bool = False) -> dict[str, Path]:
    """Write the SDF model, gz-sim and Classic worlds and ros2_control files of ``robot`` into ``out``.

    ``options``: :class:`SdfOptions` (the placeholder masses of :func:`build_mechanism`).
    Returns ``{role: path}``. Raises :class:`ExportError` (nothing written) when the robot
    has a closure no SDF joint reproduces.
    """
    from pardyn.export import ros2_control, sdf  # noqa: PLC0415

    mechanism = build_mechanism(robot, **asdict(options or SdfOptions()))
    out = Path(out)
    claim_files(out, ["model.sdf", "model.gz.sdf", "world.sdf", "world_classic.sdf", "robot_description.urdf",
                      "controllers.yaml", "export.json"], overwrite=overwrite)
    controllers = out / "controllers.yaml"
    contents = {
        "model": ("model.sdf", sdf.model_sdf(mechanism)),
        "gz_model": ("model.gz.sdf", sdf.gz_model_sdf(mechanism, controllers)),
        "gz_world": ("world.sdf", sdf.gz_world_sdf(mechanism)),
        "classic_world": ("world_classic.sdf", sdf.classic_world_sdf(mechanism)),
        "robot_description": ("robot_description.urdf", ros2_control.robot_description(robot)),
        "controllers": ("controllers.yaml", ros2_control.controllers_yaml(robot)),
        "summary": ("export.json", json.dumps(_summary(mechanism, robot), indent=2) + "\n"),
    }
    out.mkdir(parents=True, exist_ok=True)
    paths = {}
    for role, (name, text) in contents.items():
        path = out / name
        path.write_text(text)
        paths[role] = path
    return paths


@FORMATS.plugin
class Sdf:
    name = "sdf"
    Options = SdfOptions

    def build(self, robot: Robot, out: Path, options: SdfOptions, overwrite: bool) -> dict[str, Path]:
        return write_sdf(robot, out, options, overwrite=overwrite)


@dataclass(frozen=True)
class NoOptions:
    """A format without settings."""


@FORMATS.plugin
class CLibrary:
    """The robot's compiled kernels as a self-contained C library (:mod:`pardyn.export.c_library`)."""

    name = "c"
    Options = NoOptions

    def build(self, robot: Robot, out: Path, options: NoOptions, overwrite: bool) -> dict[str, Path]:
        from pardyn.export.c_library import write_c_library  # noqa: PLC0415

        return write_c_library(robot, out, overwrite=overwrite)


def format_options() -> list:
    """Every format's options, each once with the formats reading it (``pardyn export``'s flags)."""
    return shared_options((name, FORMATS.get(name).Options, "") for name in FORMATS)


def claim_files(out: Path, names: list[str], *, overwrite: bool) -> None:
    """Check, before anything is written, that ``out`` is a directory (or can be one) where none of ``names``
    exists, unless ``overwrite``.

    Raises:
        ExportError: naming the files that would be replaced (and ``--force``), or what ``out`` is instead.
    """
    if out.exists() and not out.is_dir():
        raise ExportError(f"--out {out}: is a file, not a directory")
    existing = [name for name in names if (out / name).exists()]
    if existing and not overwrite:
        raise ExportError(f"--out {out}: would replace {len(existing)} existing files ({', '.join(existing[:4])}"
                          f"{', ...' if len(existing) > 4 else ''}): give another --out, or --force to replace them")


def export(robot: Robot, fmt: str, out: str | Path, *, overwrite: bool = False, **options: Any) -> dict[str, Path]:
    """Write ``robot`` in format ``fmt`` (a name of :data:`FORMATS`) into the directory ``out``.

    ``options``: the format's options by name (``placeholder_mass=...`` for ``sdf``). Files already in
    ``out`` are replaced only with ``overwrite`` (:func:`claim_files`, checked first).

    Raises:
        InputError: unknown format (the message lists the known ones), an option the format does not read.
        ExportError: the robot cannot be written honestly in that format, ``out`` is empty or not a directory,
            or a file would be replaced without ``overwrite``.
    """
    if not str(out).strip():  # Path("") is the current directory
        raise ExportError("--out is empty: give the directory to write into")
    plugin = FORMATS.get(fmt)
    refuse_unread(fmt, options, format_options(), "format")
    return plugin.build(robot, Path(out), options_from(plugin.Options, options), overwrite)
