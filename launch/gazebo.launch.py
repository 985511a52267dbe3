"""Simulate a pardyn robot in gz-sim, driven through ros2_control by pardyn's nodes.

    ros2 launch pardyn gazebo.launch.py robot:=dualv
    ros2 launch pardyn gazebo.launch.py robot:=rrr3 gui:=false out:=/tmp/pardyn_gazebo

Arguments (``--show-args``): ``robot``, ``config`` (pardyn's nodes: a bringup file, default
``config/bringup/gazebo.yaml``), ``use_sim_time`` (default true: gz-sim's ``/clock``), ``namespace`` (empty
only: gz_ros2_control's controller manager of the exported model is not namespaced), ``gui``, ``out``; any
other is refused (:mod:`pardyn.nodes.launch`).

1. exports the robot (``pardyn export sdf``, :mod:`pardyn.export`) into ``<out>/<robot>``;
2. starts gz-sim (``ros_gz_sim``'s ``gz_sim.launch.py``) on the exported ``world.sdf``
   (DART with the PGS solver, 1 ms steps), ``-s`` (server only) with ``gui:=false``;
3. robot_state_publisher publishes ``robot_description.urdf`` (pardyn's URDF + ``<ros2_control>``),
   which gz_ros2_control's controller manager reads;
4. ``ros_gz_sim create`` spawns ``model.gz.sdf`` (loops closed by DetachableJoint systems);
5. ``ros_gz_bridge`` bridges ``/clock``;
6. once spawned: ``joint_state_broadcaster``, then ``effort_controller`` (takes
   ``effort_controller/commands``) and pardyn's nodes from ``config/bringup/gazebo.yaml``
   (format :mod:`pardyn.nodes.bringup`; ``robot`` and ``use_sim_time`` set from the arguments).

``launch``, ``launch_ros``, ``ament_index_python`` and the Gazebo packages come with a
ROS 2 + Gazebo install (``ros-<distro>-ros-gz``, ``ros-<distro>-gz-ros2-control``,
``ros-<distro>-ros2-controllers``).
"""

import os

from pardyn.errors import DescriptionError
from pardyn.export import export
from pardyn.nodes.launch import COMMON_ARGUMENTS, configured_bringup, declared_arguments, launch_arguments, launch_nodes
from pardyn.robot import load_robot

BRINGUP = os.path.join("config", "bringup", "gazebo.yaml")
OWN_ARGUMENTS = {
    "gui": ("true", "start the gz-sim GUI"),
    "out": (os.path.join("/tmp", "pardyn_gazebo"), "directory of the exported files (one folder per robot)"),
}


def _actions(context):
    from ament_index_python.packages import get_package_share_directory
    from launch.actions import IncludeLaunchDescription, RegisterEventHandler
    from launch.event_handlers import OnProcessExit
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from launch_ros.actions import Node

    values = launch_arguments(context, __file__, [*COMMON_ARGUMENTS, *OWN_ARGUMENTS])
    if values["namespace"]:
        raise DescriptionError(f"gazebo.launch.py: namespace:={values['namespace']}: not supported (the exported "
                               "model's controller manager is not namespaced); run one robot per gz-sim")
    robot = load_robot(values["robot"])
    robot_name = robot.name
    gui = values["gui"].lower() in ("true", "1")
    out = os.path.join(os.path.expanduser(values["out"]), robot_name)
    paths = export(robot, "sdf", out)
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
    bringup = configured_bringup(values["config"], robot.reference, values["use_sim_time"])
    pardyn_nodes = launch_nodes(bringup)
    return [
        gazebo, state_publisher, clock, spawn,
        RegisterEventHandler(OnProcessExit(target_action=spawn, on_exit=[broadcaster])),
        RegisterEventHandler(OnProcessExit(target_action=broadcaster, on_exit=[effort, *pardyn_nodes])),
    ]


def generate_launch_description():
    from ament_index_python.packages import get_package_share_directory
    from launch import LaunchDescription
    from launch.actions import OpaqueFunction

    defaults = {"robot": "dualv", "use_sim_time": "true",
                "config": os.path.join(get_package_share_directory("pardyn"), BRINGUP)}
    return LaunchDescription([*declared_arguments(defaults, OWN_ARGUMENTS), OpaqueFunction(function=_actions)])
