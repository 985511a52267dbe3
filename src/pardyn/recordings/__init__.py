"""Recordings read behind one protocol: a reader per format, one registry, each the joint-state series identification
uses (:class:`~pardyn.bags.joint_states.JointStateSeries`).

* :mod:`.protocol`: :class:`~pardyn.recordings.protocol.SeriesReader` (``name``, ``accepts(path)``,
  ``read(path, options)``), :class:`~pardyn.recordings.protocol.ReadOptions`, the registry
  :data:`~pardyn.recordings.protocol.READERS`, :func:`~pardyn.recordings.protocol.reader_for` (the reader of a
  path) and :func:`~pardyn.recordings.protocol.read_series`;
* the formats, one registry entry each: :mod:`.rosbag2` (MCAP or sqlite3 bags), :mod:`.tables` (``csv`` and
  ``mat``, through :mod:`.csv_series`: columns, vendor layouts, time units, checks).

A new format is one module here (found by :func:`pardyn.registry.import_modules`), or one registered from anywhere
with ``@READERS.plugin`` (``test/recordings/npz_reader.py``).
"""

from pardyn.recordings.protocol import READERS, ReadOptions, SeriesReader, read_series, reader_for
from pardyn.registry import import_modules

import_modules(__name__, first=("rosbag2", "tables"))  # a bag first: its folder holds storage files

__all__ = ["READERS", "ReadOptions", "SeriesReader", "read_series", "reader_for"]
