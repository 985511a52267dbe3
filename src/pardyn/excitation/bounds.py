"""Per-robot bounds of exciting trajectories (the identification runs' and the ``trajectory`` node's defaults).

:class:`ExcitationSettings` (the typed ``excitation:`` section of a robot YAML,
:mod:`pardyn.description.excitation`) holds what
:func:`pardyn.excitation.design.design_exciting_trajectory` needs to know about a
robot: the largest deviation from the centre, the velocity and acceleration bounds per
task coordinate, and the fundamental frequency. A robot's defaults are its YAML's
section (every shipped robot that is identified has one), else derived from its limits
and home by :func:`derived_excitation` (said once per robot, as a warning);
:func:`excitation_settings` overrides them value by value.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from pardyn.description.excitation import EXCITATION_BOUNDS, ExcitationSettings
from pardyn.errors import InputError

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["DERIVED_FREQUENCY_HZ", "ExcitationSettings", "derived_excitation", "excitation_settings"]

DERIVED_FREQUENCY_HZ = 0.5
"""Fundamental of the derived defaults (Hz); with the design's 5 harmonics the fastest is 2.5 Hz."""
_HARMONICS = 5
_SIZE_FRACTION = 0.1  # a translation's amplitude: this fraction of the robot's size at home
_ANGLE = 0.2  # rad: a rotation's amplitude
_LIMIT_FRACTION = 0.5  # of the distance from home to the nearest position limit, of a velocity limit
_KEYS = (*EXCITATION_BOUNDS, "base_frequency_hz")


def _size(robot: Robot) -> float:
    """Largest distance between two joint origins at home (m): the robot's size."""
    import pinocchio as pin  # noqa: PLC0415

    data = robot.model.createData()
    pin.forwardKinematics(robot.model, data, robot.home)
    points = np.array([data.oMi[j].translation for j in range(robot.model.njoints)])
    return float(np.max(np.linalg.norm(points[:, None, :] - points[None, :, :], axis=2)))


def derived_excitation(robot: Robot) -> ExcitationSettings:
    """Excitation bounds derived from the robot's home and limits, for robots without an ``excitation:`` section.

    Per task coordinate: an amplitude of 10 % of the robot's size (m) or 0.2 rad, shrunk so that, to first order
    (the task-to-actuated velocity map ``J_a`` (n_a, n) at home), every actuated joint keeps within half its
    distance from home to its nearest position limit; the velocity bound ``a w`` and the acceleration bound
    ``a w^2`` with ``w = 2 pi f_0 H`` (``f_0`` = :data:`DERIVED_FREQUENCY_HZ`, ``H`` = 5 harmonics), the velocity
    bound shrunk so that ``|J_a| v`` keeps within half of each actuated joint's velocity limit (URDF or
    ``limits: velocity:``).

    Raises:
        InputError: a bound cannot be derived (home on a position limit, a robot of zero size); names the YAML
            section and its keys.
    """
    source = robot.source
    # a bare URDF/MJCF has no place for pardyn's keys: the file to edit is a pardyn YAML around it
    yaml = source.suffix in (".yaml", ".yml")
    around = f"a pardyn YAML around {source.name} ({source.with_suffix('.yaml').name}: urdf: {source.name}, ...)"
    where = str(source) if yaml else around
    remedy = (f"set them in {where}: excitation: {{amplitude: {{...}}, max_velocity: {{...}}, "
              f"max_acceleration: {{...}}, base_frequency_hz: ...}} (one value per task coordinate "
              f"{list(robot.task_names)})")
    units = robot.task_units
    size = _size(robot)
    amplitude = np.array([_ANGLE if unit == "rad" else _SIZE_FRACTION * size for unit in units])
    velocity_map = np.array([robot.differential.velocities_from_task(robot.home, unit_vector)
                             for unit_vector in np.eye(len(units))]).T[robot.actuated_indices]  # (n_a, n)
    home = robot.home[robot.actuated_indices]
    lower = robot.model.lowerPositionLimit[robot.actuated_indices]
    upper = robot.model.upperPositionLimit[robot.actuated_indices]
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # unbounded joints: limits of +-1e308, inf
        margin = _LIMIT_FRACTION * np.minimum(home - lower, upper - home)
        reach = np.abs(velocity_map) @ amplitude
        amplitude = amplitude * min(1.0, float(np.min(np.where(reach > 0.0, margin / reach, np.inf))))
    if not np.all(amplitude > 0.0) or not np.all(np.isfinite(amplitude)):
        at_limit = [robot.actuated_names[k] for k in np.flatnonzero(margin <= 0.0)]
        why = f"home of {at_limit} on a position limit" if at_limit else f"robot size {size:g} m"
        inside = (f"give a home inside the limits (home: task: in {source.name if yaml else around}; a vendor MJCF's qpos0 often puts "
                  "a gripper on its limit) or " if at_limit else "")
        raise InputError(f"{robot.name}: cannot derive the excitation defaults ({why}); {inside}{remedy}")
    omega = 2.0 * math.pi * DERIVED_FREQUENCY_HZ * _HARMONICS
    velocity = amplitude * omega
    limit = robot.model.velocityLimit[robot.actuated_indices]
    speed = np.abs(velocity_map) @ velocity
    bounded = (limit > 0.0) & np.isfinite(limit) & (speed > 0.0)
    if np.any(bounded):
        with np.errstate(over="ignore"):
            velocity = velocity * min(1.0, float(np.min(_LIMIT_FRACTION * limit[bounded] / speed[bounded])))
    settings = ExcitationSettings(amplitude=tuple(float(a) for a in amplitude),
                                  max_velocity=tuple(float(v) for v in velocity),
                                  max_acceleration=tuple(float(v * omega) for v in velocity),
                                  base_frequency_hz=DERIVED_FREQUENCY_HZ)
    shown = ", ".join(f"{name} {a:.3g} {unit}" for name, a, unit in zip(robot.task_names, amplitude, units))
    warnings.warn(f"{robot.name}: no excitation: section in {source.name}; derived from its limits and home: "
                  f"amplitude {shown}, base_frequency_hz {DERIVED_FREQUENCY_HZ}", stacklevel=3)
    return settings


def excitation_settings(
    robot: Robot | str,
    *,
    amplitude: Sequence[float] = (),
    max_velocity: Sequence[float] = (),
    max_acceleration: Sequence[float] = (),
    base_frequency_hz: float = 0.0,
) -> ExcitationSettings:
    """The robot's default excitation with the given values in place of the defaults (empty or 0: the default).

    ``robot``: a :class:`~pardyn.Robot` or what :func:`~pardyn.load_robot` takes. The defaults: the YAML's
    ``excitation:`` section, else :func:`derived_excitation` (not computed when every value is given).
    """
    given: dict[str, Any] = {
        "amplitude": tuple(amplitude), "max_velocity": tuple(max_velocity),
        "max_acceleration": tuple(max_acceleration), "base_frequency_hz": base_frequency_hz,
    }
    given = {key: value for key, value in given.items() if value}
    if len(given) == len(_KEYS):
        return ExcitationSettings(**given)
    if isinstance(robot, str):
        from pardyn.description.formats import load_description  # noqa: PLC0415

        section = load_description(robot).excitation
        if section is not None:
            return replace(section, **given)
        from pardyn.robot import load_robot  # noqa: PLC0415

        robot = load_robot(robot)
    default = robot.description.excitation
    if default is None:
        default = derived_excitation(robot)
    return replace(default, **given)
