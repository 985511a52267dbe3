"""ROS 2 node ``sim``: a simulated robot behind the interface of a real one.

The node steps a :class:`pardyn.plants.Plant` (``plant: mujoco``, an
independent engine, by default; ``pinocchio``: pardyn's own forward dynamics)
at the control rate and talks like the hardware driver of a ros2_control
robot:

* publishes ``joint_states`` (sensor_msgs/JointState, reliable): only what the
  real robot measures, the joints of the measurement model (actuated, then
  sensed passive joints), positions through the encoder model, velocities,
  and ``effort`` = the torque applied over the last period (with the
  measurement model's noise); ``header.stamp`` = simulated time;
* subscribes ``effort_controller/commands`` (std_msgs/Float64MultiArray, the
  forward-command controller convention): one torque per actuated joint, in
  ``robot.actuated_names`` order (N m, N);
* publishes ``/clock`` (rosgraph_msgs/Clock) with the simulated time, for the
  other nodes' ``use_sim_time``;
* publishes ``ground_truth/joint_states`` (sensor_msgs/JointState): the
  plant's true state, every tree joint (``robot.joint_names``), exact
  positions and velocities, same stamp (parameter ``publish_ground_truth``);
* with ``plant: flexible`` (a serial robot with flexible joints and the rotor
  model of its YAML, :class:`pardyn.plants.flexible_joint.FlexibleJointPlant`),
  ``joint_states`` carries the *link-side* encoders and the effort is the
  current-based torque ``K_tau i``; ``motor_states`` (sensor_msgs/JointState,
  actuated joints, same stamp) the *motor-side* encoders, rotor positions
  reflected to the link side (same encoder model) and the same effort.

**Lockstep protocol** (``lockstep: true``, the default). State ``k`` is
stamped at exactly ``t_k = k * period`` (integer nanoseconds, ``period =
round(1e9 / rate)`` ns, simulated time starts at 0). The command for step
``k`` is the first valid command whose ``layout.data_offset`` equals
``k mod 2^32`` (:func:`pardyn.transport.lockstep.step_of_stamp`): the ``controller``
node answers each state message once with the tag of its stamp. On that
command the sim holds the torques over ``[t_k, t_k+1]``, then publishes state
``k+1``, whose ``effort`` is that command (saturated). Simulated time does
not advance without the command of the current step, so the run is
deterministic and no step is missed or doubled; other commands are dropped:
older tags silently (answers to a re-sent state), others with a warning (counted as
rejected, reason ``tag``).
While it waits, the sim re-sends state ``k`` every half watchdog period
(DDS discovery of a controller that starts later, a lost message); a
controller answers again with the same tag, and the duplicate is dropped.

The commands are taken on a thread of the sim's own (:class:`pardyn.nodes.realtime.StateLoop`, with each
message's publisher for ``command_sources``), which steps the plant; the timer's re-sends and stalls run on the
executor, under one lock. ``end_time`` (simulated s, 0: never) ends a lockstep run at that step: the sim then
holds, drops later commands and re-sends nothing (``pardyn demo`` records its runs so).

**Free-running** (``lockstep: false``): a steady-clock timer steps the plant
one period per tick (sim time follows the wall clock as long as the host
keeps up) with the latest valid command, whatever its tag.

Safety:

* watchdog: free-running, a command older than ``watchdog_periods`` periods
  is replaced by ZERO torque, with an error logged (and an info when commands
  come back); lockstep, simulated time stands still without a command (no
  torque acts) and the sim logs an error once it has waited
  ``watchdog_periods`` periods of wall time after the first command;
* stall timeout (lockstep): once running, the sim never waits more than
  ``stall_timeout`` s of wall time for the command of a step: it then applies
  the safe command (zero torque) over that step, advances, logs an error, and
  counts the stalled step in its summary (a hardware-like run: a plant does not
  wait for its controller). ``stall_timeout: 0`` turns it off: simulated time
  then waits for the command however long the controller takes (its error
  ``no command for step ...`` is logged meanwhile), so that a lockstep run's data
  do not depend on the load (``pardyn demo``: a controller starved for 2 s on a
  loaded machine made a step with zero torque, and two runs' fits differed);
* commands are checked by :func:`pardyn.control.safety.check_command`: the wrong
  number of values, NaN/inf, efforts beyond ``implausible_factor`` times the
  limits (a runaway command: refused, not saturated), joint names in the layout
  in another order are rejected with a warning naming the reason, and counted by
  reason in the summary; the node goes on (lockstep: still waiting for a valid one);
* accepted commands are saturated at the per-actuator ``effort_limits`` (the robot
  YAML's ``limits: effort:``, else the URDF ``<limit effort>``) with a warning naming
  the joints;
* ``command_sources`` (node names, relative ones in the sim's namespace): when
  given, commands of any other publisher are rejected (reason ``source``; the
  publisher is identified by its gid in the graph), so a second controller on the
  topic cannot drive this robot; the bringup files name their ``controller``;
* several publishers on the command topic, or another publisher of ``/clock``,
  are reported (two robots in one ROS graph must each have their own namespace);
* the plant's closure violation above ``closure_tolerance`` is logged as an error.

Run: ``ros2 run pardyn sim --ros-args --params-file config/sim.yaml``.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock as ClockMessage
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from pardyn.control import actuator_limits, saturate
from pardyn.transport.lockstep import LockstepSim
from pardyn.transport.sources import CommandSources, SourceEvent
from pardyn.transport.start_gate import StartGate
from pardyn.control.safety import CommandRejected, check_command
from pardyn.control.timing import DurationLog, RealTimeRate, StepLatency
from pardyn.dynamics.parameters import read_parameter_file
from pardyn.errors import InputError
from pardyn.nodes.common import (
    COMMAND_TOPIC,
    CONTROL_QOS,
    SEQUENCE_MODULUS,
    STATE_TOPIC,
    Reporter,
    declare_parameters,
    NANOSECONDS,
    log_summary,
    period_ns,
    run_node,
)
from pardyn.nodes.realtime import StateLoop
from pardyn.nodes.wire import JointStateWriter, WireCommand, decode_command, serialized
from pardyn.plants import PlantState
from pardyn.plants.measurement import MeasurementModel
from pardyn.plants.registry import make_plant
from pardyn.robot import load_robot

__all__ = ["GROUND_TRUTH_TOPIC", "MOTOR_STATE_TOPIC", "SimNode", "main"]

NODE_NAME = "sim"
GROUND_TRUTH_TOPIC = "ground_truth/joint_states"
MOTOR_STATE_TOPIC = "motor_states"
MEASUREMENT_PARAMETERS = ("counts_per_revolution", "length_resolution", "torque_noise", "torque_noise_floor",
                          "velocities", "seed")


class SimNode(Node):
    """The ``sim`` node (see the module docstring for topics, lockstep protocol and safety).

    Parameters: ``pardyn.node_parameters.table("sim")`` (the plants' options among them) (all read-only; defaults in ``config/sim.yaml``); the
    measurement model's are those of :class:`pardyn.plants.measurement.MeasurementModel`. The protocol
    itself (tags, duplicates, re-sends, stalls, command sources) is :mod:`pardyn.transport`.
    """

    def __init__(self, **node_options) -> None:
        super().__init__(NODE_NAME, **node_options)
        p = declare_parameters(self, NODE_NAME)
        self.lockstep = p["lockstep"]
        self.closure_tolerance = p["closure_tolerance"]
        self.robot = load_robot(p["robot"])
        self.dynamic_parameters = (read_parameter_file(p["parameters_file"], self.robot) if p["parameters_file"]
                                   else self.robot.nominal_parameters)  # the dynamic parameters simulated
        self.names = tuple(self.robot.actuated_names)
        self.limits = actuator_limits(self.robot, p["effort_limits"])
        self.period_ns = period_ns(p["rate"])
        self.period_s = self.period_ns * 1e-9
        self.watchdog_s = p["watchdog_periods"] * self.period_s
        self.stall_timeout_s = p["stall_timeout"]
        self.end_step = _end_step(p["end_time"], self.period_s) if p["end_time"] > 0.0 else None  # lockstep only
        self.implausible_factor = p["implausible_factor"]
        self.plant = self._make_plant(p)
        self.measurement = self._make_measurement({key: p[key] for key in MEASUREMENT_PARAMETERS})
        self._reporter = Reporter(self, p["log_period"])

        # loop state: the protocol (pardyn.transport) and what the node itself counts
        self.protocol = LockstepSim(self.watchdog_s, self.stall_timeout_s or float("inf"))  # 0: never stall
        self.rejected: Counter[str] = Counter()  # commands refused, by reason
        self._graph_checked = -float("inf")
        self._graph_reported: set[str] = set()
        self.max_closure_violation = 0.0
        self.missed_periods = 0  # lockstep steps whose command came later than the watchdog (time held meanwhile)
        self._missed_step = -1
        self._missed_since = 0.0
        self.timing = StepLatency()  # state k sent -> command tagged k received, in this process
        self._armed_step: int | None = None  # the step at the first command: rates and freshness count from it
        self.step_time = DurationLog()  # plant step + measurement + publishing, per period
        self.real_time = RealTimeRate(1.0 / self.period_s)  # free-running: periods per wall-clock second
        self._sent: tuple | None = None  # the messages of the current state (None: not published yet)
        self._lock = threading.Lock()  # the command thread's steps against the executor's timer

        self._create_endpoints(p)
        self._gate = self._start_gate(p["wait_for_nodes"], p["start_timeout"])
        self.get_logger().info(
            f"robot {self.robot.name} on the {p['plant']} plant, {'lockstep' if self.lockstep else 'free-running'} at "
            f"{1.0 / self.period_s:g} Hz: {self._commands.topic_name} {list(self.names)} -> "
            f"{self._state_publisher.topic_name} {list(self.measurement.names)}; limits {self.limits.tolist()} N m (N for prismatic joints)"
            + (f"; payload {p['payload_mass']:g} kg on {self.plant.payload.frame}" if p["payload_mass"] > 0.0 else "")
            + (f"; starts once {sorted(self._gate.nodes)} are up" if self._gate is not None else "")
        )
        if self._gate is None:
            self._publish(self.plant.state())
        self._commands.start()

    # ------------------------------------------------------------ protocol figures (tests, summaries)
    @property
    def ended(self) -> bool:
        """Lockstep: the state of ``end_time`` is out: no more steps, nothing re-sent."""
        return self.lockstep and self.end_step is not None and self.step >= self.end_step

    step = property(lambda self: self.protocol.step, doc="index k of the state last published")
    commands_applied = property(lambda self: self.protocol.commands_applied, doc="steps taken with a command")
    stalls = property(lambda self: self.protocol.stalls, doc="lockstep steps taken with zero torque after stall_timeout")
    duplicates = property(lambda self: self.protocol.duplicates, doc="answers to re-sent states, dropped")
    resends = property(lambda self: self.protocol.resends, doc="states sent again while waiting")

    # ------------------------------------------------------------ setup
    def _make_plant(self, p: dict):
        """The plant of the parameters ``p``, reset to the initial pose."""
        payload = self._payload(p["payload_mass"], p["payload_com"], p["payload_inertia"],
                                p["payload_frame"] or self.robot.payload_frame)
        plant = make_plant(self.robot, p["plant"], self.dynamic_parameters, p, payload=payload)  # the plant's options
        plant.reset(self.robot.home if not p["initial_task"] else self.robot.solve_inverse(p["initial_task"]).q)
        return plant

    def _create_endpoints(self, p: dict) -> None:
        """Publishers, the command subscription (with the publisher's gid when sources are named), the timer."""
        state_qos = QoSProfile(depth=p["history_depth"], history=HistoryPolicy.KEEP_LAST,
                               reliability=ReliabilityPolicy.RELIABLE)
        self._state_publisher = self.create_publisher(JointState, STATE_TOPIC, state_qos)
        self._truth_publisher = (self.create_publisher(JointState, GROUND_TRUTH_TOPIC, state_qos)
                                 if p["publish_ground_truth"] else None)
        self._clock_publisher = self.create_publisher(ClockMessage, "/clock", 10) if p["publish_clock"] else None
        self._motor_publisher = (  # rotor encoders of a flexible-joint plant
            self.create_publisher(JointState, MOTOR_STATE_TOPIC, state_qos) if p["plant"] == "flexible" else None
        )
        # the messages of a state, serialized once and refilled per step (pardyn.nodes.wire)
        self._truth_buffer = (JointStateWriter(self.robot.joint_names, ("position", "velocity"))
                              if self._truth_publisher is not None else None)
        self._motor_buffer = (JointStateWriter(self.names, ("position", "effort"))
                              if self._motor_publisher is not None else None)
        self._clock_message = ClockMessage()
        sources = frozenset(self._qualified(name) for name in p["command_sources"])
        self._sources = CommandSources(sources, self._command_publishers) if sources else None
        # the commands on a thread of their own (pardyn.nodes.realtime.StateLoop, started at the end of the
        # constructor): a command steps the plant without the executor's dispatch, and the publisher's gid comes
        # with each message, so every node of a process spins with the events executor (make_executor), which
        # cannot call a callback that takes the message info (command_sources once forced rclpy's Python one)
        self._commands = StateLoop(self, Float64MultiArray, COMMAND_TOPIC, CONTROL_QOS, self._on_command_taken,
                                   name=f"{NODE_NAME} commands", message_info=True, raw=True)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        if self.lockstep:
            self._timer = self.create_timer(max(self.watchdog_s / 2.0, 1e-3), self._lockstep_watch, clock=steady)
        else:
            self._timer = self.create_timer(self.period_s, self._free_tick, clock=steady)

    def _qualified(self, name: str) -> str:
        """A node name as the graph gives it: relative names in the sim's namespace."""
        return name if name.startswith("/") else f"{self.get_namespace().rstrip('/')}/{name}"

    def _command_publishers(self) -> list[tuple[bytes, str | None]]:
        """The graph's publishers of the command topic: (gid, node or None while the graph does not name it)."""
        return [(bytes(endpoint.endpoint_gid), _graph_node_name(endpoint.node_namespace, endpoint.node_name))
                for endpoint in self.get_publishers_info_by_topic(self._commands.topic_name)]

    def _start_gate(self, nodes: list[str], timeout_s: float) -> StartGate | None:
        if not nodes:
            return None
        return StartGate(frozenset(self._qualified(name) for name in nodes), timeout_s, time.monotonic())

    def _payload(self, mass: float, com: list[float], inertia: list[float], frame: str):
        if mass <= 0.0:
            return None
        from pardyn.plants.payload import Payload  # noqa: PLC0415

        com = np.zeros(3) if not com else np.asarray(com, dtype=float)
        if com.shape != (3,):
            raise InputError(f"parameter payload_com: expected 3 coordinates (m), got {com.tolist()}")
        matrix = np.zeros((3, 3))
        if inertia:
            if len(inertia) != 6:
                raise InputError(f"parameter payload_inertia: expected ixx iyy izz ixy ixz iyz, got {inertia}")
            ixx, iyy, izz, ixy, ixz, iyz = inertia
            matrix = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)
        return Payload(mass, com, matrix, frame)

    def _make_measurement(self, options: dict) -> MeasurementModel:
        """The sensor model and the state message it fills (one effort per name: zero on sensed passive joints)."""
        model = MeasurementModel(self.robot, **options)
        names = list(model.names)
        self._efforts = np.zeros(len(names))
        self._actuated_rows = np.array([names.index(name) for name in self.names], dtype=int)  # in the message
        self._torque_rows = np.array([model.torque_names.index(name) for name in self.names], dtype=int)  # measured
        self._state_buffer = JointStateWriter(names)
        return model

    # ------------------------------------------------------------ publishing
    def _publish(self, state: PlantState) -> None:
        """Measure ``state`` (state ``self.step``) and publish it; keep the messages for re-sending."""
        stamp_ns = self.step * self.period_ns
        reading = self.measurement.measure(state)
        # one effort per name: the actuators' measured torques, zero on the sensed passive joints
        self._efforts[self._actuated_rows] = reading.torques[self._torque_rows]
        message = self._state_buffer.fill(stamp_ns, position=reading.positions, velocity=reading.velocities,
                                          effort=self._efforts)
        truth = None
        if self._truth_buffer is not None:
            truth = self._truth_buffer.fill(stamp_ns, position=state.q, velocity=state.qdot)
        motor = None
        if self._motor_buffer is not None:
            motor = self._motor_buffer.fill(stamp_ns, position=self.measurement.quantize(state.theta)[1],
                                            effort=self._efforts[self._actuated_rows])
        self._clock_message.clock.sec, self._clock_message.clock.nanosec = divmod(stamp_ns, NANOSECONDS)
        self._sent = (message, truth, self._clock_message, motor)
        self._send(resend=False)
        self.timing.sent(self.step, time.monotonic())

    def _send(self, *, resend: bool = True) -> None:
        """(Re-)send the messages of the current state: identical, so a re-send changes nothing downstream."""
        message, truth, clock, motor = self._sent
        self._state_publisher.publish(message)
        if truth is not None:
            self._truth_publisher.publish(truth)
        if self._clock_publisher is not None:
            self._clock_publisher.publish(clock)
        if motor is not None:
            self._motor_publisher.publish(motor)
        self.protocol.sent(time.monotonic(), resend=resend)

    def _advance(self, tau: np.ndarray, tag: int | None = None) -> None:
        """Hold ``tau`` (n_a,) over one period, then publish the new state; ``tag``: the command's (None: no command)."""
        begin = time.perf_counter()
        if self.protocol.armed:  # the periods before the first command (no controller yet) are not the loop's
            if self._armed_step is None:
                self._armed_step = self.step
            self.timing.applied(self.step, tag, SEQUENCE_MODULUS)
        applied = saturate(tau, self.limits)
        clipped = [name for name, a, b in zip(self.names, applied, tau) if a != b]
        if clipped:
            self._reporter.warning("saturation", f"torques of {clipped} saturated at {self.limits.tolist()} N m (N for prismatic joints)")
        state = self.plant.step(applied, self.period_s)
        self.protocol.advanced()
        self._publish(state)
        self.step_time.add(time.perf_counter() - begin)  # what delays the state; the check below does not
        violation = self.plant.closure_violation()  # monitoring, after the state is out
        self.max_closure_violation = max(self.max_closure_violation, violation)
        if violation > self.closure_tolerance:
            self._reporter.error(
                "closure", f"closure violation {violation:.3g} > {self.closure_tolerance:g} at t = {state.time:.6f} s"
            )

    # ------------------------------------------------------------ callbacks
    def _from_source(self, info) -> bool:
        """Whether the publisher of a message (its gid in ``info``) is a node of ``command_sources``."""
        gid = bytes((info or {}).get("publisher_gid", {}).get("data", b""))
        verdict, event = self._sources.accepts(gid, time.monotonic())
        if event is not None:
            self._say_source(event)
        if verdict != "accepted":  # counted by reason in the summary
            self.rejected["source" if verdict == "foreign" else "unnamed source"] += 1
        return verdict == "accepted"

    def _say_source(self, event: SourceEvent) -> None:
        """What :class:`CommandSources` says once per publisher."""
        sources = sorted(self._sources.sources)
        topic = self._commands.topic_name
        if event.kind == "foreign":
            self.get_logger().warning(f"rejecting the {topic} messages of {event.node}: not one of command_sources "
                                      f"{sources} (counted as 'source' in the summary)")
        elif event.kind == "unresolved":
            self.get_logger().info(f"a publisher of {topic} whose node the ROS graph does not name yet: its messages "
                                   "are rejected until it does, looked up again at its next message (counted as "
                                   "'unnamed source' in the summary)")
        else:
            self.get_logger().info(
                f"the ROS graph now names that publisher {event.node} ({event.held} messages rejected meanwhile): "
                + ("a command source, its commands are applied" if event.accepted
                   else f"not one of command_sources {sources}, its commands stay rejected"))

    def _on_command_taken(self, message: bytes | Float64MultiArray, info: dict) -> None:
        """A command taken by the command thread, as bytes (``info``: its publisher's gid, read with
        command_sources first: a foreign publisher's message is refused as such, whatever its bytes); a
        ``Float64MultiArray`` given in process takes the same path."""
        if self._sources is not None:
            with self._lock:
                if not self._from_source(info):
                    return
        try:
            command = decode_command(serialized(message))
        except InputError as error:
            with self._lock:
                self.rejected["serialization"] += 1
                self._reporter.warning("command serialization", f"rejected {COMMAND_TOPIC} message: {error}")
            return
        with self._lock:
            self._on_command(command)

    def _on_command(self, message: WireCommand) -> None:
        """One decoded command from an accepted source."""
        try:
            tau = check_command(message.data, self.names, self.limits, label=message.label,
                                implausible_factor=self.implausible_factor)
        except CommandRejected as error:
            self.rejected[error.reason] += 1
            self._reporter.warning(f"command {error.reason}", f"rejected {COMMAND_TOPIC} message: {error}")
            return
        tag = message.tag
        now = time.monotonic()
        self.timing.answered(tag, now, SEQUENCE_MODULUS)
        if not self.lockstep:
            self.protocol.latest(tau, tag, now)
            return
        if self._sent is None:
            return  # no state published yet (waiting for wait_for_nodes): nothing to answer
        verdict = self.protocol.command(tag)
        if verdict == "rejected":
            self.rejected["tag"] += 1
            self._reporter.warning(
                "tag", f"dropped a command tagged {tag} while waiting for step {self.protocol.expected_tag} "
                "(do the sim's and the controller's rate parameters agree?)"
            )
        if verdict != "apply" or self.ended:
            return
        if self.protocol.arm(now):
            self.get_logger().info(f"first command received: lockstep running from step {self.step}")
        self.protocol.applied()
        self._advance(tau, tag)

    def _check_graph(self) -> None:
        """Report several command publishers, or another /clock publisher (two robots sharing names)."""
        now = time.monotonic()
        if now - self._graph_checked < 2.0:
            return
        self._graph_checked = now
        topics = [(self._commands.topic_name, "commands of several controllers are mixed")]
        if self._clock_publisher is not None:
            topics.append((self._clock_publisher.topic_name, "several simulated clocks are mixed"))
        for topic, consequence in topics:
            publishers = self.get_publishers_info_by_topic(topic)
            if len(publishers) > 1 and topic not in self._graph_reported:
                self._graph_reported.add(topic)
                nodes = sorted(f"{info.node_namespace.rstrip('/')}/{info.node_name}" for info in publishers)
                self.get_logger().error(
                    f"{len(publishers)} publishers on {topic} {nodes}: {consequence}; give each robot its own "
                    "namespace (pardyn bringup --namespace NAME keeps /clock inside it too)"
                )

    def _opened(self) -> bool:
        """Whether state 0 is out: at once, or once every node of wait_for_nodes is up (or start_timeout passed)."""
        if self._sent is not None:
            return True
        missing = self._gate.missing(self._node_up, self._state_publisher.get_subscription_count(),
                                     self.count_subscribers(self._state_publisher.topic_name))
        verdict = self._gate.verdict(missing, time.monotonic())
        if verdict == "wait":
            self._reporter.info("start", f"waiting for {missing} before simulated time starts")
            return False
        if verdict == "timeout":
            self.get_logger().error(f"start_timeout {self._gate.timeout_s:g} s: {missing} still not up; starting "
                                    "without them")
        else:
            self.get_logger().info(f"{sorted(self._gate.nodes)} are up: simulated time starts")
        self._publish(self.plant.state())
        return True

    def _node_up(self, node: str) -> tuple[bool, bool]:
        """(whether ``node`` has a topic of its own in the graph, whether it subscribes our joint_states)."""
        namespace, _, name = node.rpartition("/")
        try:
            topics = {t for t, _ in self.get_publisher_names_and_types_by_node(name, namespace or "/")}
            subscribed = {t for t, _ in self.get_subscriber_names_and_types_by_node(name, namespace or "/")}
        except Exception:  # noqa: BLE001 - NodeNameNonExistentError: not in the graph yet
            return False, False
        clock = self._clock_publisher.topic_name if self._clock_publisher is not None else "/clock"
        # what rclpy creates for every node before the node's own construction: not a sign that it is built
        own = (topics | subscribed) - {"/rosout", "/parameter_events", "/clock", clock}
        return bool(own), self._state_publisher.topic_name in subscribed

    def _lockstep_watch(self) -> None:
        with self._lock:
            self._lockstep_watched()

    def _lockstep_watched(self) -> None:
        self._check_graph()
        if not self._opened() or self.ended:
            return
        action, waited = self.protocol.watch(time.monotonic())
        if action == "stall":
            self._reporter.error(
                "stall",
                f"no command for step {self.step} for {waited:.3g} s (stall_timeout {self.stall_timeout_s:g} s): "
                f"applying zero torque over it and advancing ({self.stalls} stalled steps so far)",
            )
            self._advance(np.zeros(len(self.names)), None)
            return
        if action == "wait":
            return
        if self.protocol.armed:
            # a late command (a loaded machine): simulated time holds, nothing is lost -- counted in the summary,
            # each one in the node log (INFO); a controller that stops answering is stall_timeout's error above
            if self.step != self._missed_step:
                self._missed_step = self.step
                self._missed_since = time.monotonic() - waited  # the wait restarts at each re-send
                self.missed_periods += 1
            silent = time.monotonic() - self._missed_since
            if silent > max(1.0, 20.0 * self.watchdog_s):  # not a late command: no controller is answering
                self._reporter.error(
                    "silent",
                    f"no command for step {self.step} for {silent:.3g} s: simulated time holds at "
                    f"{self.step * self.period_s:.6f} s, no torque acts; is the controller running?",
                )
                self._send(resend=True)
                return
            self._reporter.info(
                "watchdog",
                f"no command for step {self.step} for {waited * 1e3:.0f} ms (> {self.watchdog_s * 1e3:g} ms): "
                f"simulated time holds at {self.step * self.period_s:.6f} s, no torque acts; re-sending the state",
            )
        else:
            self._reporter.info("waiting", f"waiting for the first command on {self._commands.topic_name}")
        self._send(resend=True)

    def _free_tick(self) -> None:
        with self._lock:
            self._free_ticked()

    def _free_ticked(self) -> None:
        self._check_graph()
        if not self._opened():
            return
        now = time.monotonic()
        tau, tag, event = self.protocol.tick(now)
        if event == "back":
            self.get_logger().info(f"commands back at t = {self.step * self.period_s:.6f} s")
        elif event == "zero":
            self._reporter.error(
                "watchdog",
                f"no command for {self.protocol.silence_s(now) * 1e3:.0f} ms (> {self.watchdog_s * 1e3:g} ms): "
                "applying zero torque",
            )
        self._advance(np.zeros(len(self.names)) if tau is None else tau, tag)
        rate = self.real_time.tick(now)  # the tick's start: one clock reading per period
        if rate is not None and self.real_time.slow_windows == 1:  # said once; the summary counts the seconds
            work = self.step_time.percentiles((50.0,))[0]
            self.get_logger().warning(
                f"free-running at {rate:.0f} periods/s, behind the {self.real_time.rate_hz:g} Hz asked for: the "
                f"period's work (plant, sensors, publishing) takes p50 {work * 1e6:.0f} us of each "
                f"{self.period_s * 1e6:.0f} us period; a coarser plant_timestep or another integrator "
                "(bench/loop.py --plant-timestep measures both) or lockstep: true; said once, the summary counts "
                "the seconds behind")

    def summary(self) -> str:
        """One line on the run: steps (and per wall-clock second from the first command), commands applied and rejected by reason,
        stalled steps, duplicates, re-sends, max closure violation."""
        armed = self.protocol.armed_at_s
        wall = 0.0 if armed is None else time.monotonic() - armed
        steps = self.step - (self.step if self._armed_step is None else self._armed_step)  # since the first command
        rejected = ", ".join(f"{count} {reason}" for reason, count in sorted(self.rejected.items())) or "none"
        sources = (f" (by publisher: {self._sources.describe()})"
                   if self._sources is not None and (self.rejected["source"] or self.rejected["unnamed source"]) else "")
        behind = "" if self.lockstep else \
            f"{self.real_time.slow_windows} of {self.real_time.windows} s behind real time; "
        return (
            f"{self.step} steps ({self.step * self.period_s:.3f} s simulated) in {wall:.1f} s of wall time "
            f"from the first command ({steps / wall if wall > 0 else 0.0:.0f} steps/s), "
            f"{self.commands_applied} commands applied, commands rejected: {rejected}{sources}, "
            f"{self.stalls} stalled steps, {self.missed_periods} missed periods (a command later than the watchdog, "
            f"time held), {self.duplicates} duplicates dropped, {self.resends} state re-sends, "
            f"max closure violation {self.max_closure_violation:.3g}; {behind}"
            f"{self.timing.describe()}; period's work (plant, sensors, publishing) {self.step_time.describe('us')}"
        )

    def destroy_node(self) -> None:
        if hasattr(self, "_commands"):
            self._commands.destroy()  # the command thread first: no step after the summary
        if not hasattr(self, "max_closure_violation"):  # the constructor failed: nothing ran
            super().destroy_node()
            return
        log_summary(self, f"sim summary: {self.summary()}")
        super().destroy_node()


def _end_step(end_time_s: float, period_s: float) -> int:
    """The first step ``k`` whose simulated time ``k * period_s`` reaches ``end_time_s`` (as the sim computes it)."""
    step = max(0, int(end_time_s / period_s) - 1)
    while step * period_s < end_time_s:
        step += 1
    return step


def _graph_node_name(namespace: str, name: str) -> str | None:
    """The fully qualified name of a graph endpoint's node, None while the graph does not know it.

    rmw_fastrtps lists a DDS endpoint as soon as it is discovered and its node's
    name when the participant's ROS discovery message arrives, which can be later:
    meanwhile the name is ``_NODE_NAME_UNKNOWN_`` (or empty).
    """
    if not name or name.startswith("_NODE_NAME_UNKNOWN") or namespace.startswith("_NODE_NAMESPACE_UNKNOWN"):
        return None
    return f"{namespace.rstrip('/')}/{name}"


def main(args: list[str] | None = None) -> int:
    """Run the node until Ctrl-C/SIGTERM; exit code 0, or 1 if it cannot start."""
    return run_node(SimNode, NODE_NAME, args)


if __name__ == "__main__":
    sys.exit(main())
