"""Typed reading of YAML configuration files with errors that name the file and the key."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from pardyn.errors import DescriptionError
from pardyn.textio import shown

__all__ = ["MAX_NUMBER", "YamlFields"]

MAX_NUMBER = 1.0e12
"""Largest magnitude of a number in a robot file (m, rad, kg, N m, Hz): beyond it, sums and squares overflow."""


class YamlFields:
    """Typed access to a parsed YAML file; every error names the file and the key at fault.

    ``fields.number(raw["mass"], "dynamics.bodies[0].mass")`` returns a float or
    raises :class:`DescriptionError` ``"<file>: dynamics.bodies[0].mass: expected ..."``.
    """

    def __init__(self, source: Path) -> None:
        self.source = source

    def fail(self, key: str, message: str) -> DescriptionError:
        return DescriptionError(f"{self.source}: {key}: {message}")

    def mapping(self, value: Any, key: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(key, f"expected a mapping, got {type(value).__name__}")
        bad = [name for name in value if not isinstance(name, str)]
        if bad:
            raise self.fail(key, f"keys must be names (strings), got {shown(bad[0])} ({type(bad[0]).__name__})")
        return value

    def string(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(key, f"expected a non-empty string, got {shown(value)}")
        return value

    def strings(self, value: Any, key: str) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self.fail(key, f"expected a list of names, got {shown(value)}")
        if len(value) > 100_000:
            raise self.fail(key, f"{len(value)} names: more than a robot has")
        names = tuple(self.string(item, f"{key}[{i}]") for i, item in enumerate(value))
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise self.fail(key, f"names listed twice: {duplicates}")
        return names

    def number(self, value: Any, key: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"expected a number, got {shown(value)}")
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise self.fail(key, f"expected a finite number, got {shown(value)}")
        if abs(number) > MAX_NUMBER:
            raise self.fail(key, f"{shown(value)} is beyond {MAX_NUMBER:g} in magnitude: no robot's value (units?)")
        return number

    def vector(self, value: Any, key: str, size: int) -> np.ndarray:
        if not isinstance(value, list) or len(value) != size:
            raise self.fail(key, f"expected a list of {size} numbers, got {shown(value)}")
        return np.array([self.number(v, f"{key}[{i}]") for i, v in enumerate(value)])

    def names(self, value: Any, key: str) -> list[str]:
        """A non-empty list of distinct names."""
        names = list(self.strings(value, key))
        if not names:
            raise self.fail(key, f"expected a non-empty list of names, got {shown(value)}")
        return names

    def check_keys(self, item: Mapping[str, Any], key: str, allowed: set[str]) -> None:
        """Refuse keys outside ``allowed``, naming each by its path (``dynamics.bodies[0].mas``).

        ``key`` is the path of ``item`` itself (``"<top>"`` for the file's top level).
        """
        unknown = sorted(shown(name, 40) if not isinstance(name, str) else shown(name, 40)[1:-1]
                         for name in set(item) - allowed)
        if unknown:
            paths = ", ".join(name if key == "<top>" else f"{key}.{name}" for name in unknown)
            where = "at the top level" if key == "<top>" else f"under {key}"
            raise self.fail(paths, f"unknown key{'s' if len(unknown) > 1 else ''}; allowed {where}: {sorted(allowed)}")

