"""Every node parameter, stated once: one table per node (name, type, default, description, validation).

From these tables follow, in the spirit of ``generate_parameter_library`` (its
idea, not its C++ build):

* the declarations: :func:`pardyn.nodes.common.declare_parameters` declares a
  node's table with ParameterDescriptors (description, type, read-only flag,
  ranges) and checks the values (ranges, choices);
* the check of the shipped YAML (:func:`check_parameters_file`; a bringup file's,
  :func:`pardyn.nodes.bringup.check_bringup_file`): an unknown key, a value of the wrong type or
  one that fails validation is an error naming the file and the key;
* the documentation: :func:`markdown` renders the tables of the README's
  "Node parameters" section (``python -m pardyn.node_parameters`` prints it);
* ``pardyn identify`` reads the ``controller`` node's parameter files with them (the law the bags
  were recorded with).

A plug-in's settings are stated in its ``Options`` (:func:`pardyn.registry.option`) and their
entries here generated from it (:func:`option_parameters`): the ``controller`` table's law
parameters are the registered laws' options, so a law with a parameter of its own is one file.

Types are the ROS parameter types: ``bool``, ``integer``, ``double``,
``string``, ``integer_array``, ``double_array``, ``string_array``; a double
must be written as a float in YAML (``1.0``, not ``1``), as rclpy requires. An
array parameter whose default is empty has no ROS default (ROS cannot type an
empty list): its value is then ``[]``.

Pure data and checks, in the core (it never imports rclpy): the nodes declare their parameters
from it, the CLI and the bringup checks read it without starting a node.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


from pardyn.control.laws.registry import REGISTRY as LAW_REGISTRY
from pardyn.control.safety import SAFE_COMMANDS
from pardyn.errors import DescriptionError
from pardyn.plants.measurement import VELOCITY_MODES
from pardyn.plants.registry import REGISTRY as PLANT_REGISTRY
from pardyn.plants.registry import plant_options
from pardyn.registry import OptionSpec
from pardyn.textio import load_yaml, shown

__all__ = [
    "BUILTIN",
    "NODE_PARAMETERS",
    "ParameterSpec",
    "check_parameters_file",
    "check_values",
    "markdown",
    "node_values",
    "option_parameters",
    "table",
]

TYPES = ("bool", "integer", "double", "string", "integer_array", "double_array", "string_array")
TRAJECTORY_KINDS = ("circle", "point_to_point", "exciting")
TIMESTAMP_SOURCES = ("receive", "header")
RELIABILITIES = ("auto", "reliable", "best_effort")


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def _is_type(value: Any, kind: str) -> bool:
    if kind.endswith("_array"):
        return isinstance(value, (list, tuple)) and all(_is_type(item, kind[:-6]) for item in value)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "double":
        return isinstance(value, float)
    return isinstance(value, str)


@dataclass(frozen=True)
class ParameterSpec:
    """One node parameter.

    Attributes:
        name: the ROS parameter name.
        type: one of :data:`TYPES`.
        default: the value when no file or override sets it (a tuple for arrays; ``()``: none, ``[]``).
        description: what it is, with its unit.
        read_only: declared read-only (the node reads it once, at start).
        low, high: inclusive range of a number (of each element of a number array).
        choices: the allowed values of a string.
    """

    name: str
    type: str
    default: Any
    description: str
    read_only: bool = True
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"parameter {self.name}: unknown type {self.type!r}, expected one of {TYPES}")
        problems = self.problems(list(self.default) if self.type.endswith("_array") else self.default)
        if problems:
            raise ValueError(f"parameter {self.name}: default {self.default!r}: {'; '.join(problems)}")

    def problems(self, value: Any) -> list[str]:
        """What is wrong with ``value`` for this parameter (type, range, choice); empty if nothing."""
        if not _is_type(value, self.type):
            return [f"expected {self.type}, got {type(value).__name__} {shown(value)}"]
        values = list(value) if self.type.endswith("_array") else [value]
        problems = []
        if self.low is not None or self.high is not None:
            low = -math.inf if self.low is None else self.low
            high = math.inf if self.high is None else self.high
            outside = [v for v in values if not low <= v <= high]
            if outside:
                problems.append(f"{shown(outside[0])} outside [{low:g}, {high:g}]")
        if self.choices:
            unknown = [v for v in values if v not in self.choices]
            if unknown:
                problems.append(f"{shown(unknown[0])} is not one of {list(self.choices)}")
        return problems

    def validation(self) -> str:
        """The validation in words (range or choices), empty if none."""
        if self.choices:
            return "one of " + ", ".join(f"`{c}`" for c in self.choices)
        if self.low is None and self.high is None:
            return ""
        low = "-inf" if self.low is None else _number(self.low)
        high = "inf" if self.high is None else _number(self.high)
        return f"[{low}, {high}]"


def _spec(name: str, kind: str, default: Any, description: str, **validation: Any) -> ParameterSpec:
    return ParameterSpec(name, kind, tuple(default) if kind.endswith("_array") else default, description, **validation)


ROS_TYPES = {"bool": "bool", "int": "integer", "float": "double", "str": "string"}
"""A plug-in option's kind (:class:`pardyn.registry.OptionSpec`) -> its ROS parameter type (``_array`` appended)."""


