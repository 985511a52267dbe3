"""ROS 2 node ``controller``: actuator torques from the measured joints, ros2_control style.

The node answers every ``joint_states`` message with one effort command, at
once (event driven: the control rate is the rate of the state stream, 1 kHz
from the ``sim`` node or a hardware driver):

    tau = law(q_j, qdot_j, reference(t))      t = the state's header.stamp   # (n_a,)

(``q_j`` the joints the law reads, ``law.joints``) so that in the sim's
lockstep mode the whole loop is deterministic. The law (parameter ``law``)
comes from the registry :mod:`pardyn.control.laws` (``pd``, ``augmented_pd``,
``ctc``, ``ctc_task``, ``extended_ctc``, ``pfc``), built from the node's
parameters (``pardyn.node_parameters.table("controller")``, the laws' options among them). A law that reads
more joints than the actuated ones (``extended_ctc``: the sensed passive
joints too, from ``joint_states`` as the sim publishes them) gets the actuated
reference lifted to every joint it reads by the forward kinematics
(:class:`pardyn.control.computed_torque.MeasuredReference`).

Topics (relative names):

* subscribes ``joint_states`` (sensor_msgs/JointState, best effort, so that
  reliable and best-effort publishers both match: many drivers and bridges publish
  sensor data best effort; keep last 1: the node always acts on the newest state,
  and counts the states it never saw (a stamp gap over 1.5 periods), with a
  throttled warning that it falls behind): the positions (and velocities) of at least the joints
  the law reads, by name (other names are ignored, order does not matter); a
  velocity that is absent (empty field) or NaN (a joint without a velocity
  interface) is estimated from the positions (:mod:`pardyn.control.joint_state`,
  cut-off ``velocity_filter_hz``), with an info per reason; when the topic has
  publishers but no message arrives, the node says so;
* publishes ``effort_controller/commands`` (std_msgs/Float64MultiArray): the
  torques in ``robot.actuated_names`` order (N m), the joint names in
  ``layout.dim[0].label`` (``"leg1_joint1,leg2_joint1,..."``, checked by the sim;
  a ros2_control effort controller's ``joints`` list must have this order),
  ``layout.data_offset`` =
  the lockstep tag of the state answered (:func:`pardyn.transport.lockstep.step_of_stamp`:
  ``round(stamp / period) mod 2^32`` with ``period = 1/rate``, see :mod:`pardyn.nodes.sim`);
* subscribes ``reference/trajectory`` (trajectory_msgs/JointTrajectory,
  transient local): the reference of the actuated joints, from the
  ``trajectory`` node. It replaces the current reference from its start time
  ``header.stamp`` (a zero stamp: the node's clock at reception, the ROS
  convention; ``time_from_start`` of each point is added), evaluated at each
  state's stamp by quintic Hermite interpolation of the points' positions,
  velocities and accelerations (:class:`pardyn.trajectories.SampledReference`),
  holding the last point after the end. Before any trajectory the reference
  is the fixed setpoint: ``setpoint`` (actuated joints), else ``setpoint_task``
  through the inverse kinematics, else the first measured position.

Safety:

* watchdog: once states have started, if none arrives for ``watchdog_periods``
  control periods (the steady clock; simulated time under ``use_sim_time``, so a
  simulation slowed by its machine never trips it; there a state is dated by its stamp while the
  clock, which follows ``/clock`` on the executor thread, lags behind the state thread:
  :class:`pardyn.transport.lockstep.LockstepAnswer`), the node publishes zero torque (every half
  watchdog period; tagged one before the last state answered, so that a lockstep
  sim never takes it for the answer to a state) and logs an error until states come back;
* a state with missing names or NaN/inf positions is dropped with a
  warning naming the problem (no command is sent for it);
* a state with the stamp and the positions of the previous one (the lockstep sim
  re-sends a state until it hears a command) gets the previous command again,
  without calling the law: stateful laws (PFC's internal model) advance once per
  control period; a state whose stamp does not advance (zero, repeated, earlier)
  but whose positions moved is acted on, at the previous time plus the reception
  interval, with a warning;
* when the law cannot give a command (the closure solve fails: the robot left its
  assembly mode, a singularity), the node says so once (an error, then throttled
  reminders) and answers with the safe command (``safe_command``: ``zero`` torque,
  or ``damping``, ``-safe_damping * qdot_a``), tagged as usual so a lockstep loop
  keeps running; an info when the law is back;
* every command is saturated at the per-actuator limits ``effort_limits``
  (the robot YAML's ``limits: effort:``, else the URDF ``<limit effort>``).

Service ``~/load_parameters`` (std_srvs/Trigger; model-based laws): adopt the parameters file
``swap_parameters_file`` (writable; the ``identifier`` node's ``~/save`` writes one only when its
estimate is well conditioned): the law is rebuilt with that file and the old and new laws' torques
are blended over ``swap_blend_periods`` control periods (:func:`pardyn.control.model_swap.swap_model`:
no torque jump). Refused, with the reason in the response and the log and the law unchanged, while a
blend is under way, for a law without a model, when the file is absent or unreadable, or when the
online estimate it holds has a condition number not below ``swap_max_condition``
(:func:`pardyn.control.estimate_file.check_estimate_file`).

Run: ``ros2 run pardyn controller --ros-args --params-file config/controller.yaml``.
"""

