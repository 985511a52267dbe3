"""ROS 2 node ``closure_solver``: every joint and the platform pose from the measured joints.

A closed-loop robot only measures some of its joints: the actuated ones ``q_a``
and, on robots with redundant sensing (3-RRR, Zubizarreta et al. 2010, section
4.2), some passive ones. This node solves the forward kinematic problem
``phi(q) = 0, q[I] = q_I`` for the whole tree configuration ``q`` (nv,) with
:meth:`pardyn.Robot.solve_forward` (least squares on the readings when there
are more than degrees of freedom, e.g. the actuation-redundant DualV, Briot et
al. 2015), warm-started from its previous answer, and the joint velocities
with the pseudo-inverse of the measured rows of the velocity map (DualV paper
eqs. (21)-(22), :meth:`pardyn.kinematics.differential.DifferentialKinematics.velocities_from`):

    qdot = W (W_I^+ qdot_I),    W = [I ; -K_D^-1 K_x]              # (nv, n), eq. (9)

Topics (relative names, so ``__ns`` remapping moves them all):

* subscribes ``joint_states`` (sensor_msgs/JointState, best effort, depth 10):
  the robot's actuated joints, plus all of its sensed passive joints when the
  message carries them (then they are used too). Other names are ignored.
* publishes ``closed_loop/joint_states`` (sensor_msgs/JointState): every joint
  of the tree, names :attr:`pardyn.Robot.joint_names`, the input's header;
  velocities when the input has velocities for the joints it used.
* publishes ``platform/pose`` (geometry_msgs/PoseStamped) in ``frame_id``:
  ``(x, y, 0)`` and the rotation about ``z`` by the task angle (``phi``,
  ``theta``) if the robot has one, identity otherwise.

Parameters (``config/closure_solver.yaml``): ``robot``, ``frame_id``,
``max_condition``, ``log_period``, see :class:`ClosureSolverNode`.

Velocities given as NaN for some joints (a joint_state_broadcaster for a joint
without a velocity interface) are estimated from the positions
(:class:`pardyn.control.joint_state.JointStateFilter`, 50 Hz), with an info
naming them; the positions are used either way. Without a velocity field the
node publishes positions only.

A message that cannot be used (wrong or missing names, lengths that differ,
NaN/inf positions, an unreachable or singular configuration) is dropped with a warning
or an error naming the problem, at most once per ``log_period`` per kind of
problem; the node keeps running and keeps its last good warm start.

Run: ``ros2 run pardyn closure_solver --ros-args -p robot:=rrr3``, or
``ros2 launch pardyn closure_solver.launch.py``.
"""

from __future__ import annotations

import math
import sys
import traceback
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import PoseStamped
from rcl_interfaces.msg import FloatingPointRange, ParameterType
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from pardyn.control.joint_state import JointStateFilter
from pardyn.errors import DescriptionError, InputError, PardynError, SingularityError
from pardyn.kinematics.solver import Solution
from pardyn.nodes.common import ReportThrottle, Reporter, descriptor, run_node, stamp_to_ns
from pardyn.robot import Robot, load_robot

__all__ = [
    "ClosedLoopState",
    "ClosureSolverNode",
    "ClosureTracker",
    "JointStateError",
    "PlanarPose",
    "main",
]

NODE_NAME = "closure_solver"
INPUT_TOPIC = "joint_states"
JOINTS_TOPIC = "closed_loop/joint_states"
POSE_TOPIC = "platform/pose"
QUEUE_DEPTH = 10


# --------------------------------------------------------------------------- pure part (no rclpy)
class JointStateError(InputError):
    """A joint-state reading the solver cannot use.

    Attributes:
        kind: ``"names"`` (missing, duplicated or partial sensed names),
            ``"lengths"`` (as many positions/velocities as names expected) or
            ``"non_finite"`` (NaN or inf in a value that is used).
    """

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class PlanarPose:
    """Pose of the platform of a planar robot in the base frame.

    Attributes:
        x_m, y_m: platform reference point (m).
        angle_rad: rotation about ``z`` (rad), None for a robot whose task has no angle.
    """

    x_m: float
    y_m: float
    angle_rad: float | None

    def quaternion(self) -> tuple[float, float, float, float]:
        """``(x, y, z, w)`` of the rotation about ``z`` by ``angle_rad`` (identity without angle)."""
        if self.angle_rad is None:
            return (0.0, 0.0, 0.0, 1.0)
        half = 0.5 * self.angle_rad
        return (0.0, 0.0, math.sin(half), math.cos(half))


