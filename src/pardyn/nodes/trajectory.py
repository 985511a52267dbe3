"""ROS 2 node ``trajectory``: the reference of the actuated joints, once, for the controller.

The node builds a task-space trajectory (:mod:`pardyn.trajectories.task`),
maps it to every joint through the closed-loop inverse kinematics with warm
starts (:func:`pardyn.trajectories.joint_trajectory`: ``qdot = W xdot``,
``qddot = W xddot + w``, DualV paper eqs. (9)-(10)) and publishes the
actuated joints' samples as ONE trajectory_msgs/JointTrajectory on
``reference/trajectory`` (transient local: a controller that starts later
still receives it). The ``controller`` node interpolates it at each state's
stamp, so the reference does not depend on when messages travel (a
deterministic lockstep simulation stays deterministic).

* ``kind: circle``: ``turns`` revolutions of radius ``radius`` (m) in the
  x-y plane through ``start_task``, rest to rest in ``duration`` s
  (:class:`pardyn.trajectories.Circle`);
* ``kind: point_to_point``: a straight line from ``start_task`` to
  ``goal_task`` with the 5th-degree time law (:class:`pardyn.trajectories.PointToPoint`).

Start time (``header.stamp``, on the node's clock: simulated time with
``use_sim_time``): ``start_time`` (s) when positive, else the node's clock at
publication plus ``start_delay`` (s). Points every ``1/sample_rate`` s
(positions, velocities, accelerations of ``robot.actuated_names``).
``wait_for_subscriber`` (a node name, e.g. ``controller``): publish only once
that node of this namespace subscribes to the reference, so that a
controller still starting (its own process, a loaded machine) misses no part
of a free-running motion (the hardware bringup).

Run: ``ros2 run pardyn trajectory --ros-args --params-file config/trajectory.yaml``.
"""

from __future__ import annotations

import sys

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from trajectory_msgs.msg import JointTrajectory

from pardyn.errors import InputError
from pardyn.nodes.common import LATCHED_QOS, declare_parameters, run_node
from pardyn.nodes.messages import trajectory_message
from pardyn.node_parameters import TRAJECTORY_KINDS
from pardyn.robot import load_robot
from pardyn.trajectories import Circle, PointToPoint, TaskTrajectory, joint_trajectory
from pardyn.excitation.bounds import excitation_settings

__all__ = ["TOPIC", "TrajectoryNode", "main"]

NODE_NAME = "trajectory"
TOPIC = "reference/trajectory"


