"""``pardyn demo``: the main job of ``make demo``.

1. **Closed-loop kinematics**: the platform follows a circle (with an
   oscillating orientation) at 1 kHz; every sample is solved by the inverse
   problem, then recovered from the actuated joints alone by the forward problem
   (generic Newton, and the paper's closed form where there is one), and the
   joint velocities from the actuated velocities (DualV paper eqs. 21 and 64).
   Writes ``kinematics/summary.json`` and ``kinematics/kinematics.png``.
2. **Identification through the ROS 2 system** (``config/bringup/identification.yaml``,
   the nodes ``sim`` (MuJoCo plant, lockstep), ``controller`` (PD + eq. 50),
   ``trajectory`` (exciting) and ``recorder`` in one process): the robot *as
   built* (nominal parameters perturbed, :mod:`pardyn.closedloop.identification_runs`)
   follows an exciting trajectory without, then with a payload (DualV: the
   paper's 5.37 kg; Delta 1 kg, hexapod 2 kg: ``PAYLOADS``), then a validation trajectory, each recorded to a bag;
   ``pardyn identify`` then identifies the parameters. Writes ``bags/``,
   ``truth.json``, ``result.json`` and ``report/``.
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

HELP = ("run the demonstration: closed-loop kinematics, then identification of the robot through the ROS 2 "
        "nodes (MuJoCo plant, controller, exciting trajectory, recorder)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default="dualv", help="robot name or YAML path (default dualv)")
    parser.add_argument("--duration", type=float, default=20.0,
                        help="duration of each identification run in simulated s (default 20)")
    parser.add_argument("--out", type=Path, default=Path("out/demo"), help="output directory (default out/demo)")
    parser.add_argument("--kinematics-only", action="store_true", help="only the kinematics part (seconds)")
    parser.add_argument("--rate", type=float, default=1000.0, help="kinematics part: sampling rate in Hz")
    parser.add_argument("--radius", type=float, default=0.05, help="kinematics part: circle radius in m")


def circle(robot, times: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Task positions and velocities (samples, n): a circle around home, one turn over the run."""
    n = len(robot.task_names)
    home = robot.task_values(robot.home)
    omega = 2 * math.pi / max(times[-1], 1e-9)
    pose = np.tile(home, (len(times), 1))
    rate = np.zeros_like(pose)
    pose[:, 0] += radius * (np.cos(omega * times) - 1.0)
    pose[:, 1] += radius * np.sin(omega * times)
    rate[:, 0] = -radius * omega * np.sin(omega * times)
    rate[:, 1] = radius * omega * np.cos(omega * times)
    angles = [k for k, i in enumerate(robot.task_indices) if robot.solver.angles[i]]
    if angles:  # the first orientation angle swings by +-0.2 rad
        pose[:, angles[0]] += 0.2 * np.sin(2 * omega * times)
        rate[:, angles[0]] = 0.4 * omega * np.cos(2 * omega * times)
    return pose, rate


def fresh_directory(path: Path) -> Path:
    """``path``, or ``path-2``, ``path-3``, ... if it already holds a demo's output (nothing is overwritten)."""
    candidate, index = path, 1
    while (candidate / "bags").exists() or (candidate / "kinematics").exists():
        index += 1
        candidate = path.with_name(f"{path.name}-{index}")
    return candidate


def run(args: argparse.Namespace) -> int:
    args.out = fresh_directory(args.out)
    print(f"output: {args.out}")
    kinematics_demo(args.robot, duration_s=2.0, rate_hz=args.rate, radius_m=args.radius, out=args.out / "kinematics")
    if not args.kinematics_only:
        identification_demo(args.robot, duration_s=args.duration, out=args.out)
    return 0


