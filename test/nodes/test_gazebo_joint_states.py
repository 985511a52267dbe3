"""The gazebo_joint_states node over DDS: gz-sim's zero-at-home positions back in pardyn's coordinates."""

from __future__ import annotations

import signal

import pytest
from sensor_msgs.msg import JointState

from pardyn.robot import load_robot


def test_positions_get_home_back_and_bad_messages_are_dropped(launch_node, ros_client):
    robot = load_robot("rrr3")
    node = launch_node("gazebo_joint_states", params={"robot": "rrr3"})
    try:
        publisher = ros_client.publisher(JointState, node.topic("joint_state_broadcaster/joint_states"))
        received = ros_client.collect(JointState, node.topic("joint_states"))
        names = [*robot.actuated_names, *robot.sensed_names]
        simulated = [0.01 * (k + 1) for k in range(len(names))]  # rad from home, as gz reports them
        message = JointState(name=names, position=simulated, velocity=[0.5] * len(names), effort=[1.5] * len(names))
        message.header.stamp.sec = 7
        assert ros_client.publish_until(publisher, message, lambda: received, timeout_s=20.0), node.output()
        answer = received[-1]
        assert list(answer.name) == names and answer.header.stamp.sec == 7
        home = [robot.home[robot.joint_names.index(n)] for n in names]
        assert list(answer.position) == pytest.approx([h + s for h, s in zip(home, simulated)], abs=1e-15)
        assert list(answer.velocity) == [0.5] * len(names) and list(answer.effort) == [1.5] * len(names)
        # the good message may have gone out more than once (publish_until repeats it every 0.25 s until the
        # first answer; under load a second answer came after the count: 2 for 1): the bad one carries its own
        # stamp, and no answer may carry it
        bad = JointState(name=names, position=simulated[:-1])
        bad.header.stamp.sec = 8
        assert ros_client.publish_until(publisher, bad, lambda: "names but" in node.output(), timeout_s=10.0)
        ros_client.spin_until(lambda: False, 0.5)  # an answer to the bad message would have come by now
        assert [m.header.stamp.sec for m in received] == [7] * len(received) and node.alive()  # dropped, goes on
    finally:
        code = node.stop(signal.SIGINT)
    assert code == 0, node.output()
    assert "Traceback" not in node.output()
