#!/usr/bin/env python3
"""The hardware bringup driven at 1 kHz by an external process, as a ros2_control robot would drive it,
beside the smallest plain rclpy node answering the same stream in the same run (the anchor).

This process plays the robot: a steady 1 kHz timer publishes ``joint_states``
(the joint_state_broadcaster's QoS, the system default: reliable, keep last 10;
free-running, it never waits for an answer) with the DualV's actuated joints
moving slowly around home, stamped ``t_k = t_0 + k`` ms so that each command's
tag (``layout.data_offset``, :func:`pardyn.nodes.common.step_of_stamp`) names
the state it answers. Two answering processes take turns on this stream, on a
private DDS domain and namespace:

* the anchor: ``bench/plain_answer.py``, subscribe + one Float64MultiArray per state, nothing else;
* pardyn: ``pardyn bringup config/bringup/hardware.yaml`` (controller, trajectory and
  closure_solver in one process, or one process each with ``--processes``).

Each is measured quiet, then with a batch job beside it (``--batch-workers``
busy processes at nice 19: a build or a simulation someone started), for
``--seconds`` each. Figures, per answerer and load:

* answered: share of the published states that got a command (a controller
  that acts on the newest state skips states when it is late: the share says
  how often);
* latency: from publishing state ``k`` to receiving the command tagged ``k``
  (p50, p99, max, ms), as the driver sees it;
* newest: share of the commands that answer the newest state published when they arrive;
* the controller's own summary (time in the law, states it missed) and its real-time set-up line.

Goals (issue 34): pardyn answers within 0.5 points of the anchor and its p99 is within 1.5x the anchor's,
quiet and beside the batch job; >= 99.5 % with p99 < 1 ms where the anchor reaches that.

Run: ``.venv/bin/python bench/hardware.py [--seconds 8] [--batch-workers 2] [--processes]``.
Not a test: the figures depend on the machine and its load (this driver is a
Python process sharing the two cores; a real driver is not).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
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
from loop import BenchNode, BatchJob, stop, summary_figures  # noqa: E402 - shared bench helpers

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
        self.received = 0  # commands received (any tag)
        self.foreign = 0  # commands whose tag names no state published while measuring
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
        self.received += 1
        if tag not in self.sent:
            self.foreign += 1
        elif tag not in self.answers:
            newest = (self.t0_ns // PERIOD_NS + self.k) % 2**32
            self.answers[tag] = (time.perf_counter(), newest - tag)


def cpu_seconds(process: subprocess.Popen) -> float:
    """CPU time (user + system, s) used so far by ``process`` and its children."""
    import psutil  # noqa: PLC0415

    total = 0.0
    try:
        root = psutil.Process(process.pid)
        for member in [root, *root.children(recursive=True)]:
            times = member.cpu_times()
            total += times.user + times.system
    except psutil.Error:
        pass
    return total


def bringup_nodes(config: str) -> tuple[str, ...]:
    """The node names (executables) of a bringup file."""
    import yaml  # noqa: PLC0415

    described = yaml.safe_load(Path(config).read_text())
    return tuple(entry.get("name", entry["executable"]) for entry in described.get("nodes", []))


def measure(driver: Driver, seconds: float, process: subprocess.Popen) -> dict:
    """Clear the driver's records, let it run ``seconds``, and the figures of what was answered meanwhile."""
    driver.sent.clear()
    driver.answers.clear()
    driver.received = driver.foreign = 0
    first, begin = driver.k, time.perf_counter()
    cpu_answerer, cpu_driver = cpu_seconds(process), time.process_time()
    driver.spin(seconds)
    span, published = time.perf_counter() - begin, driver.k - first
    cpu_answerer, cpu_driver = cpu_seconds(process) - cpu_answerer, time.process_time() - cpu_driver
    sent, answers = dict(driver.sent), dict(driver.answers)
    received, foreign = driver.received, driver.foreign
    driver.spin(0.05)  # late answers of the last states
    answers = {tag: driver.answers[tag] for tag in sent if tag in driver.answers}
    missing = [tag not in answers for tag in sorted(sent)]
    longest = run = 0
    longest_end = 0
    ordered = sorted(sent)
    for index, gap in enumerate(missing):
        run = run + 1 if gap else 0
        if run > longest:
            longest, longest_end = run, ordered[index]
    if longest > 50:  # the stamp (s) where it ended, to find it in the nodes' logs
        print(f"  ({longest} states unanswered up to the one stamped {longest_end * PERIOD_NS * 1e-9:.3f} s)")
    latency = np.array([(answers[tag][0] - sent[tag]) * 1e3 for tag in sent if tag in answers])
    stale = np.array([answers[tag][1] for tag in sent if tag in answers])
    return {"rate": published / span, "sent": len(sent), "answered": len(latency),
            "percent": 100.0 * len(latency) / max(1, len(sent)),
            "p50": float(np.percentile(latency, 50)) if latency.size else math.nan,
            "p99": float(np.percentile(latency, 99)) if latency.size else math.nan,
            "max": float(latency.max()) if latency.size else math.nan,
            "longest_gap": float(longest),
            "received": 100.0 * received / max(1, published), "foreign": 100.0 * foreign / max(1, published),
            "newest": 100.0 * float(np.mean(stale == 0)) if stale.size else math.nan,
            "cpu": 100.0 * cpu_answerer / span, "driver_cpu": 100.0 * cpu_driver / span}