from __future__ import annotations

import math
import sys
import threading
import time

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from pardyn.control import JointReference
from pardyn.control.computed_torque import MeasuredReference
from pardyn.control.joint_state import JointStateFilter
from pardyn.control.laws import law_from_parameters, needs_model
from pardyn.control.model_swap import swap_model
from pardyn.control.estimate_file import check_estimate_file
from pardyn.control.safety import SafeCommand, joint_label
from pardyn.control.step import ControlStep
from pardyn.control.timing import DurationLog
from pardyn.errors import InputError, PardynError
from pardyn.nodes.common import (
    COMMAND_TOPIC,
    CONTROL_QOS,
    LATCHED_QOS,
    LATEST_STATE_QOS,
    STATE_TOPIC,
    Reporter,
    declare_parameters,
    log_summary,
    period_ns,
    run_node,
    stamp_to_ns,
)
from pardyn.nodes.messages import joint_readings, reference_from_message
from pardyn.nodes.realtime import StateLoop, node_realtime_setup
from pardyn.nodes.wire import CommandWire, JointStateWire, WireState, serialized
from pardyn.robot import Robot, load_robot
from pardyn.trajectories import SampledReference
from pardyn.transport.lockstep import LockstepAnswer

__all__ = ["ControllerNode", "REFERENCE_TOPIC", "main"]

NODE_NAME = "controller"
REFERENCE_TOPIC = "reference/trajectory"
LATE_REFERENCE_S = 0.1  # s: a reference received this long after its start is reported (its beginning skipped)


