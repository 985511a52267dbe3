"""ROS 2 node ``closure_solver``: every joint and the platform pose from the measured joints.

The node is an adapter over :class:`pardyn.kinematics.tracker.ClosureTracker`
(warm-started forward kinematics of the measured joints, every joint velocity
from the measured ones, the platform pose).

Topics (relative names, so ``__ns`` remapping moves them all):

* subscribes ``joint_states`` (sensor_msgs/JointState, best effort, keep last 1: when it is
  late it skips to the newest state, as the controller does):
  the robot's actuated joints, plus all of its sensed passive joints when the
  message carries them (then they are used too). Other names are ignored.
* publishes ``closed_loop/joint_states`` (sensor_msgs/JointState): every joint
  of the tree, names :attr:`pardyn.Robot.joint_names` then the joints locked at
  load (:attr:`pardyn.Robot.locked_joints`, constant), the input's header;
  velocities when the input has velocities for the joints it used.
* publishes ``platform/pose`` (geometry_msgs/PoseStamped) in ``frame_id``, for
  robots whose task names ``x`` and ``y`` or is read from a frame (not for a task made
  of actuated joints): ``(x, y, z)`` (``z = 0`` for a planar robot) and the platform's orientation: the
  rotation of the last joint of the task's virtual chain (about ``z`` by ``phi`` or
  ``theta`` for the planar robots and the H4, yaw-pitch-roll for the hexapod), identity
  for a translational platform (five-bar, Delta).

Parameters: :data:`pardyn.node_parameters.CLOSURE_SOLVER` (``config/closure_solver.yaml``). With
``max_rate`` > 0 a timer at that rate (steady clock) takes the newest state received since its last
tick (:class:`pardyn.nodes.realtime.PolledSubscription`: no executor work for the others; the hardware
bringup: 20 Hz, so that the solve, Python at ~350 us a state, and the dispatch of every state do not share the interpreter with the
controller's 1 kHz state thread a thousand times a second).

Velocities given as NaN/inf for some joints (a joint_state_broadcaster for a joint
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

import sys
import traceback

from geometry_msgs.msg import PoseStamped
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.subscription import Subscription
from sensor_msgs.msg import JointState

from pardyn.control.joint_state import JointStateFilter
from pardyn.errors import PardynError
from pardyn.kinematics.tracker import ClosureTracker, JointStateError
from pardyn.nodes.common import LATEST_STATE_QOS, Reporter, declare_parameters, run_node, stamp_to_ns
from pardyn.nodes.realtime import ANSWER_GATE, PolledSubscription
from pardyn.robot import load_robot

__all__ = ["ClosureSolverNode", "main"]

NODE_NAME = "closure_solver"
INPUT_TOPIC = "joint_states"
JOINTS_TOPIC = "closed_loop/joint_states"
POSE_TOPIC = "platform/pose"
QUEUE_DEPTH = 10


class ClosureSolverNode(Node):
    """The ``closure_solver`` node (see the module docstring for topics).

    Parameters: :data:`pardyn.node_parameters.CLOSURE_SOLVER` (defaults in ``config/closure_solver.yaml``).

    Raises:
        PardynError: the robot cannot be loaded or has no planar platform pose.
    """

    def __init__(self, **node_options) -> None:
        super().__init__(NODE_NAME, **node_options)
        p = declare_parameters(self, NODE_NAME)
        robot_name, max_condition, log_period = p["robot"], p["max_condition"], p["log_period"]
        self.robot = load_robot(robot_name, max_condition=max_condition, kernels="auto")  # pardyn.kernels
        self.get_logger().info(self.robot.kernel_note)
        self.tracker = ClosureTracker(self.robot)
        self._filter = JointStateFilter()
        self._reporter = Reporter(self, log_period, what="more dropped")
        self._joints_publisher = self.create_publisher(JointState, JOINTS_TOPIC, QUEUE_DEPTH)
        self._pose_publisher = self.create_publisher(PoseStamped, POSE_TOPIC, QUEUE_DEPTH)
        self._subscription: PolledSubscription | Subscription
        if p["max_rate"] > 0.0:  # the newest state taken by a timer at max_rate: no executor work per state
            self._subscription = PolledSubscription(self, JointState, INPUT_TOPIC, LATEST_STATE_QOS)
            self._poll_timer = self.create_timer(1.0 / p["max_rate"], self._poll,
                                                 clock=Clock(clock_type=ClockType.STEADY_TIME))
        else:
            self._subscription = self.create_subscription(JointState, INPUT_TOPIC, self._on_joint_state,
                                                          LATEST_STATE_QOS)
        sensed = f" (+ sensed {list(self.robot.sensed_names)} when present)" if self.robot.sensed_names else ""
        self.get_logger().info(
            f"robot {self.robot.name} from {self.robot.description.source}: "
            f"{self._subscription.topic_name} {list(self.robot.actuated_names)}{sensed} -> "
            f"{self._joints_publisher.topic_name} ({self.robot.nv} joints), {self._pose_publisher.topic_name}"
        )

    def _poll(self) -> None:
        """max_rate > 0: solve the newest state received since the last poll, if any."""
        assert isinstance(self._subscription, PolledSubscription)  # the timer exists only then
        ANSWER_GATE.wait()  # beside a controller's state thread (one process): just after its answer, not during one
        message = self._subscription.take()
        if message is not None:
            self._on_joint_state(message)

    def destroy_node(self) -> None:
        if isinstance(getattr(self, "_subscription", None), PolledSubscription):
            self._subscription.destroy()
        super().destroy_node()

    def _report(self, kind: str, text: str, *, error: bool) -> None:
        """Log ``text`` (a warning, or an error) unless ``kind`` was reported less than ``log_period`` ago."""
        if error:
            self._reporter.error(kind, text)
        else:
            self._reporter.warning(kind, text)

    def _velocities(self, message: JointState):
        """The message's velocities, NaN/inf ones replaced by estimates from the positions (logged)."""
        velocities = message.velocity
        if len(velocities) == 0 or len(velocities) != len(message.name) or len(message.position) != len(message.name):
            return velocities  # none (positions only), or lengths the tracker reports
        reading = self._filter.update(message.name, message.position, velocities,
                                      stamp_to_ns(message.header.stamp), self.get_clock().now().nanoseconds)
        if reading.estimated_nan:
            self._reporter.info("velocities nan", f"{INPUT_TOPIC} gives NaN/inf velocities for "
                                f"{list(reading.estimated_nan)}: estimated from the positions (50 Hz filter)")
        return reading.velocities

    def _on_joint_state(self, message: JointState) -> None:
        try:
            state = self.tracker.update(message.name, message.position, self._velocities(message))
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
        locked = self.robot.locked_joints  # joints of the file's tree locked at load: constant
        joints.name = list(self.robot.joint_names) + list(locked)
        joints.position = state.q.tolist() + list(locked.values())
        if state.qdot is not None:
            joints.velocity = state.qdot.tolist() + [0.0] * len(locked)
        self._joints_publisher.publish(joints)
        if state.pose is None:
            return

        pose = PoseStamped()
        pose.header.stamp = message.header.stamp
        pose.header.frame_id = self.get_parameter("frame_id").value
        pose.pose.position.x = state.pose.x_m
        pose.pose.position.y = state.pose.y_m
        pose.pose.position.z = state.pose.z_m
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
