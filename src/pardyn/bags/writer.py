"""Write rosbag2 bags (MCAP storage, or sqlite3) with ``rosbags``, safe against a killed writer.

A bag is a directory holding ``metadata.yaml`` and one storage file.
:class:`BagWriter` writes it with :class:`rosbags.rosbag2.Writer` (metadata
version 9, as written by ``ros2 bag record`` on Jazzy and Kilted), the message
definitions and RIHS01 type hashes coming from the ``rosbags`` typestore of that
distribution (for the message types used here, identical on Jazzy and Kilted
and equal to the hashes the ROS build itself generates, see
``test/bags/test_writer_reader.py``), so ``ros2 bag play`` and ``ros2 bag info``
accept the bag.

Crash safety (MCAP storage only): chunks are small, checksummed and flushed
(:mod:`pardyn.bags.mcap_chunks`, :class:`~pardyn.bags.mcap_chunks.FlushPolicy`);
``metadata.yaml`` is written when the bag is opened and rewritten (atomically)
when a topic is added and after chunks (at most every
:attr:`FlushPolicy.metadata_period_s`), with the counts of the messages on
disk and ``custom_data: {pardyn.state: recording}``; :meth:`BagWriter.close`
replaces it with the final one.

**Guarantee**: if the writing process is killed (SIGKILL, crash; plus power loss
with ``fsync``), every message of every chunk written before is recovered by
:func:`pardyn.bags.repair.repair_bag`; what is lost is at most one chunk: the
pending one (fewer than ``chunk_messages`` messages, less than ``chunk_bytes``
bytes of records, its first message younger than ``period_s`` plus the period of
the caller's :meth:`BagWriter.flush_if_due` timer), or the one being written
when the process died (torn, detected by its size or CRC). A bag whose
writer was killed has no MCAP footer: the readers of :mod:`pardyn.bags.reader`
refuse it with :class:`~pardyn.bags.errors.BagIncompleteError` until it is repaired.

sqlite3 storage is for exchanging bags only: ``rosbags`` commits its single
transaction on close, so a killed sqlite3 writer loses everything.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from rosbags.interfaces import Connection, Qos
from rosbags.rosbag2 import StoragePlugin, WriterError
from rosbags.typesys.store import Typestore

from pardyn.bags.cdr import CDR_MAX_PADDING, cdr_decode, has_stamp, normalize_msgtype, stamp_ns_from_cdr, stamp_of, typestore_for
from pardyn.bags.errors import BagError, format_time
from pardyn.bags.mcap_chunks import ChunkedMcapStorage, FlushPolicy, Rosbag2Writer
from pardyn.bags.metadata import provisional_metadata, write_metadata
from pardyn.errors import InputError

__all__ = ["STORAGES", "BagWriter", "FlushPolicy", "available_bag_path"]

STORAGES = ("mcap", "sqlite3")
_MAX_TIMESTAMP_NS = 2**63 - 1


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
        self._writer: Rosbag2Writer | None = None
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
        writer = Rosbag2Writer(self.path, storage=plugin, policy=self.flush_policy, on_chunk=self._on_chunk)
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

    def _require_open(self) -> Rosbag2Writer:
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
            stamp = stamp_of(message) if timestamp_ns is None else None
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

    def set_custom_data(self, key: str, value: str) -> None:
        """Store ``key: value`` in the final ``metadata.yaml``'s ``custom_data`` (written by :meth:`close`)."""
        self._require_open().set_custom_data(key, value)

    def _check_cdr(self, entry: _Topic, data: bytes) -> bytes:
        """``data`` if it deserializes as the topic's type, without a tail past the final padding."""
        try:
            _, end = cdr_decode(self.typestore, data, entry.msgtype)
        except Exception as error:  # noqa: BLE001 - truncated or garbage data
            raise BagError(
                f"malformed {entry.msgtype} CDR data ({len(data)} bytes): {error}",
                bag=self.path, topic=entry.name, kind="data",
            ) from error
        return data if len(data) - end <= CDR_MAX_PADDING else data[:end]

    # ----------------------------------------------------------------- flushing
    @property
    def pending_count(self) -> int:
        """Messages in the pending (not yet written) MCAP chunk."""
        storage = self._writer.storage if self._writer is not None else None
        return storage.pending if isinstance(storage, ChunkedMcapStorage) else 0

    def flush(self) -> None:
        """Write the pending chunk now (MCAP; a no-op for sqlite3 and without pending messages)."""
        storage = self._require_open().storage
        if isinstance(storage, ChunkedMcapStorage) and storage.pending:
            storage.close_chunk()

    def flush_if_due(self, now_s: float | None = None) -> bool:
        """Flush if the pending chunk's first message is older than ``period_s``; whether it did.

        Args:
            now_s: the current ``time.monotonic()`` (s); read if None.
        """
        storage = self._writer.storage if self._writer is not None else None
        period = self.flush_policy.period_s
        if not isinstance(storage, ChunkedMcapStorage) or period is None or storage.pending_since is None:
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

