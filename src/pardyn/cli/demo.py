"""``pardyn demo``: the main job of ``make demo``.

For now a closed-loop kinematics demonstration: the robot's platform follows a
circle (with an oscillating orientation) at 1 kHz; every sample is solved by
the inverse problem, then recovered from the actuated joints alone by the
forward problem (generic Newton, and the paper's closed form where there is
one), and the joint velocities are recovered from the actuated velocities
(eqs. 21 and 64 of the DualV paper). Writes ``summary.json`` and
``kinematics.png`` to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from pardyn.kinematics.solver import revolute_mask
from pardyn.progress import progress
from pardyn.robot import load_robot

HELP = "run the demonstration (closed-loop kinematics of a robot along a circle; writes a plot and a JSON summary)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default="dualv", help="robot name or YAML path (default dualv)")
    parser.add_argument("--duration", type=float, default=2.0, help="trajectory duration in s (default 2)")
    parser.add_argument("--rate", type=float, default=1000.0, help="sampling rate in Hz (default 1000)")
    parser.add_argument("--radius", type=float, default=0.05, help="circle radius in m (default 0.05)")
    parser.add_argument("--out", type=Path, default=Path("out/demo"), help="output directory (default out/demo)")


def circle(robot, times: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Task positions and velocities (samples, n): a circle around home, one turn over the run."""
    n = len(robot.task_names)
    home = robot.home[robot.task_indices]
    omega = 2 * math.pi / max(times[-1], 1e-9)
    pose = np.tile(home, (len(times), 1))
    rate = np.zeros_like(pose)
    pose[:, 0] += radius * (np.cos(omega * times) - 1.0)
    pose[:, 1] += radius * np.sin(omega * times)
    rate[:, 0] = -radius * omega * np.sin(omega * times)
    rate[:, 1] = radius * omega * np.cos(omega * times)
    if n > 2:  # orientation swings by +-0.2 rad
        pose[:, 2] += 0.2 * np.sin(2 * omega * times)
        rate[:, 2] = 0.4 * omega * np.cos(2 * omega * times)
    return pose, rate


def run(args: argparse.Namespace) -> int:
    robot = load_robot(args.robot)
    samples = max(2, int(round(args.duration * args.rate)) + 1)
    times = np.linspace(0.0, args.duration, samples)
    poses, rates = circle(robot, times, args.radius)
    angles = revolute_mask(robot.model)
    joints = np.empty((samples, robot.nv))
    worst = {"inverse_residual": 0.0, "forward_error": 0.0, "analytic_error": 0.0, "velocity_error": 0.0}
    conditioning = {"serial": 0.0, "parallel": 0.0}
    forward_time = 0.0
    q_inverse = q_forward = robot.home
    for k in progress(range(samples), total=samples, label=f"{robot.name}: solving {samples} samples"):
        inverse = robot.solve_inverse(poses[k], start=q_inverse)
        q_inverse = joints[k] = inverse.q
        measured = inverse.q[robot.measured_indices]
        sensed = measured[len(robot.actuated_indices):] if len(robot.sensed_indices) else None
        tic = time.perf_counter()
        forward = robot.solve_forward(measured[: len(robot.actuated_indices)], sensed=sensed, start=q_forward)
        forward_time += time.perf_counter() - tic
        q_forward = forward.q
        difference = forward.q - inverse.q
        difference[angles] = (difference[angles] + math.pi) % (2 * math.pi) - math.pi
        worst["inverse_residual"] = max(worst["inverse_residual"], inverse.residual)
        worst["forward_error"] = max(worst["forward_error"], float(np.abs(difference).max()))
        if robot.analytic is not None:
            closed = robot.solve_forward(measured[: len(robot.actuated_indices)], sensed=sensed, method="analytic")
            task_gap = np.abs(closed.q[robot.task_indices] - inverse.q[robot.task_indices]).max()
            worst["analytic_error"] = max(worst["analytic_error"], float(task_gap))
        qdot = robot.differential.velocities_from_task(inverse.q, rates[k])
        recovered = robot.differential.velocities_from(inverse.q, robot.actuated_indices, qdot[robot.actuated_indices])
        worst["velocity_error"] = max(worst["velocity_error"], float(np.abs(recovered - qdot).max()))
        for kind, value in inverse.conditioning.items():
            conditioning[kind] = max(conditioning[kind], value)

    args.out.mkdir(parents=True, exist_ok=True)
    summary = {
        "robot": robot.name,
        "samples": samples,
        "rate_hz": args.rate,
        "max_inverse_residual": worst["inverse_residual"],
        "max_forward_round_trip_error": worst["forward_error"],
        "max_analytic_vs_newton_task_error": worst["analytic_error"] if robot.analytic else None,
        "max_velocity_round_trip_error": worst["velocity_error"],
        "max_condition_number": conditioning,
        "forward_solve_mean_us": 1e6 * forward_time / samples,
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    _plot(robot, times, poses, joints, args.out / "kinematics.png")
    print(json.dumps(summary, indent=2))
    print(f"wrote {args.out / 'summary.json'} and {args.out / 'kinematics.png'}")
    return 0


def _plot(robot, times, poses, joints, path: Path) -> None:
    import matplotlib  # noqa: PLC0415 - heavy, only for the plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    from pardyn.visualization import draw_planar_robot  # noqa: PLC0415

    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
    for k, alpha in zip(np.linspace(0, len(times) - 1, 4).astype(int), (1.0, 0.6, 0.4, 0.25)):
        draw_planar_robot(left, robot, joints[k], alpha=alpha)
    left.plot(poses[:, 0], poses[:, 1], "C3--", linewidth=1, label="platform path")
    left.set_title(f"{robot.name}: four poses along the circle")
    left.legend(loc="best")
    for name, index in zip(robot.actuated_names, robot.actuated_indices):
        right.plot(times, joints[:, index], label=name)
    right.set_xlabel("t (s)")
    right.set_ylabel("actuated joint position (rad)")
    right.set_title("actuated joints from the inverse problem")
    right.legend(loc="best")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
