"""Write rosbag2 bags (MCAP storage, or sqlite3) with ``rosbags``, safe against a killed writer.

A bag is a directory holding ``metadata.yaml`` and one storage file. This
module writes it with :class:`rosbags.rosbag2.Writer` (metadata version 9, as
written by ``ros2 bag record`` on Jazzy and Kilted), the message definitions
and RIHS01 type hashes coming from the ``rosbags`` typestore of that
distribution (for the message types used here, identical on Jazzy and Kilted
and equal to the hashes the ROS build itself generates, see
``test/bags/test_writer_reader.py``), so ``ros2 bag play`` and ``ros2 bag info``
accept the bag.

Crash safety (MCAP storage only)
--------------------------------
``rosbags`` buffers messages in an in-memory chunk of up to 1 MiB and writes
the MCAP summary, footer and ``metadata.yaml`` only when the bag is closed.
:class:`BagWriter` changes this (without changing the file format):

* the pending chunk is closed, written and flushed to the operating system
  (``os.fsync`` too if :attr:`FlushPolicy.fsync`) as soon as it holds
  :attr:`FlushPolicy.chunk_messages` messages, or
  :attr:`FlushPolicy.chunk_bytes` bytes, or its first message is older than
  :attr:`FlushPolicy.period_s` (checked on each write and by
  :meth:`BagWriter.flush_if_due`, which a recorder calls from a timer);
* every chunk carries the CRC-32 of its records (``rosbags`` writes 0, "no
  CRC"), so a chunk torn by a crash is detected, not misread;
* ``metadata.yaml`` is written when the bag is opened and rewritten (atomically)
  when a topic is added and after chunks (at most every
  :attr:`FlushPolicy.metadata_period_s`), with the counts of the messages on
  disk and ``custom_data: {pardyn.state: recording}``; :meth:`BagWriter.close`
  replaces it with the final one.

**Guarantee**: if the writing process is killed (SIGKILL, crash; plus power loss
with ``fsync``), every message of every chunk written before is recovered by
:func:`pardyn.bags.reader.repair_bag`; what is lost is at most one chunk: the
pending one (fewer than ``chunk_messages`` messages, less than ``chunk_bytes``
bytes of records, its first message younger than ``period_s`` plus the period of
the caller's :meth:`BagWriter.flush_if_due` timer), or the one being written
when the process died (torn, detected by its size or CRC). A bag whose
writer was killed has no MCAP footer: the readers of :mod:`pardyn.bags.reader`
refuse it with :class:`BagIncompleteError` until it is repaired.

sqlite3 storage is for exchanging bags only: ``rosbags`` commits its single
transaction on close, so a killed sqlite3 writer loses everything.
"""

from __future__ import annotations

import math
import os
import struct
import time
from binascii import crc32
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Literal

import numpy as np
import yaml
from rosbags.interfaces import Connection, Qos
from rosbags.rosbag2 import StoragePlugin, Writer, WriterError
from rosbags.rosbag2.enums import CompressionMode
from rosbags.rosbag2.metadata import dump_qos_v9
from rosbags.rosbag2.storage_mcap import McapWriter
from rosbags.rosbag2.storage_sqlite3 import Sqlite3Writer
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.store import Typestore

from pardyn.errors import InputError

__all__ = [
    "BAG_VERSION",
    "DISTROS",
    "STATE_KEY",
    "BagError",
    "BagIncompleteError",
    "BagWriter",
    "FlushPolicy",
    "available_bag_path",
    "cdr_decode",
    "deserialize_cdr",
    "format_time",
    "has_stamp",
    "joint_state_message",
    "normalize_msgtype",
    "provisional_metadata",
    "seconds_to_ns",
    "stamp_ns_from_cdr",
    "typestore_for",
    "write_joint_states",
    "write_metadata",
]

BAG_VERSION = 9
"""rosbag2 metadata version written (``ros2 bag record`` on Jazzy and Kilted)."""

DISTROS: Mapping[str, Stores] = {"jazzy": Stores.ROS2_JAZZY, "kilted": Stores.ROS2_KILTED}
"""ROS 2 distributions whose message definitions (``rosbags`` typestores) can be used."""

STATE_KEY = "pardyn.state"
"""``custom_data`` key of a provisional ``metadata.yaml`` (value ``recording``)."""