class TrajectoryNode(Node):
    """The ``trajectory`` node.

    Parameters: :data:`pardyn.node_parameters.TRAJECTORY` (all read-only; defaults in
    ``config/trajectory.yaml``); those of the ``exciting`` kind go to
    :func:`pardyn.excitation.design.design_exciting_trajectory` (``optimize_iterations`` > 0
    optimises the best draw's coefficients by SLSQP, 0 keeps the best draw).

    Raises:
        PardynError: bad parameters, or a sample the robot cannot reach (named).
    """

    def __init__(self, **node_options) -> None:
        super().__init__(NODE_NAME, **node_options)
        p = declare_parameters(self, NODE_NAME)
        robot_name, kind, start_task, goal_task = p["robot"], p["kind"], p["start_task"], p["goal_task"]
        radius, turns, start_angle, duration = p["radius"], p["turns"], p["start_angle"], p["duration"]
        sample_rate, start_time, self._start_delay = p["sample_rate"], p["start_time"], p["start_delay"]
        self._wait_for = p["wait_for_subscriber"]
        excitation = {
            "seed": p["seed"], "base_frequency_hz": p["base_frequency"], "harmonics": p["harmonics"],
            "amplitude": p["amplitude"], "max_velocity": p["max_velocity"], "max_acceleration": p["max_acceleration"],
            "candidates": p["candidates"], "max_iterations": p["optimize_iterations"],
            "max_condition": p["max_kinematic_condition"],
        }
        self.robot = load_robot(robot_name)
        robot = self.robot
        self.design = None  # kind exciting: the ExcitingDesign (its condition numbers)
        start = robot.task_values(robot.home) if not start_task else start_task
        if kind == "exciting":
            self.task_trajectory = self._exciting(robot, start, duration, excitation)
        else:
            self.task_trajectory = self._build(kind, start, goal_task, radius=radius, turns=turns,
                                               start_angle=start_angle, duration=duration)
        start_q = robot.solve_inverse(start).q
        self.samples = joint_trajectory(robot, self.task_trajectory, rate_hz=sample_rate, start=start_q)
        self._start_time_ns = int(round(start_time * 1e9))
        self._publisher = self.create_publisher(JointTrajectory, TOPIC, LATCHED_QOS)
        self.message: JointTrajectory | None = None
        self._said_waiting = False
        # steady clock: with use_sim_time a ROS-time timer would wait for /clock
        self._timer = self.create_timer(0.05 if self._wait_for else 0.0, self._publish_once,
                                        clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(
            f"robot {robot.name}: {kind} of {duration:g} s from task {list(map(float, start))}, "
            f"{self.samples.times.size} points of {list(robot.actuated_names)} on {self._publisher.topic_name}"
        )

    def _exciting(self, robot, center, duration: float, options: dict) -> TaskTrajectory:
        """A Fourier exciting trajectory (pardyn.excitation.design) around ``center``."""
        from pardyn.excitation.design import design_exciting_trajectory  # noqa: PLC0415 - heavy, on demand

        settings = excitation_settings(robot, amplitude=options["amplitude"], max_velocity=options["max_velocity"],
                                       max_acceleration=options["max_acceleration"],
                                       base_frequency_hz=options["base_frequency_hz"])
        design = design_exciting_trajectory(
            robot, center=center, duration_s=duration, harmonics=options["harmonics"],
            candidates=options["candidates"], seed=options["seed"], optimize=options["max_iterations"] > 0,
            max_iterations=max(options["max_iterations"], 1), max_condition=options["max_condition"],
            **settings.design_options(),
        )
        self.design = design
        self.get_logger().info(
            f"exciting trajectory: condition number {design.condition_number:.4g} (best draw "
            f"{design.random_condition_number:.4g}) of the base observation matrix ({design.base_parameter_count} base parameters), {design.candidates_feasible} of "
            f"{design.candidates_tried} candidates feasible"
        )
        return design.trajectory

    @staticmethod
    def _build(kind, start, goal, *, radius, turns, start_angle, duration) -> TaskTrajectory:
        if kind == "circle":
            return Circle(start, radius_m=radius, duration_s=duration, turns=turns, start_angle_rad=start_angle)
        if kind == "point_to_point":
            if not goal:
                raise InputError("parameter goal_task: point_to_point needs a goal task pose")
            return PointToPoint(start, goal, duration_s=duration)
        raise InputError(f"parameter kind: unknown trajectory kind {kind!r}, expected one of {list(TRAJECTORY_KINDS)}")

    def subscribed(self, node_name: str) -> bool:
        """Whether a node named ``node_name`` of this node's namespace subscribes to the reference."""
        return any(info.node_name == node_name and info.node_namespace == self.get_namespace()
                   for info in self.get_subscriptions_info_by_topic(self._publisher.topic_name))

    def _publish_once(self) -> None:
        if self._wait_for and not self.subscribed(self._wait_for):
            if not self._said_waiting:
                self._said_waiting = True
                self.get_logger().info(f"waiting for {self._wait_for!r} to subscribe to {self._publisher.topic_name}")
            return
        self._timer.cancel()
        start_ns = self._start_time_ns
        if start_ns <= 0:
            start_ns = self.get_clock().now().nanoseconds + int(round(self._start_delay * 1e9))
        robot = self.robot
        self.message = trajectory_message(self.samples, robot.actuated_indices, robot.actuated_names, start_ns)
        self._publisher.publish(self.message)
        self.get_logger().info(f"published the reference, start at {start_ns * 1e-9:.6g} s")


def main(args: list[str] | None = None) -> int:
    """Run the node until Ctrl-C/SIGTERM; exit code 0, or 1 if it cannot start."""
    return run_node(TrajectoryNode, NODE_NAME, args)


if __name__ == "__main__":
    sys.exit(main())
