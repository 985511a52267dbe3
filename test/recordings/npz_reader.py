"""A recording format of its own, as a user adds one: this file is the whole reader.

``npz``: NumPy archives with the arrays ``t`` (N,) s, ``names`` (n,) and ``position``, ``velocity``, ``effort``
(N, n; velocity optional: NaN, derived from the positions by identification). The module registers nothing at
import: :func:`register_reader` does (the test), as a module of ``pardyn.recordings`` would with
``@READERS.plugin`` on the class.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pardyn.bags.errors import BagError
from pardyn.bags.joint_states import JointStateSeries
from pardyn.recordings import READERS, ReadOptions


class NpzReader:
    name = "npz"
    by_topic = False

    def accepts(self, path: Path) -> bool:
        return path.suffix == ".npz" and path.is_file()

    def read(self, path: Path, options: ReadOptions) -> JointStateSeries:
        with np.load(path) as archive:
            if "position" not in archive:
                raise BagError("no array 'position'", bag=path, kind="names")
            t, position = np.asarray(archive["t"], float), np.asarray(archive["position"], float)
            names = tuple(options.joint_map.get(n, n) if options.joint_map else n for n in map(str, archive["names"]))
            velocity = archive["velocity"] if "velocity" in archive else np.full_like(position, np.nan)
            effort = archive["effort"] if "effort" in archive else np.full_like(position, np.nan)
        stamps = np.rint(t * 1e9).astype(np.int64)
        return JointStateSeries(bag_path=path, topic="npz", names=names, stamp_ns=stamps, t=t, bag_time_ns=stamps,
                                position=position, velocity=np.asarray(velocity, float),
                                effort=np.asarray(effort, float))


def register_reader() -> str:
    """Register the reader (what ``@READERS.plugin`` on the class does in a module of the package); its name."""
    READERS.plugin(NpzReader)
    return NpzReader.name