# --------------------------------------------------------------------------- node
class ControllerNode(Node):
    """The ``controller`` node (see the module docstring for topics and safety).

    Parameters: ``pardyn.node_parameters.table("controller")`` (read-only but ``swap_parameters_file``; defaults in ``config/controller.yaml``).

    Raises:
        PardynError: unknown robot or law, gains or limits of the wrong size.
    """

    def __init__(self, **node_options) -> None:
        super().__init__(NODE_NAME, **node_options)
        p = declare_parameters(self, NODE_NAME)
        self.robot: Robot = load_robot(p["robot"], kernels="auto")  # compiled kernels when they build (pardyn.kernels)
        self.get_logger().info(self.robot.kernel_note)
        self.names = tuple(self.robot.actuated_names)
        self.period_ns = period_ns(p["rate"])
        self.law = law_from_parameters(self.robot, p)
        self._settings = p  # not _parameters: rclpy.Node keeps its own there
        # the law (+ eq. 50) as one step: one kernel call per state when the kernels write it, said in one line
        self.step = ControlStep(self.robot, self.law, project_internal_stress=p["internal_stress_projection"])
        self.get_logger().info(self.step.note)
        self.joints = self.step.joints
        self._lift = MeasuredReference(self.robot) if self.joints != self.names else None
        self.watchdog_s = p["watchdog_periods"] * self.period_ns * 1e-9
        self.safe = SafeCommand(p["safe_command"], self.law.limits, p["safe_damping"] or [5.0])
        self._filter = JointStateFilter(p["velocity_filter_hz"])
        self._holding_safe = False
        self.safe_answers = 0
        self._started_wall = time.monotonic()
        self._sim_time = bool(self.get_parameter("use_sim_time").value)
        self._silence_reported = False
        self._hold = self._fixed_setpoint(p["setpoint"], p["setpoint_task"])
        self._trajectory: tuple[SampledReference | None, int] = (None, 0)  # in time from its start (ns)
        self._reporter = Reporter(self, p["log_period"], what="more")
        # tags, re-sends, watchdog; under use_sim_time a state is dated by its stamp while /clock lags behind it
        self.protocol = LockstepAnswer(self.period_ns, self.watchdog_s, sim_time=self._sim_time)
        self.law_time = DurationLog()  # the law (+ projection) per answered state

        self._lock = threading.Lock()  # the state thread's answer against the executor's callbacks
        self._command_buffer = CommandWire(joint_label(self.names), len(self.names))  # every command: refilled bytes
        self._state_wire = JointStateWire()  # every state read from its bytes (pardyn.nodes.wire)
        self._publisher = self.create_publisher(Float64MultiArray, COMMAND_TOPIC, CONTROL_QOS)
        # the states on their own thread (pardyn.nodes.realtime): no executor dispatch, no other callback before them
        self._states = StateLoop(self, JointState, STATE_TOPIC, LATEST_STATE_QOS, self._on_state,
                                 name=f"{NODE_NAME} states", raw=True)
        self._reference = self.create_subscription(JointTrajectory, REFERENCE_TOPIC, self._on_trajectory, LATCHED_QOS)
        self._load = self.create_service(Trigger, "~/load_parameters", self._on_load_parameters)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._watchdog = self.create_timer(max(self.watchdog_s / 2.0, 1e-3), self._check_watchdog, clock=steady)
        self.get_logger().info(
            f"robot {self.robot.name}, law {p['law']} ({self.law.describe()}), limits {self.law.limits.tolist()} N m (N for prismatic joints): "
            f"{self._states.topic_name} -> {self._publisher.topic_name}; reference {self._reference.topic_name}; "
            f"watchdog {p['watchdog_periods']} periods of {self.period_ns * 1e-6:g} ms; "
            f"safe command {self.safe.describe()}"
        )
        self._states.start(lambda: node_realtime_setup(p["realtime_priority"], p["lock_memory"]))
        self.realtime_complete, self.realtime_note = self._states.setup_result or (
            False, "real-time: the state thread's set-up did not finish in 5 s")
        self.get_logger().info(self.realtime_note)

    # ------------------------------------------------------------ setup
    def _fixed_setpoint(self, setpoint: list[float], setpoint_task: list[float]) -> JointReference | None:
        robot = self.robot
        if setpoint:
            if len(setpoint) != len(self.names) or not all(math.isfinite(v) for v in setpoint):
                raise InputError(f"parameter setpoint: expected {len(self.names)} finite values "
                                 f"{list(self.names)}, got {setpoint}")
            return JointReference.hold(setpoint)
        if setpoint_task:
            q = robot.solve_inverse(setpoint_task).q
            return JointReference.hold(q[robot.actuated_indices])
        return None

    # ------------------------------------------------------------ callbacks
    def reference(self, stamp_ns: int) -> JointReference | None:
        """The actuated reference at ``stamp_ns`` (ns on the states' clock)."""
        trajectory, start_ns = self._trajectory  # one attribute: replaced whole by the executor's thread
        if trajectory is not None:
            t = (stamp_ns - start_ns) * 1e-9  # s from the trajectory's start, exact
            if t >= trajectory.start_time:
                return trajectory(t)
        return self._hold

    def _on_trajectory(self, message: JointTrajectory) -> None:
        start_ns = stamp_to_ns(message.header.stamp)
        if start_ns == 0:
            start_ns = self.get_clock().now().nanoseconds
        try:
            trajectory = reference_from_message(message, self.names)
        except InputError as error:
            self._reporter.warning("trajectory", f"dropped {REFERENCE_TOPIC} message: {error}")
            return
        self._trajectory = (trajectory, start_ns)
        late_s = (self.get_clock().now().nanoseconds - start_ns) * 1e-9 - trajectory.start_time
        if late_s > LATE_REFERENCE_S:
            self._reporter.warning("late reference", f"{REFERENCE_TOPIC} arrived {late_s:.3g} s after its start: "
                                   "its beginning is skipped (the reference jumps); start it later (the trajectory "
                                   "node's start_delay or wait_for_subscriber: controller)")
        self.get_logger().info(
            f"new reference: {len(message.points)} points from t = {(start_ns * 1e-9 + trajectory.start_time):.9g} s "
            f"to {(start_ns * 1e-9 + trajectory.end_time):.9g} s"
        )

    def _on_load_parameters(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        p = self._settings
        path = self.get_parameter("swap_parameters_file").value
        try:
            if not needs_model(p["law"]):
                raise InputError(f"law {p['law']} has no model to replace")
            estimate = check_estimate_file(path, max_condition=p["swap_max_condition"])
            with self._lock:  # the state thread sees the old law or the blend, never half of the swap
                self.law = swap_model(self.law, lambda: law_from_parameters(self.robot, {**p, "parameters_file": path}),
                                      blend_periods=p["swap_blend_periods"])
                self.step.replace_law(self.law)  # the blend runs on the Python path
                self.get_logger().info(self.step.note)
        except (OSError, PardynError) as error:
            response.success, response.message = False, f"model swap refused: {error}"
            self.get_logger().warning(response.message)
            return response
        condition = f", condition number {estimate['condition']:.3g}" if estimate else ""
        response.success, response.message = True, (
            f"model swap to {path}{condition}: blending over {self.law.blend_periods} periods")
        self.get_logger().info(response.message)
        return response

    def _on_state(self, message: bytes | JointState) -> None:
        """Answer one state (on the state thread, :class:`pardyn.nodes.realtime.StateLoop`: its bytes; a
        ``JointState`` given in process takes the same path)."""
        with self._lock:
            try:
                state = self._state_wire.read(serialized(message))
            except InputError as error:
                self._reporter.warning("state", f"dropped {STATE_TOPIC} message: {error}")
                return
            self._answer(state)

    def _answer(self, message: WireState) -> None:
        stamp_ns = message.stamp_ns
        if len(message.position) != len(message.name) or len(message.velocity) not in (0, len(message.name)):
            self._reporter.warning("state lengths", f"dropped {STATE_TOPIC} message: {len(message.name)} names but "
                                   f"{len(message.position)} positions and {len(message.velocity)} velocities")
            return
        reading = self._filter.update(message.name, message.position, message.velocity, stamp_ns,
                                      time.monotonic_ns())
        if reading.stamp == "resend":  # the clock read only then: under use_sim_time a read costs ~6 us hot
            again = self.protocol.repeat(stamp_ns, True, self._watchdog_clock_s())
            if again is not None:  # the sim re-sent the state: the same command, the law not called again
                self._publisher.publish(self._command_buffer.fill(again[0], again[1]))
                return
        try:
            position, velocity = joint_readings(
                message, self.joints, what="actuated" if self._lift is None else "measured",
                velocities=reading.velocities)
        except InputError as error:
            self._reporter.warning("state", f"dropped {STATE_TOPIC} message: {error}")
            return
        self._report_reading(reading, stamp_ns)
        self._count_missed(stamp_ns)
        tau = self._command(position, velocity, reading.time_ns, self._sensed(message))
        tag, back = self.protocol.answer(stamp_ns, tau, self._watchdog_clock_s())
        self._publisher.publish(self._command_buffer.fill(tau, tag))
        if back:
            self.get_logger().info(f"{STATE_TOPIC} back at {stamp_ns * 1e-9:.6f} s: control resumed")

    def _sensed(self, message: WireState) -> np.ndarray | None:
        """The sensed passive joints' positions for eq. (50)'s forward problem when the step reads them and
        the state has them all, finite (else None: the actuated joints alone)."""
        if not self.step.reads_sensed:
            return None
        try:
            return joint_readings(message, tuple(self.robot.sensed_names), what="sensed",
                                  velocities=[0.0] * len(message.name))[0]
        except InputError:
            return None

    def _command(self, position: np.ndarray, velocity: np.ndarray, time_ns: int,
                 sensed: np.ndarray | None = None) -> np.ndarray:
        """The law's torques (n_a,) at ``time_ns`` (projected, saturated), else the safe command, said once."""
        n_a = len(self.names)
        if self._hold is None:
            self._hold = JointReference.hold(position[:n_a])
            self.get_logger().info(f"holding the first measured position {position[:n_a].tolist()}")
        reference = self.reference(time_ns)
        begin = time.perf_counter()
        try:
            if self._lift is not None:
                reference = self._lift(reference)  # actuated -> every joint the law reads
            tau = self.step(position, velocity, reference, sensed=sensed)
            if self._holding_safe:
                self._holding_safe = False
                self.get_logger().info(f"the law gives commands again at {time_ns * 1e-9:.6f} s")
        except PardynError as error:
            tau = self.safe(velocity[:n_a])
            self.safe_answers += 1
            text = (f"no command from the law for the state at {time_ns * 1e-9:.6f} s: {type(error).__name__}: "
                    f"{error}; holding the safe command ({self.safe.describe()})")
            if not self._holding_safe:
                self._holding_safe = True
                self.get_logger().error(text)
            else:
                self._reporter.error("law", text)
        self.law_time.add(time.perf_counter() - begin)
        return tau

    def _count_missed(self, stamp_ns: int) -> None:
        """Count the states skipped since the previous one (keep last 1 drops what the node was too late for)."""
        skipped = self.protocol.skipped(stamp_ns)
        if skipped:
            self._reporter.warning(
                "behind", f"fell behind: {skipped} {STATE_TOPIC} messages skipped before the one stamped "
                f"{stamp_ns * 1e-9:.6f} s ({self.missed} in all; the law's timing is in the summary at shutdown)")

    answered = property(lambda self: self.protocol.answered, doc="states answered (re-sends not counted)")
    missed = property(lambda self: self.protocol.missed, doc="states never seen: stamp gaps over 1.5 periods")

    def summary(self) -> str:
        """One line on the run: states answered and missed, time in the law."""
        return (f"{self.answered} states answered, {self.missed} missed (stamp gaps), {self.safe_answers} safe "
                f"commands; law {self.law_time.describe('us')}; {self._states.describe()}")

    def destroy_node(self) -> None:
        if hasattr(self, "_states"):
            self._states.destroy()  # the state thread first: no answer after the summary
        if hasattr(self, "law_time"):  # constructed: say how the run went
            log_summary(self, f"controller summary: {self.summary()}")
        super().destroy_node()

    def _report_reading(self, reading, stamp_ns: int) -> None:
        """Log, each under its own name, what the joint-state filter had to make up."""
        if reading.estimated_missing:
            self._reporter.info("velocities absent", f"{STATE_TOPIC} has no velocity field: velocities of "
                                f"{list(reading.estimated_missing)} estimated from the positions "
                                f"({self._filter.cutoff_hz:g} Hz filter)")
        if reading.estimated_nan:
            self._reporter.info("velocities nan", f"{STATE_TOPIC} gives NaN/inf velocities for "
                                f"{list(reading.estimated_nan)}: estimated from the positions "
                                f"({self._filter.cutoff_hz:g} Hz filter)")
        if reading.stamp in ("repeated", "backwards"):
            self._reporter.warning(
                f"stamp {reading.stamp}",
                f"{STATE_TOPIC} header stamp {stamp_ns * 1e-9:.6f} s does not advance ({reading.stamp}) but the "
                f"positions moved: acting on them at {reading.time_ns * 1e-9:.6f} s (reception interval)",
            )

    def _watchdog_clock_s(self) -> float:
        """The watchdog's clock (s): simulated time under ``use_sim_time`` (a lockstep sim that waits, or a loaded
        machine, stops it: a slow simulation is not a silent robot), else the steady clock."""
        if self._sim_time:
            return self.get_clock().now().nanoseconds * 1e-9
        return time.monotonic()

    def _check_watchdog(self) -> None:
        with self._lock:
            self._watch()

    def _watch(self) -> None:
        if self.protocol.last_state_s is None:
            self._check_silent_publishers()
            return  # not started: nothing to hold yet
        silence = self.protocol.watchdog(self._watchdog_clock_s())
        if silence is None:
            return
        silent_s, tag = silence  # tag: one before the last answered state (pardyn.transport.lockstep)
        self._publisher.publish(self._command_buffer.fill(0.0, tag))
        self._reporter.error(
            "watchdog",
            f"no {STATE_TOPIC} for {silent_s * 1e3:.0f} ms (> {self.watchdog_s * 1e3:g} ms): commanding zero torque",
        )

    def _check_silent_publishers(self) -> None:
        """Say so when joint_states has publishers but no message has arrived for 5 s (QoS, a stalled driver)."""
        if self._silence_reported or time.monotonic() - self._started_wall < 5.0:
            return
        publishers = self.get_publishers_info_by_topic(self._states.topic_name)
        if publishers:
            self._silence_reported = True
            described = sorted(f"{info.node_namespace.rstrip('/')}/{info.node_name} ({info.qos_profile.reliability.name.lower()}, "
                               f"{info.qos_profile.durability.name.lower()})" for info in publishers)
            self.get_logger().warning(
                f"{self._states.topic_name} has {len(publishers)} publishers {described} but no message arrived "
                "in 5 s: incompatible QoS or a driver that does not publish yet; no command is sent until one does"
            )


def main(args: list[str] | None = None) -> int:
    """Run the node until Ctrl-C/SIGTERM; exit code 0, or 1 if it cannot start."""
    return run_node(ControllerNode, NODE_NAME, args)


if __name__ == "__main__":
    sys.exit(main())
