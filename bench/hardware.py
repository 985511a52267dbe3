#!/usr/bin/env python3
"""The hardware bringup driven at 1 kHz by an external process, as a ros2_control robot would drive it.

Starts ``pardyn bringup config/bringup/hardware.yaml`` (controller, trajectory,
closure_solver in one process, or one process each with ``--processes``: both
the controller and the closure solver solve the closed loop for every state)
on a private DDS domain and namespace; this
process plays the robot: a steady 1 kHz timer publishes ``joint_states``
(the joint_state_broadcaster's QoS: reliable, keep last 10; free-running, it
never waits for an answer) with the DualV's actuated joints moving slowly
around home, stamped ``t_k = t_0 + k`` ms so that the controller's tag of
each command (:func:`pardyn.nodes.common.step_of_stamp`) names the state it
answers. It reports:

* states published per second (the driver's own rate: the anchor);
* answered: share of the published states that got a command (a controller
  that acts on the newest state skips states when it is late: the share says
  how often);
* latency: from publishing state ``k`` to receiving the command tagged ``k``
  (p50, p99, max, ms), as the driver sees it;
* staleness: how many newer states the driver had already published when a
  command arrived (0: the command answers the newest state);
* the controller's own summary (time in the law, states it missed).

Run: ``.venv/bin/python bench/hardware.py [--seconds 10] [--executor events|single] [--processes]``.
Not a test: the figures depend on the machine and its load (this driver is a
Python process sharing the two cores; a real driver is not).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from loop import BenchNode, percentiles, stop, summary_figures  # noqa: E402 - shared bench helpers

PERIOD_NS = 1_000_000


class Driver(BenchNode):
    """This process's rclpy node: the robot's joint_states at 1 kHz, the commands it receives."""

    def __init__(self, namespace: str, names: list[str], home: np.ndarray) -> None:
        from rclpy.clock import Clock, ClockType  # noqa: PLC0415
        from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: PLC0415
        from sensor_msgs.msg import JointState  # noqa: PLC0415
        from std_msgs.msg import Float64MultiArray  # noqa: PLC0415

        from pardyn.nodes.common import ns_to_stamp  # noqa: PLC0415

        self.JointState, self.ns_to_stamp = JointState, ns_to_stamp
        super().__init__(namespace, "driver")
        broadcaster_qos = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
        self.publisher = self.node.create_publisher(JointState, "joint_states", broadcaster_qos)
        self.node.create_subscription(Float64MultiArray, "effort_controller/commands", self._on_command,
                                      broadcaster_qos)
        self.names, self.home = names, home
        self.k = -1
        self.t0_ns = (time.time_ns() // PERIOD_NS + 1) * PERIOD_NS
        self.sent: dict[int, float] = {}  # tag -> wall time of publishing
        self.answers: dict[int, tuple[float, int]] = {}  # tag -> (wall time of the first answer, newest k then)
        self.publishing = False
        self.node.create_timer(PERIOD_NS * 1e-9, self._tick, clock=Clock(clock_type=ClockType.STEADY_TIME))

    def _tick(self) -> None:
        self.k += 1
        k = self.k
        message = self.JointState()
        stamp_ns = self.t0_ns + k * PERIOD_NS
        message.header.stamp = self.ns_to_stamp(stamp_ns)
        message.name = self.names
        t = k * 1e-3
        position = self.home + 0.05 * math.sin(2.0 * math.pi * 0.5 * t)
        message.position = position.tolist()
        message.velocity = [0.05 * 2.0 * math.pi * 0.5 * math.cos(2.0 * math.pi * 0.5 * t)] * len(self.names)
        message.effort = [0.0] * len(self.names)
        self.publisher.publish(message)
        if self.publishing:
            self.sent[(stamp_ns // PERIOD_NS) % 2**32] = time.perf_counter()

    def _on_command(self, message) -> None:
        tag = int(message.layout.data_offset)
        if tag in self.sent and tag not in self.answers:
            newest = (self.t0_ns // PERIOD_NS + self.k) % 2**32
            self.answers[tag] = (time.perf_counter(), newest - tag)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="wall-clock seconds measured")
    parser.add_argument("--executor", default="events", choices=["events", "single"],
                        help="executor of the bringup (PARDYN_EXECUTOR)")
    parser.add_argument("--processes", action="store_true", help="each node of the bringup its own process")
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    namespace = f"/pardyn_hw_{uuid.uuid4().hex[:8]}"

    from pardyn import load_robot  # noqa: PLC0415

    robot = load_robot("dualv")
    names = list(robot.actuated_names)
    home = robot.home[robot.actuated_indices]
    layout = "one process per node" if args.processes else "one process"
    print(f"hardware bringup (config/bringup/hardware.yaml, {layout}, executor {args.executor}) driven at 1 kHz by an "
          f"external process, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="pardyn_hw_") as folder:
        log = Path(folder) / "bringup.log"
        pardyn = Path(sys.executable).parent / "pardyn"
        command = [str(pardyn) if pardyn.is_file() else sys.executable, *([] if pardyn.is_file() else ["-m", "pardyn.cli"]),
                   "bringup", str(ROOT / "config" / "bringup" / "hardware.yaml"), "--namespace", namespace,
                   "--verbose", *(["--processes"] if args.processes else [])]  # --verbose: the node log here
        bringup = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env={**os.environ, "PARDYN_EXECUTOR": args.executor}, cwd=ROOT)
        driver = Driver(namespace, names, home)
        try:
            deadline = time.monotonic() + 60.0
            while not driver.answers and time.monotonic() < deadline:
                driver.publishing = True
                driver.spin(0.1)
                if bringup.poll() is not None:
                    raise RuntimeError(f"the bringup stopped:\n{log.read_text(errors='replace')}")
            driver.spin(1.0)  # settle
            driver.sent.clear()
            driver.answers.clear()
            first = driver.k
            begin = time.perf_counter()
            driver.spin(args.seconds)
            span = time.perf_counter() - begin
            published = driver.k - first
            driver.publishing = False
            driver.spin(0.2)  # late answers
        finally:
            driver.close()
            code = stop(bringup, 20.0) if bringup.poll() is None else bringup.returncode
        controller = summary_figures(log.read_text(errors="replace"), "controller")
    sent, answers = driver.sent, driver.answers
    latency = [(answers[tag][0] - sent[tag]) * 1e3 for tag in sent if tag in answers]
    stale = [answers[tag][1] for tag in sent if tag in answers]
    answered = 100.0 * len(latency) / max(1, len(sent))
    print(f"  driver: {published / span:7.1f} states/s published (target 1000; the anchor)")
    print(f"  answered: {len(latency)} of {len(sent)} states ({answered:.2f} %; goal >= 99.5 %)")
    print(f"  latency state -> command as the driver sees it (ms): {percentiles(latency)} (goal p99 < 1)")
    if stale:
        stale = np.asarray(stale)
        print(f"  newer states already published when the command arrived: {percentiles(stale)}; "
              f"{100.0 * np.mean(stale == 0):.1f} % answer the newest")
    print(f"  controller: law p50 {controller['law_p50_us']:.3g} us, p99 {controller['law_p99_us']:.3g} us; "
          f"{controller['missed']:.0f} states missed of {controller['answered'] + controller['missed']:.0f}")
    print(f"  bringup exit code {code}")
    return 0 if code == 0 else 1


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
