"""Tables of columns, read by :func:`pardyn.recordings.csv_series.read_csv_series` (its docstring gives the
conventions), one registry entry per format:

* ``csv``: CSV files (``,``, ``;``, tab or space separated); also the reader of a file no format claims
  (:data:`pardyn.recordings.protocol.DEFAULT_READER`: ``.txt``, ``.log``);
* ``mat``: MATLAB files (v5-v7 through :mod:`scipy.io`, v7.3 through ``h5py``): each vector variable a column of
  that name, each matrix ``M`` (samples x k) the columns ``M1..Mk``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pardyn.bags.joint_states import JointStateSeries
from pardyn.recordings.csv_series import CsvSource, read_csv_series
from pardyn.recordings.protocol import READERS, ReadOptions

__all__ = ["TableReader"]


@dataclass(frozen=True)
class TableReader:
    """A table file of suffix ``suffix`` (case ignored), every field in it."""

    name: str
    suffix: str
    by_topic: bool = False

    def accepts(self, path: Path) -> bool:
        return path.suffix.lower() == self.suffix and not path.is_dir()

    def read(self, path: Path, options: ReadOptions) -> JointStateSeries:
        return read_csv_series([CsvSource(path)], **options.table_arguments())


for _reader in (TableReader("mat", ".mat"), TableReader("csv", ".csv")):
    READERS.add(_reader.name, _reader)
