"""Whether a bag was closed by its writer (final ``metadata.yaml``, MCAP footers)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pardyn.bags.errors import BagError
from pardyn.bags.metadata import STATE_KEY, load_metadata

__all__ = ["MCAP_MAGIC", "BagStatus", "bag_status", "check_mcap_start", "has_footer"]

MCAP_MAGIC = b"\x89MCAP0\r\n"
_FOOTER_LENGTH = 1 + 8 + 20 + len(MCAP_MAGIC)  # footer record (0x02) and the closing magic
_OP_FOOTER = 0x02


@dataclass(frozen=True)
class BagStatus:
    """Whether a bag was closed by its writer.

    Attributes:
        path: the bag directory (or storage file).
        storage: ``"mcap"`` or ``"sqlite3"``.
        files: its storage files.
        complete: closed properly (final metadata.yaml, MCAP footers).
        problem: why not, None if complete.
    """

    path: Path
    storage: str
    files: tuple[Path, ...]
    complete: bool
    problem: str | None = None


def has_footer(path: Path) -> bool:
    """Whether the MCAP file ends with a footer record and the closing magic."""
    size = path.stat().st_size
    if size < len(MCAP_MAGIC) + _FOOTER_LENGTH:
        return False
    with open(path, "rb") as stream:
        stream.seek(size - _FOOTER_LENGTH)
        tail = stream.read(_FOOTER_LENGTH)
    return tail[0] == _OP_FOOTER and tail[-len(MCAP_MAGIC):] == MCAP_MAGIC


def check_mcap_start(path: Path, bag: Path) -> None:
    """A storage file that does not start with the MCAP magic is no MCAP file at all (not a killed writer's).

    Raises:
        BagError: kind ``"format"``, naming the file: empty, or not MCAP (nothing to repair).
    """
    with open(path, "rb") as stream:
        head = stream.read(len(MCAP_MAGIC))
    if not head:
        raise BagError(f"{path.name} is empty (0 bytes): the writer never wrote to it; nothing to repair",
                       bag=bag, kind="format")
    if head != MCAP_MAGIC:
        raise BagError(f"{path.name} is not an MCAP file (it does not start with the MCAP magic "
                       f"{MCAP_MAGIC!r}, but {head!r}); nothing to repair", bag=bag, kind="format")


def bag_status(bag_path: Path | str) -> BagStatus:
    """Whether the bag at ``bag_path`` (directory, ``.mcap`` or ``.db3`` file) was closed.

    A killed writer leaves an MCAP file that starts with the MCAP magic but has no footer
    (incomplete: :func:`pardyn.bags.repair_bag` recovers its complete chunks); a file that
    does not start with the magic, or storage files that are gone, are errors (nothing to repair).

    Raises:
        BagError: no bag there, not MCAP, storage files missing (kind ``"format"``).
    """
    path = Path(bag_path)
    if path.is_file():
        if path.suffix == ".mcap":
            check_mcap_start(path, path)
            complete = has_footer(path)
            return BagStatus(path, "mcap", (path,), complete, None if complete else f"{path.name} has no MCAP footer")
        if path.suffix == ".db3":
            return BagStatus(path, "sqlite3", (path,), True)
        raise BagError(f"not a bag: unknown storage file suffix {path.suffix!r}", bag=path, kind="format")
    if not path.is_dir():
        raise BagError("does not exist", bag=path, kind="format")
    if not (path / "metadata.yaml").exists():
        mcaps = sorted(path.glob("*.mcap"))
        for mcap in mcaps:
            check_mcap_start(mcap, path)
        if mcaps:
            return BagStatus(path, "mcap", tuple(mcaps), False, "no metadata.yaml (the writer never closed the bag)")
        databases = sorted(path.glob("*.db3"))
        if databases:
            return BagStatus(path, "sqlite3", tuple(databases), False, "no metadata.yaml (sqlite3 bag not closed)")
        raise BagError("not a bag: no metadata.yaml and no .mcap/.db3 file", bag=path, kind="format")
    metadata = load_metadata(path)
    storage = str(metadata.get("storage_identifier", ""))
    files = tuple(path / Path(name).name for name in metadata.get("relative_file_paths", []))
    missing = [file.name for file in files if not file.exists()]
    if missing:
        raise BagError(f"storage files {missing} listed in metadata.yaml are missing (moved or deleted, not a "
                       "killed writer): nothing to read or repair", bag=path, kind="format")
    if (metadata.get("custom_data") or {}).get(STATE_KEY):
        return BagStatus(
            path, storage, files, False,
            f"metadata.yaml is provisional ({STATE_KEY}: {metadata['custom_data'][STATE_KEY]}): "
            "the recorder was killed or is still recording",
        )
    if storage == "mcap":
        for file in files:
            check_mcap_start(file, path)
        torn = [file.name for file in files if not has_footer(file)]
        if torn:
            return BagStatus(path, storage, files, False, f"{torn} have no MCAP footer (the writer was killed)")
    return BagStatus(path, storage, files, True)

