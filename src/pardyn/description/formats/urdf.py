"""``urdf``: a bare URDF, read with its starting description (:mod:`pardyn.description.starting`: closures from
onshape-to-robot's closing frames, actuated joints from its transmissions, else the joints on its root link), the
YAML that ``pardyn robots --init FILE`` writes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pardyn.description.config import RobotDescription, parse_description
from pardyn.description.formats.protocol import FORMATS, NoOptions, tree_file
from pardyn.errors import DescriptionError


@FORMATS.plugin
class Urdf:
    name = "urdf"
    Options = NoOptions

    def accepts(self, path: Path) -> bool:
        return tree_file(path, "urdf")

    def load(self, path: Path, options: NoOptions) -> RobotDescription:
        """Its starting description, said in a note; what to do when it does not load."""
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