@dataclass(frozen=True)
class ClosedLoopState:
    """Answer to one joint-state reading.

    Attributes:
        q: every joint position, :attr:`pardyn.Robot.joint_names` order, shape (nv,) (rad, m).
        qdot: every joint velocity, shape (nv,) (rad/s, m/s), None without measured velocities.
        pose: the platform pose read from the task coordinates of ``q``.
        solution: the solver's report (iterations, residual, conditioning).
        used_sensed: whether the sensed passive joints were part of the readings.
    """

    q: np.ndarray
    qdot: np.ndarray | None
    pose: PlanarPose
    solution: Solution
    used_sensed: bool


class ClosureTracker:
    """Warm-started forward kinematics of a robot from named joint readings.

    Keeps the last solution as the start of the next solve (the robot's home
    before the first one), so a stream of readings follows the robot's
    assembly mode; a reading that fails leaves it unchanged.

    Args:
        robot: the robot; its task must name ``x`` and ``y`` (planar platform)
            and at most one angle coordinate.

    Raises:
        DescriptionError: the robot's task is not a planar pose.
    """

    def __init__(self, robot: Robot) -> None:
        self.robot = robot
        task = list(robot.task_names)
        missing = [name for name in ("x", "y") if name not in task]
        if missing:
            raise DescriptionError(
                f"{robot.description.source}: task: {NODE_NAME} needs a planar platform pose, "
                f"but the task coordinates {task} lack {missing}"
            )
        self._x_index = int(robot.task_indices[task.index("x")])
        self._y_index = int(robot.task_indices[task.index("y")])
        angles = [int(i) for i in robot.task_indices if robot.solver.angles[i]]
        if len(angles) > 1:
            raise DescriptionError(
                f"{robot.description.source}: task: {NODE_NAME} expects at most one angle (rotation about z), "
                f"got {[robot.joint_names[i] for i in angles]}"
            )
        self._angle_index = angles[0] if angles else None
        self._start = robot.home.copy()  # (nv,)

    @property
    def start(self) -> np.ndarray:
        """The warm start of the next solve, shape (nv,) (a copy)."""
        return self._start.copy()

    def pose(self, q: np.ndarray) -> PlanarPose:
        """Platform pose read from the task coordinates of ``q`` (nv,)."""
        angle = None if self._angle_index is None else float(q[self._angle_index])
        return PlanarPose(float(q[self._x_index]), float(q[self._y_index]), angle)

    def _readings(
        self, names: Sequence[str], positions: Sequence[float], velocities: Sequence[float]
    ) -> tuple[list[str], np.ndarray, np.ndarray | None]:
        """The names used, their positions (k,) and velocities (k,) or None."""
        robot = self.robot
        names = list(names)
        if len(positions) != len(names):
            raise JointStateError(
                f"{len(names)} names but {len(positions)} positions", kind="lengths"
            )
        if len(velocities) not in (0, len(names)):
            raise JointStateError(
                f"{len(names)} names but {len(velocities)} velocities (expected 0 or {len(names)})",
                kind="lengths",
            )
        duplicated = sorted(name for name, count in Counter(names).items() if count > 1)
        if duplicated:
            raise JointStateError(f"duplicated joint names {duplicated}", kind="names")
        missing = [name for name in robot.actuated_names if name not in names]
        if missing:
            raise JointStateError(
                f"missing actuated joints {missing}: {robot.name} needs {list(robot.actuated_names)}, "
                f"got {names}",
                kind="names",
            )
        used = list(robot.actuated_names)
        sensed_present = [name for name in robot.sensed_names if name in names]
        if sensed_present:
            if len(sensed_present) != len(robot.sensed_names):
                absent = [name for name in robot.sensed_names if name not in names]
                raise JointStateError(
                    f"sensed joints {sensed_present} without {absent}: give all of "
                    f"{list(robot.sensed_names)} or none",
                    kind="names",
                )
            used += list(robot.sensed_names)
        where = [names.index(name) for name in used]
        values = np.array([positions[i] for i in where], dtype=float)  # (k,)
        bad = [name for name, value in zip(used, values) if not math.isfinite(value)]
        if bad:
            raise JointStateError(f"non-finite positions of {bad}", kind="non_finite")
        if len(velocities) == 0:
            return used, values, None
        rates = np.array([velocities[i] for i in where], dtype=float)  # (k,)
        bad = [name for name, value in zip(used, rates) if not math.isfinite(value)]
        if bad:
            raise JointStateError(f"non-finite velocities of {bad}", kind="non_finite")
        return used, values, rates

    def update(
        self,
        names: Sequence[str],
        positions: Sequence[float],
        velocities: Sequence[float] = (),
    ) -> ClosedLoopState:
        """Solve the loops for one reading (a sensor_msgs/JointState's three arrays).

        Args:
            names: joint names, the robot's actuated joints at least.
            positions: one per name (rad, m).
            velocities: none, or one per name (rad/s, m/s).

        Raises:
            JointStateError: the reading cannot be used.
            KinematicsError: no closed configuration (unreachable, singular, other mode).
        """
        robot = self.robot
        used, values, rates = self._readings(names, positions, velocities)
        n_actuated = len(robot.actuated_names)
        with_sensed = len(used) > n_actuated
        solution = robot.solve_forward(
            values[:n_actuated], sensed=values[n_actuated:] if with_sensed else None, start=self._start
        )
        qdot = None
        if rates is not None:
            indices = robot.measured_indices if with_sensed else robot.actuated_indices
            try:
                qdot = robot.differential.velocities_from(solution.q, indices, rates)  # (nv,)
            except np.linalg.LinAlgError as error:
                raise SingularityError(
                    f"joint velocities at {robot.solver.describe(solution.q)}: {error}",
                    kind="serial",
                    condition=math.inf,
                ) from error
        self._start = solution.q.copy()
        return ClosedLoopState(solution.q, qdot, self.pose(solution.q), solution, with_sensed)


