#!/usr/bin/env python3
"""Time to identify the DualV of the identification issue, and its split.

Data: 60 s without and 60 s with the 5.37 kg payload at 1 kHz from the MuJoCo
plant (2**17 counts/rev, 1 % torque noise), recorded once into ``out/bench/dualv``
(about a minute and a half on 2 cores) and reused. Target: 1.0 s (issue 28; 1.5 s in issue 19).
The per-stage times are summed over the bags.

Three paths, best of 3 wall times each (the reference once):

* compiled: ``pardyn identify``'s (``load_robot(..., kernels="auto")``, :mod:`pardyn.kernels`): the closed-loop
  states sample by sample in one C call, the observation matrices of the whole bag in another;
* python, batched: the Python path (closed-loop states in numpy passes over the samples, :mod:`pardyn.kinematics.batch`);
* python, sample by sample (``batch_kinematics=False``): the reference, whose estimate the other two must
  reproduce (largest relative difference of the parameters printed).

Anchor measured in the same run: pinocchio's RNEA over as many states as the identification evaluates
(the floor of one dynamics pass per sample).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

import pardyn
from pardyn.simulation.identification_runs import record_runs, standard_runs
from pardyn.identification.pipeline import IdentificationSettings, identify

DATA = Path(__file__).resolve().parents[1] / "out" / "bench" / "dualv"


def main() -> None:
    if not (DATA / "truth.json").is_file():
        print(f"recording the DualV runs into {DATA} (once) ...", file=sys.stderr)
        start = time.perf_counter()
        record_runs("dualv", standard_runs("dualv", duration_s=60.0)[:2], DATA)
        print(f"recorded in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()))
    compiled, python = pardyn.load_robot("dualv", kernels="auto"), pardyn.load_robot("dualv")
    print(compiled.kernel_note)
    paths = (("compiled (pardyn identify)", compiled, IdentificationSettings(), 3),
             ("python, batched", python, IdentificationSettings(), 3),
             ("python, sample by sample", python, IdentificationSettings(batch_kinematics=False), 1))
    results, walls = {}, {}
    for label, robot, settings, repeat in paths:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            results[label] = identify(robot, [DATA / "unloaded"], loaded_bags=[DATA / "loaded"], settings=settings,
                                      show_progress=False)
            times.append(time.perf_counter() - start)
        walls[label] = min(times)
    reference = results["python, sample by sample"].estimate.chi
    samples = results["python, sample by sample"].samples
    model, data = python.model, python.model.createData()
    rng = np.random.default_rng(0)
    states = python.home + rng.normal(0.0, 0.1, (samples, 3, python.nv))
    start = time.perf_counter()
    for q, v, a in states:
        pin.rnea(model, data, q, v, a)
    rnea = time.perf_counter() - start
    print(f"DualV identification, 60 s + 60 s at 1 kHz ({samples} samples at the model rate), target 1.0 s; "
          f"anchor: pinocchio rnea over {samples} states {rnea:.3f} s")
    stages = ("read_s", "filter_s", "kinematics_s", "regressor_s", "decimate_s", "qr_s", "solve_s")
    print(f"  {'path':28s} {'wall s':>7s} {'x rnea':>7s} {'payload kg':>10s} {'max rel dchi':>12s}  "
          + " ".join(f"{stage[:-2]:>10s}" for stage in stages))
    for label, result in results.items():
        chi = result.estimate.chi
        difference = float(np.max(np.abs(chi - reference) / np.maximum(np.abs(reference), 1e-12)))
        print(f"  {label:28s} {walls[label]:7.3f} {walls[label] / rnea:7.0f} {result.payload['mass']:10.4f} "
              f"{difference:12.1e}  " + " ".join(f"{result.timings[stage]:10.3f}" for stage in stages))


if __name__ == "__main__":
    main()
