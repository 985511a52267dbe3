"""Read rosbag2 bags (MCAP and sqlite3) with ``rosbags``; validate joint states; repair killed MCAP bags.

* :func:`read_joint_states` reads a ``sensor_msgs/msg/JointState`` topic into
  arrays (:class:`JointStateSeries`) and validates it with the reusable checks
  :func:`check_message_count`, :func:`check_joint_names`, :func:`check_lengths`,
  :func:`check_finite` and :func:`check_stamps`, each raising
  :class:`~pardyn.bags.writer.BagError` naming the bag, the topic and the time
  (``stamps not increasing at t=1.234 s``).
* :func:`read_messages` gives every message of a topic (any type) with its bag
  timestamp.
* :func:`bag_status` tells whether a bag was closed; :func:`repair_bag`
  rebuilds an MCAP bag whose writer was killed (no footer, provisional
  ``metadata.yaml``) from its complete chunks, found by :func:`scan_mcap`.

MCAP layout read by :func:`scan_mcap` (https://mcap.dev/spec): the magic
``\\x89MCAP0\\r\\n``, then records ``opcode (u8), length (u64), body``; a chunk
(opcode 0x06) holds schema (0x03), channel (0x04) and message (0x05) records,
``message_start_time, message_end_time, uncompressed_size (u64),
uncompressed_crc (u32), compression (string), records (u64-prefixed bytes)``.
Reading stops at the first record that is cut short or fails its size or CRC
check: everything before it is kept, nothing after it is trusted.
"""

from __future__ import annotations

import os
import shutil
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from rosbags.interfaces import Connection
from rosbags.rosbag2 import Reader, ReaderError, StoragePlugin
from rosbags.rosbag2.storage_mcap import decompress, get_qos
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.msg import get_types_from_msg
from rosbags.typesys.store import Typestore

from pardyn.bags.writer import (
    STATE_KEY,
    BagError,
    cdr_decode,
    BagIncompleteError,
    FlushPolicy,
    _Rosbag2Writer,
    deserialize_cdr,
    format_time,
    typestore_for,
)

__all__ = [
    "JOINT_STATE_TYPE",
    "MCAP_MAGIC",
    "BagMessage",
    "BagStatus",
    "JointStateSeries",
    "McapScan",
    "RepairReport",
    "bag_status",
    "check_finite",
    "check_joint_names",
    "check_lengths",
    "check_message_count",
    "check_stamps",
    "read_joint_states",
    "read_messages",
    "repair_bag",
    "resolve_topic",
    "scan_mcap",
]

JOINT_STATE_TYPE = "sensor_msgs/msg/JointState"
MCAP_MAGIC = b"\x89MCAP0\r\n"
_FOOTER_LENGTH = 1 + 8 + 20 + len(MCAP_MAGIC)  # footer record (0x02) and the closing magic
_OP_HEADER, _OP_FOOTER, _OP_SCHEMA, _OP_CHANNEL, _OP_MESSAGE, _OP_CHUNK, _OP_DATA_END = (
    0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x0F,
)


def _at(stamp_ns: int) -> str:
    return f"t={format_time(stamp_ns)} s"


# --------------------------------------------------------------------------- status
@dataclass(frozen=True)
class BagStatus:
    """Whether a bag was closed by its writer.

    Attributes:
        path: the bag directory (or storage file).
        storage: ``"mcap"`` or ``"sqlite3"``.
        files: its storage files.
        complete: closed properly (final metadata.yaml, MCAP footers).
        problem: why not, None if complete.
    """

    path: Path
    storage: str
    files: tuple[Path, ...]
    complete: bool
    problem: str | None = None


def _has_footer(path: Path) -> bool:
    size = path.stat().st_size
    if size < len(MCAP_MAGIC) + _FOOTER_LENGTH:
        return False
    with open(path, "rb") as stream:
        stream.seek(size - _FOOTER_LENGTH)
        tail = stream.read(_FOOTER_LENGTH)
    return tail[0] == _OP_FOOTER and tail[-len(MCAP_MAGIC):] == MCAP_MAGIC


def _load_metadata(bag: Path) -> dict:
    path = bag / "metadata.yaml"
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        return dict(document["rosbag2_bagfile_information"])
    except (OSError, yaml.YAMLError, KeyError, TypeError, ValueError) as error:
        raise BagError(f"unreadable metadata.yaml: {error}", bag=bag, kind="format") from error


