"""A description format of its own, as a user adds one: this file is the whole format.

``json``: pardyn's description written as JSON (the keys of ``config/robots/<name>.yaml``). The module registers
nothing at import: :func:`register_format` does (the test), as a module of ``pardyn.description.formats`` would
with ``@FORMATS.plugin`` on the class.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from pardyn.description import FORMATS, RobotDescription, parse_description
from pardyn.description.formats.protocol import NoOptions


class JsonFormat:
    name = "json"
    Options = NoOptions

    def accepts(self, path: Path) -> bool:
        return path.suffix.lower() == ".json"

    def load(self, path: Path, options: NoOptions) -> RobotDescription:
        description = parse_description(json.loads(path.read_text()), source=path)
        return replace(description, description_format=self.name)


def register_format() -> str:
    """Register the format (what ``@FORMATS.plugin`` on the class does in a module of the package); its name."""
    FORMATS.plugin(JsonFormat)
    return JsonFormat.name