STATE_RECORDING = "recording"
STORAGES = ("mcap", "sqlite3")
_STAMP_TYPES = ("std_msgs/msg/Header", "builtin_interfaces/msg/Time")
_CDR_ENCAPSULATIONS = (b"\x00\x00", b"\x00\x01")  # CDR big endian, little endian
_CDR_MAX_PADDING = 3  # bytes after the last field kept as they are (final padding to 4 bytes, as rosbags reads)
_MAX_TIMESTAMP_NS = 2**63 - 1
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when available
_CHUNK_CRC_OFFSET = 1 + 8 + 24  # opcode, record length, start/end time, uncompressed size


# --------------------------------------------------------------------------- errors
class BagError(InputError):
    """A bag cannot be written or read as asked; the message names the bag, topic and time.

    Attributes:
        bag: the bag directory (or storage file).
        topic: the topic concerned, None if none.
        t_s: the time of the message at fault (s, header stamp or bag time), None if none.
        kind: ``"exists"``, ``"format"``, ``"type"``, ``"topic"``, ``"timestamp"``,
            ``"data"``, ``"closed"``, ``"incomplete"``, ``"count"``, ``"stamps"``,
            ``"names"``, ``"lengths"``, ``"non_finite"`` or ``"kinematics"``.
    """

    def __init__(
        self,
        message: str,
        *,
        bag: Path | str,
        kind: str,
        topic: str | None = None,
        t_s: float | None = None,
    ) -> None:
        where = f"{bag}" if topic is None else f"{bag}: topic {topic}"
        super().__init__(f"{where}: {message}")
        self.bag = Path(bag)
        self.topic = topic
        self.t_s = t_s
        self.kind = kind
        self._message = message

    def __reduce__(self):
        # keyword-only arguments: pickle (worker processes) needs to be told how to rebuild it
        return _rebuild_bag_error, (type(self), self._message, self.bag, self.kind, self.topic, self.t_s)


def _rebuild_bag_error(cls, message, bag, kind, topic, t_s):
    error = cls.__new__(cls)
    BagError.__init__(error, message, bag=bag, kind=kind, topic=topic, t_s=t_s)
    return error


class BagIncompleteError(BagError):
    """The bag was not closed (its writer was killed or is still writing).

    :func:`pardyn.bags.reader.repair_bag` rebuilds it from its complete chunks.
    """

    def __init__(self, message: str, *, bag: Path | str) -> None:
        super().__init__(message, bag=bag, kind="incomplete")


def format_time(stamp_ns: int) -> str:
    """``stamp_ns`` as seconds, exact, without trailing zeros (``1234000000`` -> ``"1.234"``)."""
    sign = "-" if stamp_ns < 0 else ""
    seconds, nanoseconds = divmod(abs(int(stamp_ns)), 1_000_000_000)
    fraction = f"{nanoseconds:09d}".rstrip("0")
    return f"{sign}{seconds}.{fraction}" if fraction else f"{sign}{seconds}"


# --------------------------------------------------------------------------- types
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
    except (struct.error, UnicodeDecodeError, ValueError, IndexError) as error:
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


def _stamp_of(message: Any) -> int | None:
    """Header or clock stamp (ns) of a typestore message, None without one."""
    stamp = getattr(getattr(message, "header", None), "stamp", None)
    if stamp is None:
        stamp = getattr(message, "clock", None)
    if stamp is None or not hasattr(stamp, "sec"):
        return None
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


# --------------------------------------------------------------------------- paths
def available_bag_path(path: Path | str, *, now: datetime | None = None) -> Path:
    """``path`` if nothing exists there, else ``path`` with a timestamp suffix that is free.

    ``bags/run`` -> ``bags/run_20250131-142501`` (then ``..._2``, ``..._3``): an
    existing bag is never overwritten nor appended to.
    """
    path = Path(path)
    if not path.exists():
        return path
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.name}_{stamp}")
    index = 2
    while candidate.exists():
        candidate = path.with_name(f"{path.name}_{stamp}_{index}")
        index += 1
    return candidate


