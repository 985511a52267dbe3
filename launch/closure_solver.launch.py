"""Launch the closure_solver node with config/closure_solver.yaml.

    ros2 launch pardyn closure_solver.launch.py
    ros2 launch pardyn closure_solver.launch.py params_file:=/path/to/my_params.yaml

The node subscribes ``joint_states`` and publishes ``closed_loop/joint_states``
and ``platform/pose`` (see pardyn.nodes.closure_solver).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    default_params = os.path.join(get_package_share_directory("pardyn"), "config", "closure_solver.yaml")
    return LaunchDescription([
        DeclareLaunchArgument(
            "params_file",
            default_value=default_params,
            description="ROS parameters file of the closure_solver node",
        ),
        Node(
            package="pardyn",
            executable="closure_solver",
            name="closure_solver",
            parameters=[LaunchConfiguration("params_file")],
            output="screen",
            emulate_tty=True,
        ),
    ])