def bag_status(bag_path: Path | str) -> BagStatus:
    """Whether the bag at ``bag_path`` (directory, ``.mcap`` or ``.db3`` file) was closed.

    Raises:
        BagError: no bag there (kind ``"format"``).
    """
    path = Path(bag_path)
    if path.is_file():
        if path.suffix == ".mcap":
            complete = _has_footer(path)
            return BagStatus(path, "mcap", (path,), complete, None if complete else f"{path.name} has no MCAP footer")
        if path.suffix == ".db3":
            return BagStatus(path, "sqlite3", (path,), True)
        raise BagError(f"not a bag: unknown storage file suffix {path.suffix!r}", bag=path, kind="format")
    if not path.is_dir():
        raise BagError("does not exist", bag=path, kind="format")
    if not (path / "metadata.yaml").exists():
        mcaps = sorted(path.glob("*.mcap"))
        if mcaps:
            return BagStatus(path, "mcap", tuple(mcaps), False, "no metadata.yaml (the writer never closed the bag)")
        databases = sorted(path.glob("*.db3"))
        if databases:
            return BagStatus(path, "sqlite3", tuple(databases), False, "no metadata.yaml (sqlite3 bag not closed)")
        raise BagError("not a bag: no metadata.yaml and no .mcap/.db3 file", bag=path, kind="format")
    metadata = _load_metadata(path)
    storage = str(metadata.get("storage_identifier", ""))
    files = tuple(path / Path(name).name for name in metadata.get("relative_file_paths", []))
    missing = [file.name for file in files if not file.exists()]
    if missing:
        return BagStatus(path, storage, files, False, f"storage files {missing} listed in metadata.yaml are missing")
    if (metadata.get("custom_data") or {}).get(STATE_KEY):
        return BagStatus(
            path, storage, files, False,
            f"metadata.yaml is provisional ({STATE_KEY}: {metadata['custom_data'][STATE_KEY]}): "
            "the recorder was killed or is still recording",
        )
    if storage == "mcap":
        torn = [file.name for file in files if not _has_footer(file)]
        if torn:
            return BagStatus(path, storage, files, False, f"{torn} have no MCAP footer (the writer was killed)")
    return BagStatus(path, storage, files, True)


# --------------------------------------------------------------------------- MCAP scan
class _Cut(Exception):
    """A record is cut short or malformed."""


class _Cursor:
    """Bounds-checked little-endian reads from a bytes-like buffer."""

    def __init__(self, data: bytes | memoryview) -> None:
        self.data = memoryview(data)
        self.pos = 0

    def take(self, size: int) -> memoryview:
        if size < 0 or self.pos + size > len(self.data):
            raise _Cut(f"{size} bytes needed at offset {self.pos} of a {len(self.data)}-byte record")
        view = self.data[self.pos : self.pos + size]
        self.pos += size
        return view

    def u16(self) -> int:
        return struct.unpack("<H", self.take(2))[0]

    def u32(self) -> int:
        return struct.unpack("<I", self.take(4))[0]

    def u64(self) -> int:
        return struct.unpack("<Q", self.take(8))[0]

    def string(self) -> str:
        try:
            return bytes(self.take(self.u32())).decode("utf-8")
        except UnicodeDecodeError as error:
            raise _Cut(f"invalid UTF-8 string: {error}") from error

    def rest(self) -> bytes:
        return bytes(self.take(len(self.data) - self.pos))

    @property
    def done(self) -> bool:
        return self.pos >= len(self.data)


@dataclass(frozen=True)
class McapSchema:
    id: int
    name: str
    encoding: str
    data: str


@dataclass(frozen=True)
class McapChannel:
    id: int
    schema_id: int
    topic: str
    message_encoding: str
    metadata: bytes  # the string map's content (key/value strings, without its length)


@dataclass
class McapScan:
    """What a linear scan of an MCAP file found in its complete records.

    Attributes:
        path: the file.
        schemas, channels: by id.
        messages: ``(channel id, log time ns, data)`` in file order.
        chunks: complete chunks read.
        good_end: offset just past the last complete record kept.
        size: file size (bytes).
        stop: why the scan stopped (``"end of data"`` for a closed file).
    """

    path: Path
    schemas: dict[int, McapSchema] = field(default_factory=dict)
    channels: dict[int, McapChannel] = field(default_factory=dict)
    messages: list[tuple[int, int, bytes]] = field(default_factory=list)
    chunks: int = 0
    good_end: int = 0
    size: int = 0
    stop: str = ""


