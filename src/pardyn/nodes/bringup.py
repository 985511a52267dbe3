"""Bringup files: the single description of a node set, run in ONE process or launched.

A bringup file (``config/bringup/*.yaml``) names the nodes of a system;
``launch/{sim,hardware,identification}.launch.py`` build their launch_ros ``Node``
actions from the same file (:mod:`pardyn.nodes.launch`, with :func:`load_bringup`),
and ``pardyn bringup`` (:mod:`pardyn.cli.bringup`) runs them with
:func:`run_nodes`, so what runs here is what ``ros2 launch`` starts::

    # parameters of every node, applied after the node's own: they win (optional)
    parameters:
      - {robot: dualv}
    nodes:
      - executable: sim                    # a pardyn console script (pardyn.nodes.registry)
        name: sim                          # optional: node name (default: the class's)
        parameters:                        # applied in order, later ones win
          - config/sim.yaml                # a ROS parameters file, relative to the pardyn share
          - {lockstep: true}               # inline values
        remappings: {joint_states: /robot/joint_states}   # optional

:func:`run_nodes` makes every node an object of its class (:mod:`pardyn.nodes.registry`)
in one rclpy context, spun by one executor (:func:`pardyn.nodes.common.make_executor`). Parameters files
are passed as ``--params-file`` (the launch_ros semantics: a file's keys
select the nodes it applies to); inline values are written to a temporary
``/**`` parameters file, as launch_ros does. The nodes keep their own
``use_sim_time`` and timers; Ctrl-C, SIGTERM or a duration stop them all
cleanly.

Several robots in one ROS graph: give each node set its own namespace
(``pardyn bringup FILE --namespace r1``, ``ros2 launch ... namespace:=r1``). Every
topic of the nodes is relative, so it moves into the namespace, and
:func:`namespace_remappings` moves ``/clock`` there too (``/clock`` ->
``/<ns>/clock`` for every node): each simulated robot keeps its own time. A bringup
file given by a relative path that does not exist from the working directory is
looked up in the pardyn share; bag paths (the recorder's ``bag_path``) are
relative to the working directory, and the recorder logs the absolute path.

This module imports rclpy only inside :func:`run_nodes`: reading a bringup file does not need it.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from pardyn.errors import DescriptionError
from pardyn.node_parameters import NODE_PARAMETERS, check_parameters_file, check_shared_values, check_values
from pardyn.nodes.stopping import StopSignals
from pardyn.resources import resolve_path, share_directory
from pardyn.ros_names import check_node_name, check_topic
from pardyn.textio import load_yaml, shown

__all__ = ["CLOCK_SOURCES", "Bringup", "NodeSpec", "bringup_path", "check_bringup_file", "load_bringup",
           "namespace_remappings", "run_nodes", "share_file", "with_robot", "with_sim_time"]

CLOCK_SOURCES = ("sim",)
"""Executables that publish ``/clock`` (on the wall clock): ``use_sim_time`` given to a whole set skips them."""

@dataclass(frozen=True)
class NodeSpec:
    """One node of a bringup file.

    Attributes:
        executable: the pardyn console script (``ros2 run pardyn <executable>``).
        name: node name, or None for the class's default.
        parameters: in order, paths of ROS parameters files and dicts of values.
        remappings: ``(from, to)`` topic remappings.
    """

    executable: str
    name: str | None = None
    parameters: tuple[Path | dict[str, Any], ...] = ()
    remappings: tuple[tuple[str, str], ...] = ()

    def launch_parameters(self) -> list[str | dict[str, Any]]:
        """``parameters=`` of a launch_ros ``Node``: file paths as strings, dicts as they are."""
        return [str(p) if isinstance(p, Path) else dict(p) for p in self.parameters]


@dataclass(frozen=True)
class Bringup:
    """A node set read from a bringup file."""

    source: Path
    nodes: tuple[NodeSpec, ...] = field(default_factory=tuple)

    def with_parameters(self, overrides: Mapping[str, Mapping[str, Any]]) -> Bringup:
        """A copy where node ``name`` (or executable) gets ``overrides[name]`` applied last (it wins)."""
        known = {spec.name or spec.executable for spec in self.nodes}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise DescriptionError(f"{self.source}: no nodes {unknown} to override; nodes: {sorted(known)}")
        nodes = tuple(
            replace(spec, parameters=spec.parameters + (dict(overrides[spec.name or spec.executable]),))
            if (spec.name or spec.executable) in overrides else spec
            for spec in self.nodes
        )
        return replace(self, nodes=nodes)

    def describe(self) -> str:
        """One line per node, as the ``ros2 run`` command it stands for."""
        lines = []
        for spec in self.nodes:
            arguments = []
            if spec.name:
                arguments += ["-r", f"__node:={spec.name}"]
            for parameter in spec.parameters:
                if isinstance(parameter, Path):
                    arguments += ["--params-file", str(parameter)]
                else:
                    arguments += [item for key, value in parameter.items() for item in ("-p", f"{key}:={_yaml(value)}")]
            for source, target in spec.remappings:
                arguments += ["-r", f"{source}:={target}"]
            suffix = f" --ros-args {' '.join(arguments)}" if arguments else ""
            lines.append(f"ros2 run pardyn {spec.executable}{suffix}")
        return "\n".join(lines)


def _yaml(value: Any) -> str:
    """``value`` as the one-line YAML of a ``-p name:=value`` argument."""
    return yaml.safe_dump(value, default_flow_style=True).removesuffix("...\n").strip()


def _parameters(raw: Any, where: str, source: Path) -> tuple[Path | dict[str, Any], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise DescriptionError(f"{source}: {where}: expected a list of parameter files and mappings, got {shown(raw)}")
    items: list[Path | dict[str, Any]] = []
    for index, item in enumerate(raw):
        if isinstance(item, str):
            path = resolve_path(item, relative_to=share_directory())
            if not path.is_file():
                raise DescriptionError(f"{source}: {where}[{index}]: parameters file {item!r} not found ({path})")
            items.append(path)
        elif isinstance(item, Mapping) and all(isinstance(k, str) for k in item):
            items.append(dict(item))
        else:
            raise DescriptionError(f"{source}: {where}[{index}]: expected a file path or a mapping, got {shown(item)}")
    return tuple(items)


def load_bringup(path: str | Path) -> Bringup:
    """Read and check a bringup file (format in the module docstring).

    Relative parameters-file paths (and ``package://pardyn/...``) are taken
    from the pardyn share directory (:func:`pardyn.resources.share_directory`).

    Raises:
        DescriptionError: unreadable file, unknown keys, bad entries (named).
        OSError: the file cannot be read.
    """
    source = Path(path)
    raw = load_yaml(source, what="bringup file", error=DescriptionError)
    if not isinstance(raw, Mapping) or not isinstance(raw.get("nodes"), list) or not raw["nodes"]:
        raise DescriptionError(f"{source}: expected a mapping with a non-empty 'nodes' list")
    unknown = sorted(map(str, set(raw) - {"nodes", "parameters"}))
    if unknown:
        raise DescriptionError(f"{source}: unknown keys {unknown}; expected 'nodes' and optionally 'parameters'")
    common = _parameters(raw.get("parameters"), "parameters", source)
    nodes = []
    for index, entry in enumerate(raw["nodes"]):
        where = f"nodes[{index}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("executable"), str):
            raise DescriptionError(f"{source}: {where}: expected a mapping with an 'executable' string, got {shown(entry)}")
        unknown = sorted(map(str, set(entry) - {"executable", "name", "parameters", "remappings"}))
        if unknown:
            raise DescriptionError(f"{source}: {where}: unknown keys {unknown}")
        name = entry.get("name")
        if name is not None:
            check_node_name(name, f"{source}: {where}.name")
        remappings = entry.get("remappings") or {}
        if not isinstance(remappings, Mapping):
            raise DescriptionError(f"{source}: {where}.remappings: expected a mapping of topic names")
        for key, value in remappings.items():
            check_topic(key, f"{source}: {where}.remappings")
            check_topic(value, f"{source}: {where}.remappings.{key}")
        nodes.append(NodeSpec(
            executable=entry["executable"],
            name=name,
            parameters=_parameters(entry.get("parameters"), f"{where}.parameters", source) + common,
            remappings=tuple(remappings.items()),
        ))
    names = [spec.name or spec.executable for spec in nodes]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise DescriptionError(f"{source}: nodes {duplicated} appear twice: give them different 'name's")
    return Bringup(source=source, nodes=tuple(nodes))


def share_file(text: str) -> Path:
    """A file named on a command line or as a launch argument: the path as given (from the working directory, or
    absolute) when it exists, else relative to the pardyn share when that exists there, else the path as given."""
    path = Path(text).expanduser()
    if not path.exists() and not path.is_absolute() and (share_directory() / path).is_file():
        return share_directory() / path
    return path


def bringup_path(text: str) -> Path:
    """A bringup file as ``pardyn bringup`` and the launch files' ``config:=`` take it: :func:`share_file`
    (``config/bringup/sim.yaml``), else a bare name in ``config/bringup`` (``sim``)."""
    path = share_file(text)
    if path.exists() or path.suffix or path.is_absolute():
        return path
    return share_directory() / "config" / "bringup" / f"{text}.yaml"


def with_robot(bringup: Bringup, reference: str) -> Bringup:
    """``bringup`` with ``robot: reference`` applied last to every node whose table has a ``robot`` parameter
    (``reference``: a shipped robot's name or a description file's absolute path, as the nodes load it)."""
    return bringup.with_parameters({spec.name or spec.executable: {"robot": reference} for spec in bringup.nodes
                                    if any(p.name == "robot" for p in NODE_PARAMETERS.get(spec.executable, ()))})


def with_sim_time(bringup: Bringup, use_sim_time: bool) -> Bringup:
    """``bringup`` with ``use_sim_time`` applied last to every node but the clock's source (:data:`CLOCK_SOURCES`:
    the sim publishes ``/clock`` and steps on the wall clock)."""
    return bringup.with_parameters({spec.name or spec.executable: {"use_sim_time": use_sim_time}
                                    for spec in bringup.nodes if spec.executable not in CLOCK_SOURCES})


def check_bringup_file(path: str | Path) -> None:
    """Check the parameters a bringup file sets inline, and the files it names, against the node tables.

    Raises:
        DescriptionError: naming the file, the entry and the key at fault.
    """
    path = Path(path)
    bringup = load_bringup(path)  # the format's own checks first
    raw = load_yaml(path, what="bringup file", error=DescriptionError)
    executables = [spec.executable for spec in bringup.nodes]
    for index, item in enumerate(raw.get("parameters") or []):
        if isinstance(item, Mapping):
            check_shared_values(item, executables, f"{path}: parameters[{index}]")
    for index, entry in enumerate(raw["nodes"]):
        for position, item in enumerate(entry.get("parameters") or []):
            where = f"{path}: nodes[{index}] ({entry['executable']}).parameters[{position}]"
            if isinstance(item, Mapping):
                check_values(entry["executable"], item, where)
    for spec in bringup.nodes:
        for item in spec.parameters:
            if isinstance(item, Path):
                check_parameters_file(item, nodes=[spec.executable])


def namespace_remappings(namespace: str) -> list[tuple[str, str]]:
    """The remappings that keep a namespaced node set to itself: ``/clock`` into the namespace."""
    namespace = namespace.strip("/")
    return [("/clock", f"/{namespace}/clock")] if namespace else []


def _cli_arguments(spec: NodeSpec, scratch: Path, extra_remappings=()) -> list[str]:
    """The ``--ros-args`` of one node: its name, parameter files (inline values written to ``scratch``), remaps."""
    arguments = ["--ros-args"]
    if spec.name:
        arguments += ["-r", f"__node:={spec.name}"]
    for index, parameter in enumerate(spec.parameters):
        if isinstance(parameter, Path):
            arguments += ["--params-file", str(parameter)]
        else:
            file = scratch / f"{spec.name or spec.executable}_{index}.yaml"
            file.write_text(yaml.safe_dump({"/**": {"ros__parameters": parameter}}))
            arguments += ["--params-file", str(file)]
    for source, target in (*spec.remappings, *extra_remappings):
        arguments += ["-r", f"{source}:={target}"]
    return arguments


def run_nodes(
    bringup: Bringup,
    *,
    namespace: str = "",
    duration_s: float | None = None,
    until: Callable[[dict[str, Any]], bool] | None = None,
    stop: StopSignals | None = None,
) -> dict[str, Any]:
    """Run the nodes of ``bringup`` in this process until a stop; the nodes by executable name.

    Stops on SIGINT/SIGTERM (any number, at any moment: they are requests, see
    :mod:`pardyn.nodes.stopping`), after ``duration_s`` seconds of wall-clock time, or
    as soon as ``until(nodes)`` is true (checked between callbacks), then
    destroys the nodes (the recorder closes its bag, the sim and controller log
    their summaries) and shuts rclpy down. ``stop``: the process's
    :class:`~pardyn.nodes.stopping.StopSignals` (the CLI's); without it the
    handlers are installed for the run and given back after it (a test process).
    The returned nodes are destroyed: read figures from them, do not spin them.

    Raises:
        DescriptionError: a node cannot start, or cannot go on (:func:`pardyn.nodes.common.node_failure`).
    """
    import rclpy  # noqa: PLC0415 - only here: loading a bringup file needs no rclpy
    from rclpy.exceptions import ParameterException  # noqa: PLC0415
    from rclpy.executors import ExternalShutdownException  # noqa: PLC0415
    from rclpy.signals import SignalHandlerOptions  # noqa: PLC0415

    from pardyn.errors import PardynError  # noqa: PLC0415
    from pardyn.nodes.common import make_executor, needs_message_info, node_failure, one_blas_thread  # noqa: PLC0415
    from pardyn.nodes.realtime import SWITCH_INTERVAL_S, CollectorControl, own_process  # noqa: PLC0415
    from pardyn.nodes.registry import node_class  # noqa: PLC0415

    own = stop is None
    # the CLI's process (pardyn bringup): process-wide real-time measures may apply until the run ends
    give_back = own_process() if not own else (lambda: None)
    stop = StopSignals().install() if own else stop
    one_blas_thread()
    context = rclpy.Context()
    # the signals are requests (stop): rclpy's handlers, which raise KeyboardInterrupt in callbacks, stay out;
    # ours also work when the parent started us with SIGINT ignored (a background job)
    rclpy.init(args=[], context=context, signal_handler_options=SignalHandlerOptions.NO)
    logger = rclpy.logging.get_logger("bringup")
    executor = None
    nodes: dict[str, Any] = {}
    collector = CollectorControl()
    # the nodes' threads (the controller's states, the sim's commands) hand the interpreter lock to each other once
    # per step: within SWITCH_INTERVAL_S, not CPython's 5 ms, for the run only (a host program gets its own back)
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(min(switch_interval, SWITCH_INTERVAL_S))
    try:
        with tempfile.TemporaryDirectory(prefix="pardyn_bringup_") as scratch:
            for spec in bringup.nodes:
                if stop.requested:
                    break
                try:
                    node = node_class(spec.executable)(
                        context=context,
                        cli_args=_cli_arguments(spec, Path(scratch), namespace_remappings(namespace)),
                        namespace=namespace or None,
                        use_global_arguments=False,
                    )
                except (PardynError, ParameterException) as error:
                    raise DescriptionError(
                        f"{bringup.source}: cannot start {spec.executable}: {type(error).__name__}: {error}"
                    ) from error
                nodes[spec.name or spec.executable] = node
        executor = make_executor(context, message_info=any(needs_message_info(n) for n in nodes.values()))
        for node in nodes.values():
            executor.add_node(node)
        if not stop.requested:
            logger.info(f"{bringup.source}: running {[n.get_fully_qualified_name() for n in nodes.values()]}")
        deadline = None if duration_s is None else time.monotonic() + duration_s
        collector.start()  # the collector out of the callbacks (pardyn.nodes.realtime): run between them
        while not stop.requested and context.ok() and (deadline is None or time.monotonic() < deadline):
            if until is not None and until(nodes):
                break
            if any(node_failure(node) is not None for node in nodes.values()):
                break
            executor.spin_once(timeout_sec=0.1 if deadline is None else max(0.0, min(0.1, deadline - time.monotonic())))
            collector.tick()
    except ExternalShutdownException:
        pass
    finally:
        sys.setswitchinterval(switch_interval)
        collector.restore()
        if executor is not None:
            executor.shutdown(timeout_sec=1.0)
        for node in reversed(list(nodes.values())):
            node.destroy_node()
        rclpy.try_shutdown(context=context)
        give_back()
        if own:
            stop.restore()
    failed = {name: node_failure(node) for name, node in nodes.items() if node_failure(node) is not None}
    if failed:
        raise DescriptionError(f"{bringup.source}: " + "; ".join(f"{name} cannot go on: {why}"
                                                                  for name, why in failed.items()))
    if stop.requested:
        print(f"[INFO] [bringup]: stopped by {stop.describe()}: {len(nodes)} nodes destroyed", file=sys.stderr,
              flush=True)
    return nodes