def option_parameters(options: Iterable[tuple[OptionSpec, tuple[str, ...]]]) -> tuple[ParameterSpec, ...]:
    """The node parameters of plug-in options (:func:`pardyn.registry.shared_options`): one per option."""
    return tuple(_spec(spec.parameter, ROS_TYPES[spec.kind] + ("_array" if spec.array else ""), spec.default,
                       spec.description, low=spec.low, high=spec.high, choices=spec.choices)
                 for spec, _ in options)


ROBOT = _spec("robot", "string", "dualv", "robot name (config/robots/<name>.yaml) or description file (pardyn or Gepetto YAML, MJCF)")
LOG_PERIOD = _spec("log_period", "double", 1.0, "minimum time between two reports of one kind of problem (s)",
                   low=0.0, high=3600.0)
PARAMETERS_FILE = "identified parameters (a `pardyn identify` RESULT.json) of the {what}; empty: the robot YAML's nominal"

BUILTIN: tuple[ParameterSpec, ...] = (
    _spec("use_sim_time", "bool", False, "ROS: the node's clock follows /clock", read_only=False),
)
"""Parameters every rclpy node declares itself."""

CLOSURE_SOLVER = (
    ROBOT,
    _spec("frame_id", "string", "base_link", "header.frame_id of platform/pose (the robot's base frame)",
          read_only=False),
    _spec("max_condition", "double", 1e6,
          "condition number of a closure Jacobian block above which a configuration is singular (message dropped)",
          low=1.0, high=1e16),
    _spec("max_rate", "double", 0.0,
          "at most this many solutions per second (Hz): a steady-clock timer at this rate solves the newest "
          "joint_states message received since its last tick, the others are never taken; 0: every state as it "
          "arrives", low=0.0, high=1e6),
    _spec("log_period", "double", 1.0, "minimum time between two reports of the same kind of dropped message (s)",
          low=0.0, high=3600.0),
)

def _law_parameters(model: bool) -> tuple[ParameterSpec, ...]:
    """The registered laws' options (:func:`option_parameters`): those of laws without (``model`` False) or with a
    dynamic model; a parameter shared by both kinds counts with the model-based ones."""
    from pardyn.control.laws import law_option_specs  # noqa: PLC0415 - every law module registered

    uses_model = {name: LAW_REGISTRY.get(name).model for name in LAW_REGISTRY}
    return option_parameters((spec, users) for spec, users in law_option_specs()
                             if any(uses_model[user] for user in users) == model)


