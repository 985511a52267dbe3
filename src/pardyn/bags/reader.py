"""Read rosbag2 bags (MCAP and sqlite3) with ``rosbags``: topics, messages of any type.

* :func:`read_messages` gives every message of a topic (any type) with its bag
  timestamp; :func:`resolve_topic` finds the topic a (relative) name means.
* A bag that was not closed is refused with
  :class:`~pardyn.bags.errors.BagIncompleteError`, or repaired first
  (:func:`pardyn.bags.repair.repair_bag`) when asked to.

JointState topics as arrays: :mod:`pardyn.bags.joint_states`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rosbags.interfaces import Connection
from rosbags.rosbag2 import Reader, ReaderError
from rosbags.typesys.store import Typestore

from pardyn.bags.cdr import deserialize_cdr, typestore_for
from pardyn.bags.errors import BagError, BagIncompleteError, format_time
from pardyn.bags.repair import repair_bag
from pardyn.bags.status import bag_status

__all__ = ["BagMessage", "checked_path", "connection_of", "iter_messages", "read_messages", "resolve_topic"]


@dataclass(frozen=True)
class BagMessage:
    """One message of a bag: its bag timestamp (ns), type and deserialized value."""

    timestamp_ns: int
    topic: str
    msgtype: str
    message: Any


def resolve_topic(topics: Sequence[str], topic: str, *, bag: Path | str) -> str:
    """The bag topic ``topic`` names.

    An absolute name (``/ns/joint_states``) must be in the bag as it is; a
    relative one (``joint_states``) matches the bag topic equal to it or ending
    in ``/joint_states`` (``/joint_states``, ``/robot/joint_states``), which
    must then be unique.

    Raises:
        BagError: kind ``"topic"``, no or several matches (the bag's topics listed).
    """
    topics = list(topics)
    if topic.startswith("/"):
        matches = [name for name in topics if name == topic]
    else:
        matches = [name for name in topics if name == topic] or [
            name for name in topics if name.endswith("/" + topic)
        ]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise BagError(f"missing topic; the bag has {sorted(topics)}", bag=bag, topic=topic, kind="topic")
    raise BagError(f"ambiguous topic: matches {sorted(matches)}; give the full name", bag=bag, topic=topic, kind="topic")


def checked_path(bag_path: Path | str, repair: bool) -> Path:
    """The bag directory (or file) to read; an incomplete bag is repaired if ``repair``, else refused."""
    status = bag_status(bag_path)
    if status.complete:
        return status.path
    if not repair:
        raise BagIncompleteError(
            f"{status.problem}; pardyn.bags.repair_bag({str(status.path)!r}) recovers its complete chunks "
            "(or read it with repair=True)",
            bag=status.path,
        )
    if status.storage != "mcap":
        raise BagIncompleteError(f"{status.problem}; only MCAP bags can be repaired", bag=status.path)
    repair_bag(status.path)
    return status.path if status.path.is_dir() else status.path.parent


def connection_of(reader: Reader, topic: str, bag: Path, typestore: Typestore) -> Connection:
    """The connection of ``topic`` (one message type, known to ``typestore`` with the same hash)."""
    name = resolve_topic(sorted({c.topic for c in reader.connections}), topic, bag=bag)
    connections = [c for c in reader.connections if c.topic == name]
    types = sorted({c.msgtype for c in connections})
    if len(types) != 1:
        raise BagError(f"several message types {types}", bag=bag, topic=name, kind="type")
    connection = connections[0]
    if connection.msgtype not in typestore.fielddefs:
        raise BagError(f"unknown message type {connection.msgtype}", bag=bag, topic=name, kind="type")
    expected = typestore.hash_rihs01(connection.msgtype)
    if connection.digest and connection.digest.startswith("RIHS01_") and connection.digest != expected:
        raise BagError(
            f"{connection.msgtype} was recorded with another definition (hash {connection.digest}, "
            f"expected {expected})",
            bag=bag, topic=name, kind="type",
        )
    return connection


def iter_messages(path: Path, topic: str, typestore: Typestore) -> Iterator[tuple[Connection, int, Any]]:
    """``(connection, bag timestamp ns, message)`` of ``topic``, deserialized one by one."""
    try:
        with Reader(path) as reader:
            connection = connection_of(reader, topic, path, typestore)
            for conn, timestamp, data in reader.messages([connection]):
                try:
                    message = deserialize_cdr(typestore, data, conn.msgtype)
                except ValueError as error:
                    raise BagError(
                        f"malformed message at bag time {format_time(timestamp)} s: {error}",
                        bag=path, topic=conn.topic, kind="data", t_s=timestamp * 1e-9,
                    ) from error
                yield conn, timestamp, message
    except ReaderError as error:
        raise BagError(f"unreadable: {error}", bag=path, topic=topic, kind="format") from error


def read_messages(
    bag_path: Path | str, topic: str, *, repair: bool = False, distro: str = "kilted"
) -> list[BagMessage]:
    """Every message of ``topic`` (see :func:`resolve_topic`), in bag-timestamp order.

    Args:
        repair: repair an incomplete MCAP bag first (:func:`repair_bag`) instead of failing.
        distro: ROS 2 distribution of the message definitions (``"jazzy"``, ``"kilted"``).

    Raises:
        BagIncompleteError: the bag was not closed (and ``repair`` is False).
        BagError: missing topic, unknown type, unreadable bag.
    """
    path = checked_path(bag_path, repair)
    typestore = typestore_for(distro)
    return [
        BagMessage(timestamp, connection.topic, connection.msgtype, message)
        for connection, timestamp, message in iter_messages(path, topic, typestore)
    ]

