"""The launch descriptions of ``launch/*.launch.py``: their arguments, and the nodes of a bringup file.

Each of ``launch/{sim,hardware,identification,online_identification}.launch.py`` names its bringup file
(``config/bringup/<kind>.yaml``, format: :mod:`pardyn.nodes.bringup`); this builds one ``launch_ros`` Node
per entry of it, with its parameters and remappings, so ``ros2 launch pardyn <kind>.launch.py`` starts
exactly what ``pardyn bringup config/bringup/<kind>.yaml`` runs in one process.

Every launch file takes the arguments of :data:`COMMON_ARGUMENTS`: ``robot:=`` (a shipped robot or a
description file, given to every node that takes one), ``config:=`` (a bringup file: absolute, relative to
the working directory or to the pardyn share, or a bare name, as ``pardyn bringup`` takes it),
``use_sim_time:=`` (every node but the sim, which publishes ``/clock``) and ``namespace:=``. An empty value
keeps the bringup file's. ``ros2 launch`` itself accepts any ``name:=value``; a pardyn launch file started
by ``ros2 launch`` refuses one it does not declare (:func:`check_command_line`), with one error line naming
it and the arguments it takes, instead of running without it.

``launch``, ``launch_ros`` and ``ament_index_python`` come with a ROS 2 install
(not from PyPI): they are imported when a description is built, not with this module.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pardyn.errors import DescriptionError
from pardyn.nodes.bringup import (
    Bringup,
    bringup_path,
    load_bringup,
    namespace_remappings,
    share_file,
    with_robot,
    with_sim_time,
)
from pardyn.resources import list_robots
from pardyn.ros_names import check_namespace

__all__ = ["COMMON_ARGUMENTS", "bringup_launch_description", "check_command_line", "configured_bringup",
           "declared_arguments", "launch_arguments", "launch_nodes", "node_launch_description"]

COMMON_ARGUMENTS = {
    "robot": ("", "robot given to every node that takes one: a name (config/robots) or a description file; "
                  "empty: the bringup file's"),
    "config": (None, "bringup file (nodes and parameters): absolute, or relative to the working directory or to the "
                     "pardyn share (config/bringup/sim.yaml), or a bare name (sim)"),
    "use_sim_time": ("", "true/false: every node but the sim (which publishes /clock) follows /clock; "
                         "empty: the bringup file's"),
    "namespace": ("", "namespace of every node, /clock included (one per robot in a shared ROS graph)"),
}
"""name -> (default, description) of the arguments every launch file takes (``config``'s default: per file)."""


def declared_arguments(defaults: Mapping[str, str], extra: Mapping[str, tuple[str, str]] | None = None) -> list:
    """``DeclareLaunchArgument`` actions of :data:`COMMON_ARGUMENTS` (``defaults`` fills in or replaces their
    defaults) and of ``extra`` (name -> (default, description))."""
    from launch.actions import DeclareLaunchArgument  # noqa: PLC0415 - ROS 2 install only

    table = {name: (defaults.get(name, default), text) for name, (default, text) in COMMON_ARGUMENTS.items()}
    table.update(extra or {})
    return [DeclareLaunchArgument(name, default_value=default, description=text)
            for name, (default, text) in table.items()]


def _named_on_command_line(launch_file: Path, argv: Sequence[str]) -> bool:
    """Whether the process is ``ros2 launch pardyn <this file's name> ...`` or ``ros2 launch <this file> ...``
    (not a user's launch file that includes this one: its arguments are its own)."""
    for index, token in enumerate(argv[1:], start=1):
        if token == launch_file.name and argv[index - 1] == "pardyn":
            return True
        if token.endswith(launch_file.name) and os.path.isfile(token) and Path(token).resolve() == launch_file:
            return True
    return False


def check_command_line(context, launch_file: str, declared: Sequence[str], argv: Sequence[str] | None = None) -> None:
    """Refuse a ``name:=value`` of the ``ros2 launch`` command line that ``launch_file`` does not declare.

    ``context.argv``: the command line's launch arguments (``ros2launch`` gives them to ``LaunchService``).
    Checked only when the command line names ``launch_file`` (``argv``, default ``sys.argv``).

    Raises:
        DescriptionError: one line naming the unknown arguments and the ones the file takes.
    """
    path = Path(launch_file).resolve()
    if not _named_on_command_line(path, sys.argv if argv is None else argv):
        return
    given = [item.split(":=", 1)[0] for item in getattr(context, "argv", []) if ":=" in item]
    unknown = [name for name in dict.fromkeys(given) if name not in declared]
    if unknown:
        raise DescriptionError(f"{path.name}: unknown launch arguments {unknown}; it takes {list(declared)} "
                               f"(ros2 launch pardyn {path.name} --show-args)")


def _robot_reference(text: str) -> str:
    """What a node's ``robot`` parameter takes for ``robot:=text``: a shipped robot's name, else the absolute path
    of an existing description file (checked here, without loading the robot: the nodes load it)."""
    if text in list_robots():
        return text
    path = Path(text).expanduser()
    if path.is_file():
        return str(path.resolve())
    raise DescriptionError(f"robot:={text}: neither a shipped robot ({', '.join(list_robots())}) nor a file")


def _flag(name: str, text: str) -> bool:
    value = text.strip().lower()
    if value not in ("true", "false", "1", "0"):
        raise DescriptionError(f"{name}:={text}: expected true or false")
    return value in ("true", "1")


def configured_bringup(config: str, robot: str = "", use_sim_time: str = "", namespace: str = "") -> Bringup:
    """The bringup file ``config`` with the launch arguments applied (an empty one keeps the file's).

    Raises:
        DescriptionError: a bad argument or bringup file, named.
    """
    path = bringup_path(config)
    if not path.is_file():
        raise DescriptionError(f"config:={config}: no such bringup file (nor {path})")
    check_namespace(namespace, "namespace")
    bringup = load_bringup(path)
    if robot:
        bringup = with_robot(bringup, _robot_reference(robot))
    if use_sim_time:
        bringup = with_sim_time(bringup, _flag("use_sim_time", use_sim_time))
    return bringup


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


def _argument(context, name: str) -> str:
    from launch.substitutions import LaunchConfiguration  # noqa: PLC0415 - ROS 2 install only

    return LaunchConfiguration(name).perform(context)


def launch_arguments(context, launch_file: str, names: Sequence[str]) -> dict[str, str]:
    """The values of the arguments ``names`` (all that ``launch_file`` declares), once the command line is checked
    (:func:`check_command_line`)."""
    check_command_line(context, launch_file, names)
    return {name: _argument(context, name) for name in names}


def _bringup_nodes(context, launch_file: str) -> list:
    values = launch_arguments(context, launch_file, list(COMMON_ARGUMENTS))
    return launch_nodes(configured_bringup(**values), values["namespace"])


def _one_node(context, launch_file: str, executable: str) -> list:
    from launch_ros.actions import Node  # noqa: PLC0415 - ROS 2 install only

    values = launch_arguments(context, launch_file, [*COMMON_ARGUMENTS, "params_file"])
    text = values["params_file"] or values["config"]
    parameters = share_file(text)
    if not parameters.is_file():
        raise DescriptionError(f"config:={text}: no such parameters file (nor in the pardyn share)")
    namespace = check_namespace(values["namespace"], "namespace")
    extra = []
    if values["robot"]:
        extra.append({"robot": _robot_reference(values["robot"])})
    if values["use_sim_time"]:
        extra.append({"use_sim_time": _flag("use_sim_time", values["use_sim_time"])})
    return [Node(package="pardyn", executable=executable, name=executable, namespace=namespace,
                 parameters=[str(parameters), *extra], remappings=namespace_remappings(namespace),
                 output="screen", emulate_tty=True)]


def node_launch_description(executable: str, launch_file: str):
    """The description of ``launch_file``: the node ``executable`` alone, ``config:=`` its ROS parameters file
    (default ``config/<executable>.yaml`` of the share; ``params_file:=``, its older name, wins when given)."""
    from ament_index_python.packages import get_package_share_directory  # noqa: PLC0415 - ROS 2 install only
    from launch import LaunchDescription  # noqa: PLC0415
    from launch.actions import OpaqueFunction  # noqa: PLC0415

    default = os.path.join(get_package_share_directory("pardyn"), "config", f"{executable}.yaml")
    extra = {"config": (default, f"ROS parameters file of the {executable} node: absolute, or relative to the "
                                 "working directory or to the pardyn share"),
             "params_file": ("", "older name of config (wins when given)")}
    return LaunchDescription([
        *declared_arguments({}, extra),
        OpaqueFunction(function=_one_node, args=[launch_file, executable]),
    ])


def bringup_launch_description(kind: str, launch_file: str):
    """The description of ``launch_file`` (its ``__file__``): the nodes of ``config/bringup/<kind>.yaml`` of the
    share (argument ``config``), with :data:`COMMON_ARGUMENTS`."""
    from ament_index_python.packages import get_package_share_directory  # noqa: PLC0415 - ROS 2 install only
    from launch import LaunchDescription  # noqa: PLC0415
    from launch.actions import OpaqueFunction  # noqa: PLC0415

    default_config = os.path.join(get_package_share_directory("pardyn"), "config", "bringup", f"{kind}.yaml")
    return LaunchDescription([
        *declared_arguments({"config": default_config}),
        OpaqueFunction(function=_bringup_nodes, args=[launch_file]),
    ])
