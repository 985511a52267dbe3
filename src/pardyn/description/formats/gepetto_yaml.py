"""``gepetto``: Gepetto's parallel robots, a ``robot.yaml`` with ``closed_loop:`` beside its ``robot.urdf``
(:mod:`pardyn.description.gepetto`)."""

from __future__ import annotations

from pathlib import Path

from pardyn.description.config import RobotDescription
from pardyn.description.formats.protocol import FORMATS, YAML_SUFFIXES, NoOptions, read_yaml
from pardyn.description.gepetto import is_gepetto, parse_gepetto


@FORMATS.plugin
class Gepetto:
    name = "gepetto"
    Options = NoOptions

    def accepts(self, path: Path) -> bool:
        return path.suffix.lower() in YAML_SUFFIXES and is_gepetto(read_yaml(path))

    def load(self, path: Path, options: NoOptions) -> RobotDescription:
        return parse_gepetto(read_yaml(path), source=path)
