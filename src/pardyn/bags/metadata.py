"""rosbag2 ``metadata.yaml``: the provisional one a recording bag carries, written atomically; loading."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml
from rosbags.interfaces import Qos
from rosbags.rosbag2.metadata import dump_qos_v9

from pardyn.bags.errors import BagError

__all__ = ["BAG_VERSION", "STATE_KEY", "load_metadata", "provisional_metadata", "write_metadata"]

BAG_VERSION = 9
"""rosbag2 metadata version written (``ros2 bag record`` on Jazzy and Kilted)."""

STATE_KEY = "pardyn.state"
"""``custom_data`` key of a provisional ``metadata.yaml`` (value ``recording``)."""

STATE_RECORDING = "recording"
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when available


def provisional_metadata(
    *,
    file_name: str,
    start_ns: int,
    duration_ns: int,
    topics: Sequence[tuple[str, str, str, list[Qos], int]],
    message_count: int,
) -> dict:
    """A version-9 ``metadata.yaml`` document marked ``custom_data: {pardyn.state: recording}``.

    Args:
        topics: ``(name, msgtype, type hash, offered QoS profiles, message count)`` each.
    """
    return {
        "rosbag2_bagfile_information": {
            "version": BAG_VERSION,
            "storage_identifier": "mcap",
            "relative_file_paths": [file_name],
            "duration": {"nanoseconds": int(duration_ns)},
            "starting_time": {"nanoseconds_since_epoch": int(start_ns)},
            "message_count": int(message_count),
            "topics_with_message_count": [
                {
                    "topic_metadata": {
                        "name": name,
                        "type": msgtype,
                        "serialization_format": "cdr",
                        "offered_qos_profiles": dump_qos_v9(qos),
                        "type_description_hash": digest,
                    },
                    "message_count": int(count),
                }
                for name, msgtype, digest, qos, count in topics
            ],
            "compression_format": "",
            "compression_mode": "",
            "files": [
                {
                    "path": file_name,
                    "starting_time": {"nanoseconds_since_epoch": int(start_ns)},
                    "duration": {"nanoseconds": int(duration_ns)},
                    "message_count": int(message_count),
                }
            ],
            "custom_data": {STATE_KEY: STATE_RECORDING},
            "ros_distro": "rosbags",
        }
    }


def write_metadata(bag: Path, document: Mapping, *, fsync: bool = False) -> None:
    """Write ``bag/metadata.yaml`` atomically (a temporary file renamed over it)."""
    target = bag / "metadata.yaml"
    temporary = bag / "metadata.yaml.tmp"
    with open(temporary, "w", encoding="utf-8") as stream:
        yaml.dump(dict(document), stream, Dumper=_YAML_DUMPER, default_flow_style=False, sort_keys=False)
        stream.flush()
        if fsync:
            os.fsync(stream.fileno())
    os.replace(temporary, target)


def load_metadata(bag: Path) -> dict:
    """The ``rosbag2_bagfile_information`` mapping of ``bag/metadata.yaml``.

    Raises:
        BagError: unreadable (kind ``"format"``).
    """
    path = bag / "metadata.yaml"
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        return dict(document["rosbag2_bagfile_information"])
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as error:
        raise BagError(f"unreadable metadata.yaml: {error}", bag=bag, kind="format") from error

