#!/usr/bin/env python3
"""Closed-loop kinematics timings, as ratios to pinocchio primitives timed in the same run.

Run with ``make bench``. Reports microseconds per call, the ratio to one
``pinocchio.computeJointJacobians`` pass on the same tree (the kinematic pass the
solver cannot avoid; ``forwardKinematics`` is printed too), and the accuracy of each
path: the largest closure residual ``max |phi(q)|`` (m, rad) of its answers, and for
the closed forms and the batched series their largest distance to the generic Newton
answers (rad, m).
"""

from __future__ import annotations

import time

import numpy as np
import pinocchio as pin

import pardyn
from pardyn.kinematics import batch


def per_call(function, repeat: int) -> float:
    """Median over 5 rounds of the time per call (microseconds)."""
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for k in range(repeat):
            function(k)
        rounds.append((time.perf_counter() - start) / repeat * 1e6)
    return float(np.median(rounds))


def closure_error(robot: pardyn.Robot, configurations) -> float:
    """Largest closure residual (m, rad) over configurations (nv,)."""
    return max(float(np.abs(robot.closures.residual(q)).max(initial=0.0)) for q in configurations)


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'robot':9s} {'operation':36s} {'us/call':>9s} {'x pin pass':>10s}  accuracy")
    for name in ("five_bar", "dualv", "rrr3", "delta", "hexapod"):
        robot = pardyn.load_robot(name)
        model, data = robot.model, robot.model.createData()
        q = robot.home.copy()
        reference = per_call(lambda k: pin.computeJointJacobians(model, data, q), 2000)
        poses = [robot.home[robot.task_indices] + rng.uniform(-0.03, 0.03, len(robot.task_indices)) for _ in range(50)]
        solutions = [robot.solve_inverse(p) for p in poses]
        actuated = [s.q[robot.actuated_indices] for s in solutions]
        # 1 kHz-like warm starts: the previous sample's answer, a nearby reading (inconsistent on redundant robots).
        nudged = [a + 1e-4 for a in actuated]
        forward = [robot.solve_forward(nudged[k], start=solutions[k].q).q for k in range(50)]
        inverse = [robot.solve_inverse(poses[k] + 1e-4, start=solutions[k].q).q for k in range(50)]
        rows = [
            ("pinocchio computeJointJacobians", reference, ""),
            ("pinocchio forwardKinematics", per_call(lambda k: pin.forwardKinematics(model, data, q), 2000), ""),
            ("closure residual + Jacobian", per_call(lambda k: robot.closures.residual_and_jacobian(q), 2000), ""),
            ("forward, warm start (1e-4 rad)", per_call(
                lambda k: robot.solve_forward(nudged[k % 50], start=solutions[k % 50].q), 300),
             f"max|phi| {closure_error(robot, forward):.1e}"),
            ("forward, warm start, no checks", per_call(
                lambda k: robot.solve_forward(nudged[k % 50], start=solutions[k % 50].q, checks=False), 300),
             "same answers"),
            ("inverse, warm start", per_call(
                lambda k: robot.solve_inverse(poses[k % 50] + 1e-4, start=solutions[k % 50].q), 300),
             f"max|phi| {closure_error(robot, inverse):.1e}"),
            ("inverse, cold start (from home)", per_call(lambda k: robot.solve_inverse(poses[k % 50]), 100),
             f"max|phi| {closure_error(robot, [s.q for s in solutions]):.1e}"),
            ("velocities from actuated", per_call(
                lambda k: robot.differential.velocities_from(solutions[k % 50].q, robot.actuated_indices, np.ones(len(robot.actuated_indices))), 1000), ""),
        ]
        if batch.supports(robot):
            # a 1 kHz series: 500 samples of a smooth path, batched (checked every 10th) vs Newton sample by sample
            path = [solutions[0].q]
            for s in np.linspace(0.0, 1.0, 500)[1:]:
                path.append(robot.solve_inverse(poses[0] + 0.01 * np.sin(2 * np.pi * s), start=path[-1]).q)
            readings = np.array(path)[:, robot.measured_indices] + rng.normal(0.0, 1e-6, (500, len(robot.measured_indices)))
            start = time.perf_counter()
            series, _ = batch.solve_series(robot, readings, path[0], check_every=10)
            micros = (time.perf_counter() - start) / len(readings) * 1e6
            n_a = len(robot.actuated_names)
            newton = [path[0]]
            for reading in readings:
                newton.append(robot.solve_forward(reading[:n_a], sensed=reading[n_a:] if len(reading) > n_a else None,
                                                  start=newton[-1], checks=False).q)
            gap = float(np.abs(series - np.array(newton[1:])).max())
            rows.append(("forward, series of 500 (batched)", micros,
                         f"max|phi| {closure_error(robot, series):.1e}, vs Newton {gap:.1e}"))
        if robot.analytic is not None:
            def analytic_forward(k):
                if not robot.sensed_names:
                    return robot.solve_forward(actuated[k % 50], method="analytic")
                return robot.solve_forward(actuated[k % 50], sensed=solutions[k % 50].q[robot.sensed_indices],
                                           method="analytic")
            closed = [robot.solve_inverse(poses[k], method="analytic").q for k in range(50)]
            gap_inverse = max(float(np.abs(closed[k] - solutions[k].q).max()) for k in range(50))
            closed_forward = [analytic_forward(k).q for k in range(50)]
            gap_forward = max(float(np.abs(closed_forward[k] - solutions[k].q).max()) for k in range(50))
            rows.append(("inverse, analytic (closed form)", per_call(
                lambda k: robot.solve_inverse(poses[k % 50], method="analytic"), 300),
                f"max|phi| {closure_error(robot, closed):.1e}, vs Newton {gap_inverse:.1e}"))
            rows.append(("forward, analytic", per_call(analytic_forward, 300),
                         f"max|phi| {closure_error(robot, closed_forward):.1e}, vs Newton {gap_forward:.1e}"))
        for label, micros, accuracy in rows:
            print(f"{name:9s} {label:36s} {micros:9.1f} {micros / reference:10.1f}  {accuracy}")


if __name__ == "__main__":
    main()
