"""The 1 kHz path's messages in their serialized form: a state read and a command written without a Python message.

rclpy converts every message it takes into Python objects (a ``JointState``: its header, a list of name
strings, three ``array('d')``) and every message it publishes back into C. On the controller's and the sim's
1 kHz path that conversion costs more than the law (``bench/wire.py``, one process, DualV messages: a state
taken 38-48 us as a message, 8 us as bytes; a command taken 20 us / 5 us, published 13 us / 6 us) and
allocates on every state. Taken and published as bytes (``take_message(type, raw=True)``,
``publisher.publish(bytes)``, both rclpy API), the numbers are read in place through numpy views and the
command is one buffer refilled per state.

**The format** is the RMW's serialization, OMG CDR version 1 (what ``rclpy.serialization.serialize_message``
writes and every ROS 2 RMW exchanges): a 4-byte encapsulation header (``00 01``: little-endian,
``00 00``: big-endian; two option bytes), then the fields in their declared order; a primitive is aligned to
its size counted from the end of the header; a string is a ``uint32`` length that counts its terminating
NUL, the bytes, the NUL; a sequence is a ``uint32`` count, then its elements. ``sensor_msgs/JointState``:
``header`` (``stamp``: ``int32 sec``, ``uint32 nanosec``; ``string frame_id``), ``string[] name``,
``float64[] position``, ``velocity``, ``effort``. ``std_msgs/Float64MultiArray``: ``layout``
(``MultiArrayDimension[] dim``: ``string label``, ``uint32 size``, ``uint32 stride``; ``uint32
data_offset``), ``float64[] data``. ``test/nodes/test_wire.py`` compares both ways with rclpy's own
serializer.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np

from pardyn.errors import InputError

__all__ = ["CommandWire", "JointStateWire", "JointStateWriter", "WireCommand", "WireState", "decode_command", "serialized"]

_HEADER = 4  # the encapsulation header's bytes; alignment counts from its end
_FORMATS = {order: (struct.Struct(f"{order}I"), struct.Struct(f"{order}i"), np.dtype(f"{order}f8"))
            for order in "<>"}
_ENDIANNESS = {b"\x00\x01": _FORMATS["<"], b"\x00\x00": _FORMATS[">"]}


class _Reader:
    """A cursor over one serialized message (module docstring's rules); every read checks the buffer's end."""

    def __init__(self, data: bytes, what: str) -> None:
        self.data, self.what = data, what
        if len(data) < _HEADER:
            raise InputError(f"serialized {what}: {len(data)} bytes, shorter than the CDR header")
        formats = _ENDIANNESS.get(bytes(data[:2]))
        if formats is None:
            raise InputError(f"serialized {what}: encapsulation {bytes(data[:2]).hex()} is not CDR (00 00 / 00 01)")
        self._u32, self._i32, self._f64 = formats
        self.at = _HEADER

    def _take(self, size: int, align: int, field: str) -> int:
        start = self.at + (-(self.at - _HEADER) % align)
        if start + size > len(self.data):
            raise InputError(f"serialized {self.what}: {field} runs past the message's end ({len(self.data)} bytes)")
        self.at = start + size
        return start

    def align(self, size: int) -> None:
        self.at += -(self.at - _HEADER) % size

    def u32(self, field: str) -> int:
        return self._u32.unpack_from(self.data, self._take(4, 4, field))[0]

    def i32(self, field: str) -> int:
        return self._i32.unpack_from(self.data, self._take(4, 4, field))[0]

    def skip_string(self, field: str) -> None:
        self._take(self.u32(field), 1, field)

    def string_bytes(self, field: str) -> bytes:
        """The string's bytes without its NUL."""
        length = self.u32(field)
        start = self._take(length, 1, field)
        return bytes(self.data[start:start + max(length - 1, 0)])

    def doubles(self, field: str) -> np.ndarray:
        """A read-only view of a float64 sequence (native byte order: a copy if the message's is not)."""
        count = self.u32(field)
        start = self._take(8 * count, 8 if count else 1, field)
        values = np.frombuffer(self.data, dtype=self._f64, count=count, offset=start)
        return values if self._f64.isnative else values.astype(float)


class WireState(NamedTuple):
    """A ``JointState`` read in place: the fields the 1 kHz path uses.

    Attributes:
        stamp_ns: ``header.stamp`` in ns.
        name: the joints' names (the same tuple object while the names do not change).
        position, velocity, effort: (n,), (0 or n,), (0 or n,) float64 views of the message's bytes (read-only).
    """

    stamp_ns: int
    name: tuple[str, ...]
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


class JointStateWire:
    """Reads serialized ``sensor_msgs/JointState`` messages (module docstring); keeps the last names' tuple so
    that a stream whose names never change decodes them once."""

    def __init__(self) -> None:
        self._names: tuple[bytes, tuple[str, ...]] = (b"", ())

    def read(self, data: bytes) -> WireState:
        """The state in ``data`` (the bytes of one message).

        Raises:
            InputError: not CDR, a field past the end, a name that is not UTF-8.
        """
        reader = _Reader(data, "JointState")
        sec = reader.i32("header.stamp.sec")
        nanosec = reader.u32("header.stamp.nanosec")
        reader.skip_string("header.frame_id")
        reader.align(4)
        start = reader.at
        key, names = self._names
        if key and data[start:start + len(key)] == key:  # the last state's names (count and strings): as they were
            reader.at = start + len(key)
        else:
            count = reader.u32("name")
            for _ in range(count):
                reader.skip_string("name")
            self._names = key, names = bytes(data[start:reader.at]), _names(data, start + 4, count, reader.what)
        return WireState(sec * 1_000_000_000 + nanosec, names, reader.doubles("position"),
                         reader.doubles("velocity"), reader.doubles("effort"))


def _names(data: bytes, start: int, count: int, what: str) -> tuple[str, ...]:
    """The ``count`` strings serialized from ``start`` (bounds already checked by the caller's walk)."""
    reader = _Reader(data, what)
    reader.at = start
    try:
        return tuple(reader.string_bytes("name").decode() for _ in range(count))
    except UnicodeDecodeError as error:
        raise InputError(f"serialized {what}: a joint name is not UTF-8 ({error})") from None


def serialized(message) -> bytes:
    """The serialized form of ``message``: ``bytes`` as they are, a message (a test, a node fed in process)
    serialized by rclpy, so that both take the same path."""
    if isinstance(message, bytes | bytearray | memoryview):
        return bytes(message)
    from rclpy.serialization import serialize_message  # noqa: PLC0415

    return serialize_message(message)


class WireCommand(NamedTuple):
    """A ``Float64MultiArray`` read in place: ``data`` (n,) float64 (read-only), ``layout.data_offset``
    (the lockstep tag) and the first dimension's label (the joints' names, empty without a dimension)."""

    data: np.ndarray
    tag: int
    label: str


def decode_command(data: bytes) -> WireCommand:
    """The command in ``data`` (one serialized ``Float64MultiArray``).

    Raises:
        InputError: not CDR, a field past the end, a label that is not UTF-8.
    """
    reader = _Reader(data, "Float64MultiArray")
    label = ""
    for k in range(reader.u32("layout.dim")):
        text = reader.string_bytes(f"layout.dim[{k}].label")
        reader.u32(f"layout.dim[{k}].size")
        reader.u32(f"layout.dim[{k}].stride")
        if k == 0:
            try:
                label = text.decode()
            except UnicodeDecodeError as error:
                raise InputError(f"serialized Float64MultiArray: layout.dim[0].label is not UTF-8 ({error})") from None
    tag = reader.u32("layout.data_offset")
    return WireCommand(reader.doubles("data"), tag, label)


class CommandWire:
    """One serialized ``Float64MultiArray`` command, built once and refilled per state: the torques and the tag
    written in place (little-endian CDR), the joints' names in ``layout.dim[0].label``.

    :meth:`fill` returns ``bytes`` for ``publisher.publish`` (rclpy publishes bytes as they are).
    """

    def __init__(self, label: str, size: int) -> None:
        text = label.encode() + b"\0"
        head = b"\x00\x01\x00\x00" + struct.pack("<I", 1) + struct.pack("<I", len(text)) + text
        head += b"\0" * (-(len(head) - _HEADER) % 4)
        head += struct.pack("<III", size, size, 0)  # size, stride, data_offset (the tag: rewritten per state)
        self._tag_at = len(head) - 4
        head += struct.pack("<I", size)
        head += b"\0" * (-(len(head) - _HEADER) % 8)
        self._buffer = bytearray(head + bytes(8 * size))
        self._values = np.frombuffer(self._buffer, dtype="<f8", count=size, offset=len(head))
        self._tag = struct.Struct("<I")
        self.size = size

    def fill(self, tau, tag: int) -> bytes:
        """The message holding the torques ``tau`` (size,) tagged ``tag`` (0 <= tag < 2^32)."""
        self._values[:] = tau
        self._tag.pack_into(self._buffer, self._tag_at, tag)
        return bytes(self._buffer)


class JointStateWriter:
    """One serialized ``sensor_msgs/JointState`` (little-endian CDR), built once and refilled per state: the
    sim's state, truth and motor messages (a new message per state cost ~80 us of Python in the sim, its
    publish as a message ~15 us more).

    ``names`` are written once (``frame_id`` empty); each of ``fields`` (``position``, ``velocity``,
    ``effort``) holds ``len(names)`` values, the others are empty. :meth:`fill` returns ``bytes`` for
    ``publisher.publish``.
    """

    def __init__(self, names, fields: tuple[str, ...] = ("position", "velocity", "effort")) -> None:
        unknown = set(fields) - {"position", "velocity", "effort"}
        if unknown:
            raise ValueError(f"JointState has no field {sorted(unknown)}")
        body = bytearray(b"\x00\x01\x00\x00" + bytes(8) + struct.pack("<I", 1) + b"\0")  # stamp, frame_id ""

        def pad(size: int) -> None:
            body.extend(bytes(-(len(body) - _HEADER) % size))

        pad(4)
        body += struct.pack("<I", len(names))
        for name in names:
            text = name.encode() + b"\0"
            pad(4)
            body += struct.pack("<I", len(text)) + text
        offsets = {}
        for field in ("position", "velocity", "effort"):
            count = len(names) if field in fields else 0
            pad(4)
            body += struct.pack("<I", count)
            if count:
                pad(8)
                offsets[field] = len(body)
                body += bytes(8 * count)
        self._buffer = body
        self._views = {field: np.frombuffer(body, dtype="<f8", count=len(names), offset=at)
                       for field, at in offsets.items()}
        self._stamp = struct.Struct("<iI")

    def fill(self, stamp_ns: int, **values) -> bytes:
        """The message stamped ``stamp_ns`` (>= 0) holding ``values`` (field name -> (len(names),))."""
        self._stamp.pack_into(self._buffer, _HEADER, *divmod(int(stamp_ns), 1_000_000_000))
        for field, value in values.items():
            self._views[field][:] = value
        return bytes(self._buffer)
