"""ROS 2 node ``gazebo_joint_states``: gz-sim's joint states in pardyn's joint coordinates.

The exported SDF (:mod:`pardyn.export`) is written at the robot's home configuration and
SDF measures joint positions from there, so gz_ros2_control reports ``q - home``. This
node adds ``home`` back (:func:`pardyn.export.ros2_control.positions_from_simulator`):

* subscribes ``joint_state_broadcaster/joint_states`` (sensor_msgs/JointState, the
  broadcaster with ``use_local_topics``; best effort, so reliable publishers match too);
* publishes ``joint_states``: same header, names, velocities and efforts, positions ``+ home``.

Parameters (``config/gazebo_joint_states.yaml``, table in :mod:`pardyn.node_parameters`):
``robot`` (name or YAML path), ``log_period``. A message whose positions and names differ
in length is dropped with a warning, at most once per ``log_period``.
"""

from __future__ import annotations

import sys

from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from pardyn.export.ros2_control import home_offsets, positions_from_simulator
from pardyn.nodes.common import Reporter, declare_parameters, run_node
from pardyn.robot import load_robot

__all__ = ["GazeboJointStatesNode", "main"]

NODE_NAME = "gazebo_joint_states"
INPUT_TOPIC = "joint_state_broadcaster/joint_states"
OUTPUT_TOPIC = "joint_states"


class GazeboJointStatesNode(Node):
    """Relay of gz-sim joint states with the home offsets added (module docstring)."""

    def __init__(self, **options) -> None:
        super().__init__(NODE_NAME, **options)
        parameters = declare_parameters(self, NODE_NAME)  # pardyn.node_parameters.GAZEBO_JOINT_STATES
        robot = load_robot(parameters["robot"])
        self._offsets = home_offsets(robot)
        self._report = Reporter(self, parameters["log_period"])
        self._publisher = self.create_publisher(JointState, OUTPUT_TOPIC, 10)
        qos = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT)
        self.create_subscription(JointState, INPUT_TOPIC, self._on_state, qos)

    def _on_state(self, message: JointState) -> None:
        if len(message.position) != len(message.name):
            self._report.warning("lengths", f"{INPUT_TOPIC}: {len(message.name)} names but "
                                            f"{len(message.position)} positions: dropped")
            return
        out = JointState(header=message.header, name=list(message.name), velocity=list(message.velocity),
                         effort=list(message.effort))
        out.position = positions_from_simulator(list(message.name), list(message.position), self._offsets)
        self._publisher.publish(out)


def main(args=None) -> int:
    return run_node(GazeboJointStatesNode, NODE_NAME, args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