def run_answerer(name: str, command: list[str], environment: dict, driver: Driver, args, log: Path,
                 nodes: tuple[str, ...] = ()) -> dict:
    """Start one answering process, wait until it is up, measure it quiet then beside the batch job.

    Up: it answered a state published after it was started (not a late answer of the previous answerer
    still queued at the driver: before, that started the quiet measurement while the bringup was still
    importing, and its 0.5-2 s of start-up counted as unanswered states), and each of ``nodes`` has logged."""
    process = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               env=environment, cwd=ROOT)
    figures: dict = {}
    try:
        driver.spin(0.1)  # the previous answerer's late commands
        driver.answers.clear()
        driver.publishing = True
        first_tag = (driver.t0_ns // PERIOD_NS + driver.k + 1) % 2**32
        deadline = time.monotonic() + 60.0

        def up() -> bool:
            fresh = any((tag - first_tag) % 2**32 < 2**31 for tag in driver.answers)
            text = log.read_text(errors="replace") if nodes else ""
            return fresh and all(f".{node}]" in text for node in nodes)

        while not up() and time.monotonic() < deadline:
            driver.spin(0.1)
            if process.poll() is not None:
                raise RuntimeError(f"{name} stopped:\n{log.read_text(errors='replace')}")
        if not up():
            raise RuntimeError(f"{name} was not up in 60 s:\n{log.read_text(errors='replace')}")
        driver.spin(1.0)  # settle
        figures["quiet"] = measure(driver, args.seconds, process)
        if args.batch_workers:
            with BatchJob(args.batch_workers):
                driver.spin(0.5)
                figures["batch"] = measure(driver, args.seconds, process)
    finally:
        code = stop(process, 20.0) if process.poll() is None else process.returncode
    figures["exit"] = code
    figures["log"] = log.read_text(errors="replace")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="wall-clock seconds measured per answerer and load")
    parser.add_argument("--batch-workers", type=int, default=2,
                        help="busy processes at nice 19 beside the second measurement (0: quiet only)")
    parser.add_argument("--executor", default="events", choices=["events", "single"],
                        help="executor of the bringup (PARDYN_EXECUTOR)")
    parser.add_argument("--processes", action="store_true", help="each node of the bringup its own process")
    parser.add_argument("--config", default=str(ROOT / "config" / "bringup" / "hardware.yaml"),
                        help="bringup file (a variant of the hardware bringup, for comparisons)")
    parser.add_argument("--logs", default="", help="folder to keep the answering processes' logs in")
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    namespace = f"/pardyn_hw_{uuid.uuid4().hex[:8]}"

    from pardyn import load_robot  # noqa: PLC0415

    robot = load_robot("dualv")
    names = list(robot.actuated_names)
    home = robot.home[robot.actuated_indices]
    layout = "one process" if not args.processes else "one process per node"
    print(f"hardware bringup (config/bringup/hardware.yaml, {layout}, executor {args.executor}) and the plain rclpy "
          f"answering node (anchor), each driven at 1 kHz by this process; {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}; {args.seconds:g} s each quiet and beside {args.batch_workers} busy processes at "
          f"nice 19")
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="pardyn_hw_") as scratch:
        folder = args.logs or scratch
        Path(folder).mkdir(parents=True, exist_ok=True)
        pardyn = Path(sys.executable).parent / "pardyn"
        pardyn_command = [str(pardyn) if pardyn.is_file() else sys.executable,
                          *([] if pardyn.is_file() else ["-m", "pardyn.cli"]),
                          "bringup", args.config, "--namespace", namespace,
                          "--verbose", *(["--processes"] if args.processes else [])]  # --verbose: the node log here
        plain_command = [sys.executable, str(ROOT / "bench" / "plain_answer.py"), ",".join(names), str(PERIOD_NS),
                         "--ros-args", "-r", f"__ns:={namespace}"]
        driver = Driver(namespace, names, home)
        try:
            results["plain rclpy"] = run_answerer("the plain node", plain_command, dict(os.environ), driver, args,
                                                  Path(folder) / "plain.log")
            results["pardyn"] = run_answerer("the bringup", pardyn_command,
                                             {**os.environ, "PARDYN_EXECUTOR": args.executor}, driver, args,
                                             Path(folder) / "bringup.log", bringup_nodes(args.config))
        finally:
            driver.close()
    loads = ["quiet"] + (["batch"] if args.batch_workers else [])
    columns = [(who, load) for load in loads for who in results]
    header = "".join(f"{(who + (' +nice19' if load == 'batch' else ' quiet')):>20s}" for who, load in columns)
    print(f"  {'figure':34s}{header}")
    rows = [("driver: states/s published", "rate", "{:20.1f}"), ("answered (%)", "percent", "{:20.2f}"),
            ("latency p50 (ms)", "p50", "{:20.3f}"), ("latency p99 (ms)", "p99", "{:20.3f}"),
            ("latency max (ms)", "max", "{:20.3f}"), ("answers the newest state (%)", "newest", "{:20.1f}"),
            ("longest run of unanswered states", "longest_gap", "{:20.0f}"),
            ("commands received / states (%)", "received", "{:20.1f}"),
            ("  of which answer no sent state (%)", "foreign", "{:20.1f}"),
            ("CPU of the answering process (%)", "cpu", "{:20.1f}"), ("CPU of the driver (%)", "driver_cpu", "{:20.1f}")]
    for label, key, form in rows:
        print(f"  {label:34s}" + "".join(form.format(results[who][load][key]) for who, load in columns))
    verdicts = []
    for load in loads:
        plain, ours = results["plain rclpy"][load], results["pardyn"][load]
        ok_answered = ours["percent"] >= plain["percent"] - 0.5
        ok_p99 = ours["p99"] <= 1.5 * plain["p99"]
        absolute = plain["percent"] >= 99.5 and plain["p99"] < 1.0
        ok_absolute = ours["percent"] >= 99.5 and ours["p99"] < 1.0
        verdicts.append(f"{'quiet' if load == 'quiet' else 'beside the nice-19 job'}: answered "
                        f"{ours['percent'] - plain['percent']:+.2f} points vs the anchor ({'met' if ok_answered else 'NOT met'}"
                        f", goal >= -0.5), p99 {ours['p99'] / plain['p99']:.2f}x ({'met' if ok_p99 else 'NOT met'}, goal "
                        f"<= 1.5x)" + (f"; the anchor reaches 99.5 % / 1 ms: pardyn "
                                       f"{'too' if ok_absolute else 'does NOT'}" if absolute else ""))
    for line in verdicts:
        print(f"  {line}")
    ours = results["pardyn"]
    controller = summary_figures(ours["log"], "controller")
    realtime = next((l.split("]: ", 1)[-1] for l in ours["log"].splitlines() if "real-time" in l), "no real-time line")
    thread = re.search(r"state thread: .*", controller["line"])
    print(f"  controller (whole run): law p50 {controller['law_p50_us']:.3g} us, p99 {controller['law_p99_us']:.3g} us; "
          f"{controller['missed']:.0f} states missed of {controller['answered'] + controller['missed']:.0f}; "
          f"{thread.group(0) if thread else ''}; {realtime}")
    print(f"  exit codes: plain {results['plain rclpy']['exit']}, bringup {ours['exit']}")
    return 0 if ours["exit"] == 0 else 1


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
