"""``sdf``: an SDF file is recognised and refused with what to give instead (pardyn reads URDF and MJCF trees;
``pardyn export sdf`` writes SDF)."""

from __future__ import annotations

from pathlib import Path

from pardyn.description.config import RobotDescription
from pardyn.description.formats.protocol import FORMATS, NoOptions, tree_file
from pardyn.errors import DescriptionError


@FORMATS.plugin
class Sdf:
    name = "sdf"
    Options = NoOptions

    def accepts(self, path: Path) -> bool:
        return tree_file(path, "sdf")

    def load(self, path: Path, options: NoOptions) -> RobotDescription:
        raise DescriptionError(f"{path}: an SDF file: pardyn reads URDF and MJCF trees (with a pardyn YAML around "
                               "them, or bare); export the robot as URDF or MJCF and give that file")