def _parse_records(data: memoryview, schemas: dict, channels: dict, messages: list, *, in_chunk: bool) -> None:
    """Parse schema/channel/message records of a chunk's content (all or nothing is up to the caller)."""
    cursor = _Cursor(data)
    while not cursor.done:
        opcode = cursor.take(1)[0]
        body = _Cursor(cursor.take(cursor.u64()))
        _parse_record(opcode, body, schemas, channels, messages, in_chunk=in_chunk)


def _parse_record(opcode: int, body: _Cursor, schemas: dict, channels: dict, messages: list, *, in_chunk: bool) -> None:
    if opcode == _OP_SCHEMA:
        schema = McapSchema(body.u16(), body.string(), body.string(), bytes(body.take(body.u32())).decode("utf-8"))
        schemas[schema.id] = schema
    elif opcode == _OP_CHANNEL:
        key, schema_id = body.u16(), body.u16()
        topic, encoding = body.string(), body.string()
        metadata_length = body.u32()
        metadata = bytes(body.take(metadata_length))
        if schema_id not in schemas:
            raise _Cut(f"channel {key} ({topic}) refers to unknown schema {schema_id}")
        channels[key] = McapChannel(key, schema_id, topic, encoding, metadata)
    elif opcode == _OP_MESSAGE:
        channel_id = body.u16()
        body.u32()  # sequence
        log_time = body.u64()
        body.u64()  # publish time
        if channel_id not in channels:
            raise _Cut(f"message on unknown channel {channel_id}")
        messages.append((channel_id, log_time, body.rest()))
    elif opcode == _OP_CHUNK and in_chunk:
        raise _Cut("nested chunk")
    # other records (message index, attachments, metadata, ...) carry no messages


def scan_mcap(path: Path | str) -> McapScan:
    """Read every complete record of an MCAP file, stopping at the first torn or damaged one.

    A chunk is kept only whole: its size fits the file, it decompresses to its
    declared size, its CRC-32 matches (when not 0) and every record in it parses.

    Raises:
        BagError: not an MCAP file (bad magic or header).
    """
    path = Path(path)
    scan = McapScan(path, size=path.stat().st_size)
    with open(path, "rb") as stream:
        if stream.read(len(MCAP_MAGIC)) != MCAP_MAGIC:
            raise BagError("not an MCAP file (bad magic)", bag=path, kind="format")
        position = len(MCAP_MAGIC)
        while True:
            head = stream.read(9)
            if len(head) < 9:
                scan.stop = "end of file" if not head else f"record header cut short at offset {position}"
                break
            opcode, length = head[0], struct.unpack("<Q", head[1:])[0]
            if position + 9 + length > scan.size:
                scan.stop = f"record 0x{opcode:02x} at offset {position} cut short ({length} bytes declared)"
                break
            body = stream.read(length)
            if opcode == _OP_HEADER:
                if position != len(MCAP_MAGIC):
                    scan.stop = f"unexpected header record at offset {position}"
                    break
            elif position == len(MCAP_MAGIC):
                raise BagError("not an MCAP file (no header record)", bag=path, kind="format")
            if opcode in (_OP_DATA_END, _OP_FOOTER):
                scan.stop = "end of data"
                break
            schemas, channels, messages = dict(scan.schemas), dict(scan.channels), []
            try:
                if opcode == _OP_CHUNK:
                    cursor = _Cursor(body)
                    cursor.u64(), cursor.u64()  # message start and end times
                    size, crc = cursor.u64(), cursor.u32()
                    compression = cursor.string()
                    records = bytes(cursor.take(cursor.u64()))
                    try:
                        content = decompress(records, compression, size, crc)
                    except Exception as error:  # noqa: BLE001 - ReaderError, zstd/lz4 errors
                        raise _Cut(f"chunk content: {error}") from error
                    _parse_records(memoryview(content), schemas, channels, messages, in_chunk=True)
                    scan.chunks += 1
                else:
                    _parse_record(opcode, _Cursor(body), schemas, channels, messages, in_chunk=False)
            except _Cut as error:
                scan.stop = f"record 0x{opcode:02x} at offset {position} damaged: {error}"
                break
            scan.schemas, scan.channels = schemas, channels
            scan.messages.extend(messages)
            position += 9 + length
            scan.good_end = position
    return scan


