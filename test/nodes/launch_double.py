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


DECLARED: list = []
"""Every DeclareLaunchArgument made (:func:`run_launch_file` clears it): what ``ros2 launch --show-args`` lists."""


class LaunchError(RuntimeError):
    """What the real launch raises as ``SubstitutionFailure`` / ``InvalidLaunchFileError``."""


@dataclass
class LaunchContext:
    """``argv``: the command line's ``name:=value`` items, as ``ros2launch`` gives them to ``LaunchService``."""

    launch_configurations: dict[str, str] = field(default_factory=dict)
    argv: list[str] = field(default_factory=list)
    noninteractive: bool = False


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
        DECLARED.append(self)

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
    declared: list[str]


def run_launch_file(path: Path, monkeypatch, arguments: dict[str, str] | None = None, *,
                    command_line: list[str] | None = None) -> LaunchRun:
    """Load ``path`` with the double in ``sys.modules`` and visit its description (``name:=value`` = ``arguments``).

    As ``ros2 launch pardyn <file name> name:=value ...`` runs it: ``sys.argv`` is that command line (or
    ``command_line``, e.g. a user's launch file that includes this one), ``context.argv`` its launch arguments;
    ``ros2launch`` includes the file with the parsed arguments as launch configurations.
    """
    for name, module in _modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    argv = [f"{key}:={value}" for key, value in (arguments or {}).items()]
    monkeypatch.setattr(sys, "argv", command_line or ["/opt/ros/kilted/bin/ros2", "launch", "pardyn", Path(path).name,
                                                      *argv])
    DECLARED.clear()
    spec = importlib.util.spec_from_file_location(f"launch_file_{Path(path).stem.replace('.', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    context = LaunchContext(dict(arguments or {}), argv)
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
    return LaunchRun(nodes, includes, dict(context.launch_configurations), [a.name for a in DECLARED])


class LaunchedProcesses:
    """The processes of a launch and what ``ros2 launch`` (launch 3.7: ``LaunchService``, ``ExecuteLocal``) does
    to them when it shuts down, read in ros2/launch:

    * ``ros2launch`` runs non-interactively with ``-n``/``--noninteractive``, the default when its standard
      input is not a terminal (``default=not sys.stdin.isatty()``);
    * launch's SIGINT handler shuts down with ``due_to_sigint=True``; each process is then sent SIGINT only
      ``if not due_to_sigint or context.noninteractive``: in a terminal the Ctrl-C already reached every
      process of the foreground group, launch adds none; non-interactively it sends one to each process;
    * at the same shutdown each process gets two timers, SIGTERM after ``sigterm_timeout`` (launch
      configuration, default 5 s) with ``[ERROR] ... process[NAME] failed to terminate '5' seconds after
      receiving 'SIGINT', escalating to 'SIGTERM'``, and SIGKILL after ``sigterm_timeout + sigkill_timeout``
      (10 s), cancelled when the process exits;
    * a second SIGINT to launch is "ignored" (logged only).

    Here the test process plays launch: the processes share one new process group (the terminal's foreground
    group, which :meth:`terminal_ctrl_c` signals as a terminal does), and :meth:`shut_down` is launch's reaction.
    """

    def __init__(self, commands: dict[str, list[str]], *, noninteractive: bool,
                 launch_configurations: dict[str, str] | None = None, env: dict[str, str] | None = None,
                 cwd: str | Path | None = None) -> None:
        import subprocess  # noqa: PLC0415

        configurations = launch_configurations or {}
        self.noninteractive = noninteractive
        # as launch performs them: the configuration's text, and PythonExpression 'float(a) + float(b)'
        self.sigterm_timeout = str(configurations.get("sigterm_timeout", 5))
        self.sigkill_timeout = str(float(self.sigterm_timeout) + float(configurations.get("sigkill_timeout", 5)))
        self.log: list[str] = []
        self.processes: dict[str, Any] = {}
        self.group: int | None = None
        self._sigint_received = False
        for index, (name, command) in enumerate(commands.items(), start=1):
            process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True, env=env, cwd=cwd,
                                       process_group=0 if self.group is None else self.group)
            self.group = process.pid if self.group is None else self.group
            self.processes[f"{name}-{index}"] = process
            self.log.append(f"[INFO] [{name}-{index}]: process started with pid [{process.pid}]")

    def terminal_ctrl_c(self) -> None:
        """Ctrl-C in the terminal: SIGINT to every process of the foreground group, then launch's own handler."""
        import os  # noqa: PLC0415
        import signal  # noqa: PLC0415

        try:
            os.killpg(self.group, signal.SIGINT)
        except ProcessLookupError:
            pass
        self.shut_down(due_to_sigint=True)

    def shut_down(self, *, due_to_sigint: bool) -> dict[str, int]:
        """Launch's shutdown: SIGINT to each process unless a terminal's Ctrl-C caused it (see the class), the
        SIGTERM and SIGKILL timers; returns every process's exit code (negative: the signal that killed it)."""
        import signal  # noqa: PLC0415
        import time  # noqa: PLC0415

        if due_to_sigint:
            if self._sigint_received:
                self.log.append("[WARNING] [launch]: user interrupted with ctrl-c (SIGINT) again, ignoring...")
                return self.codes()
            self._sigint_received = True
            self.log.append("[WARNING] [launch]: user interrupted with ctrl-c (SIGINT)")
        start = time.monotonic()
        if not due_to_sigint or self.noninteractive:
            for name, process in self.processes.items():
                if process.poll() is None:
                    self.log.append(f"[INFO] [{name}]: sending signal 'SIGINT' to process[{name}]")
                    process.send_signal(signal.SIGINT)
        escalations = [(self.sigterm_timeout, "SIGINT", "SIGTERM"), (self.sigkill_timeout, "SIGTERM", "SIGKILL")]
        for timeout, before, after in escalations:
            while time.monotonic() - start < float(timeout) and any(p.poll() is None for p in self.processes.values()):
                time.sleep(0.02)
            for name, process in self.processes.items():
                if process.poll() is None:
                    self.log.append(f"[ERROR] [{name}]: process[{name}] failed to terminate '{timeout}' seconds "
                                    f"after receiving '{before}', escalating to '{after}'")
                    process.send_signal(getattr(signal, after))
        for process in self.processes.values():
            process.wait()
        return self.codes()

    def codes(self) -> dict[str, int | None]:
        return {name: process.poll() for name, process in self.processes.items()}

    def output(self, name: str) -> str:
        """Everything process ``name`` (``executable-N``) printed; once it has exited."""
        process = self.processes[name]
        return process.stdout.read() if process.poll() is not None else ""