def _controller() -> tuple[ParameterSpec, ...]:
    """The ``controller`` table: generated from the laws registered when it is asked for."""
    return (
        ROBOT,
        _spec("law", "string", "pd", "control law (pardyn.control.laws)", choices=LAW_REGISTRY.names),
        _spec("rate", "double", 1000.0, "control rate (Hz): the sim's, for lockstep tags and the watchdog",
              low=1e-3, high=1e6),
        *_law_parameters(model=False),
        _spec("parameters_file", "string", "", PARAMETERS_FILE.format(what="model-based laws")),
        _spec("dynamic_model", "string", "exact", "model-based laws without parameters_file: the nominal exact model "
              "(every body) or the simplified one (the robot YAML's dynamics.two_end_bars split between their ends, "
              "Codourey 1998)", choices=("exact", "simplified")),
        *_law_parameters(model=True),
        _spec("effort_limits", "double_array", (), "per-actuator torque limits (N m, N); empty: the robot YAML's "
              "limits.effort, else the URDF <limit effort>", low=0.0),
        _spec("setpoint", "double_array", (),
              "fixed reference of the actuated joints (rad, m) until a trajectory arrives"),
        _spec("setpoint_task", "double_array", (),
              "fixed task pose (m, rad) if 'setpoint' is empty; both empty: hold the first reading"),
        _spec("watchdog_periods", "integer", 50,
              "control periods without a joint state before the controller outputs zero torque", low=1, high=1_000_000),
        _spec("safe_command", "string", "zero", "command when the law cannot give one (the closure solve failed): "
              "zero torque, or damping -safe_damping qdot", choices=SAFE_COMMANDS),
        _spec("safe_damping", "double_array", (5.0,), "gains of the damping safe command (N m s/rad, N s/m), one or "
              "one per actuator", low=0.0),
        _spec("velocity_filter_hz", "double", 50.0, "cut-off of the velocity estimate of joints whose joint_states "
              "velocity is absent or NaN (Hz)", low=1e-3, high=1e6),
        LOG_PERIOD,
        _spec("realtime_priority", "integer", 50, "SCHED_FIFO priority of the thread answering joint_states (1-99, "
              "ros2_control's 50); 0: normal scheduling; not permitted: normal scheduling, said in one info line",
              low=0, high=99),
        _spec("lock_memory", "bool", True, "mlockall the process's memory (current and future) at start-up, as "
              "realtime_tools does; not permitted: said in one info line"),
        _spec("internal_stress_projection", "bool", True,
              "actuation-redundant robots: remove the torques in the null space of J^T (Briot et al. 2015, eq. 50)"),
        _spec("swap_parameters_file", "string", "identified_parameters.json",
              "model-based laws: the parameters file ~/load_parameters adopts (the identifier's parameters_out)",
              read_only=False),
        _spec("swap_blend_periods", "integer", 200, "~/load_parameters: control periods over which the old and new "
              "models' torques are blended", low=1, high=1_000_000),
        _spec("swap_max_condition", "double", 1e4, "~/load_parameters refuses an online estimate whose condition "
              "number (online_estimate.condition in the file) is not below this", low=1.0, high=1e12),
    )

DYNAMICS = (
    ROBOT,
    _spec("parameters_file", "string", "", PARAMETERS_FILE.format(what="model")),
    _spec("rate", "double", 1000.0, "control rate (Hz), for the feedforward tags", low=1e-3, high=1e6),
    _spec("acceleration_cutoff", "double", 20.0, "low-pass of the task acceleration estimate (Hz)", low=1e-3, high=1e6),
    LOG_PERIOD,
)

RECORDER = (
    _spec("topics", "string_array", ("joint_states", "effort_controller/commands"),
          "topics to record (relative names: node namespace)"),
    _spec("types", "string_array", (), "message types (pkg/msg/Type) of the topics, one per topic; '' or none: "
          "from the graph (the publishers' type, checked against their type hash)"),
    _spec("bag_path", "string", "bags/recording", "bag directory of the next recording (suffixed if it exists)",
          read_only=False),
    _spec("autostart", "bool", True, "start recording when the node starts (else call ~/start)"),
    _spec("timestamp_source", "string", "receive",
          "bag timestamps: 'receive' (node clock) or 'header' (header stamp)", choices=TIMESTAMP_SOURCES),
    _spec("reliability", "string", "auto",
          "subscription reliability: 'auto' (as the publishers), 'reliable', 'best_effort'", choices=RELIABILITIES),
    _spec("queue_depth", "integer", 1000, "subscription depth (keep last)", low=1, high=1_000_000),
    _spec("chunk_messages", "integer", 100,
          "messages per MCAP chunk (at most this many are lost if the recorder is killed)", low=1, high=1_000_000),
    _spec("chunk_bytes", "integer", 1 << 20, "bytes of records per MCAP chunk", low=1, high=1 << 20),
    _spec("flush_period", "double", 1.0, "write the pending chunk when its oldest message is this old (s); 0: never",
          low=0.0, high=3600.0),
    _spec("fsync", "bool", False, "fsync the bag after each chunk (survives power loss)"),
    _spec("distro", "string", "kilted", "ROS 2 distribution of the message definitions and type hashes"),
    _spec("discovery_period", "double", 0.2, "period of the graph checks for topics not yet subscribed (s)",
          low=0.01, high=60.0),
    _spec("periodic_topics", "string_array", ("joint_states",),
          "topics among `topics` published once per period with a header stamp (a robot's states): the messages "
          "lost before the bag are counted from the gaps in their stamps, in the bag's metadata and the closing line"),
    _spec("scene", "bool", False, "also write the robot's scene from the recorded scene_joint_states: "
          "robot_markers (MarkerArray), /tf (TFMessage) and robot_description (pardyn.scene.track)"),
    ROBOT,
    _spec("scene_joint_states", "string", "joint_states", "scene: the recorded topic the scene is solved from"),
    _spec("scene_rate", "double", 30.0, "scene: markers and /tf per second of joint-state stamps (Hz)",
          low=0.1, high=1000.0),
)

