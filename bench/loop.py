#!/usr/bin/env python3
"""The sim + controller loop over DDS: achieved rate, latency percentiles, lockstep steps per second.

Starts the ``sim`` and ``controller`` nodes as two OS processes (their console
scripts, as ``ros2 run`` would) on a private DDS domain and namespace, and
watches them from this process:

* free-running (``lockstep: false``, 1 kHz steady timer in the sim):
  - achieved loop rate: states published per wall-clock second, and the
    real-time factor (simulated seconds per wall second);
  - latency: from the arrival of state ``k`` here to the arrival of the
    controller's answer tagged ``k`` (one DDS hop + the controller's work;
    both seen by the same third process), percentiles p50, p90, p99, max (ms);
  - command age: the applied torque over step ``k`` (the ``effort`` of state
    ``k+1``, noise off) is the answer to which state? ``k - tag`` in steps
    (0 = the controller answered before the sim's next tick);
* lockstep: simulated steps per wall-clock second;
* the same loop in one process without ROS (plant + encoders + PD): steps per
  second, the ceiling the DDS loop is compared against (ratio).

Run: ``.venv/bin/python bench/loop.py [--robot dualv] [--plant mujoco] [--seconds 5]``.
Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
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


def node_command(executable: str) -> list[str]:
    script = Path(sys.executable).parent / executable
    return [str(script)] if script.is_file() else [sys.executable, "-m", f"pardyn.nodes.{executable}"]


def start(executable: str, namespace: str, params: dict, log: Path) -> subprocess.Popen:
    arguments = ["--ros-args", "-r", f"__ns:={namespace}", "--params-file", str(ROOT / "config" / f"{executable}.yaml")]
    for name, value in params.items():
        arguments += ["-p", f"{name}:={value}"]
    return subprocess.Popen(node_command(executable) + arguments, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)


def stop(process: subprocess.Popen, timeout_s: float = 10.0) -> int:
    """SIGINT, then SIGKILL after ``timeout_s``; the exit status."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


def percentiles(values) -> str:
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return "no samples"
    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    return f"p50 {p50:7.3f}  p90 {p90:7.3f}  p99 {p99:7.3f}  max {values.max():7.3f}"


