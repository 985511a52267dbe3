"""The ``excitation:`` section of a robot YAML: defaults of its exciting trajectories, typed.

Optional. The bounds of the Fourier trajectories that
:func:`pardyn.excitation.design.design_exciting_trajectory` draws around home,
one value per task coordinate (all of them); without it, the defaults of
:mod:`pardyn.excitation.bounds` for the shipped robots::

    excitation:
      amplitude: {x: 0.08, y: 0.06, phi: 0.3}            # m, rad: largest deviation from the centre
      max_velocity: {x: 6.7, y: 6.7, phi: 26.7}          # m/s, rad/s
      max_acceleration: {x: 40.0, y: 40.0, phi: 160.0}   # m/s^2, rad/s^2
      base_frequency_hz: 1.0                             # fundamental of the series (Hz)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from pardyn.description.fields import YamlFields
from pardyn.errors import InputError

__all__ = ["EXCITATION_BOUNDS", "ExcitationSettings", "parse_excitation"]

EXCITATION_BOUNDS: tuple[str, ...] = ("amplitude", "max_velocity", "max_acceleration")
"""Keys of the ``excitation:`` section given per task coordinate."""


@dataclass(frozen=True)
class ExcitationSettings:
    """Bounds of a robot's exciting trajectories, one value per task coordinate (n,).

    Attributes:
        amplitude: largest deviation from the centre (m, rad).
        max_velocity: velocity bound (m/s, rad/s).
        max_acceleration: acceleration bound (m/s^2, rad/s^2).
        base_frequency_hz: fundamental frequency of the Fourier series (Hz).
    """

    amplitude: tuple[float, ...]
    max_velocity: tuple[float, ...]
    max_acceleration: tuple[float, ...]
    base_frequency_hz: float

    def __post_init__(self) -> None:
        sizes = {len(self.amplitude), len(self.max_velocity), len(self.max_acceleration)}
        if len(sizes) != 1:
            raise InputError(
                f"excitation: amplitude, max_velocity, max_acceleration need one value per task coordinate each, "
                f"got {len(self.amplitude)}, {len(self.max_velocity)}, {len(self.max_acceleration)}"
            )
        for name in EXCITATION_BOUNDS:
            values = getattr(self, name)
            if not all(math.isfinite(v) and v > 0.0 for v in values):
                raise InputError(f"excitation: {name} must be positive and finite, got {list(values)}")
        if not (math.isfinite(self.base_frequency_hz) and self.base_frequency_hz > 0.0):
            raise InputError(f"excitation: base_frequency_hz must be positive (Hz), got {self.base_frequency_hz}")

    def design_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`~pardyn.excitation.design.design_exciting_trajectory`."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


def parse_excitation(reader: YamlFields, raw: Any, *, task_names: Sequence[str]) -> ExcitationSettings:
    """The typed ``excitation:`` section (every key required, every value positive)."""
    section = reader.mapping(raw, "excitation")
    keys = {*EXCITATION_BOUNDS, "base_frequency_hz"}
    reader.check_keys(section, "excitation", keys)
    missing = sorted(keys - set(section))
    if missing:
        raise reader.fail("excitation", f"missing {missing}")

    def positive(value: Any, key: str) -> float:
        number = reader.number(value, key)
        if not number > 0.0:
            raise reader.fail(key, f"must be positive, got {number}")
        return number

    bounds = {}
    for name in EXCITATION_BOUNDS:
        item = reader.mapping(section[name], f"excitation.{name}")
        if set(item) != set(task_names):
            raise reader.fail(f"excitation.{name}", f"expected one value per task coordinate {list(task_names)}, "
                                                    f"got {list(item)}")
        bounds[name] = tuple(positive(item[n], f"excitation.{name}.{n}") for n in task_names)
    return ExcitationSettings(**bounds, base_frequency_hz=positive(section["base_frequency_hz"],
                                                                   "excitation.base_frequency_hz"))