def _sim() -> tuple[ParameterSpec, ...]:
    """The ``sim`` table: its plant parameters generated from the plants registered when it is asked for."""
    return (
        ROBOT,
        _spec("plant", "string", "mujoco", "simulated plant (pardyn.plants.registry)", choices=PLANT_REGISTRY.names),
        _spec("parameters_file", "string", "", PARAMETERS_FILE.format(what="simulated robot")),
        _spec("rate", "double", 1000.0, "control rate (Hz): one plant step of 1/rate s per command", low=1e-3, high=1e6),
        _spec("lockstep", "bool", True,
              "advance one period per command of the current step (true) or free-running (false)"),
        _spec("watchdog_periods", "integer", 50,
              "control periods without a command before zero torque (free) or an error (lockstep)", low=1, high=1_000_000),
        _spec("stall_timeout", "double", 2.0, "lockstep: wall-clock seconds without the command of a step before zero "
              "torque is applied over it and the sim advances (a stalled step); 0: never, the sim waits for the "
              "command (its data then do not depend on the load: pardyn demo)", low=0.0, high=1e9),
        _spec("end_time", "double", 0.0, "lockstep: simulated time (s) at which the sim stops advancing: the state "
              "of that step is the last, later commands are dropped and it holds without re-sending (a run of a fixed "
              "length whatever the wall clock, as pardyn demo records its runs); 0: never", low=0.0, high=1e9),
        _spec("effort_limits", "double_array", (), "per-actuator torque limits (N m, N); empty: the robot YAML's "
              "limits.effort, else the URDF <limit effort>", low=0.0),
        _spec("implausible_factor", "double", 10.0, "commands beyond this multiple of the effort limits are refused",
              low=1.0, high=1e12),
        _spec("command_sources", "string_array", (), "nodes whose commands are accepted (relative names: in the sim's "
              "namespace); empty: any publisher"),
        _spec("wait_for_nodes", "string_array", (), "nodes (relative names: in the sim's namespace) that must be up before "
              "state 0 is published and simulated time starts: each lists a topic of its own in the graph, and the states "
              "reach every subscriber the graph lists (a recorder misses no step); empty: start at once"),
        _spec("start_timeout", "double", 60.0, "wait_for_nodes: wall-clock seconds after which the sim starts without "
              "the nodes still missing (an error names them)", low=1e-3, high=1e9),
        _spec("initial_task", "double_array", (), "task pose at t = 0 (m, rad); empty: home"),
        *option_parameters(plant_options()),
        _spec("payload_mass", "double", 0.0, "payload fixed to payload_frame (kg); 0: none", low=0.0, high=1e6),
        _spec("payload_frame", "string", "", "frame carrying the payload; empty: the robot's 'payload' link, else its "
              "task frame (Robot.payload_frame: the platform, a serial robot's last link)"),
        _spec("payload_com", "double_array", (), "payload centre of mass in payload_frame (m); empty: the origin"),
        _spec("payload_inertia", "double_array", (),
              "payload inertia about its com, ixx iyy izz ixy ixz iyz (kg m^2); empty: point mass"),
        _spec("counts_per_revolution", "integer", 2**17, "encoder counts per turn of a measured revolute joint",
              low=1, high=2**62),
        _spec("length_resolution", "double", 1e-6, "encoder step of a measured prismatic joint (m)", low=1e-12, high=1.0),
        _spec("torque_noise", "double", 0.01, "relative standard deviation of the effort noise (0.01 = 1 % of |tau|)",
              low=0.0, high=10.0),
        _spec("torque_noise_floor", "double", 1e-3, "absolute standard deviation of the effort noise (N m)",
              low=0.0, high=1e6),
        _spec("velocities", "string", "difference",
              "published joint velocities: backward differences of the quantized positions, or exact (not 'none': "
              "the controller needs velocities)", choices=tuple(mode for mode in VELOCITY_MODES if mode != "none")),
        _spec("seed", "integer", 0, "seed of the effort noise", low=0, high=2**31 - 1),
        _spec("publish_clock", "bool", True, "publish /clock (simulated time)"),
        _spec("publish_ground_truth", "bool", True, "publish ground_truth/joint_states (every joint, exact)"),
        _spec("history_depth", "integer", 10, "queue depth of joint_states and ground truth: raise it so that a slow "
              "subscriber (a recorder, a test) misses nothing", low=1, high=1_000_000),
        _spec("closure_tolerance", "double", 1e-6, "closure violation logged as an error above it (m, rad)",
              low=0.0, high=1.0),
        LOG_PERIOD,
    )

