"""ROS 2 node ``recorder``: record topics into crash-safe rosbag2 MCAP bags.

A thin adapter over :class:`pardyn.bags.BagWriter`: it subscribes each topic
with ``raw=True`` (the serialized CDR bytes from the middleware, written as
they are) and writes them into an MCAP bag that ``ros2 bag play`` accepts.

Crash safety: messages reach the file by chunks (parameters ``chunk_messages``,
``chunk_bytes``, ``flush_period``; ``fsync`` for power loss). A recorder
killed with SIGKILL leaves a bag that :func:`pardyn.bags.repair_bag` (or
``read_joint_states(..., repair=True)``) rebuilds with every message but those
of its last, unwritten chunk (see :mod:`pardyn.bags.writer`). SIGINT/SIGTERM
and ``~/stop`` close the bag properly.

Topics (relative names are resolved in the node's namespace; the bag stores
the full names):

* subscribes every name of ``topics``. Its type comes from the ``types``
  parameter or from the graph (the publishers' type, checked against the type
  hash they advertise, so the bag's definition is theirs); the QoS adapts to
  the publishers (reliable if all of them are, transient local if all of them
  are), as ``ros2 bag record`` does. A topic with no publisher yet is
  subscribed when one appears (or at once with a ``types`` entry and an
  explicit ``reliability``).
* with ``scene: true``, writes ``robot_markers`` (visualization_msgs/MarkerArray), ``/tf``
  (tf2_msgs/TFMessage) and ``robot_description`` (the URDF, latched) solved from the recorded
  ``scene_joint_states``, ``scene_rate`` times per second of their stamps (:mod:`pardyn.scene.track`):
  the bag then shows the closed-loop robot in Foxglove, or in RViz through ``ros2 bag play``.

Services (std_srvs/Trigger):

* ``~/start``: open a new bag at ``bag_path`` (a timestamp suffix is added if
  that path exists: a bag is never overwritten); the response message is its path.
* ``~/stop``: take the messages already delivered to the node, close the bag;
  the response message is ``<path>: <n> messages``.

Bag timestamps (``timestamp_source``):

* ``receive`` (default, like ``ros2 bag record``): the node's clock when the
  message is received, i.e. the simulation time of ``/clock`` with
  ``use_sim_time:=true`` (0 before the first ``/clock`` message);
* ``header``: the message's ``header.stamp`` (``clock`` of
  rosgraph_msgs/Clock); reception time for types without one.

The header stamps themselves are always kept in the messages (the readers of
:mod:`pardyn.bags.joint_states` use them for ``t``).

Parameters: :data:`pardyn.node_parameters.RECORDER` (``config/recorder.yaml``). A message
that cannot be recorded (malformed data, write error) is reported (at most
once per second) and dropped, a topic that cannot be (unknown type, type hash
of another definition, several types) is refused with an error; the bag stays
valid either way.

Run: ``ros2 run pardyn recorder --ros-args --params-file config/recorder.yaml``,
then ``ros2 service call /recorder/stop std_srvs/srv/Trigger``.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
from std_srvs.srv import Trigger

from pardyn.bags.cdr import deserialize_cdr, normalize_msgtype, stamp_ns_from_cdr, typestore_for
from pardyn.bags.errors import BagError
from pardyn.bags.gaps import CUSTOM_DATA_PREFIX, GapRecord, StampGaps
from pardyn.bags.writer import BagWriter, FlushPolicy, available_bag_path
from pardyn.errors import InputError, PardynError
from pardyn.nodes.common import declare_parameters, run_node

__all__ = ["RecorderNode", "main", "to_bag_qos"]

NODE_NAME = "recorder"
REPORT_PERIOD_S = 1.0


def _qos_time(duration) -> QosTime:
    seconds, nanoseconds = divmod(int(duration.nanoseconds), 1_000_000_000)
    return QosTime(seconds, nanoseconds)


def to_bag_qos(profile: QoSProfile) -> Qos:
    """An rclpy QoS profile (of a publisher) as the ``rosbags`` QoS stored in the bag metadata.

    The enumerations share the rmw numbering; durations become ``(sec, nsec)``
    (infinite: ``(9223372036, 854775807)``, as ``ros2 bag record`` writes it).
    """

    def enum(kind, value, unknown):
        try:
            return kind(int(value))
        except ValueError:
            return unknown

    return Qos(
        history=enum(QosHistory, profile.history, QosHistory.UNKNOWN),
        depth=int(profile.depth),
        reliability=enum(QosReliability, profile.reliability, QosReliability.UNKNOWN),
        durability=enum(QosDurability, profile.durability, QosDurability.UNKNOWN),
        deadline=_qos_time(profile.deadline),
        lifespan=_qos_time(profile.lifespan),
        liveliness=enum(QosLiveliness, profile.liveliness, QosLiveliness.UNKNOWN),
        liveliness_lease_duration=_qos_time(profile.liveliness_lease_duration),
        avoid_ros_namespace_conventions=bool(profile.avoid_ros_namespace_conventions),
    )


def _message_class(msgtype: str) -> type:
    package, kind, name = msgtype.split("/")
    module = importlib.import_module(f"{package}.{kind}")
    return getattr(module, name)


@dataclass
class _TopicPlan:
    """How one topic is recorded."""

    name: str  # fully resolved
    wanted_type: str | None  # from the `types` parameter
    msgtype: str | None = None
    type_hash: str | None = None
    qos: list[Qos] = field(default_factory=list)
    subscription: object | None = None
    refused: str | None = None  # why the topic is not recorded
    received: int = 0
    periodic: bool = False  # losses counted from the gaps in its stamps (parameter periodic_topics)
    gaps: StampGaps | None = None  # the stamps recorded in the current bag
    latest_stamp_ns: int | None = None  # the latest header stamp written to the current bag (None: none yet)


class RecorderNode(Node):
    """The ``recorder`` node (see the module docstring for topics and services).

    Parameters: :data:`pardyn.node_parameters.RECORDER` (read-only but ``bag_path``; defaults in
    ``config/recorder.yaml``).

    Raises:
        PardynError: a parameter has an invalid value.
    """

    def __init__(self, **node_options) -> None:
        super().__init__(NODE_NAME, **node_options)
        p = declare_parameters(self, NODE_NAME)
        topics, types, autostart = p["topics"], p["types"], p["autostart"]
        self.timestamp_source, self.reliability, self.queue_depth = (p["timestamp_source"], p["reliability"],
                                                                     p["queue_depth"])
        chunk_messages, chunk_bytes, flush_period = p["chunk_messages"], p["chunk_bytes"], p["flush_period"]
        fsync, distro, discovery_period = p["fsync"], p["distro"], p["discovery_period"]
        periodic = {self.resolve_topic_name(name.strip()) for name in p["periodic_topics"] if name.strip()}

        if not topics or any(not name.strip() for name in topics):
            raise InputError(f"parameter topics: needs non-empty topic names, got {list(topics)}")
        if not any(name.strip() for name in types):
            types = []  # all from the graph
        if types and len(types) != len(topics):
            raise InputError(f"parameter types: {len(types)} entries for {len(topics)} topics (give one per topic or none)")
        self.typestore = typestore_for(distro)
        self.flush_policy = FlushPolicy(
            chunk_messages=chunk_messages,
            chunk_bytes=chunk_bytes,
            period_s=flush_period if flush_period > 0 else None,
            fsync=fsync,
        )
        self.plans: dict[str, _TopicPlan] = {}
        for index, topic in enumerate(topics):
            name = self.resolve_topic_name(topic.strip())
            wanted = types[index].strip() if types else ""
            self.plans[name] = _TopicPlan(name, normalize_msgtype(wanted) if wanted else None, periodic=name in periodic)
        if periodic - set(self.plans):
            self.get_logger().warning(f"parameter periodic_topics: {sorted(periodic - set(self.plans))} not among "
                                      f"the topics recorded {sorted(self.plans)} (no losses counted for them)")
        self.bag: BagWriter | None = None
        self.ignored = 0  # messages received while not recording
        self.scene, self.scene_source = None, None
        if p["scene"]:
            self._setup_scene(p["robot"], p["scene_joint_states"], p["scene_rate"])

        self.create_service(Trigger, "~/start", self._on_start)
        self.create_service(Trigger, "~/stop", self._on_stop)
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._discovery_timer = self.create_timer(discovery_period, self._discover, clock=steady)
        flush_check = min(max((flush_period or 1.0) / 4, 0.02), 0.5)
        self.create_timer(flush_check, self._flush_if_due, clock=steady)
        self._discover()
        if autostart:
            ok, message = self.start()
            if not ok:
                raise InputError(f"cannot start recording: {message}")

    # ----------------------------------------------------------------- recording
    @property
    def recording(self) -> bool:
        return self.bag is not None

    def latest_stamp_ns(self, topic: str) -> int | None:
        """The latest header stamp (ns) of ``topic`` (a relative name is resolved in the node's namespace) written
        to the current bag; None: none yet, not recording, no header, or not a recorded topic. A run that stops
        once the recorder holds its last state (:mod:`pardyn.nodes.identification_runs`) asks this."""
        plan = self.plans.get(self.resolve_topic_name(topic))
        return None if plan is None or self.bag is None else plan.latest_stamp_ns

    def gap_record(self, topic: str) -> GapRecord | None:
        """What the stamps of the periodic ``topic`` (parameter ``periodic_topics``) written to the current bag so far
        say of the messages lost (:class:`~pardyn.bags.gaps.GapRecord`); None: not recording, or not a periodic
        topic recorded."""
        plan = self.plans.get(self.resolve_topic_name(topic))
        return None if plan is None or plan.gaps is None or self.bag is None else plan.gaps.record()

    def start(self) -> tuple[bool, str]:
        """Open a new bag and record into it; (success, bag path or the reason of the failure)."""
        if self.bag is not None:
            return False, f"already recording to {self.bag.path}"
        requested = Path(self.get_parameter("bag_path").value).expanduser().absolute()  # logs say where it went
        path = available_bag_path(requested)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            bag = BagWriter(path, storage="mcap", typestore=self.typestore, flush=self.flush_policy).open()
        except (PardynError, OSError) as error:
            return False, f"cannot open a bag at {path}: {error}"
        self.bag = bag
        for plan in self.plans.values():
            plan.gaps = StampGaps(plan.name) if plan.periodic else None
            plan.latest_stamp_ns = None
            if plan.subscription is not None:
                self._add_to_bag(plan)
        if path != requested:
            self.get_logger().warning(f"{requested} exists: recording to {path} instead")
        self.get_logger().info(f"recording {sorted(self.plans)} to {path}")
        return True, str(path)

    def stop(self) -> tuple[bool, str]:
        """Record what was already delivered, close the bag; (success, ``<path>: <n> messages``)."""
        if self.bag is None:
            return False, "not recording"
        self._drain()
        bag, self.bag = self.bag, None
        records = [plan.gaps.record() for plan in self.plans.values() if plan.gaps is not None and len(plan.gaps)]
        for record in records:
            bag.set_custom_data(CUSTOM_DATA_PREFIX + record.topic, record.to_json())
        bag.close()
        message = "; ".join([f"{bag.path}: {bag.message_count} messages"] + [r.describe() for r in records])
        if any(record.lost for record in records):
            self.get_logger().warning(f"closed {message}")
        else:
            self.get_logger().info(f"closed {message}")
        return True, message

    # ----------------------------------------------------------------- scene (markers, /tf)
    def _setup_scene(self, robot: str, joint_states: str, rate_hz: float) -> None:
        """Markers, ``/tf`` and ``robot_description`` solved from the recorded ``joint_states`` (:mod:`pardyn.scene.track`)."""
        from pardyn.robot import load_robot  # noqa: PLC0415 - only with scene: true
        from pardyn.scene.track import DESCRIPTION_TOPIC, MARKERS_TOPIC, SceneTrack  # noqa: PLC0415

        self.scene_source = self.resolve_topic_name(joint_states)
        if self.scene_source not in self.plans:
            raise InputError(f"parameter scene_joint_states: {self.scene_source} is not recorded (topics: "
                             f"{sorted(self.plans)})")
        self.scene = SceneTrack(load_robot(robot), self.typestore, rate_hz=rate_hz)
        self.scene_topics = self.scene.topics(self.resolve_topic_name(MARKERS_TOPIC),
                                              self.resolve_topic_name(DESCRIPTION_TOPIC))

    def _write_scene(self, bag: BagWriter, data: bytes, timestamp_ns: int) -> None:
        """The scene of the joint state ``data`` just written at ``timestamp_ns``, when one is due."""
        stamp = stamp_ns_from_cdr(data)  # the header's stamp, read without decoding the rest
        if self.scene_topics[0][0] in bag.topics and not self.scene.due(stamp):
            return  # no scene for this state: not decoded (the scene's rate of the 1 kHz states are)
        message = deserialize_cdr(self.typestore, data, "sensor_msgs/msg/JointState")
        stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
        if self.scene_topics[0][0] not in bag.topics:
            for topic, msgtype, qos in self.scene_topics:
                bag.add_topic(topic, msgtype, qos=qos)
            if self.scene.description:
                bag.write(self.scene_topics[2][0], self.scene.description_cdr(), timestamp_ns=timestamp_ns)
        dropped = self.scene.dropped
        scene = self.scene.update(message.name, message.position, stamp)
        if self.scene.dropped > dropped:
            self.get_logger().warning(f"no scene for a joint state: {self.scene.last_error}",
                                      throttle_duration_sec=REPORT_PERIOD_S)
        if scene is not None:
            bag.write(self.scene_topics[0][0], scene[0], timestamp_ns=timestamp_ns)
            bag.write(self.scene_topics[1][0], scene[1], timestamp_ns=timestamp_ns)

    def _add_to_bag(self, plan: _TopicPlan) -> bool:
        try:
            self.bag.add_topic(plan.name, plan.msgtype, qos=plan.qos, type_hash=plan.type_hash)
        except BagError as error:
            self._refuse(plan, str(error))
            return False
        return True

    def _drain(self) -> None:
        """Record the messages waiting in the subscriptions' queues (taken without the executor)."""
        for plan in self.plans.values():
            subscription = plan.subscription
            if subscription is None:
                continue
            try:
                while True:
                    with subscription.handle:
                        taken = subscription.handle.take_message(subscription.msg_type, subscription.raw)
                    if taken is None:
                        break
                    self._on_message(plan, taken[0])
            except Exception as error:  # noqa: BLE001 - rclpy internals changed, context shut down: skip draining
                self.get_logger().warning(f"cannot take the queued messages of {plan.name}: {error}", once=True)

    def _on_message(self, plan: _TopicPlan, data: bytes) -> None:
        plan.received += 1
        bag = self.bag
        if bag is None:
            self.ignored += 1
            return
        if plan.refused is not None:
            return
        if plan.name not in bag.topics and not self._add_to_bag(plan):
            return
        timestamp = None
        if self.timestamp_source == "receive" or not bag.has_stamp(plan.name):
            timestamp = self.get_clock().now().nanoseconds
        try:
            written = bag.write(plan.name, data, timestamp_ns=timestamp)
            if bag.has_stamp(plan.name):
                stamp = stamp_ns_from_cdr(data)
                if plan.gaps is not None:
                    plan.gaps.add(stamp)
                if plan.latest_stamp_ns is None or stamp > plan.latest_stamp_ns:
                    plan.latest_stamp_ns = stamp
            if plan.name == self.scene_source:
                self._write_scene(bag, data, written)
        except BagError as error:
            self.get_logger().warning(
                f"dropped a message: {error}", throttle_duration_sec=REPORT_PERIOD_S
            )
        except OSError as error:  # disk full, ...: the bag keeps its complete chunks
            self.get_logger().error(f"cannot write to {bag.path}: {error}", throttle_duration_sec=REPORT_PERIOD_S)
        except Exception as error:  # noqa: BLE001 - a bug on one message must not stop the recording
            self.get_logger().error(
                f"dropped a message of {plan.name}, unexpected {type(error).__name__}: {error}\n"
                f"{traceback.format_exc()}",
                throttle_duration_sec=REPORT_PERIOD_S,
            )

    def _flush_if_due(self) -> None:
        if self.bag is None:
            return
        try:
            self.bag.flush_if_due()
        except OSError as error:
            self.get_logger().error(f"cannot write to {self.bag.path}: {error}", throttle_duration_sec=REPORT_PERIOD_S)

    # ----------------------------------------------------------------- discovery
    def _refuse(self, plan: _TopicPlan, reason: str) -> None:
        plan.refused = reason
        if plan.subscription is not None:
            self.destroy_subscription(plan.subscription)
            plan.subscription = None
        self.get_logger().error(f"not recording {plan.name}: {reason}")

    def _discover(self) -> None:
        pending = [plan for plan in self.plans.values() if plan.subscription is None and plan.refused is None]
        for plan in pending:
            try:
                self._try_subscribe(plan)
            except Exception as error:  # noqa: BLE001 - a bad topic must not stop the others
                self._refuse(plan, f"{type(error).__name__}: {error}")
        if all(plan.subscription is not None or plan.refused is not None for plan in self.plans.values()):
            self._discovery_timer.cancel()

    def _try_subscribe(self, plan: _TopicPlan) -> None:
        publishers = self.get_publishers_info_by_topic(plan.name)
        if publishers:
            types = sorted({info.topic_type for info in publishers})
            if len(types) > 1:
                self._refuse(plan, f"published with several types {types}")
                return
            msgtype = normalize_msgtype(types[0])
            if plan.wanted_type is not None and plan.wanted_type != msgtype:
                self._refuse(plan, f"published as {msgtype}, parameter types says {plan.wanted_type}")
                return
            hashes = {str(info.topic_type_hash) for info in publishers}
            # publishers that do not advertise a hash give RIHS01_00...0 (or another version)
            hashes = {value for value in hashes if value.startswith("RIHS01_") and set(value[7:]) - {"0"}}
            if len(hashes) > 1:
                self._refuse(plan, f"publishers disagree on the definition of {msgtype}: {sorted(hashes)}")
                return
            plan.type_hash = hashes.pop() if hashes else None
            plan.qos = [to_bag_qos(info.qos_profile) for info in publishers]
            reliable = all(info.qos_profile.reliability == ReliabilityPolicy.RELIABLE for info in publishers)
            latched = all(info.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for info in publishers)
        elif plan.wanted_type is not None and self.reliability != "auto":
            msgtype, reliable, latched = plan.wanted_type, self.reliability == "reliable", False
        else:
            return  # wait for a publisher
        if self.reliability != "auto":
            reliable = self.reliability == "reliable"
        if msgtype not in self.typestore.fielddefs:
            self._refuse(plan, f"message type {msgtype} unknown to the rosbags typestore")
            return
        expected = self.typestore.hash_rihs01(msgtype)
        if plan.type_hash is not None and plan.type_hash != expected:
            self._refuse(plan, f"{msgtype}: the publishers' type hash {plan.type_hash} differs from {expected}")
            return
        message_class = _message_class(msgtype)
        plan.msgtype = msgtype
        qos = QoSProfile(
            history=HistoryPolicy.KEEP_LAST,
            depth=self.queue_depth,
            reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
            durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE,
        )
        plan.subscription = self.create_subscription(
            message_class, plan.name, lambda data, plan=plan: self._on_message(plan, data), qos, raw=True
        )
        self.get_logger().info(
            f"subscribed {plan.name} ({msgtype}, {'reliable' if reliable else 'best effort'}"
            f"{', transient local' if latched else ''})"
        )
        if self.bag is not None:
            self._add_to_bag(plan)

    # ----------------------------------------------------------------- services
    def _on_start(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        response.success, response.message = self.start()
        return response

    def _on_stop(self, request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        response.success, response.message = self.stop()
        return response

    def destroy_node(self) -> None:
        if self.bag is not None:
            self.stop()
        super().destroy_node()


def main(args: list[str] | None = None) -> int:
    """Run the node until Ctrl-C/SIGTERM (the bag is closed then); 0, or 1 if it cannot start."""
    return run_node(RecorderNode, NODE_NAME, args)


if __name__ == "__main__":
    sys.exit(main())
