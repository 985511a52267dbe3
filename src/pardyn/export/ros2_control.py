"""ros2_control files of a robot for gz-sim: the robot description and the controllers.

* ``robot_description.urdf``: pardyn's URDF tree with a ``<ros2_control>`` block for
  ``gz_ros2_control/GazeboSimSystem``: an ``effort`` command interface (bounds: the URDF
  effort limit) on every actuated joint, ``position``, ``velocity``, ``effort`` state
  interfaces on the actuated and sensed joints. robot_state_publisher publishes it on
  ``/robot_description``, where the controller manager in gz-sim reads it.
* ``controllers.yaml``: a ``joint_state_broadcaster`` publishing on
  ``joint_state_broadcaster/joint_states`` (``use_local_topics``), and ``effort_controller``,
  a ``forward_command_controller/ForwardCommandController`` on the ``effort`` interface of the
  actuated joints in pardyn's order: it takes ``effort_controller/commands``
  (std_msgs/Float64MultiArray), the topic pardyn's controller publishes. Update rate 1 kHz.

The broadcaster's positions are gz-sim's, zero at home (the SDF is written there); the
``gazebo_joint_states`` node adds ``robot.home`` back and publishes ``joint_states``.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import yaml

if TYPE_CHECKING:
    from pardyn.robot import Robot

__all__ = [
    "HARDWARE_PLUGIN", "UPDATE_RATE_HZ", "controllers_yaml", "home_offsets", "positions_from_simulator",
    "robot_description", "ros2_control_element",
]

HARDWARE_PLUGIN = "gz_ros2_control/GazeboSimSystem"
UPDATE_RATE_HZ = 1000
STATE_INTERFACES = ("position", "velocity", "effort")


def ros2_control_element(robot: Robot) -> ET.Element:
    """The ``<ros2_control>`` element (module docstring)."""
    root = ET.Element("ros2_control", name="GazeboSimSystem", type="system")
    ET.SubElement(ET.SubElement(root, "hardware"), "plugin").text = HARDWARE_PLUGIN
    for name in robot.measured_names:
        joint = ET.SubElement(root, "joint", name=name)
        if name in robot.actuated_names:
            limit = float(robot.model.effortLimit[robot.joint_names.index(name)])
            command = ET.SubElement(joint, "command_interface", name="effort")
            if math.isfinite(limit) and limit > 0.0:
                ET.SubElement(command, "param", name="min").text = repr(-limit)
                ET.SubElement(command, "param", name="max").text = repr(limit)
        for interface in STATE_INTERFACES:
            ET.SubElement(joint, "state_interface", name=interface)
    return root


def robot_description(robot: Robot) -> str:
    """pardyn's URDF with the ``<ros2_control>`` block appended to ``<robot>``."""
    tree = ET.parse(robot.urdf)
    root = tree.getroot()
    root.append(ros2_control_element(robot))
    ET.indent(root)
    return '<?xml version="1.0"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def controllers_yaml(robot: Robot) -> str:
    """The controller manager's parameters file (module docstring)."""
    content = {
        "controller_manager": {"ros__parameters": {
            "update_rate": UPDATE_RATE_HZ,
            "use_sim_time": True,
            "joint_state_broadcaster": {"type": "joint_state_broadcaster/JointStateBroadcaster"},
            "effort_controller": {"type": "forward_command_controller/ForwardCommandController"},
        }},
        "joint_state_broadcaster": {"ros__parameters": {
            "use_local_topics": True,
            "joints": list(robot.measured_names),
            "interfaces": list(STATE_INTERFACES),
        }},
        "effort_controller": {"ros__parameters": {
            "joints": list(robot.actuated_names),
            "interface_name": "effort",
        }},
    }
    header = (f"# ros2_control controllers of {robot.name} in gz-sim (pardyn export sdf).\n"
              "# effort_controller/commands: std_msgs/Float64MultiArray, the actuated joints in this order.\n")
    return header + yaml.safe_dump(content, sort_keys=False)


def home_offsets(robot: Robot) -> dict[str, float]:
    """``{joint: robot.home value}`` (rad, m): what gz-sim's zero-at-home positions lack (SDF is written at home)."""
    return {name: float(value) for name, value in zip(robot.joint_names, robot.home)}


def positions_from_simulator(names: list[str], positions: list[float], offsets: dict[str, float]) -> list[float]:
    """pardyn's joint positions ``q = q_sim + home`` (names not in ``offsets`` pass unchanged)."""
    return [float(p) + offsets.get(n, 0.0) for n, p in zip(names, positions)]
