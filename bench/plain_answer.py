#!/usr/bin/env python3
"""The anchor of the 1 kHz benches: the smallest plain rclpy node that answers each joint state.

Subscribes ``joint_states`` (system-default QoS), publishes one ``effort_controller/commands``
(std_msgs/Float64MultiArray) per state: a joint PD holding the first position read
(``100 (q0 - q) - 6 qdot`` on the joints named on the command line, in that order), the joint names in
``layout.dim[0].label`` and the state's lockstep tag (``round(stamp / period) mod 2^32``) in
``layout.data_offset``, so that a driver or pardyn's sim takes it for a pardyn controller. Nothing else:
rclpy's default executor (``rclpy.spin``), a new message per state, default scheduling, no pardyn import.
What pardyn's controller does beyond this (the closed loop's eq. 50, checks, filters, its other nodes in
the same process) is what the benches compare against this node in the same run.

Run (by bench/hardware.py and bench/loop.py): ``python bench/plain_answer.py NAMES PERIOD_NS --ros-args -r __ns:=/ns``.
"""

from __future__ import annotations

import sys

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import qos_profile_system_default
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension


class PlainAnswer(Node):
    def __init__(self, names: list[str], period_ns: int) -> None:
        super().__init__("plain_answer")
        self.names, self.period_ns = names, period_ns
        self.indices: list[int] | None = None
        self.hold: list[float] = []
        self.publisher = self.create_publisher(Float64MultiArray, "effort_controller/commands",
                                               qos_profile_system_default)
        self.create_subscription(JointState, "joint_states", self.on_state, qos_profile_system_default)

    def on_state(self, state: JointState) -> None:
        if self.indices is None:
            self.indices = [list(state.name).index(name) for name in self.names]
            self.hold = [state.position[i] for i in self.indices]
            self.get_logger().info(f"first answer: holding {self.hold}")
        command = Float64MultiArray()
        command.layout.dim = [MultiArrayDimension(label=",".join(self.names), size=len(self.names),
                                                  stride=len(self.names))]
        stamp = state.header.stamp.sec * 1_000_000_000 + state.header.stamp.nanosec
        command.layout.data_offset = ((stamp + self.period_ns // 2) // self.period_ns) % 2**32
        command.data = [100.0 * (h - state.position[i]) - 6.0 * (state.velocity[i] if state.velocity else 0.0)
                        for h, i in zip(self.hold, self.indices)]
        self.publisher.publish(command)


def main() -> int:
    arguments = rclpy.utilities.remove_ros_args(sys.argv)
    rclpy.init(args=sys.argv)  # rclpy's own SIGINT/SIGTERM handlers end spin()
    node = PlainAnswer(arguments[1].split(","), int(arguments[2]))
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
