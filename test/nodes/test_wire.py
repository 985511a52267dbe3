"""The serialized 1 kHz messages (:mod:`pardyn.nodes.wire`) against rclpy's own CDR serializer (the RMW's
type support): every field read as rclpy writes it, every command written as rclpy reads it, across the
alignments names and labels of every length give."""

from __future__ import annotations

import array
import struct

import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension

from pardyn.errors import InputError
from pardyn.nodes.wire import CommandWire, JointStateWire, decode_command


def joint_state(names, position, velocity=(), effort=(), *, sec=12, nanosec=345_678_901, frame_id="") -> JointState:
    message = JointState()
    message.header.stamp.sec, message.header.stamp.nanosec = sec, nanosec
    message.header.frame_id = frame_id
    message.name = list(names)
    message.position = array.array("d", position)
    message.velocity = array.array("d", velocity)
    message.effort = array.array("d", effort)
    return message


CASES = [  # names of 1-9 characters and frame ids of 0-3: every padding before the doubles
    (["a"], [0.5], [], [], ""),
    (["left_motor", "right_motor", "left_elbow", "right_elbow", "px"], [0.1, -0.2, 0.3, 1e-9, -7.0],
     [1.0, 2.0, 3.0, 4.0, 5.0], [], "w"),
    (["j1", "jj2", "jjj3"], [1.0, 2.0, 3.0], [], [9.0, 8.0, 7.0], "ab"),
    (["abcdefghi", "x"], [np.pi, -np.e], [0.0, -0.0], [1e300, -1e-300], "abc"),
    ([], [], [], [], "base_link"),
]


@pytest.mark.parametrize(("names", "position", "velocity", "effort", "frame_id"), CASES)
def test_a_state_reads_as_rclpy_wrote_it(names, position, velocity, effort, frame_id):
    message = joint_state(names, position, velocity, effort, frame_id=frame_id, sec=-3 if not names else 12)
    state = JointStateWire().read(serialize_message(message))
    assert state.stamp_ns == message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
    assert state.name == tuple(names)
    for field in ("position", "velocity", "effort"):
        np.testing.assert_array_equal(getattr(state, field), np.array(getattr(message, field), dtype=float))


def test_unchanged_names_are_decoded_once_and_changed_ones_again():
    wire = JointStateWire()
    first = wire.read(serialize_message(joint_state(["a", "b"], [1.0, 2.0])))
    second = wire.read(serialize_message(joint_state(["a", "b"], [3.0, 4.0])))
    third = wire.read(serialize_message(joint_state(["a", "c"], [5.0, 6.0])))
    assert second.name is first.name
    assert third.name == ("a", "c")
    np.testing.assert_array_equal(second.position, [3.0, 4.0])


def test_a_big_endian_state_reads_the_same():
    """CDR's other byte order (encapsulation 00 00), written field by field by hand."""
    def string(text: bytes, at: int) -> bytes:
        return b"\0" * (-at % 4) + struct.pack(">I", len(text) + 1) + text + b"\0"

    body = struct.pack(">iI", 7, 250) + string(b"", 8)
    body += b"\0" * (-len(body) % 4) + struct.pack(">I", 2)
    for name in (b"q1", b"q22"):
        body += string(name, len(body))
    for values in ([1.5, -2.5], [0.25, 4.0], []):
        body += b"\0" * (-len(body) % 4) + struct.pack(">I", len(values))
        if values:
            body += b"\0" * (-len(body) % 8) + struct.pack(f">{len(values)}d", *values)
    state = JointStateWire().read(b"\x00\x00\x00\x00" + body)
    assert (state.stamp_ns, state.name) == (7_000_000_250, ("q1", "q22"))
    np.testing.assert_array_equal(state.position, [1.5, -2.5])
    np.testing.assert_array_equal(state.velocity, [0.25, 4.0])
    assert state.effort.size == 0


@pytest.mark.parametrize("cut", [2, 9, 30, -9])
def test_a_truncated_state_is_refused_naming_the_field(cut):
    data = serialize_message(joint_state(["left_motor", "right_motor"], [0.1, 0.2], [0.0, 0.0]))
    with pytest.raises(InputError, match="serialized JointState: .*(CDR header|runs past)"):
        JointStateWire().read(data[:cut])


def test_a_message_that_is_not_cdr_is_refused():
    with pytest.raises(InputError, match="encapsulation 0102 is not CDR"):
        JointStateWire().read(b"\x01\x02\x00\x00" + bytes(40))


@pytest.mark.parametrize("label", ["", "a", "ab", "abc", "left_motor,right_motor,left_elbow,right_elbow"])
def test_a_command_written_in_place_is_what_rclpy_reads(label):
    wire = CommandWire(label, 4)
    for tau, tag in (([1.0, -2.0, 3.5, 1e-12], 0), ([0.0, 7.0, -7.0, 2.0], 2**32 - 1)):
        message = deserialize_message(wire.fill(np.array(tau), tag), Float64MultiArray)
        assert list(message.data) == tau
        assert message.layout.data_offset == tag
        assert [(d.label, d.size, d.stride) for d in message.layout.dim] == [(label, 4, 4)]


def test_a_command_reads_as_rclpy_wrote_it():
    message = Float64MultiArray()
    message.layout.dim = [MultiArrayDimension(label="m1,m2,m3", size=3, stride=3),
                          MultiArrayDimension(label="x", size=1, stride=1)]
    message.layout.data_offset = 41
    message.data = [0.5, -1.5, 2.25]
    command = decode_command(serialize_message(message))
    assert (command.tag, command.label) == (41, "m1,m2,m3")
    np.testing.assert_array_equal(command.data, [0.5, -1.5, 2.25])
    bare = decode_command(serialize_message(Float64MultiArray(data=[1.0])))
    assert (bare.tag, bare.label, bare.data.tolist()) == (0, "", [1.0])
    with pytest.raises(InputError, match="serialized Float64MultiArray: data runs past"):
        decode_command(serialize_message(message)[:-4])
