"""Errors of the export: a robot (or a part of it) that a format cannot hold honestly."""

from pardyn.errors import PardynError

__all__ = ["ExportError"]


class ExportError(PardynError):
    """The robot cannot be written in the format without misrepresenting it; names file, closure or joint."""
