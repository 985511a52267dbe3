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
   built* (nominal parameters perturbed, :mod:`pardyn.simulation.identification_runs`)
   follows an exciting trajectory without, then with a payload (DualV: the
   paper's 5.37 kg; Delta 1 kg, hexapod 2 kg: ``PAYLOADS``; any other robot with ``--loaded``: 20 % of its
   moving mass on its task frame, :func:`sized_payload`), then a validation trajectory, each recorded to a bag;
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

from pardyn.cli.console import add_verbose_argument, node_log
from pardyn.cli.options import number
from pardyn.kinematics.solver import revolute_mask
from pardyn.progress import progress
from pardyn.robot import load_robot

HELP = ("run the demonstration: closed-loop kinematics, then identification of the robot through the ROS 2 "
        "nodes (MuJoCo plant, controller, exciting trajectory, recorder)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", default="dualv", help="robot name or YAML path (default dualv)")
    parser.add_argument("--duration", type=number(0.0, 1e6, low_open=True, unit="s"), default=20.0,
                        help="duration of each identification run in simulated s (default 20)")
    parser.add_argument("--out", type=Path, default=Path("out/demo"), help="output directory (default out/demo)")
    parser.add_argument("--kinematics-only", action="store_true", help="only the kinematics part (seconds)")
    parser.add_argument("--rate", type=number(1.0, 1e6, unit="Hz"), default=1000.0, help="kinematics part: sampling rate in Hz")
    parser.add_argument("--loaded", action=argparse.BooleanOptionalAction, default=None,
                        help="record a run with a payload (default: when the robot has a known load; other robots "
                             "get 20 %% of their moving mass on their 'payload' link, else on their task frame)")
    add_verbose_argument(parser)
    parser.add_argument("--radius", type=number(0.0, 10.0, low_open=True, unit="m"), default=None,
                        help="kinematics part: circle radius in m (default: the largest circle up to "
                             f"{CIRCLE_RADIUS_M:g} m within the excitation box that the robot follows around home)")


CIRCLE_RADIUS_M = 0.05
"""Largest default circle radius (m); a smaller robot gets the largest circle it follows (:func:`circle_radius`)."""
SWING_RAD = 0.2
"""Swing of the first orientation angle along the circle (rad), at most the excitation box's."""


def circle(robot, times: np.ndarray, radius: float, swing: float = SWING_RAD) -> tuple[np.ndarray, np.ndarray]:
    """Task positions and velocities (samples, n): a circle through home in the first two coordinates, one turn over
    the run (one coordinate: its swing), the first orientation angle swinging by ``+-swing`` (rad)."""
    n = len(robot.task_names)
    home = robot.task_values(robot.home)
    omega = 2 * math.pi / max(times[-1], 1e-9)
    pose = np.tile(home, (len(times), 1))
    rate = np.zeros_like(pose)
    pose[:, 0] += radius * (np.cos(omega * times) - 1.0)
    rate[:, 0] = -radius * omega * np.sin(omega * times)
    if n > 1:  # a one-coordinate task swings along it
        pose[:, 1] += radius * np.sin(omega * times)
        rate[:, 1] = radius * omega * np.cos(omega * times)
    angles = [k for k, unit in enumerate(robot.task_units) if unit == "rad"]
    if angles:  # the first orientation angle swings by +-swing
        pose[:, angles[0]] += swing * np.sin(2 * omega * times)
        rate[:, angles[0]] = 2.0 * swing * omega * np.cos(2 * omega * times)
    return pose, rate


def circle_radius(robot, radius: float | None) -> tuple[float, float]:
    """(radius in m, swing in rad) of the demo's circle: ``radius`` if given (an InputError naming ``--radius``
    if the robot cannot follow it), else the largest circle up to :data:`CIRCLE_RADIUS_M` inside the excitation
    box (``x`` in ``[-2 r, 0]``, ``y`` in ``[-r, r]`` around home) that the robot follows
    (:func:`~pardyn.trajectories.workspace.largest_safe_scale`), printed with the option that changes it."""
    from pardyn.errors import InputError  # noqa: PLC0415
    from pardyn.trajectories.workspace import excitation_box, largest_safe_scale, path_failure  # noqa: PLC0415

    box = excitation_box(robot)
    angles = [k for k, unit in enumerate(robot.task_units) if unit == "rad"]
    swing = min(SWING_RAD, float(box[angles[0]])) if angles else 0.0
    times = np.linspace(0.0, 1.0, 49)
    if radius is not None:
        failure = path_failure(robot, circle(robot, times, radius, swing)[0])
        if failure is not None:
            raise InputError(f"{robot.name}: the circle of --radius {radius:g} {robot.task_units[0]} leaves the reachable workspace "
                             f"({failure}); give a smaller --radius, or none to size it from the workspace")
        return radius, swing
    largest = min(CIRCLE_RADIUS_M, float(box[0]) / 2.0, float(box[1]) if len(box) > 1 else np.inf)
    radius = largest_safe_scale(robot, lambda r: circle(robot, times, r, swing * r / largest)[0], largest)
    swing *= radius / largest
    unit = robot.task_units[0]  # a task of angles (motor joints, a platform's turns): its circle is in rad
    print(f"circle: radius {radius:.3g} {unit} (the largest up to {CIRCLE_RADIUS_M:g} {unit} within the excitation box that "
          f"{robot.name} follows around home; --radius to change it)")
    return radius, swing


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
        with node_log(args.out / "nodes.log", verbose=args.verbose):
            identification_demo(args.robot, duration_s=args.duration, out=args.out, loaded=args.loaded)
    return 0