# --------------------------------------------------------------------------- flush policy
@dataclass(frozen=True)
class FlushPolicy:
    """When the pending MCAP chunk is written to disk (what a killed writer can lose).

    Attributes:
        chunk_messages: close the chunk when it holds this many messages (>= 1).
        chunk_bytes: ... or when its records reach this many bytes (>= 1; at most 1 MiB
            is effective, the size at which ``rosbags`` closes a chunk by itself).
        period_s: ... or when its first message is older than this (s, monotonic clock;
            None: never by age).
        fsync: ``os.fsync`` the file after each chunk (survives power loss; slower).
        metadata_period_s: minimum time between two rewrites of the provisional
            metadata.yaml after chunks (s; 0: after every chunk). It is informative
            only (:func:`~pardyn.bags.reader.repair_bag` recounts), and rewritten at
            once when a topic is added.
    """

    chunk_messages: int = 100
    chunk_bytes: int = 1 << 20
    period_s: float | None = 1.0
    fsync: bool = False
    metadata_period_s: float = 1.0

    def __post_init__(self) -> None:
        if int(self.chunk_messages) != self.chunk_messages or self.chunk_messages < 1:
            raise InputError(f"FlushPolicy.chunk_messages must be an integer >= 1, got {self.chunk_messages!r}")
        if int(self.chunk_bytes) != self.chunk_bytes or self.chunk_bytes < 1:
            raise InputError(f"FlushPolicy.chunk_bytes must be an integer >= 1, got {self.chunk_bytes!r}")
        if self.period_s is not None and not (math.isfinite(self.period_s) and self.period_s > 0):
            raise InputError(f"FlushPolicy.period_s must be > 0 or None, got {self.period_s!r}")
        if not (math.isfinite(self.metadata_period_s) and self.metadata_period_s >= 0):
            raise InputError(f"FlushPolicy.metadata_period_s must be >= 0, got {self.metadata_period_s!r}")


# --------------------------------------------------------------------------- rosbags storage
class _ChunkedMcapStorage(McapWriter):
    """``rosbags``' MCAP storage that writes, checksums and flushes small chunks.

    The file format is unchanged: a chunk record followed by its message index
    records, written with one buffered write and flushed to the OS.
    """

    def __init__(self, path: Path, compression: CompressionMode, *, policy: FlushPolicy, on_chunk) -> None:
        super().__init__(path, compression)
        self.policy = policy
        self.on_chunk = on_chunk  # on_chunk(counts {connection id: n}, start_ns, end_ns)
        self.pending = 0
        self.pending_since: float | None = None  # time.monotonic() of the first pending message
        self._sync()

    def _sync(self) -> None:
        self.bio.flush()
        if self.policy.fsync:
            os.fsync(self.bio.fileno())

    def write(self, connection: Connection, timestamp: int, data: bytes | memoryview) -> None:
        if self.pending == 0:
            self.pending_since = time.monotonic()
        self.pending += 1
        super().write(connection, timestamp, data)  # closes the chunk itself past 1 MiB
        if self.pending >= self.policy.chunk_messages or self.chunk.bio.tell() >= self.policy.chunk_bytes:
            self.close_chunk()

    def close_chunk(self) -> None:
        chunk = self.chunk
        counts = {cid: len(entries) for cid, entries in chunk.msgs.items()}
        if not counts:  # schema and channel records only
            chunk.message_start_time = chunk.message_end_time = 0
        start_ns, end_ns = chunk.message_start_time, chunk.message_end_time
        crc = crc32(chunk.bio.getbuffer())
        offset = self.bio.tell()
        super().close_chunk()
        end = self.bio.tell()
        self.bio.seek(offset + _CHUNK_CRC_OFFSET)
        self.bio.write(crc.to_bytes(4, "little"))
        self.bio.seek(end)
        self._sync()
        self.pending = 0
        self.pending_since = None
        if counts:
            self.on_chunk(counts, start_ns, end_ns)


class _Rosbag2Writer(Writer):
    """``rosbags`` writer whose MCAP storage is :class:`_ChunkedMcapStorage`."""

    def __init__(self, path: Path, *, storage: StoragePlugin, policy: FlushPolicy, on_chunk) -> None:
        super().__init__(path, version=BAG_VERSION, storage_plugin=storage)
        self.STORAGE_PLUGINS = {
            StoragePlugin.SQLITE3: Sqlite3Writer,
            StoragePlugin.MCAP: partial(_ChunkedMcapStorage, policy=policy, on_chunk=on_chunk),
        }


@dataclass
class _Topic:
    name: str
    msgtype: str
    connection: Connection
    stamped: bool
    flushed: int = 0  # messages on disk (closed chunks)
    written: int = 0  # messages handed to the storage


