"""ROS 2 node ``visualizer``: the closed-loop robot as markers for RViz and Foxglove.

RViz's RobotModel and robot_state_publisher draw a tree: they cannot close a loop. This node solves the loops
from the measured joints (:class:`pardyn.scene.track.SceneTrack`, warm-started forward kinematics) and draws
every body, the skeleton and the closing links (:mod:`pardyn.scene.messages`).

Topics (relative names, so ``__ns`` remapping moves them all):

* subscribes ``joint_states`` (sensor_msgs/JointState, best effort, keep last 1): the actuated joints, plus the
  sensed passive ones when present; other names are ignored;
* publishes ``robot_markers`` (visualization_msgs/MarkerArray) at ``rate`` Hz, of the newest solved
  configuration, stamped as the joint state it comes from (nothing before the first one);
* publishes ``robot_description`` (std_msgs/String, transient local: latched) once: the URDF.

``/tf`` is not published live: no Python wheel carries ``tf2_msgs`` (the recorder writes it into bags with
``scene: true``). In RViz add a MarkerArray display on ``robot_markers`` with the fixed frame the robot's base
(``frame_id``).

Parameters: :data:`pardyn.node_parameters.VISUALIZER` (``config/visualizer.yaml``). A joint state that cannot
be solved (wrong names, unreachable) is dropped with a warning at most once per ``log_period``; the markers
keep the last good configuration.

Run: ``ros2 run pardyn visualizer --ros-args -p robot:=dualv``.
"""

from __future__ import annotations

import sys

from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from visualization_msgs.msg import MarkerArray

from pardyn.bags.cdr import typestore_for
from pardyn.nodes.common import LATCHED_QOS, LATEST_STATE_QOS, Reporter, declare_parameters, run_node, stamp_to_ns
from pardyn.robot import load_robot
from pardyn.scene.track import DESCRIPTION_TOPIC, MARKERS_TOPIC, SceneTrack

__all__ = ["LiveViewNode", "VisualizerNode", "main", "run_live_view"]

NODE_NAME = "visualizer"
INPUT_TOPIC = "joint_states"


class VisualizerNode(Node):
    """The ``visualizer`` node (see the module docstring).

    Raises:
        PardynError: the robot cannot be loaded.
    """

    def __init__(self, **node_options) -> None:
        super().__init__(NODE_NAME, **node_options)
        p = declare_parameters(self, NODE_NAME)
        robot = load_robot(p["robot"])
        self.track = SceneTrack(robot, typestore_for(), rate_hz=p["rate"], frame_id=p["frame_id"])
        self._reporter = Reporter(self, p["log_period"], what="more dropped")
        self._latest: tuple | None = None  # (q, stamp ns) of the newest solved joint state
        self._published: tuple | None = None
        self.published = 0
        self._markers = self.create_publisher(MarkerArray, MARKERS_TOPIC, 10)
        self._description = self.create_publisher(String, DESCRIPTION_TOPIC, LATCHED_QOS)
        self._description.publish(String(data=self.track.description))
        self.create_subscription(JointState, INPUT_TOPIC, self._on_joint_state, LATEST_STATE_QOS)
        self.create_timer(1.0 / p["rate"], self._publish)
        self.get_logger().info(
            f"robot {robot.name}: {INPUT_TOPIC} -> {self._markers.topic_name} at {p['rate']:g} Hz in frame "
            f"'{self.track.frame_id}' ({len(self.track.scene.shapes)} bodies), {self._description.topic_name}")

    def _on_joint_state(self, message: JointState) -> None:
        dropped = self.track.dropped
        q = self.track.solve(message.name, message.position)
        if q is None:
            if self.track.dropped > dropped:
                self._reporter.warning("unsolved", f"dropped {INPUT_TOPIC} message: {self.track.last_error}")
            return
        self._latest = (q, stamp_to_ns(message.header.stamp))

    def _publish(self) -> None:
        latest = self._latest
        if latest is None or latest is self._published:
            return
        markers, _ = self.track.messages(latest[0], latest[1], with_tf=False)
        self._markers.publish(markers)  # CDR bytes, serialized by pardyn.scene.messages
        self._published = latest
        self.published += 1


class LiveViewNode(Node):
    """``pardyn view --live``: the solved ``joint_states`` of a running bringup drawn in a browser view, their
    efforts plotted over the last 10 s.

    Args:
        view: a :class:`pardyn.scene.viewer.SceneView` (its robot is the one the joint states are of).
        namespace: the bringup's namespace.
        rate_hz: frames drawn per second (the newest solved joint state).
    """

    def __init__(self, view, namespace: str = "/", rate_hz: float = 30.0) -> None:
        super().__init__("pardyn_view", namespace=namespace)
        self.view = view
        self.track = SceneTrack(view.robot, typestore_for())
        self._latest = None
        self._shown = None
        self._reporter = Reporter(self, 1.0, what="more dropped")
        from pardyn.scene.viewer import add_live_torques  # noqa: PLC0415 - the `view` extra

        self.torques = add_live_torques(view)
        subscription = self.create_subscription(JointState, INPUT_TOPIC, self._on_joint_state, LATEST_STATE_QOS)
        self.create_timer(1.0 / rate_hz, self._show)
        self.create_timer(0.5, self.torques.refresh)
        self.get_logger().info(f"showing {subscription.topic_name} of {view.robot.name}")

    def _on_joint_state(self, message: JointState) -> None:
        dropped = self.track.dropped
        q = self.track.solve(message.name, message.position)
        if q is None and self.track.dropped > dropped:
            self._reporter.warning("unsolved", f"dropped {INPUT_TOPIC} message: {self.track.last_error}")
        elif q is not None:
            self._latest = q
            if len(message.effort) == len(message.name):
                efforts = dict(zip(message.name, message.effort))
                if all(name in efforts for name in self.view.robot.actuated_names):
                    self.torques.append(stamp_to_ns(message.header.stamp) * 1e-9,
                                        [efforts[name] for name in self.view.robot.actuated_names])

    def _show(self) -> None:
        if self._latest is not None and self._latest is not self._shown:
            self.view.show(self._latest)
            self._shown = self._latest


def run_live_view(view, namespace: str = "/") -> int:
    """Spin a :class:`LiveViewNode` until Ctrl-C/SIGTERM; the exit code."""
    return run_node(lambda: LiveViewNode(view, namespace), "pardyn_view", [])


def main(args: list[str] | None = None) -> int:
    """Run the node until Ctrl-C/SIGTERM; exit code 0, or 1 if it cannot start."""
    return run_node(VisualizerNode, NODE_NAME, args)


if __name__ == "__main__":
    sys.exit(main())
