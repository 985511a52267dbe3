"""The launch description shared by ``launch/{sim,hardware,identification}.launch.py``.

Each of those files names its bringup file (``config/bringup/<kind>.yaml``, format:
:mod:`pardyn.nodes.bringup`); this builds one ``launch_ros`` Node per entry of it, with
its parameters and remappings, so ``ros2 launch pardyn <kind>.launch.py`` starts
exactly what ``pardyn bringup config/bringup/<kind>.yaml`` runs in one process.

``launch``, ``launch_ros`` and ``ament_index_python`` come with a ROS 2 install
(not from PyPI): they are imported when a description is built, not with this module.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pardyn.nodes.bringup import Bringup, load_bringup, namespace_remappings

__all__ = ["bringup_launch_description", "bringup_nodes", "launch_nodes"]


def launch_nodes(bringup: Bringup, namespace: str = "", overrides: Mapping[str, Any] | None = None) -> list:
    """One launch_ros Node per entry of ``bringup``; ``overrides`` are applied last to every node (they win)."""
    from launch_ros.actions import Node  # noqa: PLC0415 - ROS 2 install only

    extra = [dict(overrides)] if overrides else []
    return [
        Node(
            package="pardyn",
            executable=spec.executable,
            name=spec.name,
            namespace=namespace,
            parameters=[*spec.launch_parameters(), *extra],
            remappings=list(spec.remappings) + namespace_remappings(namespace),
            output="screen",
            emulate_tty=True,
        )
        for spec in bringup.nodes
    ]


def bringup_nodes(context) -> list:
    """One launch_ros Node per entry of the bringup file of the ``config`` launch argument."""
    from launch.substitutions import LaunchConfiguration  # noqa: PLC0415 - ROS 2 install only

    bringup = load_bringup(LaunchConfiguration("config").perform(context))
    return launch_nodes(bringup, LaunchConfiguration("namespace").perform(context))


def bringup_launch_description(kind: str):
    """Launch arguments ``config`` (default ``config/bringup/<kind>.yaml`` of the share) and ``namespace``."""
    from ament_index_python.packages import get_package_share_directory  # noqa: PLC0415 - ROS 2 install only
    from launch import LaunchDescription  # noqa: PLC0415
    from launch.actions import DeclareLaunchArgument, OpaqueFunction  # noqa: PLC0415

    default_config = os.path.join(get_package_share_directory("pardyn"), "config", "bringup", f"{kind}.yaml")
    return LaunchDescription([
        DeclareLaunchArgument("config", default_value=default_config, description="bringup file: nodes and parameters"),
        DeclareLaunchArgument("namespace", default_value="", description="namespace of every node"),
        OpaqueFunction(function=bringup_nodes),
    ])
