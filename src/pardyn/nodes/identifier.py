"""ROS 2 node ``identifier``: the online estimate of the base parameters (:mod:`pardyn.identification.online`).

* subscribes ``joint_states`` (sensor_msgs/JointState): positions of the measured joints and efforts of
  the actuated ones, by name, at the stream's rate ``rate``;
* publishes ``identifier/estimate`` (sensor_msgs/JointState used as a named vector, stamped with the
  estimate's time): ``name`` the base parameters, ``position`` their values (SI), ``velocity`` their
  standard deviations ``sigma_i``, ``effort`` their ``%sigma_i``; at ``publish_rate`` Hz;
* service ``~/save`` (std_srvs/Trigger): writes the estimate's standard parameters to
  ``parameters_out`` (the ``parameters_file`` format the ``controller`` and ``dynamics`` nodes read, with
  the estimate's condition number under ``online_estimate``), only when the estimate is well conditioned
  (a window of at least ``min_window`` s, condition number below ``max_condition``); refused with the reason
  otherwise. The ``controller``'s ``~/load_parameters`` then adopts that file (its ``swap_parameters_file``);
* the window restarts on a detected change of the robot (``change_threshold``, ``change_holdoff``:
  :mod:`pardyn.identification.online`).

Bad input (missing joints, NaN) is logged, throttled, and dropped; the estimate goes on. The estimator (its
regressor, the robot's structural base parameters, SciPy) is built on a thread after the node is subscribed and
publishing; the states that arrive meanwhile are queued and taken in, in order, once it exists
(:class:`pardyn.nodes.deferred.Deferred`; its set-up line says how many), and ~/save answers that it is being built.
A build that fails ends the node with exit code 1 and the reason (:func:`pardyn.nodes.common.node_failure`).
Parameters: ``config/identifier.yaml`` (table: :data:`pardyn.node_parameters.IDENTIFIER`). Run: ``ros2 run pardyn identifier --ros-args --params-file config/identifier.yaml``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from pardyn.errors import InputError, PardynError
from pardyn.nodes.common import Reporter, declare_parameters, run_node, stamp_to_ns
from pardyn.nodes.deferred import Deferred
from pardyn.robot import load_robot

if TYPE_CHECKING:
    from pardyn.identification.online import OnlineIdentifier

__all__ = ["IdentifierNode", "main"]

NODE_NAME = "identifier"
STATE_TOPIC = "joint_states"
ESTIMATE_TOPIC = "identifier/estimate"
STATE_QOS = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)


class IdentifierNode(Node):
    """The ``identifier`` node (module docstring)."""

    def __init__(self, **node_options) -> None:
        super().__init__(NODE_NAME, **node_options)
        p = declare_parameters(self, NODE_NAME)
        self.parameters_out = p["parameters_out"]
        self.robot = load_robot(p["robot"])
        self._reporter = Reporter(self, p["log_period"])
        self._changes_logged = 0
        self._estimate = self.create_publisher(JointState, ESTIMATE_TOPIC, 10)
        self.failure: str | None = None  # the estimator's build failed: the node ends (common.node_failure)
        # the estimator (its regressor, structural base parameters, SciPy: 1-2 s) is built after the node is up;
        # the states that come meanwhile are queued and taken in, in order, once it exists (pardyn.nodes.deferred)
        self.estimator: Deferred[OnlineIdentifier] = Deferred(lambda: self._make_identifier(p), self._take,
                                                              done=self._built, name="identifier build")
        # not a control loop: a deep queue, so that a busy executor loses no sample (a gap restarts the filter)
        self._states = self.create_subscription(JointState, STATE_TOPIC, self.estimator.offer, STATE_QOS)
        self._timer = self.create_timer(1.0 / p["publish_rate"], self._publish)
        self._save = self.create_service(Trigger, "~/save", self._on_save)
        self._setup = (f"robot {self.robot.name}: {self._states.topic_name} -> {self._estimate.topic_name} at "
                       f"{p['publish_rate']:g} Hz, window {p['window']:g} s")
        self.estimator.start()

    def _make_identifier(self, p: dict) -> OnlineIdentifier:
        from pardyn.identification.online import OnlineIdentifier  # noqa: PLC0415 - SciPy: built after the start

        return OnlineIdentifier(self.robot, rate_hz=p["rate"], decimation=p["decimation"],
                                window=p["filter_half_width"], window_s=p["window"],
                                max_condition=p["max_condition"], min_window_s=min(p["min_window"], p["window"]),
                                change_threshold=p["change_threshold"], change_holdoff_s=p["change_holdoff"])

    def _built(self, estimator: Deferred[OnlineIdentifier]) -> None:
        if estimator.error is not None or estimator.value is None:
            failure = f"cannot build the estimator: {type(estimator.error).__name__}: {estimator.error}"
            self.get_logger().fatal(f"{failure}; the node stops (exit code 1)")
            self.failure = failure  # after its line: the main loop ends the process as soon as it sees it
            return
        self.get_logger().info(
            f"{self._setup}, {len(estimator.value.names)} base parameters (estimator built {estimator.seconds:.2f} s "
            f"after the node, {estimator.replayed} states taken in that came meanwhile)")

    @property
    def identifier(self) -> OnlineIdentifier | None:
        """The estimator, None while it is built (or if its build failed)."""
        return self.estimator.value

    def _take(self, identifier: OnlineIdentifier, message: JointState) -> None:
        names = list(message.name)
        try:
            missing = [n for n in self.robot.measured_names if n not in names]
            if missing or len(message.position) != len(names) or len(message.effort) != len(names):
                raise InputError(f"needs positions of {missing or list(self.robot.measured_names)} and efforts of "
                                 f"{list(self.robot.actuated_names)} (got {len(names)} names, "
                                 f"{len(message.position)} positions, {len(message.effort)} efforts)")
            position = np.array([message.position[names.index(n)] for n in self.robot.measured_names])
            effort = np.array([message.effort[names.index(n)] for n in self.robot.actuated_names])
            identifier.add(stamp_to_ns(message.header.stamp) * 1e-9, position, effort)
            if len(identifier.changes) > self._changes_logged:
                self._changes_logged = len(identifier.changes)
                self.get_logger().info(f"change of the robot detected at t = {identifier.changes[-1]:.3f} s: "
                                       "estimation window restarted")
        except PardynError as error:
            self._reporter.warning("state", f"dropped {STATE_TOPIC} message: {error}")

    def _publish(self) -> None:
        estimate = None if self.identifier is None else self.identifier.estimate()
        if estimate is None:
            return
        message = JointState()
        seconds, nanoseconds = divmod(int(round(estimate.t * 1e9)), 1_000_000_000)
        message.header.stamp.sec, message.header.stamp.nanosec = seconds, nanoseconds
        message.name = list(estimate.names)
        message.position = estimate.chi.tolist()
        message.velocity = estimate.std.tolist()
        message.effort = np.nan_to_num(estimate.relative_std, nan=np.inf).tolist()
        self._estimate.publish(message)

    def _on_save(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        if self.identifier is None:
            response.success, response.message = False, (
                "the estimator is still being built" if self.estimator.error is None
                else f"the estimator could not be built: {self.estimator.error}")
            return response
        try:
            estimate = self.identifier.save(self.parameters_out)
        except (OSError, PardynError) as error:
            response.success, response.message = False, f"{self.parameters_out}: {error}"
            return response
        response.success, response.message = True, (
            f"wrote {self.parameters_out} (estimate at t = {estimate.t:.3f} s, condition number "
            f"{estimate.condition:.3g})")
        return response

def main(args: list[str] | None = None) -> int:
    return run_node(IdentifierNode, NODE_NAME, args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