_ReportThrottle = ReportThrottle  # the name this module's tests know it by


# --------------------------------------------------------------------------- ROS adapter
_descriptor = descriptor


class ClosureSolverNode(Node):
    """The ``closure_solver`` node (see the module docstring for topics).

    Parameters:
        robot (string, read-only): robot name (``config/robots/<name>.yaml``) or YAML path; "dualv".
        frame_id (string): ``header.frame_id`` of ``platform/pose``; "base_link".
        max_condition (double, read-only): condition number of a closure Jacobian block above
            which a configuration is rejected as singular; 1e6.
        log_period (double, read-only): minimum time between two reports of the same kind of
            dropped message (s); 1.0.

    Raises:
        PardynError: the robot cannot be loaded or has no planar platform pose.
    """

    def __init__(self, **node_options) -> None:
        super().__init__(NODE_NAME, **node_options)
        robot_name = self.declare_parameter(
            "robot",
            "dualv",
            _descriptor(
                "robot name (config/robots/<name>.yaml of pardyn) or path to a robot YAML",
                ParameterType.PARAMETER_STRING,
                read_only=True,
            ),
        ).value
        self.declare_parameter(
            "frame_id",
            "base_link",
            _descriptor("header.frame_id of platform/pose (the robot's base frame)", ParameterType.PARAMETER_STRING),
        )
        max_condition = self.declare_parameter(
            "max_condition",
            1e6,
            _descriptor(
                "condition number of a closure Jacobian block above which a configuration is singular",
                ParameterType.PARAMETER_DOUBLE,
                read_only=True,
                floating_point_range=[FloatingPointRange(from_value=1.0, to_value=1e16)],
            ),
        ).value
        log_period = self.declare_parameter(
            "log_period",
            1.0,
            _descriptor(
                "minimum time between two reports of the same kind of dropped message (s)",
                ParameterType.PARAMETER_DOUBLE,
                read_only=True,
                floating_point_range=[FloatingPointRange(from_value=0.0, to_value=3600.0)],
            ),
        ).value
        self.robot = load_robot(robot_name, max_condition=max_condition)
        self.tracker = ClosureTracker(self.robot)
        self._filter = JointStateFilter()
        self._reporter = Reporter(self, log_period, what="more dropped")
        input_qos = QoSProfile(
            depth=QUEUE_DEPTH, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT
        )
        self._joints_publisher = self.create_publisher(JointState, JOINTS_TOPIC, QUEUE_DEPTH)
        self._pose_publisher = self.create_publisher(PoseStamped, POSE_TOPIC, QUEUE_DEPTH)
        self._subscription = self.create_subscription(JointState, INPUT_TOPIC, self._on_joint_state, input_qos)
        sensed = f" (+ sensed {list(self.robot.sensed_names)} when present)" if self.robot.sensed_names else ""
        self.get_logger().info(
            f"robot {self.robot.name} from {self.robot.description.source}: "
            f"{self._subscription.topic_name} {list(self.robot.actuated_names)}{sensed} -> "
            f"{self._joints_publisher.topic_name} ({self.robot.nv} joints), {self._pose_publisher.topic_name}"
        )

    def _report(self, kind: str, text: str, *, error: bool) -> None:
        """Log ``text`` (a warning, or an error) unless ``kind`` was reported less than ``log_period`` ago."""
        if error:
            self._reporter.error(kind, text)
        else:
            self._reporter.warning(kind, text)

    def _on_joint_state(self, message: JointState) -> None:
        velocities = message.velocity
        if len(message.position) == len(message.name) and len(velocities) in (0, len(message.name)):
            reading = self._filter.update(message.name, message.position, velocities,
                                          stamp_to_ns(message.header.stamp), self.get_clock().now().nanoseconds)
            if reading.estimated_nan:
                self._reporter.info("velocities nan", f"{INPUT_TOPIC} gives NaN/inf velocities for "
                                    f"{list(reading.estimated_nan)}: estimated from the positions (50 Hz filter)")
            if len(velocities):  # without a velocity field: positions only (as documented above)
                velocities = reading.velocities
        try:
            state = self.tracker.update(message.name, message.position, velocities)
        except JointStateError as error:
            self._report(error.kind, f"dropped {INPUT_TOPIC} message: {error}", error=False)
            return
        except PardynError as error:
            kind = type(error).__name__
            self._report(kind, f"dropped {INPUT_TOPIC} message: {kind}: {error}", error=True)
            return
        except Exception as error:  # noqa: BLE001 - a bug on one message must not stop the estimator
            kind = type(error).__name__
            self._report(
                f"unexpected {kind}",
                f"dropped {INPUT_TOPIC} message, unexpected {kind}: {error}\n{traceback.format_exc()}",
                error=True,
            )
            return
        joints = JointState()
        joints.header = message.header
        joints.name = list(self.robot.joint_names)
        joints.position = state.q.tolist()
        if state.qdot is not None:
            joints.velocity = state.qdot.tolist()
        self._joints_publisher.publish(joints)

        pose = PoseStamped()
        pose.header.stamp = message.header.stamp
        pose.header.frame_id = self.get_parameter("frame_id").value
        pose.pose.position.x = state.pose.x_m
        pose.pose.position.y = state.pose.y_m
        pose.pose.position.z = 0.0
        qx, qy, qz, qw = state.pose.quaternion()
        pose.pose.orientation.x = qx
        pose.pose.orientation.y = qy
        pose.pose.orientation.z = qz
        pose.pose.orientation.w = qw
        self._pose_publisher.publish(pose)


def main(args: list[str] | None = None) -> int:
    """Run the node until Ctrl-C/SIGTERM; exit code 0, or 1 if it cannot start."""
    return run_node(ClosureSolverNode, NODE_NAME, args)


if __name__ == "__main__":
    sys.exit(main())
