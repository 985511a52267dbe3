"""The ros2_control description and controllers name exactly the actuated and sensed joints."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pinocchio as pin
import pytest
import yaml

from pardyn.export.ros2_control import HARDWARE_PLUGIN, home_offsets, positions_from_simulator
from pardyn.resources import list_robots


@pytest.mark.parametrize("name", list_robots())
def test_ros2_control_description_names_the_measured_joints(name, exported):
    robot, paths = exported[name]
    root = ET.parse(paths["robot_description"]).getroot()
    assert root.tag == "robot"
    (control,) = root.findall("ros2_control")
    assert control.find("hardware/plugin").text == HARDWARE_PLUGIN == "gz_ros2_control/GazeboSimSystem"
    joints = {joint.get("name"): joint for joint in control.findall("joint")}
    assert list(joints) == [*robot.actuated_names, *robot.sensed_names]
    for joint_name, joint in joints.items():
        commands = [c.get("name") for c in joint.findall("command_interface")]
        assert commands == (["effort"] if joint_name in robot.actuated_names else [])
        assert [s.get("name") for s in joint.findall("state_interface")] == ["position", "velocity", "effort"]
    # still the robot's URDF: pinocchio reads the same tree from it
    model = pin.buildModelFromXML(paths["robot_description"].read_text())
    assert tuple(model.names[1:]) == tuple(robot.joint_names)


@pytest.mark.parametrize("name", list_robots())
def test_controllers_file_broadcasts_the_measured_joints_and_commands_the_actuated_ones(name, exported):
    robot, paths = exported[name]
    content = yaml.safe_load(paths["controllers"].read_text())
    manager = content["controller_manager"]["ros__parameters"]
    assert manager["joint_state_broadcaster"]["type"] == "joint_state_broadcaster/JointStateBroadcaster"
    assert manager["effort_controller"]["type"] == "forward_command_controller/ForwardCommandController"
    assert manager["update_rate"] == 1000
    effort = content["effort_controller"]["ros__parameters"]
    assert effort == {"joints": list(robot.actuated_names), "interface_name": "effort"}
    broadcaster = content["joint_state_broadcaster"]["ros__parameters"]
    assert broadcaster["joints"] == [*robot.actuated_names, *robot.sensed_names]
    assert broadcaster["use_local_topics"] is True


def test_simulator_positions_get_the_home_configuration_back(exported):
    robot, _ = exported["rrr3"]
    offsets = home_offsets(robot)
    names = [*robot.sensed_names, "gripper_joint"]
    positions = positions_from_simulator(names, [0.1, -0.2, 0.3, 0.5], offsets)
    expected = [robot.home[robot.joint_names.index(n)] + v for n, v in zip(robot.sensed_names, (0.1, -0.2, 0.3))]
    assert positions[:3] == pytest.approx(expected, abs=1e-15)
    assert positions[3] == 0.5


@pytest.mark.parametrize("name", list_robots())
def test_every_ros2_control_joint_is_a_one_dof_joint_of_the_gz_model(name, exported, libsdformat):
    robot, paths = exported[name]
    result = libsdformat[paths["gz_model"]]
    assert result["errors"] == []
    kinds = {joint["name"]: joint["type"] for joint in result["models"][0]["joints"]}
    for joint in [*robot.actuated_names, *robot.sensed_names]:
        assert kinds.get(joint) in ("revolute", "prismatic"), joint
