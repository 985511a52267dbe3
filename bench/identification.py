#!/usr/bin/env python3
"""Time to identify the DualV of the identification issue, and its split.

Data: 60 s without and 60 s with the 5.37 kg payload at 1 kHz from the MuJoCo
plant (2**17 counts/rev, 1 % torque noise), recorded once into ``out/bench/dualv``
(about a minute and a half on 2 cores) and reused. Target (issue 19): 1.5 s.
The per-stage times are summed over the bags, which are prepared in parallel
(one process per core), so they can add up to more than the wall time.

Anchors measured in the same run: pinocchio's RNEA over as many states as the
identification evaluates (the floor of one dynamics pass per sample), and the
sample-by-sample kinematics (``batch_kinematics=False``, the reference path), whose
estimate the batched one must reproduce (relative parameter difference printed).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

import pardyn
from pardyn.closedloop.identification_runs import record_runs, standard_runs
from pardyn.identification.pipeline import IdentificationSettings, identify

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
    reference_settings = IdentificationSettings(batch_kinematics=False)
    start = time.perf_counter()
    reference = identify(robot, [DATA / "unloaded"], loaded_bags=[DATA / "loaded"], settings=reference_settings,
                         show_progress=False)
    reference_wall = time.perf_counter() - start
    model, data = robot.model, robot.model.createData()
    rng = np.random.default_rng(0)
    states = robot.home + rng.normal(0.0, 0.1, (result.samples, 3, robot.nv))
    start = time.perf_counter()
    for q, v, a in states:
        pin.rnea(model, data, q, v, a)
    rnea = time.perf_counter() - start
    chi, chi_reference = result.estimate.chi, reference.estimate.chi
    difference = float(np.max(np.abs(chi - chi_reference) / np.maximum(np.abs(chi_reference), 1e-12)))
    print(f"DualV identification, 60 s + 60 s at 1 kHz ({result.samples} samples at the model rate):")
    print(f"  wall time: best {best:.2f} s of {len(walls)} (target 1.5 s), payload mass {result.payload['mass']:.4f} kg")
    print(f"  anchor: pinocchio rnea over {result.samples} states {rnea:.3f} s (wall / rnea = {best / rnea:.0f})")
    print(f"  reference, sample-by-sample kinematics: {reference_wall:.2f} s wall "
          f"({reference_wall / best:.1f}x the batched path), payload mass {reference.payload['mass']:.4f} kg; "
          f"largest relative difference of the {chi.size} parameters {difference:.1e}")
    print(f"  {'stage':12s} {'batched':>8s} {'reference':>10s} (s, summed over the bags)")
    for stage in ("read_s", "filter_s", "kinematics_s", "regressor_s", "decimate_s", "qr_s", "solve_s"):
        print(f"  {stage[:-2]:12s} {result.timings[stage]:8.3f} {reference.timings[stage]:10.3f}")


if __name__ == "__main__":
    main()
