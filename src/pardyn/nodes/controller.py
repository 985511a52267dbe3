"""ROS 2 node ``controller``: actuator torques from the measured joints, ros2_control style.

The node answers every ``joint_states`` message with one effort command, at
once (event driven: the control rate is the rate of the state stream, 1 kHz
from the ``sim`` node or a hardware driver):

    tau = law(q_j, qdot_j, reference(t))      t = the state's header.stamp   # (n_a,)

(``q_j`` the joints the law reads, ``law.joints``) so that in the sim's
lockstep mode the whole loop is deterministic. Laws (parameter ``law``):

* ``"pd"``: :class:`pardyn.control.pd.JointPD`
  (``tau = sat(Kp (q_ref - q) + Kd (qdot_ref - qdot))``, gains ``kp``, ``kd``);
* ``"augmented_pd"``: :class:`pardyn.control.feedforward.AugmentedPD`, the DualV
  controller of Briot et al. 2015, Fig. 4 (bandwidth ``natural_frequency_hz``,
  ``damping``, filtered derivative, inverse-dynamics ``feedforward``);
* ``"ctc"``, ``"ctc_task"``: :class:`pardyn.control.computed_torque.ComputedTorque`
  in actuated or task space (Vivas et al. 2003, eqs. 35-37);
* ``"pfc"``: :class:`pardyn.control.pfc.PredictiveFunctionalControl`, predictive
  functional control on the feedback-linearized robot (Vivas & Poignet 2003, section 3,
  Fig. 6): inner gains ``pfc_kp``, ``pfc_kv`` (50, 68), CLTR ``pfc_response_periods``
  (18 periods of ``1/rate``), coincidence points ``pfc_points``, error extrapolation
  ``pfc_degree`` over ``pfc_error_window`` past errors; stateful (one call per state);
* ``"extended_ctc"``: :class:`pardyn.control.computed_torque.ExtendedComputedTorque`
  (Zubizarreta et al. 2010, eq. 59): reads the sensed passive joints too
  (from ``joint_states``, as the sim publishes them); the actuated reference
  is lifted to every measured joint by the forward kinematics
  (:class:`pardyn.control.computed_torque.MeasuredReference`).

The model-based laws use ``parameters_file`` (identified parameters, JSON of
:func:`pardyn.dynamics.parameters.read_parameter_file`; empty: the nominal
ones) and the gains ``ctc_kp``, ``ctc_kd`` (1/s^2, 1/s), or when empty
``Kp = w^2``, ``Kd = 2 xi w`` from ``natural_frequency_hz`` and ``damping``.

Topics (relative names):

* subscribes ``joint_states`` (sensor_msgs/JointState, best effort, so that
  reliable and best-effort publishers both match: many drivers and bridges publish
  sensor data best effort): the positions (and velocities) of at least the joints
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
  the lockstep tag of the state answered (:func:`pardyn.nodes.common.step_of_stamp`:
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
  control periods (wall clock), the node publishes zero torque (every half
  watchdog period) and logs an error until states come back;
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
  (the URDF ``<limit effort>`` by default).

Run: ``ros2 run pardyn controller --ros-args --params-file config/controller.yaml``.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory

from pardyn.control import ControlLaw, JointReference, actuator_limits, saturate
from pardyn.control.joint_state import JointStateFilter
from pardyn.control.safety import SAFE_COMMANDS, SafeCommand, joint_label
from pardyn.control.computed_torque import ComputedTorque, ExtendedComputedTorque, MeasuredReference, ctc_gains
from pardyn.control.feedforward import AugmentedPD
from pardyn.control.pd import JointPD
from pardyn.control.pfc import PredictiveFunctionalControl
from pardyn.dynamics.parameters import DynamicParameters, read_parameter_file
from pardyn.control.redundancy import InternalStressProjection
from pardyn.errors import InputError, PardynError
from pardyn.nodes.common import (
    COMMAND_TOPIC,
    CONTROL_QOS,
    LATCHED_QOS,
    SENSOR_QOS,
    STATE_TOPIC,
    Reporter,
    declare,
    period_ns,
    run_node,
    stamp_to_ns,
    step_of_stamp,
)
from pardyn.robot import Robot, load_robot
from pardyn.trajectories import SampledReference

__all__ = ["ControllerNode", "LAWS", "REFERENCE_TOPIC", "actuated_readings", "command_message", "main",
           "reference_from_message"]

NODE_NAME = "controller"
REFERENCE_TOPIC = "reference/trajectory"
LAWS = ("pd", "augmented_pd", "ctc", "ctc_task", "extended_ctc", "pfc")


# --------------------------------------------------------------------------- message <-> arrays
def actuated_readings(
    message: JointState, names: tuple[str, ...], *, what: str = "actuated", velocities=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Positions and velocities (k,) of ``names`` (the law's ``joints``) in a JointState.

    ``velocities`` (one per message name) replace the message's own (the filled-in
    ones of :class:`pardyn.control.joint_state.JointStateFilter`).

    Raises:
        InputError: missing names, lengths that differ, NaN/inf.
    """
    given = list(message.name)
    velocity_field = message.velocity if velocities is None else velocities
    if len(message.position) != len(given) or len(velocity_field) != len(given):
        raise InputError(
            f"{len(given)} names but {len(message.position)} positions and {len(velocity_field)} velocities"
        )
    missing = [name for name in names if name not in given]
    if missing:
        raise InputError(f"missing {what} joints {missing}, got {given}")
    where = [given.index(name) for name in names]
    position = np.array([message.position[i] for i in where], dtype=float)
    velocity = np.array([velocity_field[i] for i in where], dtype=float)
    bad = [name for name, p, v in zip(names, position, velocity) if not (math.isfinite(p) and math.isfinite(v))]
    if bad:
        raise InputError(f"non-finite position or velocity of {bad}")
    return position, velocity


