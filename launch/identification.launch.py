"""Launch an identification run (sim + controller + exciting trajectory + recorder).

    ros2 launch pardyn identification.launch.py
    ros2 launch pardyn identification.launch.py namespace:=robot1 config:=/path/to/my_bringup.yaml

The node set and every parameter come from ONE file, config/bringup/identification.yaml
(format: pardyn.cli.bringup), read here with pardyn.cli.bringup.load_bringup;
`pardyn bringup config/bringup/identification.yaml` runs the same nodes in one process,
so what runs without launch_ros is what this file launches.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from pardyn.cli.bringup import load_bringup


def bringup_nodes(context):
    """One launch_ros Node per entry of the bringup file, with its parameters and remappings."""
    bringup = load_bringup(LaunchConfiguration("config").perform(context))
    namespace = LaunchConfiguration("namespace").perform(context)
    return [
        Node(
            package="pardyn",
            executable=spec.executable,
            name=spec.name,
            namespace=namespace,
            parameters=spec.launch_parameters(),
            remappings=list(spec.remappings),
            output="screen",
            emulate_tty=True,
        )
        for spec in bringup.nodes
    ]


def generate_launch_description():
    default_config = os.path.join(get_package_share_directory("pardyn"), "config", "bringup", "identification.yaml")
    return LaunchDescription([
        DeclareLaunchArgument("config", default_value=default_config, description="bringup file: nodes and parameters"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of every node"),
        OpaqueFunction(function=bringup_nodes),
    ])