# --------------------------------------------------------------------------- repair
@dataclass(frozen=True)
class RepairReport:
    """Outcome of :func:`repair_bag`.

    Attributes:
        bag: the bag directory.
        repaired: False if the bag was complete (nothing done).
        problem: what was wrong (None if complete).
        messages: topic -> messages recovered.
        chunks: complete chunks recovered.
        discarded_bytes: bytes of the damaged file after the last complete record.
        stop: where the scan stopped.
        damaged_file: the original storage file, kept beside the repaired one (None if deleted).
    """

    bag: Path
    repaired: bool
    problem: str | None = None
    messages: dict[str, int] = field(default_factory=dict)
    chunks: int = 0
    discarded_bytes: int = 0
    stop: str = ""
    damaged_file: Path | None = None

    @property
    def message_count(self) -> int:
        return sum(self.messages.values())


def _type_hash(schema: McapSchema, typestore: Typestore, known: str | None) -> str:
    """RIHS01 hash of a schema: the one the provisional metadata knew, else computed from the definition."""
    if known:
        return known
    if schema.name in typestore.fielddefs and typestore.generate_msgdef(schema.name, ros_version=2)[0] == schema.data:
        return typestore.hash_rihs01(schema.name)
    store = get_typestore(Stores.EMPTY)
    store.register(get_types_from_msg(schema.data, schema.name))
    return store.hash_rihs01(schema.name)


def repair_bag(bag_path: Path | str, *, keep_damaged: bool = True, distro: str = "kilted") -> RepairReport:
    """Rebuild an MCAP bag whose writer was killed from its complete chunks.

    The storage file is scanned (:func:`scan_mcap`); the messages of its
    complete records are written, same topics, types, QoS, bag timestamps and
    bytes, into a new closed MCAP file with summary and footer, and a final
    ``metadata.yaml`` (type hashes from the provisional one, else computed from
    the stored definitions). The damaged file is kept as
    ``<name>.mcap.damaged`` unless ``keep_damaged`` is False. Only run it on a
    bag nobody is writing any more.

    Args:
        bag_path: the bag directory (or its ``.mcap`` file).
        keep_damaged: keep the original file beside the repaired one.
        distro: typestore used to recompute type hashes the metadata lacks.

    Returns:
        The report; ``repaired`` is False for a complete bag (left as it is).

    Raises:
        BagError: not an MCAP bag, several storage files, unreadable definitions.
    """
    path = Path(bag_path)
    if path.is_file():
        path = path.parent
    if not path.is_dir():
        raise BagError("does not exist", bag=path, kind="format")
    metadata_path = path / "metadata.yaml"
    metadata = _load_metadata(path) if metadata_path.exists() else {}
    if metadata and metadata.get("storage_identifier") != "mcap":
        raise BagError(
            f"only MCAP bags can be repaired (storage {metadata.get('storage_identifier')!r}; "
            "rosbags commits a sqlite3 bag on close)",
            bag=path, kind="format",
        )
    status = bag_status(path)
    if status.complete:
        return RepairReport(path, False)
    sources = sorted(path.glob("*.mcap")) or sorted(path.glob("*.mcap.damaged"))
    if len(sources) != 1:
        raise BagError(
            f"expected one .mcap storage file to repair, found {[source.name for source in sources]}",
            bag=path, kind="format",
        )
    source = sources[0]
    scan = scan_mcap(source)

    known_hashes: dict[tuple[str, str], str] = {}
    for entry in metadata.get("topics_with_message_count", []) or []:
        topic = entry.get("topic_metadata", {})
        if topic.get("type_description_hash"):
            known_hashes[(topic.get("name"), topic.get("type"))] = topic["type_description_hash"]

    typestore = typestore_for(distro)
    staging = path / ".pardyn-repair"
    if staging.exists():
        shutil.rmtree(staging)
    target = staging / path.name
    counts: dict[str, int] = {}
    policy = FlushPolicy(chunk_messages=10_000, period_s=None)
    writer = _Rosbag2Writer(target, storage=StoragePlugin.MCAP, policy=policy, on_chunk=lambda *_: None)
    writer.open()
    try:
        connections: dict[int, Connection] = {}
        for channel in sorted(scan.channels.values(), key=lambda c: c.id):
            schema = scan.schemas[channel.schema_id]
            try:
                digest = _type_hash(schema, typestore, known_hashes.get((channel.topic, schema.name)))
            except Exception as error:  # noqa: BLE001 - unparsable definition
                raise BagError(
                    f"cannot read the definition of {schema.name}: {error}", bag=path, topic=channel.topic, kind="format"
                ) from error
            try:
                qos = get_qos(channel.metadata)
            except Exception:  # noqa: BLE001 - QoS is informative only
                qos = []
            connections[channel.id] = writer.add_connection(
                channel.topic,
                schema.name,
                msgdef=schema.data,
                rihs01=digest,
                serialization_format=channel.message_encoding,
                offered_qos_profiles=qos,
            )
            counts[channel.topic] = 0
        for channel_id, log_time, data in scan.messages:
            writer.write(connections[channel_id], log_time, data)
            counts[scan.channels[channel_id].topic] += 1
        writer.set_custom_data(
            "pardyn.repaired",
            f"{sum(counts.values())} messages in {scan.chunks} complete chunks of {source.name}; "
            f"{scan.size - scan.good_end} bytes discarded ({scan.stop})",
        )
        writer.close()
    except BaseException:
        writer.abort()
        shutil.rmtree(staging, ignore_errors=True)
        raise

    repaired_file = target / f"{path.name}.mcap"
    damaged = None
    if source.suffix == ".damaged":
        damaged = source if keep_damaged else None
    elif keep_damaged:
        damaged = source.with_name(source.name + ".damaged")
        os.replace(source, damaged)
    if not keep_damaged and source.exists():
        source.unlink()
    os.replace(repaired_file, path / repaired_file.name)
    os.replace(target / "metadata.yaml", metadata_path)
    shutil.rmtree(staging, ignore_errors=True)
    return RepairReport(
        path,
        True,
        status.problem,
        counts,
        scan.chunks,
        scan.size - scan.good_end,
        scan.stop,
        damaged,
    )


