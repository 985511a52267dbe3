"""The preallocated messages of the 1 kHz paths against messages built the ordinary way.

:class:`pardyn.nodes.wire.JointStateWriter` (the sim's state, truth and motor messages) and
:class:`pardyn.nodes.wire.CommandWire` (the controller's command) refill one serialized buffer per state;
what goes on the wire must read back (rclpy's deserializer) as the message built field by field from the
same values, state after state.
"""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Time
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from pardyn.control.safety import joint_label
from pardyn.nodes.messages import command_message
from pardyn.nodes.wire import CommandWire, JointStateWriter


def _ordinary(names, stamp_ns, **fields) -> JointState:
    message = JointState()
    message.header.stamp = Time(sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000)
    message.name = list(names)
    for field, values in fields.items():
        setattr(message, field, [float(v) for v in values])
    return message


def test_a_refilled_joint_state_serializes_as_a_new_message_each_state():
    rng = np.random.default_rng(0)
    for names in (("leg1_joint1", "leg2_joint1", "leg3_joint1"), ("a", "bb", "ccc", "dddd", "eeeee"), ("q",)):
        for fields in (("position", "velocity", "effort"), ("position", "velocity"), ("position", "effort")):
            writer = JointStateWriter(names, fields)
            for stamp_ns in (0, 999_000_000, 1_000_000_000, 7_123_456_789):
                values = {field: rng.normal(size=len(names)) for field in fields}
                # rclpy's deserializer reads the bytes back (its serializer leaves the alignment padding
                # uninitialised: the bytes themselves may differ there)
                written = deserialize_message(writer.fill(stamp_ns, **values), JointState)
                assert written == _ordinary(names, stamp_ns, **values), (names, fields)


def test_a_refilled_command_serializes_as_command_message():
    names = ("a", "b", "c", "d")
    wire = CommandWire(joint_label(names), len(names))
    for tag, tau in enumerate(np.random.default_rng(1).normal(size=(3, 4))):
        assert deserialize_message(wire.fill(tau, tag), Float64MultiArray) == command_message(tau, names, tag)
