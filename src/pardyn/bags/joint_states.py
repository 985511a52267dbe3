"""``sensor_msgs/msg/JointState`` topics as arrays: write a whole series, read and validate one.

* :func:`write_joint_states` writes a time series from arrays as a new bag.
* :func:`read_joint_states` reads a topic into a :class:`JointStateSeries`
  and validates it with the checks of :mod:`pardyn.bags.checks`; the common
  case (every message with the same byte layout) is decoded in one go.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from rosbags.rosbag2 import Reader, ReaderError
from rosbags.typesys.store import Typestore

from pardyn.bags.cdr import cdr_decode, typestore_for
from pardyn.bags.checks import check_finite, check_joint_names, check_lengths, check_message_count, check_stamps
from pardyn.bags.errors import BagError
from pardyn.bags.mcap_chunks import FlushPolicy
from pardyn.bags.reader import checked_path, connection_of, iter_messages
from pardyn.bags.writer import BagWriter
from pardyn.errors import InputError

__all__ = [
    "JOINT_STATE_TYPE",
    "JointStateSeries",
    "joint_state_message",
    "read_joint_states",
    "seconds_to_ns",
    "write_joint_states",
]

JOINT_STATE_TYPE = "sensor_msgs/msg/JointState"


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
        notes: what was done to the data on the way (resampling, ...), one sentence each.
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
    notes: tuple[str, ...] = ()

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
    path = checked_path(bag_path, repair)
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
    for connection, timestamp, message in iter_messages(path, topic, typestore):
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
            connection = connection_of(reader, topic, path, typestore)
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
    values = [body[:, start:start + 8 * count].copy().view("<f8") if count else np.zeros((len(raw), 0))
              for count, start in arrays]  # an empty field (a driver without velocities) is (N, 0)
    names = [list(first.name)] * len(raw)
    bag_times = [timestamp for timestamp, _ in raw]
    return connection.topic, bag_times, stamps, names, values[0], values[1], values[2]



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
        # contiguous: a row of a Fortran-ordered array (``joints[:, indices]``) is strided, which rosbags refuses
        position=np.ascontiguousarray(position, dtype=np.float64).reshape(-1),
        velocity=np.ascontiguousarray(velocity, dtype=np.float64).reshape(-1),
        effort=np.ascontiguousarray(effort, dtype=np.float64).reshape(-1),
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
    existed = path.exists()  # BagWriter refuses it; never removed below
    try:
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
    except BaseException:
        if not existed:
            shutil.rmtree(path, ignore_errors=True)  # a failed writer removes what it started: the retry can use the name
        raise
    return path