# --------------------------------------------------------------------------- reading
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


def _checked_path(bag_path: Path | str, repair: bool) -> Path:
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


def _connection(reader: Reader, topic: str, bag: Path, typestore: Typestore) -> Connection:
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


def _iter_messages(path: Path, topic: str, typestore: Typestore) -> Iterator[tuple[Connection, int, Any]]:
    try:
        with Reader(path) as reader:
            connection = _connection(reader, topic, path, typestore)
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
    path = _checked_path(bag_path, repair)
    typestore = typestore_for(distro)
    return [
        BagMessage(timestamp, connection.topic, connection.msgtype, message)
        for connection, timestamp, message in _iter_messages(path, topic, typestore)
    ]


# --------------------------------------------------------------------------- joint-state checks
def check_message_count(count: int, *, minimum: int, bag: Path | str, topic: str | None) -> None:
    """At least ``minimum`` messages.

    Raises:
        BagError: kind ``"count"``.
    """
    if count < minimum:
        raise BagError(f"{count} messages, at least {minimum} needed", bag=bag, topic=topic, kind="count")


def check_joint_names(
    names: Sequence[Sequence[str]], stamp_ns: Sequence[int], *, bag: Path | str, topic: str | None
) -> tuple[str, ...]:
    """Every message names the same joints, in the same order, without duplicates; those names.

    Args:
        names: the joint names of each message, N lists.
        stamp_ns: their stamps (ns), shape (N,), for the error messages.

    Raises:
        BagError: kind ``"names"``, at the first message at fault.
    """
    if not len(names):
        return ()
    first = tuple(names[0])
    duplicated = sorted({name for name in first if first.count(name) > 1})
    if duplicated:
        raise BagError(
            f"duplicated joint names {duplicated} at {_at(stamp_ns[0])} (message 0)",
            bag=bag, topic=topic, kind="names", t_s=stamp_ns[0] * 1e-9,
        )
    for k, current in enumerate(names):
        if tuple(current) != first:
            raise BagError(
                f"inconsistent joint names at {_at(stamp_ns[k])} (message {k}): {list(current)} "
                f"instead of {list(first)}",
                bag=bag, topic=topic, kind="names", t_s=stamp_ns[k] * 1e-9,
            )
    return first


def check_lengths(
    lengths: Sequence[int],
    n_joints: int,
    stamp_ns: Sequence[int],
    *,
    field_name: str,
    optional: bool,
    bag: Path | str,
    topic: str | None,
) -> None:
    """Each message has ``n_joints`` values of ``field_name`` (or none if ``optional``).

    Raises:
        BagError: kind ``"lengths"``.
    """
    allowed = (0, n_joints) if optional else (n_joints,)
    for k, length in enumerate(lengths):
        if length not in allowed:
            expected = f"0 or {n_joints}" if optional else f"{n_joints}"
            raise BagError(
                f"{length} {field_name} values for {n_joints} joints at {_at(stamp_ns[k])} (message {k}; "
                f"expected {expected})",
                bag=bag, topic=topic, kind="lengths", t_s=stamp_ns[k] * 1e-9,
            )