TRAJECTORY = (
    ROBOT,
    _spec("kind", "string", "circle", "trajectory kind", choices=TRAJECTORY_KINDS),
    _spec("start_task", "double_array", (), "task pose at the start (m, rad); empty: home"),
    _spec("goal_task", "double_array", (), "end task pose of point_to_point (m, rad)"),
    _spec("radius", "double", 0.02, "circle radius (m)", low=0.0, high=10.0),
    _spec("turns", "double", 1.0, "circle revolutions (counter-clockwise if positive)", low=-1e6, high=1e6),
    _spec("start_angle", "double", 0.0, "angle of the start point seen from the centre (rad)"),
    _spec("duration", "double", 2.0, "duration of the motion (s)", low=0.0, high=1e6),
    _spec("sample_rate", "double", 100.0, "points per second (Hz)", low=0.0, high=1e6),
    _spec("start_time", "double", 0.0, "absolute start time (s) on the node's clock if > 0", low=0.0, high=1e12),
    _spec("start_delay", "double", 0.5, "if start_time is 0: start this long after publication (s)",
          low=0.0, high=1e6),
    _spec("wait_for_subscriber", "string", "", "publish only once a node of this name (in this namespace) "
          "subscribes to reference/trajectory, so that start_delay counts from then; empty: at once"),
    _spec("seed", "integer", 0, "exciting: seed of the random Fourier coefficients", low=0, high=2**31 - 1),
    _spec("base_frequency", "double", 0.0, "exciting: fundamental frequency (Hz); 0: the robot's default "
          "(pardyn.excitation.bounds)", low=0.0, high=1e3),
    _spec("harmonics", "integer", 5, "exciting: number of harmonics", low=1, high=100),
    _spec("amplitude", "double_array", (),
          "exciting: largest deviation per task coordinate (m, rad); empty: the robot's default"),
    _spec("max_velocity", "double_array", (),
          "exciting: velocity bound per task coordinate (m/s, rad/s); empty: the robot's default"),
    _spec("max_acceleration", "double_array", (),
          "exciting: acceleration bound per task coordinate (m/s^2, rad/s^2); empty: the robot's default"),
    _spec("candidates", "integer", 6, "exciting: random draws, the best-exciting is kept", low=1, high=1000),
    _spec("max_kinematic_condition", "double", 1e3,
          "exciting: largest serial/parallel condition number of the closure Jacobian accepted along the "
          "trajectory (distance to singularities)", low=1.0, high=1e12),
    _spec("optimize_iterations", "integer", 0, "exciting: SLSQP iterations optimising the best draw (0: none)",
          low=0, high=10000),
)

