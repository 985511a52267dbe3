"""A fleet's folder: one folder per robot, one entry per run (a night's recording).

::

    cell/                       the fleet (``pardyn fleet identify cell``)
      robot.yaml                optional: the robot description of every robot (else --robot)
      delta_01/                 one robot (its folder name is its name)
        robot.yaml              optional: this robot's own description (wins over the fleet's)
        2026-11-01/             a rosbag2 bag (directory with metadata.yaml, or .mcap / .db3 file)
        2026-11-02.mcap
        2026-11-03.csv          a CSV log (pardyn.recordings.csv_series conventions)
        2026-11-04/             a directory of CSV files (one field each: positions.csv, efforts.csv)
      delta_02/
        ...

A run's *date* is its entry name without the suffix; runs sort by it (ISO dates sort
in time). Hidden entries, ``README*`` and ``*.txt``/``*.md`` notes are skipped; any
other entry is listed as unusable with the reason.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ROBOT_FILE", "FleetRun", "Layout", "Unusable", "scan"]

ROBOT_FILE = "robot.yaml"
"""The robot description of a robot folder, or of the whole fleet at its top."""

_NOTES = (".txt", ".md")


@dataclass(frozen=True)
class FleetRun:
    """One run to identify.

    Attributes:
        robot: the robot's folder name; date: the entry's name without suffix.
        kind: ``"bag"`` or ``"csv"``; sources: the bag path, or the CSV files.
        description: robot name or YAML path to load it with (:func:`pardyn.robot.load_robot`).
        fingerprint: of the files' names, sizes and modification times and of the description
            (a run whose fingerprint is unchanged is not identified again).
    """

    robot: str
    date: str
    kind: str
    sources: tuple[Path, ...]
    description: str
    fingerprint: str

    @property
    def name(self) -> str:
        """``robot/date``: how errors and progress name the run."""
        return f"{self.robot}/{self.date}"


@dataclass(frozen=True)
class Unusable:
    """An entry that is not a run, or a robot folder without a description: ``robot/date`` and why."""

    robot: str
    date: str
    reason: str


@dataclass(frozen=True)
class Layout:
    """What :func:`scan` found: the runs, in robot then date order, and the entries it could not use."""

    root: Path
    runs: tuple[FleetRun, ...]
    unusable: tuple[Unusable, ...]
    robots: tuple[str, ...]


def _files(entry: Path) -> list[Path]:
    return sorted(p for p in entry.rglob("*") if p.is_file()) if entry.is_dir() else [entry]


def _fingerprint(files: list[Path], description: str) -> str:
    digest = hashlib.sha256(description.encode())
    if Path(description).is_file():  # an edited description identifies the runs again
        digest.update(Path(description).read_bytes())
    for path in files:
        stat = path.stat()
        digest.update(f"{path.name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
    return digest.hexdigest()[:16]


def _classify(entry: Path) -> tuple[str, tuple[Path, ...]] | str:
    """``(kind, sources)`` of a run entry, or why it is not one: the kind is ``bag`` or the name of the table's
    format (:func:`pardyn.recordings.reader_for`, the one place that knows the formats), or ``csv`` for a folder
    of CSV files (one field each)."""
    from pardyn.recordings import READERS, reader_for  # noqa: PLC0415

    if not entry.exists():
        return f"not a run: {entry.name} is a broken link"
    if not entry.is_file() and not entry.is_dir():
        return f"not a run: {entry.name} is not a regular file (a FIFO, socket or device)"
    reader = reader_for(entry, default=False)
    if reader is not None:
        return "bag" if reader.by_topic else reader.name, (entry,)
    if entry.is_file():
        return (f"not a run: {entry.name} is neither a bag (a bag file or directory) nor a table "
                f"(recording formats: {', '.join(READERS)})")
    csvs = sorted(p for p in entry.iterdir() if p.suffix == ".csv")
    if any(not p.is_file() for p in csvs):
        return f"not a run: {next(p.name for p in csvs if not p.is_file())} in {entry.name} is not a regular file"
    if csvs:
        return "csv", tuple(csvs)
    return f"not a run: the folder {entry.name} holds no bag and no .csv file"


def _seen(entry: Path, seen: dict[Path, tuple[str, str]], name: str, kind: str) -> str | None:
    """Why ``entry`` (a robot folder or a run) is skipped, its real path (links followed) being one already
    read, inside a run already read, or holding one (a loop such as ``night -> ..``); else None, and it is
    listed in ``seen`` (real path -> (name, kind))."""
    try:
        real = entry.resolve(strict=True)
    except (OSError, RuntimeError):  # a link to itself or in a circle (ELOOP), or to nothing
        return "a link that leads nowhere (broken, or to itself): not followed"
    if real in seen:
        return f"a link to {seen[real][0]} (already read): not identified twice"
    if entry.is_dir():
        for other, (other_name, other_kind) in seen.items():
            if other.is_relative_to(real):
                return f"a link to a folder holding {other_name} (a loop): not followed"
            if other_kind == "run" and real.is_relative_to(other):
                return f"a link into {other_name} (already read): not identified twice"
    seen[real] = (name, kind)
    return None


def scan(root: Path | str, *, robot: str | None = None) -> Layout:
    """The runs of the fleet folder ``root`` (module docstring for the layout).

    Args:
        root: the fleet folder.
        robot: robot name or YAML for robot folders without their own ``robot.yaml``
            (a ``robot.yaml`` at the top of ``root`` is used when this is ``None``).
    """
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: no such fleet folder (one folder per robot, runs inside)")
    fleet_file = root / ROBOT_FILE
    default = robot if robot is not None else (str(fleet_file) if fleet_file.is_file() else None)
    runs: list[FleetRun] = []
    unusable: list[Unusable] = []
    robots: list[str] = []
    seen = {root.resolve(): ("the fleet folder", "fleet")}  # real paths: a link is not read twice
    # links after real folders: the real name is the one kept
    for folder in sorted((p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))),
                         key=lambda p: (p.is_symlink(), p.name)):
        twice = _seen(folder, seen, folder.name, "robot")
        if twice:
            unusable.append(Unusable(folder.name, "*", twice))
            continue
        own = folder / ROBOT_FILE
        description = str(own) if own.is_file() else default
        entries = sorted((p for p in folder.iterdir() if not p.name.startswith(".") and p.name != ROBOT_FILE
                          and not p.name.upper().startswith("README") and p.suffix not in _NOTES),
                         key=lambda p: (p.is_symlink(), p.name))
        if not entries:
            continue
        robots.append(folder.name)
        for entry in entries:
            date = entry.name[: -len(entry.suffix)] if entry.is_file() and entry.suffix else entry.name
            twice = _seen(entry, seen, f"{folder.name}/{date}", "run")
            found = twice or _classify(entry)
            if isinstance(found, str):
                unusable.append(Unusable(folder.name, date, found))
                continue
            if description is None:
                unusable.append(Unusable(folder.name, date, f"no robot description: put a {ROBOT_FILE} in "
                                                            f"{folder} or in {root}, or pass --robot"))
                continue
            kind, sources = found
            runs.append(FleetRun(folder.name, date, kind, sources, description,
                                 _fingerprint(_files(entry), description)))
    runs.sort(key=lambda run: (run.robot, run.date))
    return Layout(root, tuple(runs), tuple(unusable), tuple(sorted(robots)))