def check_finite(
    values: np.ndarray,
    stamp_ns: np.ndarray,
    names: Sequence[str],
    *,
    field_name: str,
    present: np.ndarray | None = None,
    bag: Path | str,
    topic: str | None,
) -> None:
    """No NaN or infinity in ``values`` (N, n), except in rows not ``present`` (N,) bool.

    Raises:
        BagError: kind ``"non_finite"``, naming the first sample and joint at fault.
    """
    bad = ~np.isfinite(values)  # (N, n)
    if present is not None:
        bad &= np.asarray(present, dtype=bool)[:, None]
    if not bad.any():
        return
    k, j = np.argwhere(bad)[0]
    value = values[k, j]
    raise BagError(
        f"{'NaN' if np.isnan(value) else value} {field_name} of joint {names[j]!r} at {_at(int(stamp_ns[k]))} "
        f"(message {k})",
        bag=bag, topic=topic, kind="non_finite", t_s=int(stamp_ns[k]) * 1e-9,
    )


def check_stamps(
    stamp_ns: np.ndarray,
    *,
    period_tolerance: float | None = 0.5,
    bag: Path | str,
    topic: str | None,
) -> None:
    """Stamps strictly increasing and, if ``period_tolerance`` is set, regular.

    Regular: every interval ``dt_k = t_k - t_{k-1}`` is within
    ``period_tolerance * T`` of the median interval ``T`` (a dropped sample,
    ``dt = 2 T``, fails a tolerance below 1).

    Args:
        stamp_ns: header stamps (ns), shape (N,), in bag order.

    Raises:
        BagError: kind ``"stamps"``: ``duplicated stamp at t=...``, ``stamps not
            increasing at t=...`` or ``irregular stamps at t=...``, at the first offence.
    """
    stamps = np.asarray(stamp_ns, dtype=np.int64)
    if stamps.size < 2:
        return
    dt = np.diff(stamps)  # (N-1,) ns
    bad = np.flatnonzero(dt <= 0)
    if bad.size:
        k = int(bad[0]) + 1
        what = "duplicated stamp" if dt[k - 1] == 0 else "stamps not increasing"
        raise BagError(
            f"{what} at {_at(int(stamps[k]))} (message {k}; previous {_at(int(stamps[k - 1]))})",
            bag=bag, topic=topic, kind="stamps", t_s=int(stamps[k]) * 1e-9,
        )
    if period_tolerance is None:
        return
    period = float(np.median(dt))
    off = np.flatnonzero(np.abs(dt - period) > period_tolerance * period)
    if off.size:
        k = int(off[0]) + 1
        raise BagError(
            f"irregular stamps at {_at(int(stamps[k]))} (message {k}): interval {format_time(int(dt[k - 1]))} s, "
            f"median {period * 1e-9:.9g} s (tolerance {100 * period_tolerance:g} %)",
            bag=bag, topic=topic, kind="stamps", t_s=int(stamps[k]) * 1e-9,
        )


# --------------------------------------------------------------------------- joint states
@dataclass(frozen=True)
class JointStateSeries:
    """A validated ``sensor_msgs/msg/JointState`` topic as arrays.

    Attributes:
        bag_path: the bag read.
        topic: the bag topic read (full name).
        names: joint names, n of them (the column order).
        stamp_ns: header stamps (ns), shape (N,), strictly increasing.
        t: the same in seconds, shape (N,).
        bag_time_ns: bag timestamps (ns; receive or header time, as recorded), shape (N,).
        position: (N, n) (rad, m).
        velocity: (N, n) (rad/s, m/s), NaN in the rows of messages without velocities.
        effort: (N, n) (N m, N), NaN in the rows of messages without efforts.
    """

    bag_path: Path
    topic: str
    names: tuple[str, ...]
    stamp_ns: np.ndarray
    t: np.ndarray
    bag_time_ns: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray

    def __len__(self) -> int:
        return int(self.stamp_ns.shape[0])

    def columns(self, names: Sequence[str]) -> list[int]:
        """Column indices of ``names``.

        Raises:
            BagError: kind ``"names"``, a joint not in the series.
        """
        missing = [name for name in names if name not in self.names]
        if missing:
            raise BagError(
                f"joints {missing} not recorded; the topic has {list(self.names)}",
                bag=self.bag_path, topic=self.topic, kind="names",
            )
        return [self.names.index(name) for name in names]