IDENTIFIER = (
    ROBOT,
    _spec("rate", "double", 1000.0, "rate of joint_states (Hz)", low=1e-3, high=1e6),
    _spec("decimation", "integer", 10, "one equation block every this many samples (model rate = rate / decimation)",
          low=1, high=10_000),
    _spec("filter_half_width", "integer", 30, "Savitzky-Golay half-width (samples): q, qdot, qddot at the window's "
          "centre, filter_half_width / rate s late (at least 3: a degree-5 polynomial over 2 m + 1 samples)",
          low=3, high=10_000),
    _spec("window", "double", 3.0, "estimation window (s): after a change (a payload) the estimate is the new "
          "robot's this long after", low=1e-3, high=3600.0),
    _spec("min_window", "double", 3.0, "shortest window solved and saved (s; at most window): after a detected "
          "change the estimate is the new robot's this long after", low=1e-3, high=3600.0),
    _spec("change_threshold", "double", 0.0, "mean normalised squared residual of the last 10 blocks under the "
          "estimate that restarts the window (a payload); 0: never", low=0.0, high=1e12),
    _spec("change_holdoff", "double", 0.2, "after a detected change, the data of this long are not used (the "
          "transient) (s)", low=0.0, high=3600.0),
    _spec("max_condition", "double", 1e4, "~/save writes the estimate only when the column-scaled observation "
          "matrix of a window of at least min_window has a condition number below this", low=1.0, high=1e12),
    _spec("publish_rate", "double", 4.0, "estimate publication rate on identifier/estimate (Hz)", low=1e-3, high=1e3),
    _spec("parameters_out", "string", "identified_parameters.json",
          "file ~/save writes (the parameters_file format of the controller and dynamics nodes)"),
    LOG_PERIOD,
)

GAZEBO_JOINT_STATES = (
    ROBOT,
    LOG_PERIOD,
)

VISUALIZER = (
    ROBOT,
    _spec("rate", "double", 30.0, "robot_markers publication rate (Hz): the newest solved configuration",
          low=0.1, high=1000.0),
    _spec("frame_id", "string", "", "header.frame_id of the markers (the robot's base frame); empty: the URDF's root "
          "link"),
    LOG_PERIOD,
)

class _Tables(Mapping[str, tuple[ParameterSpec, ...]]):
    """Node -> its table; a generated table (a function) is built when asked for (the plug-ins then registered)."""

    def __init__(self, tables: Mapping[str, tuple[ParameterSpec, ...] | Callable[[], tuple[ParameterSpec, ...]]]):
        self._tables = dict(tables)

    def __getitem__(self, node: str) -> tuple[ParameterSpec, ...]:
        entry = self._tables[node]
        return entry() if callable(entry) else entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._tables)

    def __len__(self) -> int:
        return len(self._tables)


NODE_PARAMETERS: Mapping[str, tuple[ParameterSpec, ...]] = _Tables({
    "sim": _sim,
    "controller": _controller,
    "trajectory": TRAJECTORY,
    "closure_solver": CLOSURE_SOLVER,
    "dynamics": DYNAMICS,
    "recorder": RECORDER,
    "identifier": IDENTIFIER,
    "gazebo_joint_states": GAZEBO_JOINT_STATES,
    "visualizer": VISUALIZER,
})
"""The parameter table of each node, by executable name (= default node name)."""


def table(node: str) -> dict[str, ParameterSpec]:
    """The parameters of ``node`` by name (its own, not :data:`BUILTIN`).

    Raises:
        DescriptionError: no such node.
    """
    if node not in NODE_PARAMETERS:
        raise DescriptionError(f"no parameter table for node {node!r}; nodes: {sorted(NODE_PARAMETERS)}")
    return {spec.name: spec for spec in NODE_PARAMETERS[node]}


def check_values(node: str, values: Mapping[str, Any], where: str) -> None:
    """Check parameter values meant for ``node`` against its table (and :data:`BUILTIN`).

    Raises:
        DescriptionError: ``<where>: <key>: <problem>`` for an unknown key, a wrong type or a failed validation.
    """
    specs = table(node) | {spec.name: spec for spec in BUILTIN}
    errors = []
    for key, value in values.items():
        spec = specs.get(key)
        if spec is None:
            errors.append(f"{where}: {key if isinstance(key, str) and len(key) <= 60 else shown(key, 60)}: unknown parameter of node {node}{_suggest(key, specs)}")
            continue
        errors += [f"{where}: {key}: {problem} (node {node})" for problem in spec.problems(value)]
    if errors:
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise DescriptionError(errors[0] + more)


def _suggest(key: Any, specs: Mapping[str, Any]) -> str:
    """``; did you mean 'stall_timeout'?`` for a misspelt key, else the known names."""
    import difflib  # noqa: PLC0415

    near = difflib.get_close_matches(str(key), list(specs), n=1)
    return f"; did you mean {near[0]!r}?" if near else f"; known: {sorted(specs)}"


def _load(path: Path) -> Any:
    return load_yaml(path, what="ROS parameters file", error=DescriptionError)


