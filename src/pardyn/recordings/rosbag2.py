"""rosbag2 bags, MCAP or sqlite3 storage (:func:`pardyn.bags.joint_states.read_joint_states`): a bag file or
folder, the JointState topic of the user's choice, joints in any order, other joints and topics ignored."""

from __future__ import annotations

from pathlib import Path

from pardyn.bags.joint_states import JointStateSeries, read_joint_states
from pardyn.recordings.protocol import READERS, ReadOptions

__all__ = ["BAG_SUFFIXES", "Rosbag2Reader"]

BAG_SUFFIXES = (".mcap", ".db3")
"""The storage files of a bag (MCAP, sqlite3)."""


@READERS.plugin
class Rosbag2Reader:
    """A bag: a storage file, or a folder with ``metadata.yaml`` or a storage file."""

    name = "rosbag2"
    by_topic = True

    def accepts(self, path: Path) -> bool:
        return path.suffix in BAG_SUFFIXES or (path.is_dir() and (
            (path / "metadata.yaml").exists() or any(p.suffix in BAG_SUFFIXES for p in path.iterdir())))

    def read(self, path: Path, options: ReadOptions) -> JointStateSeries:
        return read_joint_states(path, options.topic, drop_resent=True, period_tolerance=None)
