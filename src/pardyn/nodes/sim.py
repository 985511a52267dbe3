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
``k mod 2^32`` (:func:`pardyn.nodes.common.step_of_stamp`): the ``controller``
node answers each state message once with the tag of its stamp. On that
command the sim holds the torques over ``[t_k, t_k+1]``, then publishes state
``k+1``, whose ``effort`` is that command (saturated). Simulated time does
not advance without the command of the current step, so the run is
deterministic and no step is missed or doubled; other commands are dropped:
older tags silently (answers to a re-sent state), others with a warning.
While it waits, the sim re-sends state ``k`` every half watchdog period
(DDS discovery of a controller that starts later, a lost message); a
controller answers again with the same tag, and the duplicate is dropped.

**Free-running** (``lockstep: false``): a steady-clock timer steps the plant
one period per tick (sim time follows the wall clock as long as the host
keeps up) with the latest valid command, whatever its tag.

Safety:

* watchdog: free-running, a command older than ``watchdog_periods`` periods
  is replaced by ZERO torque, with an error logged (and an info when commands
  come back); lockstep, simulated time stands still without a command (no
  torque acts) and the sim logs an error once it has waited
  ``watchdog_periods`` periods of wall time after the first command;
* commands with NaN/inf or the wrong number of values are rejected with a
  warning, the node goes on (lockstep: still waiting for a valid one);
* commands are saturated at the per-actuator ``effort_limits`` (the URDF
  ``<limit effort>`` by default) with a warning naming the joints;
* the plant's closure violation above ``closure_tolerance`` is logged as an error.

Run: ``ros2 run pardyn sim --ros-args --params-file config/sim.yaml``.
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock as ClockMessage
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from pardyn.control import actuator_limits, saturate
from pardyn.dynamics.parameters import read_parameter_file
from pardyn.errors import InputError
from pardyn.nodes.common import (
    COMMAND_TOPIC,
    CONTROL_QOS,
    SEQUENCE_MODULUS,
    STATE_TOPIC,
    Reporter,
    declare,
    ns_to_stamp,
    period_ns,
    run_node,
)
from pardyn.plants import Plant, PlantState
from pardyn.plants.measurement import VELOCITY_MODES, MeasurementModel
from pardyn.robot import Robot, load_robot

__all__ = ["GROUND_TRUTH_TOPIC", "MOTOR_STATE_TOPIC", "PLANTS", "SimNode", "check_command", "main", "make_plant"]

NODE_NAME = "sim"
GROUND_TRUTH_TOPIC = "ground_truth/joint_states"
PLANTS = ("mujoco", "pinocchio", "flexible")
MOTOR_STATE_TOPIC = "motor_states"
STALE_WINDOW = 1000  # older tags within this many steps are duplicates, dropped silently


def check_command(data, size: int, names) -> np.ndarray:
    """A command's torques (size,), or InputError naming the problem (wrong length, NaN/inf)."""
    values = np.asarray(data, dtype=float)
    if values.size != size:
        raise InputError(f"expected {size} torques {list(names)}, got {values.size}")
    bad = [name for name, value in zip(names, values) if not math.isfinite(value)]
    if bad:
        raise InputError(f"non-finite torques for {bad}: {values.tolist()}")
    return values


def make_plant(robot: Robot, kind: str, params=None, *, payload=None, timestep: float = 0.0,
               coulomb_width: float = 0.0) -> Plant:
    """A plant of ``kind`` (:data:`PLANTS`) for ``robot`` simulating the dynamic parameters ``params``.

    ``params``: ``robot.nominal_parameters`` by default (the pinocchio plant adds the
    drive offsets ``tau_off``; MuJoCo builds counterweights as bodies, see
    :mod:`pardyn.plants.mujoco_plant`); ``timestep`` 0 keeps the plant's default;
    ``coulomb_width`` is the pinocchio plant's friction smoothing (rad/s).
    """
    options = {} if timestep <= 0.0 else {"timestep": timestep}
    if kind == "flexible":
        from pardyn.dynamics.rotor import load_rotor_model  # noqa: PLC0415
        from pardyn.plants.flexible_joint import FlexibleJointPlant  # noqa: PLC0415

        if payload is not None:
            raise InputError("parameter payload_mass: the flexible-joint plant carries no payload")
        return FlexibleJointPlant(robot, load_rotor_model(robot), params=params, **options)
    if kind == "mujoco":
        from pardyn.plants.mujoco_plant import MujocoPlant  # noqa: PLC0415 - mujoco only when asked for

        return MujocoPlant(robot, params, payload=payload, **options)
    if kind == "pinocchio":
        from pardyn.plants.pinocchio_plant import PinocchioPlant  # noqa: PLC0415

        return PinocchioPlant(robot, params, payload=payload, coulomb_width=coulomb_width, **options)
    raise InputError(f"parameter plant: unknown plant {kind!r}, expected one of {list(PLANTS)}")


