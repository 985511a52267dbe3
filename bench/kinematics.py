#!/usr/bin/env python3
"""Closed-loop kinematics timings, as ratios to pinocchio primitives timed in the same run.

Run with ``make bench``. Reports microseconds per call and the ratio to one
``pinocchio.forwardKinematics`` + ``computeJointJacobians`` pass on the same tree:
the solver's cost in units of the kinematic passes it cannot avoid.
"""

from __future__ import annotations

import time

import numpy as np
import pinocchio as pin

import pardyn


def per_call(function, repeat: int) -> float:
    """Median over 5 rounds of the time per call (microseconds)."""
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for k in range(repeat):
            function(k)
        rounds.append((time.perf_counter() - start) / repeat * 1e6)
    return float(np.median(rounds))


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'robot':9s} {'operation':34s} {'us/call':>9s} {'x pin pass':>10s}")
    for name in ("five_bar", "dualv", "rrr3", "delta", "hexapod"):
        robot = pardyn.load_robot(name)
        model, data = robot.model, robot.model.createData()
        q = robot.home.copy()
        reference = per_call(lambda k: pin.computeJointJacobians(model, data, q), 2000)
        poses = [robot.home[robot.task_indices] + rng.uniform(-0.03, 0.03, len(robot.task_indices)) for _ in range(50)]
        solutions = [robot.solve_inverse(p) for p in poses]
        actuated = [s.q[robot.actuated_indices] for s in solutions]
        # 1 kHz-like warm starts: the previous sample's answer, a nearby reading.
        nudged = [a + 1e-4 for a in actuated]
        rows = [
            ("pinocchio computeJointJacobians", reference),
            ("closure residual + Jacobian", per_call(lambda k: robot.closures.residual_and_jacobian(q), 2000)),
            ("forward, warm start (1e-4 rad)", per_call(
                lambda k: robot.solve_forward(nudged[k % 50], start=solutions[k % 50].q), 300)),
            ("inverse, warm start", per_call(
                lambda k: robot.solve_inverse(poses[k % 50] + 1e-4, start=solutions[k % 50].q), 300)),
            ("inverse, cold start (from home)", per_call(lambda k: robot.solve_inverse(poses[k % 50]), 100)),
            ("velocities from actuated", per_call(
                lambda k: robot.differential.velocities_from(solutions[k % 50].q, robot.actuated_indices, np.ones(len(robot.actuated_indices))), 1000)),
        ]
        if robot.analytic is not None:
            rows.append(("inverse, analytic (closed form)", per_call(
                lambda k: robot.solve_inverse(poses[k % 50], method="analytic"), 300)))
            rows.append(("forward, analytic", per_call(
                lambda k: robot.solve_forward(actuated[k % 50], method="analytic") if not robot.sensed_names
                else robot.solve_forward(actuated[k % 50], sensed=solutions[k % 50].q[robot.sensed_indices], method="analytic"), 300)))
        for label, micros in rows:
            print(f"{name:9s} {label:34s} {micros:9.1f} {micros / reference:10.1f}")


if __name__ == "__main__":
    main()
