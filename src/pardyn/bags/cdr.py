"""CDR encoding of ROS 2 messages with the ``rosbags`` typestores: types, stamps, tolerant decoding."""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any

from rosbags.serde import SerdeError
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.store import Typestore

from pardyn.errors import InputError

__all__ = [
    "CDR_MAX_PADDING",
    "DISTROS",
    "cdr_decode",
    "deserialize_cdr",
    "has_stamp",
    "normalize_msgtype",
    "stamp_ns_from_cdr",
    "stamp_of",
    "typestore_for",
]

DISTROS: Mapping[str, Stores] = {"jazzy": Stores.ROS2_JAZZY, "kilted": Stores.ROS2_KILTED}
"""ROS 2 distributions whose message definitions (``rosbags`` typestores) can be used."""

CDR_MAX_PADDING = 3
"""Bytes after the last field kept as they are (final padding to 4 bytes, as ``rosbags`` reads)."""

_STAMP_TYPES = ("std_msgs/msg/Header", "builtin_interfaces/msg/Time")
_CDR_ENCAPSULATIONS = (b"\x00\x00", b"\x00\x01")  # CDR big endian, little endian


def typestore_for(distro: str = "kilted") -> Typestore:
    """The ``rosbags`` typestore of ROS 2 ``distro`` (``"jazzy"`` or ``"kilted"``).

    Raises:
        InputError: unknown distribution.
    """
    try:
        return get_typestore(DISTROS[distro])
    except KeyError:
        raise InputError(f"unknown ROS 2 distribution {distro!r}: expected one of {sorted(DISTROS)}") from None


def normalize_msgtype(msgtype: str) -> str:
    """``"sensor_msgs/JointState"`` or ``"sensor_msgs/msg/JointState"`` -> ``"sensor_msgs/msg/JointState"``."""
    parts = msgtype.strip().split("/")
    if len(parts) == 2 and all(parts):
        return f"{parts[0]}/msg/{parts[1]}"
    if len(parts) == 3 and all(parts):
        return "/".join(parts)
    raise InputError(f"malformed message type {msgtype!r}: expected 'package/msg/Type'")


def has_stamp(typestore: Typestore, msgtype: str) -> bool:
    """Whether the first field of ``msgtype`` is a ``std_msgs/Header`` or a ``builtin_interfaces/Time``.

    Such a message starts, after the 4-byte CDR encapsulation header, with
    ``int32 sec, uint32 nanosec`` (read by :func:`stamp_ns_from_cdr`).
    """
    _, fields = typestore.fielddefs[msgtype]
    if not fields:
        return False
    _, (_, nested) = fields[0]
    return nested in _STAMP_TYPES


def stamp_ns_from_cdr(data: bytes | bytearray | memoryview) -> int:
    """The stamp (ns) at the start of a CDR message whose first field is a Header or a Time.

    Raises:
        ValueError: shorter than the encapsulation header and the stamp, or unknown encapsulation.
    """
    view = memoryview(data)
    if len(view) < 12 or bytes(view[:2]) not in _CDR_ENCAPSULATIONS:
        raise ValueError(f"not a CDR message with a stamp ({len(view)} bytes)")
    order = "little" if view[1] == 1 else "big"
    seconds = int.from_bytes(view[4:8], order, signed=True)
    nanoseconds = int.from_bytes(view[8:12], order, signed=False)
    return seconds * 1_000_000_000 + nanoseconds


def stamp_of(message: Any) -> int | None:
    """Header or clock stamp (ns) of a typestore message, None without one."""
    stamp = getattr(getattr(message, "header", None), "stamp", None)
    if stamp is None:
        stamp = getattr(message, "clock", None)
    if stamp is None or not hasattr(stamp, "sec"):
        return None
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def cdr_decode(typestore: Typestore, data: bytes | bytearray | memoryview, msgtype: str) -> tuple[Any, int]:
    """Deserialize a CDR message; ``(message, end)`` where ``end`` is the byte offset after its last field.

    Bytes after ``end`` are ignored: CDR final padding, or the tail of
    ``rclpy.serialization.serialize_message`` with rmw_fastrtps, whose buffer has
    the *estimated* size (e.g. 24 bytes more than the data for a 3-point
    JointTrajectory; the DDS wire data has no such tail). ``rosbags``' own
    ``deserialize_cdr`` refuses more than 3 such bytes.

    Raises:
        ValueError: unknown encapsulation, or the data cannot be this type (cut short, garbage).
    """
    raw = memoryview(data)
    if len(raw) < 4 or bytes(raw[:2]) not in _CDR_ENCAPSULATIONS:
        raise ValueError(f"not CDR data ({len(raw)} bytes, encapsulation {bytes(raw[:2]).hex() or 'missing'})")
    msgdef = typestore.get_msgdef(msgtype)
    function = msgdef.deserialize_cdr_le if raw[1] == 1 else msgdef.deserialize_cdr_be
    try:
        message, position = function(raw[4:], 0, msgdef.cls, typestore)
    except (struct.error, UnicodeDecodeError, ValueError, IndexError, SerdeError, MemoryError) as error:
        # SerdeError: a string or sequence length that runs past the data (a valid chunk CRC over corrupt CDR)
        raise ValueError(f"cannot deserialize {msgtype} from {len(raw)} bytes: {error}") from error
    if 4 + position > len(raw):
        raise ValueError(f"{msgtype} data cut short ({len(raw)} bytes, {4 + position} needed)")
    return message, 4 + position


def deserialize_cdr(typestore: Typestore, data: bytes | bytearray | memoryview, msgtype: str) -> Any:
    """The message of CDR ``data`` (trailing bytes ignored, see :func:`cdr_decode`).

    Raises:
        ValueError: the data cannot be a ``msgtype``.
    """
    return cdr_decode(typestore, data, msgtype)[0]