def read_joint_states(
    bag_path: Path | str,
    topic: str = "joint_states",
    *,
    min_messages: int = 2,
    period_tolerance: float | None = 0.5,
    repair: bool = False,
    distro: str = "kilted",
    drop_resent: bool = False,
) -> JointStateSeries:
    """Read and validate a ``sensor_msgs/msg/JointState`` topic of an MCAP or sqlite3 bag.

    Times come from the header stamps (``t = sec + 1e-9 nanosec``); messages are
    taken in bag-timestamp order and checked with :func:`check_message_count`,
    :func:`check_joint_names`, :func:`check_lengths`, :func:`check_finite` and
    :func:`check_stamps`.

    Args:
        bag_path: bag directory, or its ``.mcap``/``.db3`` file.
        topic: topic name, relative names matched as in :func:`resolve_topic`.
        min_messages: fewer messages is an error.
        period_tolerance: see :func:`check_stamps` (None: no regularity check).
        repair: repair a bag whose recorder was killed (:func:`repair_bag`) instead of failing.
        distro: ROS 2 distribution of the message definitions.
        drop_resent: drop exact retransmissions (same stamp, names and values as the message
            before, e.g. the lockstep ``sim`` re-sending a state while it waits for a command).
            A repeated stamp with other values is still an error.

    Raises:
        BagIncompleteError: the bag was not closed (and ``repair`` is False).
        BagError: missing topic, another type, too few messages, inconsistent names or
            lengths, NaN/inf values, duplicated, decreasing or irregular stamps; the
            message names the bag, the topic and the time.
    """
    path = _checked_path(bag_path, repair)
    typestore = typestore_for(distro)
    fast = _read_uniform_joint_states(path, topic, typestore)
    if fast is not None:
        resolved, bag_times, stamps, names, positions, velocities, efforts = fast
    else:
        resolved, bag_times, stamps, names, positions, velocities, efforts = _read_joint_state_messages(
            path, topic, typestore
        )
    where = {"bag": path, "topic": resolved}
    check_message_count(len(stamps), minimum=min_messages, **where)
    stamp_ns = np.asarray(stamps, dtype=np.int64)  # (N,)
    joint_names = check_joint_names(names, stamp_ns, **where)
    n = len(joint_names)
    check_lengths([len(p) for p in positions], n, stamp_ns, field_name="position", optional=False, **where)
    check_lengths([len(v) for v in velocities], n, stamp_ns, field_name="velocity", optional=True, **where)
    check_lengths([len(e) for e in efforts], n, stamp_ns, field_name="effort", optional=True, **where)

    def stack(rows) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(rows, np.ndarray):  # uniform layout: already (N, n), or (N, 0) when absent
            present = np.full(len(rows), rows.shape[1] > 0)
            return (rows if rows.shape[1] else np.full((len(rows), n), np.nan)), present
        present = np.array([row.size > 0 for row in rows], dtype=bool)  # (N,)
        array = np.full((len(rows), n), np.nan)  # (N, n)
        if present.any():
            array[present] = np.stack([row for row in rows if row.size > 0])
        return array, present

    position = (positions if isinstance(positions, np.ndarray) else np.stack(positions)) if n else np.zeros((len(stamps), 0))
    velocity, has_velocity = stack(velocities)
    effort, has_effort = stack(efforts)
    check_finite(position, stamp_ns, joint_names, field_name="position", **where)
    check_finite(velocity, stamp_ns, joint_names, field_name="velocity", present=has_velocity, **where)
    check_finite(effort, stamp_ns, joint_names, field_name="effort", present=has_effort, **where)
    bag_time = np.asarray(bag_times, dtype=np.int64)
    if drop_resent and len(stamp_ns) > 1:
        same = np.concatenate([[False], stamp_ns[1:] == stamp_ns[:-1]])
        for values in (position, velocity, effort):
            same[1:] &= np.all((values[1:] == values[:-1]) | (np.isnan(values[1:]) & np.isnan(values[:-1])), axis=1)
        keep = ~same
        stamp_ns, bag_time = stamp_ns[keep], bag_time[keep]
        position, velocity, effort = position[keep], velocity[keep], effort[keep]
    check_stamps(stamp_ns, period_tolerance=period_tolerance, **where)
    return JointStateSeries(
        bag_path=path,
        topic=resolved,
        names=joint_names,
        stamp_ns=stamp_ns,
        t=stamp_ns.astype(np.float64) * 1e-9,
        bag_time_ns=bag_time,
        position=position,
        velocity=velocity,
        effort=effort,
    )