class SimNode(Node):
    """The ``sim`` node (see the module docstring for topics, lockstep protocol and safety).

    Parameters (``config/sim.yaml``; all read-only):
        robot (string): robot name or YAML path; "dualv".
        plant (string): one of :data:`PLANTS`; "mujoco".
        parameters_file (string): dynamic parameters of the simulated robot (a JSON
            result file, :func:`pardyn.dynamics.parameters.read_parameter_file`); empty: the YAML's.
        rate (double): control rate (Hz); 1000.
        lockstep (bool): lockstep with the controller (true) or free-running at wall-clock rate; true.
        watchdog_periods (int): periods without a command before zero torque / an error; 50.
        effort_limits (double[]): per-actuator torque limits (N m); empty: the URDF's.
        initial_task (double[]): task pose at t = 0 (m, rad); empty: the robot's home.
        plant_timestep (double): integration step of the plant (s); 0: the plant's default.
        coulomb_width (double): friction smoothing of the pinocchio plant (rad/s); 0.01.
        payload_mass (double): mass of a payload fixed to the platform (kg); 0: none.
        payload_com (double[]): its centre of mass in the platform frame (m); empty: the origin.
        payload_inertia (double[]): its inertia about the centre of mass, (ixx, iyy, izz, ixy, ixz, iyz)
            in the platform frame (kg m^2); empty: a point mass.
        counts_per_revolution, length_resolution, torque_noise, torque_noise_floor, velocities, seed:
            the measurement model (:class:`pardyn.plants.measurement.MeasurementModel`: encoders
            2^17 counts per turn, effort noise 1 % + 1e-3 N m, velocities by backward differences
            of the quantized positions).
        publish_clock (bool): publish /clock; true.
        publish_ground_truth (bool): publish ground_truth/joint_states; true.
        history_depth (int): queue depth (reliable, keep last) of joint_states and the ground truth; 10.
        closure_tolerance (double): closure violation logged as an error above it (m, rad); 1e-6.
        log_period (double): minimum time between two reports of one kind of problem (s); 1.
    """

    def __init__(self, **node_options) -> None:
        super().__init__(NODE_NAME, **node_options)
        robot_name = declare(self, "robot", "dualv", "robot name (config/robots/<name>.yaml) or robot YAML path")
        plant_kind = declare(self, "plant", "mujoco", f"simulated plant, one of {list(PLANTS)}")
        parameters_file = declare(self, "parameters_file", "",
                                  "dynamic parameters of the simulated robot (JSON result file); empty: the YAML's")
        rate = declare(self, "rate", 1000.0, "control rate (Hz)", low=1e-3, high=1e6)
        self.lockstep = declare(self, "lockstep", True,
                                "advance one period per command of the current step (true) or free-running (false)")
        watchdog_periods = declare(self, "watchdog_periods", 50,
                                   "control periods without a command before zero torque (free) or an error (lockstep)",
                                   low=1, high=1_000_000)
        limits = declare(self, "effort_limits", "double_array",
                         "per-actuator torque limits (N m); empty: the URDF <limit effort>")
        initial_task = declare(self, "initial_task", "double_array", "task pose at t = 0 (m, rad); empty: home")
        plant_timestep = declare(self, "plant_timestep", 0.0, "plant integration step (s); 0: the plant's default",
                                 low=0.0, high=1.0)
        coulomb_width = declare(self, "coulomb_width", 0.01,
                                "Coulomb friction smoothing of the pinocchio plant (rad/s)", low=0.0, high=1e3)
        payload_mass = declare(self, "payload_mass", 0.0, "payload fixed to the platform (kg); 0: none",
                               low=0.0, high=1e6)
        payload_com = declare(self, "payload_com", "double_array", "payload centre of mass in the platform frame (m)")
        payload_inertia = declare(self, "payload_inertia", "double_array",
                                  "payload inertia about its com, ixx iyy izz ixy ixz iyz (kg m^2); empty: point mass")
        measurement = self._declare_measurement()
        publish_clock = declare(self, "publish_clock", True, "publish /clock (simulated time)")
        publish_truth = declare(self, "publish_ground_truth", True, f"publish {GROUND_TRUTH_TOPIC} (every joint)")
        depth = declare(self, "history_depth", 10,
                        "queue depth of joint_states and ground truth: raise it so that a slow subscriber "
                        "(a recorder, a test) misses nothing", low=1, high=1_000_000)
        self.closure_tolerance = declare(self, "closure_tolerance", 1e-6,
                                         "closure violation logged as an error above it (m, rad)", low=0.0, high=1.0)
        log_period = declare(self, "log_period", 1.0, "minimum time between two reports of one kind of problem (s)",
                             low=0.0, high=3600.0)

        self.robot = load_robot(robot_name)
        robot = self.robot
        # the dynamic parameters simulated
        self.dynamic_parameters = (read_parameter_file(parameters_file, robot) if parameters_file
                                   else robot.nominal_parameters)
        self.names = tuple(robot.actuated_names)
        self.limits = actuator_limits(robot, limits)
        self.period_ns = period_ns(rate)
        self.period_s = self.period_ns * 1e-9
        self.watchdog_s = watchdog_periods * self.period_s
        payload = self._payload(payload_mass, payload_com, payload_inertia)
        self.plant = make_plant(robot, plant_kind, self.dynamic_parameters, payload=payload, timestep=plant_timestep,
                                coulomb_width=coulomb_width)
        q0 = robot.home if not initial_task else robot.solve_inverse(initial_task).q
        self.plant.reset(q0)
        self.measurement = self._make_measurement(measurement)
        self._reporter = Reporter(self, log_period)

        # loop state
        self.step = 0  # index k of the state last published
        self.commands_applied = 0
        self.duplicates = 0
        self.resends = 0
        self.max_closure_violation = 0.0
        self._armed = False  # a command has been applied (lockstep) / received (free)
        self._last_publish_wall = time.monotonic()
        self._latest: np.ndarray | None = None  # free-running: latest valid command
        self._latest_wall = -math.inf
        self._zero_since: float | None = None

        state_qos = QoSProfile(depth=depth, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
        self._state_publisher = self.create_publisher(JointState, STATE_TOPIC, state_qos)
        self._truth_publisher = (
            self.create_publisher(JointState, GROUND_TRUTH_TOPIC, state_qos) if publish_truth else None
        )
        self._clock_publisher = self.create_publisher(ClockMessage, "/clock", 10) if publish_clock else None
        self._motor_publisher = (  # rotor encoders of a flexible-joint plant
            self.create_publisher(JointState, MOTOR_STATE_TOPIC, state_qos) if plant_kind == "flexible" else None
        )
        self._commands = self.create_subscription(Float64MultiArray, COMMAND_TOPIC, self._on_command, CONTROL_QOS)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        if self.lockstep:
            self._timer = self.create_timer(max(self.watchdog_s / 2.0, 1e-3), self._lockstep_watch, clock=steady)
        else:
            self._timer = self.create_timer(self.period_s, self._free_tick, clock=steady)
        self.get_logger().info(
            f"robot {robot.name} on the {plant_kind} plant, {'lockstep' if self.lockstep else 'free-running'} at "
            f"{1.0 / self.period_s:g} Hz: {self._commands.topic_name} {list(self.names)} -> "
            f"{self._state_publisher.topic_name} {list(self.measurement.names)}; limits {self.limits.tolist()} N m (N for prismatic joints)"
            + (f"; payload {payload_mass:g} kg" if payload is not None else "")
        )
        self._publish(self.plant.state())

    # ------------------------------------------------------------ setup
    def _payload(self, mass: float, com: list[float], inertia: list[float]):
        if mass <= 0.0:
            return None
        from pardyn.plants.pinocchio_plant import Payload  # noqa: PLC0415

        com = np.zeros(3) if not com else np.asarray(com, dtype=float)
        if com.shape != (3,):
            raise InputError(f"parameter payload_com: expected 3 coordinates (m), got {com.tolist()}")
        matrix = np.zeros((3, 3))
        if inertia:
            if len(inertia) != 6:
                raise InputError(f"parameter payload_inertia: expected ixx iyy izz ixy ixz iyz, got {inertia}")
            ixx, iyy, izz, ixy, ixz, iyz = inertia
            matrix = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)
        return Payload(mass, com, matrix)

    def _declare_measurement(self) -> dict:
        return {
            "counts_per_revolution": declare(self, "counts_per_revolution", 2**17,
                                             "encoder counts per turn of a measured revolute joint",
                                             low=1, high=2**62),
            "length_resolution": declare(self, "length_resolution", 1e-6,
                                         "encoder step of a measured prismatic joint (m)", low=1e-12, high=1.0),
            "torque_noise": declare(self, "torque_noise", 0.01,
                                    "relative standard deviation of the effort noise (0.01 = 1 % of |tau|)",
                                    low=0.0, high=10.0),
            "torque_noise_floor": declare(self, "torque_noise_floor", 1e-3,
                                          "absolute standard deviation of the effort noise (N m)", low=0.0, high=1e6),
            "velocities": declare(self, "velocities", "difference",
                                  f"published joint velocities, one of {list(VELOCITY_MODES)}"),
            "seed": declare(self, "seed", 0, "seed of the effort noise", low=0, high=2**31 - 1),
        }

    def _make_measurement(self, options: dict) -> MeasurementModel:
        if options["velocities"] == "none":
            raise InputError("parameter velocities: 'none' leaves the controller without velocities; "
                             "use 'difference' (the drive's estimate) or 'exact'")
        model = MeasurementModel(self.robot, **options)
        actuated = set(self.names)
        self._effort_rows = [model.torque_names.index(n) if n in actuated else None for n in model.names]
        return model

    # ------------------------------------------------------------ publishing
    def _publish(self, state: PlantState) -> None:
        """Measure ``state`` (state ``self.step``) and publish it; keep the messages for re-sending."""
        stamp = ns_to_stamp(self.step * self.period_ns)
        reading = self.measurement.measure(state)
        message = JointState()
        message.header.stamp = stamp
        message.name = list(reading.names)
        message.position = reading.positions.tolist()
        message.velocity = reading.velocities.tolist()
        # one effort per name: the actuators' measured torques, zero on the sensed passive joints
        message.effort = [0.0 if row is None else float(reading.torques[row]) for row in self._effort_rows]
        truth = None
        if self._truth_publisher is not None:
            truth = JointState()
            truth.header.stamp = stamp
            truth.name = list(self.robot.joint_names)
            truth.position = state.q.tolist()
            truth.velocity = state.qdot.tolist()
        motor = None
        if self._motor_publisher is not None:
            motor = JointState()
            motor.header.stamp = stamp
            motor.name = list(self.names)
            motor.position = self.measurement.quantize(state.theta)[1].tolist()
            motor.effort = list(message.effort)
        self._sent = (message, truth, ClockMessage(clock=stamp), motor)
        self._send()

    def _send(self) -> None:
        """(Re-)send the messages of the current state: identical, so a re-send changes nothing downstream."""
        message, truth, clock, motor = self._sent
        self._state_publisher.publish(message)
        if truth is not None:
            self._truth_publisher.publish(truth)
        if self._clock_publisher is not None:
            self._clock_publisher.publish(clock)
        if motor is not None:
            self._motor_publisher.publish(motor)
        self._last_publish_wall = time.monotonic()

    def _advance(self, tau: np.ndarray) -> None:
        """Hold ``tau`` (n_a,) over one period, then publish the new state."""
        applied = saturate(tau, self.limits)
        clipped = [name for name, a, b in zip(self.names, applied, tau) if a != b]
        if clipped:
            self._reporter.warning("saturation", f"torques of {clipped} saturated at {self.limits.tolist()} N m (N for prismatic joints)")
        state = self.plant.step(applied, self.period_s)
        self.step += 1
        violation = self.plant.closure_violation()
        self.max_closure_violation = max(self.max_closure_violation, violation)
        if violation > self.closure_tolerance:
            self._reporter.error(
                "closure", f"closure violation {violation:.3g} > {self.closure_tolerance:g} at t = {state.time:.6f} s"
            )
        self._publish(state)

    # ------------------------------------------------------------ callbacks
    def _on_command(self, message: Float64MultiArray) -> None:
        try:
            tau = check_command(message.data, len(self.names), self.names)
        except InputError as error:
            self._reporter.warning("command", f"rejected {COMMAND_TOPIC} message: {error}")
            return
        if not self.lockstep:
            self._latest = tau
            self._latest_wall = time.monotonic()
            return
        tag = int(message.layout.data_offset)
        expected = self.step % SEQUENCE_MODULUS
        if tag != expected:
            behind = (expected - tag) % SEQUENCE_MODULUS
            if 0 < behind <= STALE_WINDOW:
                self.duplicates += 1  # an answer to a re-sent state: the step was already taken
            else:
                self._reporter.warning(
                    "tag", f"dropped a command tagged {tag} while waiting for step {expected} "
                    "(do the sim's and the controller's rate parameters agree?)"
                )
            return
        if not self._armed:
            self._armed = True
            self.get_logger().info(f"first command received: lockstep running from step {self.step}")
        self.commands_applied += 1
        self._advance(tau)

    def _lockstep_watch(self) -> None:
        waited = time.monotonic() - self._last_publish_wall
        if waited < self.watchdog_s:
            return
        if self._armed:
            self._reporter.error(
                "watchdog",
                f"no command for step {self.step} for {waited * 1e3:.0f} ms (> {self.watchdog_s * 1e3:g} ms): "
                f"simulated time holds at {self.step * self.period_s:.6f} s, no torque acts; re-sending the state",
            )
        else:
            self._reporter.info("waiting", f"waiting for the first command on {self._commands.topic_name}")
        self.resends += 1
        self._send()

    def _free_tick(self) -> None:
        now = time.monotonic()
        fresh = self._latest is not None and now - self._latest_wall <= self.watchdog_s
        if fresh:
            if self._zero_since is not None:
                self.get_logger().info(f"commands back at t = {self.step * self.period_s:.6f} s")
                self._zero_since = None
            self._armed = True
            tau = self._latest
        else:
            tau = np.zeros(len(self.names))
            if self._armed and self._zero_since is None:
                self._zero_since = now
            if self._armed:
                self._reporter.error(
                    "watchdog",
                    f"no command for {(now - self._latest_wall) * 1e3:.0f} ms (> {self.watchdog_s * 1e3:g} ms): "
                    "applying zero torque",
                )
        self._advance(tau)

    def summary(self) -> str:
        """One line on the run: steps, commands, duplicates, re-sends, max closure violation."""
        return (
            f"{self.step} steps ({self.step * self.period_s:.3f} s simulated), "
            f"{self.commands_applied} commands applied, "
            f"{self.duplicates} duplicates dropped, {self.resends} state re-sends, "
            f"max closure violation {self.max_closure_violation:.3g}"
        )

    def destroy_node(self) -> None:
        if not hasattr(self, "max_closure_violation"):  # the constructor failed: nothing ran
            super().destroy_node()
            return
        text = f"sim summary: {self.summary()}"
        if self.context.ok():
            self.get_logger().info(text)
        else:  # after Ctrl-C the context is gone: rosout cannot take it, stderr can
            print(f"[INFO] [{self.get_logger().name}]: {text}", file=sys.stderr, flush=True)
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    """Run the node until Ctrl-C/SIGTERM; exit code 0, or 1 if it cannot start."""
    return run_node(SimNode, NODE_NAME, args)


if __name__ == "__main__":
    sys.exit(main())