def kinematics_demo(robot_name: str, *, duration_s: float, rate_hz: float, radius_m: float | None,
                    out: Path) -> dict:
    """Part 1 (module docstring); the summary figures. ``radius_m``: None sizes it (:func:`circle_radius`)."""
    robot = load_robot(robot_name)
    samples = max(2, int(round(duration_s * rate_hz)) + 1)
    times = np.linspace(0.0, duration_s, samples)
    radius_m, swing = circle_radius(robot, radius_m)
    poses, rates = circle(robot, times, radius_m, swing)
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
        "circle_radius_m": radius_m,
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


def _unit(robot, index: int) -> str:
    """``rad`` or ``m``: the unit of joint coordinate ``index`` (revolute or prismatic)."""
    return "rad" if revolute_mask(robot.model)[index] else "m"


def _plot(robot, times, poses, joints, path: Path) -> None:
    """Four poses in the robot's plane (2D, frames from the model) or in 3D (``poses_3d.png``) beside the
    actuated joints, labelled in their units (rad for revolute, m for prismatic)."""
    import matplotlib  # noqa: PLC0415 - heavy, only for the plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    from pardyn.visualization import draw_planar_robot, effector_position, plane_axes, poses_figure  # noqa: PLC0415

    plane = plane_axes(robot, joints[:: max(1, len(joints) // 8)])
    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 5))
    if plane is None:  # a 3D picture of its own, the task coordinates here
        poses_figure(robot, joints, path.with_name("poses_3d.png"), count=4)
        for k, (name, unit) in enumerate(zip(robot.task_names, robot.task_units)):
            left.plot(times, poses[:, k], label=f"{name} ({unit})")
        left.set_xlabel("t (s)")
        left.set_title(f"{robot.name}: task coordinates (3D poses in poses_3d.png)")
    else:
        for k, alpha in zip(np.linspace(0, len(times) - 1, 4).astype(int), (1.0, 0.6, 0.4, 0.25)):
            draw_planar_robot(left, robot, joints[k], alpha=alpha, plane=plane)
        path_points = np.array([effector_position(robot, q) for q in joints])
        left.plot(path_points[:, plane[0]], path_points[:, plane[1]], "C3--", linewidth=1, label="task path")
        left.set_title(f"{robot.name}: four poses along the circle")
    left.legend(loc="best")
    units = set()
    for name, index in zip(robot.actuated_names, robot.actuated_indices):
        units.add(_unit(robot, index))
        right.plot(times, joints[:, index], label=f"{name} ({_unit(robot, index)})")
    right.set_xlabel("t (s)")
    right.set_ylabel(f"actuated joint position ({', '.join(sorted(units))})")
    right.set_title("actuated joints from the inverse problem")
    right.legend(loc="best")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


PAYLOAD_SHARE = 0.2
"""Mass of a sized payload as a share of the robot's moving mass (:func:`sized_payload`)."""


def sized_payload(robot):
    """The load of a robot without a known one (``PAYLOADS``): ``PAYLOAD_SHARE`` (20 %) of the robot's moving
    mass (the sum of its bodies' masses, kg), a water sphere (1000 kg/m^3; ``I = 0.4 m r^2``) whose centre is
    1 cm along x off the origin of :attr:`~pardyn.robot.Robot.payload_frame`: the robot's ``payload`` link,
    else its task frame (the platform; a serial robot's last link)."""
    from pardyn.plants.payload import Payload  # noqa: PLC0415

    moving = sum(float(body.standard[9]) for body in robot.nominal_parameters.bodies)
    mass = round(PAYLOAD_SHARE * moving, 3)
    radius = (3.0 * mass / (4.0 * math.pi * 1000.0)) ** (1.0 / 3.0)
    return Payload(mass=mass, com=np.array([0.01, 0.0, 0.0]), inertia=np.eye(3) * 0.4 * mass * radius**2,
                   frame=robot.payload_frame)


def demo_settings(robot):
    """The identification's settings: the defaults, with rests left out (``filter.rest_speed`` =
    :data:`~pardyn.identification.settings.REST_SPEED`, and ``filter.reversal_window_s`` =
    :data:`~pardyn.identification.settings.REVERSAL_WINDOW_S` either side of each reversal, in the fit and the
    held-out figures) when a passive joint carries dry friction. MuJoCo's ``frictionloss`` holds such a loop at
    rest (stiction) with any torque within the friction that no model of ``(q, qdot, qddot)`` gives, and sticks at
    each reversal until the torque crosses the friction band. On a light four-bar finger with friction on every
    joint (test_vendor_friction.py; its 20 s demo's bags) the true parameters' held-out error was 34.67 %, the
    identified model's 34.24 %, the nominal's 32.57 %; with the rests left out 7.47 %, 7.83 % and 9.66 %; with
    0.1 s either side of each reversal too (in process, seed 7) 0.42 %, 0.94 % and 7.89 % (0.39 % for the truth
    with the dry friction removed from the file: its noise level). None (the defaults) otherwise."""
    import dataclasses  # noqa: PLC0415

    from pardyn.identification.settings import REST_SPEED, REVERSAL_WINDOW_S, IdentificationSettings  # noqa: PLC0415

    actuated = set(robot.actuated_names)
    if not any(drive.fs != 0.0 and drive.joint not in actuated for drive in robot.nominal_parameters.drives):
        return None
    settings = IdentificationSettings()
    return dataclasses.replace(settings, filter=dataclasses.replace(
        settings.filter, rest_speed=REST_SPEED, reversal_window_s=REVERSAL_WINDOW_S))


def _left_out(result, count: int) -> str:
    """What the held-out figures leave out (:func:`demo_settings`), and the remedy when it is most of the run."""
    if not count:
        return ""
    total = sum(len(v.t) for v in result.validation)
    window = result.settings.filter.reversal_window_s
    text = (f"; {count} of {total} samples at rest or within {window:g} s of a reversal left out (dry friction on "
            "passive joints)")
    if 2 * count > total:  # the finger at 0.5 Hz: 85 %; at 0.125 Hz: 28 %, floor 0.47 % (in process)
        text += ": a slower excitation (excitation: base_frequency_hz in the robot's YAML) reverses less often"
    return text


def identification_demo(robot_name: str, *, duration_s: float, out: Path, loaded: bool | None = None,
                        truth_seed: int = 7) -> dict:
    """Part 2 (module docstring); the identification result as JSON.

    ``loaded``: record the run with a payload (a shipped robot's known load, else :func:`sized_payload` on
    its ``payload`` link or task frame, said once); ``None``: when the robot has a known load. ``truth_seed``:
    the as-built perturbation's seed (studies of the demo's spread).
    """
    from pardyn.simulation.identification_runs import PAYLOADS, Run  # noqa: PLC0415
    from pardyn.identification.pipeline import identify  # noqa: PLC0415
    from pardyn.identification.report import write_report  # noqa: PLC0415
    from pardyn.nodes.identification_runs import record_through_nodes  # noqa: PLC0415 - imports rclpy

    robot = load_robot(robot_name)
    out.mkdir(parents=True, exist_ok=True)
    payload = PAYLOADS.get(robot.name) if robot.reference == robot.name else None
    if loaded and payload is None:
        payload = sized_payload(robot)
        print(f"payload: {payload.mass:g} kg ({100 * PAYLOAD_SHARE:g} % of {robot.name}'s moving mass) on frame "
              f"'{payload.frame}'" + ("" if payload.frame == "payload" else " (its task frame)"))
    runs = [Run("unloaded", 1, duration_s)]
    if payload is not None and loaded is not False:
        runs.append(Run("loaded", 2, duration_s, payload))
    runs.append(Run("validation", 3, max(duration_s / 2, 5.0)))
    recorded = record_through_nodes(robot.reference, runs, out / "bags", truth_path=out / "truth.json",
                                    truth_seed=truth_seed)
    bags = recorded.bags
    result = identify(robot, [bags["unloaded"]], loaded_bags=[bags["loaded"]] if "loaded" in bags else [],
                      validate_bags=[bags["validation"]], truth=recorded.truth.as_dict(),
                      settings=demo_settings(robot))
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
          f"{100 * data['truth']['validation_floor'][0]:.2f} %: the floor)"
          + _left_out(result, validation.get("rests_left_out", 0)))
    print(f"bags: {out / 'bags'}\nresult: {out / 'result.json'}\nreport: {report}")
    return data
