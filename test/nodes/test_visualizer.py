"""The ``visualizer`` node over DDS: its markers draw the configuration the inverse problem gave.

The test solves a platform pose by the *inverse* problem, publishes only the actuated joints of the answer, and
checks the platform marker the node publishes (forward problem, then the scene) against pinocchio's forward
kinematics of the inverse answer; robot_description arrives latched (subscribed after the node started).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from visualization_msgs.msg import MarkerArray

from pardyn import load_robot


def test_the_visualizer_draws_the_closed_loop_robot_of_the_joint_states(launch_node, ros_client):
    robot = load_robot("dualv")
    q = robot.solve_inverse({"x": robot.task_values(robot.home)[0] + 0.03, "y": robot.task_values(robot.home)[1] - 0.02,
                             "phi": 0.1}).q
    node = launch_node("visualizer", params={"robot": "dualv", "rate": 20.0})
    markers: list = ros_client.collect(MarkerArray, node.topic("robot_markers"))
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    descriptions: list = []
    ros_client.node.create_subscription(String, node.topic("robot_description"), descriptions.append, latched)
    state = JointState(name=list(robot.actuated_names), position=[float(v) for v in q[robot.actuated_indices]])
    state.header.stamp.sec = 7
    publisher = ros_client.publisher(JointState, node.topic("joint_states"))

    def drawn():
        return [m for m in markers if m.markers and m.markers[0].header.stamp.sec == 7]

    assert ros_client.publish_until(publisher, state, drawn, timeout_s=20.0), node.output()
    assert ros_client.spin_until(lambda: descriptions, 10.0), "no latched robot_description"
    assert descriptions[0].data == robot.description.urdf.read_text()
    array = drawn()[0]
    platform = next(m for m in array.markers if m.ns == "platform")
    data = robot.model.createData()
    pin.framesForwardKinematics(robot.model, data, q)
    expected = data.oMf[robot.model.getFrameId(robot.effector_frame)]
    o = platform.pose.orientation
    drawn_pose = pin.SE3(pin.Quaternion(o.w, o.x, o.y, o.z).matrix(),
                         np.array([platform.pose.position.x, platform.pose.position.y, platform.pose.position.z]))
    assert np.abs(pin.log6(expected.actInv(drawn_pose)).vector).max() < 1e-9
    assert {m.ns for m in array.markers} == {"bodies", "platform", "skeleton", "closing links", "closures"}
    assert all(m.header.frame_id == "base_link" for m in array.markers)
    assert node.alive()
