#!/usr/bin/env python3
"""Start-up figures (issue 34) and start in any order (issue 27).

**Start-up** (first; ``--rounds`` runs of each): per node executable (its
console script, shipped parameters file, quiet machine) the time spent in its
imports (and ``rclpy.init``), building its node, and from ``Popen`` to its
"ready" line (subscribed and publishing: the node's ``ready ... after its start``
log; the identifier's estimator, built on a thread after that, on a line of its own);
beside two anchors measured in the same run: a plain rclpy node
(subscription + publisher) from ``Popen`` to ready, and ``python -c 'import
pinocchio'``. Then ``pardyn bringup config/bringup/sim.yaml --processes``:
seconds from its start to the sim's first lockstep step.

**Start in any order**, the full study of issue 27: 20 launches of the sim bringup, 5 of the identification one.

Each launch is ``pardyn bringup FILE --processes`` (every node its own process,
as ``ros2 launch`` starts them) with every node started 0-2 s late (drawn per
launch, so in a random order), stopped by ``--duration`` (SIGINT forwarded to
every node). A sim launch passes when every process exits 0 and the sim
stepped; an identification launch when, in addition, its bag holds every step
from state 0 to the last. The suite (``test/nodes/test_launcher.py``) runs 3 sim
launches and one identification launch with the recorder last.

Run: ``.venv/bin/python bench/start_order.py [--rounds 3] [--sim 20] [--identification 5] [--seconds 15]
[--parallel 3]`` (``--sim 0 --identification 0``: the start-up figures only).
Exit code 1 if a launch failed.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
PERIOD_NS = 1_000_000
BIN = Path(sys.executable).parent
READY = re.compile(r"ready ([\d.]+) s after its start \(modules ([\d.]+) s, node built in ([\d.]+) s\)")
ESTIMATOR = re.compile(r"estimator built ([\d.]+) s after the node")
PLAIN_NODE = """
import rclpy
from rclpy.node import Node
from std_msgs.msg import Float64MultiArray
rclpy.init()
node = Node("plain_answer")
publisher = node.create_publisher(Float64MultiArray, "answer", 10)
node.create_subscription(Float64MultiArray, "question", publisher.publish, 10)
print("ready", flush=True)
rclpy.spin(node)
"""


def _until_line(command: list[str], pattern: re.Pattern | str, timeout_s: float = 60.0) -> tuple[float, re.Match | None]:
    """Start ``command``; seconds until a line of its output matches ``pattern`` (and the match); then SIGINT it."""
    pattern = re.compile(pattern) if isinstance(pattern, str) else pattern
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               stdin=subprocess.DEVNULL, start_new_session=True)
    found: list = []
    seen = threading.Event()

    def read() -> None:
        for line in process.stdout:
            if not found and (match := pattern.search(line)):
                found.append((time.monotonic() - start, match))
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    seen.wait(timeout_s)
    try:
        os.killpg(process.pid, 2)
        process.wait(timeout=20.0)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        process.kill()
        process.wait()
    return found[0] if found else (float("nan"), None)


def start_up(rounds: int, folder: Path) -> None:
    """Print the start-up figures (module docstring)."""
    from pardyn.nodes.registry import NODES  # noqa: PLC0415

    def median(values) -> str:
        return f"{float(np.median(values)):.2f}"

    pinocchio = []
    for _ in range(rounds):
        start = time.monotonic()
        subprocess.run([sys.executable, "-c", "import pinocchio"], check=True)
        pinocchio.append(time.monotonic() - start)
    plain = [_until_line([sys.executable, "-c", PLAIN_NODE], "^ready")[0] for _ in range(rounds)]
    print(f"start-up, median of {rounds} (s): anchors: python -c 'import pinocchio' {median(pinocchio)}, "
          f"a plain rclpy node ready {median(plain)}")
    print(f"  {'node':<20} {'modules':>8} {'build':>8} {'ready':>8}   (ready: from Popen, <= 2 s is the goal)")
    for executable in NODES:
        arguments = ["--ros-args", "-r", f"__ns:=/start_{uuid.uuid4().hex[:8]}", "--params-file",
                     str(ROOT / "config" / f"{executable}.yaml")]
        if executable == "recorder":
            arguments += ["-p", f"bag_path:={folder / 'start_up_bag'}"]
        runs = [_until_line([str(BIN / executable), *arguments], READY) for _ in range(rounds)]
        if any(match is None for _, match in runs):
            print(f"  {executable:<20} never ready")
            continue
        print(f"  {executable:<20} {median([float(m.group(2)) for _, m in runs]):>8} "
              f"{median([float(m.group(3)) for _, m in runs]):>8} {median([t for t, _ in runs]):>8}")
        if executable == "identifier":  # its estimator is built after the node is up: when that ends
            built = [_until_line([str(BIN / executable), *arguments], ESTIMATOR) for _ in range(rounds)]
            if all(match is not None for _, match in built):
                print(f"  {'  its estimator':<20} {'':>8} {median([float(m.group(1)) for _, m in built]):>8} "
                      f"{median([t for t, _ in built]):>8}   (built on a thread after ready; states queued meanwhile)")
    launch = [_until_line([str(BIN / "pardyn"), "bringup", str(ROOT / "config" / "bringup" / "sim.yaml"),
                           "--processes", "--namespace", f"start_{uuid.uuid4().hex[:8]}", "--duration", "20"],
                          "first command received: lockstep running")[0] for _ in range(rounds)]
    print(f"  pardyn bringup config/bringup/sim.yaml --processes: first step {median(launch)} s after its start "
          f"(runs {', '.join(f'{t:.2f}' for t in launch)}; goal <= 3 s)")


def launch(file: Path, seed: int, seconds: float, bag: Path | None) -> dict:
    """One launch with drawn start delays; its figures and problems."""
    from pardyn.bags import read_messages
    from pardyn.nodes.bringup import load_bringup

    names = [spec.name or spec.executable for spec in load_bringup(file).nodes]
    draw = random.Random(seed)
    delays = {name: round(draw.uniform(0.0, 2.0), 3) for name in names}
    command = [str(Path(sys.executable).parent / "pardyn"), "bringup", str(file), "--processes", "--namespace",
               f"order_{uuid.uuid4().hex[:8]}", "--duration", str(seconds)]
    command += [item for name, delay in delays.items() for item in ("--start-delay", f"{name}={delay}")]
    run = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 120.0)
    output = run.stdout + run.stderr
    steps = re.search(r"sim summary: (\d+) steps", output)
    problems = [] if run.returncode == 0 else [f"runner exit code {run.returncode}"]
    problems += ["Traceback in the output"] if "Traceback" in output else []
    problems += [] if steps and int(steps.group(1)) > 0 else ["the sim never stepped"]
    recorded = None
    if bag is not None and not problems:
        stamps = [m.message.header.stamp.sec * 1_000_000_000 + m.message.header.stamp.nanosec
                  for m in read_messages(bag, "joint_states")]
        unique = np.unique(np.array(stamps) // PERIOD_NS)
        recorded = (int(unique[0]), int(unique[-1]), len(unique))
        if unique[0] != 0 or not np.array_equal(unique, np.arange(unique[-1] + 1)):
            problems.append(f"bag steps {recorded} (first, last, distinct): not every step from 0")
    order = " < ".join(sorted(delays, key=delays.get))
    return {"seed": seed, "order": order, "delays": delays, "steps": int(steps.group(1)) if steps else 0,
            "recorded": recorded, "problems": problems, "output": output}


def identification_file(folder: Path, seed: int) -> tuple[Path, Path]:
    shipped = yaml.safe_load((ROOT / "config" / "bringup" / "identification.yaml").read_text())
    bag = folder / f"bag_{seed}"
    for node in shipped["nodes"]:
        node["parameters"] = [str(ROOT / p) if isinstance(p, str) else p for p in node["parameters"]]
        if node["executable"] == "recorder":
            node["parameters"][-1]["bag_path"] = str(bag)
    path = folder / f"identification_{seed}.yaml"
    path.write_text(yaml.safe_dump(shipped))
    return path, bag


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each start-up figure (0: none)")
    parser.add_argument("--sim", type=int, default=20, help="launches of config/bringup/sim.yaml")
    parser.add_argument("--identification", type=int, default=5, help="launches of the identification bringup")
    parser.add_argument("--seconds", type=float, default=15.0, help="wall-clock seconds of each launch")
    parser.add_argument("--parallel", type=int, default=3, help="launches at a time")
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    with tempfile.TemporaryDirectory(prefix="pardyn_order_") as scratch:
        folder = Path(scratch)
        if args.rounds:
            start_up(args.rounds, folder)
        if not args.sim and not args.identification:
            return 0
        jobs = [(ROOT / "config" / "bringup" / "sim.yaml", seed, None) for seed in range(args.sim)]
        for seed in range(100, 100 + args.identification):
            path, bag = identification_file(folder, seed)
            jobs.append((path, seed, bag))
        with ThreadPoolExecutor(max_workers=args.parallel) as pool:
            results = list(pool.map(lambda job: launch(job[0], job[1], args.seconds, job[2]), jobs))
    print(f"start order: {args.sim} sim launches, {args.identification} identification launches, every node "
          f"0-2 s late (drawn), {args.seconds:g} s each, {args.parallel} at a time")
    for kind, chosen in (("sim", results[:args.sim]), ("identification", results[args.sim:])):
        passed = [r for r in chosen if not r["problems"]]
        print(f"  {kind}: {len(passed)}/{len(chosen)} stepped, every process exit 0"
              + (", every step from state 0 in the bag" if kind == "identification" else "")
              + (f"; steps {min(r['steps'] for r in chosen)}-{max(r['steps'] for r in chosen)}" if chosen else ""))
        for result in chosen:
            recorded = f", bag steps {result['recorded']}" if result["recorded"] else ""
            print(f"    seed {result['seed']:3d}: {result['order']}: {result['steps']} steps{recorded} "
                  f"{result['problems'] or 'ok'}")
    failed = [r for r in results if r["problems"]]
    for result in failed:
        print(f"FAILED seed {result['seed']}: {result['problems']}\n{result['output'][-4000:]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
