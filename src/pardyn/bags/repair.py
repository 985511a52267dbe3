"""Repair an MCAP bag whose writer was killed: keep its complete chunks, close it properly.

:func:`scan_mcap` reads an MCAP file record by record with the ``mcap``
package's :class:`mcap.stream_reader.StreamReader` (https://mcap.dev/spec) and
stops at the first record that is cut short or fails its size or CRC check:
everything before it is kept, nothing after it is trusted. A chunk is kept only
whole (its CRC matches when not 0, every record in it parses).
:func:`repair_bag` writes the recovered messages into a new closed bag.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path

from mcap.exceptions import InvalidMagic
from mcap.records import Channel, Chunk, DataEnd, Footer, Header, Message, Schema
from mcap.stream_reader import CRCValidationError, StreamReader, breakup_chunk
from rosbags.interfaces import Connection
from rosbags.rosbag2 import StoragePlugin
from rosbags.rosbag2.metadata import parse_qos
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.msg import get_types_from_msg
from rosbags.typesys.store import Typestore

from pardyn.bags.cdr import typestore_for
from pardyn.bags.errors import BagError
from pardyn.bags.mcap_chunks import FlushPolicy, Rosbag2Writer
from pardyn.bags.metadata import load_metadata
from pardyn.bags.status import bag_status

__all__ = ["McapScan", "RepairReport", "damaged_chunk", "repair_bag", "scan_mcap", "verify_bag"]


@dataclass
class McapScan:
    """What a linear scan of an MCAP file found in its complete records.

    Attributes:
        path: the file.
        schemas, channels: ``mcap.records.Schema`` / ``Channel`` by id.
        messages: ``(channel id, log time ns, data)`` in file order.
        chunks: complete chunks read.
        good_end: offset just past the last complete record kept.
        size: file size (bytes).
        stop: why the scan stopped (``"end of data"`` for a closed file).
    """

    path: Path
    schemas: dict[int, Schema] = field(default_factory=dict)
    channels: dict[int, Channel] = field(default_factory=dict)
    messages: list[tuple[int, int, bytes]] = field(default_factory=list)
    chunks: int = 0
    good_end: int = 0
    size: int = 0
    stop: str = ""


class _Damaged(Exception):
    """A record refers to what does not exist."""


def _take(records, schemas: dict, channels: dict, messages: list) -> None:
    """Schema, channel and message records into the dicts/list (other records carry no messages)."""
    for record in records:
        if isinstance(record, Schema):
            schemas[record.id] = record
        elif isinstance(record, Channel):
            if record.schema_id not in schemas:
                raise _Damaged(f"channel {record.id} ({record.topic}) refers to unknown schema {record.schema_id}")
            channels[record.id] = record
        elif isinstance(record, Message):
            if record.channel_id not in channels:
                raise _Damaged(f"message on unknown channel {record.channel_id}")
            messages.append((record.channel_id, record.log_time, record.data))
        elif isinstance(record, Chunk):
            raise _Damaged("nested chunk")


def scan_mcap(path: Path | str) -> McapScan:
    """Read every complete record of an MCAP file, stopping at the first torn or damaged one.

    Raises:
        BagError: not an MCAP file (bad magic or no header record).
    """
    path = Path(path)
    scan = McapScan(path, size=path.stat().st_size)
    with open(path, "rb") as stream:
        records = StreamReader(stream, emit_chunks=True).records
        while True:
            try:
                record = next(records)
                schemas, channels, messages = dict(scan.schemas), dict(scan.channels), []
                if isinstance(record, Chunk):
                    try:
                        content = breakup_chunk(record, validate_crc=True)
                    except CRCValidationError as error:
                        raise _Damaged(f"chunk checksum mismatch ({error})") from error
                    _take(content, schemas, channels, messages)
                elif isinstance(record, Header) != (scan.good_end == 0):
                    if scan.good_end == 0:
                        raise BagError("not an MCAP file (no header record)", bag=path, kind="format")
                    raise _Damaged("unexpected header record")
                else:
                    _take([record], schemas, channels, messages)
            except StopIteration:
                scan.stop = "end of file"
                break
            except InvalidMagic:
                raise BagError("not an MCAP file (bad magic)", bag=path, kind="format") from None
            except BagError:
                raise
            except Exception as error:  # noqa: BLE001 - EndOfFile, CRC, malformed records: the scan ends here
                cut = stream.tell() >= scan.size
                what = "cut short" if cut and not isinstance(error, _Damaged) else f"damaged: {error}"
                scan.stop = f"record at offset {scan.good_end} {what}"
                break
            if isinstance(record, (DataEnd, Footer)):
                scan.stop = "end of data"
                break
            if isinstance(record, Chunk):
                scan.chunks += 1
            scan.schemas, scan.channels = schemas, channels
            scan.messages.extend(messages)
            scan.good_end = stream.tell()
    return scan


def damaged_chunk(path: Path | str) -> str | None:
    """Where a closed MCAP file's data section is damaged (chunk CRC, malformed record), None if intact.

    A flipped bit inside a chunk leaves the file's footer and summary intact:
    only the chunk's CRC (written by pardyn's recorder, and by the ``mcap``
    package's writer) shows it. The whole data section is read (one pass).
    """
    return _scan_problem(scan_mcap(path))


def _scan_problem(scan: McapScan) -> str | None:
    if scan.stop == "end of data":
        return None
    return f"{scan.path.name}: chunk {scan.chunks + 1} ({scan.stop}); {scan.chunks} chunks before it are intact"


def verify_bag(status) -> str | None:
    """What is damaged in a closed MCAP bag (a :class:`~pardyn.bags.status.BagStatus`), None if intact.

    Its data section chunk by chunk (:func:`damaged_chunk`), then what a reader
    sees through the summary and the message indexes (``rosbags``, what
    ``pardyn identify`` reads), which carry no CRC here: the same messages, in
    the same order, as the data section holds. Two passes over the file.
    """
    from rosbags.rosbag2 import Reader  # noqa: PLC0415

    scanned = []
    for file in status.files:
        scan = scan_mcap(file)
        problem = _scan_problem(scan)
        if problem:
            return problem
        scanned += [(log_time, bytes(data)) for _, log_time, data in scan.messages]
    try:
        with Reader(status.path if status.path.is_dir() else status.path.parent) as reader:
            read = [(timestamp, bytes(data)) for _, timestamp, data in reader.messages()]
    except Exception as error:  # noqa: BLE001 - any failure of the index is damage
        read, failure = None, f"{type(error).__name__}: {str(error)[:120]}"
    else:
        failure = None
    if read is None or sorted(read) != sorted(scanned):
        what = failure or f"{len(read)} messages through the index, {len(scanned)} in the chunks"
        return (f"the summary or message index is damaged ({what}); the {len(scanned)} messages of the chunks are "
                "intact")
    return None


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



def _type_hash(schema: Schema, typestore: Typestore, known: str | None) -> str:
    """RIHS01 hash of a schema: the one the provisional metadata knew, else computed from the definition."""
    if known:
        return known
    definition = schema.data.decode("utf-8")
    if schema.name in typestore.fielddefs and typestore.generate_msgdef(schema.name, ros_version=2)[0] == definition:
        return typestore.hash_rihs01(schema.name)
    store = get_typestore(Stores.EMPTY)
    store.register(get_types_from_msg(definition, schema.name))
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
    metadata = load_metadata(path) if metadata_path.exists() else {}
    if metadata and metadata.get("storage_identifier") != "mcap":
        raise BagError(
            f"only MCAP bags can be repaired (storage {metadata.get('storage_identifier')!r}; "
            "rosbags commits a sqlite3 bag on close)",
            bag=path, kind="format",
        )
    status = bag_status(path)
    if status.complete:
        damage = verify_bag(status) if status.storage == "mcap" else None
        if not damage:
            return RepairReport(path, False)
        status = replace(status, complete=False, problem=f"damaged: {damage}")
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
    writer = Rosbag2Writer(target, storage=StoragePlugin.MCAP, policy=policy, on_chunk=lambda *_: None)
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
                qos = parse_qos(channel.metadata.get("offered_qos_profiles", ""))
            except Exception:  # noqa: BLE001 - QoS is informative only
                qos = []
            connections[channel.id] = writer.add_connection(
                channel.topic,
                schema.name,
                msgdef=schema.data.decode("utf-8"),
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
