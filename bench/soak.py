#!/usr/bin/env python3
"""Soak: the two-process lockstep loop for a minute at 1 kHz under a stream of bad messages.

Starts ``sim`` (MuJoCo plant, lockstep, 1 kHz), ``controller`` (PD holding a
setpoint) and a ``recorder`` (joint_states into an MCAP bag) with
``pardyn bringup FILE --processes`` (each its own OS process, as ``ros2 launch``
starts them), on a private DDS domain and namespace. This process injects, at
random (seeded), every kind of bad message of issue 20:

* commands: 1e9 N m tagged with the current step (a runaway), NaN/inf, the
  wrong number of values, joint names in the wrong order, stale tags;
* joint states to the controller: NaN positions, a missing joint, names and
  positions of different lengths, best-effort states without velocities and
  with a zero stamp (acted on by the controller, whose answer carries a stale
  tag that the sim drops), and velocities all NaN.

At the end (SIGINT to the runner, which forwards it to each node) it reports: lockstep steps completed (and per
second), commands rejected by the sim by reason, controller answers that were
the safe command, stalled steps (the loop stalled if > 0), the max closure
violation of the plant, and the messages lost in the bag (the sim's steps
against the distinct states recorded; expected 0: SIGINT closes the bag; a
``kill -9`` loses at most the last chunk, see the README).

Run: ``.venv/bin/python bench/soak.py [--seconds 60] [--rate-hz 200 (injections)] [--seed 0]``.
Not a test: the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import ast
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

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from loop import BenchNode, summary_figures  # noqa: E402 - the two-process loop's node helpers, shared
SETPOINT_TASK = [0.01, 0.005, 0.02]


class Injector(BenchNode):
    """The third process's rclpy node: hears the sim's step, sends bad messages at random."""

    def __init__(self, namespace: str, names: list[str], seed: int) -> None:
        from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray, MultiArrayDimension

        self.JointState, self.Float64MultiArray, self.Dimension = JointState, Float64MultiArray, MultiArrayDimension
        super().__init__(namespace, "soak_injector")
        self.names = names
        self.random = random.Random(seed)
        self.step = 0
        self.positions: list[float] | None = None
        self.node.create_subscription(JointState, "joint_states", self._on_state, 10)
        self.commands = self.node.create_publisher(Float64MultiArray, "effort_controller/commands", 10)
        self.states = self.node.create_publisher(JointState, "joint_states", 10)
        best_effort = QoSProfile(depth=10, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.BEST_EFFORT)
        self.best_effort_states = self.node.create_publisher(JointState, "joint_states", best_effort)
        self.sent: dict[str, int] = {}

    def _on_state(self, message) -> None:
        stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
        if stamp // 1_000_000 >= self.step:
            self.step = stamp // 1_000_000
            self.positions = list(message.position)

    def spin(self, seconds: float) -> None:
        super().spin(seconds, wait_s=0.002)

    def _command(self, data, tag: int, label: str = "") -> None:
        message = self.Float64MultiArray(data=[float(v) for v in data])
        message.layout.data_offset = int(tag) % 2**32
        if label:
            message.layout.dim = [self.Dimension(label=label, size=len(data), stride=len(data))]
        self.commands.publish(message)

    def _state(self, names, positions, velocities, stamp_ns: int, publisher=None) -> None:
        message = self.JointState()
        message.header.stamp.sec, message.header.stamp.nanosec = divmod(int(stamp_ns), 1_000_000_000)
        message.name = list(names)
        message.position = [float(v) for v in positions]
        message.velocity = [float(v) for v in velocities]
        (publisher or self.states).publish(message)

    def inject(self) -> None:
        """One bad message of a random kind."""
        n = len(self.names)
        kinds = ["runaway", "non_finite", "length", "joint_order", "stale_tag"]
        if self.positions is not None:
            kinds += ["state_nan", "state_missing_joint", "state_lengths", "state_zero_stamp_best_effort",
                      "state_nan_velocities_stale"]
        kind = self.random.choice(kinds)
        self.sent[kind] = self.sent.get(kind, 0) + 1
        q = list(self.positions or [])
        if kind == "runaway":
            self._command([self.random.choice([-1e9, 1e9]) for _ in range(n)], self.step)
        elif kind == "non_finite":
            values = [0.0] * n
            values[self.random.randrange(n)] = self.random.choice([math.nan, math.inf, -math.inf])
            self._command(values, self.step)
        elif kind == "length":
            self._command([0.0] * self.random.choice([0, n - 1, n + 1]), self.step)
        elif kind == "joint_order":
            self._command([1.0] * n, self.step, ",".join(reversed(self.names)))
        elif kind == "stale_tag":
            self._command([1.0] * n, self.step - self.random.randint(5000, 2**20))
        elif kind == "state_nan":
            self._state(self.names, [math.nan] + q[1:n], [0.0] * n, self.step * 1_000_000)
        elif kind == "state_missing_joint":
            self._state(self.names[1:], q[1:n], [0.0] * (n - 1), self.step * 1_000_000)
        elif kind == "state_lengths":
            self._state(self.names, q[: n - 1], [0.0] * n, self.step * 1_000_000)
        elif kind == "state_zero_stamp_best_effort":
            # a driver stamping zero, best effort, without velocities: the controller acts on it (its
            # answer carries tag 0, which the sim drops as stale)
            self._state(self.names, q[:n], [], 0, self.best_effort_states)
        elif kind == "state_nan_velocities_stale":
            self._state(self.names, q[:n], [math.nan] * n, max(0, self.step - 3000) * 1_000_000)


def start_bringup(logs: Path, namespace: str, bag: Path) -> subprocess.Popen:
    """``pardyn bringup --processes`` of sim, controller and recorder; its output (prefixed per node) in bringup.log."""
    config = ROOT / "config"
    nodes = [
        {"executable": "sim", "parameters": [str(config / "sim.yaml"), {"history_depth": 1000}]},
        {"executable": "controller", "parameters": [str(config / "controller.yaml"),
                                                    {"use_sim_time": True, "setpoint_task": SETPOINT_TASK}]},
        {"executable": "recorder", "parameters": [str(config / "recorder.yaml"), {
            "use_sim_time": True, "topics": ["joint_states"], "types": [""], "bag_path": str(bag),
            "timestamp_source": "header", "reliability": "reliable"}]},
    ]
    file = logs / "soak.yaml"
    file.write_text(yaml.safe_dump({"nodes": nodes}))
    command = [str(Path(sys.executable).parent / "pardyn"), "bringup", str(file), "--processes",
               "--namespace", namespace]
    return subprocess.Popen(command, stdout=(logs / "bringup.log").open("wb"), stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)


def node_output(output: str, node: str) -> str:
    """The lines of one node in the runner's output, without their ``[node] `` prefix."""
    prefix = f"[{node}] "
    return "\n".join(line[len(prefix):] for line in output.splitlines() if line.startswith(prefix))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="wall-clock seconds of the soak")
    parser.add_argument("--rate-hz", type=float, default=200.0, help="bad messages per second")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    namespace = f"/soak_{uuid.uuid4().hex[:8]}"

    from pardyn import load_robot
    from pardyn.bags import read_messages

    names = list(load_robot("dualv").actuated_names)
    with tempfile.TemporaryDirectory(prefix="pardyn_soak_") as scratch:
        logs = Path(scratch)
        bag = logs / "soak_bag"
        runner = start_bringup(logs, namespace, bag)
        injector = Injector(namespace, names, args.seed)
        try:
            # the nodes load (imports, MuJoCo model) and discover each other: inject once the loop runs
            deadline = time.monotonic() + 300.0
            while injector.step < 10 and time.monotonic() < deadline:
                injector.spin(0.1)
            started = time.monotonic()
            start_step = injector.step
            period = 1.0 / args.rate_hz
            while time.monotonic() - started < args.seconds:
                injector.inject()
                injector.spin(period)
            first_step = injector.step
        finally:
            injector.close()
            runner.send_signal(signal.SIGINT)  # Ctrl-C: the runner forwards it to every node
            runner.wait(timeout=60.0)
        output = (logs / "bringup.log").read_text(errors="replace")
        codes = ast.literal_eval(re.findall(r"\[bringup\]: exit codes (\{.*?\})", output)[-1])
        sim_output, controller_output = node_output(output, "sim"), node_output(output, "controller")
        figures = summary_figures(sim_output)
        # the bag also holds the injected states (same topic): count the distinct steps of the sim's
        measured = list(load_robot("dualv").measured_names)
        recorded = sorted({
            (m.message.header.stamp.sec * 1_000_000_000 + m.message.header.stamp.nanosec) // 1_000_000
            for m in read_messages(bag, "joint_states")
            if list(m.message.name) == measured and len(m.message.effort) == len(measured)
        })
        # states from the first one the recorder heard (discovery decides when that is) to the last (N)
        expected = int(figures["steps"]) + 1 - (recorded[0] if recorded else 0)
        steps_recorded = len(recorded)
        safe = len(re.findall(r"holding the safe command", controller_output))
        print(f"soak: {args.seconds:g} s of injection at {args.rate_hz:g} Hz (seed {args.seed}), "
              f"exit codes {codes}")
        print(f"  injected: {dict(sorted(injector.sent.items()))}")
        print(f"  lockstep steps completed: {int(figures['steps'])}; {first_step - start_step} during the "
              f"{args.seconds:g} s of injection ({(first_step - start_step) / args.seconds:.0f} steps/s)")
        print(f"  commands rejected by the sim: {figures['rejected']}")
        print(f"  stalled steps: {int(figures['stalls'])} -> the loop {'STALLED' if figures['stalls'] else 'never stalled'}")
        print(f"  controller: safe-command episodes logged {safe}")
        print(f"  max closure violation of the plant: {figures['closure']:.3g} m")
        print(f"  bag: {steps_recorded} of the {expected} states from the first one recorded (step "
              f"{recorded[0] if recorded else '-'}) to the last, {expected - steps_recorded} lost")
        print(f"  sim {figures['line'].split('sim summary: ')[-1]}")
        return 0 if codes["sim"] == 0 and figures["stalls"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
