"""The preallocated messages of the 1 kHz paths against messages built the ordinary way.

:class:`pardyn.nodes.messages.JointStateBuffer` (the sim's state, truth and motor messages) and
:class:`pardyn.nodes.messages.CommandBuffer` (the controller's command) refill one message per state;
what goes on the wire (rclpy's serialization) must be what a message built field by field from the same
values gives, state after state.
"""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Time
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from pardyn.nodes.messages import CommandBuffer, JointStateBuffer, command_message


def _ordinary(names, stamp_ns, **fields) -> JointState:
    message = JointState()
    message.header.stamp = Time(sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000)
    message.name = list(names)
    for field, values in fields.items():
        setattr(message, field, [float(v) for v in values])
    return message


def test_a_refilled_joint_state_serializes_as_a_new_message_each_state():
    names = ("leg1_joint1", "leg2_joint1", "leg3_joint1")
    rng = np.random.default_rng(0)
    for fields in (("position", "velocity", "effort"), ("position", "velocity"), ("position", "effort")):
        buffer = JointStateBuffer(names, fields)
        for stamp_ns in (0, 999_000_000, 1_000_000_000, 7_123_456_789):
            values = {field: rng.normal(size=len(names)) for field in fields}
            message = buffer.fill(stamp_ns, **values)
            assert message is buffer.message  # no new message per state
            assert serialize_message(message) == serialize_message(_ordinary(names, stamp_ns, **values)), fields


def test_a_refilled_command_serializes_as_command_message():
    names = ("a", "b", "c", "d")
    buffer = CommandBuffer(names)
    for tag, tau in enumerate(np.random.default_rng(1).normal(size=(3, 4))):
        assert serialize_message(buffer.fill(tau, tag)) == serialize_message(command_message(tau, names, tag))
