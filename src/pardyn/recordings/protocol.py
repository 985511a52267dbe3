"""What a recording reader is, the registry of readers and the one place that picks one for a path.

A reader (:class:`SeriesReader`) turns a recording of one format into the
:class:`~pardyn.bags.joint_states.JointStateSeries` that identification uses; :data:`READERS` holds one per
format, by name. :func:`reader_for` picks the reader of a path (the first whose :meth:`SeriesReader.accepts` is
true, in registration order; a file no reader claims is read as a CSV table, whose errors name the file), and
:func:`read_series` reads it with the options that apply (:class:`ReadOptions`; each reader takes what its format
needs). Adding a format is one module of :mod:`pardyn.recordings` (``test/recordings/npz_reader.py`` shows one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pardyn.bags.joint_states import JointStateSeries
from pardyn.bags.resample import DEFAULT_MAX_GAP
from pardyn.registry import Registry

if TYPE_CHECKING:
    from pardyn.recordings.csv_series import ColumnSchema

__all__ = ["DEFAULT_READER", "READERS", "ReadOptions", "SeriesReader", "read_series", "reader_for"]


@dataclass(frozen=True)
class ReadOptions:
    """How to read a recording; each format takes the options that apply to it.

    Attributes:
        topic: the JointState topic of a bag.
        rate_hz: sample rate of a table without a time column, or whose time unit is ``samples`` (Hz).
        time_unit: unit of a table's time column (:data:`pardyn.recordings.csv_series.TIME_UNITS`); None: seconds.
        schema: a vendor's column layout (:class:`~pardyn.recordings.csv_series.ColumnSchema`); None: the naming
            conventions.
        joints: the joints a schema without its own list indexes.
        joint_map: column joint name -> robot joint (or motor) name.
        max_gap: longest interval resampled, in median intervals.
    """

    topic: str = "joint_states"
    rate_hz: float | None = None
    time_unit: str | None = None
    schema: ColumnSchema | None = None
    joints: Sequence[str] = ()
    joint_map: Mapping[str, str] | None = None
    max_gap: float = DEFAULT_MAX_GAP

    def table_arguments(self) -> dict[str, Any]:
        """The keyword arguments of :func:`pardyn.recordings.csv_series.read_csv_series` (every table format's)."""
        return {"rate_hz": self.rate_hz, "time_unit": self.time_unit, "schema": self.schema, "joints": self.joints,
                "joint_map": self.joint_map, "max_gap": self.max_gap}


class SeriesReader(Protocol):
    """A recording format: its ``name``, which paths are its own, and how to read one.

    ``by_topic``: the format holds several topics (a bag), so a command keeps the path and the pipeline reads it
    with the settings' topic; a table is read as soon as it is named (its layout options are the command's).
    """

    @property
    def name(self) -> str:
        """The format's name in :data:`READERS`."""
        ...

    @property
    def by_topic(self) -> bool:
        """Whether the format holds several topics (read with the settings' topic)."""
        ...

    def accepts(self, path: Path) -> bool:
        """Whether ``path`` (a file or a folder) is a recording of this format."""
        ...

    def read(self, path: Path, options: ReadOptions) -> JointStateSeries:
        """The recording as a joint-state series.

        Raises:
            BagError: naming the file (topic, column, line) and what is wrong.
        """
        ...


READERS: Registry[SeriesReader] = Registry("recording format")
"""The readers by name (:meth:`Registry.plugin` of a :class:`SeriesReader` class), in registration order."""

DEFAULT_READER = "csv"
"""The reader of a file no reader claims (a table of another suffix: ``.txt``, ``.log``)."""


def reader_for(path: Path | str, *, default: bool = True) -> SeriesReader | None:
    """The reader of ``path``: the first in :data:`READERS` that accepts it; else, for a file (``default``), the
    CSV reader; None for a folder that no format claims (a folder of runs)."""
    path = Path(path)
    for name in READERS:
        reader = READERS.get(name)
        if reader.accepts(path):
            return reader
    return READERS.get(DEFAULT_READER) if default and not path.is_dir() else None


def read_series(source: Path | str | JointStateSeries, options: ReadOptions = ReadOptions()) -> JointStateSeries:
    """``source`` as a joint-state series: a series already read as it is, a path by its format's reader (a path
    no format claims is tried as a bag, whose reader says what it lacks).

    Raises:
        BagError: naming the file and what is wrong.
    """
    if isinstance(source, JointStateSeries):
        return source
    reader = reader_for(source, default=False)
    if reader is None:
        from pardyn.bags.joint_states import read_joint_states  # noqa: PLC0415 - its 'not a bag' message

        return read_joint_states(source, options.topic, drop_resent=True, period_tolerance=None)
    return reader.read(Path(source), options)
