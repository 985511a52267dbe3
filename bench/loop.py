#!/usr/bin/env python3
"""The sim + controller loop over DDS at 1 kHz: rate, latency and freshness measured inside the loop.

Starts the ``sim`` and ``controller`` nodes as two OS processes (their console
scripts, as ``ros2 run`` would) on a private DDS domain and namespace, lets
them run, stops them with SIGINT and reads the figures they measured
themselves (their summary lines):

* free-running (``lockstep: false``, 1 kHz steady timer in the sim):
  - achieved rate: periods simulated per wall-clock second (target 1000);
  - latency inside the sim: from publishing state ``k`` to receiving the
    command tagged ``k`` (one DDS hop each way + the controller's work),
    percentiles p50, p99, max (ms);
  - freshness: share of periods run on the answer to the state just before
    them (the command arrived before the next tick);
  - inside the controller: time in the law per state (us) and states it
    never saw (keep last 1: it skips to the newest when late);
* lockstep: simulated steps per wall-clock second (goal >= 1500);
* in this process: the controller's work on one state (PD + eq. 50 on the Python path and as one kernel
  call, :mod:`pardyn.control.compiled`) beside the PD alone, and the two paths' torque difference;
* per ``--executors`` entry: ``events`` (the default of :func:`pardyn.nodes.common.make_executor`: both nodes
  on rclpy's events executor, one process each, as ``ros2 launch`` starts them: the shipped configuration),
  ``single`` (rclpy's single-threaded executor, ``PARDYN_EXECUTOR``), ``SIM/CONTROLLER`` for one each, and
  ``one-process`` (both nodes in one ``pardyn bringup`` process: one rclpy context and executor, no DDS hop
  between processes); beside the same loop in one process without ROS (plant + encoders + PD): the ceiling
  the DDS loop is compared against;
* the anchor (``events/plain``): the same sim answered by ``bench/plain_answer.py``, the smallest rclpy node
  that answers each state, in place of pardyn's controller (issue 34: freshness >= 95 % and lockstep
  >= 0.55x the in-process loop with the shipped executors, beside what the plain node reaches);
* ``--batch-workers N``: everything above (the in-process loop too) with ``N`` busy processes at nice 19 beside
  it (an unrelated batch job, as ``bench/hardware.py`` runs one);
* ``--observer``: also the latency as seen by a third process subscribed to
  both topics (what earlier versions of this bench printed; the observer
  shares the two cores and perturbs what it measures).

Run: ``.venv/bin/python bench/loop.py [--robot dualv] [--plant mujoco] [--seconds 10] [--law pd] [--batch-workers 1]
[--executors events,events/plain,one-process]``.
Not a test: numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import math
import os
import re
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

from pardyn.nodes.launcher import node_command  # noqa: E402 - the console script, as ros2 run starts it


def start(executable: str, namespace: str, params: dict, log: Path, environment: dict | None = None) -> subprocess.Popen:
    arguments = ["--ros-args", "-r", f"__ns:={namespace}", "--params-file", str(ROOT / "config" / f"{executable}.yaml")]
    for name, value in params.items():
        arguments += ["-p", f"{name}:={value}"]
    return subprocess.Popen(node_command(executable) + arguments, stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, env={**os.environ, **(environment or {})})


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


class BatchJob:
    """``workers`` busy processes at nice 19 while the ``with`` block runs: an unrelated batch job beside the loop
    (a build, a long simulation), the case where a node's scheduling and its pauses show."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.processes: list[subprocess.Popen] = []

    def __enter__(self) -> BatchJob:
        busy = "import numpy\nx = numpy.random.rand(200, 200)\nwhile True:\n    x = numpy.tanh(x @ x.T * 1e-3)\n"
        self.processes = [subprocess.Popen(["nice", "-n", "19", sys.executable, "-c", busy],
                                           stdin=subprocess.DEVNULL, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
                          for _ in range(self.workers)]
        return self

    def __exit__(self, *exc) -> None:
        for process in self.processes:
            process.kill()
        for process in self.processes:
            process.wait()


class BenchNode:
    """An rclpy node of this (bench) process in its own context, spun with pardyn's executor."""

    def __init__(self, namespace: str, prefix: str) -> None:
        import rclpy  # noqa: PLC0415
        from rclpy.node import Node  # noqa: PLC0415

        from pardyn.nodes.common import make_executor  # noqa: PLC0415

        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = Node(f"{prefix}_{uuid.uuid4().hex[:8]}", namespace=namespace, context=self.context)
        self.executor = make_executor(self.context)
        self.executor.add_node(self.node)

    def spin(self, seconds: float, until=None, wait_s: float = 0.01) -> bool:
        """Spin for ``seconds`` (waits of at most ``wait_s``), or until ``until()``; whether it held."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if until is not None and until():
                return True
            self.executor.spin_once(timeout_sec=max(0.0, min(wait_s, deadline - time.monotonic())))
        return until is None

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()


class Observer(BenchNode):
    """This process's rclpy node: arrival times of states and commands."""

    def __init__(self, namespace: str) -> None:
        from sensor_msgs.msg import JointState  # noqa: PLC0415
        from std_msgs.msg import Float64MultiArray  # noqa: PLC0415

        super().__init__(namespace, "bench")
        self.states: list[tuple[float, object]] = []
        self.commands: list[tuple[float, object]] = []
        self.node.create_subscription(JointState, "joint_states",
                                      lambda m: self.states.append((time.perf_counter(), m)), 10_000)
        self.node.create_subscription(Float64MultiArray, "effort_controller/commands",
                                      lambda m: self.commands.append((time.perf_counter(), m)), 10_000)

    def clear(self) -> None:
        self.states.clear()
        self.commands.clear()


def stamp_ns(message) -> int:
    return message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec


SUMMARY_PATTERNS = {
    "steps": r"(\d+) steps \(", "steps_per_s": r"\((\d+) steps/s\)", "applied": r"(\d+) commands applied",
    "stalls": r"(\d+) stalled steps", "closure": r"max closure violation ([0-9.e+-]+)",
    "latency_p50_ms": r"latency p50 ([0-9.e+-]+) p99", "latency_p99_ms": r"latency p50 [0-9.e+-]+ p99 ([0-9.e+-]+)",
    "latency_max_ms": r"latency p50 [0-9.e+-]+ p99 [0-9.e+-]+ max ([0-9.e+-]+)",
    "fresh_percent": r"([0-9.]+|nan) % of periods", "work_p50_us": r"publishing\) p50 ([0-9.e+-]+)",
    "work_p99_us": r"publishing\) p50 [0-9.e+-]+ p99 ([0-9.e+-]+)",
    "answered": r"(\d+) states answered", "missed": r"(\d+) missed", "law_p50_us": r"law p50 ([0-9.e+-]+)",
    "law_p99_us": r"law p50 [0-9.e+-]+ p99 ([0-9.e+-]+)",
}


def summary_figures(output: str, node: str = "sim") -> dict:
    """The numbers of a node's summary line (``sim summary: ...``, ``controller summary: ...``); NaN if absent."""
    line = next((l for l in output.splitlines() if f"{node} summary" in l), "")
    figures: dict = {"line": line}
    for key, pattern in SUMMARY_PATTERNS.items():
        match = re.search(pattern, line)
        figures[key] = float(match.group(1)) if match else math.nan
    match = re.search(r"commands rejected: (.*?), \d+ stalled steps", line)
    figures["rejected"] = match.group(1) if match else "?"
    return figures


def run_pair(args, namespace: str, lockstep: bool, executor: str, logs: Path) -> tuple[dict, dict]:
    """Sim + controller for ``args.seconds`` of wall time once the loop runs; their summary figures."""
    sim_executor, _, controller_executor = executor.partition("/")  # "single/events": the sim's, the controller's
    tag = f"{'lockstep' if lockstep else 'free'}_{executor.replace('/', '_')}"
    sim_log, controller_log = logs / f"sim_{tag}.log", logs / f"controller_{tag}.log"
    sim_parameters = {
        "robot": args.robot, "plant": args.plant, "rate": float(args.rate), "lockstep": str(lockstep).lower(),
        "torque_noise": 0.0, "torque_noise_floor": 0.0, "publish_ground_truth": "false",
        **({"integrator": args.integrator} if args.integrator else {}),
        **({"plant_timestep": args.plant_timestep} if args.plant_timestep else {}),
    }
    controller_parameters = {"robot": args.robot, "rate": float(args.rate), "use_sim_time": "true", "law": args.law}
    if executor == ONE_PROCESS:  # both nodes in one `pardyn bringup` process: one log for both
        sim_log = controller_log = logs / f"one_process_{tag}.log"
        sim = controller = one_process(namespace, sim_parameters, controller_parameters, sim_log)
    elif controller_executor == "plain":  # the anchor: the smallest rclpy node answering each state
        import pardyn  # noqa: PLC0415

        names = ",".join(pardyn.load_robot(args.robot).actuated_names)
        sim = start("sim", namespace, sim_parameters, sim_log, {"PARDYN_EXECUTOR": sim_executor})
        controller = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "plain_answer.py"), names, str(round(1e9 / args.rate)),
             "--ros-args", "-r", f"__ns:={namespace}", "-p", "use_sim_time:=true"],
            stdout=controller_log.open("wb"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    else:
        sim = start("sim", namespace, sim_parameters, sim_log, {"PARDYN_EXECUTOR": sim_executor})
        controller = start("controller", namespace, controller_parameters, controller_log,
                           {"PARDYN_EXECUTOR": controller_executor or sim_executor})
    observer = Observer(namespace) if args.observer else None
    try:
        deadline = time.monotonic() + 60.0
        # running: the lockstep sim says "first command"; free-running, the controller's first answer says
        # "holding the first measured position" (the free-running sim logs nothing then)
        while not running(sim_log, controller_log) and time.monotonic() < deadline:
            if sim.poll() is not None or controller.poll() is not None:
                raise RuntimeError(f"a node stopped; see {sim_log} and {controller_log}"
                                   + (f" and {sim_log.with_suffix('.out')}" if executor == ONE_PROCESS else ""))
            time.sleep(0.1) if observer is None else observer.spin(0.1)
        if observer is not None:
            observer.spin(0.5)
            observer.clear()
            begin = time.perf_counter()
            observer.spin(args.seconds)
            observer_report(observer, time.perf_counter() - begin, args.rate)
        else:
            time.sleep(args.seconds)
    finally:
        if observer is not None:
            observer.close()
        stop(sim)  # first: the controller's watchdog must not act on a stopped plant
        if controller is not sim:
            stop(controller)
    sim_figures = summary_figures(sim_log.read_text(errors="replace"), "sim")
    controller_figures = summary_figures(controller_log.read_text(errors="replace"), "controller")
    if not sim_figures["line"]:
        raise RuntimeError(f"the sim printed no summary; see {sim_log}")
    return sim_figures, controller_figures


ONE_PROCESS = "one-process"
"""The ``--executors`` entry that runs the sim and the controller in one ``pardyn bringup`` process (one rclpy
context and executor, the shipped ``pardyn bringup`` way; no DDS hop between processes)."""


def one_process(namespace: str, sim: dict, controller: dict, log: Path) -> subprocess.Popen:
    """``pardyn bringup`` of the sim and the controller (their shipped parameters files, then ``sim`` and
    ``controller``) in one process, its nodes' lines in ``log``."""
    import yaml  # noqa: PLC0415

    def node(executable: str, values: dict) -> dict:
        inline = {k: (v == "true" if v in ("true", "false") else v) for k, v in values.items()}
        return {"executable": executable, "parameters": [f"config/{executable}.yaml", inline]}

    log.touch()
    bringup = log.with_suffix(".yaml")
    bringup.write_text(yaml.safe_dump({"nodes": [node("sim", sim), node("controller", controller)]}))
    return subprocess.Popen([sys.executable, "-m", "pardyn.cli", "bringup", str(bringup), "--namespace", namespace,
                             "--log", str(log)], stdout=log.with_suffix(".out").open("wb"),
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def running(sim_log: Path, controller_log: Path) -> bool:
    """Whether the loop runs: the sim applied a first command (lockstep), or the controller answered (free)."""
    controller = controller_log.read_text(errors="replace")
    return "first command" in sim_log.read_text(errors="replace") or \
        "holding the first measured position" in controller or "first answer" in controller


def law_microbench(args, calls: int = 3000) -> dict[str, float]:
    """p50 (us) per call, in this process, of the controller's work on one state: the PD alone (the anchor),
    the Python path of PD + eq. (50) (the forward problem and the projection), and the same as one kernel
    call (:mod:`pardyn.control.compiled`); and the largest difference between the two paths' torques."""
    import pardyn  # noqa: PLC0415
    from pardyn.control import JointReference, actuator_limits  # noqa: PLC0415
    from pardyn.control.compiled import compile_law, python_answer  # noqa: PLC0415
    from pardyn.control.pd import JointPD  # noqa: PLC0415
    from pardyn.control.redundancy import InternalStressProjection  # noqa: PLC0415

    robots = {path: pardyn.load_robot(args.robot, kernels=path) for path in ("python", "auto")}
    compiled = robots["auto"]
    laws = {path: JointPD(100.0, 6.0, limits=actuator_limits(r), joints=tuple(r.actuated_names))
            for path, r in robots.items()}
    redundant = len(compiled.actuated_names) > len(compiled.task_names)
    projections = {path: InternalStressProjection(r, method="newton") if redundant else None
                   for path, r in robots.items()}  # the kernels' algorithm on both paths: the accuracy reference
    node_projection = InternalStressProjection(robots["python"]) if redundant else None  # a node without kernels
    step, note = compile_law(laws["auto"], compiled, projections["auto"])
    home = compiled.home[compiled.actuated_indices]
    path_q = [compiled.solve_inverse(compiled.task_values(compiled.home) + 0.01 * np.sin(0.01 * k)).q
              for k in range(0, 200, 20)]
    states = [(q[compiled.actuated_indices], np.full(home.size, 0.1), JointReference.hold(home)) for q in path_q]

    def p50(function) -> float:
        times = []
        for k in range(calls):
            position, velocity, reference = states[k % len(states)]
            begin = time.perf_counter()
            function(position, velocity, reference)
            times.append(time.perf_counter() - begin)
        return float(np.percentile(times, 50)) * 1e6

    figures = {"note": note,
               "pd": p50(laws["python"].torques),
               "python": p50(lambda *a: python_answer(laws["python"], projections["python"], *a)),
               "python_node": p50(lambda *a: python_answer(laws["python"], node_projection, *a)),
               "compiled": p50(step) if step is not None else math.nan}
    if step is not None:
        figures["difference"] = max(float(np.max(np.abs(step(*state) - python_answer(
            laws["python"], projections["python"], *state)))) for state in states)
    return figures


def observer_report(observer: Observer, span: float, rate: float) -> None:
    """Rate and latency as a third process sees them (arrival of state k to arrival of the command tagged k)."""
    period_ns = round(1e9 / rate)
    stamps = [stamp_ns(m) for _, m in observer.states]
    arrival = {stamp // period_ns: t for (t, _), stamp in zip(observer.states, stamps)}
    answers: dict[int, float] = {}
    for t, m in observer.commands:
        answers.setdefault(m.layout.data_offset, t)
    latency = [(answers[k] - arrival[k]) * 1e3 for k in arrival if k in answers]
    print(f"    third process: {len(stamps) / span:7.1f} states/s received; latency (ms) {percentiles(latency)}")


def in_process_rate(args, steps: int = 2000) -> float:
    """Steps per second of plant + encoders + PD in one process, no ROS."""
    import pardyn  # noqa: PLC0415
    from pardyn.control import JointReference, actuator_limits  # noqa: PLC0415
    from pardyn.control.pd import JointPD  # noqa: PLC0415
    from pardyn.plants.registry import make_plant  # noqa: PLC0415
    from pardyn.plants.measurement import MeasurementModel  # noqa: PLC0415

    robot = pardyn.load_robot(args.robot)
    plant = make_plant(robot, args.plant, options={"coulomb_width": 0.01, "integrator": args.integrator,
                                                   "plant_timestep": args.plant_timestep})
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
    parser.add_argument("--integrator", default="", help="MuJoCo integrator of the sim (sim parameter; empty: RK4)")
    parser.add_argument("--plant-timestep", type=float, default=0.0,
                        help="plant integration step (s; sim parameter plant_timestep; 0: the plant's default)")
    parser.add_argument("--law", default="pd", help="controller law (controller parameter)")
    parser.add_argument("--rate", type=float, default=1000.0, help="control rate (Hz)")
    parser.add_argument("--seconds", type=float, default=10.0, help="wall-clock seconds measured per run")
    parser.add_argument("--executors", default=f"events,events/plain,{ONE_PROCESS}",
                        help="executors compared (PARDYN_EXECUTOR); SIM/CONTROLLER for one each (events: both on "
                             "rclpy's events executor, as shipped: one process per node as ros2 launch starts them; "
                             "CONTROLLER plain: bench/plain_answer.py, the smallest rclpy node answering each state, "
                             f"in place of pardyn's controller: the anchor; {ONE_PROCESS}: both nodes in one "
                             "pardyn bringup process)")
    parser.add_argument("--observer", action="store_true", help="also measure from a third process")
    parser.add_argument("--batch-workers", type=int, default=0,
                        help="busy processes at nice 19 beside the whole run (0: quiet)")
    args = parser.parse_args()
    with BatchJob(args.batch_workers):
        return measure(args)


def measure(args) -> int:
    """Run and print every figure (module docstring)."""
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    namespace = f"/pardyn_bench_{uuid.uuid4().hex[:8]}"
    print(f"sim + controller ({args.law}), {args.robot} on the {args.plant} plant ({args.integrator or 'RK4'}) at "
          f"{args.rate:g} Hz, two processes over DDS (domain {os.environ['ROS_DOMAIN_ID']}), {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}"
          + (f"; {args.batch_workers} busy process(es) at nice 19 beside it" if args.batch_workers else "; quiet"))
    reference = in_process_rate(args)
    print(f"  in one process, no ROS (anchor): {reference:7.1f} steps/s (plant + encoders + PD)")
    law = law_microbench(args)
    print(f"  controller's work on one state, in this process (p50, us): PD alone {law['pd']:.1f} (anchor); "
          f"PD + eq. (50) Python path {law['python']:.1f} (Newton, checked; {law['python_node']:.1f} with the closed "
          f"form checked every 10th, a node without kernels), one kernel call {law['compiled']:.1f} "
          f"({law['compiled'] / law['pd']:.2f}x the PD alone); torques differ by <= {law.get('difference', math.nan):.1e} "
          f"N m; {law['note']}")
    executors = [e.strip() for e in args.executors.split(",") if e.strip()]
    rows: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="pardyn_bench_") as folder:
        logs = Path(folder)
        for executor in executors:
            label = executor.replace("/", "_").replace("-", "_")
            free, controller = run_pair(args, f"{namespace}/free_{label}", False, executor, logs)
            lock, _ = run_pair(args, f"{namespace}/lock_{label}", True, executor, logs)
            rows[executor] = {
                "free-running periods/s": free["steps_per_s"],
                "  latency p50 inside the sim (ms)": free["latency_p50_ms"],
                "  latency p99 inside the sim (ms)": free["latency_p99_ms"],
                "  latency max inside the sim (ms)": free["latency_max_ms"],
                "  periods on the newest answer (%)": free["fresh_percent"],
                "  sim's work per period p50 (us)": free["work_p50_us"],
                "  controller: law p50 (us)": controller["law_p50_us"],
                "  controller: law p99 (us)": controller["law_p99_us"],
                "  controller: states missed (%)": 100.0 * controller["missed"] / max(
                    1.0, controller["missed"] + controller["answered"]),
                "lockstep steps/s": lock["steps_per_s"],
                "  x the in-process loop": lock["steps_per_s"] / reference,
            }
    goals = {"free-running periods/s": ">= 990", "  latency p99 inside the sim (ms)": "< 1",
             "  periods on the newest answer (%)": ">= 95 (issue 34)", "  controller: law p50 (us)": "<= 50",
             "lockstep steps/s": ">= 1500", "  x the in-process loop": ">= 0.55 (issue 34)"}
    print(f"  {'figure':38s}" + "".join(f"{e:>14s}" for e in executors) + "  goal")
    for key in rows[executors[0]]:
        print(f"  {key:38s}" + "".join(f"{rows[e][key]:14.3g}" for e in executors) + f"  {goals.get(key, '')}")
    for anchor in (e for e in executors if e.endswith("/plain")):
        print(f"  {anchor}: the anchor, the sim ({anchor.partition('/')[0]} executor) answered by "
              "bench/plain_answer.py (subscribe, publish one Float64MultiArray; no eq. 50) in place of pardyn's "
              "controller")
    if ONE_PROCESS in executors:
        print(f"  {ONE_PROCESS}: the sim and the controller in one `pardyn bringup` process (one rclpy context "
              "and executor; the controller's states on its own thread)")
    if {"single", "events"} <= set(executors):
        a, b = "single", "events"
        print(f"  lockstep rate {b} / {a}: {rows[b]['lockstep steps/s'] / rows[a]['lockstep steps/s']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
