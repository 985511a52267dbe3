#!/usr/bin/env python3
"""The 1 kHz messages taken and published as Python messages and as their bytes (:mod:`pardyn.nodes.wire`).

In one process, on a private DDS domain: a publisher and a subscription (not served by an executor) of the
DualV's ``joint_states`` (its actuated and sensed joints, positions and velocities) and of a command
(``Float64MultiArray`` of the actuated joints). Per message, median and p99 over ``--count`` messages (us):
rclpy's take converting to a Python message against the raw take plus :class:`JointStateWire.read` /
:func:`decode_command`; rclpy's publish of a message against the publish of :class:`CommandWire` /
:class:`JointStateWriter` bytes (refilled per message).

Run: ``.venv/bin/python bench/wire.py [--count 3000]``. Not a test: the times depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import random
import time
import uuid

import numpy as np


def percentiles(samples: list[int]) -> str:
    p50, p99 = np.percentile(np.array(samples) * 1e-3, [50, 99])
    return f"p50 {p50:6.1f}  p99 {p99:6.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=3000)
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    import rclpy  # noqa: PLC0415
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy  # noqa: PLC0415
    from rclpy.node import Node  # noqa: PLC0415
    from rclpy.qos import QoSProfile  # noqa: PLC0415
    from sensor_msgs.msg import JointState  # noqa: PLC0415
    from std_msgs.msg import Float64MultiArray  # noqa: PLC0415

    import pardyn  # noqa: PLC0415
    from pardyn.control.safety import joint_label  # noqa: PLC0415
    from pardyn.nodes.messages import command_message  # noqa: PLC0415
    from pardyn.nodes.wire import CommandWire, JointStateWire, JointStateWriter, decode_command  # noqa: PLC0415

    robot = pardyn.load_robot("dualv")
    names = list(robot.actuated_names) + list(robot.sensed_names)
    actuated = tuple(robot.actuated_names)
    rclpy.init()
    node = Node(f"wire_bench_{uuid.uuid4().hex[:8]}")
    qos = QoSProfile(depth=10)
    rows = []
    for what, msg_type, topic in (("joint_states", JointState, "wire_states"),
                                  ("command", Float64MultiArray, "wire_commands")):
        publisher = node.create_publisher(msg_type, topic, qos)
        with node.handle:
            handle = _rclpy.Subscription(node.handle, msg_type, publisher.topic_name, qos.get_c_qos_profile(), None)
        time.sleep(0.5)  # discovery within the process
        if msg_type is JointState:
            writer = JointStateWriter(names, ("position", "velocity"))
            reader = JointStateWire()
            message = JointState(name=names, position=[0.1] * len(names), velocity=[0.2] * len(names))
            as_bytes = lambda k: writer.fill(k, position=np.full(len(names), 0.1), velocity=np.full(len(names), 0.2))  # noqa: E731
            read = reader.read
        else:
            wire = CommandWire(joint_label(actuated), len(actuated))
            message = command_message(np.ones(len(actuated)), actuated, 0)
            as_bytes = lambda k: wire.fill(np.ones(len(actuated)), k)  # noqa: E731
            read = decode_command
        figures = {}
        for raw in (False, True):
            published, taken = [], []
            for k in range(args.count):
                begin = time.perf_counter_ns()
                publisher.publish(as_bytes(k) if raw else message)
                published.append(time.perf_counter_ns() - begin)
                while True:
                    begin = time.perf_counter_ns()
                    result = handle.take_message(msg_type, raw)
                    if result is not None:
                        if raw:
                            read(result[0])
                        taken.append(time.perf_counter_ns() - begin)
                        break
            figures[raw] = (percentiles(published), percentiles(taken))
        rows.append(f"  {what:12s} publish: message {figures[False][0]} | bytes {figures[True][0]}\n"
                    f"  {'':12s} take:    message {figures[False][1]} | bytes + read {figures[True][1]}")
        handle.destroy_when_not_in_use()
        node.destroy_publisher(publisher)
    print(f"{len(names)} joints in joint_states, {len(actuated)} torques a command; {args.count} messages, "
          f"one process (us):")
    print("\n".join(rows))
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