# --------------------------------------------------------------------------- writer
class BagWriter:
    """A rosbag2 bag being written (see the module docstring for the crash guarantee).

    Usage::

        with BagWriter("bags/run1") as bag:
            bag.add_topic("/joint_states", "sensor_msgs/msg/JointState")
            bag.write("/joint_states", message)                  # typestore message, stamp from its header
            bag.write("/joint_states", cdr_bytes, timestamp_ns=t) # serialized CDR (e.g. rclpy raw=True)

    Args:
        path: bag directory to create (must not exist: never overwritten).
        storage: ``"mcap"`` (crash-safe, see :class:`FlushPolicy`) or ``"sqlite3"``.
        distro: ROS 2 distribution of the message definitions (``"jazzy"``, ``"kilted"``).
        typestore: a ``rosbags`` typestore to use instead of the distribution's.
        flush: when chunks reach the disk (MCAP only); default :class:`FlushPolicy`.
        validate: deserialize every CDR message before writing it (a malformed one is
            refused with :class:`BagError`, the bag unchanged).

    Raises:
        BagError: ``path`` exists (kind ``"exists"``), unknown storage.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        storage: Literal["mcap", "sqlite3"] = "mcap",
        distro: str = "kilted",
        typestore: Typestore | None = None,
        flush: FlushPolicy | None = None,
        validate: bool = True,
    ) -> None:
        self.path = Path(path)
        if storage not in STORAGES:
            raise BagError(f"unknown storage {storage!r}: expected one of {list(STORAGES)}", bag=self.path, kind="format")
        self.storage = storage
        self.typestore = typestore if typestore is not None else typestore_for(distro)
        self.flush_policy = flush if flush is not None else FlushPolicy()
        self.validate = validate
        self._topics: dict[str, _Topic] = {}
        self._by_connection: dict[int, _Topic] = {}
        self._writer: _Rosbag2Writer | None = None
        self._closed = False
        self._flushed_start_ns: int | None = None
        self._flushed_end_ns: int | None = None
        self._chunks = 0
        self._metadata_written_s = -math.inf

    # ----------------------------------------------------------------- life cycle
    def open(self) -> BagWriter:
        """Create the bag directory and its storage file (and a provisional metadata.yaml)."""
        if self._writer is not None or self._closed:
            raise BagError("already opened", bag=self.path, kind="closed")
        if self.path.exists():
            raise BagError("exists already: a bag is never overwritten (choose another path)", bag=self.path, kind="exists")
        plugin = StoragePlugin.MCAP if self.storage == "mcap" else StoragePlugin.SQLITE3
        writer = _Rosbag2Writer(self.path, storage=plugin, policy=self.flush_policy, on_chunk=self._on_chunk)
        try:
            writer.open()
        except WriterError as error:
            raise BagError(str(error), bag=self.path, kind="exists") from error
        self._writer = writer
        self._write_provisional_metadata()
        return self

    def close(self) -> None:
        """Write the last chunk, the MCAP summary and footer, and the final metadata.yaml."""
        if self._writer is None:
            return
        writer, self._writer = self._writer, None
        self._closed = True
        writer.close()

    def __enter__(self) -> BagWriter:
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        # Every write is validated before it reaches the storage, so the bag is
        # consistent even after an exception: close it properly.
        self.close()

    @property
    def is_open(self) -> bool:
        return self._writer is not None

    @property
    def storage_file(self) -> Path:
        """The storage file (``<path>/<name>.mcap`` or ``.db3``)."""
        return self.path / f"{self.path.name}.{'mcap' if self.storage == 'mcap' else 'db3'}"

    @property
    def topics(self) -> dict[str, str]:
        """Topic name -> message type of the topics added so far."""
        return {name: topic.msgtype for name, topic in self._topics.items()}

    def has_stamp(self, topic: str) -> bool:
        """Whether ``topic``'s type starts with a header (or a Time): its stamp can be the bag time."""
        entry = self._topics.get(topic)
        if entry is None:
            raise BagError(f"not added; topics: {sorted(self._topics)}", bag=self.path, topic=topic, kind="topic")
        return entry.stamped

    @property
    def message_count(self) -> int:
        """Messages written so far (on disk or pending)."""
        return sum(topic.written for topic in self._topics.values())

    @property
    def flushed_count(self) -> int:
        """Messages in chunks already written to the file (MCAP; all of them once closed)."""
        if self._closed:
            return self.message_count
        return sum(topic.flushed for topic in self._topics.values())

    @property
    def chunk_count(self) -> int:
        """Chunks with messages written so far (MCAP)."""
        return self._chunks

    def _require_open(self) -> _Rosbag2Writer:
        if self._writer is None:
            state = "closed" if self._closed else "not opened"
            raise BagError(f"bag is {state}", bag=self.path, kind="closed")
        return self._writer

    # ----------------------------------------------------------------- topics
    def add_topic(
        self,
        topic: str,
        msgtype: str,
        *,
        qos: Sequence[Qos] = (),
        type_hash: str | None = None,
    ) -> None:
        """Declare ``topic`` with message type ``msgtype`` (before writing to it).

        Args:
            topic: topic name as it will be played back (``/joint_states``).
            msgtype: ``package/msg/Type`` (or ``package/Type``), known to the typestore.
            qos: QoS profiles offered by the publishers (stored for ``ros2 bag play``).
            type_hash: the ``RIHS01_...`` hash the publishers advertise, if known: it must
                equal the typestore's (else the stored definition would be wrong).

        Raises:
            BagError: unknown type, hash mismatch, topic already added with another type.
        """
        writer = self._require_open()
        try:
            msgtype = normalize_msgtype(msgtype)
        except InputError as error:
            raise BagError(str(error), bag=self.path, topic=topic, kind="type") from None
        if not topic or any(c.isspace() for c in topic):
            raise BagError(f"invalid topic name {topic!r}", bag=self.path, topic=topic, kind="topic")
        known = self._topics.get(topic)
        if known is not None:
            if known.msgtype != msgtype:
                raise BagError(
                    f"already recorded as {known.msgtype}, cannot add it as {msgtype}",
                    bag=self.path, topic=topic, kind="type",
                )
            return
        if msgtype not in self.typestore.fielddefs:
            raise BagError(
                f"message type {msgtype} is not in the typestore (ROS 2 message definitions of rosbags)",
                bag=self.path, topic=topic, kind="type",
            )
        digest = self.typestore.hash_rihs01(msgtype)
        if type_hash is not None and type_hash != digest:
            raise BagError(
                f"{msgtype}: the publishers' type hash {type_hash} differs from the definition "
                f"known here ({digest}): another version of the message",
                bag=self.path, topic=topic, kind="type",
            )
        connection = writer.add_connection(
            topic, msgtype, typestore=self.typestore, offered_qos_profiles=list(qos)
        )
        entry = _Topic(topic, msgtype, connection, has_stamp(self.typestore, msgtype))
        self._topics[topic] = entry
        self._by_connection[connection.id] = entry
        self._write_provisional_metadata()

    # ----------------------------------------------------------------- writing
    def write(
        self,
        topic: str,
        message: Any,
        *,
        timestamp_ns: int | None = None,
    ) -> int:
        """Write one message; its bag timestamp (ns) is returned.

        Args:
            topic: an added topic.
            message: a typestore message of the topic's type, or its serialized CDR
                bytes (``bytes``, ``bytearray``, ``memoryview``); with ``validate``, a tail
                of more than 3 bytes after the last field is dropped (see :func:`cdr_decode`).
            timestamp_ns: bag timestamp (ns since the epoch, or sim time); None: the
                message's header stamp (``clock`` for rosgraph_msgs/Clock).

        Raises:
            BagError: unknown topic, wrong message type, malformed CDR, no usable
                timestamp; nothing is written then.
        """
        writer = self._require_open()
        entry = self._topics.get(topic)
        if entry is None:
            raise BagError(
                f"not added (add_topic first); topics: {sorted(self._topics)}", bag=self.path, topic=topic, kind="topic"
            )
        if isinstance(message, (bytes, bytearray, memoryview)):
            data = bytes(message)
            if self.validate:
                data = self._check_cdr(entry, data)
            stamp = stamp_ns_from_cdr(data) if entry.stamped and timestamp_ns is None else None
        else:
            msgtype = getattr(message, "__msgtype__", None)
            if msgtype != entry.msgtype:
                raise BagError(
                    f"expects {entry.msgtype} messages, got {msgtype or type(message).__name__}",
                    bag=self.path, topic=topic, kind="type",
                )
            try:
                data = bytes(self.typestore.serialize_cdr(message, entry.msgtype))
            except Exception as error:  # noqa: BLE001 - any field of the wrong type or size
                raise BagError(f"cannot serialize {entry.msgtype}: {error}", bag=self.path, topic=topic, kind="data") from error
            stamp = _stamp_of(message) if timestamp_ns is None else None
        if timestamp_ns is None:
            if stamp is None:
                raise BagError(
                    f"{entry.msgtype} has no header stamp: give timestamp_ns", bag=self.path, topic=topic, kind="timestamp"
                )
            timestamp_ns = stamp
        timestamp_ns = int(timestamp_ns)
        if not 0 <= timestamp_ns <= _MAX_TIMESTAMP_NS:
            raise BagError(
                f"timestamp {format_time(timestamp_ns)} s out of range (0 to 2^63 ns)",
                bag=self.path, topic=topic, kind="timestamp", t_s=timestamp_ns * 1e-9,
            )
        writer.write(entry.connection, timestamp_ns, data)
        entry.written += 1
        self.flush_if_due()
        return timestamp_ns

    def _check_cdr(self, entry: _Topic, data: bytes) -> bytes:
        """``data`` if it deserializes as the topic's type, without a tail past the final padding."""
        try:
            _, end = cdr_decode(self.typestore, data, entry.msgtype)
        except Exception as error:  # noqa: BLE001 - truncated or garbage data
            raise BagError(
                f"malformed {entry.msgtype} CDR data ({len(data)} bytes): {error}",
                bag=self.path, topic=entry.name, kind="data",
            ) from error
        return data if len(data) - end <= _CDR_MAX_PADDING else data[:end]

    # ----------------------------------------------------------------- flushing
    @property
    def pending_count(self) -> int:
        """Messages in the pending (not yet written) MCAP chunk."""
        storage = self._writer.storage if self._writer is not None else None
        return storage.pending if isinstance(storage, _ChunkedMcapStorage) else 0

    def flush(self) -> None:
        """Write the pending chunk now (MCAP; a no-op for sqlite3 and without pending messages)."""
        storage = self._require_open().storage
        if isinstance(storage, _ChunkedMcapStorage) and storage.pending:
            storage.close_chunk()

    def flush_if_due(self, now_s: float | None = None) -> bool:
        """Flush if the pending chunk's first message is older than ``period_s``; whether it did.

        Args:
            now_s: the current ``time.monotonic()`` (s); read if None.
        """
        storage = self._writer.storage if self._writer is not None else None
        period = self.flush_policy.period_s
        if not isinstance(storage, _ChunkedMcapStorage) or period is None or storage.pending_since is None:
            return False
        now_s = time.monotonic() if now_s is None else now_s
        if now_s - storage.pending_since < period:
            return False
        storage.close_chunk()
        return True

    def _on_chunk(self, counts: Mapping[int, int], start_ns: int, end_ns: int) -> None:
        for cid, count in counts.items():
            self._by_connection[cid].flushed += count
        self._chunks += 1
        self._flushed_start_ns = start_ns if self._flushed_start_ns is None else min(start_ns, self._flushed_start_ns)
        self._flushed_end_ns = end_ns if self._flushed_end_ns is None else max(end_ns, self._flushed_end_ns)
        now = time.monotonic()
        if now - self._metadata_written_s >= self.flush_policy.metadata_period_s:
            self._write_provisional_metadata()

    # ----------------------------------------------------------------- metadata
    def _write_provisional_metadata(self) -> None:
        """metadata.yaml of the data on disk, marked as being recorded (MCAP only)."""
        if self.storage != "mcap" or self._writer is None:
            return
        start = self._flushed_start_ns or 0
        duration = 0 if self._flushed_end_ns is None else self._flushed_end_ns - start
        count = sum(topic.flushed for topic in self._topics.values())
        name = self.storage_file.name
        document = provisional_metadata(
            file_name=name,
            start_ns=start,
            duration_ns=duration,
            topics=[
                (t.name, t.msgtype, t.connection.digest, list(t.connection.ext.offered_qos_profiles), t.flushed)
                for t in self._topics.values()
            ],
            message_count=count,
        )
        write_metadata(self.path, document, fsync=self.flush_policy.fsync)
        self._metadata_written_s = time.monotonic()


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