def kinematics_demo(robot_name: str, *, duration_s: float, rate_hz: float, radius_m: float, out: Path) -> dict:
    """Part 1 (module docstring); the summary figures."""
    robot = load_robot(robot_name)
    samples = max(2, int(round(duration_s * rate_hz)) + 1)
    times = np.linspace(0.0, duration_s, samples)
    poses, rates = circle(robot, times, radius_m)
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

    out.mkdir(parents=True, exist_ok=True)
    summary = {
        "robot": robot.name,
        "samples": samples,
        "rate_hz": rate_hz,
        "max_inverse_residual": worst["inverse_residual"],
        "max_forward_round_trip_error": worst["forward_error"],
        "max_analytic_vs_newton_task_error": worst["analytic_error"] if robot.analytic else None,
        "max_velocity_round_trip_error": worst["velocity_error"],
        "max_condition_number": conditioning,
        "forward_solve_mean_us": 1e6 * forward_time / samples,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    _plot(robot, times, poses, joints, out / "kinematics.png")
    print(f"kinematics: {samples} samples, closure residual <= {worst['inverse_residual']:.1e}, forward/inverse "
          f"round trip <= {worst['forward_error']:.1e}, {summary['forward_solve_mean_us']:.0f} us per forward solve")
    print(f"wrote {out / 'summary.json'} and {out / 'kinematics.png'}")
    return summary


def _plot(robot, times, poses, joints, path: Path) -> None:
    import matplotlib  # noqa: PLC0415 - heavy, only for the plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    from pardyn.visualization import draw_planar_robot, poses_figure  # noqa: PLC0415

    spatial = "z" in robot.task_names
    if spatial:  # a 3D picture of its own, the joints alone here
        poses_figure(robot, joints, path.with_name("poses_3d.png"), count=4)
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
    if spatial:
        for name, index in zip(robot.task_names, robot.task_indices):
            left.plot(times, poses[:, list(robot.task_indices).index(index)], label=name)
        left.set_xlabel("t (s)")
        left.set_title(f"{robot.name}: task coordinates (m, rad; 3D poses in poses_3d.png)")
    else:
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


def identification_demo(robot_name: str, *, duration_s: float, out: Path) -> dict:
    """Part 2 (module docstring); the identification result as JSON."""
    from pardyn.closedloop.identification_runs import PAYLOADS, Run  # noqa: PLC0415
    from pardyn.identification.pipeline import identify  # noqa: PLC0415
    from pardyn.identification.report import write_report  # noqa: PLC0415
    from pardyn.nodes.identification_runs import record_through_nodes  # noqa: PLC0415 - imports rclpy

    robot = load_robot(robot_name)
    out.mkdir(parents=True, exist_ok=True)
    payload = PAYLOADS.get(robot.name)
    runs = [Run("unloaded", 1, duration_s)]
    if payload is not None:
        runs.append(Run("loaded", 2, duration_s, payload))
    runs.append(Run("validation", 3, max(duration_s / 2, 5.0)))
    recorded = record_through_nodes(robot.name, runs, out / "bags", truth_path=out / "truth.json", truth_seed=7)
    bags = recorded.bags
    result = identify(robot, [bags["unloaded"]], loaded_bags=[bags["loaded"]] if "loaded" in bags else [],
                      validate_bags=[bags["validation"]], truth=recorded.truth.as_dict())
    data = result.as_json()
    (out / "result.json").write_text(json.dumps(data, indent=2) + "\n")
    report = write_report(result, out / "report")
    validation = data["validation"]
    print(f"identification ({data['model']}): {len(data['base_parameters'])} base parameters, fit error "
          f"{100 * data['fit']['relative_error_norm']:.2f} %, {data['timings_s']['total_s']:.1f} s")
    if data["payload"]:
        print(f"  payload mass {data['payload']['mass']:.4f} kg (true {payload.mass} kg)")
    print(f"  held-out torques: relative error {100 * validation['relative_error_norm']:.2f} % "
          f"(nominal CAD model {100 * validation['nominal']['relative_error_norm']:.2f} %, the true parameters "
          f"{100 * data['truth']['validation_floor'][0]:.2f} %: the floor)")
    print(f"bags: {out / 'bags'}\nresult: {out / 'result.json'}\nreport: {report}")
    return data

