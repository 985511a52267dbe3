"""What a description format is and the registry of formats (:mod:`pardyn.description.formats`).

A format (:class:`DescriptionFormat`) reads one kind of description file into a
:class:`~pardyn.description.config.RobotDescription`: ``name``, ``accepts(path)`` (whether the file is its own, from
its suffix and content), ``Options`` (a frozen dataclass of :func:`pardyn.registry.option` fields: its settings)
and ``load(path, options)``. :data:`FORMATS` holds them in the order they are asked (a Gepetto YAML before a
pardyn one).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pardyn.description.config import RobotDescription
from pardyn.errors import DescriptionError
from pardyn.registry import Registry
from pardyn.textio import load_yaml

__all__ = ["FORMATS", "TREE_SUFFIXES", "YAML_SUFFIXES", "DescriptionFormat", "NoOptions", "read_yaml", "tree_file"]


class DescriptionFormat(Protocol):
    """A description format (module docstring)."""

    name: str
    Options: type

    def accepts(self, path: Path) -> bool:
        """Whether ``path`` (an existing file) is a description of this format."""

    def load(self, path: Path, options: Any) -> RobotDescription:
        """The description in ``path``.

        Raises:
            DescriptionError: naming the file and what is wrong or missing.
        """


FORMATS: Registry[DescriptionFormat] = Registry("description format")
"""Description formats by name (``@FORMATS.plugin`` on the class), in the order their ``accepts`` is asked."""


@dataclass(frozen=True)
class NoOptions:
    """A format without settings."""


YAML_SUFFIXES = (".yaml", ".yml")
"""Suffixes of the YAML descriptions (pardyn's, Gepetto's)."""

TREE_SUFFIXES = (".urdf", ".sdf", ".xml", ".mjcf")
"""Suffixes of tree files read bare (URDF, MJCF; SDF refused)."""


def read_yaml(path: Path) -> Any:
    """The robot YAML ``path`` as Python data (DescriptionError naming the file if it is not YAML)."""
    return load_yaml(path, what="robot YAML", error=DescriptionError)


def tree_file(path: Path, kind: str) -> bool:
    """Whether ``path`` is a tree file (by suffix) whose root element says ``kind`` (``urdf``, ``mjcf``, ``sdf``)."""
    if path.suffix.lower() not in TREE_SUFFIXES:
        return False
    from pardyn.description.starting import tree_kind  # noqa: PLC0415

    try:
        return tree_kind(path) == kind
    except DescriptionError:  # no known root: no format's (detect_format says so)
        return False