# --------------------------------------------------------------------------- joint states
def joint_state_message(
    typestore: Typestore,
    stamp_ns: int,
    names: Sequence[str],
    position: Sequence[float] | np.ndarray,
    velocity: Sequence[float] | np.ndarray = (),
    effort: Sequence[float] | np.ndarray = (),
    *,
    frame_id: str = "",
) -> Any:
    """A typestore ``sensor_msgs/msg/JointState`` (stamp ``stamp_ns`` ns, arrays as float64)."""
    types = typestore.types
    seconds, nanoseconds = divmod(int(stamp_ns), 1_000_000_000)
    header = types["std_msgs/msg/Header"](
        stamp=types["builtin_interfaces/msg/Time"](sec=seconds, nanosec=nanoseconds), frame_id=frame_id
    )
    return types["sensor_msgs/msg/JointState"](
        header=header,
        name=list(names),
        position=np.asarray(position, dtype=np.float64).reshape(-1),
        velocity=np.asarray(velocity, dtype=np.float64).reshape(-1),
        effort=np.asarray(effort, dtype=np.float64).reshape(-1),
    )


def _series(name: str, values: np.ndarray | None, shape: tuple[int, int], bag: Path) -> np.ndarray | None:
    if values is None:
        return None
    array = np.asarray(values, dtype=np.float64)
    if array.shape != shape:
        raise BagError(f"{name} has shape {array.shape}, expected {shape} (samples, joints)", bag=bag, kind="lengths")
    return array


