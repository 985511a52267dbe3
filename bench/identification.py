#!/usr/bin/env python3
"""Time to identify the DualV of the identification issue, and its split.

Data: 60 s without and 60 s with the 5.37 kg payload at 1 kHz from the MuJoCo
plant (2**17 counts/rev, 1 % torque noise), recorded once into ``out/bench/dualv``
(about a minute and a half on 2 cores) and reused. Target: under 5 s.
The per-stage times are summed over the bags, which are prepared in parallel
(one process per core), so they can add up to more than the wall time.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pardyn
from pardyn.experiments.identification_runs import record_runs, standard_runs
from pardyn.identification.pipeline import identify

DATA = Path(__file__).resolve().parents[1] / "out" / "bench" / "dualv"


def main() -> None:
    if not (DATA / "truth.json").is_file():
        print(f"recording the DualV runs into {DATA} (once) ...", file=sys.stderr)
        start = time.perf_counter()
        record_runs("dualv", standard_runs("dualv", duration_s=60.0)[:2], DATA)
        print(f"recorded in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    robot = pardyn.load_robot("dualv")
    walls = []
    for _ in range(3):
        start = time.perf_counter()
        result = identify(robot, [DATA / "unloaded"], loaded_bags=[DATA / "loaded"], show_progress=False)
        walls.append(time.perf_counter() - start)
    best = min(walls)
    print(f"DualV identification, 60 s + 60 s at 1 kHz ({result.samples} samples at the model rate):")
    print(f"  wall time: best {best:.2f} s of {len(walls)} (target 5 s), payload mass {result.payload['mass']:.4f} kg")
    for stage in ("read_s", "filter_s", "kinematics_s", "regressor_s", "decimate_s", "qr_s", "solve_s"):
        print(f"  {stage[:-2]:12s} {result.timings[stage]:7.3f} s")


if __name__ == "__main__":
    main()