class Observer:
    """This process's rclpy node: arrival times of states and commands."""

    def __init__(self, namespace: str) -> None:
        import rclpy  # noqa: PLC0415
        from rclpy.executors import SingleThreadedExecutor  # noqa: PLC0415
        from rclpy.node import Node  # noqa: PLC0415
        from sensor_msgs.msg import JointState  # noqa: PLC0415
        from std_msgs.msg import Float64MultiArray  # noqa: PLC0415

        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = Node(f"bench_{uuid.uuid4().hex[:8]}", namespace=namespace, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.states: list[tuple[float, object]] = []
        self.commands: list[tuple[float, object]] = []
        self.node.create_subscription(JointState, "joint_states",
                                      lambda m: self.states.append((time.perf_counter(), m)), 10_000)
        self.node.create_subscription(Float64MultiArray, "effort_controller/commands",
                                      lambda m: self.commands.append((time.perf_counter(), m)), 10_000)

    def spin(self, seconds: float, until=None) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if until is not None and until():
                return True
            self.executor.spin_once(timeout_sec=0.01)
        return until is None

    def clear(self) -> None:
        self.states.clear()
        self.commands.clear()

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


def stamp_ns(message) -> int:
    return message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec


def run_pair(args, namespace: str, lockstep: bool, logs: Path) -> tuple[Observer, float]:
    """Sim + controller for ``args.seconds`` of wall time after the loop is running; the observer and the span (s)."""
    observer = Observer(namespace)
    sim = start("sim", namespace, {
        "robot": args.robot, "plant": args.plant, "rate": float(args.rate), "lockstep": str(lockstep).lower(),
        "torque_noise": 0.0, "torque_noise_floor": 0.0, "history_depth": 10_000, "publish_ground_truth": "false",
    }, logs / f"sim_{lockstep}.log")
    controller = None
    try:
        if not observer.spin(30.0, until=lambda: observer.states):
            raise RuntimeError(f"no state from the sim; see {logs}")
        controller = start("controller", namespace, {
            "robot": args.robot, "rate": float(args.rate), "use_sim_time": "true",
        }, logs / f"controller_{lockstep}.log")
        if not observer.spin(30.0, until=lambda: observer.commands):
            raise RuntimeError(f"no command from the controller; see {logs}")
        observer.spin(0.5)  # settle
        observer.clear()
        begin = time.perf_counter()
        observer.spin(args.seconds)
        span = time.perf_counter() - begin
        return observer, span
    finally:
        if controller is not None:
            stop(controller)
        stop(sim)


def free_running_report(observer: Observer, span: float, rate: float) -> None:
    period_ns = round(1e9 / rate)
    states = observer.states
    stamps = np.array([stamp_ns(m) for _, m in states])
    print(f"  states received       {len(states)} in {span:.2f} s: {len(states) / span:8.1f} per s "
          f"(target {rate:g}); real-time factor {(stamps[-1] - stamps[0]) * 1e-9 / span:.3f}")
    arrival = {stamp_ns(m) // period_ns: t for t, m in states}
    answers: dict[int, float] = {}
    values: dict[int, np.ndarray] = {}
    for t, m in observer.commands:
        answers.setdefault(m.layout.data_offset, t)
        values.setdefault(m.layout.data_offset, np.array(m.data))
    latency = [(answers[k] - arrival[k]) * 1e3 for k in arrival if k in answers]
    print(f"  latency state -> command (ms, {len(latency)} answers): {percentiles(latency)}")
    # which answer was applied over step k: match the effort of state k+1 with the commands
    ages = []
    by_step = {stamp_ns(m) // period_ns: m for _, m in states}
    n_a = len(next(iter(values.values()))) if values else 0
    for k in by_step:
        if k + 1 not in by_step:
            continue
        applied = np.array(by_step[k + 1].effort[:n_a])  # actuated joints come first
        candidates = [tag for tag in range(k - 50, k + 1) if tag in values and np.array_equal(values[tag], applied)]
        if candidates:
            ages.append(k - candidates[-1])
    if ages:
        ages = np.array(ages)
        share = np.mean(ages == 0) * 100
        print(f"  command age (steps)   {percentiles(ages)}; answer applied at the next tick: {share:.1f} %")


def in_process_rate(args, steps: int = 2000) -> float:
    """Steps per second of plant + encoders + PD in one process, no ROS."""
    import pardyn  # noqa: PLC0415
    from pardyn.control import JointReference, actuator_limits  # noqa: PLC0415
    from pardyn.control.pd import JointPD  # noqa: PLC0415
    from pardyn.plants.registry import make_plant  # noqa: PLC0415
    from pardyn.plants.measurement import MeasurementModel  # noqa: PLC0415

    robot = pardyn.load_robot(args.robot)
    plant = make_plant(robot, args.plant, coulomb_width=0.01)
    sensors = MeasurementModel(robot, velocities="difference", torque_noise=0.0, torque_noise_floor=0.0)
    law = JointPD(100.0, 6.0, limits=actuator_limits(robot))
    hold = JointReference.hold(robot.home[robot.actuated_indices])
    n_a = len(robot.actuated_names)
    state = plant.state()
    begin = time.perf_counter()
    for _ in range(steps):
        reading = sensors.measure(state)
        tau = law.torques(reading.positions[:n_a], reading.velocities[:n_a], hold)
        state = plant.step(tau, 1.0 / args.rate)
    return steps / (time.perf_counter() - begin)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", default="dualv")
    parser.add_argument("--plant", default="mujoco", choices=["mujoco", "pinocchio"])
    parser.add_argument("--rate", type=float, default=1000.0, help="control rate (Hz)")
    parser.add_argument("--seconds", type=float, default=5.0, help="wall-clock seconds measured per mode")
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    namespace = f"/pardyn_bench_{uuid.uuid4().hex[:8]}"
    print(f"sim + controller, {args.robot} on the {args.plant} plant at {args.rate:g} Hz, two processes over DDS "
          f"(domain {os.environ['ROS_DOMAIN_ID']}), {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="pardyn_bench_") as folder:
        logs = Path(folder)
        reference = in_process_rate(args)
        print(f"in one process, no ROS: {reference:8.1f} steps per s (plant + encoders + PD)")

        print("free-running:")
        observer, span = run_pair(args, f"{namespace}/free", False, logs)
        try:
            free_running_report(observer, span, args.rate)
        finally:
            observer.close()

        print("lockstep:")
        observer, span = run_pair(args, f"{namespace}/lockstep", True, logs)
        try:
            stamps = sorted({stamp_ns(m) for _, m in observer.states})
            steps = len(stamps)
            print(f"  {steps} steps in {span:.2f} s: {steps / span:8.1f} steps per s "
                  f"(real-time factor {steps / span / args.rate:.3f}; {steps / span / reference:.3f} x the "
                  "in-process loop)")
        finally:
            observer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
