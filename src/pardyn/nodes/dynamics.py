"""ROS 2 node ``dynamics``: the closed-loop dynamic model evaluated on the live state and the reference.

Two outputs, both in ``robot.actuated_names`` order (N m), for monitoring and
for model-based control:

* ``dynamics/model_effort`` (sensor_msgs/JointState, the state's stamp): the
  actuator torques the model predicts for the robot's motion,
  ``tau = IDM(q, qdot, qddot)`` (:class:`pardyn.dynamics.inverse.InverseDynamics`:
  eq. 19, the minimum-norm torques of eq. 26 with no internal stress on a
  redundant robot), from ``closed_loop/joint_states`` (every joint, with
  velocities: the ``closure_solver`` node's output); the task acceleration is
  the filtered backward difference of the task velocity (first-order low-pass
  at ``acceleration_cutoff``). Compare with the measured efforts to watch the
  model (or a payload change) live.
* ``dynamics/feedforward`` (std_msgs/Float64MultiArray, ``layout.data_offset``
  = the lockstep tag of the state, as the controller's commands): the torques
  of the reference at the state's time, ``IDM(q_ref, qdot_ref, qddot_ref)``,
  the reference of ``reference/trajectory`` (the ``trajectory`` node) closed
  by the forward problem and eqs. (21), (24).

Parameters: :data:`pardyn.node_parameters.DYNAMICS` (``config/dynamics.yaml``). Bad input (missing joints,
NaN, unreachable references) is logged, throttled, and dropped.

Run: ``ros2 run pardyn dynamics --ros-args --params-file config/dynamics.yaml``.
"""

from __future__ import annotations

import sys

from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from pardyn.dynamics.inverse import InverseDynamics
from pardyn.dynamics.monitor import DynamicsMonitor
from pardyn.dynamics.parameters import read_parameter_file
from pardyn.errors import InputError, PardynError
from pardyn.nodes.common import (
    CONTROL_QOS,
    LATCHED_QOS,
    Reporter,
    declare_parameters,
    period_ns,
    run_node,
    stamp_to_ns,
    step_of_stamp,
)
from pardyn.nodes.messages import command_message, joint_readings, reference_from_message
from pardyn.robot import load_robot
from pardyn.trajectories import SampledReference

__all__ = ["DynamicsNode", "main"]

NODE_NAME = "dynamics"
STATE_TOPIC = "closed_loop/joint_states"
REFERENCE_TOPIC = "reference/trajectory"
MODEL_TOPIC = "dynamics/model_effort"
FEEDFORWARD_TOPIC = "dynamics/feedforward"


class DynamicsNode(Node):
    """The ``dynamics`` node (module docstring for topics and parameters)."""

    def __init__(self, **node_options) -> None:
        super().__init__(NODE_NAME, **node_options)
        p = declare_parameters(self, NODE_NAME)
        robot_name, parameters_file, rate = p["robot"], p["parameters_file"], p["rate"]
        cutoff, log_period = p["acceleration_cutoff"], p["log_period"]
        self.robot = load_robot(robot_name)
        params = read_parameter_file(parameters_file, self.robot) if parameters_file else None
        self.monitor = DynamicsMonitor(self.robot, InverseDynamics(self.robot, params), acceleration_cutoff_hz=cutoff)
        self.period_ns = period_ns(rate)
        self._reporter = Reporter(self, log_period)
        self._trajectory: SampledReference | None = None
        self._trajectory_start_ns = 0
        self._model = self.create_publisher(JointState, MODEL_TOPIC, CONTROL_QOS)
        self._feedforward = self.create_publisher(Float64MultiArray, FEEDFORWARD_TOPIC, CONTROL_QOS)
        self._states = self.create_subscription(JointState, STATE_TOPIC, self._on_state, CONTROL_QOS)
        self._reference = self.create_subscription(JointTrajectory, REFERENCE_TOPIC, self._on_trajectory, LATCHED_QOS)
        source = parameters_file or f"{self.robot.description.source} (nominal)"
        self.get_logger().info(
            f"robot {self.robot.name}, parameters from {source}: {self._states.topic_name} -> "
            f"{self._model.topic_name}; {self._reference.topic_name} -> {self._feedforward.topic_name}"
        )

    def _on_trajectory(self, message: JointTrajectory) -> None:
        try:
            self._trajectory = reference_from_message(message, tuple(self.robot.actuated_names))
        except InputError as error:
            self._reporter.warning("trajectory", f"dropped {REFERENCE_TOPIC} message: {error}")
            return
        start_ns = stamp_to_ns(message.header.stamp)
        self._trajectory_start_ns = start_ns or self.get_clock().now().nanoseconds

    def _on_state(self, message: JointState) -> None:
        try:
            q, qdot = joint_readings(message, tuple(self.robot.joint_names))
            stamp_ns = stamp_to_ns(message.header.stamp)
            effort = self.monitor.model_effort(stamp_ns, q, qdot)
        except PardynError as error:
            self._reporter.warning("state", f"dropped {STATE_TOPIC} message: {error}")
            return
        out = JointState()
        out.header = message.header
        out.name = list(self.robot.actuated_names)
        out.effort = [float(v) for v in effort]
        self._model.publish(out)
        if self._trajectory is None:
            return
        t = (stamp_ns - self._trajectory_start_ns) * 1e-9
        try:
            tau = self.monitor.feedforward(self._trajectory(max(t, self._trajectory.start_time)))
        except PardynError as error:
            self._reporter.error("feedforward", f"no feedforward at {stamp_ns * 1e-9:.6f} s: {error}")
            return
        self._feedforward.publish(command_message(tau, tuple(self.robot.actuated_names),
                                                  step_of_stamp(stamp_ns, self.period_ns)))


def main(args: list[str] | None = None) -> int:
    """Run the node until Ctrl-C/SIGTERM; exit code 0, or 1 if it cannot start."""
    return run_node(DynamicsNode, NODE_NAME, args)


if __name__ == "__main__":
    sys.exit(main())
