#!/usr/bin/env python3
"""`make demo` through the ROS nodes: real-time factor of the identification bringup in one process.

Runs ``config/bringup/identification.yaml`` (sim in lockstep, controller,
trajectory, recorder writing a bag: the node set of ``pardyn demo``) for a few
simulated seconds with ``pardyn.nodes.bringup.run_nodes`` and reports:

* simulated seconds per wall-clock second from the first command (the
  real-time factor; target >= 1.0);
* the sim's own figures (latency, work per period) and the controller's time
  in the law;
* the same with the sim's ``command_sources`` removed: the shipped file names
  its controller, which needs the publisher of each command (message info),
  which rclpy 9.1's events executor cannot deliver, so that process spins the
  single-threaded executor (:func:`pardyn.nodes.common.make_executor`);
* the anchor: the plant + encoders + PD in one process without ROS
  (``bench/loop.py``'s ceiling), steps per second.

Run: ``.venv/bin/python bench/bringup.py [--seconds 5]``. Not a test: the figures
depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))


def run(seconds: float, *, sources: bool, integrator: str) -> dict:
    """The identification bringup for ``seconds`` of simulated time; its figures."""
    from pardyn.nodes.bringup import load_bringup, run_nodes  # noqa: PLC0415

    text = (ROOT / "config" / "bringup" / "identification.yaml").read_text()
    if not sources:
        text = text.replace(", command_sources: [controller]", "")
        assert "command_sources" not in text, "identification.yaml changed: update bench/bringup.py"
    with tempfile.TemporaryDirectory(prefix="pardyn_bench_bringup_") as folder:
        file = Path(folder) / "identification.yaml"
        file.write_text(text.replace("config/", f"{ROOT}/config/"))
        bringup = load_bringup(file)
        overrides = {"sim": {"integrator": integrator} if integrator else {},
                     "trajectory": {"duration": float(seconds)},
                     "recorder": {"bag_path": str(Path(folder) / "bag"), "autostart": True}}
        start: dict[str, float] = {}

        def finished(nodes: dict) -> bool:
            sim = nodes["sim"]
            if sim.step >= 1 and "t" not in start:
                start["t"] = time.perf_counter()
            return sim.step * sim.period_s >= seconds

        nodes = run_nodes(bringup.with_parameters(overrides), namespace=f"/bench_{uuid.uuid4().hex[:8]}",
                          until=finished)
        wall = time.perf_counter() - start["t"]
    sim, controller = nodes["sim"], nodes["controller"]
    return {"factor": sim.step * sim.period_s / wall, "steps": sim.step, "wall": wall,
            "sim": sim.summary().split("; ", 1)[1], "controller": controller.summary()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="simulated seconds per run")
    parser.add_argument("--integrator", default="", help="the sim's integrator parameter (empty: RK4)")
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200)))
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    from loop import in_process_rate  # noqa: PLC0415

    anchor = in_process_rate(argparse.Namespace(robot="dualv", plant="mujoco", rate=1000.0,
                                                integrator=args.integrator))
    print(f"identification bringup (pardyn demo's nodes) in one process, dualv, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"  anchor, plant + encoders + PD without ROS: {anchor:7.1f} steps/s ({anchor / 1000.0:.2f}x real time)")
    for sources in (True, False):
        figures = run(args.seconds, sources=sources, integrator=args.integrator)
        label = ("as shipped (command_sources: single-threaded executor)" if sources
                 else "without command_sources (events executor)")
        print(f"  {label}: {figures['steps']} steps in {figures['wall']:.2f} s = {figures['factor']:.2f}x real time "
              f"(goal >= 1.0; {figures['factor'] * 1000.0 / anchor:.2f} x the anchor)")
        print(f"    sim: {figures['sim']}")
        print(f"    controller: {figures['controller']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
