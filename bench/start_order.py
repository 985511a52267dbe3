#!/usr/bin/env python3
"""Start in any order, the full study of issue 27: 20 launches of the sim bringup, 5 of the identification one.

Each launch is ``pardyn bringup FILE --processes`` (every node its own process,
as ``ros2 launch`` starts them) with every node started 0-2 s late (drawn per
launch, so in a random order), stopped by ``--duration`` (SIGINT forwarded to
every node). A sim launch passes when every process exits 0 and the sim
stepped; an identification launch when, in addition, its bag holds every step
from state 0 to the last. The suite (``test/nodes/test_launcher.py``) runs 3 sim
launches and one identification launch with the recorder last.

Run: ``.venv/bin/python bench/start_order.py [--sim 20] [--identification 5] [--seconds 15] [--parallel 3]``.
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
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
PERIOD_NS = 1_000_000


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
    parser.add_argument("--sim", type=int, default=20, help="launches of config/bringup/sim.yaml")
    parser.add_argument("--identification", type=int, default=5, help="launches of the identification bringup")
    parser.add_argument("--seconds", type=float, default=15.0, help="wall-clock seconds of each launch")
    parser.add_argument("--parallel", type=int, default=3, help="launches at a time")
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    with tempfile.TemporaryDirectory(prefix="pardyn_order_") as scratch:
        folder = Path(scratch)
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
