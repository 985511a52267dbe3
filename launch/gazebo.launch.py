"""Simulate a pardyn robot in gz-sim, driven through ros2_control by pardyn's nodes.

    ros2 launch pardyn gazebo.launch.py robot:=dualv
    ros2 launch pardyn gazebo.launch.py robot:=rrr3 gui:=false out:=/tmp/pardyn_gazebo

1. exports the robot (``pardyn export sdf``, :mod:`pardyn.export`) into ``<out>/<robot>``;
2. starts gz-sim (``ros_gz_sim``'s ``gz_sim.launch.py``) on the exported ``world.sdf``
   (DART with the PGS solver, 1 ms steps), ``-s`` (server only) with ``gui:=false``;
3. robot_state_publisher publishes ``robot_description.urdf`` (pardyn's URDF + ``<ros2_control>``),
   which gz_ros2_control's controller manager reads;
4. ``ros_gz_sim create`` spawns ``model.gz.sdf`` (loops closed by DetachableJoint systems);
5. ``ros_gz_bridge`` bridges ``/clock``;
6. once spawned: ``joint_state_broadcaster``, then ``effort_controller`` (takes
   ``effort_controller/commands``) and pardyn's nodes from ``config/bringup/gazebo.yaml``
   (format :mod:`pardyn.nodes.bringup`; ``robot`` set from the argument, ``use_sim_time``).

``launch``, ``launch_ros``, ``ament_index_python`` and the Gazebo packages come with a
ROS 2 + Gazebo install (``ros-<distro>-ros-gz``, ``ros-<distro>-gz-ros2-control``,
``ros-<distro>-ros2-controllers``).
"""

import os

from pardyn.nodes.bringup import load_bringup
from pardyn.nodes.launch import launch_nodes
from pardyn.export import export
from pardyn.robot import load_robot

BRINGUP = os.path.join("config", "bringup", "gazebo.yaml")


def _actions(context):
    from ament_index_python.packages import get_package_share_directory
    from launch.actions import IncludeLaunchDescription, RegisterEventHandler
    from launch.event_handlers import OnProcessExit
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from launch.substitutions import LaunchConfiguration
    from launch_ros.actions import Node

    robot_name = LaunchConfiguration("robot").perform(context)
    gui = LaunchConfiguration("gui").perform(context).lower() in ("true", "1")
    out = os.path.join(os.path.expanduser(LaunchConfiguration("out").perform(context)), robot_name)
    paths = export(load_robot(robot_name), "sdf", out)
    with open(paths["robot_description"]) as file:
        description = file.read()
    gz_args = f"-r -v 3 {paths['gz_world']}" + ("" if gui else " -s")
    gazebo = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            os.path.join(get_package_share_directory("ros_gz_sim"), "launch", "gz_sim.launch.py")),
        launch_arguments={"gz_args": gz_args}.items(),
    )
    state_publisher = Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
                           parameters=[{"robot_description": description, "use_sim_time": True}])
    spawn = Node(package="ros_gz_sim", executable="create", output="screen",
                 arguments=["-file", str(paths["gz_model"]), "-name", robot_name])
    clock = Node(package="ros_gz_bridge", executable="parameter_bridge", output="screen",
                 arguments=["/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock"])
    controllers = str(paths["controllers"])
    broadcaster = Node(package="controller_manager", executable="spawner", output="screen",
                       arguments=["joint_state_broadcaster", "--param-file", controllers])
    effort = Node(package="controller_manager", executable="spawner", output="screen",
                  arguments=["effort_controller", "--param-file", controllers])
    bringup = load_bringup(os.path.join(get_package_share_directory("pardyn"), BRINGUP))
    pardyn_nodes = launch_nodes(bringup, overrides={"robot": robot_name, "use_sim_time": True})
    return [
        gazebo, state_publisher, clock, spawn,
        RegisterEventHandler(OnProcessExit(target_action=spawn, on_exit=[broadcaster])),
        RegisterEventHandler(OnProcessExit(target_action=broadcaster, on_exit=[effort, *pardyn_nodes])),
    ]


def generate_launch_description():
    from launch import LaunchDescription
    from launch.actions import DeclareLaunchArgument, OpaqueFunction

    return LaunchDescription([
        DeclareLaunchArgument("robot", default_value="dualv", description="pardyn robot (config/robots)"),
        DeclareLaunchArgument("gui", default_value="true", description="start the gz-sim GUI"),
        DeclareLaunchArgument("out", default_value=os.path.join("/tmp", "pardyn_gazebo"),
                              description="directory of the exported files (one folder per robot)"),
        OpaqueFunction(function=_actions),
    ])
