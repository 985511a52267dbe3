#!/usr/bin/env python3
"""What a 1 ms period of the MuJoCo plant costs, and how far it strays, for each integrator and step.

The free-running sim keeps 1 kHz only if its period's work (the plant's step, the sensors, publishing) leaves
time for the round trip to the controller; the plant's default (RK4 at 0.1 ms, chosen for accuracy:
:mod:`pardyn.plants.mujoco_plant`) costs most of the period on the DualV. For each integrator and
``plant_timestep``: the wall time of one 1 ms :meth:`MujocoPlant.step` (median over the run, this process), the
largest joint deviation from the same run integrated with RK4 at 0.05 ms (the reference), and the largest
closure violation, over ``--seconds`` of the estimator benchmark's exciting trajectory tracked by the
identification runs' joint PD (kp 100, kd 6).

Run: ``.venv/bin/python bench/plant_steps.py [--robot dualv] [--seconds 2]``. Not a test: the times depend on the
machine (run it quiet: ``bench/loop.py --plant-timestep`` then measures the chosen step in the DDS loop).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import pardyn
from pardyn.control import JointReference, actuator_limits
from pardyn.control.pd import JointPD
from pardyn.experiments.estimator_benchmark import _design
from pardyn.plants.mujoco_plant import MujocoPlant


def run(robot, reference, start, integrator: str, timestep: float, periods: int) -> tuple[np.ndarray, float, float]:
    """The joint positions after each period (periods, nv), the median period's step time (s), the largest
    closure violation (sampled every 10 periods)."""
    plant = MujocoPlant(robot, None, timestep=timestep, integrator=integrator)
    law = JointPD(100.0, 6.0, limits=actuator_limits(robot))
    actuated = robot.actuated_indices
    state = plant.reset(start)
    positions, times, violation = [], [], 0.0
    for k in range(periods):
        i = min(k // 10, len(reference.times) - 1)  # the 100 Hz reference held over 10 periods
        tau = law.torques(state.q[actuated], state.qdot[actuated],
                          JointReference(reference.position[i], reference.velocity[i], reference.acceleration[i]))
        begin = time.perf_counter()
        state = plant.step(tau, 1e-3)
        times.append(time.perf_counter() - begin)
        positions.append(state.q.copy())
        if k % 10 == 0:
            violation = max(violation, plant.closure_violation())
    return np.array(positions), float(np.median(times)), violation


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", default="dualv")
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    robot = pardyn.load_robot(args.robot)
    reference, start = _design(args.robot, max(args.seconds, 1.0), 1)
    periods = round(args.seconds * 1000)
    truth, truth_time, truth_violation = run(robot, reference, start, "RK4", 5e-5, periods)
    print(f"{args.robot}: {args.seconds:g} s of an exciting trajectory under joint PD, 1 ms periods; motion "
          f"amplitude {np.max(np.abs(truth - truth[0])):.3f} rad; reference RK4 at 0.05 ms: {truth_time * 1e6:.0f} us "
          f"a period, closure violation {truth_violation:.1e}")
    print(f"  {'integrator':12s} {'step (ms)':>9s} {'us a period':>11s} {'max |q - q_ref| (rad)':>22s} "
          f"{'closure violation':>18s}")
    for integrator in ("RK4", "implicitfast"):
        for timestep in (1e-4, 2e-4, 5e-4, 1e-3):
            positions, step_time, violation = run(robot, reference, start, integrator, timestep, periods)
            default = "  (the default)" if (integrator, timestep) == ("RK4", 1e-4) else ""
            print(f"  {integrator:12s} {timestep * 1e3:9.1f} {step_time * 1e6:11.0f} "
                  f"{np.max(np.abs(positions - truth)):22.2e} {violation:18.1e}{default}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