def _read_joint_state_messages(path: Path, topic: str, typestore: Typestore):
    """Every message deserialized one by one (any layout)."""
    bag_times: list[int] = []
    stamps: list[int] = []
    names: list[list[str]] = []
    positions: list[np.ndarray] = []
    velocities: list[np.ndarray] = []
    efforts: list[np.ndarray] = []
    resolved = topic
    for connection, timestamp, message in _iter_messages(path, topic, typestore):
        if connection.msgtype != JOINT_STATE_TYPE:
            raise BagError(
                f"has {connection.msgtype} messages, not {JOINT_STATE_TYPE}", bag=path, topic=connection.topic, kind="type"
            )
        resolved = connection.topic
        bag_times.append(timestamp)
        stamp = message.header.stamp
        stamps.append(int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec))
        names.append(list(message.name))
        positions.append(np.asarray(message.position, dtype=np.float64))
        velocities.append(np.asarray(message.velocity, dtype=np.float64))
        efforts.append(np.asarray(message.effort, dtype=np.float64))
    return resolved, bag_times, stamps, names, positions, velocities, efforts


def _align(offset: int, size: int) -> int:
    return offset + (-offset) % size


def _joint_state_layout(data: bytes) -> tuple[int, list[tuple[int, int]]] | None:
    """Offsets of a little-endian CDR JointState: end of the names, and (count, first double) per array.

    CDR alignment is relative to the byte after the 4-byte encapsulation header:
    ``stamp (int32, uint32), frame_id (uint32 size + bytes), name (uint32 count,
    strings), position/velocity/effort (uint32 count, aligned float64s)``.
    """
    if len(data) < 16 or data[1] != 1:  # big-endian data: take the general path
        return None
    body = memoryview(data)[4:]
    offset = 8
    size = int(np.frombuffer(body, np.uint32, 1, offset)[0])
    offset = _align(offset + 4 + size, 4)
    count = int(np.frombuffer(body, np.uint32, 1, offset)[0])
    offset += 4
    for _ in range(count):
        offset = _align(offset, 4)
        offset += 4 + int(np.frombuffer(body, np.uint32, 1, offset)[0])
    names_end = offset
    arrays = []
    for _ in range(3):
        offset = _align(offset, 4)
        length = int(np.frombuffer(body, np.uint32, 1, offset)[0])
        start = _align(offset + 4, 8) if length else offset + 4
        arrays.append((length, start))
        offset = start + 8 * length
    return names_end, arrays


def _read_uniform_joint_states(path: Path, topic: str, typestore: Typestore):
    """The common case decoded in one go: every message of the topic has the same byte layout.

    A driver publishes the same joints every period, so the messages differ only
    in their stamps and numbers: same length, same frame_id and names. Those
    are compared byte for byte; the stamps and the float64 arrays are then read
    as strided views of one buffer. Returns ``None`` (use the general path) when
    the layouts differ, the data are big-endian, or the topic is not a JointState.
    """
    try:
        with Reader(path) as reader:
            connection = _connection(reader, topic, path, typestore)
            if connection.msgtype != JOINT_STATE_TYPE:
                return None
            raw = [(timestamp, bytes(data)) for _, timestamp, data in reader.messages([connection])]
    except (ReaderError, BagError):
        return None
    if not raw:
        return None
    length = len(raw[0][1])
    if any(len(data) != length for _, data in raw):
        return None
    try:
        layout = _joint_state_layout(raw[0][1])
        first, _ = cdr_decode(typestore, raw[0][1], JOINT_STATE_TYPE)
    except (ValueError, IndexError):
        return None
    if layout is None:
        return None
    names_end, arrays = layout
    buffer = np.frombuffer(b"".join(data for _, data in raw), dtype=np.uint8).reshape(len(raw), length)
    body = buffer[:, 4:]
    # encapsulation, frame_id, names, array counts and the padding bytes must not vary
    fixed = np.ones(length - 4, dtype=bool)
    fixed[0:8] = False  # stamp
    for count, start in arrays:
        fixed[start:start + 8 * count] = False
    if not (np.array_equal(buffer[:, :4], np.broadcast_to(buffer[0, :4], (len(raw), 4)))
            and np.array_equal(body[:, fixed], np.broadcast_to(body[0, fixed], (len(raw), int(fixed.sum()))))):
        return None
    stamps = (body[:, 0:4].copy().view("<i4")[:, 0].astype(np.int64) * 1_000_000_000
              + body[:, 4:8].copy().view("<u4")[:, 0].astype(np.int64))
    values = [body[:, start:start + 8 * count].copy().view("<f8") for count, start in arrays]
    names = [list(first.name)] * len(raw)
    bag_times = [timestamp for timestamp, _ in raw]
    return connection.topic, bag_times, stamps, names, values[0], values[1], values[2]