def seconds_to_ns(t_s: Sequence[float] | np.ndarray) -> np.ndarray:
    """Times (s) to integer nanoseconds, rounded to the nearest ns, shape (N,) int64."""
    t = np.asarray(t_s, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(t)):
        raise InputError("times must be finite")
    return np.rint(t * 1e9).astype(np.int64)


def write_joint_states(
    path: Path | str,
    t_s: Sequence[float] | np.ndarray,
    names: Sequence[str],
    position: np.ndarray,
    velocity: np.ndarray | None = None,
    effort: np.ndarray | None = None,
    *,
    topic: str = "/joint_states",
    frame_id: str = "",
    storage: Literal["mcap", "sqlite3"] = "mcap",
    distro: str = "kilted",
    flush: FlushPolicy | None = None,
    extra_topics: Mapping[str, tuple[Sequence[str], np.ndarray, np.ndarray | None, np.ndarray | None]] | None = None,
) -> Path:
    """Write a whole JointState time series as a new bag; its path.

    Message ``k`` has header stamp ``t_s[k]`` (rounded to the ns, also its bag
    timestamp), the joint ``names`` and row ``k`` of each array; a missing
    ``velocity``/``effort`` is written as empty arrays (as drivers do). Values
    are written as given (NaN included: validation is the reader's job).

    Args:
        t_s: sample times (s), shape (N,), >= 0.
        names: joint names, n of them.
        position: (N, n) (rad, m); velocity, effort: (N, n) or None.
        extra_topics: more JointState topics with the same stamps,
            ``{topic: (names, position, velocity, effort)}`` (e.g. the motor-side
            encoders of a flexible-joint robot on ``/motor_states``).

    Raises:
        BagError: shapes that disagree, negative times, ``path`` exists.
    """
    path = Path(path)
    stamps = seconds_to_ns(t_s)  # (N,)
    names = list(names)
    shape = (len(stamps), len(names))
    position = _series("position", position, shape, path)
    velocity = _series("velocity", velocity, shape, path)
    effort = _series("effort", effort, shape, path)
    topics = {topic: (names, position, velocity, effort)}
    for name, (joints, *arrays) in (extra_topics or {}).items():
        size = (len(stamps), len(joints))
        topics[name] = (list(joints), *(_series(f"{name} {label}", array, size, path)
                                        for label, array in zip(("position", "velocity", "effort"), arrays)))
    with BagWriter(path, storage=storage, distro=distro, flush=flush, validate=False) as bag:
        for name in topics:
            bag.add_topic(name, "sensor_msgs/msg/JointState")
        for k, stamp in enumerate(stamps):
            for name, (joints, position_k, velocity_k, effort_k) in topics.items():
                message = joint_state_message(
                    bag.typestore,
                    int(stamp),
                    joints,
                    position_k[k],
                    () if velocity_k is None else velocity_k[k],
                    () if effort_k is None else effort_k[k],
                    frame_id=frame_id,
                )
                bag.write(name, message)
    return path

