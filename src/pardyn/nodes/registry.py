"""Executable name -> node class, for running several nodes in one process (``pardyn bringup``).

The names are the console scripts of ``setup.py`` (``ros2 run pardyn <name>``),
so a bringup file names its nodes exactly as a launch file does. Node classes
take the usual rclpy ``Node`` keyword options (``context``, ``cli_args``,
``namespace``, ``use_global_arguments``, ...), their node name is fixed by
the class and can be changed by a ``__node`` remapping.

An executable not listed in :data:`NODES` is looked up as the module
``pardyn.nodes.<name>``: its one ``rclpy.node.Node`` subclass defined there.
"""

from __future__ import annotations

import importlib
import inspect

from pardyn.errors import InputError
from pardyn.registry import Registry

__all__ = ["NODES", "node_class"]

NODES: Registry[str] = Registry("node executable")
"""Executable -> ``"module:Class"`` of its node (imported when asked for: rclpy and the node's modules)."""
for _executable, _target in (
    ("sim", "pardyn.nodes.sim:SimNode"),
    ("controller", "pardyn.nodes.controller:ControllerNode"),
    ("trajectory", "pardyn.nodes.trajectory:TrajectoryNode"),
    ("closure_solver", "pardyn.nodes.closure_solver:ClosureSolverNode"),
    ("recorder", "pardyn.nodes.recorder:RecorderNode"),
    ("dynamics", "pardyn.nodes.dynamics:DynamicsNode"),
    ("identifier", "pardyn.nodes.identifier:IdentifierNode"),
    ("gazebo_joint_states", "pardyn.nodes.gazebo_joint_states:GazeboJointStatesNode"),
    ("visualizer", "pardyn.nodes.visualizer:VisualizerNode"),
):
    NODES.add(_executable, _target)


def node_class(executable: str) -> type:
    """The node class of ``executable``.

    Raises:
        InputError: no such node in pardyn (the message lists the known ones).
    """
    from rclpy.node import Node  # noqa: PLC0415 - nodes only

    if executable in NODES:
        module_name, class_name = NODES.get(executable).split(":")
        return getattr(importlib.import_module(module_name), class_name)
    if not executable.isidentifier():
        raise InputError(f"unknown node executable {executable!r}; known: {sorted(NODES)}")
    try:
        module = importlib.import_module(f"pardyn.nodes.{executable}")
    except ModuleNotFoundError as error:
        if error.name != f"pardyn.nodes.{executable}":
            raise
        raise InputError(f"unknown node executable {executable!r}; known: {sorted(NODES)}") from error
    classes = [
        value for value in vars(module).values()
        if inspect.isclass(value) and issubclass(value, Node) and value is not Node
        and value.__module__ == module.__name__
    ]
    if len(classes) != 1:
        raise InputError(
            f"pardyn.nodes.{executable} defines {len(classes)} node classes "
            f"{[c.__name__ for c in classes]}: add it to pardyn.nodes.registry.NODES"
        )
    return classes[0]
