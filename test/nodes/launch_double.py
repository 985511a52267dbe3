"""A test double of ROS 2 ``launch`` / ``launch_ros``: runs a launch file's Python as ``ros2 launch`` would.

``launch`` and ``launch_ros`` have no PyPI wheels, so the suite cannot import them. This double gives the
small part of their API that ``launch/*.launch.py`` use, with the semantics of the real classes (read in
ros2/launch and ros2/launch_ros):

* ``DeclareLaunchArgument(name, default_value=...)``: when visited, the argument takes its default unless
  the command line (``ros2 launch pkg file.py name:=value``) gave one; an argument with neither is an error.
* ``LaunchConfiguration(name).perform(context)``: the argument's value; an undeclared one is an error.
* ``OpaqueFunction(function=f)``: ``f(context, *args, **kwargs)`` returns more actions, visited in turn.
* ``RegisterEventHandler(OnProcessExit(target_action=a, on_exit=[...]))``: the ``on_exit`` actions run
  after ``a`` exits; here they are visited after everything else (every process exits at once).
* ``Node(...)``: the process ``ros2 launch`` starts, recorded with its keyword arguments.

:func:`run_launch_file` loads a launch file with these modules in ``sys.modules`` and returns every Node it
would start, in start order, so tests check the node set, parameters and remappings without launch_ros.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class LaunchError(RuntimeError):
    """What the real launch raises as ``SubstitutionFailure`` / ``InvalidLaunchFileError``."""


@dataclass
class LaunchContext:
    launch_configurations: dict[str, str] = field(default_factory=dict)


class LaunchConfiguration:
    def __init__(self, variable_name: str, default: Any = None) -> None:
        self.variable_name = variable_name
        self.default = default

    def perform(self, context: LaunchContext) -> str:
        if self.variable_name in context.launch_configurations:
            return context.launch_configurations[self.variable_name]
        if self.default is not None:
            return str(self.default)
        raise LaunchError(f"launch configuration '{self.variable_name}' does not exist")


class DeclareLaunchArgument:
    def __init__(self, name: str, default_value: Any = None, description: str = "", **_: Any) -> None:
        self.name = name
        self.default_value = default_value
        self.description = description

    def visit(self, context: LaunchContext) -> list:
        if self.name not in context.launch_configurations:
            if self.default_value is None:
                raise LaunchError(f"required launch argument '{self.name}' (description: '{self.description}') "
                                  "was not provided")
            context.launch_configurations[self.name] = str(self.default_value)
        return []


class OpaqueFunction:
    def __init__(self, function, args=None, kwargs=None) -> None:
        self.function = function
        self.args = list(args or [])
        self.kwargs = dict(kwargs or {})

    def visit(self, context: LaunchContext) -> list:
        return list(self.function(context, *self.args, **self.kwargs) or [])


class Node:
    def __init__(self, *, executable: str, package: str | None = None, name: str | None = None,
                 namespace: str | None = None, parameters=None, remappings=None, arguments=None,
                 **options: Any) -> None:
        self.node_package = package
        self.node_executable = executable
        self.node_name = name
        self.node_namespace = namespace
        self.parameters = list(parameters or [])
        self.remappings = list(remappings or [])
        self.arguments = list(arguments or [])
        self.options = options

    def visit(self, context: LaunchContext) -> list:
        """Substitutions in the parameters (a LaunchConfiguration naming a file) are performed, as launch_ros does."""
        self.parameters = [p.perform(context) if isinstance(p, LaunchConfiguration) else p for p in self.parameters]
        return []


class IncludeLaunchDescription:
    def __init__(self, launch_description_source, launch_arguments=None) -> None:
        self.source = launch_description_source
        self.launch_arguments = dict(launch_arguments or {})

    def visit(self, context: LaunchContext) -> list:
        return []


class PythonLaunchDescriptionSource:
    def __init__(self, launch_file_path: str) -> None:
        self.location = launch_file_path


class OnProcessExit:
    def __init__(self, *, target_action, on_exit) -> None:
        self.target_action = target_action
        self.on_exit = list(on_exit)


class RegisterEventHandler:
    def __init__(self, event_handler: OnProcessExit) -> None:
        self.event_handler = event_handler

    def visit(self, context: LaunchContext) -> list:
        return []


class LaunchDescription:
    def __init__(self, initial_entities=None) -> None:
        self.entities = list(initial_entities or [])


def _modules() -> dict[str, types.ModuleType]:
    def module(name: str, **members: Any) -> types.ModuleType:
        made = types.ModuleType(name)
        made.__dict__.update(members)
        return made

    return {
        "launch": module("launch", LaunchDescription=LaunchDescription, LaunchContext=LaunchContext),
        "launch.actions": module("launch.actions", DeclareLaunchArgument=DeclareLaunchArgument,
                                 OpaqueFunction=OpaqueFunction, IncludeLaunchDescription=IncludeLaunchDescription,
                                 RegisterEventHandler=RegisterEventHandler),
        "launch.substitutions": module("launch.substitutions", LaunchConfiguration=LaunchConfiguration),
        "launch.event_handlers": module("launch.event_handlers", OnProcessExit=OnProcessExit),
        "launch.launch_description_sources": module("launch.launch_description_sources",
                                                    PythonLaunchDescriptionSource=PythonLaunchDescriptionSource),
        "launch_ros": module("launch_ros"),
        "launch_ros.actions": module("launch_ros.actions", Node=Node),
    }


@dataclass
class LaunchRun:
    """What ``ros2 launch`` would do with a file: its nodes in start order, includes, the arguments' values."""

    nodes: list[Node]
    includes: list[IncludeLaunchDescription]
    arguments: dict[str, str]


def run_launch_file(path: Path, monkeypatch, arguments: dict[str, str] | None = None) -> LaunchRun:
    """Load ``path`` with the double in ``sys.modules`` and visit its description (``name:=value`` = ``arguments``)."""
    for name, module in _modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    spec = importlib.util.spec_from_file_location(f"launch_file_{Path(path).stem.replace('.', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    context = LaunchContext(dict(arguments or {}))
    pending = list(description.entities)
    after_exit: list = []
    nodes: list[Node] = []
    includes: list[IncludeLaunchDescription] = []
    while pending or after_exit:
        if not pending:
            pending, after_exit = after_exit, []
        entity = pending.pop(0)
        if isinstance(entity, Node):
            nodes.append(entity)
        elif isinstance(entity, IncludeLaunchDescription):
            includes.append(entity)
        elif isinstance(entity, RegisterEventHandler):
            after_exit += entity.event_handler.on_exit
        pending[:0] = entity.visit(context)
    return LaunchRun(nodes, includes, dict(context.launch_configurations))