def _node_of(section: str) -> str | None:
    """The node a parameters-file section applies to (``/**/controller`` -> controller), None for ``/**``."""
    name = section.rstrip("/").rsplit("/", 1)[-1]
    return None if name in ("**", "*", "") else name


def check_parameters_file(path: str | Path, *, nodes: Sequence[str] | None = None) -> None:
    """Check a ROS parameters file (``<node>: {ros__parameters: {...}}`` sections) against the tables.

    A section for all nodes (``/**``) must set parameters that one of ``nodes``
    (all the tables by default) declares, with the right type and value.

    Raises:
        DescriptionError: naming the file, the section and the key at fault.
    """
    path = Path(path)
    for section, values in _sections(path):
        node = _node_of(section)
        if node is not None:
            check_values(node, values, f"{path}: {section}")
        else:
            check_shared_values(values, list(nodes or NODE_PARAMETERS), f"{path}: {section}")


def _sections(path: Path) -> list[tuple[str, Mapping[str, Any]]]:
    """The ``(section, ros__parameters)`` pairs of a ROS parameters file, its layout checked.

    Raises:
        DescriptionError: not a mapping of ``<section>: {ros__parameters: {...}}``.
    """
    raw = _load(path)
    if not isinstance(raw, Mapping):
        raise DescriptionError(f"{path}: expected a mapping of node sections")
    sections = []
    for section, content in raw.items():
        if not isinstance(content, Mapping) or set(content) != {"ros__parameters"}:
            raise DescriptionError(f"{path}: {section}: expected a mapping with only 'ros__parameters'")
        values = content["ros__parameters"] or {}
        if not isinstance(values, Mapping):
            raise DescriptionError(f"{path}: {section}: ros__parameters: expected a mapping of parameter values")
        sections.append((str(section), values))
    return sections


def node_values(node: str, files: Sequence[str | Path]) -> dict[str, Any]:
    """The parameters ``node`` starts with from these ROS parameters files, as the node would read them.

    The table's defaults, overridden by each file in turn (later files win) through its sections for
    ``node`` (``controller``, ``/**/controller``) and for every node (``/**``: the keys ``node``
    declares), each value checked against the table; arrays as lists, as rclpy gives them. What the
    CLIs read to rebuild a node's objects (``pardyn identify --controller``: the control law).

    Raises:
        DescriptionError: naming the file, the section and the key at fault, or a file without a
            section for ``node``.
    """
    specs = table(node)
    values = {name: spec.default for name, spec in specs.items()}
    for path in files:
        found = False
        for section, given in _sections(Path(path)):
            target = _node_of(section)
            if target is None:
                given = {key: value for key, value in given.items() if key in specs}
            elif target != node:
                continue
            found = True
            check_values(node, given, f"{path}: {section}")
            values.update({key: value for key, value in given.items() if key in specs})  # use_sim_time: rclpy's
        if not found:
            raise DescriptionError(f"{path}: no '{node}: ros__parameters:' section")
    return {key: list(value) if isinstance(value, tuple) else value for key, value in values.items()}


def check_shared_values(values: Mapping[str, Any], nodes: Sequence[str], where: str) -> None:
    """Values applied to every node of ``nodes``: each key declared by one of them at least, valid for all that do."""
    for key, value in values.items():
        owners = [node for node in nodes if key in table(node) | {spec.name: spec for spec in BUILTIN}]
        if not owners:
            raise DescriptionError(f"{where}: {key}: no node of {sorted(set(nodes))} declares it")
        for node in owners:
            check_values(node, {key: value}, where)


def _cell(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_cell(v) for v in value) + "]"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value) if isinstance(value, float) else str(value)


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def markdown(nodes: Sequence[str] | None = None) -> str:
    """The parameter tables of ``nodes`` (all by default) as Markdown, one table per node."""
    parts = []
    for node in nodes or NODE_PARAMETERS:
        lines = [f"`{node}` (`config/{node}.yaml`):", "",
                 "| parameter | type | default | valid | description |", "|---|---|---|---|---|"]
        for spec in NODE_PARAMETERS[node]:
            writable = "" if spec.read_only else " (writable)"
            lines.append(f"| `{spec.name}` | {spec.type}{writable} | `{_cell(spec.default)}` | {spec.validation()} | "
                         f"{_escape(spec.description)} |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


if __name__ == "__main__":  # pragma: no cover
    sys.stdout.write(markdown())