def command_message(tau: np.ndarray, names: tuple[str, ...], tag: int) -> Float64MultiArray:
    """Float64MultiArray of the torques ``tau`` (n_a,), joint names in ``layout.dim[0].label``, tagged ``tag``."""
    message = Float64MultiArray()
    message.layout.dim = [MultiArrayDimension(label=joint_label(names), size=len(names), stride=len(names))]
    message.layout.data_offset = int(tag)
    message.data = [float(v) for v in tau]
    return message


def reference_from_message(message: JointTrajectory, names: tuple[str, ...]) -> SampledReference:
    """The reference of ``names`` (k,) in a JointTrajectory, in time from its start (s, ``time_from_start``).

    Times stay relative to the start: absolute wall-clock seconds (~1.8e9 s) as
    doubles would only resolve ~0.2 microseconds.

    Raises:
        InputError: missing joints, points with the wrong number of values, times
            not increasing, NaN/inf.
    """
    given = list(message.joint_names)
    missing = [name for name in names if name not in given]
    if missing:
        raise InputError(f"trajectory lacks joints {missing}, has {given}")
    if not message.points:
        raise InputError("trajectory has no points")
    where = [given.index(name) for name in names]
    times, positions, velocities, accelerations = [], [], [], []
    for index, point in enumerate(message.points):
        if len(point.positions) != len(given):
            raise InputError(f"point {index}: {len(point.positions)} positions for {len(given)} joints")
        for field, values, store in (("velocities", point.velocities, velocities),
                                     ("accelerations", point.accelerations, accelerations)):
            if len(values) not in (0, len(given)):
                raise InputError(f"point {index}: {len(values)} {field} for {len(given)} joints")
            store.append([values[i] for i in where] if len(values) else [0.0] * len(names))
        times.append(point.time_from_start.sec + point.time_from_start.nanosec * 1e-9)
        positions.append([point.positions[i] for i in where])
    return SampledReference(np.array(times), np.array(positions), np.array(velocities), np.array(accelerations))


