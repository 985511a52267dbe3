"""Per-robot bounds of exciting trajectories (the identification runs' and the ``trajectory`` node's defaults).

:class:`ExcitationSettings` (the typed ``excitation:`` section of a robot YAML,
:mod:`pardyn.description.excitation`) holds what
:func:`pardyn.identification.exciting.design_exciting_trajectory` needs to know about a
robot: the largest deviation from the centre, the velocity and acceleration bounds per
task coordinate, and the fundamental frequency. A robot's defaults are its YAML's
section, else :data:`DEFAULT_EXCITATION` for the shipped robots (a robot with neither
must be given them); :func:`excitation_settings` overrides them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pardyn.description.excitation import ExcitationSettings
from pardyn.errors import InputError

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = ["DEFAULT_EXCITATION", "ExcitationSettings", "excitation_settings"]


DEFAULT_EXCITATION: dict[str, ExcitationSettings] = {
    # Fourier trajectories around home: amplitude (m, rad), rate bounds, 5 harmonics of f_0.
    "dualv": ExcitationSettings(amplitude=(0.08, 0.06, 0.3), max_velocity=(6.7, 6.7, 26.7),
                                max_acceleration=(40.0, 40.0, 160.0), base_frequency_hz=1.0),
    "rrr3": ExcitationSettings(amplitude=(0.08, 0.08, 0.2), max_velocity=(5.0, 5.0, 15.0),
                               max_acceleration=(30.0, 30.0, 100.0), base_frequency_hz=1.0),
    "five_bar": ExcitationSettings(amplitude=(0.06, 0.06), max_velocity=(5.0, 5.0),
                                   max_acceleration=(30.0, 30.0), base_frequency_hz=1.0),
    # Wu 2009 machine (x, y in m, alpha in rad) around home (0, 2.8 m, 0.5 rad): a heavy machine tool.
    "wu3r": ExcitationSettings(amplitude=(0.15, 0.15, 0.3), max_velocity=(1.0, 1.0, 2.0),
                               max_acceleration=(8.0, 8.0, 16.0), base_frequency_hz=0.5),
    # UR5e joints (rad): the ur5e_calibration experiment's limits.
    "ur5e": ExcitationSettings(amplitude=(1.0, 0.5, 0.7, 1.0, 1.0, 1.5), max_velocity=(1.5, 1.5, 1.5, 2.0, 2.0, 2.0),
                               max_acceleration=(4.0, 4.0, 4.0, 6.0, 6.0, 6.0), base_frequency_hz=0.2),
    # Delta (x, y, z in m) around home (0, 0, -1.2 m): +-0.15 m across, +-0.08 m in height (working
    # mode |q_i| < 90 deg everywhere; the closure-Jacobian condition bound keeps it off singularities).
    "delta": ExcitationSettings(amplitude=(0.15, 0.15, 0.08), max_velocity=(2.0, 2.0, 1.5),
                                max_acceleration=(25.0, 25.0, 20.0), base_frequency_hz=1.0),
    # Hexapod (x, y, z in m; yaw, pitch, roll in rad) around home (z = 0.15 m): legs within
    # [0.13, 0.21] m, leg speed <= 0.2 m/s (Wolfram maxSpeed), universal-joint tilt <= 45 deg.
    "hexapod": ExcitationSettings(amplitude=(0.02, 0.02, 0.015, 0.2, 0.2, 0.2),
                                  max_velocity=(0.12, 0.12, 0.1, 1.0, 1.0, 1.0),
                                  max_acceleration=(3.0, 3.0, 3.0, 25.0, 25.0, 25.0), base_frequency_hz=1.0),
}
"""Default excitation of the shipped robots, by robot name."""


def excitation_settings(
    robot: Robot | str,
    *,
    amplitude: Sequence[float] = (),
    max_velocity: Sequence[float] = (),
    max_acceleration: Sequence[float] = (),
    base_frequency_hz: float = 0.0,
) -> ExcitationSettings:
    """The robot's default excitation with the given values in place of the defaults (empty or 0: the default).

    ``robot``: a :class:`~pardyn.Robot` (its YAML's ``excitation:`` section first) or a robot name.

    Raises:
        InputError: the robot has no default for a value that is not given (names the values).
    """
    given: dict[str, Any] = {
        "amplitude": tuple(amplitude), "max_velocity": tuple(max_velocity),
        "max_acceleration": tuple(max_acceleration), "base_frequency_hz": base_frequency_hz,
    }
    given = {key: value for key, value in given.items() if value}
    robot_name = robot if isinstance(robot, str) else robot.name
    default = None if isinstance(robot, str) else robot.description.excitation
    default = DEFAULT_EXCITATION.get(robot_name) if default is None else default
    if default is not None:
        return replace(default, **given)
    missing = [key for key in ("amplitude", "max_velocity", "max_acceleration", "base_frequency_hz") if key not in given]
    if missing:
        raise InputError(f"parameters {missing}: {robot_name} has no default excitation; set them")
    return ExcitationSettings(**given)
