"""``pardyn animate``: a 3D picture (PNG) and an animation (GIF) of a robot along a motion, no ROS needed.

The motion: every task coordinate swings around home, ``x(t) = home + a sin(2 pi f_k t + k)``
(amplitudes ``a`` = the excitation box: the robot's YAML's ``excitation: amplitude``, else derived from its size
and limits, times ``--scale``; without ``--scale`` the largest factor up to 1 that the robot follows, printed),
each sample solved by the inverse problem warm-started at the previous one.
The GIF is written with matplotlib's Pillow writer: it opens in any browser or image viewer.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from pardyn.cli.options import number

HELP = "draw a robot in 3D along a motion: PNG of poses and an animated GIF (no ROS needed)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--robot", required=True, help="robot name (pardyn robots) or YAML path")
    parser.add_argument("--duration", type=number(0.0, 3600.0, low_open=True, unit="s"), default=2.0, help="motion duration in s (default 2)")
    parser.add_argument("--scale", type=number(0.0, 100.0), default=None,
                        help="factor on the excitation box's amplitudes (default: the largest up to 1 that the "
                             "robot follows around home)")
    parser.add_argument("--frames", type=number(1, 10_000, integer=True), default=60, help="frames of the GIF (default 60)")
    parser.add_argument("--out", type=Path, default=Path("out/animate"), help="output directory (default out/animate)")


def swing(robot, times: np.ndarray, scale: float) -> np.ndarray:
    """Task coordinates (samples, n) of the swing of the module docstring, ``scale`` times the excitation box."""
    from pardyn.trajectories.workspace import excitation_box  # noqa: PLC0415

    n = len(robot.task_names)
    frequency = (1.0 + 0.5 * np.arange(n)) / max(times[-1], 1e-9)
    phase = 2 * math.pi * np.outer(times, frequency) + np.arange(n)
    return robot.task_values(robot.home) + scale * excitation_box(robot) * np.sin(phase)


def motion_scale(robot, times: np.ndarray, scale: float | None) -> float:
    """``scale`` if the robot follows it (else an InputError naming ``--scale``); None: the largest up to 1 that it
    follows (:func:`~pardyn.trajectories.workspace.largest_safe_scale`), printed with the option."""
    from pardyn.errors import InputError  # noqa: PLC0415
    from pardyn.trajectories.workspace import (  # noqa: PLC0415
        SHRINK, excitation_box, first_unreachable, largest_safe_scale)

    if scale is not None:
        failure = first_unreachable(robot, swing(robot, times, scale))
        if failure is not None:  # the user's value, where it fails, and one that the robot follows
            sample, reason = failure
            pose = swing(robot, times, scale)[sample]
            reason = reason.split(" for the given values")[0]  # the values are said here, as the task's
            amplitudes, where = ({name: float(f"{value:.3g}") for name, value in zip(robot.task_names, values)}
                                 for values in (scale * excitation_box(robot), pose))
            followed = largest_safe_scale(robot, lambda s: swing(robot, times, s), scale * SHRINK, tries=40)
            raise InputError(f"{robot.name}: --scale {scale:g} (amplitudes {amplitudes} m, rad around home) "
                             f"leaves the reachable workspace at t = {times[sample]:.3g} s, task {where} "
                             f"({reason}); "
                             f"{robot.name} follows --scale {followed:.3g}: give --scale {followed:.3g} or less, "
                             "or none to size it from the workspace")
        return scale
    scale = largest_safe_scale(robot, lambda s: swing(robot, times, s), 1.0)
    print(f"motion: {scale:.3g} x the excitation box (the largest up to 1 that {robot.name} follows around home; "
          "--scale to change it)")
    return scale


def motion(robot, times: np.ndarray, scale: float) -> np.ndarray:
    """Every joint (samples, nv) along the swing of the module docstring."""
    joints, q = [], robot.home
    for task in swing(robot, times, scale):
        q = robot.solve_inverse(task, start=q).q
        joints.append(q)
    return np.array(joints)


def run(args: argparse.Namespace) -> int:
    from pardyn.errors import InputError  # noqa: PLC0415
    from pardyn.robot import load_robot  # noqa: PLC0415
    from pardyn.visualization import animation, poses_figure  # noqa: PLC0415

    if not (args.duration > 0 and args.frames >= 2 and (args.scale is None or args.scale > 0)):
        raise InputError(f"--duration and --scale must be > 0 and --frames >= 2, got {args.duration}, "
                         f"{args.scale}, {args.frames}")
    robot = load_robot(args.robot)
    times = np.linspace(0.0, args.duration, max(args.frames, 2))
    joints = motion(robot, times, motion_scale(robot, times, args.scale))
    args.out.mkdir(parents=True, exist_ok=True)
    picture, movie = args.out / f"{robot.name}_poses.png", args.out / f"{robot.name}.gif"
    poses_figure(robot, joints, picture)
    animation(robot, times, joints, movie, frames=args.frames)
    print(f"wrote {picture} and {movie}")
    return 0