# --------------------------------------------------------------------------- node
class ControllerNode(Node):
    """The ``controller`` node (see the module docstring for topics and safety).

    Parameters (``config/controller.yaml``; all read-only):
        robot (string): robot name or YAML path; "dualv".
        law (string): control law, one of :data:`LAWS`; "pd".
        rate (double): control rate (Hz), the sim's: sets the lockstep tags and the watchdog period; 1000.
        kp, kd (double[]): PD gains (law pd), one per actuator or one for all (N m/rad, N m s/rad).
        parameters_file (string): identified parameters (JSON) of the model-based laws; empty: nominal.
        natural_frequency_hz (double): CTC error dynamics / augmented PD bandwidth (Hz); 10.
        damping (double): their damping ratio; 1.
        ctc_kp, ctc_kd (double[]): CTC gains (1/s^2, 1/s), one per coordinate or one for all;
            empty: from natural_frequency_hz and damping.
        feedforward (bool): augmented_pd: add the inverse dynamics of the reference; true.
        pfc_kp, pfc_kv (double): PFC inner-loop gains (1/s^2, 1/s); 50, 68.
        pfc_response_periods (double): PFC closed-loop response time CLTR (control periods); 18.
        pfc_points (int[]): PFC coincidence points (control periods); [6, 12, 18].
        pfc_degree (int): degree of the PFC error extrapolation (eq. 29); 1.
        pfc_error_window (int): past errors the extrapolation is fitted to; 20.
        effort_limits (double[]): per-actuator torque limits (N m); empty: the URDF's.
        setpoint (double[]): fixed reference of the actuated joints (rad); empty: see setpoint_task.
        setpoint_task (double[]): fixed task pose (m, rad) solved for the actuated joints; empty:
            hold the first measured position.
        watchdog_periods (int): control periods without a state before zero torque; 50.
        safe_command (string): what to send when the law cannot give a command, ``zero`` or
            ``damping``; "zero".
        safe_damping (double[]): the damping law's gains (N m s/rad, N s/m), one or one per actuator; [5].
        velocity_filter_hz (double): cut-off of the velocity estimate of joints without a velocity
            reading (Hz); 50.
        log_period (double): minimum time between two reports of one kind of problem (s); 1.
        internal_stress_projection (bool): on actuation-redundant robots, remove the torques
            that only load the structure (Briot et al. 2015, eq. 50); true.

    Raises:
        PardynError: unknown robot or law, gains or limits of the wrong size.
    """

    def __init__(self, **node_options) -> None:
        super().__init__(NODE_NAME, **node_options)
        robot_name = declare(self, "robot", "dualv", "robot name (config/robots/<name>.yaml) or robot YAML path")
        law = declare(self, "law", "pd", f"control law, one of {list(LAWS)}")
        rate = declare(self, "rate", 1000.0, "control rate (Hz): the sim's, for lockstep tags and the watchdog",
                       low=1e-3, high=1e6)
        kp = declare(self, "kp", "double_array", "proportional gains (N m/rad), one per actuator or one for all")
        kd = declare(self, "kd", "double_array", "derivative gains (N m s/rad), one per actuator or one for all")
        parameters_file = declare(self, "parameters_file", "",
                                  "identified parameters (JSON) of the model-based laws; empty: nominal")
        natural_frequency = declare(self, "natural_frequency_hz", 10.0,
                                    "CTC error dynamics natural frequency / augmented PD bandwidth (Hz)",
                                    low=1e-6, high=1e5)
        damping = declare(self, "damping", 1.0, "damping ratio of the CTC error dynamics / augmented PD",
                          low=1e-6, high=100.0)
        ctc_kp = declare(self, "ctc_kp", "double_array",
                         "CTC gains Kp (1/s^2); empty: (2 pi natural_frequency_hz)^2")
        ctc_kd = declare(self, "ctc_kd", "double_array",
                         "CTC gains Kd (1/s); empty: 2 damping (2 pi natural_frequency_hz)")
        feedforward = declare(self, "feedforward", True,
                              "augmented_pd: add the inverse dynamics of the reference (Briot et al. 2015, Fig. 4)")
        pfc = dict(
            kp=declare(self, "pfc_kp", 50.0, "PFC inner-loop proportional gain (1/s^2)", low=1e-9, high=1e9),
            kv=declare(self, "pfc_kv", 68.0, "PFC inner-loop derivative gain (1/s)", low=0.0, high=1e9),
            response_periods=declare(self, "pfc_response_periods", 18.0,
                                     "PFC closed-loop response time CLTR (control periods)", low=1e-3, high=1e6),
            points=declare(self, "pfc_points", "integer_array", "PFC coincidence points (control periods)")
            or [6, 12, 18],
            degree=declare(self, "pfc_degree", 1, "PFC error extrapolation degree (eq. 29)", low=0, high=5),
            error_window=declare(self, "pfc_error_window", 20, "past errors the PFC extrapolation is fitted to",
                                 low=1, high=10_000),
        )
        limits = declare(self, "effort_limits", "double_array",
                         "per-actuator torque limits (N m); empty: the URDF <limit effort>")
        setpoint = declare(self, "setpoint", "double_array",
                           "fixed reference of the actuated joints (rad, m) until a trajectory arrives")
        setpoint_task = declare(self, "setpoint_task", "double_array",
                                "fixed task pose (m, rad) if 'setpoint' is empty; both empty: hold the first reading")
        watchdog_periods = declare(self, "watchdog_periods", 50,
                                   "control periods without a joint state before the controller outputs zero torque",
                                   low=1, high=1_000_000)
        log_period = declare(self, "log_period", 1.0, "minimum time between two reports of one kind of problem (s)",
                             low=0.0, high=3600.0)
        safe_command = declare(self, "safe_command", "zero",
                               f"command when the law cannot give one, one of {list(SAFE_COMMANDS)}")
        safe_damping = declare(self, "safe_damping", "double_array",
                               "damping gains of safe_command 'damping' (N m s/rad), one or one per actuator; "
                               "empty: 5") or [5.0]
        velocity_filter_hz = declare(self, "velocity_filter_hz", 50.0,
                                     "cut-off of the velocity estimate of joints without a velocity reading (Hz)",
                                     low=1e-3, high=1e6)
        projection = declare(self, "internal_stress_projection", True,
                             "actuation-redundant robots: remove the torques in the null space of J^T (eq. 50)")

        self.robot: Robot = load_robot(robot_name)
        self.names = tuple(self.robot.actuated_names)
        self.period_ns = period_ns(rate)
        self.law = self._make_law(law, kp, kd, limits, parameters_file=parameters_file,
                                  natural_frequency_hz=natural_frequency, damping=damping,
                                  ctc_kp=ctc_kp, ctc_kd=ctc_kd, feedforward=feedforward, rate=rate, pfc=pfc)
        self.joints = tuple(self.law.joints) if self.law.joints else self.names
        self._lift = MeasuredReference(self.robot) if self.joints != self.names else None
        redundant = len(self.robot.actuated_names) > len(self.robot.task_names)
        use_projection = projection and redundant and not self.law.minimum_norm
        self._projection = InternalStressProjection(self.robot) if use_projection else None
        self.watchdog_s = watchdog_periods * self.period_ns * 1e-9
        self.safe = SafeCommand(safe_command, self.law.limits, safe_damping)
        self._filter = JointStateFilter(velocity_filter_hz)
        self._holding_safe = False
        self.safe_answers = 0
        self._started_wall = time.monotonic()
        self._silence_reported = False
        self._hold = self._fixed_setpoint(setpoint, setpoint_task)
        self._trajectory: SampledReference | None = None  # in time from its start
        self._trajectory_start_ns = 0
        self._reporter = Reporter(self, log_period, what="more")
        self._last_state_wall: float | None = None
        self._last_tag = 0
        self._last_answer: tuple[int, np.ndarray] | None = None  # (stamp ns, tau) of the last command
        self._tripped = False
        self.answered = 0

        self._publisher = self.create_publisher(Float64MultiArray, COMMAND_TOPIC, CONTROL_QOS)
        self._states = self.create_subscription(JointState, STATE_TOPIC, self._on_state, SENSOR_QOS)
        self._reference = self.create_subscription(JointTrajectory, REFERENCE_TOPIC, self._on_trajectory, LATCHED_QOS)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._watchdog = self.create_timer(max(self.watchdog_s / 2.0, 1e-3), self._check_watchdog, clock=steady)
        self.get_logger().info(
            f"robot {self.robot.name}, law {law} ({self._describe_law()}), limits {self.law.limits.tolist()} N m (N for prismatic joints): "
            f"{self._states.topic_name} -> {self._publisher.topic_name}; reference {self._reference.topic_name}; "
            f"watchdog {watchdog_periods} periods of {self.period_ns * 1e-6:g} ms; "
            f"safe command {self.safe.describe()}"
        )

    # ------------------------------------------------------------ setup
    def _make_law(
        self, law: str, kp: list[float], kd: list[float], limits: list[float], *, parameters_file: str,
        natural_frequency_hz: float, damping: float, ctc_kp: list[float], ctc_kd: list[float],
        feedforward: bool, rate: float, pfc: dict,
    ) -> ControlLaw:
        if law not in LAWS:
            raise InputError(f"parameter law: unknown control law {law!r}, expected one of {list(LAWS)}")
        robot = self.robot
        try:
            if law == "pd":
                if not kp or not kd:
                    raise InputError(f"parameters kp and kd: the PD law needs gains for {list(self.names)}, "
                                     f"got {kp}, {kd}")
                return JointPD(kp, kd, limits=actuator_limits(robot, limits), joints=self.names)
            params: DynamicParameters | None = None
            if parameters_file:
                params = read_parameter_file(parameters_file, robot)
            limits = limits or None
            if law == "augmented_pd":
                return AugmentedPD(robot, params, bandwidth_hz=natural_frequency_hz, damping=damping,
                                   feedforward=feedforward, period_s=1.0 / rate, limits=limits)
            if law == "pfc":
                return PredictiveFunctionalControl(robot, params, period_s=1.0 / rate, limits=limits, **pfc)
            if bool(ctc_kp) != bool(ctc_kd):
                raise InputError(f"parameters ctc_kp and ctc_kd: give both or neither, got {ctc_kp}, {ctc_kd}")
            gains = (ctc_kp, ctc_kd) if ctc_kp else ctc_gains(natural_frequency_hz, damping)
            if law == "extended_ctc":
                return ExtendedComputedTorque(robot, params, kp=gains[0], kd=gains[1], limits=limits)
            space = "task" if law == "ctc_task" else "actuated"
            return ComputedTorque(robot, params, kp=gains[0], kd=gains[1], space=space, limits=limits)
        except InputError as error:
            raise InputError(f"controller parameters: {error}") from error

    def _describe_law(self) -> str:
        law = self.law
        if isinstance(law, JointPD | AugmentedPD | ComputedTorque | ExtendedComputedTorque):
            return f"{type(law).__name__}, kp {law.kp.tolist()}, kd {law.kd.tolist()}, joints {list(law.joints)}"
        if isinstance(law, PredictiveFunctionalControl):
            gains = law.gains
            return (f"PFC, inner kp {law.kp:g}, kv {law.kv:g}, alpha {gains.alpha:.4f}, points {list(gains.points)}, "
                    f"k0 {gains.k0:.6g}, degree {gains.degree}")
        return type(law).__name__

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
        trajectory = self._trajectory
        if trajectory is not None:
            t = (stamp_ns - self._trajectory_start_ns) * 1e-9  # s from the trajectory's start, exact
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
        self._trajectory, self._trajectory_start_ns = trajectory, start_ns
        self.get_logger().info(
            f"new reference: {len(message.points)} points from t = {(start_ns * 1e-9 + trajectory.start_time):.9g} s "
            f"to {(start_ns * 1e-9 + trajectory.end_time):.9g} s"
        )

    def _on_state(self, message: JointState) -> None:
        stamp_ns = stamp_to_ns(message.header.stamp)
        if len(message.position) != len(message.name) or len(message.velocity) not in (0, len(message.name)):
            self._reporter.warning("state lengths", f"dropped {STATE_TOPIC} message: {len(message.name)} names but "
                                   f"{len(message.position)} positions and {len(message.velocity)} velocities")
            return
        reading = self._filter.update(message.name, message.position, message.velocity, stamp_ns,
                                      time.monotonic_ns())
        if reading.stamp == "resend" and self._last_answer is not None and self._last_answer[0] == stamp_ns:
            self._publisher.publish(command_message(self._last_answer[1], self.names, self._last_tag))
            self._last_state_wall = time.monotonic()
            return
        try:
            position, velocity = actuated_readings(
                message, self.joints, what="actuated" if self._lift is None else "measured",
                velocities=reading.velocities)
        except InputError as error:
            self._reporter.warning("state", f"dropped {STATE_TOPIC} message: {error}")
            return
        self._report_reading(reading, stamp_ns)
        time_ns = reading.time_ns
        n_a = len(self.names)
        if self._hold is None:
            self._hold = JointReference.hold(position[:n_a])
            self.get_logger().info(f"holding the first measured position {position[:n_a].tolist()}")
        reference = self.reference(time_ns)
        try:
            if self._lift is not None:
                reference = self._lift(reference)  # actuated -> every joint the law reads
            tau = self.law.torques(position, velocity, reference)
            if self._projection is not None:
                tau = saturate(self._projection(position[:n_a], tau), self.law.limits)
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
        tag = step_of_stamp(stamp_ns, self.period_ns)
        self._publisher.publish(command_message(tau, self.names, tag))
        self._last_tag = tag
        self._last_answer = (stamp_ns, tau)
        self._last_state_wall = time.monotonic()
        self.answered += 1
        if self._tripped:
            self._tripped = False
            self.get_logger().info(f"{STATE_TOPIC} back at {stamp_ns * 1e-9:.6f} s: control resumed")

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

    def _check_watchdog(self) -> None:
        last = self._last_state_wall
        if last is None:
            self._check_silent_publishers()
            return  # not started: nothing to hold yet
        silent_s = time.monotonic() - last
        if silent_s <= self.watchdog_s:
            return
        self._tripped = True
        self._publisher.publish(command_message(np.zeros(len(self.names)), self.names, self._last_tag))
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
