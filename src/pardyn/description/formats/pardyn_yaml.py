"""``pardyn``: pardyn's own description, ``<name>.yaml`` (the ``urdf:`` key names its URDF or MJCF tree), the
format of ``config/robots`` (:func:`pardyn.description.config.parse_description`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pardyn.description.config import RobotDescription, parse_description
from pardyn.description.formats.protocol import FORMATS, YAML_SUFFIXES, NoOptions, read_yaml


@FORMATS.plugin
class Pardyn:
    name = "pardyn"
    Options = NoOptions

    def accepts(self, path: Path) -> bool:
        return path.suffix.lower() in YAML_SUFFIXES  # asked after gepetto

    def load(self, path: Path, options: NoOptions) -> RobotDescription:
        description = parse_description(read_yaml(path), source=path)
        if description.tree_format == "mjcf":  # the vendor's equalities and springs, unless the YAML gives its own
            from pardyn.description.formats.mjcf import mjcf_closures, tendon_transmission  # noqa: PLC0415
            from pardyn.description.mjcf import read_mjcf  # noqa: PLC0415 - needs mujoco

            tree = read_mjcf(description.urdf, description.inertials, yaml=path, base=description.base)
            description = replace(description, closures=description.closures or mjcf_closures(tree),
                                  springs=description.springs or tree.springs,
                                  transmissions=description.transmissions or tendon_transmission(
                                      tree, description.actuated, source=path))
        return description
